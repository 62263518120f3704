"""What the backend did with each graph, for explain() and the log.

A GraphReport per graph AOTAutograd compiled (forward, backward or
inference): its regions (the nodes, the fz source, the kernels fusec made)
and the nodes left to PyTorch, each with its reason. A Report gathers the
graphs of one explain() call and counts the reasons, which is the list of
what fz lacks for the code at hand.
"""

import collections
import logging
import os
import sys

__all__ = ["Fallback", "RegionReport", "GraphReport", "Report", "collect", "publish"]

log = logging.getLogger("fusec.torch")


class Fallback:
    """A node left to PyTorch: its name, its op and why."""

    __slots__ = ("node", "op", "reason")

    def __init__(self, node, op, reason):
        self.node, self.op, self.reason = node, op, reason

    def __repr__(self):
        return f"Fallback({self.node!r}, {self.op!r}, {self.reason!r})"


class RegionReport:
    __slots__ = ("name", "nodes", "source", "program")

    def __init__(self, name, nodes, source, program):
        self.name, self.nodes, self.source, self.program = name, nodes, source, program

    @property
    def kernels(self):
        from .runtime import kernel_names
        return kernel_names(self.program)


class GraphReport:
    """One compiled graph; `kind` is "forward", "backward" or "inference"."""

    def __init__(self, kind):
        self.kind, self.regions, self.fallbacks = kind, [], []

    @property
    def kernels(self):
        return sum(len(r.kernels) for r in self.regions)

    def format(self, verbose=True):
        lines = [f"fusec: {self.kind} graph: {len(self.regions)} region(s), {self.kernels} kernel(s), "
                 f"{len(self.fallbacks)} node(s) left to PyTorch"]
        if not verbose:
            return lines[0]
        for r in self.regions:
            lines.append(f"  {r.name}: nodes {', '.join(r.nodes)}")
            lines.append(f"    kernels: {', '.join(r.kernels)}")
            lines += ["    | " + s for s in r.source.rstrip("\n").split("\n")]
        for f in self.fallbacks:
            lines.append(f"  PyTorch: {f.node} ({f.op}): {f.reason}")
        return "\n".join(lines)

    def __str__(self):
        return self.format()

    def late(self, why):
        """Log what a region's first call found (its JIT failed: `why`),
        after the graph's report was published; the report itself was
        amended by the caller."""
        _emit(f"fusec: {self.kind} graph: a region runs in PyTorch: {why}", 1)


class Report:
    """The graphs compiled during one explain() call."""

    def __init__(self):
        self.graphs, self.result = [], None

    @property
    def regions(self):
        return [r for g in self.graphs for r in g.regions]

    @property
    def fallbacks(self):
        return [f for g in self.graphs for f in g.fallbacks]

    @property
    def kernels(self):
        return sum(g.kernels for g in self.graphs)

    def reasons(self):
        """Counter of the reasons nodes were left to PyTorch."""
        return collections.Counter(f.reason for f in self.fallbacks)

    def __str__(self):
        if not self.graphs:
            return "fusec: no graph was compiled (was the function already compiled, or did Dynamo skip it?)"
        return "\n".join(g.format() for g in self.graphs)


# Reports being collected (explain() pushes one while it runs).
_collectors = []


def collect(report):
    _collectors.append(report)


def publish(graph_report):
    """Hand a graph's report to the collectors and to the log."""
    for r in _collectors:
        r.graphs.append(graph_report)
    level = _log_level()
    if level:
        _emit(graph_report.format(verbose=level > 1), level)


def _emit(text, level):
    """Log `text` if FUSEC_TORCH_LOG is `level` or more."""
    if _log_level() < level:
        return
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    log.info(text)


def _log_level():
    """FUSEC_TORCH_LOG: unset or 0, quiet; 1, a line per compiled graph;
    2 (or "all"), every region's source and every node left to PyTorch."""
    value = os.environ.get("FUSEC_TORCH_LOG", "").strip().lower()
    if value in ("", "0", "off", "false", "no"):
        return 0
    return 1 if value in ("1", "info", "summary") else 2

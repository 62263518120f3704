"""Compiling one aten graph (what AOTAutograd hands a compiler: a forward,
a backward or an inference graph): partition, translate, compile with
fusec, and rewrite the graph so that each region is one call.

The loop: partition the nodes the op table accepts; translate each region;
a node a region's translation refuses (a shape fz cannot follow, an output
it cannot give back) is left to PyTorch with its reason, and the graph is
partitioned again, so a refusal costs a node, never a wrong answer. A
region whose program fusec itself rejects (a bug of the translation) is
left to PyTorch whole, with fusec's message as the reason.

A CUDA region's kernels are JIT-compiled on a worker thread, started here,
so that NVRTC runs while Dynamo and AOTAutograd finish (runtime.jit_async);
calls before it ends run on fusec's GPU interpreter, or with the option
interpret False wait for it. A region whose JIT fails is found after,
reported (the graph's report is amended and logged) and runs its nodes in
PyTorch from then on.

The rewritten graph keeps every other node as it was and calls each region
where its inputs are ready (a topological order of regions and nodes); it is
an ordinary GraphModule, whose generated Python is the per-call path.
"""

import functools
import heapq
import operator

import torch
import torch.fx as fx

from .lowering import TABLE, VIEW_OPS, reason
from .partition import candidates, regions
from .report import Fallback, GraphReport, RegionReport
from .runtime import Region, compile_source, example_shapes, jit_async
from .translate import NodeUnsupported, Translator

__all__ = ["compile_graph"]


def compile_graph(gm, kind, features, fuse=True, interpret=True):
    """Returns (callable, GraphReport) for the GraphModule `gm`."""
    graph = gm.graph
    refused = {}
    ok = candidates(graph, lambda n, ok: n.target in TABLE and _lowers_alone(n, ok, features, refused))
    while True:
        translated, retry = [], False
        for nodes in regions(graph, ok):
            t = Translator(nodes, features)
            try:
                source = t.translate()
            except NodeUnsupported as e:
                if e.reason != Translator.EMPTY:
                    refused[e.node] = e.reason
                    ok.discard(e.node)
                    retry = True
                continue
            translated.append((t, source))
        if not retry:
            break
    report = GraphReport(kind)
    built = []
    for t, source, program in _programs(translated, fuse, refused):
        name = f"fusec_region_{len(built)}"
        rr = RegionReport(name, [n.name for n in t.nodes], source, program)
        pending = jit_async(program, t.cuda_device, example_shapes(t.inputs), interpret)
        on_fail = functools.partial(_jit_failed, report, rr, t)
        region = Region(name, source, program, t.inputs, t.outputs, cpu=t.cuda_device is None, pending=pending,
                        on_fail=on_fail, interpret=interpret)
        built.append((t, region))
        report.regions.append(rr)
    inside = {n for t, _ in built for n in t.nodes}
    for n in graph.nodes:
        if n.op == "call_function" and n not in inside and not _bookkeeping(n):
            why = refused.get(n) or (LONE if n in ok else reason(n))
            report.fallbacks.append(Fallback(n.name, _op(n), why))
    new = _rewrite(graph, built)
    return fx.GraphModule(gm, new), report


LONE = "a view or constant with no fz computation around it"


def _programs(translated, fuse, refused):
    """(translator, source, program) of each region fusec compiles; the
    nodes of the others get fusec's message as the reason they stay in
    PyTorch (a bug of the translation, or of fusec)."""
    done = []
    for t, source in translated:
        try:
            done.append((t, source, compile_source(source, fuse)))
        except Exception as e:
            _refuse(t, f"fusec rejected the translated region: {_first_line(e)}", refused)
    return done


def _jit_failed(report, rr, t, e):
    """A region whose JIT compile failed (found at its first call): reported
    as its nodes left to PyTorch, with the message, and run in PyTorch."""
    why = f"fusec could not compile the region for the GPU: {_first_line(e)}"
    report.regions.remove(rr)
    report.fallbacks += [Fallback(n.name, _op(n), why) for n in t.nodes if not _bookkeeping(n)]
    report.late(why)
    return fx.GraphModule(torch.nn.Module(), _region_graph(t))


def _region_graph(t):
    """The region's nodes as a graph of their own: the region's arguments
    in, its outputs out (a tuple, as the region call returns)."""
    g, env = fx.Graph(), {}
    for i, spec in enumerate(t.inputs):
        env.setdefault(spec.node, g.placeholder(f"arg{i}"))
    for n in t.nodes:
        env[n] = g.node_copy(n, lambda x: env[x])
    g.output(tuple(env[o.node] for o in t.outputs))
    return g


def _refuse(t, why, refused):
    for n in t.nodes:
        refused[n] = why


def _first_line(e):
    return (str(e).splitlines() or [type(e).__name__])[0]


def _lowers_alone(n, ok, features, refused):
    """Whether the op table can translate `n` with every operand an input:
    what does not depend on the region (dtypes, dims, modes) fails here once,
    instead of once per partitioning. Reshapes are the exception: whether
    fz can follow one depends on the value it reshapes, unless that value
    is computed by PyTorch (not in `ok`), when it is an input indeed."""
    if n.target in VIEW_OPS and any(i in ok for i in n.all_input_nodes):
        return True
    t = Translator([n], features)
    try:
        t.lower_only()
        return True
    except NodeUnsupported as e:
        refused[n] = e.reason
        return False


def _bookkeeping(n):
    """Nodes that compute nothing worth reporting: a getitem of a PyTorch op,
    arithmetic on sizes (SymInts, in Python)."""
    val = n.meta.get("val")
    return n.target is operator.getitem or isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool, int))


def _op(n):
    return str(n.target) if isinstance(n.target, torch._ops.OpOverload) else getattr(n.target, "__name__", str(n.target))


def _rewrite(graph, built):
    """A new graph: each region's nodes replaced by one call of it, placed
    in a topological order of regions and the remaining nodes."""
    owner = {}
    for i, (t, _) in enumerate(built):
        for n in t.nodes:
            owner[n] = i
    # A unit is a node left as it was, or a region; its key is the graph
    # position of its first node, which also orders ready units.
    unit, first = {}, {}
    for i, n in enumerate(graph.nodes):
        key = first.setdefault(owner.get(n, n), i)
        unit[n] = key
    members = {}
    for n in graph.nodes:
        members.setdefault(unit[n], []).append(n)
    deps = {u: set() for u in members}
    users = {u: set() for u in members}
    for u, nodes in members.items():
        for n in nodes:
            for i in n.all_input_nodes:
                if unit[i] != u:
                    deps[u].add(unit[i])
                    users[unit[i]].add(u)
    ready = [u for u in members if not deps[u]]
    heapq.heapify(ready)
    new, env = fx.Graph(), {}
    while ready:
        u = heapq.heappop(ready)
        n = members[u][0]
        if n in owner:
            _emit_region(new, env, *built[owner[n]])
        else:
            env[n] = new.node_copy(n, lambda x: env[x])
        for v in users[u]:
            deps[v].discard(u)
            if not deps[v]:
                heapq.heappush(ready, v)
    return new


def _emit_region(new, env, t, region):
    call = new.call_function(region, tuple(env[spec.node] for spec in t.inputs))
    for i, out in enumerate(t.outputs):
        env[out.node] = new.call_function(operator.getitem, (call, i))
        env[out.node].meta = dict(out.node.meta)


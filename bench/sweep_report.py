#!/usr/bin/env python3
"""bench/sweep_report.py: the JSON of bench/sweep.py as markdown and a plot.

  python3 bench/sweep_report.py part1.json [part2.json ...] [--json merged.json]
          [--md sweep.md] [--png sweep.png] [--update docs/benchmarks.md]

Several files (the halves of a sweep run with --part) are merged into one
sweep: their points in the plan's order, each with the floor of its own run
(its copy bandwidth, measured in the same process as its timings). The
markdown has a summary (the worst fusec / torch.compile ratio and where,
the points under 90% and 85% of the floor, the issue's targets), a table of
the large points, one of the launch-bound points, and every failed check.
The plot is % of the floor against the row width (log axis), one line per
system, one panel per family and dtype. Every number comes from the JSON; a
missing measurement prints as '-'.
"""

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402  (number formats, the markers' update)

# The targets: % of the floor at every large point, by dtype.
TARGET = {"f32": 90.0, "f16": 85.0, "bf16": 85.0}
# "fusec" is the figure compared with torch.compile: fusec called from Python
# and timed by torch.compile's own harness (sweep.py's fusec_py), or, in a
# run without the package, fusec bench's.
SYSTEMS = [("fusec", "fusec", "#1f77b4"), ("compiled", "torch.compile", "#2ca02c")]

BEGIN = "<!-- sweep:begin"
END = "<!-- sweep:end -->"


# ---- merging -------------------------------------------------------------------------------

def parts_of(doc):
    """The runs a document holds: itself, or the parts it was merged from."""
    if "parts" in doc:
        return doc["parts"]
    return [{"meta": doc.get("meta", {}), "copy": doc.get("copy", {}), "plan": doc.get("plan", {}),
             "not_run": doc.get("not_run", []), "measured": len(doc.get("points", []))}]


def merge(docs):
    """One sweep of several runs; a point measured twice keeps its first run."""
    parts, points, seen = [], [], set()
    for d in docs:
        parts += parts_of(d)
        for p in d.get("points", []):
            if p["key"] not in seen:
                seen.add(p["key"])
                points.append(p)
    points.sort(key=lambda p: p.get("index", 0))
    not_run = [k for part in parts for k in part.get("not_run", []) if k not in seen]
    return {"parts": parts, "points": points, "not_run": not_run}


def load(paths):
    docs = []
    for path in paths:
        with open(path) as f:
            docs.append(json.load(f))
    return merge(docs)


# ---- reading a point ---------------------------------------------------------------------------

def res(p, system):
    r = p.get("results", {})
    if system == "fusec" and (r.get("fusec_py") or {}).get("us"):
        return r["fusec_py"]
    return r.get(system) or {}


def bench_res(p):
    """fusec bench's own figures (CUDA events around each call)."""
    return p.get("results", {}).get("fusec") or {}


def pct(p, system):
    return res(p, system).get("pct_floor")


def ratio(p):
    """fusec's time over torch.compile's (below 1: fusec is faster)."""
    f, c = res(p, "fusec").get("us"), res(p, "compiled").get("us")
    return f / c if f and c else None


def wall_ratio(p):
    f, c = res(p, "fusec").get("wall_us_per_call"), res(p, "compiled").get("wall_us_per_call")
    return f / c if f and c else None


def shape(p):
    return p["shape"]  # the JSON's dims are sorted by name, not in the program's order


def where(p):
    return "%s %s %s" % (p["family"], p["dtype"], shape(p))


def panel(p):
    return "%s %s" % (p["family"], p["dtype"])


def target(p):
    return TARGET.get(p["dtype"], TARGET["f32"])


def large(doc):
    return [p for p in doc["points"] if not p.get("launch_bound")]


def fmt_ratio(v):
    return "-" if v is None else "%.2fx" % v


def fmt_err(v):
    return report.fmt_err(v)


# ---- the summary ---------------------------------------------------------------------------------

def below(points, system, limit):
    return [p for p in points if pct(p, system) is not None and pct(p, system) < limit]


def under_target(points, system):
    return [p for p in points if pct(p, system) is not None and pct(p, system) < target(p)]


def lowest(points, system, n=8):
    ps = sorted(points, key=lambda p: pct(p, system))[:n]
    return ", ".join("%s %s" % (where(p), report.fmt_pct(pct(p, system))) for p in ps)


def ratio_lines(ls):
    rs = [(ratio(p), p) for p in ls if ratio(p) is not None]
    if not rs:
        return ["- fusec / torch.compile: no point has both times."]
    worst = max(rs, key=lambda t: t[0])
    slower = [p for r, p in rs if r > 1]
    return ["- fusec / torch.compile time: worst %s at %s; fusec slower at %d of %d points, median "
            "ratio %s." % (fmt_ratio(worst[0]), where(worst[1]), len(slower), len(rs),
                           fmt_ratio(statistics.median(r for r, _ in rs)))]


def floor_lines(ls):
    out = []
    for system, title, _ in SYSTEMS:
        m = [p for p in ls if pct(p, system) is not None]
        if not m:
            continue
        u = under_target(m, system)
        out.append("- %s: under 90%% of the floor at %d of %d points, under 85%% at %d; under the target "
                   "(90%% in f32, 85%% in f16/bf16) at %d%s" % (
                       title, len(below(m, system, 90)), len(m), len(below(m, system, 85)), len(u),
                       "; the lowest: %s." % lowest(u, system) if u else "."))
    return out


def summary(doc):
    ls, lb = large(doc), [p for p in doc["points"] if p.get("launch_bound")]
    bad = [p for p in doc["points"] if p.get("errors")]
    out = ["- Points: %d measured (%d large, %d launch-bound)%s." % (
        len(doc["points"]), len(ls), len(lb),
        "; %d not run (stopped by the time budget): %s" % (len(doc["not_run"]), ", ".join(doc["not_run"]))
        if doc["not_run"] else "")]
    out += ratio_lines(ls) + floor_lines(ls)
    wr = [(wall_ratio(p), p) for p in lb if wall_ratio(p) is not None]
    if wr:
        w = max(wr, key=lambda t: t[0])
        out.append("- Launch-bound, wall time per call of back-to-back calls, fusec / torch.compile: worst "
                   "%s at %s; fusec slower at %d of %d." % (fmt_ratio(w[0]), where(w[1]),
                                                         sum(1 for r, _ in wr if r > 1), len(wr)))
    failed = "a failed check or an error at %d of %d points (listed at the end)" % (len(bad), len(doc["points"]))
    out.append("- Checks: %s." % (failed if bad else "all passed"))
    return "\n".join(out)


# ---- the tables -------------------------------------------------------------------------------------

def check_cell(p):
    """'ok' or 'FAIL', with the errors to float64 of fusec from Python and
    of fusec run, where they were measured."""
    c = p.get("fusec_check") or {}
    py = p.get("results", {}).get("fusec_py") or {}
    s = "FAIL" if p.get("errors") else "ok"
    s += ", py %s" % fmt_err(py["rel_err"]) if py.get("rel_err") is not None else ""
    s += ", run %s" % fmt_err(c["rel_err"]) if c.get("rel_err") is not None else ""
    return s + ("; per-op and torch not compared: %s" % p["not_checked"] if p.get("not_checked") else "")


def large_table(doc):
    out = ["| family | dtype | shape | width | MB | floor µs | fusec µs | fusec % floor | torch.compile µs | "
           "torch.compile % floor | fusec / torch.compile | fusec bench µs | checks |",
           "| --- " * 13 + "|"]
    for p in large(doc):
        out.append("| %s | %s | %s | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p["family"], p["dtype"], shape(p), p["width"], p["min_bytes"] / 1e6, report.fmt_us(p.get("floor_us")),
            report.fmt_us(res(p, "fusec").get("us")), report.fmt_pct(pct(p, "fusec")),
            report.fmt_us(res(p, "compiled").get("us")), report.fmt_pct(pct(p, "compiled")),
            fmt_ratio(ratio(p)), report.fmt_us(bench_res(p).get("us")), check_cell(p)))
    return "\n".join(out)


def small_table(doc):
    lb = [p for p in doc["points"] if p.get("launch_bound")]
    if not lb:
        return ""
    out = ["Device time per call (as for the large points), then the time per call of back-to-back calls from "
           "Python: 'wall' until the GPU is done, 'host' to submit them, PyTorch without graphs; then fusec "
           "bench's: its device median (events around each call), and its wall per call from C, launching "
           "kernel by kernel and replaying a CUDA graph.", "",
           "| family | dtype | shape | fusec µs | fusec wall | fusec host | "
           "torch.compile µs | torch.compile wall | torch.compile host | fusec / torch.compile wall | "
           "fusec bench µs | fusec bench wall | fusec bench graph wall | checks |",
           "| --- " * 14 + "|"]
    for p in lb:
        f, c, b = res(p, "fusec"), res(p, "compiled"), bench_res(p)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p["family"], p["dtype"], shape(p), report.fmt_us(f.get("us")),
            report.fmt_us(f.get("wall_us_per_call")), report.fmt_us(f.get("host_us_per_call")),
            report.fmt_us(c.get("us")), report.fmt_us(c.get("wall_us_per_call")),
            report.fmt_us(c.get("host_us_per_call")), fmt_ratio(wall_ratio(p)), report.fmt_us(b.get("us")),
            report.fmt_us(b.get("wall_us_per_call")), report.fmt_us(b.get("graph_wall_us_per_call")),
            check_cell(p)))
    return "\n".join(out)


def header(doc, command):
    out = []
    for i, part in enumerate(doc["parts"]):
        m, c, pl = part.get("meta", {}), part.get("copy", {}), part.get("plan", {})
        l2 = m.get("l2_bytes")
        end = ("%.0f at the end" % c["gbps_end"] if c.get("gbps_end") is not None
               else "not measured at the end (the run stopped early)")
        out.append("Run %d%s: %s (%s SMs%s%s); PyTorch %s, Triton %s, CUDA %s, Python %s; %s; %s s. "
                   "Copy bandwidth (%s): %.0f GB/s at the start, %s; its floors use %.0f GB/s. Command: `%s`." % (
                       i + 1, " (part %s)" % pl["part"] if pl.get("part") not in (None, "1/1") else "",
                       m.get("device", "?"), m.get("sm_count", "?"), ", %d MiB L2" % (l2 >> 20) if l2 else "",
                       ", " + m["nvidia_smi"] if m.get("nvidia_smi") else "", m.get("torch", "?"),
                       m.get("triton", "?"), m.get("cuda", "?"), m.get("python", "?"), m.get("date", "?"),
                       "%.0f" % m["elapsed_s"] if "elapsed_s" in m else "?", c.get("method", "?"),
                       c.get("gbps_start", 0), end, c.get("gbps", 0), command or m.get("command", "?")))
    return "\n\n".join(out)


def errors(doc):
    return "\n".join("- %s: %s" % (p["key"], e) for p in doc["points"] for e in p.get("errors", []))


def render(doc, command=None):
    parts = [header(doc, command), "", "### Summary", "", summary(doc), "",
             "### Large points (64 MiB or more each)", "",
             "Median µs and % of the floor (minimum bytes over the copy bandwidth of the same run). fusec and "
             "torch.compile are timed alike: the program called from Python (fusec's package, torch.compile's "
             "function) on the same inputs, its calls over input copies past 4x the L2 captured in a CUDA "
             "graph and replayed (device time, no host time; median per call). 'fusec bench µs': `fusec "
             "bench`, CUDA events around each call, buffer sets rotated past the L2 (each call pays the "
             "launch's latency). Checks: torch.compile and fusec from Python ('py') against float64, and fusec "
             "fused against per-op, at every point; `fusec run` against float64 where 'run' is given.", "",
             large_table(doc)]
    for title, body in (("### Launch-bound points", small_table(doc)),
                        ("### Errors and failed checks", errors(doc))):
        if body:
            parts += ["", title, "", body]
    return "\n".join(parts) + "\n"


# ---- the plot ------------------------------------------------------------------------------------

def panels(doc):
    """[(panel title, [large points in it, by width])], in the plan's order."""
    out = {}
    for p in large(doc):
        out.setdefault(panel(p), []).append(p)
    return [(k, sorted(v, key=lambda p: p["width"])) for k, v in out.items()]


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = panels(doc)
    cols = 5
    rows = max(1, -(-len(ps) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False, constrained_layout=True)
    for ax, (title, pts) in zip(axes.flat, ps):
        xs = [p["width"] for p in pts]
        for key, label, color in SYSTEMS:
            ys = [pct(p, key) for p in pts]
            ax.plot([x for x, y in zip(xs, ys) if y is not None], [y for y in ys if y is not None],
                    marker="o", markersize=3, color=color, label=label)
        ax.axhline(100, color="black", linewidth=0.6)
        ax.axhline(target(pts[0]), color="gray", linewidth=0.6, linestyle="--")
        ax.set_xscale("log")
        ax.set_ylim(0, max(110, max((pct(p, k) or 0) for p in pts for k, _, _ in SYSTEMS) + 5))
        ax.set_title(title, fontsize=9)
        ax.tick_params(which="both", labelsize=7)
    for ax in list(axes.flat)[len(ps):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.supxlabel("row width (elements; the vector's length for pointwise programs), log scale")
    fig.supylabel("% of the bandwidth floor (higher is better)")
    m = doc["parts"][0].get("meta", {}) if doc["parts"] else {}
    fig.suptitle("fusec and torch.compile over the shape sweep, %s, %s" % (m.get("device", "?"),
                                                                          m.get("date", "?")))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", help="bench/sweep.py's output(s)")
    ap.add_argument("--command", help="the command line to print (default: each run's own)")
    ap.add_argument("--json", dest="merged", metavar="OUT", help="write the merged JSON")
    ap.add_argument("--md", help="write the markdown here (default: stdout)")
    ap.add_argument("--png", help="write the plot here (needs matplotlib)")
    ap.add_argument("--update", metavar="MD", help="write the markdown between the sweep markers of MD")
    args = ap.parse_args(argv)
    doc = load(args.json)
    if args.merged:
        with open(args.merged, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
    md = render(doc, args.command)
    rc = 0
    if args.update:
        try:
            body = md
            if args.png:
                rel = os.path.relpath(args.png, os.path.dirname(os.path.abspath(args.update)))
                body += "\n![%% of the floor against the row width, a panel a family](%s)\n" % rel
            report.update(args.update, body, BEGIN, END)
        except (OSError, ValueError) as e:
            print("sweep_report.py: %s" % e, file=sys.stderr)
            rc = 1
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    elif not args.update:
        sys.stdout.write(md)
    if args.png:
        plot(doc, args.png)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

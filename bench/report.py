#!/usr/bin/env python3
"""bench/report.py: the JSON of bench/run.py as the markdown of docs/benchmarks.md.

  python3 bench/report.py results.json [--command "bench/gpu-bench.sh build out"] > table.md
  python3 bench/report.py results.json --update docs/benchmarks.md

Every number printed comes from the JSON; a missing measurement prints as
'-', never as an estimate.
"""

import argparse
import json
import os
import sys

SYSTEMS = [  # (key in results, column title)
    ("fusec", "fusec"),
    ("fusec_per_op", "fusec per-op"),
    ("fusec_py", "fusec (Python)"),
    ("eager", "eager"),
    ("builtin", "builtin"),
    ("compiled", "torch.compile"),
]


def systems(doc):
    """SYSTEMS less the Python column where no workload has it (a run
    without the package)."""
    have = any("fusec_py" in rec.get("results", {}) for rec in doc["workloads"])
    return [(k, t) for k, t in SYSTEMS if k != "fusec_py" or have]


def fmt_us(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_pct(v):
    return "-" if v is None else "%.0f%%" % v


def cell(r):
    """'123 (91%)': median µs and % of the floor."""
    if not r or r.get("us") is None:
        return "-"
    s = fmt_us(r["us"])
    if r.get("pct_floor") is not None:
        s += " (%s)" % fmt_pct(r["pct_floor"])
    return s


def speedup(rec):
    """fused / per-op speedup and the ideal byte ratio, from fusec bench."""
    raw = rec.get("fusec_raw") or {}
    sp, ideal = raw.get("speedup"), raw.get("ideal_speedup")
    if sp is None:
        return "-"
    return "%.2fx (%s)" % (sp, "-" if ideal is None else "%.2fx" % ideal)


def kernels(rec):
    res = rec["results"]
    f, p = res.get("fusec", {}).get("kernels"), res.get("fusec_per_op", {}).get("kernels")
    if f is None and p is None:
        return "-"
    return "%s / %s" % ("-" if f is None else f, "-" if p is None else p)


def header(doc, command):
    m, c = doc.get("meta", {}), doc.get("copy", {})
    l2 = m.get("l2_bytes")
    out = [
        "Device: %s (%s SMs%s), %s." % (m.get("device", "?"), m.get("sm_count", "?"),
                                        ", %d MiB L2" % (l2 >> 20) if l2 else "",
                                        "driver, max SM and memory clocks: " + m["nvidia_smi"]
                                        if m.get("nvidia_smi") else "driver unknown"),
        "Software: PyTorch %s, Triton %s, CUDA %s (PyTorch's), Python %s." % (
            m.get("torch", "?"), m.get("triton", "?"), m.get("cuda", "?"), m.get("python", "?")),
        "Date: %s. Whole run: %s s." % (m.get("date", "?"),
                                      "%.0f" % m["elapsed_s"] if "elapsed_s" in m else "?"),
        "Command: `%s`." % (command or m.get("command", "?")),
    ]
    if c:
        end = ("%.0f GB/s at the end" % c["gbps_end"] if "gbps_end" in c
               else "not measured at the end (the run stopped early)")
        out.append("Copy bandwidth (%s, bytes read + written): %.0f GB/s at the start, %s; the floor "
                   "uses %.0f GB/s." % (c.get("method", "device-to-device copy"),
                                        c.get("gbps_start", c["gbps"]), end, c["gbps"]))
    return "\n".join(out)


def large_table(doc):
    rows = [rec for rec in doc["workloads"] if not rec.get("launch_bound")]
    cols = systems(doc)
    out = ["| workload | floor | " + " | ".join(t for _, t in cols) +
           " | compile (s) | fused / per-op (ideal) | kernels fused / per-op |",
           "| --- " * (len(cols) + 5) + "|"]
    for rec in rows:
        res = rec["results"]
        b = res.get("builtin", {})
        bcell = cell(b) + (" `%s`" % b["name"] if b.get("name") else "")
        cells = [cell(res.get(k)) if k != "builtin" else bcell for k, _ in cols]
        cs = res.get("compiled", {}).get("compile_s")
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            rec.get("label", rec["key"]), fmt_us(rec.get("floor_us")), " | ".join(cells),
            "-" if cs is None else "%.2f" % cs, speedup(rec), kernels(rec)))
    return "\n".join(out)


def small_table(doc):
    rows = [rec for rec in doc["workloads"] if rec.get("launch_bound")]
    if not rows:
        return ""
    out = ["Time per call of back-to-back calls: 'host' to submit them (launch overhead), 'wall' "
           "until the GPU is done; fusec also replaying its launches as a CUDA graph "
           "(`fz_run_set_graph`), PyTorch without graphs.", "",
           "| workload | system | device median (µs) | wall per call (µs) | host per call (µs) |",
           "| --- | --- | --- | --- | --- |"]
    for rec in rows:
        for k, title in systems(doc):
            r = rec["results"].get(k)
            if not r:
                continue
            out.append("| %s | %s | %s | %s | %s |" % (
                rec.get("label", rec["key"]), title, fmt_us(r.get("us")),
                fmt_us(r.get("wall_us_per_call")), fmt_us(r.get("host_us_per_call"))))
            if r.get("graph_wall_us_per_call") is not None:
                out.append("| %s | %s, CUDA graph | - | %s | %s |" % (
                    rec.get("label", rec["key"]), title, fmt_us(r["graph_wall_us_per_call"]),
                    fmt_us(r.get("graph_host_us_per_call"))))
    return "\n".join(out)


def jit_table(doc):
    j = doc.get("jit")
    if not j:
        return ""
    if "error" in j:
        return "JIT start test failed: %s" % j["error"]

    def v(key, f="%.0f"):
        x = j.get(key)
        return "-" if x is None else f % x

    out = ["`%s` with dims %s:" % (j.get("command", j.get("program")), j.get("dims")), "",
           "| | cold (empty cache dir) | warm (disk cache) |", "| --- | --- | --- |",
           "| whole process (ms) | %s | %s |" % (v("cold_process_ms"), v("warm_process_ms")),
           "| compile + load, as fusec bench reports (ms) | %s | %s |" % (
               v("cold_compile_ms", "%.1f"), v("warm_compile_ms", "%.1f")),
           "| NVRTC compiles | %s | %s |" % (v("cold_compiles", "%d"), v("warm_compiles", "%d")),
           "| files in the cache dir after | %s | %s |" % (
               v("cold_cache_files", "%d"), v("warm_cache_files", "%d"))]
    if j.get("emit_ptx_process_ms") is not None:
        out += ["", "`fusec --emit=ptx` of the same program (NVRTC only, whole process): %.0f ms."
                % j["emit_ptx_process_ms"]]
    return "\n".join(out)


def recompile_table(doc):
    rc = doc.get("recompiles")
    if not rc:
        return ""
    out = ["| program | sizes run | NVRTC compiles (runtime's count) | files in the cache dir |",
           "| --- | --- | --- | --- |"]
    for r in rc:
        out.append("| %s | %d | %s | %s |" % (r["program"], r["runs"],
                                            "-" if r.get("compiles") is None else r["compiles"],
                                            r.get("cache_files", "-")))
    return "\n".join(out)


def fmt_err(v):
    return "-" if v is None else ("NaN" if v != v else "%.1e" % v)


def checks_table(doc):
    """Relative errors to a float64 reference of the eager program."""
    rows = [rec for rec in doc["workloads"] if rec.get("results")]
    if not any("rel_err" in r for rec in rows for r in rec["results"].values()):
        return ""
    out = ["Relative error (‖out − ref‖ / ‖ref‖) to the eager program run in float64 on the same "
           "inputs; `fusec run` at a smaller size (64 rows, or 1Mi elements). Last column: fusec's "
           "fused against its per-op outputs, as `fusec bench` compares them.", "",
           "| workload | eager | builtin | torch.compile | fusec run | fusec fused vs per-op |",
           "| --- | --- | --- | --- | --- | --- |"]
    for rec in rows:
        res = rec["results"]
        fc = rec.get("fusec_check") or {}
        raw = rec.get("fusec_raw") or {}
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            rec.get("label", rec["key"]), fmt_err(res.get("eager", {}).get("rel_err")),
            fmt_err(res.get("builtin", {}).get("rel_err")), fmt_err(res.get("compiled", {}).get("rel_err")),
            fmt_err(fc.get("rel_err")), fmt_err(raw.get("outputs_rel_diff"))))
    return "\n".join(out)


def errors(doc):
    out = []
    for rec in doc["workloads"]:
        out += ["- %s: %s" % (rec.get("label", rec["key"]), e) for e in rec.get("errors", [])]
    for r in doc.get("recompiles", []):
        out += ["- recompiles %s: %s" % (r["program"], e) for e in r.get("errors", [])]
    return "\n".join(out)


def render(doc, command=None):
    parts = [header(doc, command), "",
             "### Large workloads",
             "",
             "Median µs (and % of the bandwidth floor: minimum bytes over the copy bandwidth). "
             "fusec: `fusec bench`, CUDA events, buffer sets rotated past the L2; PyTorch: "
             "a CUDA graph of calls over input copies past 4x the L2, replayed (device time, no host time; median per call). "
             "'fused / per-op' is fusec's speedup from fusion, next to the ratio of the bytes "
             "the per-op plan moves to the minimum.",
             "",
             large_table(doc)]
    for title, body in (("### Launch-bound sizes", small_table(doc)),
                        ("### JIT start", jit_table(doc)),
                        ("### Recompiles over 20 sizes", recompile_table(doc)),
                        ("### Checks", checks_table(doc)),
                        ("### Errors and failed checks", errors(doc))):
        if body:
            parts += ["", title, "", body]
    return "\n".join(parts) + "\n"


BEGIN = "<!-- results:begin"
END = "<!-- results:end -->"


def update(path, body, begin=BEGIN, end=END):
    """Replace what lies between the markers of `path` (the results' by
    default) with body."""
    with open(path) as f:
        text = f.read()
    b = text.find(begin)
    e = text.find(end)
    if b < 0 or e < b:
        raise ValueError("%s has no '%s ...' and '%s' markers" % (path, begin, end))
    b = text.index("\n", b) + 1
    with open(path + ".tmp", "w") as f:
        f.write(text[:b] + body + text[e:])
    os.replace(path + ".tmp", path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="bench/run.py's output")
    ap.add_argument("--command", help="the command line to print (default: the one in the JSON)")
    ap.add_argument("--update", metavar="MD", help="write the tables between the results markers of MD")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        doc = json.load(f)
    md = render(doc, args.command)
    if args.update:
        try:
            update(args.update, md)
        except (OSError, ValueError) as e:
            print("report.py: %s" % e, file=sys.stderr)
            return 1
    else:
        sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

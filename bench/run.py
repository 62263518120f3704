#!/usr/bin/env python3
"""bench/run.py: the benchmark suite, side by side in one run on one GPU.

For every workload of docs/benchmarks.md (the list in
/work/shared/bench-workloads.md) this measures, in one process on one GPU:

  fusec          `fusec bench --json` (fused), run as a subprocess
  fusec per-op   the same call's per-op figures (one kernel per op)
  fusec (Python) the program called from Python through the package on the
                 torch variants' tensors (outputs from torch's allocator,
                 torch's current stream), timed as they are; where the
                 package imports (PYTHONPATH=python
                 FUSEC_LIBRARY=build/libfusec.so), else left out
  eager          the same program written with torch ops, PyTorch eager
  builtin        PyTorch's own op where one exists (F.softmax, F.layer_norm,
                 F.gelu(approximate='tanh'), F.rms_norm)
  compiled       torch.compile(fn, dynamic=False) after torch._dynamo.reset()
                 (its compile time is recorded too)
  floor          the program's minimum bytes over the device-to-device copy
                 bandwidth, measured here by torch (y.copy_(x), bytes read
                 plus bytes written)

Torch timings are device times: the calls over copies of the inputs that
together pass 4x the L2 (so no call finds its inputs cached, as fusec bench
rotates its buffer sets) are captured in a CUDA graph and replayed between
events; the median per call is kept (Ctx.device_us says why not do_bench). The torch variants are checked against a float64
reference of the eager program. Then: the cold (empty cache) and warm (disk
cache) JIT start of a single-kernel program, and how many compiles 20 sizes
of one program cause.

Needs python3 with torch and triton (the GPU machine); --dry-run prints what
would be run and needs neither.

  python3 bench/run.py --fusec build/fusec --out results.json
  python3 bench/run.py --fusec build/fusec --dry-run
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The runtime's kernel cache directory is chosen by this variable.
CACHE_ENV = "FUSEC_CACHE_DIR"

Mi = 1 << 20

# ---- the workloads ----------------------------------------------------------
#
# key: unique id; name: the workload (and the eager function's name);
# program: examples/<program>.fz; dims: the bound dims.

def W(key, name, program, dims, launch_bound=False):
    return {"key": key, "name": name, "program": program, "dims": dims,
            "launch_bound": launch_bound}

WORKLOADS = [
    W("add_scale_bias_relu_64Mi", "add_scale_bias_relu", "add_scale_bias_relu", {"N": 64 * Mi}),
    W("gelu_tanh_64Mi", "gelu_tanh", "gelu_tanh", {"N": 64 * Mi}),
    W("softmax_4096x4096", "softmax", "softmax", {"B": 4096, "N": 4096}),
    W("softmax_32768x1024", "softmax", "softmax", {"B": 32768, "N": 1024}),
    W("softmax_1024x32768", "softmax", "softmax", {"B": 1024, "N": 32768}),
    W("layernorm_8192x4096", "layernorm", "layernorm", {"R": 8192, "C": 4096}),
    W("rmsnorm_8192x4096", "rmsnorm", "rmsnorm", {"R": 8192, "C": 4096}),
    W("bias_gelu_residual_layernorm_8192x4096", "bias_gelu_residual_layernorm",
      "bias_gelu_residual_layernorm", {"R": 8192, "C": 4096}),
    W("rowsum_sq_8192x4096", "rowsum_sq", "rowsum_sq", {"R": 8192, "C": 4096}),
    W("softmax_f16_8192x4096", "softmax", "softmax_f16", {"B": 8192, "N": 4096}),
    W("softmax_bf16_8192x4096", "softmax", "softmax_bf16", {"B": 8192, "N": 4096}),
    W("layernorm_f16_8192x4096", "layernorm", "layernorm_f16", {"R": 8192, "C": 4096}),
    W("layernorm_bf16_8192x4096", "layernorm", "layernorm_bf16", {"R": 8192, "C": 4096}),
    W("add_scale_bias_relu_4096", "add_scale_bias_relu", "add_scale_bias_relu", {"N": 4096},
      launch_bound=True),
    W("softmax_8x1024", "softmax", "softmax", {"B": 8, "N": 1024}, launch_bound=True),
]

# Values of the scalar inputs, by name (fusec bench draws its own).
SCALARS = {"eps": 1e-5, "s": 0.5}

# Relative error (to a float64 reference) a torch variant may have, by dtype.
TOLERANCE = {"f32": 1e-5, "f16": 4e-3, "bf16": 3e-2}

# The JIT start test: a single-kernel program and its size.
JIT_PROGRAM = ("gelu_tanh", {"N": 4096})
# The recompile test: 20 sizes of each program.
RECOMPILE_SIZES = {
    "add_scale_bias_relu": [{"N": n} for n in
                            (1, 7, 32, 100, 1000, 1024, 4096, 5000, 65536, 100000, 131072, 250000,
                             1 << 20, 1000003, 2 << 20, 3 << 20, 4 << 20, 5000000, 8 << 20, 16 << 20)],
    "softmax": [{"B": b, "N": n} for b, n in
                ((1, 1), (3, 7), (8, 32), (64, 100), (8, 1024), (100, 129), (1000, 256), (512, 512),
                 (4096, 64), (2, 4096), (256, 2048), (1024, 1024), (7, 32768), (64, 8192),
                 (4096, 1000), (16, 65536), (2048, 3000), (1, 100000), (32768, 128), (333, 777))],
}

# ---- the .fz programs' inputs --------------------------------------------------

_IN_RE = re.compile(r"^\s*in\s+([A-Za-z_]\w*)\s*:\s*([a-z0-9]+)\s*(?:\[([^\]]*)\])?")


def program_path(examples, program):
    return os.path.join(examples, program + ".fz")


def parse_inputs(path):
    """[(name, dtype, [dim, ...] or None for a scalar)] from the `in` lines."""
    inputs = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0]
            m = _IN_RE.match(line)
            if not m:
                continue
            dims = None
            if m.group(3) is not None:
                dims = [d.strip() for d in m.group(3).split(",")]
            inputs.append((m.group(1), m.group(2), dims))
    return inputs


_OUT_RE = re.compile(r"^\s*out\s+([A-Za-z_]\w*)")


def parse_outputs(path):
    """The names of the outputs, in order."""
    with open(path) as f:
        return [m.group(1) for m in (_OUT_RE.match(line) for line in f) if m]


def shape_of(dims, bound):
    return [int(d) if d.isdigit() else bound[d] for d in dims]


def main_dtype(inputs):
    for _, dt, dims in inputs:
        if dims is not None:
            return dt
    return "f32"


def dims_label(w):
    d = w["dims"]
    vals = list(d.values())
    if len(vals) == 1:
        n = vals[0]
        return "%dMi" % (n // Mi) if n >= Mi and n % Mi == 0 else str(n)
    return "x".join(str(v) for v in vals)


def device_opt(device):
    """fusec's option for a GPU other than the first (none for device 0)."""
    return ["--device", str(device)] if device else []


def fusec_cmd(fusec, examples, w, reps, warmup, extra=(), device=0):
    cmd = [fusec, "bench", program_path(examples, w["program"])]
    for k, v in w["dims"].items():
        cmd += ["--dim", "%s=%d" % (k, v)]
    cmd += ["--json", "--reps", str(reps), "--warmup", str(warmup)]
    cmd += list(extra) + device_opt(device)
    return cmd


# ---- the torch programs --------------------------------------------------------

def torch_programs(torch, F):
    """name -> (eager fn, (builtin name, builtin fn) or None). Each takes the
    program's inputs by name, as the .fz program declares them."""

    def add_scale_bias_relu(x, y, bias, s):
        return torch.relu((x + y) * s + bias)

    def gelu_tanh(x):
        return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x * x * x)))

    def softmax(x):
        e = torch.exp(x - x.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)

    def layernorm(x, w, b, eps):
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        return (xc * torch.rsqrt(var + eps) * w + b).to(x.dtype)

    def rmsnorm(x, w, eps):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def bias_gelu_residual_layernorm(x, bias, res, w, b, eps):
        h = F.gelu(x + bias, approximate="tanh") + res
        mu = h.mean(-1, keepdim=True)
        hc = h - mu
        return hc * torch.rsqrt((hc * hc).mean(-1, keepdim=True) + eps) * w + b

    def rowsum_sq(x):
        return (x * x).sum(-1, keepdim=True)

    return {
        "add_scale_bias_relu": (add_scale_bias_relu, None),
        "gelu_tanh": (gelu_tanh, ("F.gelu(tanh)", lambda x: F.gelu(x, approximate="tanh"))),
        "softmax": (softmax, ("F.softmax", lambda x: F.softmax(x, dim=-1))),
        "layernorm": (layernorm, ("F.layer_norm",
                                  lambda x, w, b, eps: F.layer_norm(x, x.shape[-1:], w, b, eps))),
        "rmsnorm": (rmsnorm, ("F.rms_norm", lambda x, w, eps: F.rms_norm(x, x.shape[-1:], w, eps))),
        "bias_gelu_residual_layernorm": (bias_gelu_residual_layernorm, None),
        "rowsum_sq": (rowsum_sq, None),
    }


TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
                "i32": "int32", "i64": "int64", "bool": "bool"}


def make_inputs(torch, inputs, bound, gen):
    """Seeded random inputs on the GPU (never zeros): uniform in [-2, 2)."""
    out = {}
    for name, dt, dims in inputs:
        if dims is None:
            out[name] = SCALARS.get(name, 0.5)
            continue
        shape = shape_of(dims, bound)
        t = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32) * 4 - 2
        out[name] = t.to(getattr(torch, TORCH_DTYPES[dt]))
    return out


def nbytes(t):
    return t.numel() * t.element_size()


def rel_err(torch, out, ref):
    o = out.double()
    if not torch.isfinite(o).all():
        return float("nan")
    den = torch.linalg.vector_norm(ref).item()
    return torch.linalg.vector_norm(o - ref).item() / (den if den > 0 else 1.0)


# ---- measuring ---------------------------------------------------------------------

def graph_over_copies(torch, fn, kw):
    """fn(**kw) over copies of kw (together past 4x the L2, at most 16),
    warmed up outside the capture (guards, allocations), then captured as
    one CUDA graph and replayed once: the graph, and the copies its calls
    read (a replay makes len(sets) calls; keep them while replaying)."""
    nbytes = sum(v.numel() * v.element_size() for v in kw.values() if torch.is_tensor(v))
    l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0) or 0
    n = min(16, max(1, -(-4 * l2 // max(nbytes, 1))))
    sets = [kw] + [{k: (v.clone() if torch.is_tensor(v) else v) for k, v in kw.items()} for _ in range(n - 1)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for k in sets:
            fn(**k)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for k in sets:
            fn(**k)
    g.replay()
    torch.cuda.synchronize()
    return g, sets


def replay_us(torch, g, calls, seconds, at_least=5):
    """Median µs a call of replays of g (calls a replay), each between two
    events, for `seconds` and at least `at_least` of them."""
    times, end = [], time.perf_counter() + seconds
    while len(times) < at_least or time.perf_counter() < end:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3 / calls)
    return statistics.median(times)


class Ctx:
    def __init__(self, args, torch, triton, F):
        self.args, self.torch, self.triton, self.F = args, torch, triton, F
        self.package = None  # the fusec package, for the Python column (python_package)

    def bench(self, fn):
        """Median microseconds of fn over triton's do_bench (L2 flushed)."""
        ms = self.triton.testing.do_bench(fn, warmup=self.args.warmup_ms, rep=self.args.rep_ms,
                                          return_mode="median")
        return ms * 1e3

    def device_us(self, fn, kw):
        """Median device microseconds per call of fn(**kw), with no host
        time in it: calls over several copies of the inputs (together past
        4x the L2, so no call finds its inputs cached, as in fusec bench)
        are captured once in a CUDA graph, which is replayed between two
        events. Events around each call would time the host instead
        wherever it is slower than the GPU: torch.compile spends 50-70 µs
        of host time a call on the H200 machine, longer than a 64 MB kernel
        runs (measured 2026-11-24, bench/python_overhead.py)."""
        torch = self.torch
        g, sets = graph_over_copies(torch, fn, kw)
        us = replay_us(torch, g, len(sets), self.args.rep_ms / 1e3)
        del g, sets
        return us

    def per_call(self, fn, n):
        """Host submit time and wall time per call of n back-to-back calls (µs)."""
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        return (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6


def copy_bandwidth(ctx):
    """Device-to-device copy through torch: (bytes read + written) / median time."""
    torch = ctx.torch
    n = ctx.args.copy_mib * Mi // 4
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    us = ctx.bench(lambda: y.copy_(x))
    moved = 2 * nbytes(x)
    del x, y
    torch.cuda.empty_cache()
    return {"bytes": moved, "us": us, "gbps": moved / us / 1e3}


def fusec_env(args):
    """The environment of fusec's processes: the run's own kernel cache."""
    env = dict(os.environ)
    if args.cache_dir:
        env[CACHE_ENV] = args.cache_dir
    return env


def run_fusec(args, w, log):
    """fusec bench --json for one workload: the parsed object, or an error."""
    reps, warmup = (args.fusec_reps_small, 100) if w["launch_bound"] else (args.fusec_reps, 20)
    cmd = fusec_cmd(args.fusec, args.examples, w, reps, warmup, ["--graph"] if w["launch_bound"] else [],
                    args.device)
    log("  $ " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.fusec_timeout,
                           env=fusec_env(args))
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % args.fusec_timeout}
    if p.stderr.strip():
        log("  fusec stderr: " + p.stderr.strip().replace("\n", "\n  "))
    if p.returncode != 0:
        return {"error": "exit %d: %s" % (p.returncode, p.stderr.strip()[-2000:])}
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        return {"error": "bad JSON from fusec bench (%s): %s" % (e, p.stdout[-2000:])}


def fusec_result(raw, mode):
    m = raw.get(mode)
    if not isinstance(m, dict) or "median_us" not in m:
        return None
    return {"us": m["median_us"], "kernels": m.get("kernels"), "bytes": m.get("bytes_moved"),
            "host_us_per_call": m.get("host_us_per_call"), "wall_us_per_call": m.get("wall_us_per_call"),
            "compile_ms": m.get("compile_ms"), "graph_host_us_per_call": m.get("graph_host_us_per_call"),
            "graph_wall_us_per_call": m.get("graph_wall_us_per_call")}


def apply_floor(doc, gbps):
    """Floor of every workload and each result's percentage of it, for a copy
    bandwidth of `gbps` GB/s."""
    for rec in doc["workloads"]:
        if "min_bytes" not in rec:
            continue
        rec["floor_us"] = rec["min_bytes"] / (gbps * 1e3)
        for v in rec["results"].values():
            v["pct_floor"] = 100.0 * rec["floor_us"] / v["us"] if v.get("us") else None


def torch_variants(ctx, w, inputs, fns):
    """eager, builtin and compiled: timing, compile time, error to reference."""
    torch = ctx.torch
    eager, builtin = fns
    kw = dict(inputs)
    variants = [("eager", None, eager)]
    if builtin:
        variants.append(("builtin", builtin[0], builtin[1]))
    results, outs = {}, {}
    for vname, label, fn in variants:
        call = (lambda f=fn: f(**kw))
        outs[vname] = call()
        results[vname] = {"us": ctx.device_us(fn, kw)}
        if label:
            results[vname]["name"] = label
    torch._dynamo.reset()
    compiled = torch.compile(eager, dynamic=False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    outs["compiled"] = compiled(**kw)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0
    results["compiled"] = {"us": ctx.device_us(compiled, kw), "compile_s": compile_s}
    if w["launch_bound"]:
        for vname, fn in (("eager", eager), ("builtin", builtin[1] if builtin else None),
                          ("compiled", compiled)):
            if fn is None:
                continue
            host, wall = ctx.per_call(lambda f=fn: f(**kw), ctx.args.per_call_n)
            results[vname]["host_us_per_call"] = host
            results[vname]["wall_us_per_call"] = wall
    return results, outs


def python_variant(ctx, w, path, kw, results, outs):
    """fusec from Python on the torch variants' tensors: the program's call
    as a PyTorch user makes it, timed as they are (device time over CUDA
    graph replays; host and wall per call where launch-bound)."""
    prog = ctx.package.compile_file(path)
    outs["fusec_py"] = prog(**kw)
    results["fusec_py"] = {"us": ctx.device_us(prog, kw)}
    if w["launch_bound"]:
        host, wall = ctx.per_call(lambda: prog(**kw), ctx.args.per_call_n)
        results["fusec_py"].update(host_us_per_call=host, wall_us_per_call=wall)


def python_package(log):
    """The fusec package for the Python column, or None where it does not
    import or cannot load its library."""
    try:
        import fusec
        fusec.compile("in x: f32[N]\nout y = x\n", name="probe.fz")
        return fusec
    except Exception as e:  # ImportError, or OSError from the library
        log("no fusec package (%s: %s): no 'fusec (Python)' column (set PYTHONPATH=python "
            "FUSEC_LIBRARY=build/libfusec.so)" % (type(e).__name__, e))
        return None


def check_outputs(ctx, eager, inputs, outs, dtype, results):
    """Each variant's relative error to the eager program in float64."""
    torch = ctx.torch
    ref_in = {k: (v.double() if hasattr(v, "double") else v) for k, v in inputs.items()}
    ref = eager(**ref_in).double()
    del ref_in
    tol = TOLERANCE.get(dtype, 1e-5)
    bad = []
    for vname, out in outs.items():
        if tuple(out.shape) != tuple(ref.shape):
            results[vname]["rel_err"] = None
            bad.append("%s: shape %s, expected %s" % (vname, tuple(out.shape), tuple(ref.shape)))
            continue
        e = rel_err(torch, out, ref)
        results[vname]["rel_err"] = e
        if not (e <= tol):
            bad.append("%s: relative error %.3g over %.3g" % (vname, e, tol))
    del ref
    return bad


def run_workload(ctx, w, progs, log):
    torch, args = ctx.torch, ctx.args
    path = program_path(args.examples, w["program"])
    inputs_decl = parse_inputs(path)
    dtype = main_dtype(inputs_decl)
    rec = {"key": w["key"], "name": w["name"], "program": os.path.relpath(path, ROOT),
           "dims": w["dims"], "label": "%s %s" % (w["program"], dims_label(w)),
           "dtype": dtype, "launch_bound": w["launch_bound"], "results": {}, "errors": []}
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    inputs = make_inputs(torch, inputs_decl, w["dims"], gen)
    fns = progs[w["name"]]
    results, outs = torch_variants(ctx, w, inputs, fns)
    if ctx.package is not None and not args.no_fusec:
        try:
            python_variant(ctx, w, path, inputs, results, outs)
        except Exception as e:  # the other columns stand
            rec["errors"].append("fusec (Python): %s: %s" % (type(e).__name__, e))
    if not args.no_check:
        rec["errors"] += check_outputs(ctx, fns[0], inputs, outs, dtype, results)
    out_bytes = sum(nbytes(o) for o in [outs["eager"]])
    in_bytes = sum(nbytes(v) for v in inputs.values() if hasattr(v, "numel"))
    rec["min_bytes"] = in_bytes + out_bytes
    del inputs, outs
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    rec["results"].update(results)

    if not args.no_fusec:
        raw = run_fusec(args, w, log)
        rec["fusec_raw"] = raw
        if "error" in raw:
            rec["errors"].append("fusec bench: " + raw["error"])
        else:
            for mode, key in (("fused", "fusec"), ("per_op", "fusec_per_op")):
                r = fusec_result(raw, mode)
                if r:
                    rec["results"][key] = r
            fb = raw.get("min_bytes")
            if fb is not None and fb != rec["min_bytes"]:
                rec["errors"].append("fusec counts %d minimum bytes, torch %d" % (fb, rec["min_bytes"]))
        if not args.no_check:
            rec["fusec_check"] = check_fusec_run(ctx, w, progs, log)
            if "error" in rec["fusec_check"]:
                rec["errors"].append(rec["fusec_check"]["error"])
    return rec


def check_dims(w):
    """A smaller size of the workload for checking fusec run's output."""
    d = dict(w["dims"])
    keys = list(d)
    if len(keys) == 1:
        d[keys[0]] = min(d[keys[0]], 1 << 20)
    else:
        d[keys[0]] = min(d[keys[0]], 64)
    return d


def check_fusec_run(ctx, w, progs, log):
    """`fusec run` on .npy inputs of a smaller size, against the float64
    reference of the eager program on the same inputs."""
    import numpy as np
    torch, args = ctx.torch, ctx.args
    path = program_path(args.examples, w["program"])
    decl, outs = parse_inputs(path), parse_outputs(path)
    dims = check_dims(w)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed + 1)
    inputs = make_inputs(torch, decl, dims, gen)
    res = {"dims": dims}
    with tempfile.TemporaryDirectory(prefix="fusec-check-") as d:
        cmd = [args.fusec, "run", path]
        for k, v in dims.items():
            cmd += ["--dim", "%s=%d" % (k, v)]
        for name, dt, shape in decl:
            v = inputs[name]
            if shape is None:
                cmd += ["--in", "%s=%r" % (name, v)]
                continue
            f = os.path.join(d, name + ".npy")
            a = v.float() if dt == "bf16" else v  # bf16 travels as <f4, exactly
            np.save(f, a.cpu().numpy())
            cmd += ["--in", "%s=%s" % (name, f)]
        cmd += ["--out-dir", d] + device_opt(args.device)
        log("  $ " + " ".join(cmd))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.fusec_timeout,
                           env=fusec_env(args))
        if p.returncode != 0:
            res["error"] = "fusec run: exit %d: %s" % (p.returncode, p.stderr.strip()[-1000:])
            return res
        got = torch.from_numpy(np.load(os.path.join(d, outs[0] + ".npy")).astype("float64")).cuda()
    ref = progs[w["name"]][0](**{k: (v.double() if hasattr(v, "double") else v)
                                 for k, v in inputs.items()}).double()
    tol = TOLERANCE.get(main_dtype(decl), 1e-5)
    if tuple(got.shape) != tuple(ref.shape):
        res["error"] = "fusec run: output shape %s, expected %s" % (tuple(got.shape), tuple(ref.shape))
        return res
    res["rel_err"] = rel_err(torch, got, ref)
    res["ok"] = res["rel_err"] <= tol
    if not res["ok"]:
        res["error"] = "fusec run: relative error %.3g over %.3g" % (res["rel_err"], tol)
    return res


# ---- JIT start and recompiles -------------------------------------------------------

def count_files(d):
    """Entries of a kernel cache directory (<key>.fzc files)."""
    return sum(1 for f in os.listdir(d) if f.endswith(".fzc")) if os.path.isdir(d) else 0


def timed_fusec(cmd, env, timeout):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    ms = (time.perf_counter() - t0) * 1e3
    obj = None
    if p.returncode == 0:
        try:
            obj = json.loads(p.stdout)
        except ValueError:
            obj = None
    return p, ms, obj


def jit_start(args, log):
    """Cold (empty cache dir) and warm (disk cache) start of one program."""
    prog, dims = JIT_PROGRAM
    w = W("jit", prog, prog, dims)
    cmd = fusec_cmd(args.fusec, args.examples, w, 5, 1, ["--mode", "fused"], args.device)
    cache = tempfile.mkdtemp(prefix="fusec-jit-")
    # NVRTC's own cache in the driver's compute cache (CUDA 12.9+) off, or a
    # "cold" start finds the program compiled by an earlier step of the run
    # (bench/torch_backend.py says what it was worth)
    env = dict(os.environ, **{CACHE_ENV: cache, "CUDA_CACHE_DISABLE": "1"})
    res = {"program": prog, "dims": dims, "command": " ".join(cmd)}
    try:
        for tag in ("cold", "warm"):
            log("  $ %s=%s %s" % (CACHE_ENV, cache, " ".join(cmd)))
            p, ms, obj = timed_fusec(cmd, env, args.fusec_timeout)
            if p.returncode != 0 or obj is None:
                res["error"] = "%s: exit %d: %s" % (tag, p.returncode, p.stderr.strip()[-1000:])
                break
            res[tag + "_process_ms"] = ms
            f = obj.get("fused", {})
            res[tag + "_compile_ms"] = f.get("compile_ms")
            res[tag + "_compiles"] = f.get("compiles")
            res[tag + "_cache_files"] = count_files(cache)
        ptx = [args.fusec, "--emit=ptx", program_path(args.examples, prog)]
        t0 = time.perf_counter()
        p = subprocess.run(ptx, capture_output=True, text=True, timeout=args.fusec_timeout)
        if p.returncode == 0:
            res["emit_ptx_process_ms"] = (time.perf_counter() - t0) * 1e3
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return res


def recompiles(args, log):
    """How many compiles 20 sizes of one program cause: cache entries made in a
    fresh cache dir, and the runtime's own count where it reports one."""
    out = []
    for prog, sizes in RECOMPILE_SIZES.items():
        cache = tempfile.mkdtemp(prefix="fusec-rc-")
        env = dict(os.environ, **{CACHE_ENV: cache})
        rec = {"program": prog, "sizes": sizes, "runs": 0, "compiles": 0}
        try:
            for dims in sizes:
                w = W("rc", prog, prog, dims)
                cmd = fusec_cmd(args.fusec, args.examples, w, 3, 1, ["--mode", "fused"])
                p, _, obj = timed_fusec(cmd, env, args.fusec_timeout)
                if p.returncode != 0 or obj is None:
                    rec.setdefault("errors", []).append(
                        "%s: exit %d: %s" % (dims, p.returncode, p.stderr.strip()[-500:]))
                    continue
                rec["runs"] += 1
                c = obj.get("fused", {}).get("compiles")
                if c is None:
                    rec["compiles"] = None
                elif rec["compiles"] is not None:
                    rec["compiles"] += c
            rec["cache_files"] = count_files(cache)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        log("  %s: %d sizes, %s compiles, %d cache files" %
            (prog, rec["runs"], rec["compiles"], rec.get("cache_files", -1)))
        out.append(rec)
    return out


# ---- main ----------------------------------------------------------------------------

def selected(args):
    ws = WORKLOADS
    if args.only:
        keys = args.only.split(",")
        ws = [w for w in ws if any(k in w["key"] for k in keys)]
    return ws


def dry_run(args):
    print("# would run on the GPU, in this order:")
    print("copy bandwidth: torch y.copy_(x) on %d MiB, do_bench median" % args.copy_mib)
    for w in selected(args):
        path = program_path(args.examples, w["program"])
        decl = parse_inputs(path)
        print("%-45s %s" % (w["key"], ", ".join(
            "%s: %s%s" % (n, dt, "" if d is None else str(shape_of(d, w["dims"]))) for n, dt, d in decl)))
        fns = "eager, " + ("builtin, " if w["name"] in BUILTINS else "") + "torch.compile" + \
            ("" if args.no_fusec else ", fusec (Python) where the package imports")
        print("    torch: %s%s" % (fns, " (+ per-call wall time)" if w["launch_bound"] else ""))
        if not args.no_fusec:
            reps = args.fusec_reps_small if w["launch_bound"] else args.fusec_reps
            print("    $ " + " ".join(fusec_cmd(args.fusec, args.examples, w, reps,
                                                100 if w["launch_bound"] else 20,
                                                ["--graph"] if w["launch_bound"] else [])))
            if not args.no_check:
                print("    check: fusec run on .npy inputs at %s against float64"
                      % " ".join("%s=%d" % kv for kv in check_dims(w).items()))
    if not args.no_fusec and not args.no_jit:
        prog, dims = JIT_PROGRAM
        print("jit start: cold and warm, %s=<fresh dir> %s" % (CACHE_ENV, " ".join(fusec_cmd(
            args.fusec, args.examples, W("jit", prog, prog, dims), 5, 1, ["--mode", "fused"]))))
        for prog, sizes in RECOMPILE_SIZES.items():
            print("recompiles: %s at %d sizes in one fresh cache dir" % (prog, len(sizes)))
    return 0


BUILTINS = ("gelu_tanh", "softmax", "layernorm", "rmsnorm")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusec", default=os.path.join(ROOT, "build", "fusec"), help="the fusec binary")
    ap.add_argument("--examples", default=os.path.join(ROOT, "examples"), help="folder of the .fz programs")
    ap.add_argument("--out", default="bench-results.json", help="JSON file to write")
    ap.add_argument("--only", help="comma-separated substrings of workload keys")
    ap.add_argument("--dry-run", action="store_true", help="print what would run, run nothing")
    ap.add_argument("--no-fusec", action="store_true", help="torch only")
    ap.add_argument("--no-jit", action="store_true", help="skip the JIT start and recompile tests")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the checks against a float64 reference (torch variants, fusec run)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--device", type=int, default=0, help="GPU ordinal, for fusec and torch")
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of the copied tensor")
    ap.add_argument("--warmup-ms", type=int, default=25, help="do_bench warm-up (ms)")
    ap.add_argument("--rep-ms", type=int, default=100, help="do_bench repetition time (ms)")
    ap.add_argument("--per-call-n", type=int, default=2000, help="calls for the per-call time")
    ap.add_argument("--fusec-reps", type=int, default=200)
    ap.add_argument("--fusec-reps-small", type=int, default=2000)
    ap.add_argument("--fusec-timeout", type=int, default=180)
    return ap.parse_args(argv)


def finite(obj):
    """obj with every float that is not finite (NaN, infinities) as None:
    JSON has no literal for them, and strict parsers refuse Python's NaN."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def save(doc, path):
    """Strict JSON (non-finite numbers are null), written whole or not at all."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(finite(doc), f, indent=1, sort_keys=True, allow_nan=False)
    os.replace(tmp, path)


def environment(torch, triton):
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "device": torch.cuda.get_device_name(),
           "ordinal": torch.cuda.current_device(),
           "sm_count": p.multi_processor_count, "l2_bytes": getattr(p, "L2_cache_size", None),
           "memory_bytes": p.total_memory, "torch": torch.__version__, "triton": triton.__version__,
           "cuda": torch.version.cuda, "python": sys.version.split()[0]}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        env["nvidia_smi"] = smi.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return env


def main(argv):
    args = parse_args(argv)
    args.fusec = os.path.abspath(args.fusec)
    args.cache_dir = None
    args.examples = os.path.abspath(args.examples)
    if args.dry_run:
        return dry_run(args)
    if not args.no_fusec and not os.access(args.fusec, os.X_OK):
        print("run.py: %s is not an executable (give --fusec)" % args.fusec, file=sys.stderr)
        return 2
    # A fresh inductor cache, so that torch.compile's compile times are cold,
    # and a kernel cache of fusec's own for the run.
    inductor_cache = tempfile.mkdtemp(prefix="inductor-")
    args.cache_dir = tempfile.mkdtemp(prefix="fusec-cache-")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", inductor_cache)
    import torch
    import torch.nn.functional as F
    import triton
    import triton.testing  # noqa: F401

    torch.cuda.set_device(args.device)  # "cuda" is now this GPU for every tensor below
    t_start = time.perf_counter()

    def log(msg):
        print("[%6.1fs] %s" % (time.perf_counter() - t_start, msg), flush=True)

    ctx = Ctx(args, torch, triton, F)
    ctx.package = None if args.no_fusec else python_package(log)
    progs = torch_programs(torch, F)
    doc = {"meta": environment(torch, triton), "workloads": []}
    doc["meta"]["command"] = " ".join([os.path.relpath(sys.argv[0])] + list(argv))
    doc["meta"]["fusec"] = args.fusec
    log("device: %s, torch %s, triton %s" % (doc["meta"]["device"], torch.__version__, triton.__version__))

    c0 = copy_bandwidth(ctx)
    log("copy bandwidth: %.0f GB/s" % c0["gbps"])
    doc["copy"] = {"bytes": c0["bytes"], "gbps": c0["gbps"], "gbps_start": c0["gbps"],
                   "method": "torch y.copy_(x), %d MiB f32, do_bench median" % args.copy_mib}
    for w in selected(args):
        log(w["key"])
        try:
            rec = run_workload(ctx, w, progs, log)
        except Exception as e:  # one failing workload must not end the run
            rec = {"key": w["key"], "name": w["name"], "label": w["key"], "dims": w["dims"],
                   "launch_bound": w["launch_bound"], "results": {},
                   "errors": ["%s: %s" % (type(e).__name__, e)]}
            torch.cuda.empty_cache()
        for e in rec["errors"]:
            log("  ERROR " + e)
        summary = ", ".join("%s %.1f us" % (k, v["us"]) for k, v in rec["results"].items())
        log("  " + summary)
        doc["workloads"].append(rec)
        apply_floor(doc, c0["gbps"])
        save(doc, args.out)  # what was measured survives a run stopped later
    c1 = copy_bandwidth(ctx)
    log("copy bandwidth at the end: %.0f GB/s" % c1["gbps"])
    # The floor takes the better of the two copies (the harder floor to
    # reach); their difference says how steady the card was over the run.
    best = max(c0["gbps"], c1["gbps"])
    doc["copy"] = {"bytes": c0["bytes"], "gbps": best, "gbps_start": c0["gbps"], "gbps_end": c1["gbps"],
                   "method": "torch y.copy_(x), %d MiB f32, do_bench median" % args.copy_mib}
    apply_floor(doc, best)

    if not args.no_fusec and not args.no_jit:
        log("jit start")
        try:
            doc["jit"] = jit_start(args, log)
        except (OSError, subprocess.SubprocessError) as e:
            doc["jit"] = {"error": "%s: %s" % (type(e).__name__, e)}
        log("  %s" % json.dumps(doc["jit"]))
        log("recompiles")
        try:
            doc["recompiles"] = recompiles(args, log)
        except (OSError, subprocess.SubprocessError) as e:
            doc["recompiles"] = [{"program": "?", "runs": 0, "errors": ["%s: %s" % (type(e).__name__, e)]}]
    doc["meta"]["elapsed_s"] = time.perf_counter() - t_start
    shutil.rmtree(inductor_cache, ignore_errors=True)
    shutil.rmtree(args.cache_dir, ignore_errors=True)
    save(doc, args.out)
    log("wrote %s" % args.out)
    sys.path.insert(0, HERE)
    import report
    print(report.render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

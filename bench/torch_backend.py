#!/usr/bin/env python3
"""bench/torch_backend.py: torch.compile(backend="fusec") beside
torch.compile() (Inductor), the fusec program called directly, and eager.

For every public workload (bench/run.py's WORKLOADS and eager functions) and
the modules of tests/python/test_torch_modules.py (GPT-2 MLP, LLaMA bf16 MLP,
masked attention, a training step), one child process per backend, with
empty Inductor, Triton and fusec kernel caches (and NVRTC's own cache off), measures:

  first call   the wall time of the first call of torch.compile(fn,
               backend=..., dynamic=False), synchronised: Dynamo, AOTAutograd,
               the backend's compile and one run (cold caches). Both
               backends are warmed up first on an unrelated function, so
               imports and driver start-up are not counted. For fusec, its
               parts: `compile_ms`, the time in the backend's compiler
               (partition, translate, fusec.compile; the JIT is only
               started), and `jit_wait_ms`, the time the first call waited
               for the JIT (NVRTC, or the disk cache) to finish, and
               `jit_pending`, the regions whose JIT was still running when
               the first call ended (they ran on fusec's GPU interpreter;
               the calls timed next wait for it: `jit_rest_ms`). The
               backend "aot" (in --backends) is Dynamo and AOTAutograd as
               fusec sets them up, with a compiler that returns the aten
               graph as it is: what a first call costs before fusec does
               anything;
  per call     the median time of a call (triton.testing.do_bench, L2
               flushed), and for the launch-bound workloads the host time a
               call takes to submit, over back-to-back calls;
  direct       the same for the workload's examples/*.fz program called
               through the fusec package (what the backend should cost);
  eager        the same for the eager function.

It checks the backend's result against eager (docs/runtime.md's tolerance,
doubled for halves) and counts the fusec regions and kernels. Prints a table
and writes JSON.

  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so python3 bench/torch_backend.py --out torch-backend.json
  ... --only softmax,gpt2        substrings of the case keys
  ... --device cpu --backends fusec   a quick run of the harness without a GPU
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import run as suite  # noqa: E402  (the workloads)

MODULES = ("gpt2_mlp", "llama_mlp_bf16", "attention", "train_step")
CPU_DIMS = {"N": 4099, "B": 5, "R": 5, "C": 257}


def case_keys():
    return [w["key"] for w in suite.WORKLOADS] + list(MODULES)


# ---- one case, in its own process ------------------------------------------------------


class Timer:
    """do_bench on the GPU; a median of wall times on the CPU."""

    def __init__(self, torch, device, warmup_ms, rep_ms):
        self.torch, self.device = torch, device
        self.warmup_ms, self.rep_ms = warmup_ms, rep_ms
        if device == "cuda":
            import triton.testing
            self.do_bench = triton.testing.do_bench

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def median_us(self, fn):
        if self.device == "cuda":
            return self.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, return_mode="median") * 1e3
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)

    def host_us(self, fn, n):
        """Submit time per call of n back-to-back calls."""
        fn()
        self.sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        self.sync()
        return (t1 - t0) / n * 1e6

    def first_call_ms(self, fn):
        self.sync()
        t0 = time.perf_counter()
        out = fn()
        self.sync()
        return (time.perf_counter() - t0) * 1e3, out


def make_case(torch, key, device):
    """(fn, args, row length, workload or None) of a case."""
    import torch.nn.functional as F
    if key in MODULES:
        import test_torch_modules as mods
        if key == "train_step":
            s = mods.SIZES[device]
            torch.manual_seed(0)
            model = mods.TinyLM(s["d"], s["vocab"]).to(device)
            x = torch.randn(s["batch"], s["seq"], s["d"], device=device)
            target = torch.randint(0, s["vocab"], (s["batch"], s["seq"]), device=device)
            return mods.train_step, [model, x, target], s["vocab"], None
        fn, args, row = mods.make(key, device)
        return fn, args, row, None
    w = next(w for w in suite.WORKLOADS if w["key"] == key)
    dims = w["dims"] if device == "cuda" else {d: CPU_DIMS[d] for d in w["dims"]}
    gen = torch.Generator().manual_seed(1234)
    args = []
    for name, dtype, shape in suite.parse_inputs(suite.program_path(os.path.join(ROOT, "examples"), w["program"])):
        if shape is None:
            args.append(suite.SCALARS.get(name, 0.5))
            continue
        t = torch.rand(suite.shape_of(shape, dims), generator=gen) * 4 - 2
        args.append(t.to(getattr(torch, suite.TORCH_DTYPES[dtype])).to(device))
    fn = suite.torch_programs(torch, F)[w["name"]][0]
    return fn, args, args[0].shape[-1], w


def compare(torch, got, want, row):
    """The largest error in units of the tolerance (<= 1 passes)."""
    if isinstance(want, (tuple, list)):
        return max(compare(torch, g, w, row) for g, w in zip(got, want))
    tol = {torch.float32: (1e-5, 1e-4), torch.float16: (2e-2, 2e-2), torch.bfloat16: (4e-2, 4e-2),
           torch.float64: (1e-12, 1e-10)}[want.dtype]
    g, w = got.detach().double(), want.detach().double()
    scale = max(1.0, math.sqrt(row) / 8)
    err = (g - w).abs() / ((tol[0] + tol[1] * w.abs()) * scale)
    err = torch.where((g == w) | (g.isnan() & w.isnan()), torch.zeros_like(err), err)
    return err.max().item()


def aot_only():
    """The "aot" backend: fusec's AOTAutograd setup, compiling nothing."""
    import fusec.torch
    from torch._functorch.aot_autograd import make_boxed_func
    return fusec.torch._aot_setup(lambda kind: lambda gm, example_inputs: make_boxed_func(gm.forward))


def backend_of(name):
    return aot_only() if name == "aot" else name


class Phases:
    """Times fusec's parts of a first call (see the module's comment)."""

    def __init__(self):
        import fusec.torch
        from fusec.torch import graph, runtime
        self.ms = {"compile_ms": 0.0, "jit_wait_ms": 0.0}
        self.futures = []
        start = graph.jit_async
        graph.jit_async = lambda *a: self._keep(start(*a))
        self._undo = [self._wrap(fusec.torch, "_compile", "compile_ms"),
                      self._wrap(runtime.Region, "settle", "jit_wait_ms"),
                      lambda: setattr(graph, "jit_async", start)]

    def _keep(self, future):
        if future is not None:
            self.futures.append(future)
        return future

    def finish_jit(self):
        """After the first call: how many JIT compiles it left running (its
        regions ran on the interpreter), and the time until they end (the
        calls timed next are then the compiled kernels')."""
        pending = sum(not f.done() for f in self.futures)
        t0 = time.perf_counter()
        for f in self.futures:
            f.exception()
        return {"jit_pending": pending, "jit_rest_ms": round((time.perf_counter() - t0) * 1e3, 2)}

    def _wrap(self, owner, name, key):
        fn = getattr(owner, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms[key] += (time.perf_counter() - t0) * 1e3
        setattr(owner, name, timed)
        return lambda: setattr(owner, name, fn)

    def close(self):
        for undo in self._undo:
            undo()


def warm_up(torch, device, backends, filename):
    """Imports, driver and context start-up, so that first calls count
    compiles. The function is compiled as if written in `filename`, the
    case's file: Dynamo reads a file the first time it traces code of it
    (about 20 ms for bench/run.py), which would otherwise be counted against
    whichever backend goes first."""
    fn = eval(compile("lambda t: torch.sigmoid(t * 3) - 1", filename, "eval"), {"torch": torch})
    x = torch.randn(64, device=device)
    for b in backends:
        torch._dynamo.reset()
        torch.compile(fn, backend=backend_of(b), dynamic=False)(x)
    if device == "cuda":
        torch.cuda.synchronize()


def measure(torch, timer, fn, args, launch_bound, per_call_n):
    call = (lambda: fn(*args))
    rec = {"us": timer.median_us(call)}
    if launch_bound:
        rec["host_us"] = timer.host_us(call, per_call_n)
    return rec


def run_one(opts):
    import torch
    import fusec
    import fusec.torch
    from fusec.torch.report import Report, _collectors, collect
    device = opts.device
    backends = opts.backends.split(",")
    torch.manual_seed(0)
    timer = Timer(torch, device, opts.warmup_ms, opts.rep_ms)
    fn, args, row, w = make_case(torch, opts.one, device)
    code = getattr(fn, "__code__", None) or type(fn).forward.__code__  # a function, or a module
    warm_up(torch, device, backends, code.co_filename)
    launch_bound = bool(w and w["launch_bound"])
    is_train = opts.one == "train_step"
    grad = torch.enable_grad() if is_train else torch.no_grad()
    res = {"key": opts.one, "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu"}
    with grad:
        want = fn(*args)
        res["eager"] = measure(torch, timer, fn, args, launch_bound, opts.per_call_n)
        for b in backends:
            torch._dynamo.reset()
            report = Report()
            collect(report)
            compiled = torch.compile(fn, backend=backend_of(b), dynamic=False)
            phases = Phases() if b == "fusec" else None
            try:
                ms, out = timer.first_call_ms(lambda: compiled(*args))
                rec = {"first_call_ms": ms}
                if phases:
                    rec.update(phases.finish_jit())
            finally:
                _collectors.remove(report)
                if phases:
                    phases.close()
            if phases:
                rec.update({k: round(v, 2) for k, v in phases.ms.items()})
            rec.update(measure(torch, timer, compiled, args, launch_bound, opts.per_call_n))
            rec["err"] = compare(torch, out, want, row)
            if b == "fusec":
                rec["regions"] = len(report.regions)
                rec["kernels"] = report.kernels
                rec["fallbacks"] = len(report.fallbacks)
            res[b] = rec
        if w is not None:
            prog = fusec.compile_file(suite.program_path(os.path.join(ROOT, "examples"), w["program"]))
            if device == "cpu":  # the CPU reference, as the backend runs it there
                from fusec.torch.runtime import _run_cpu
                direct = (lambda *a: _run_cpu(prog, a))
            else:
                direct = prog
            ms, out = timer.first_call_ms(lambda: direct(*args))
            rec = {"first_call_ms": ms}
            rec.update(measure(torch, timer, direct, args, launch_bound, opts.per_call_n))
            rec["err"] = compare(torch, out.reshape(want.shape), want, row)
            res["direct"] = rec
    print(json.dumps(res))
    return 0


# ---- the driver ---------------------------------------------------------------------------


def child_env(tmp):
    env = dict(os.environ)
    for var, sub in (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"),
                     ("FUSEC_CACHE_DIR", "fusec"), ("CUDA_CACHE_PATH", "cuda")):
        env[var] = os.path.join(tmp, sub)
    # NVRTC (CUDA 12.9 and later) keeps compiled programs in the driver's
    # compute cache (~/.nv/ComputeCache), outside fusec's: on the H200 a
    # second process compiled softmax f16's entry in 19-27 ms instead of
    # about 200, so a "cold" first call after any earlier run of the same
    # program was not cold. Off, as the other caches are empty.
    env["CUDA_CACHE_DISABLE"] = "1"
    return env


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def table(results):
    head = ("case", "fusec us", "direct us", "fusec/direct", "inductor us", "eager us",
            "fusec 1st ms", "(compile, jit wait, interpreted)", "aot 1st ms", "inductor 1st ms", "1st ratio", "regions",
            "kernels", "err")
    rows = [head]
    for r in results:
        if "error" in r:
            rows.append((r["key"], "ERROR: " + r["error"].splitlines()[-1][-200:]) + ("",) * (len(head) - 2))
            continue
        f, d, i, e = r.get("fusec", {}), r.get("direct", {}), r.get("inductor", {}), r.get("eager", {})
        a = r.get("aot", {})
        ratio = f["us"] / d["us"] if f.get("us") and d.get("us") else None
        first = f["first_call_ms"] / i["first_call_ms"] if f.get("first_call_ms") and i.get("first_call_ms") \
            else None
        host = f" (host {f['host_us']:.1f}/{d.get('host_us', 0):.1f})" if "host_us" in f else ""
        rows.append((r["key"], fmt(f.get("us"), ".1f") + host, fmt(d.get("us"), ".1f"), fmt(ratio, ".3f"),
                     fmt(i.get("us"), ".1f"), fmt(e.get("us"), ".1f"), fmt(f.get("first_call_ms"), ".0f"),
                     fmt(f.get("compile_ms"), ".1f") + ", " + fmt(f.get("jit_wait_ms"), ".1f") + ", "
                     + fmt(f.get("jit_pending"), "d"),
                     fmt(a.get("first_call_ms"), ".0f"), fmt(i.get("first_call_ms"), ".0f"), fmt(first, ".3f"),
                     fmt(f.get("regions"), "d"), fmt(f.get("kernels"), "d"), fmt(f.get("err"), ".2f")))
    width = [max(len(str(row[c])) for row in rows) for c in range(len(head))]
    return "\n".join("  ".join(str(c).ljust(n) for c, n in zip(row, width)).rstrip() for row in rows)


def run_child(key, backend, opts):
    """One case with one backend, in a process of its own with empty
    caches: the first compile in a process pays for Dynamo's and
    AOTAutograd's first sight of the code and its ops (tens of ms for a
    workload, hundreds for a training step), which would otherwise be
    counted against whichever backend went first."""
    tmp = tempfile.mkdtemp(prefix="fusec-torch-bench-")
    cmd = [sys.executable, os.path.abspath(__file__), "--one", key, "--device", opts.device,
           "--backends", backend, "--warmup-ms", str(opts.warmup_ms), "--rep-ms", str(opts.rep_ms),
           "--per-call-n", str(opts.per_call_n)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=child_env(tmp), timeout=opts.timeout)
        lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if p.returncode == 0 and lines else \
            {"key": key, "error": f"{backend}: exit {p.returncode}: {p.stderr.strip()}"}
    except subprocess.TimeoutExpired:
        return {"key": key, "error": f"{backend}: timed out after {opts.timeout} s"}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="torch-backend.json")
    ap.add_argument("--only", help="comma-separated substrings of case keys")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--backends", default="inductor,aot,fusec",
                    help="torch.compile backends to measure (aot: Dynamo and AOTAutograd alone)")
    ap.add_argument("--warmup-ms", type=int, default=25)
    ap.add_argument("--rep-ms", type=int, default=100)
    ap.add_argument("--per-call-n", type=int, default=2000)
    ap.add_argument("--timeout", type=int, default=300, help="seconds for one case and backend")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process
    opts = ap.parse_args(argv)
    if opts.one:
        return run_one(opts)
    keys = case_keys()
    if opts.only:
        keys = [k for k in keys if any(s in k for s in opts.only.split(","))]
    results, t0 = [], time.perf_counter()
    for key in keys:
        r = {"key": key}
        for b in opts.backends.split(","):
            got = run_child(key, b, opts)
            if "error" in got:
                r = got
                break
            r.update(got)
        print(f"[{time.perf_counter() - t0:6.1f}s] {key}: " +
              (r["error"].splitlines()[-1] if "error" in r else json.dumps(r)), flush=True)
        results.append(r)
        with open(opts.out, "w") as f:
            json.dump(results, f, indent=1)
    print(table(results))
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""bench/python_overhead.py: host time per call of a fusec program called
from Python, beside eager PyTorch and torch.compile on the same call.

For the suite's launch-bound workloads (bench/run.py: add_scale_bias_relu at
N = 4096 and softmax at 8 x 1024, one kernel each), the sizes at which the
GPU finishes each call before the host has issued the next, it times n
back-to-back calls with no synchronisation in between, as bench/run.py's
per_call does: "host" is the time to issue a call (what the Python layer
costs), "wall" the time per call once the GPU has finished all of them.

  fusec          prog(x, ...): outputs allocated by torch, torch's current stream
  fusec out=     prog(x, ..., out=y): into a preallocated tensor
  fusec kwargs   prog(x=x, ...): the inputs by name
  C launch       fz_call_launch through ctypes with its arguments packed
                 once: the binding's floor (the C launch and one crossing);
                 the same pointers at every call, so after 256 calls the run
                 replays a CUDA graph, as `fusec` and `fusec out=` do here
  C, no graphs   the same on a run with graphs off: one cuLaunchKernel a call
  ctypes call    fz_version() through the same handle: a crossing into C
                 that does nothing
  torch.empty    allocating an output with torch.empty(shape, dtype=, device=)
  empty_like     ... with torch.empty_like(x)
  empty_strided  ... with torch._C._dynamo.guards._empty_strided_cuda, what the
                 package allocates with where it works (fusec/_gpu.py)
  eager          the same computation in torch ops (several kernels)
  compiled       torch.compile of the eager function (one Triton kernel)

Where host and wall agree, the GPU is the bottleneck and the host time is
the GPU's time per call, not the host's work.

Each figure is the median of R repetitions of n calls (--reps, --calls).
The call path's target is 10 µs or less per call (issue 12).

  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so python3 bench/python_overhead.py [--json out.json]
"""

import argparse
import gc
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def per_call(torch, fn, n, reps):
    """(host µs, wall µs) per call: medians over reps of n back-to-back calls."""
    fn()
    torch.cuda.synchronize()
    host, wall = [], []
    gc.disable()
    try:
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            host.append((t1 - t0) / n * 1e6)
            wall.append((t2 - t0) / n * 1e6)
    finally:
        gc.enable()
    return statistics.median(host), statistics.median(wall)


def workloads(torch):
    def add_scale_bias_relu(x, y, bias, s):
        return torch.relu((x + y) * s + bias)

    def softmax(x):
        e = torch.exp(x - x.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)

    dev = "cuda"
    n = 4096
    yield ("add_scale_bias_relu N=4096", "add_scale_bias_relu.fz",
           [torch.randn(n, device=dev), torch.randn(n, device=dev), torch.randn(n, device=dev), 0.5],
           add_scale_bias_relu)
    yield ("softmax 8x1024", "softmax.fz", [torch.randn(8, 1024, device=dev)], softmax)


def c_launch(prog, args, out, graphs=True):
    """A call of the C launch alone, with everything prepared as the package
    prepares it (graphs=False: on a run of its own with graphs off)."""
    from fusec import _gpu, _lib
    (sig,) = prog._signatures.values()
    stream = _gpu._raw_stream(sig.dp.ordinal)
    if graphs:
        c = sig.calls.get(stream) or sig.new_call(stream)
    else:
        c = _gpu._Call(sig.dp, sig.in_shapes, sig.out_shapes, stream)
        _lib.lib.fz_run_set_graph(c.run, 0)
    packed = sig.pack(*[a.data_ptr() if hasattr(a, "data_ptr") else a for a in args], out.data_ptr())
    launch = _lib.call_launch
    return lambda: launch(c, packed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000, help="calls per repetition (default 20000)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (default 5)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import fusec
    from fusec import _lib

    dev = torch.cuda.get_device_name(0)
    print(f"fusec {fusec.version} ({fusec.library_path}), torch {torch.__version__}, {dev}")
    print(f"host and wall µs per call: medians of {args.reps} x {args.calls} back-to-back calls\n")
    rows, doc = [], {"device": dev, "torch": torch.__version__, "calls": args.calls, "reps": args.reps,
                     "workloads": {}}
    for label, path, inputs, eager in workloads(torch):
        prog = fusec.compile_file(os.path.join(ROOT, "examples", path))
        ref = eager(*inputs)
        got = prog(*inputs)
        err = (got.double() - ref.double()).abs().max().item()
        out = torch.empty_like(ref)
        shape, dtype, device, x = tuple(ref.shape), ref.dtype, ref.device, inputs[0]
        strides, version = tuple(ref.stride()), _lib.fast.fz_version
        kwargs = {spec.name: v for spec, v in zip(prog.inputs, inputs)}  # prog(x=..., eps=...)
        variants = [
            ("fusec", lambda: prog(*inputs)),
            ("fusec out=", lambda: prog(*inputs, out=out)),
            ("fusec kwargs", lambda: prog(**kwargs)),
            ("C launch", c_launch(prog, inputs, out)),
            ("C, no graphs", c_launch(prog, inputs, out, graphs=False)),
            ("ctypes call", version),
            ("torch.empty", lambda: torch.empty(shape, dtype=dtype, device=device)),
            ("empty_like", lambda: torch.empty_like(x)),
        ]
        empty_strided = getattr(getattr(getattr(torch._C, "_dynamo", None), "guards", None), "_empty_strided_cuda",
                                None)
        if empty_strided is not None:
            variants.append(("empty_strided", lambda: empty_strided(shape, strides, dtype)))
        variants.append(("eager", lambda: eager(*inputs)))
        if not args.no_compile:
            torch._dynamo.reset()
            compiled = torch.compile(eager, dynamic=False)
            compiled(*inputs)
            variants.append(("compiled", lambda: compiled(*inputs)))
        res = {"max_abs_err_vs_eager": err, "kernels": prog.kernels}
        for name, fn in variants:
            host, wall = per_call(torch, fn, args.calls, args.reps)
            res[name] = {"host_us": host, "wall_us": wall}
            rows.append((label, name, host, wall))
        doc["workloads"][label] = res
        print(f"{label}: fusec {prog.kernels} kernel, max |fusec - eager| = {err:.3g}")
        for _, name, host, wall in rows[-len(variants):]:
            print(f"  {name:14s} host {host:7.2f} µs   wall {wall:7.2f} µs")
        print()
    worst = max(r["fusec"]["host_us"] for r in doc["workloads"].values())
    print(f"fusec from Python, host time per call: {worst:.2f} µs at most (target: 10 µs or less): "
          f"{'met' if worst <= 10 else 'NOT met'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()

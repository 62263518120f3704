#!/usr/bin/env python3
"""bench/python_overhead.py: host time per call of a fusec program called
from Python, beside eager PyTorch and torch.compile on the same call.

For the suite's launch-bound workloads (bench/run.py: add_scale_bias_relu at
N = 4096 and softmax at 8 x 1024, one kernel each), the sizes at which the
GPU finishes each call before the host has issued the next, it times n
back-to-back calls with no synchronisation in between, as bench/run.py's
per_call does: "host" is the time to issue a call (what the Python layer
costs), "wall" the time per call once the GPU has finished all of them.

  fusec        prog(x, ...): outputs allocated by torch, torch's current stream
  fusec out=   prog(x, ..., out=y): into a preallocated tensor
  C launch     fz_run_launch_with through ctypes with prepared arrays: the
               binding's floor (the C launch and one crossing)
  torch.empty  allocating the outputs alone, what `fusec` adds to `out=`
  eager        the same computation in torch ops (several kernels)
  compiled     torch.compile of the eager function (one Triton kernel)

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


def c_launch(prog, args, out):
    """A call of the C launch alone, with everything prepared as the package prepares it."""
    from fusec import _gpu, _lib
    dp = prog._devices[args[0].get_device()]
    (sig,) = [s for s in dp.sigs.values()]
    stream = _gpu._raw_stream(dp.ordinal)
    run, st = sig.runs.get(stream) or sig.run(stream)
    for p in prog._tensor_pos:
        dp.ptrs[p] = args[p].data_ptr()
    for j, p in enumerate(prog._scalar_pos):
        dp.scalars[j] = args[p]
    dp.outs[0] = out.data_ptr()
    launch, P, O, ins, outs = _lib.launch_with, dp.ptrs, dp.outs, sig.in_shapes, sig.out_shapes
    return lambda: launch(run, st, P, ins, O, outs)


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
        shape, dtype, device = tuple(ref.shape), ref.dtype, ref.device
        variants = [
            ("fusec", lambda: prog(*inputs)),
            ("fusec out=", lambda: prog(*inputs, out=out)),
            ("C launch", c_launch(prog, inputs, out)),
            ("torch.empty", lambda: torch.empty(shape, dtype=dtype, device=device)),
            ("eager", lambda: eager(*inputs)),
        ]
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
            print(f"  {name:12s} host {host:7.2f} µs   wall {wall:7.2f} µs")
        print()
    worst = max(r["fusec"]["host_us"] for r in doc["workloads"].values())
    print(f"fusec from Python, host time per call: {worst:.2f} µs at most (target: 10 µs or less): "
          f"{'met' if worst <= 10 else 'NOT met'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()

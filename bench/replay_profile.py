#!/usr/bin/env python3
"""bench/replay_profile.py: where the time of a sweep point goes, fusec's and
torch.compile's, as the sweep times them.

For each point (a sweep key, as `bench/sweep.py --dry-run` prints them) both
functions are captured in a CUDA graph over several copies of the inputs
(past 4x the L2, as run.Ctx.device_us does) and the graph is replayed: the
replay's time a call (the sweep's figure), then the same replays under
torch.profiler, which gives each kernel's device time. Their difference is
the time between kernels; so a gap to torch.compile shows as either slower
kernels or longer gaps. An isolated launch under Nsight Compute (caches
flushed, one kernel) does not see this: docs/performance.md, "Where the
time goes".

  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \\
      python3 bench/replay_profile.py KEY [KEY ...]

Needs torch and the fusec package; without a key it knows it stops before
importing torch (bench/test_scripts.py).
"""

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sweep  # noqa: E402  (the families, their inputs and torch functions)


def capture(torch, fn, kw):
    """fn over copies of kw (past 4x the L2) captured as one CUDA graph."""
    nbytes = sum(v.numel() * v.element_size() for v in kw.values() if torch.is_tensor(v))
    l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0) or 0
    n = min(16, max(1, -(-4 * l2 // max(nbytes, 1))))
    sets = [kw] + [{k: (v.clone() if torch.is_tensor(v) else v) for k, v in kw.items()} for _ in range(n - 1)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture
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


def replay_us(torch, g, calls, rounds=30):
    """Median µs a call over `rounds` replays, timed by events."""
    times = []
    for _ in range(rounds):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3 / calls)
    return statistics.median(times)


def kernel_us(torch, g, calls, rounds=5):
    """Each kernel's mean device µs over `rounds` replays, and their sum a call."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(rounds):
            g.replay()
        torch.cuda.synchronize()
    kernels = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            kernels.setdefault(ev.name, []).append(ev.device_time)
    total = sum(sum(v) for v in kernels.values()) / (rounds * calls)
    return total, {k: (len(v), sum(v) / len(v)) for k, v in kernels.items()}


def main(argv):
    points = {p["key"]: p for p in sweep.plan()}
    missing = [k for k in argv if k not in points]
    if missing or not argv:
        sys.exit("replay_profile: unknown or no point keys: %s (see bench/sweep.py --dry-run)" % " ".join(missing))
    import torch
    import torch.nn.functional as F_
    import fusec

    fns = sweep.torch_programs(torch, F_)
    print("%-32s %-13s %9s %9s %8s  kernels (count, mean µs)" % ("point", "system", "replay", "kernels", "gaps"))
    for key in argv:
        p = points[key]
        fam = sweep.family(p["family"], p["dtype"])
        inputs = sweep.make_inputs(torch, fam, p["dims"], 0)
        prog = fusec.compile_file(os.path.join(sweep.ROOT, fam["program"]))
        torch._dynamo.reset()
        comp = torch.compile(fns[fam["torch"]], dynamic=False)
        for name, fn in (("fusec", prog), ("torch.compile", comp)):
            g, sets = capture(torch, fn, inputs)
            us = replay_us(torch, g, len(sets))
            total, kernels = kernel_us(torch, g, len(sets))
            each = "; ".join("%s x%d %.1f" % (k[:44], n, t) for k, (n, t) in kernels.items())
            print("%-32s %-13s %9.1f %9.1f %8.1f  %s" % (key, name, us, total, us - total, each), flush=True)
            del g, sets
        del inputs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])

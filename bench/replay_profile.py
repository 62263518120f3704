#!/usr/bin/env python3
"""bench/replay_profile.py: where the time of a sweep point goes, fusec's and
torch.compile's, as the sweep times them.

For each point (a sweep key, as `bench/sweep.py --dry-run` prints them) both
functions are captured in a CUDA graph over several copies of the inputs
(past 4x the L2: run.graph_over_copies, as run.Ctx.device_us) and the graph is replayed: the
replay's time a call (the sweep's figure), then the same replays under
torch.profiler, which gives each kernel's device time. Their difference is
the time between kernels; so a gap to torch.compile shows as either slower
kernels or longer gaps. torch.compile is called once first and timed
first, as in the sweep. An isolated launch under Nsight Compute (caches
flushed, one kernel) does not see this: docs/performance.md, "Where the
time goes".

  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \\
      python3 bench/replay_profile.py KEY [KEY ...]

Needs torch and the fusec package; without a key it knows it stops before
importing torch (bench/test_scripts.py).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402  (the sweep's CUDA-graph replay)
import sweep  # noqa: E402  (the families, their inputs and torch functions)


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
    points = sweep.known_points("replay_profile", argv)
    import torch
    import torch.nn.functional as F_
    import fusec

    fns = sweep.torch_programs(torch, F_)
    print("%-32s %-13s %9s %9s %8s  kernels (count, mean µs)" % ("point", "system", "replay", "kernels", "gaps"))
    for p in points:
        key = p["key"]
        inputs, prog, comp = sweep.compiled_point(torch, fusec, fns, p)
        # torch.compile's first call on the default stream, and its figure
        # first, as the sweep takes them (sweep.time_compiled): Inductor
        # autotunes on the first call, and this tool once gave torch.compile
        # 10-30% more than the sweep did (docs/performance.md, "Three
        # points under Nsight Compute").
        comp(**inputs)
        torch.cuda.synchronize()
        for name, fn in (("torch.compile", comp), ("fusec", prog)):
            g, sets = run.graph_over_copies(torch, fn, inputs)
            us = run.replay_us(torch, g, len(sets), 0, at_least=30)
            total, kernels = kernel_us(torch, g, len(sets))
            each = "; ".join("%s x%d %.1f" % (k[:44], n, t) for k, (n, t) in kernels.items())
            print("%-32s %-13s %9.1f %9.1f %8.1f  %s" % (key, name, us, total, us - total, each), flush=True)
            del g, sets
        del inputs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])

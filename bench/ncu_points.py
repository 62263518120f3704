#!/usr/bin/env python3
"""bench/ncu_points.py: fusec's kernel and torch.compile's at the same sweep
points, under Nsight Compute, so that their counters sit side by side.

For each point (a sweep key, as `bench/sweep.py --dry-run` prints them) the
program is compiled with fusec (from Python, through the package) and the
same function with torch.compile(dynamic=False); both are warmed up, then
called once each inside an NVTX range named after the point, which is what
ncu profiles (`--nvtx --nvtx-include`):

  ncu --nvtx --nvtx-include 'prof/' --clock-control none --csv \\
      --metrics gpu__time_duration.sum,sm__inst_executed.sum,... \\
      python3 bench/ncu_points.py KEY [KEY ...]

Without ncu it makes the same calls and profiles nothing. Needs torch and
the fusec package (PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so). Run
on the H100 on 2026-11-27 (docs/performance.md, "Compile options"); here
only its check of the keys is tested (bench/test_scripts.py).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sweep  # noqa: E402  (the families, their inputs and torch functions)


def main(argv):
    points = sweep.known_points("ncu_points", argv)
    import torch
    import torch.nn.functional as F_
    import fusec

    fns = sweep.torch_programs(torch, F_)
    for p in points:
        key = p["key"]
        inputs, prog, comp = sweep.compiled_point(torch, fusec, fns, p)
        for _ in range(3):  # torch.compile first, as the sweep calls it
            comp(**inputs)
            prog(**inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("prof")
        torch.cuda.nvtx.range_push(key)
        prog(**inputs)
        comp(**inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
        print("ncu_points: %s done" % key, flush=True)
        del inputs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""bench/row_shapes.py: row kernels at the shapes of issue 10, several fusec
binaries side by side (before and after a change), on the GPU machine.

For every shape, each binary in turn runs `fusec bench --mode fused --json`
(one process a point: its own copy-bandwidth floor, its own JIT), so that the
binaries are interleaved and a drift of the machine shows in all of them. The
table gives the median µs of a call and its % of the bandwidth floor; the
JSON keeps every object fusec printed.

  python3 bench/row_shapes.py --fusec before=../base/fusec --fusec after=../build/fusec \
      --out rows.json [--only softmax,layernorm] [--reps 100]

Needs only python3 and the binaries (no torch). --list prints the shapes.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (label, program, dims): odd and aligned widths, short, long and few rows.
SHAPES = [
    ("softmax f32 2047x4099", "examples/softmax.fz", "B=2047 N=4099"),
    ("softmax f32 2048x4096", "examples/softmax.fz", "B=2048 N=4096"),
    ("softmax f32 4096x4096", "examples/softmax.fz", "B=4096 N=4096"),
    ("softmax f32 32768x1024", "examples/softmax.fz", "B=32768 N=1024"),
    ("softmax f32 8381x1001", "examples/softmax.fz", "B=8381 N=1001"),
    ("softmax f32 16384x512", "examples/softmax.fz", "B=16384 N=512"),
    ("softmax f32 32768x256", "examples/softmax.fz", "B=32768 N=256"),
    ("softmax f32 66053x127", "examples/softmax.fz", "B=66053 N=127"),
    ("softmax f32 131072x64", "examples/softmax.fz", "B=131072 N=64"),
    ("softmax f32 270601x31", "examples/softmax.fz", "B=270601 N=31"),
    ("softmax f32 524288x16", "examples/softmax.fz", "B=524288 N=16"),
    ("softmax f32 1198373x7", "examples/softmax.fz", "B=1198373 N=7"),
    ("softmax f32 8388608x1", "examples/softmax.fz", "B=8388608 N=1"),
    ("softmax f32 1024x32768", "examples/softmax.fz", "B=1024 N=32768"),
    ("softmax f32 9x1000003", "examples/softmax.fz", "B=9 N=1000003"),
    ("softmax f32 3x1000003", "examples/softmax.fz", "B=3 N=1000003"),
    ("softmax f16 4094x4099", "examples/softmax_f16.fz", "B=4094 N=4099"),
    ("softmax f16 8192x4096", "examples/softmax_f16.fz", "B=8192 N=4096"),
    ("softmax f16 16384x1024", "examples/softmax_f16.fz", "B=16384 N=1024"),
    ("log_softmax f32 167x50257", "examples/log_softmax.fz", "B=167 N=50257"),
    ("layernorm f32 8192x4096", "examples/layernorm.fz", "R=8192 C=4096"),
    ("layernorm f32 2046x4099", "examples/layernorm.fz", "R=2046 C=4099"),
    ("layernorm bf16 16760x1001", "examples/layernorm_bf16.fz", "R=16760 C=1001"),
    ("layernorm bf16 4095x4096", "examples/layernorm_bf16.fz", "R=4095 C=4096"),
    ("layernorm bf16 132104x127", "examples/layernorm_bf16.fz", "R=132104 C=127"),
    ("layernorm bf16 541200x31", "examples/layernorm_bf16.fz", "R=541200 C=31"),
    ("rmsnorm f32 2047x4099", "examples/rmsnorm.fz", "R=2047 C=4099"),
    ("masked_softmax f16 4x16x256x1024", "bench/sweep/masked_softmax_f16.fz", "B=4 H=16 Q=256 K=1024"),
    ("masked_softmax f16 4x16x256x999", "bench/sweep/masked_softmax_f16.fz", "B=4 H=16 Q=256 K=999"),
    ("add_rmsnorm bf16 1846x4544", "bench/sweep/add_rmsnorm_bf16.fz", "T=1846 C=4544"),
    # pointwise with broadcast operands (docs/performance.md, shared offsets)
    ("dyt bf16 4095x4096", "bench/sweep/dyt_bf16.fz", "T=4095 C=4096"),
    ("modrms_batch bf16 8x1820x1152", "bench/sweep/modrms_batch_bf16.fz", "B=8 T=1820 C=1152"),
    # entries whose registers depend on NVRTC's -Ofc level (docs/performance.md, "Compile options")
    ("add_rmsnorm bf16 4096x2048", "bench/sweep/add_rmsnorm_bf16.fz", "T=4096 C=2048"),
    ("modrms_row bf16 4096x2048", "bench/sweep/modrms_row_bf16.fz", "T=4096 C=2048"),
    ("rmsnorm bf16 4096x4096", "bench/sweep/rmsnorm_bf16.fz", "R=4096 C=4096"),
    ("softmax bf16 16384x1024", "examples/softmax_bf16.fz", "B=16384 N=1024"),
    ("softmax f16 132105x127", "examples/softmax_f16.fz", "B=132105 N=127"),
    ("softmax f16 2396746x7", "examples/softmax_f16.fz", "B=2396746 N=7"),
    ("rmsnorm f32 66052x127", "examples/rmsnorm.fz", "R=66052 C=127"),
    ("logsumexp f32 2097152x7", "examples/logsumexp.fz", "B=2097152 N=7"),
    ("bcast3 f32 8x139811x7", "bench/sweep/bcast3.fz", "A=8 B=139811 C=7"),
    ("log_softmax f16 525x32000", "bench/sweep/log_softmax_f16.fz", "B=525 N=32000"),
    ("layernorm bf16 511x32768", "examples/layernorm_bf16.fz", "R=511 C=32768"),
    ("layernorm bf16 16383x1024", "examples/layernorm_bf16.fz", "R=16383 C=1024"),
    ("masked_softmax f16 4x16x8457x31", "bench/sweep/masked_softmax_f16.fz", "B=4 H=16 Q=8457 K=31"),
    ("gelu_tanh f32 8388617", "examples/gelu_tanh.fz", "N=8388617"),
    ("silu_mul bf16 11184811", "bench/sweep/silu_mul_bf16.fz", "N=11184811"),
    ("swiglu bf16 1017x11008", "bench/sweep/swiglu_bf16.fz", "T=1017 H=11008"),
    ("adam f32 2400001", "examples/adam.fz", "N=2400001"),
    # the general loops (row cache, split, stream): chunk masks, aligned column chunks inline
    ("layernorm f32 63x131072", "examples/layernorm.fz", "R=63 C=131072"),
    ("layernorm bf16 130x128256", "examples/layernorm_bf16.fz", "R=130 C=128256"),
    ("layernorm f32 166x50257", "examples/layernorm.fz", "R=166 C=50257"),
    ("softmax f32 839x10007", "examples/softmax.fz", "B=839 N=10007"),
    ("rmsnorm f32 256x32768", "examples/rmsnorm.fz", "R=256 C=32768"),
    ("layernorm f32 8x1000003", "examples/layernorm.fz", "R=8 C=1000003"),
    # the cached split in rounds (docs/performance.md, "Split rows in rounds")
    ("softmax f16 133x3000001", "examples/softmax_f16.fz", "B=133 N=3000001"),
    ("softmax f32 17x1000001", "examples/softmax.fz", "B=17 N=1000001"),
    ("softmax f32 33x500001", "examples/softmax.fz", "B=33 N=500001"),
    ("layernorm bf16 33x1000001", "examples/layernorm_bf16.fz", "R=33 C=1000001"),
    ("add_rmsnorm bf16 9x3000001", "bench/sweep/add_rmsnorm_bf16.fz", "T=9 C=3000001"),
]


def run_point(fusec, program, dims, reps, timeout):
    cmd = [fusec, "bench", os.path.join(ROOT, program), "--mode", "fused", "--json", "--reps", str(reps),
           "--warmup", "10"]
    for d in dims.split():
        cmd += ["--dim", d]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": "no JSON: " + p.stdout[-200:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fusec", action="append", default=[], help="LABEL=PATH, once per binary")
    ap.add_argument("--out", help="JSON file to write")
    ap.add_argument("--only", help="comma-separated substrings of shape labels")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--extra", action="append", default=[], help="LABEL:PROGRAM:DIMS, a shape of one's own")
    a = ap.parse_args()
    shapes = [s for s in SHAPES if not a.only or any(o in s[0] for o in a.only.split(","))]
    shapes += [tuple(e.split(":", 2)) for e in a.extra]
    if a.list:
        for s in shapes:
            print("%-36s %s --dim %s" % (s[0], s[1], " --dim ".join(s[2].split())))
        return 0
    bins = [f.split("=", 1) for f in a.fusec]
    results = []
    t0 = time.time()
    for label, program, dims in shapes:
        row = {"shape": label, "program": program, "dims": dims, "runs": {}}
        for name, path in bins:
            row["runs"][name] = run_point(path, program, dims, a.reps, a.timeout)
        results.append(row)
        cells = []
        for name, _ in bins:
            r = row["runs"][name]
            f = r.get("fused") or {}
            cells.append("%9.1f %4.0f%%" % (f["median_us"], f["pct_floor"]) if "median_us" in f else
                         "%15s" % ("error" if "error" in r else "?"))
        print("%-36s %s" % (label, "  ".join(cells)), flush=True)
        if a.out:
            with open(a.out, "w") as fh:
                json.dump({"binaries": dict(bins), "results": results}, fh, indent=1)
    for row in results:
        for name, r in row["runs"].items():
            if "error" in r:
                print("error: %s, %s: %s" % (row["shape"], name, r["error"]))
    print("# columns: %s (µs a call, %% of the floor); %.0f s" % (", ".join(n for n, _ in bins), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""bench/lab/reg_caps.py: fusec's register entries of aligned rows of halves
with their registers capped and their grids changed, for bench/cubin_lab.py.

For each point below it writes the entry fusec compiles there (`fusec
--emit=ptx --dim ...`) beside copies of it capped at 80, 72 and 64
registers (the PTX directive `.maxnreg`), compiles them with ptxas, and
writes a spec that launches every copy on two grids: the blocks its
registers let the GPU hold at once (each looping over rows, as fusec's
runtime launches it) and a block a row group (no loop: the hardware
schedules the rest as blocks end). Then, on the GPU:

  python3 bench/lab/reg_caps.py build/fusec OUTDIR
  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so python3 bench/cubin_lab.py OUTDIR/regs.json

Run on the H200 on 2026-12-01 (docs/performance.md, "Register caps and
whole grids for the aligned class": neither kept).
"""

import json
import os
import re
import subprocess
import sys

CAPS = (80, 72, 64)
SMS, REGS_SM, THREADS_SM, SMEM_SM, RESERVE = 132, 65536, 2048, 233472, 1024  # H200


def P(key, prog, entry, block, rows_a_block, smem, args, caps=CAPS):
    return dict(key=key, prog=prog, entry=entry, block=block, rpb=rows_a_block, smem=smem, args=args, caps=caps)


NORM = ["x", "w", "@out", ["f32", "eps"], "@rows", "@n"]
POINTS = [
    P("rmsnorm-bf16-131072x128", "bench/sweep/rmsnorm_bf16.fz", "reg4", [4, 32, 1], 32, 8192, NORM),
    P("rmsnorm-bf16-262144x64", "bench/sweep/rmsnorm_bf16.fz", "reg2", [4, 32, 1], 32, 8192, NORM, caps=()),
    P("rmsnorm-bf16-4096x4096", "bench/sweep/rmsnorm_bf16.fz", "reg4", [128, 1, 1], 1, 8192, NORM),
    P("modrms_row-bf16-2048x4096", "bench/sweep/modrms_row_bf16.fz", "reg4", [128, 1, 1], 1, 24576,
      ["x", "scale", "shift", "@out", ["f32", "eps"], "@rows", "@n"]),
    P("add_rmsnorm-bf16-1846x4544", "bench/sweep/add_rmsnorm_bf16.fz", "reg4", [160, 1, 1], 1, 20480,
      ["x", "r", "w", "@out", ["ws", 1846 * 4544 * 2], ["f32", "eps"], "@rows", "@n"]),
    P("layernorm-bf16-16383x1024", "examples/layernorm_bf16.fz", "reg4", [32, 4, 1], 4, 8192,
      ["x", "w", "b", "@out", ["f32", "eps"], "@rows", "@n"]),
]


def dims(prog, key):
    """--dim options for a key's shape: the program's dims in order."""
    names = re.findall(r"^in \w+: \w+\[(\w+), (\w+)\]", open(prog).read(), re.M)[0]
    return ["--dim=%s=%s" % (n, v) for n, v in zip(names, key.split("-")[-1].split("x"))]


def capped(ptx):
    """The PTX with a copy of each entry, NAME_r<cap>, for every cap."""
    out = ptx
    for m in re.finditer(r"^\.visible \.entry (\w+)\(.*?^\}\n", ptx, re.S | re.M):
        for cap in CAPS:
            out += "\n" + m.group(0).replace(m.group(1), "%s_r%d" % (m.group(1), cap)).replace(
                ".maxntid 512, 1, 1", ".maxntid 512, 1, 1\n.maxnreg %d" % cap)
    return out


def registers(ptx_path):
    """{entry: registers} as ptxas reports them."""
    err = subprocess.run(["ptxas", "-arch=sm_90", "-O3", "-v", ptx_path, "-o", "/dev/null"],
                         capture_output=True, text=True, check=True).stderr
    return dict(re.findall(r"entry function '(\w+)'.*?Used (\d+) registers", err, re.S))


def resident(regs, threads, smem):
    """Blocks the SMs hold at once (registers allocated 256 a warp)."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    per_sm = min(REGS_SM // (per_warp * warps), THREADS_SM // threads, 32, SMEM_SM // (smem + 512 + RESERVE))
    return SMS * per_sm


def write_lab(fusec, outdir, spec_name, variants, suffixes, whole_grid):
    """For each point: fusec's PTX with variants(ptx)'s copies of its entries
    (NAME<suffix>), compiled; a spec launching the entry and its copies of
    suffixes(point) on the grid their registers let the GPU hold (and, with
    whole_grid, on a block a row group too) written to OUTDIR/spec_name."""
    os.makedirs(outdir, exist_ok=True)
    spec = {"points": []}
    for p in POINTS:
        base = os.path.join(outdir, p["key"])
        ptx = subprocess.run([fusec, p["prog"], "--emit=ptx"] + dims(p["prog"], p["key"]), capture_output=True,
                             text=True, check=True).stdout
        with open(base + ".ptx", "w") as f:
            f.write(variants(ptx))
        subprocess.run(["ptxas", "-arch=sm_90", "-O3", base + ".ptx", "-o", base + ".cubin"], check=True)
        regs = {k: int(v) for k, v in registers(base + ".ptx").items()}
        rows = int(p["key"].split("-")[-1].split("x")[0])
        whole = -(-rows // p["rpb"])
        kernels = []
        for suffix in [""] + suffixes(p):
            name = next(e for e in regs if e.endswith("_k0_" + p["entry"] + suffix))
            res = min(resident(regs[name], p["block"][0] * p["block"][1], p["smem"]), whole)
            for grid, tag in ((res, "resident"), (whole, "whole")):
                if tag == "whole" and (grid == res or not whole_grid):
                    continue
                kernels.append({"name": name, "label": "%s%s %s %d, %d regs" % (p["entry"], suffix, tag, grid,
                                                                               regs[name]),
                                "grid": [grid, 1, 1], "block": p["block"], "smem": p["smem"], "args": p["args"]})
        spec["points"].append({"key": p["key"], "cubin": base + ".cubin", "kernels": kernels})
    with open(os.path.join(outdir, spec_name), "w") as f:
        json.dump(spec, f, indent=1)
    for p in spec["points"]:
        print(p["key"], "; ".join(k["label"] for k in p["kernels"]))


def main(fusec, outdir):
    write_lab(fusec, outdir, "regs.json", capped, lambda p: ["_r%d" % c for c in p["caps"]], True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    main(*sys.argv[1:])

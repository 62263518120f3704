#!/usr/bin/env python3
"""bench/lab/hints.py: fusec's register entries of aligned rows of halves
with L2 hints written into their PTX, for bench/cubin_lab.py.

For each of reg_caps.py's points it writes fusec's entry (`fusec --emit=ptx
--dim ...`) beside three copies: `_cpef`, its cp.async copies with an L2
evict_first policy (`createpolicy.fractional.L2::evict_first` once at the
entry's top, `.L2::cache_hint` on every 16-byte copy); `_stcs`, its 16-byte
stores streaming (`st.global.cs`); `_both`. Each is launched on the grid
its registers let the GPU hold at once, as the runtime launches it:

  python3 bench/lab/hints.py build/fusec OUTDIR
  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so python3 bench/cubin_lab.py OUTDIR/hints.json

Run on the H200 on 2026-12-01 (docs/performance.md, "An L2 policy on the
register path's copies": faster, blocked by ptxas).
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reg_caps as rc  # noqa: E402  (the points, their dims, registers and residency)

POLICY = "\t.reg .b64 %pol<1>;\n\tcreatepolicy.fractional.L2::evict_first.b64 %pol0, 1.0;\n"


def cpef(body):
    return re.sub(r"cp\.async\.cg\.shared\.global (\[[^\]]+\]), (\[[^\]]+\]), 16;",
                  r"cp.async.cg.shared.global.L2::cache_hint \1, \2, 16, %pol0;", body)


def stcs(body):
    return body.replace("st.global.v4.u32", "st.global.cs.v4.u32")


VARIANTS = {"_cpef": cpef, "_stcs": stcs, "_both": lambda b: stcs(cpef(b))}


def hinted(ptx):
    """The PTX with a copy of each entry, NAME<variant>, for every variant."""
    out = ptx
    for m in re.finditer(r"^\.visible \.entry (\w+)\(.*?^\}\n", ptx, re.S | re.M):
        for suffix, edit in VARIANTS.items():
            body = m.group(0).replace(m.group(1), m.group(1) + suffix)
            body = re.sub(r"(\t\.reg \.b64 \t%rd<\d+>;\n)", lambda d: d.group(1) + POLICY, body, count=1)
            out += "\n" + edit(body)
    return out


def main(fusec, outdir):
    rc.write_lab(fusec, outdir, "hints.json", hinted, lambda p: list(VARIANTS), False)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    main(*sys.argv[1:])

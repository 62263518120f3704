#!/usr/bin/env python3
"""bench/sass_counts.py: the SASS of the entries a program's sizes use, counted
by opcode, for one fusec build or two side by side. No GPU needed.

  python3 bench/sass_counts.py examples/softmax_bf16.fz --dim B=16384 --dim N=1024 \\
      [--fusec build/fusec] [--fusec ../base/build/fusec] [--top 12]

Each fusec writes the CUDA C of the entries those sizes take (`fusec FILE
--dim ...`, what the runtime compiles); libnvrtc compiles it to an sm_90
cubin with the runtime's options (bench/nvrtc_options.py's BASE), and
cuobjdump disassembles it. Printed per entry: its instructions (static: in
the code, not executed; predicated ones counted as their opcode) and the
opcodes that take most, each build's count side by side. A change meant to
save instructions an element shows here before any GPU time is spent on it
(docs/performance.md, "Casts rounded at the store").

cuobjdump: --cuobjdump, else $CUOBJDUMP, else on PATH, else the one Triton
ships (triton/backends/nvidia/bin), which pip can fetch where the CUDA
toolkit lacks it.
"""

import argparse
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import nvrtc_options  # noqa: E402  (libnvrtc and the runtime's options)

FUNCTION = re.compile(r"^\s*Function : (\S+)")
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)")


def parse_sass(text):
    """{function: Counter(opcode: instructions)} of cuobjdump -sass output; an
    opcode without its modifiers (LDG.E.128 is LDG), predicates dropped."""
    counts, fn = {}, None
    for line in text.splitlines():
        m = FUNCTION.match(line)
        if m:
            fn = m.group(1)
            counts[fn] = collections.Counter()
            continue
        m = INSTRUCTION.match(line)
        if m and fn is not None:
            counts[fn][m.group(1)] += 1
    return counts


def find_cuobjdump(given):
    for c in (given, os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump")):
        if c and os.access(c, os.X_OK):
            return c
    spec = importlib.util.find_spec("triton")
    if spec and spec.submodule_search_locations:
        c = os.path.join(spec.submodule_search_locations[0], "backends", "nvidia", "bin", "cuobjdump")
        if os.access(c, os.X_OK):
            return c
    sys.exit("sass_counts: no cuobjdump (--cuobjdump, $CUOBJDUMP, PATH, or Triton's)")


def counts_of(fusec, program, dims, lib, cuobjdump):
    cmd = [fusec, program] + [x for d in dims for x in ("--dim", d)]
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        sys.exit("sass_counts: %s: %s" % (" ".join(cmd), p.stderr.decode(errors="replace").strip()))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(nvrtc_options.compile_program(lib, p.stdout, nvrtc_options.BASE, cubin=True)[1])
        f.flush()
        out = subprocess.run([cuobjdump, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    return parse_sass(out)


def report(builds, top):
    """Lines: per entry, each build's total, then the opcodes that take most."""
    names, lines = list(builds), []
    for fn in sorted(set().union(*(c.keys() for c in builds.values()))):
        per = [builds[b].get(fn, collections.Counter()) for b in names]
        lines.append("%-40s %s" % (fn, "  ".join("%s %d" % (b, sum(c.values())) for b, c in zip(names, per))))
        ops = collections.Counter()
        for c in per:
            ops |= c
        for op, _ in ops.most_common(top):
            lines.append("    %-12s %s" % (op, "  ".join("%6d" % c[op] for c in per)))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("program")
    ap.add_argument("--dim", action="append", default=[], help="NAME=SIZE, as fusec takes it")
    ap.add_argument("--fusec", action="append", help="a fusec binary (twice to compare; default build/fusec)")
    ap.add_argument("--cuobjdump")
    ap.add_argument("--top", type=int, default=12, help="opcodes shown an entry")
    a = ap.parse_args()
    fusecs = a.fusec or [os.path.join(ROOT, "build", "fusec")]
    lib, cuobjdump = nvrtc_options.load_nvrtc(), find_cuobjdump(a.cuobjdump)
    builds = collections.OrderedDict()
    for i, f in enumerate(fusecs):
        builds["%s:%s" % (chr(ord("a") + i), f)] = counts_of(f, a.program, a.dim, lib, cuobjdump)
    for i, b in enumerate(builds):
        print("# %s = %s" % (chr(ord("a") + i), b.split(":", 1)[1]))
    short = collections.OrderedDict((b.split(":", 1)[0], c) for b, c in builds.items())
    print("\n".join(report(short, a.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

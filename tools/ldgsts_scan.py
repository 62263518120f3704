#!/usr/bin/env python3
"""tools/ldgsts_scan.py: look for ptxas 13.0's unset cp.async descriptors in
the cubins NVRTC makes of fusec's kernels.

cp.async with an L2 policy (`.L2::cache_hint`) becomes an LDGSTS whose
`desc[URn]` names the uniform register pair holding the policy. ptxas 13.0
gave some of them a pair it never wrote (seen as an odd register,
`desc[UR1]`, where the shared address is split into a register and a
uniform register), which the H200 ran as an illegal instruction. This
compiles every entry of each program given (`fusec PROG`: all entries),
with the runtime's NVRTC options, to a cubin, disassembles it with
nvdisasm, and reports every LDGSTS with a descriptor whose register is odd
or not written before it in its function.

  python3 tools/ldgsts_scan.py --fusec build/fusec --nvdisasm PATH [--arch sm_90] PROG.fz|K.cubin ...

A .cubin is disassembled as it is (bench/lab/hints.py's, which ptxas made).
fusec emits no such copy today: this is the check to run on the change
that adds one (docs/performance.md, "An L2 policy on the register path's
copies"), with the NVRTC it will ship with.

nvdisasm comes with a full CUDA toolkit, or from PyPI (nvidia-cuda-nvdisasm).
Exit status 1 where any is found.
"""

import argparse
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile

OPTIONS = ["-std=c++17", "--fmad=false", "-default-device", "--minimal"]  # runtime/nvrtc.c


def cubin(nvrtc, source, arch):
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"k.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram")
    opts = [o.encode() for o in ["--gpu-architecture=" + arch] + OPTIONS]
    if nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)):
        raise RuntimeError("NVRTC failed")
    n = ctypes.c_size_t()
    nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    nvrtc.nvrtcGetCUBIN(prog, buf)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.raw


def bad_descriptors(sass):
    """(function, line) of each LDGSTS whose descriptor register is odd or
    not written earlier in its function."""
    bad, fn, written = [], "?", set()
    for line in sass.splitlines():
        m = re.match(r"\s*\.text\.(\S+):", line)
        if m:
            fn, written = m.group(1), set()
            continue
        m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?(\S+)\s+(.*?);", line)
        if not m:
            continue
        op, args = m.group(1), m.group(2)
        if op.startswith("LDGSTS"):
            d = re.search(r"desc\[UR(\d+)\]", args)
            if d and (int(d.group(1)) % 2 or int(d.group(1)) not in written):
                bad.append((fn, line.strip()))
        dest = re.match(r"UR(\d+)\b", args)  # uniform ops and S2UR/R2UR write their first operand
        if dest and (op.startswith("U") or op in ("S2UR", "R2UR")):
            written.add(int(dest.group(1)))
    return bad


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fusec", required=True)
    ap.add_argument("--nvdisasm", required=True)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("programs", nargs="+")
    a = ap.parse_args(argv)
    nvrtc = ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))[-1])
    found, entries = 0, 0
    with tempfile.TemporaryDirectory() as d:
        for prog in a.programs:
            path = prog
            if not prog.endswith(".cubin"):
                src = subprocess.run([a.fusec, prog], capture_output=True, check=True).stdout
                path = os.path.join(d, "k.cubin")
                with open(path, "wb") as f:
                    f.write(cubin(nvrtc, src, a.arch))
            sass = subprocess.run([a.nvdisasm, path], capture_output=True, text=True, check=True).stdout
            entries += sass.count("\t.section\t.text.")
            for fn, line in bad_descriptors(sass):
                found += 1
                print("%s: %s: %s" % (prog, fn, line))
    print("%d programs, %d functions, %d LDGSTS with an unset descriptor" % (len(a.programs), entries, found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

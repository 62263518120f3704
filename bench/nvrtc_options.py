#!/usr/bin/env python3
"""bench/nvrtc_options.py: what NVRTC takes to compile the entries a program's
sizes use, under the runtime's options and variants of them, on this CPU.

  python3 bench/nvrtc_options.py examples/softmax.fz --dim B=4096 --dim N=4096 [--reps 6]

fusec (`--fusec`, default build/fusec) writes the CUDA C of the entries those
sizes take (`fusec FILE --dim ...`, what the runtime compiles); each variant
compiles it to an sm_90 cubin through libnvrtc (ctypes), the variants
interleaved, and the best of --reps is printed. An empty program is timed
too: NVRTC's own cost, whatever the code. No GPU needed (docs/python.md,
"The first call").
"""

import argparse
import ctypes
import ctypes.util
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The runtime's options (runtime/nvrtc.c), then the variants tried.
BASE = ["--gpu-architecture=sm_90", "-std=c++17", "--fmad=false", "-default-device", "--minimal"]
VARIANTS = {
    "runtime": [],
    "-Ofc=min": ["-Ofc=min"],
    "-Ofc=mid": ["-Ofc=mid"],
    "ptxas -O0": ["-Xptxas", "-O0"],
}


def load_nvrtc():
    for name in ("/usr/local/cuda/lib64/libnvrtc.so", ctypes.util.find_library("nvrtc")):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                pass
    sys.exit("nvrtc_options: libnvrtc not found (the CUDA toolkit's lib64, or the loader's path)")


def compile_program(lib, src, opts, cubin=False):
    """Compile src under opts: (ms the compile took, the cubin's bytes where
    cubin, else None). Exits with NVRTC's log where it fails."""
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"fusec.cu", 0, None, None) != 0:
        sys.exit("nvrtc_options: nvrtcCreateProgram failed")
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t = time.perf_counter()
    r = lib.nvrtcCompileProgram(prog, len(opts), arr)
    ms = (time.perf_counter() - t) * 1e3
    if r != 0:
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        sys.exit("nvrtc_options: %s failed:\n%s" % (" ".join(opts), log.value.decode(errors="replace")[:2000]))
    image = None
    if cubin:
        n = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetCUBIN(prog, buf)
        image = buf.raw
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ms, image


def compile_ms(lib, src, opts):
    return compile_program(lib, src, opts)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("program")
    ap.add_argument("--dim", action="append", default=[], help="NAME=SIZE, as fusec takes it")
    ap.add_argument("--fusec", default=os.path.join(ROOT, "build", "fusec"))
    ap.add_argument("--reps", type=int, default=6)
    a = ap.parse_args()
    cmd = [a.fusec, a.program] + [x for d in a.dim for x in ("--dim", d)]
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        sys.exit("nvrtc_options: %s: %s" % (" ".join(cmd), p.stderr.decode(errors="replace").strip()))
    lib = load_nvrtc()
    sources = {"the entries": p.stdout, "an empty program": b""}
    best = {}
    for _ in range(a.reps):
        for what, src in sources.items():
            for name, extra in VARIANTS.items():
                ms = compile_ms(lib, src, BASE + extra)
                best[(what, name)] = min(best.get((what, name), ms), ms)
    print("# %s, best of %d, ms to an sm_90 cubin" % (" ".join(cmd[1:]), a.reps))
    for (what, name), ms in best.items():
        print("%-18s %-10s %7.1f" % (what, name, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())

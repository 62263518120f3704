#!/usr/bin/env python3
"""bench/cubin_lab.py: hand-written kernels beside fusec and torch.compile,
timed as the sweep times, to try a kernel design before writing it into the
code generator.

  nvcc -cubin -arch=sm_90 -O3 -std=c++17 bench/lab/short_rows.cu -o build/short_rows.cubin
  PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \\
      python3 bench/cubin_lab.py --cubin build/short_rows.cubin bench/lab/short_rows.json

The spec (JSON) names points, each a sweep key or a row family's shape the
plan lacks (bench/sweep.py's point_of_key), and the kernels to run there:

  {"points": [{"key": "softmax-f32-645278x13",
               "kernels": [{"name": "sm_f32_16", "rows_per_block": 256, "block": [256, 1, 1],
                            "smem": 16384, "args": ["x", "@out", "@null", "@null", ["f32", 0],
                                                    "@rows", ["i32", "@n"]]}]}]}

A kernel's grid is its point's rows over rows_per_block (or "grid": [x, y,
z]); "label" names it in the output (its entry's name where absent); its
arguments are the point's inputs by name, "@out" (an output shaped as the
family's first output, of the first input's dtype), "@null", "@rows"
and "@n" (the row count and width, 64-bit), ["ws", bytes] (a workspace:
zeroed once, before the kernel's first launch, never again), ["wsz", bytes]
(one zeroed before every launch, as the runtime zeroes split rows'
counters), or [type, value] with type i32, i64 or f32 and value a number,
an input's name (a scalar) or "@rows"/"@n".
A point's "cubin" (a path) names the module its kernels are in, where it is
not --cubin's (entries of several programs, whose helpers share names).
Each point prints torch.compile's, fusec's and each kernel's µs a call
(three replays of the sweep's CUDA graph over input copies:
run.graph_over_copies) and its largest difference from the family's
function in float64. The spec, the cubin and the keys are checked before
torch is imported.
"""

import argparse
import ctypes
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402  (the sweep's CUDA-graph replay)
import sweep  # noqa: E402  (the points, their inputs and functions)

CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float}


def fail(msg):
    sys.exit("cubin_lab: " + msg)


def load_spec(path):
    """The spec and its points, or an exit naming what is wrong."""
    try:
        with open(path) as f:
            spec = json.load(f)
        items = spec["points"]
        for item in items:
            for k in item["kernels"]:
                missing = [f for f in ("name", "block", "args") if f not in k]
                if "grid" not in k and "rows_per_block" not in k:
                    missing.append("grid or rows_per_block")
                if missing:
                    raise KeyError("kernel %s lacks %s" % (k.get("name", "?"), ", ".join(missing)))
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail("%s: not a spec (%s: %s)" % (path, type(e).__name__, e))
    return spec, sweep.known_points("cubin_lab", [item["key"] for item in items])


class Module:
    """A cubin loaded by the driver, in torch's context."""

    def __init__(self, torch, path):
        self.torch, self.cu = torch, ctypes.CDLL("libcuda.so.1")
        torch.zeros(1, device="cuda")  # the primary context, current
        self.m, self.f, self.smem = ctypes.c_void_p(), {}, {}
        self.check(self.cu.cuModuleLoad(ctypes.byref(self.m), path.encode()), "cuModuleLoad " + path)

    def check(self, r, what):
        if r != 0:
            raise RuntimeError("%s: CUresult %d" % (what, r))

    def func(self, name, smem):
        if name not in self.f:
            f, static = ctypes.c_void_p(), ctypes.c_int()
            self.check(self.cu.cuModuleGetFunction(ctypes.byref(f), self.m, name.encode()), name)
            # CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: the 48 KiB a block gets
            # without opting in counts the kernel's static shared memory too
            self.check(self.cu.cuFuncGetAttribute(ctypes.byref(static), 1, f), name + ": static shared memory")
            self.f[name], self.smem[name] = f, 48 * 1024 - static.value
        if smem > self.smem[name]:  # a point of the spec may ask more than an earlier one did
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.cu.cuFuncSetAttribute(self.f[name], 8, ctypes.c_int(smem)), name + ": shared memory")
            self.smem[name] = smem
        return self.f[name]

    def launch(self, name, grid, block, smem, values):
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
        stream = ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream)
        self.check(self.cu.cuLaunchKernel(self.func(name, smem), *grid, *block, smem, stream, params, None), name)


def label(k):
    """What kernel k's lines are called: its label, else its entry's name
    (one entry launched several ways needs labels to tell them apart)."""
    return k.get("label", k["name"])


def kernel_fn(torch, mod, k, p, out_shape):
    """fn(**inputs) launching kernel k at point p, returning its output."""
    rows, n = p["rows"], p["width"]
    grid = k.get("grid") or [-(-rows // k["rows_per_block"]), 1, 1]
    special = {"@rows": rows, "@n": n}
    # (allocated here, not in fn: fn is captured into a CUDA graph)
    ws = [torch.zeros(a[1], dtype=torch.uint8, device="cuda") if isinstance(a, list) and a[0] in ("ws", "wsz")
          else None for a in k["args"]]

    def fn(**kw):
        first = next(v for v in kw.values() if torch.is_tensor(v))
        out = torch.empty(out_shape, dtype=first.dtype, device=first.device)
        values = []
        for a, w in zip(k["args"], ws):
            if w is not None:
                if a[0] == "wsz":
                    w.zero_()
                values.append(ctypes.c_void_p(w.data_ptr()))
            elif a == "@out":
                values.append(ctypes.c_void_p(out.data_ptr()))
            elif a == "@null":
                values.append(ctypes.c_void_p(0))
            elif isinstance(a, list):  # (before the lookups below: a list is no key)
                v = special.get(a[1], kw.get(a[1], a[1])) if isinstance(a[1], str) else a[1]
                values.append(CTYPES[a[0]](v))
            elif a in special:
                values.append(ctypes.c_int64(special[a]))
            elif isinstance(a, str):
                values.append(ctypes.c_void_p(kw[a].data_ptr()))
            else:
                values.append(ctypes.c_int64(a))
        mod.launch(k["name"], grid, k["block"], k.get("smem", 0), values)
        return out

    return fn


def timed(torch, fn, inputs, ref, key, label):
    got = fn(**inputs)
    got = got[0] if isinstance(got, tuple) else got
    torch.cuda.synchronize()
    err = (got.double() - ref).abs().max().item()
    g, sets = run.graph_over_copies(torch, fn, inputs)
    us = [run.replay_us(torch, g, len(sets), 0.15) for _ in range(3)]
    del g, sets
    print("%-32s %-22s %7.1f %7.1f %7.1f  max err %.1e" % (key, label, *us, err), flush=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cubin", help="the kernels, compiled for this GPU (unless a point names its own)")
    ap.add_argument("spec", help="the points and kernels (JSON)")
    a = ap.parse_args(argv)
    spec, points = load_spec(a.spec)
    cubins = [item.get("cubin", a.cubin) for item in spec["points"]]
    for c in cubins:
        if not c or not os.path.isfile(c):
            fail("%s: no such cubin" % c if c else "a point without a cubin, and no --cubin")
    import torch
    import torch.nn.functional as F_
    import fusec

    mods = {}
    fns = sweep.torch_programs(torch, F_)
    for item, p, c in zip(spec["points"], points, cubins):
        if c not in mods:
            mods[c] = Module(torch, os.path.abspath(c))
        mod = mods[c]
        inputs, prog, comp = sweep.compiled_point(torch, fusec, fns, p)
        comp(**inputs)  # torch.compile first, on the default stream, as the sweep
        torch.cuda.synchronize()
        ref = fns[sweep.family(p["family"], p["dtype"])["torch"]](
            **{k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in inputs.items()})
        ref = ref[0] if isinstance(ref, tuple) else ref
        timed(torch, comp, inputs, ref, p["key"], "torch.compile")
        timed(torch, prog, inputs, ref, p["key"], "fusec")
        for k in item["kernels"]:
            timed(torch, kernel_fn(torch, mod, k, p, ref.shape), inputs, ref, p["key"], label(k))
        del inputs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])

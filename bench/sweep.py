#!/usr/bin/env python3
"""bench/sweep.py: the shape sweep, fusec next to torch.compile and the floor.

Families of programs (softmax, log-softmax, layernorm, rmsnorm in three
dtypes, a masked rank-4 softmax, a rank-3 broadcast, logsumexp, heavy
pointwise math, an optimizer step and the LLM blocks of issue 10) run over
grids of row widths: tiny (1 to 31), odd and prime, powers of two up to
2^17, vocabulary-like and rows of a million or more. Each point's row count
is the smallest that makes it move at least 64 MiB (its minimum bytes: every
input read once, every output written once), so that every large point is a
bandwidth measurement; a separate small set of launch-bound shapes measures
the time per call. For every point, in one process on one GPU:

  fusec          the program called from Python through the package on the
                 same inputs as torch.compile, timed by the same harness
                 (run.Ctx.device_us, below): the figure the comparison uses
  fusec bench    `fusec bench --json` (fused; per-op too, as a check), one
                 process per point (it binds one set of dims), all sharing
                 the run's kernel cache; CUDA events around each call, which
                 adds the launch's latency to every call (1 to 3 us on the
                 H200: a tenth of a 64 MiB point), so it is shown beside the
                 comparison, not in it
  torch.compile  torch.compile(fn, dynamic=False) after torch._dynamo.reset(),
                 timed as device time: its calls over input copies past
                 4x the L2 replayed from a CUDA graph (run.Ctx.device_us)
  floor          the minimum bytes over the device-to-device copy bandwidth
                 that torch measures at the start and the end of the run

No point reports a fast wrong answer unnoticed: torch.compile's outputs and
fusec's (from Python) are compared at every point with the same function run
in float64 (rounded to the storage dtype); fusec's
fused outputs with its per-op outputs at every point (what `fusec bench`
compares); and at a few points of every family (the narrowest, the first odd
one, the widest, every launch-bound one) `fusec run` on the torch inputs,
written as .npy, with the float64 reference. A failed check is an error of
the point, listed by the report.

The sweep is about 150 points: torch.compile compiles each shape (about a
second), so the whole fits in two 10-minute GPU calls, one per half
(--part 1/2, --part 2/2: every other point of the plan, so both halves see
every family). --budget stops cleanly before a point that would not fit and
writes what was measured; the JSON is rewritten after every point, so even a
run killed from outside leaves its results. bench/sweep_report.py merges the
halves and writes the table and the plot.

Needs python3 with torch, triton and numpy (the GPU machine); --dry-run
prints the plan and needs none of them.

  python3 bench/sweep.py --fusec build/fusec --out sweep.json --part 1/2
  python3 bench/sweep.py --quick --out quick.json
  python3 bench/sweep.py --dry-run [--part 2/2] [--only softmax,rmsnorm]
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402  (the suite: its copy bandwidth, timing and checks)

ROOT = run.ROOT
Mi = run.Mi

# Every large point moves at least this many bytes (its minimum bytes).
TARGET_BYTES = 64 * Mi
# fusec run checks a point at its width with at most this many elements
# (fewer rows; a pointwise vector is shortened, its residue kept).
CHECK_ELEMS = 1 << 21

DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}

# fusec's fused outputs against its per-op outputs: per-op stores every
# intermediate in the storage dtype, so in f16 and bf16 it is allowed twice
# the suite's error to float64.
PER_OP_TOLERANCE = {dt: (2 if dt in ("f16", "bf16") else 1) * tol for dt, tol in run.TOLERANCE.items()}

# Values of the scalar inputs, by name (fusec bench draws its own).
SCALARS = {"eps": 1e-5, "alpha": 0.5}

# ---- the widths ----------------------------------------------------------------------
#
# The classes: tiny, odd and prime, powers of two up to 2^17,
# vocabularies (32000 Llama 2, 50257 GPT-2, 128256 Llama 3, 151936 Qwen 2)
# and rows of a million or more. f32 softmax and layernorm take nearly all;
# the other families a subset, so that the whole stays near 150 points.

TINY = [1, 7, 31]
ODD = [127, 1001, 3001, 4099, 10007]
POW2 = [32, 256, 1024, 4096, 16384, 131072]
# Short rows of a multiple of the chunk (16 bytes): the register path with one
# to four threads a row, not the staged tiles of the odd ones; an attention
# head's 64 or 128 (a per-head RMSNorm). Timed on the H200 beside
# torch.compile before they joined the plan (2026-11-29): softmax f32
# 524288x16 1.57x, f16 1048576x16 1.74x, rmsnorm bf16 262144x64 1.37x.
SHORT_POW2 = [8, 16, 64]
LONG = [1000003, 4194304, 10000019]
# One short of a power of two elements: a row that does not start on a 16-byte
# boundary takes one chunk more than its length, and a group of threads of a
# power of two doubles there (launch_rules.c's tile_rules). Timed on the H200 beside
# torch.compile before they joined the plan (2026-11-30): logsumexp f32
# 65536x255 2.07x, layernorm f32 2.15x, bf16 65536x511 2.72x, softmax f16
# 1.75x, f32 x255 1.56x.
SHIFT = [255, 511]


def rows2(d0, d1):
    """dims(width, rows) of a program over [rows, width] named d0, d1."""
    return lambda w, r: {d0: r, d1: w}


def split3(d0, d1, d2, lead):
    """[lead, ceil(rows / lead), width]."""
    return lambda w, r: {d0: lead, d1: -(-r // lead), d2: w}


def flat(d):
    """A pointwise program over [width]: the rows do not apply."""
    f = lambda w, r: {d: w}  # noqa: E731
    f.pointwise = True
    return f


def masked_dims(w, r):
    """Scores [B=4, H=16, Q, K=width]."""
    return {"B": 4, "H": 16, "Q": -(-r // 64), "K": w}


# f16 row sums of exponentials (each at most 1) overflow f16 past 65504
# elements a row where a plan stores them: fusec's per-op plan and the torch
# function do (f16 `e.sum()`), fusec's fused kernel keeps the sum in f32, as
# the language says. Above that width the two are not compared with float64
# or with the fused outputs; fusec run's check against float64 stays.
F16_SUM_OVERFLOW = (65504, "f16 row sums overflow past 65504 elements where stored (per-op, torch)")


def F(family, dtype, program, torch_fn, dims, widths, outs, ranges=None, scalars=None, nan_in_bench=None,
      overflow=None):
    """A family in one dtype. program: path from the root; torch_fn: a name
    of torch_programs(); dims(width, rows) -> the bound dims; outs: each
    output's shape (dim names or integers), of the family's dtype; ranges:
    {input: (lo, hi)} where uniform [-2, 2) is wrong; scalars: {name: value}
    over SCALARS; nan_in_bench: why fusec bench's own random inputs give NaN
    (its fused/per-op check is then skipped; the fusec run check, on the
    right inputs, stays); overflow: (width, why) past which the per-op and
    torch outputs overflow where the fused ones do not (F16_SUM_OVERFLOW)."""
    return {"family": family, "dtype": dtype, "program": program, "torch": torch_fn, "dims": dims,
            "widths": widths, "outs": outs, "ranges": ranges or {}, "scalars": dict(SCALARS, **(scalars or {})),
            "nan_in_bench": nan_in_bench, "overflow": overflow,
            "pointwise": getattr(dims, "pointwise", False)}


FAMILIES = [
    F("softmax", "f32", "examples/softmax.fz", "softmax", rows2("B", "N"),
      TINY + ODD + POW2 + SHORT_POW2 + SHIFT[:1] + [50257, 151936] + LONG,
      [["B", "N"]]),
    F("softmax", "f16", "examples/softmax_f16.fz", "softmax", rows2("B", "N"),
      [7, 127, 1001, 4099, 16, 64, SHIFT[1], 4096, 32768, 50257, 1000003], [["B", "N"]],
      overflow=F16_SUM_OVERFLOW),
    F("softmax", "bf16", "examples/softmax_bf16.fz", "softmax", rows2("B", "N"),
      [31, 3001, 10007, 1024, 131072, 151936, 4194304], [["B", "N"]]),
    F("log_softmax", "f32", "examples/log_softmax.fz", "log_softmax", rows2("B", "N"),
      [7, 1001, 4096, 32768, 50257, 128256, 1000003], [["B", "N"]]),
    F("log_softmax", "f16", "bench/sweep/log_softmax_f16.fz", "log_softmax", rows2("B", "N"),
      [127, 4099, 32000], [["B", "N"]], overflow=F16_SUM_OVERFLOW),
    F("log_softmax", "bf16", "bench/sweep/log_softmax_bf16.fz", "log_softmax", rows2("B", "N"),
      [31, 3001, 50257, 151936], [["B", "N"]]),
    F("layernorm", "f32", "examples/layernorm.fz", "layernorm", rows2("R", "C"),
      TINY + ODD + POW2[1:] + SHIFT[:1] + [50257, 1000003], [["R", "C"]]),
    F("layernorm", "f16", "examples/layernorm_f16.fz", "layernorm", rows2("R", "C"),
      [31, 127, 1001, 3001, 4099, 4096, 16384, 50257], [["R", "C"]]),
    F("layernorm", "bf16", "examples/layernorm_bf16.fz", "layernorm", rows2("R", "C"),
      [7, 1001, 3001, 10007, 1024, 4096, SHIFT[1], 32768, 128256], [["R", "C"]]),
    F("rmsnorm", "f32", "examples/rmsnorm.fz", "rmsnorm", rows2("R", "C"),
      [7, 127, 3001, 4099, 4096, 32768, 151936, 1000003], [["R", "C"]]),
    F("rmsnorm", "f16", "bench/sweep/rmsnorm_f16.fz", "rmsnorm", rows2("R", "C"),
      [31, 1001, 4096, 10007], [["R", "C"]]),
    F("rmsnorm", "bf16", "bench/sweep/rmsnorm_bf16.fz", "rmsnorm", rows2("R", "C"),
      [7, 127, 1001, 4099, 64, 128, 4096, 16384, 50257, 4194304], [["R", "C"]]),
    F("masked_softmax", "f16", "bench/sweep/masked_softmax_f16.fz", "masked_softmax", masked_dims,
      [31, 127, 1000, 1024, 4099], [["B", "H", "Q", "K"]], overflow=F16_SUM_OVERFLOW),
    F("bcast3", "f32", "bench/sweep/bcast3.fz", "bcast3", split3("A", "B", "C", 8),
      [7, 1001, 4096, 32768], [["A", "B", "C"]]),
    F("logsumexp", "f32", "examples/logsumexp.fz", "logsumexp", rows2("B", "N"),
      [7, SHIFT[0], 1001, 4096, 50257, 1000003], [["B", 1]]),
    F("gelu_tanh", "f32", "examples/gelu_tanh.fz", "gelu_tanh", flat("N"),
      [8 * Mi + 9, 16 * Mi, 64 * Mi, 100000007], [["N"]]),
    F("silu_mul", "bf16", "bench/sweep/silu_mul_bf16.fz", "silu_mul", flat("N"),
      [11184811, 16 * Mi, 64 * Mi + 3], [["N"]]),
    F("adam", "f32", "examples/adam.fz", "adam", flat("N"),
      [2400001, 4 * Mi, 16 * Mi + 3], [["N"], ["N"], ["N"]], ranges={"v": (0.0, 1.0)},
      scalars={"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "bc1": 0.1, "bc2": 0.001},
      nan_in_bench="fusec bench draws v in [-2, 2); sqrt(v2) of a negative v2 is NaN"),
    F("dyt", "bf16", "bench/sweep/dyt_bf16.fz", "dyt", rows2("T", "C"),
      [896, 1001, 3584, 4096, 7168], [["T", "C"]]),
    F("add_rmsnorm", "bf16", "bench/sweep/add_rmsnorm_bf16.fz", "add_rmsnorm", rows2("T", "C"),
      [2048, 4544, 5120, 8192], [["T", "C"], ["T", "C"]]),
    F("modrms_row", "bf16", "bench/sweep/modrms_row_bf16.fz", "modrms", rows2("T", "C"),
      [2048, 3584, 4096], [["T", "C"]]),
    F("modrms_batch", "bf16", "bench/sweep/modrms_batch_bf16.fz", "modrms", split3("B", "T", "C", 8),
      [1152, 3072, 4096], [["B", "T", "C"]]),
    F("silu", "bf16", "bench/sweep/silu_bf16.fz", "silu", rows2("T", "H"),
      [8192, 11008, 14336], [["T", "H"]]),
    F("gelu", "bf16", "bench/sweep/gelu_bf16.fz", "gelu", rows2("T", "H"),
      [3072, 10240, 14336], [["T", "H"]]),
    F("swiglu", "bf16", "bench/sweep/swiglu_bf16.fz", "swiglu", rows2("T", "H"),
      [11008, 14336, 18944, 28672], [["T", "H"]]),
]

# The launch-bound set: (family, dtype, dims), small shapes of inference
# (one token of decode, one head's attention row) and the suite's own.
LAUNCH_BOUND = [
    ("softmax", "f32", {"B": 8, "N": 1024}),
    ("softmax", "f32", {"B": 1, "N": 7}),
    ("logsumexp", "f32", {"B": 8, "N": 1000}),
    ("layernorm", "bf16", {"R": 1, "C": 4096}),
    ("rmsnorm", "bf16", {"R": 1, "C": 4096}),
    ("add_rmsnorm", "bf16", {"T": 1, "C": 4096}),
    ("masked_softmax", "f16", {"B": 1, "H": 8, "Q": 1, "K": 128}),
    ("gelu_tanh", "f32", {"N": 4096}),
    ("adam", "f32", {"N": 4096}),
    ("swiglu", "bf16", {"T": 1, "H": 11008}),
]

# --quick: a handful of points, one of each kind: (family, dtype, width, launch-bound).
QUICK = [("softmax", "f32", 4099, False), ("layernorm", "bf16", 1001, False),
         ("masked_softmax", "f16", 1024, False), ("gelu_tanh", "f32", 8 * Mi + 9, False),
         ("adam", "f32", 2400001, False), ("add_rmsnorm", "bf16", 4544, False),
         ("softmax", "f32", 1024, True)]

# ---- the plan -----------------------------------------------------------------------------


def family(name, dtype):
    for f in FAMILIES:
        if f["family"] == name and f["dtype"] == dtype:
            return f
    raise KeyError("no family %s %s" % (name, dtype))


def numel(dims, bound):
    n = 1
    for d in dims:
        n *= d if isinstance(d, int) else (int(d) if d.isdigit() else bound[d])
    return n


def min_bytes(fam, bound):
    """Every input read once, every output written once (scalars are free)."""
    decl = run.parse_inputs(os.path.join(ROOT, fam["program"]))
    total = sum(numel(d, bound) * DTYPE_BYTES[dt] for _, dt, d in decl if d is not None)
    return total + sum(numel(o, bound) * DTYPE_BYTES[fam["dtype"]] for o in fam["outs"])


def rows_for(fam, width):
    """The fewest rows that make the point move TARGET_BYTES."""
    if fam["pointwise"]:
        return 1
    lo, hi = 1, 1
    while min_bytes(fam, fam["dims"](width, hi)) < TARGET_BYTES:
        lo, hi = hi + 1, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if min_bytes(fam, fam["dims"](width, mid)) >= TARGET_BYTES:
            hi = mid
        else:
            lo = mid + 1
    return hi


def first_rows(fam, bound):
    """A point's row count: its first input's elements over its width."""
    decl = run.parse_inputs(os.path.join(ROOT, fam["program"]))
    shape = next(d for _, _, d in decl if d is not None)
    return numel(shape[:-1], bound)


def point(fam, bound, width, launch_bound):
    shape = "x".join(str(v) for v in bound.values())  # in the program's order (the JSON sorts dims)
    key = "%s%s-%s-%s" % ("lb-" if launch_bound else "", fam["family"], fam["dtype"], shape)
    return {"key": key, "family": fam["family"], "dtype": fam["dtype"], "program": fam["program"],
            "dims": bound, "shape": shape, "width": width, "rows": first_rows(fam, bound),
            "launch_bound": launch_bound, "min_bytes": min_bytes(fam, bound), "check": launch_bound}


def check_dims(fam, p):
    """The point's dims for the fusec run check: its width, fewer rows
    (the launch-bound points are small: their own dims)."""
    if p["launch_bound"]:
        return dict(p["dims"])
    if fam["pointwise"]:
        w = p["width"]
        return fam["dims"](w if w <= CHECK_ELEMS else CHECK_ELEMS + w % 4096, 1)
    return fam["dims"](p["width"], max(1, min(p["rows"], CHECK_ELEMS // p["width"])))


def mark_checks(points):
    """fusec run checks at a few widths of every family: the narrowest, the
    first odd one from 100 up, the widest."""
    for fam in FAMILIES:
        ps = [p for p in points if (p["family"], p["dtype"]) == (fam["family"], fam["dtype"])
              and not p["launch_bound"]]
        if not ps:
            continue
        by_width = sorted(ps, key=lambda p: p["width"])
        odd = [p for p in by_width if p["width"] % 2 == 1 and p["width"] >= 100]
        for p in [by_width[0], by_width[-1]] + odd[:1]:
            p["check"] = True


def plan():
    """Every point of the sweep, in the order it runs (by family)."""
    points = []
    for fam in FAMILIES:
        for w in fam["widths"]:
            points.append(point(fam, fam["dims"](w, rows_for(fam, w)), w, False))
    for name, dtype, bound in LAUNCH_BOUND:
        fam = family(name, dtype)
        points.append(point(fam, dict(bound), list(bound.values())[-1], True))
    mark_checks(points)
    for i, p in enumerate(points):
        p["index"] = i
    return points


def parse_part(s):
    try:
        k, m = (int(v) for v in s.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("--part wants N/M, e.g. 1/2, not '%s'" % s)
    if not 1 <= k <= m:
        raise argparse.ArgumentTypeError("--part %s: N must be 1 to M" % s)
    return k, m


def select(points, args):
    """--quick (its points all checked), --only, then --part (every M-th
    point from the N-th)."""
    if args.quick:
        points = [dict(p, check=True) for p in points
                  if (p["family"], p["dtype"], p["width"], p["launch_bound"]) in QUICK]
    if args.only:
        subs = args.only.split(",")
        keyed = {p["key"]: p for p in points}
        # an entry that matches no point but names a shape of a family of
        # rows (point_of_key: `softmax-f32-262144x32`) adds that shape
        extra = [point_of_key(s, keyed) for s in subs if not any(s in k for k in keyed)]
        points = [p for p in points if any(s in p["key"] for s in subs)] + [p for p in extra if p]
    k, m = args.part
    return [p for i, p in enumerate(points) if i % m == k - 1]


# ---- the torch programs --------------------------------------------------------------------

def point_of_key(key, points=None):
    """The point a key names: the plan's, or, for a family of rows, any
    shape written as the plan writes it (`softmax-f32-645278x13`: rows x
    width; `masked_softmax-f16-4x16x1024x96`: its dims in the program's
    order, the last the width), so that the tools time shapes the plan
    lacks. None if neither."""
    points = points if points is not None else {p["key"]: p for p in plan()}
    if key in points:
        return points[key]
    try:
        name, dtype, shape = key.rsplit("-", 2)
        dims = [int(v) for v in shape.split("x")]
        fam = family(name, dtype)
    except (ValueError, KeyError):
        return None
    rows, width = math.prod(dims[:-1]), dims[-1]
    if fam["pointwise"] or len(dims) < 2 or min(dims) < 1:
        return None
    p = point(fam, fam["dims"](width, rows), width, False)
    return p if p["key"] == key else None


def known_points(tool, keys):
    """The points named by keys (point_of_key), for the tools that look at a
    few of them (ncu_points.py, replay_profile.py, replay_ab.py); exits
    naming the unknown ones before the caller imports torch, so a typo costs
    no GPU time."""
    points = {p["key"]: p for p in plan()}
    found = [point_of_key(k, points) for k in keys]
    missing = [k for k, p in zip(keys, found) if p is None]
    if missing or not keys:
        sys.exit("%s: unknown or no point keys: %s (see bench/sweep.py --dry-run)" % (tool, " ".join(missing)))
    return found


def fusec_point(torch, fusec, p):
    """Point p's inputs (seed 0) and fusec's program of its family."""
    fam = family(p["family"], p["dtype"])
    return make_inputs(torch, fam, p["dims"], 0), fusec.compile_file(os.path.join(ROOT, fam["program"]))


def compiled_point(torch, fusec, fns, p):
    """fusec_point, and torch.compile's function of the same family (dynamo
    reset first, dynamic=False)."""
    inputs, prog = fusec_point(torch, fusec, p)
    torch._dynamo.reset()
    return inputs, prog, torch.compile(fns[family(p["family"], p["dtype"])["torch"]], dynamic=False)


def torch_programs(torch, F_):
    """name -> fn over the program's inputs by name; a tuple for several
    outputs. Each is the .fz program written with torch ops; a cast to the
    storage dtype is `.to(x.dtype)`, so that in float64 it stays float64."""
    suite = {k: v[0] for k, v in run.torch_programs(torch, F_).items()}

    def log_softmax(x):
        m = x.amax(-1, keepdim=True)
        return x - m - torch.log(torch.exp(x - m).sum(-1, keepdim=True))

    def logsumexp(x):
        m = x.amax(-1, keepdim=True)
        return m + torch.log(torch.exp(x - m).sum(-1, keepdim=True))

    def masked_softmax(x, m):
        s = torch.where(m, x * 0.125, -30000.0)
        e = torch.exp(s - s.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)

    def bcast3(x, col, row):
        return (x - col) * row + x.mean(-1, keepdim=True)

    def silu_mul(a, b):
        return F_.silu(a) * b

    def swiglu(gate, up):
        return F_.silu(gate) * up

    def adam(p, g, m, v, lr, beta1, beta2, eps, bc1, bc2):
        m2 = beta1 * m + (1 - beta1) * g
        v2 = beta2 * v + (1 - beta2) * g * g
        return p - lr * (m2 / bc1) / (torch.sqrt(v2 / bc2) + eps), m2, v2

    def dyt(x, alpha, w, b):
        return (torch.tanh(alpha * x) * w + b).to(x.dtype)

    def add_rmsnorm(x, r, w, eps):
        h = x + r
        return h, (h * torch.rsqrt((h * h).mean(-1, keepdim=True) + eps) * w).to(x.dtype)

    def modrms(x, scale, shift, eps):
        return (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * (1 + scale) + shift).to(x.dtype)

    def rmsnorm(x, w, eps):
        return suite["rmsnorm"](x, w, eps).to(x.dtype)

    return dict(suite, rmsnorm=rmsnorm, log_softmax=log_softmax, logsumexp=logsumexp,
                masked_softmax=masked_softmax, bcast3=bcast3, silu_mul=silu_mul, swiglu=swiglu,
                adam=adam, dyt=dyt, add_rmsnorm=add_rmsnorm, modrms=modrms,
                silu=lambda x: F_.silu(x), gelu=lambda x: F_.gelu(x))


def make_inputs(torch, fam, bound, seed):
    """Seeded random inputs on the GPU: floats uniform in [-2, 2) (or the
    family's range), bools even odds, scalars from SCALARS."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    out = {}
    for name, dt, dims in run.parse_inputs(os.path.join(ROOT, fam["program"])):
        if dims is None:
            out[name] = fam["scalars"][name]
            continue
        u = torch.rand([numel([d], bound) for d in dims], generator=gen, device="cuda",
                       dtype=torch.float32)
        if dt == "bool":
            out[name] = u < 0.5
            continue
        lo, hi = fam["ranges"].get(name, (-2.0, 2.0))
        out[name] = (u * (hi - lo) + lo).to(getattr(torch, run.TORCH_DTYPES[dt]))
    return out


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def reference(torch, fn, inputs, dtype):
    """fn in float64 on the same inputs (bools stay bools), each output
    rounded to the storage dtype: the best answer a program can store. (An
    f16 softmax over a million elements stores subnormals, a few bits each:
    against the unrounded values even an exact program would be off by 1%.)"""
    ref_in = {k: (v.double() if torch.is_tensor(v) and v.is_floating_point() else v)
              for k, v in inputs.items()}
    storage = getattr(torch, run.TORCH_DTYPES[dtype])
    return tuple(r.to(storage).double() for r in as_tuple(fn(**ref_in)))


def check_outputs(torch, fn, inputs, outs, dtype, who):
    """outs against fn in float64 on the same inputs (reference), at the
    dtype's tolerance: (the worst relative error, the errors found)."""
    return compare(torch, outs, reference(torch, fn, inputs, dtype), run.TOLERANCE[dtype], who)


def compare(torch, outs, refs, tol, who):
    """The worst relative error over the outputs, and the errors found."""
    worst, bad = 0.0, []
    if len(outs) != len(refs):
        return None, ["%s: %d outputs, expected %d" % (who, len(outs), len(refs))]
    for i, (o, r) in enumerate(zip(outs, refs)):
        if tuple(o.shape) != tuple(r.shape):
            bad.append("%s: output %d has shape %s, expected %s" % (who, i, tuple(o.shape), tuple(r.shape)))
            continue
        e = run.rel_err(torch, o, r)
        worst = e if math.isnan(e) or math.isnan(worst) or e > worst else worst  # NaN sticks
        if not (e <= tol):
            bad.append("%s: output %d: relative error %.3g over %.3g" % (who, i, e, tol))
    return worst, bad


# ---- measuring a point --------------------------------------------------------------------------

def time_compiled(ctx, fn, kw, launch_bound):
    """torch.compile(fn, dynamic=False) after a dynamo reset: the first
    call's time (compile), the median, and per-call times if launch-bound."""
    torch = ctx.torch
    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = compiled(**kw)
    torch.cuda.synchronize()
    res = {"compile_s": time.perf_counter() - t0, "us": ctx.device_us(compiled, kw)}
    if launch_bound:
        res["host_us_per_call"], res["wall_us_per_call"] = ctx.per_call(lambda: compiled(**kw),
                                                                        ctx.args.per_call_n)
    return res, as_tuple(out)


def fusec_bench_cmd(args, p):
    cmd = [args.fusec, "bench", os.path.join(ROOT, p["program"])]
    for k, v in p["dims"].items():
        cmd += ["--dim", "%s=%d" % (k, v)]
    reps, warmup = (args.reps_small, 100) if p["launch_bound"] else (args.reps, 10)
    cmd += ["--json", "--mode", "both", "--reps", str(reps), "--warmup", str(warmup)]
    return cmd + (["--graph"] if p["launch_bound"] else []) + run.device_opt(args.device)


def run_fusec_bench(args, p, timeout, log):
    """fusec bench --json at the point: the parsed object, or {'error': ...}."""
    cmd = fusec_bench_cmd(args, p)
    log("  $ " + " ".join(cmd))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run.fusec_env(args))
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    if r.stderr.strip():
        log("  fusec stderr: " + r.stderr.strip().replace("\n", "\n  "))
    if r.returncode != 0:
        return {"error": "exit %d: %s" % (r.returncode, r.stderr.strip()[-2000:])}
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        return {"error": "bad JSON (%s): %s" % (e, r.stdout[-2000:])}


def overflows(fam, p):
    """Why the point's per-op and torch outputs are not compared (the family's
    overflow width is passed), or None."""
    o = fam.get("overflow")
    return o[1] if o and p["width"] > o[0] else None


def fusec_errors(fam, p, raw):
    """What fusec bench's answer says is wrong: its byte count, and its fused
    outputs against its per-op outputs."""
    errs = []
    if raw.get("min_bytes") != p["min_bytes"]:
        errs.append("fusec counts %s minimum bytes, the plan %d" % (raw.get("min_bytes"), p["min_bytes"]))
    if fam["nan_in_bench"] or overflows(fam, p):
        return errs
    d, tol = raw.get("outputs_rel_diff"), PER_OP_TOLERANCE[p["dtype"]]
    if raw.get("outputs_nan"):
        errs.append("fusec bench: NaN in the outputs")
    elif d is None or not (d <= tol):
        errs.append("fusec bench: fused vs per-op outputs differ by %s (over %.3g)" % (d, tol))
    return errs


def npy_args(np, inputs, decl, d):
    """--in arguments for fusec run: tensors as .npy files in d (bf16 as <f4)."""
    out = []
    for name, dt, shape in decl:
        v = inputs[name]
        if shape is None:
            out += ["--in", "%s=%r" % (name, v)]
            continue
        f = os.path.join(d, name + ".npy")
        np.save(f, (v.float() if dt == "bf16" else v).cpu().numpy())
        out += ["--in", "%s=%s" % (name, f)]
    return out


def check_fusec_run(ctx, fam, fn, p, timeout, log):
    """`fusec run` at the point's width (fewer rows) on the torch inputs,
    against fn in float64."""
    import numpy as np
    torch, args = ctx.torch, ctx.args
    path = os.path.join(ROOT, fam["program"])
    decl, names = run.parse_inputs(path), run.parse_outputs(path)
    dims = check_dims(fam, p)
    inputs = make_inputs(torch, fam, dims, args.seed + 1)
    res = {"dims": dims}
    with tempfile.TemporaryDirectory(prefix="fusec-sweep-") as d:
        cmd = [args.fusec, "run", path] + sum((["--dim", "%s=%d" % kv] for kv in dims.items()), [])
        cmd += npy_args(np, inputs, decl, d) + ["--out-dir", d] + run.device_opt(args.device)
        log("  $ " + " ".join(cmd))
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run.fusec_env(args))
        except subprocess.TimeoutExpired:
            res["error"] = "fusec run: timed out after %d s" % timeout
            return res
        if r.returncode != 0:
            res["error"] = "fusec run: exit %d: %s" % (r.returncode, r.stderr.strip()[-1000:])
            return res
        got = tuple(torch.from_numpy(np.load(os.path.join(d, n + ".npy")).astype("float64")).cuda()
                    for n in names)
    res["rel_err"], bad = compare(torch, got, reference(torch, fn, inputs, p["dtype"]),
                                  run.TOLERANCE[p["dtype"]], "fusec run")
    res["ok"] = not bad
    if bad:
        res["error"] = "; ".join(bad)
    return res


def measure_torch(ctx, fam, fn, p, rec):
    """torch.compile at the point, its outputs against float64, and the
    bytes its tensors hold against the plan's count."""
    torch = ctx.torch
    inputs = make_inputs(torch, fam, p["dims"], ctx.args.seed)
    res, outs = time_compiled(ctx, fn, inputs, p["launch_bound"])
    rec["results"]["compiled"] = res
    if overflows(fam, p):
        rec["not_checked"] = overflows(fam, p)
    elif not ctx.args.no_check:
        res["rel_err"], bad = check_outputs(torch, fn, inputs, outs, p["dtype"], "torch.compile")
        rec["errors"] += bad
    held = sum(run.nbytes(v) for v in list(inputs.values()) + list(outs) if torch.is_tensor(v))
    if held != p["min_bytes"]:
        rec["errors"].append("torch's tensors hold %d bytes, the plan counts %d" % (held, p["min_bytes"]))
    del inputs, outs
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def measure_python(ctx, fam, fn, p, rec):
    """The program called from Python on torch.compile's inputs (the same
    seed), timed as torch.compile is, its outputs against float64."""
    torch = ctx.torch
    prog = ctx.package.compile_file(os.path.join(ROOT, fam["program"]))
    inputs = make_inputs(torch, fam, p["dims"], ctx.args.seed)
    outs = as_tuple(prog(**inputs))
    res = {"us": ctx.device_us(prog, inputs)}
    if p["launch_bound"]:
        res["host_us_per_call"], res["wall_us_per_call"] = ctx.per_call(lambda: prog(**inputs),
                                                                        ctx.args.per_call_n)
    rec["results"]["fusec_py"] = res
    if not overflows(fam, p) and not ctx.args.no_check:
        res["rel_err"], bad = check_outputs(torch, fn, inputs, outs, p["dtype"], "fusec (Python)")
        rec["errors"] += bad
    del inputs, outs
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def measure_point(ctx, fns, p, deadline, log):
    """torch.compile, fusec from Python, then fusec bench, then fusec run
    where the point is checked; a failure of one is an error of the point,
    not of the others."""
    fam = family(p["family"], p["dtype"])
    fn = fns[fam["torch"]]
    rec = dict(p, results={}, errors=[])
    t0 = time.perf_counter()
    try:
        measure_torch(ctx, fam, fn, p, rec)
    except Exception as e:  # a torch.compile failure is a finding, not the end of the point
        rec["errors"].append("torch.compile: %s: %s" % (type(e).__name__, e))
        ctx.torch.cuda.empty_cache()
    if ctx.package is not None:
        try:
            measure_python(ctx, fam, fn, p, rec)
        except Exception as e:  # the other systems' figures stay
            rec["errors"].append("fusec (Python): %s: %s" % (type(e).__name__, e))
            ctx.torch.cuda.empty_cache()
    timeout = int(max(10, min(ctx.args.fusec_timeout, deadline - time.perf_counter())))
    raw = run_fusec_bench(ctx.args, p, timeout, log)
    rec["fusec_raw"] = raw
    if "error" in raw:
        rec["errors"].append("fusec bench: " + raw["error"])
    else:
        for mode, key in (("fused", "fusec"), ("per_op", "fusec_per_op")):
            r = run.fusec_result(raw, mode)
            if r:
                rec["results"][key] = r
        if not ctx.args.no_check:
            rec["errors"] += fusec_errors(fam, p, raw)
    if p["check"] and not ctx.args.no_check:
        try:
            rec["fusec_check"] = check_fusec_run(ctx, fam, fn, p, timeout, log)
        except Exception as e:  # the timings above stay
            rec["fusec_check"] = {"error": "fusec run check: %s: %s" % (type(e).__name__, e)}
            ctx.torch.cuda.empty_cache()
        if "error" in rec["fusec_check"]:
            rec["errors"].append(rec["fusec_check"]["error"])
    rec["elapsed_s"] = time.perf_counter() - t0
    return rec


# ---- the run ----------------------------------------------------------------------------------

def dry_run(args, points):
    print("# %d points%s; on the GPU, in this order:" % (
        len(points), "" if args.part == (1, 1) else " (part %d/%d)" % args.part))
    print("copy bandwidth: torch y.copy_(x) on %d MiB, do_bench median, at the start and the end"
          % args.copy_mib)
    for p in points:
        fam = family(p["family"], p["dtype"])
        print("%-40s %6.1f MB  torch.compile: %s%s" % (p["key"], p["min_bytes"] / 1e6, fam["torch"],
                                                    " (+ per-call times)" if p["launch_bound"] else ""))
        print("    $ " + " ".join(fusec_bench_cmd(args, p)))
        if p["check"] and not args.no_check:
            print("    check: fusec run at %s against float64" %
                  " ".join("%s=%d" % kv for kv in check_dims(fam, p).items()))
    return 0


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusec", default=os.path.join(ROOT, "build", "fusec"), help="the fusec binary")
    ap.add_argument("--out", default="sweep.json", help="JSON file to write")
    ap.add_argument("--part", type=parse_part, default=(1, 1), metavar="N/M",
                    help="run every M-th point of the plan from the N-th (default 1/1, all)")
    ap.add_argument("--quick", action="store_true", help="a handful of points (%d)" % len(QUICK))
    ap.add_argument("--only", help="comma-separated substrings of point keys, or keys of shapes "
                    "the plan lacks (a family of rows: softmax-f32-262144x32, masked_softmax-f16-4x16x1024x96)")
    ap.add_argument("--budget", type=float, default=480,
                    help="seconds: start no point that would end past this (default 480)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    ap.add_argument("--no-check", action="store_true", help="skip every check of the outputs")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--device", type=int, default=0, help="GPU ordinal, for fusec and torch")
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of the copied tensor")
    ap.add_argument("--warmup-ms", type=int, default=25, help="do_bench warm-up (ms)")
    ap.add_argument("--rep-ms", type=int, default=100, help="do_bench repetition time (ms)")
    ap.add_argument("--per-call-n", type=int, default=2000, help="calls for the per-call time")
    ap.add_argument("--reps", type=int, default=100, help="fusec bench --reps at the large points")
    ap.add_argument("--reps-small", type=int, default=2000, help="fusec bench --reps, launch-bound")
    ap.add_argument("--fusec-timeout", type=int, default=120)
    return ap.parse_args(argv)


def estimate(durations):
    """Seconds the next point may take: 1.5x the mean of the last ten."""
    last = durations[-10:]
    return 1.5 * sum(last) / len(last) if last else 0.0


def set_floors(doc):
    """Each point's floor for the run's copy bandwidth: the better of the
    start and end copies (the harder floor to reach)."""
    c = doc["copy"]
    c["gbps"] = max(v for v in (c.get("gbps_start"), c.get("gbps_end")) if v is not None)
    run.apply_floor({"workloads": doc["points"]}, c["gbps"])


def sweep(ctx, doc, points, log):
    """Measure every point that fits in the budget; save after each."""
    args, t_start = ctx.args, ctx.t_start
    fns = torch_programs(ctx.torch, ctx.F)
    durations = []
    for i, p in enumerate(points):
        now = time.perf_counter() - t_start
        if now + estimate(durations) > args.budget:
            doc["not_run"] = [q["key"] for q in points[i:]]
            log("budget: %.0f s spent, %d points not run" % (now, len(doc["not_run"])))
            break
        log("[%d/%d] %s (%.1f MB)" % (i + 1, len(points), p["key"], p["min_bytes"] / 1e6))
        try:
            rec = measure_point(ctx, fns, p, t_start + args.budget, log)
        except Exception as e:  # one failing point must not end the sweep
            rec = dict(p, results={}, errors=["%s: %s" % (type(e).__name__, e)])
            ctx.torch.cuda.empty_cache()
        durations.append(rec.get("elapsed_s", time.perf_counter() - t_start - now))
        for e in rec["errors"]:
            log("  ERROR " + e)
        log("  " + ", ".join("%s %.2f us" % (k, v["us"]) for k, v in rec["results"].items() if v.get("us")))
        doc["points"].append(rec)
        set_floors(doc)
        run.save(doc, args.out)


def main(argv):
    args = parse_args(argv)
    args.fusec = os.path.abspath(args.fusec)
    args.cache_dir = None
    points = select(plan(), args)
    if args.dry_run:
        return dry_run(args, points)
    if not os.access(args.fusec, os.X_OK):
        print("sweep.py: %s is not an executable (give --fusec)" % args.fusec, file=sys.stderr)
        return 2
    inductor_cache = tempfile.mkdtemp(prefix="inductor-")
    args.cache_dir = tempfile.mkdtemp(prefix="fusec-cache-")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", inductor_cache)
    import torch
    import torch.nn.functional as F_
    import triton
    import triton.testing  # noqa: F401

    torch.cuda.set_device(args.device)  # "cuda" is now this GPU for every tensor below
    ctx = run.Ctx(args, torch, triton, F_)
    ctx.t_start = time.perf_counter()

    def log(msg):
        print("[%6.1fs] %s" % (time.perf_counter() - ctx.t_start, msg), flush=True)

    os.environ[run.CACHE_ENV] = args.cache_dir  # the package's JIT shares fusec bench's cache
    ctx.package = run.python_package(log)
    if ctx.package is None:
        log("the comparison falls back to fusec bench's times (CUDA events around each call)")

    doc = {"meta": run.environment(torch, triton), "points": [], "not_run": [],
           "plan": {"points": len(plan()), "part": "%d/%d" % args.part, "quick": args.quick,
                    "only": args.only, "selected": len(points), "budget_s": args.budget,
                    "target_bytes": TARGET_BYTES}}
    doc["meta"]["command"] = " ".join([os.path.relpath(sys.argv[0])] + list(argv))
    doc["meta"]["fusec"] = args.fusec
    log("device: %s, torch %s, triton %s; %d points" % (doc["meta"]["device"], torch.__version__,
                                                       triton.__version__, len(points)))
    c0 = run.copy_bandwidth(ctx)
    doc["copy"] = {"bytes": c0["bytes"], "gbps_start": c0["gbps"],
                   "method": "torch y.copy_(x), %d MiB f32, do_bench median" % args.copy_mib}
    log("copy bandwidth: %.0f GB/s" % c0["gbps"])
    sweep(ctx, doc, points, log)
    doc["copy"]["gbps_end"] = run.copy_bandwidth(ctx)["gbps"]
    log("copy bandwidth at the end: %.0f GB/s" % doc["copy"]["gbps_end"])
    set_floors(doc)
    doc["meta"]["elapsed_s"] = time.perf_counter() - ctx.t_start
    shutil.rmtree(inductor_cache, ignore_errors=True)
    shutil.rmtree(args.cache_dir, ignore_errors=True)
    run.save(doc, args.out)
    log("wrote %s" % args.out)
    import sweep_report
    print(sweep_report.summary(sweep_report.merge([doc])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

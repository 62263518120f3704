"""The builtins and operators of fz 1.1 against PyTorch, on special values.

For every float dtype (f32, f64, f16, bf16) one program applies every
one-argument builtin of 1.1 to a table of special values (NaN, +-inf, +-0,
denormals, values that overflow, the ends of each op's domain and the kinks
of the activations), and another every two-argument builtin to every pair
of them; for i32 and i64 one program applies the integer and bitwise
operators to every pair of extremes and shift counts (negative, within and
past the width), and one the logical operators to bools; on the GPU, one
more applies exp, sigmoid, silu and two divisions (1 / x, x / 3) to the
table and a grid from -110 to 90 (the GPU's approximations for halves:
within one ulp of PyTorch's, zero where PyTorch's result is under 2^-126;
docs/language.md). fusec runs each program through `fusec run`:

  - on the GPU, fused (one kernel for all outputs) and per op (--no-fuse),
    compared with PyTorch on CUDA: the generated code calls the same CUDA
    math functions as PyTorch's kernels, so exact ops must be equal bit for
    bit and the others within 2 ulps of the output dtype;
  - on the CPU (--cpu, the reference interpreter), compared with PyTorch on
    the CPU: exact ops equal, the others within 4 ulps (PyTorch's CPU kernels
    use their own vectorized libm).

NaN must match NaN, an infinity the same infinity, a zero the zero of the
same sign, everywhere. The one intended difference is sign(NaN), which the
contract (fz-language.md 1.1) makes NaN where PyTorch gives 0; and on the
CPU an f64 hardswish/hardsigmoid, where fusec follows PyTorch's CUDA
constant f32(1/6) and PyTorch's CPU kernel divides by 6 (docs/language.md),
and an f32 or f64 sinh/cosh of |x| just below their overflow, where some of
PyTorch's CPU kernels give inf for a finite value.

Runs under pytest (tests skip without torch, without a GPU for the GPU
ones) or as a script: python3 tests/torch/test_builtins_torch.py
[--fusec build/fusec] [--cpu-only], which exits 77 when torch is missing
(CTest's "skipped"). FUSEC in the environment names the fusec binary.
"""
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:  # the CI machine: nothing to compare with
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUSEC = os.environ.get("FUSEC", os.path.join(ROOT, "build", "fusec"))

FLOAT_VALUES = [
    math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.9, -0.9, 1.5, 2.0,
    -3.0, 3.0, -2.9999, 6.0, -6.0, 20.0, 20.5, 19.5, -20.0, 88.8, -104.0, 710.0, 1e-40, -1e-40,
    1e-310, 3.4028234663852886e38, -3.4028234663852886e38, 1e30, 65504.0, 6e-8, -1e-6, 1e-3,
]
# exp, sigmoid, silu and division, which the GPU computes approximately for halves
# (docs/language.md): every special value and a dense grid across the range
# where they change, underflow into the subnormals included
HALF_MATH = {"exp": (lambda x: torch.exp(x), "exp(a)"), "sigmoid": (lambda x: torch.sigmoid(x), "sigmoid(a)"),
             "silu": (lambda x: F.silu(x), "silu(a)"), "1/x": (lambda x: 1.0 / x, "1 / a"),
             "x/3": (lambda x: x / 3.0, "a / 3")} if torch else {}
HALF_MATH_GRID = [-110.0 + 0.05 * i for i in range(4001)]
INT_VALUES = [0, 1, -1, 5, -8, 7, 31, 32, 33, 63, 64, 100, -100, 2**31 - 1, -2**31, 2**63 - 1, -2**63]

# name: (the torch function, exact on the GPU and the CPU)
UNARY = {
    "tan": (lambda x: torch.tan(x), False),
    "atan": (lambda x: torch.atan(x), False),
    "asin": (lambda x: torch.asin(x), False),
    "acos": (lambda x: torch.acos(x), False),
    "sinh": (lambda x: torch.sinh(x), False),
    "cosh": (lambda x: torch.cosh(x), False),
    "reciprocal": (lambda x: torch.reciprocal(x), True),
    "sign": (lambda x: torch.sign(x), True),
    "trunc": (lambda x: torch.trunc(x), True),
    "softplus": (lambda x: F.softplus(x), False),
    "mish": (lambda x: F.mish(x), False),
    "hardswish": (lambda x: F.hardswish(x), True),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), True),
    "elu": (lambda x: F.elu(x), False),
    "isfinite": (lambda x: torch.isfinite(x), True),
}
BINARY = {
    "atan2": (lambda a, b: torch.atan2(a, b), False),
    "hypot": (lambda a, b: torch.hypot(a, b), False),
    "logaddexp": (lambda a, b: torch.logaddexp(a, b), False),
    # a tensor slope: PyTorch's formula (leaky_relu takes a number)
    "leaky_relu": (lambda a, b: torch.where(a > 0, a, a * b), True),
}
# leaky_relu with a literal slope, as F.leaky_relu takes it
SLOPE = 0.01
INT_OPS = {"&": torch.bitwise_and, "|": torch.bitwise_or, "^": torch.bitwise_xor,
           "<<": torch.bitwise_left_shift, ">>": torch.bitwise_right_shift} if torch else {}
BOOL_OPS = {"&": torch.logical_and, "|": torch.logical_or, "^": torch.logical_xor} if torch else {}

FLOAT_DTYPES = ["f32", "f64", "f16", "bf16"]


def torch_dtype(name):
    return {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
            "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}[name]


def np_dtype(name):
    # bf16 travels as f32 (.npy has no bf16; fusec rounds it on reading)
    return {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32,
            "i32": np.int32, "i64": np.int64, "bool": np.bool_}[name]


def values(dtype, pairs):
    """The inputs a (and b) of a program: the table, or every pair of it."""
    table = INT_VALUES if dtype in ("i32", "i64", "bool") else FLOAT_VALUES
    if pairs == "grid":
        table = FLOAT_VALUES + HALF_MATH_GRID
        pairs = False
    if dtype == "i32":
        table = [v for v in table if -2**31 <= v < 2**31]
    if dtype == "bool":
        table = [False, True]
    with np.errstate(over="ignore"):
        col = np.array(table, dtype=np.float64 if dtype in FLOAT_DTYPES else object)
        if not pairs:
            return [col.astype(np_dtype(dtype))]
        a = np.repeat(col, len(table)).astype(np_dtype(dtype))
        b = np.tile(col, len(table)).astype(np_dtype(dtype))
    return [a, b]


def program(dtype, kind):
    """The program's text and its outputs: (name, op, arguments)."""
    outs = []
    if kind == "unary":
        for i, op in enumerate(UNARY):
            outs.append((f"u{i}", op, f"{op}(a)"))
    elif kind == "halfmath":
        for i, (op, (_, text)) in enumerate(HALF_MATH.items()):
            outs.append((f"h{i}", op, text))
    elif kind == "binary":
        for i, op in enumerate(BINARY):
            outs.append((f"b{i}", op, f"{op}(a, b)"))
        outs.append(("slope", "leaky_relu_literal", f"leaky_relu(a, {SLOPE})"))
    else:
        ops = INT_OPS if kind == "int" else BOOL_OPS
        for i, op in enumerate(ops):
            outs.append((f"o{i}", op, f"a {op} b"))
        outs.append(("n", "~", "~a"))
    ins = "in a: %s[N]\n" % dtype + ("in b: %s[N]\n" % dtype if kind not in ("unary", "halfmath") else "")
    return ins + "".join(f"out {name} = {text}\n" for name, _, text in outs), outs


def reference(op, dtype, device, xs):
    """PyTorch's result for one output, as a float64 or int64 NumPy array."""
    t = [torch.from_numpy(np.asarray(x)).to(device) for x in xs]
    t = [x.to(torch_dtype(dtype)) for x in t]
    if op in UNARY:
        r = UNARY[op][0](t[0])
    elif op in HALF_MATH:
        r = HALF_MATH[op][0](t[0])
    elif op in BINARY:
        r = BINARY[op][0](t[0], t[1])
    elif op == "leaky_relu_literal":
        r = F.leaky_relu(t[0], SLOPE)
    elif op == "~":
        r = ~t[0]
    else:
        r = (INT_OPS if dtype != "bool" else BOOL_OPS)[op](t[0], t[1])
    if op == "sign":  # the contract: sign(NaN) is NaN (PyTorch gives 0)
        r = torch.where(torch.isnan(t[0]), t[0], r)
    if r.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        return r.cpu().to(torch.float64).numpy()
    return r.cpu().numpy()


def ulp(want, dtype):
    w = np.abs(want)
    if dtype == "f16":
        return np.spacing(w.astype(np.float16)).astype(np.float64)
    if dtype == "bf16":
        return np.spacing(w.astype(np.float32)).astype(np.float64) * 65536.0
    if dtype == "f32":
        return np.spacing(w.astype(np.float32)).astype(np.float64)
    return np.spacing(w)


def compare(got, want, dtype, exact, ulps, what):
    """Errors (strings) where got differs from want beyond the rules."""
    got = np.asarray(got, dtype=np.float64 if dtype in FLOAT_DTYPES else want.dtype)
    if got.shape != want.shape:
        return [f"{what}: shape {got.shape}, PyTorch {want.shape}"]
    if dtype not in FLOAT_DTYPES or want.dtype == np.bool_:
        bad = np.nonzero(got != want)[0]
        return [f"{what}[{i}]: {got[i]}, PyTorch {want[i]}" for i in bad[:5]]
    errors = []
    for i in range(len(want)):
        g, w = got[i], want[i]
        if math.isnan(w) or math.isnan(g):
            ok = math.isnan(w) and math.isnan(g)
        elif math.isinf(w) or math.isinf(g) or w == 0 or g == 0:
            ok = g == w and math.copysign(1, g) == math.copysign(1, w)
        else:
            ok = g == w or (not exact and abs(g - w) <= ulps * ulp(np.array([w]), dtype)[0])
        if not ok:
            errors.append(f"{what}[{i}]: {g!r}, PyTorch {w!r}")
    return errors


def run_fusec(src, xs, mode, tmp):
    path = os.path.join(tmp, "p.fz")
    with open(path, "w") as f:
        f.write(src)
    args = [FUSEC, "run", path, "--out-dir", os.path.join(tmp, "out")]
    for name, x in zip("ab", xs):
        np.save(os.path.join(tmp, f"{name}.npy"), x)
        args += ["--in", f"{name}={os.path.join(tmp, name + '.npy')}"]
    if mode == "cpu":
        args.append("--cpu")
    elif mode == "per-op":
        args.append("--no-fuse")
    return subprocess.run(args, capture_output=True, text=True)


def check(dtype, kind, mode):
    """Errors of one program in one mode (an empty list: all agree)."""
    src, outs = program(dtype, kind)
    xs = values(dtype, "grid" if kind == "halfmath" else kind != "unary")
    device = "cpu" if mode == "cpu" else "cuda"
    with tempfile.TemporaryDirectory() as tmp:
        r = run_fusec(src, xs, mode, tmp)
        if r.returncode != 0:
            return [f"fusec run ({mode}) failed: {r.stderr.strip()}"]
        errors = []
        for name, op, _ in outs:
            got = np.load(os.path.join(tmp, "out", name + ".npy"))
            want = reference(op, dtype, device, xs)
            exact = UNARY.get(op, BINARY.get(op, (None, op not in HALF_MATH)))[1]
            if mode == "cpu" and dtype == "f64" and op in ("hardswish", "hardsigmoid"):
                exact, ulps = False, 2**29  # PyTorch's CPU divides by 6, its CUDA multiplies by f32(1/6)
            else:
                ulps = 4 if mode == "cpu" else 2
            if mode == "cpu" and op in ("hardswish", "hardsigmoid"):
                exact = False
            if mode == "cpu" and dtype in ("f32", "f64") and op in ("sinh", "cosh"):
                want = _finite_below_overflow(op, dtype, xs[0], want)
            if mode != "cpu" and dtype in ("f16", "bf16") and op in HALF_MATH:
                exact, ulps = False, 1
                want = _flushed_under_normal(got, want)
            errors += compare(got, want, dtype, exact, ulps, f"{op} on {dtype} ({mode})")
        return errors


def _finite_below_overflow(op, dtype, x, want):
    """sinh and cosh where exp(|x|) overflows but the value does not (|x| in
    (log(MAX), log(2 MAX)]): some of PyTorch's CPU kernels give inf there
    (f64 on every machine we ran, f32 on the H200's host CPU), glibc the
    finite value. There the reference is the value rounded from float64."""
    big = np.finfo(np.float64 if dtype == "f64" else np.float32).max
    ax = np.abs(x.astype(np.float64))
    window = (ax > np.log(big)) & (ax <= np.log(big) + np.log(2.0)) & np.isinf(want)
    with np.errstate(over="ignore"):
        exact = getattr(np, op)(x.astype(np.float64)).astype(want.dtype)
    return np.where(window, exact, want)


def _flushed_under_normal(got, want):
    """The GPU's exp of a half flushes results under 2^-126 (f32's smallest
    normal) to zero (docs/language.md): there a zero of the same sign is
    PyTorch's value too."""
    tiny = (np.abs(want) < 2.0**-126) & (np.asarray(got, dtype=np.float64) == 0)
    return np.where(tiny, np.copysign(0.0, want), want)


def gpu_available():
    return torch is not None and torch.cuda.is_available()


CASES = [(d, k) for d in FLOAT_DTYPES for k in ("unary", "binary")] + [("i32", "int"), ("i64", "int"),
                                                                      ("bool", "bool")]
# on the GPU only: the CPU reference is sem.def's formula, which the unary
# and binary cases compare already
GPU_CASES = CASES + [(d, "halfmath") for d in FLOAT_DTYPES]

# ---- pytest -------------------------------------------------------------------------------

try:
    import pytest

    @pytest.mark.parametrize("dtype,kind", CASES)
    def test_cpu_reference_matches_torch(dtype, kind):
        if torch is None:
            pytest.skip("PyTorch is not installed")
        assert check(dtype, kind, "cpu") == []

    @pytest.mark.parametrize("mode", ["fused", "per-op"])
    @pytest.mark.parametrize("dtype,kind", GPU_CASES)
    def test_gpu_matches_torch_cuda(dtype, kind, mode):
        if not gpu_available():
            pytest.skip("no PyTorch with a CUDA GPU")
        assert check(dtype, kind, mode) == []
except ImportError:
    pass

# ---- as a script -------------------------------------------------------------------------


def main(argv):
    global FUSEC
    if "--fusec" in argv:
        FUSEC = os.path.abspath(argv[argv.index("--fusec") + 1])
    if torch is None:
        print("skipped: PyTorch is not installed")
        return 77
    modes = ["cpu"] + ([] if "--cpu-only" in argv or not gpu_available() else ["fused", "per-op"])
    failed = 0
    for dtype, kind in GPU_CASES:
        for mode in modes:
            if mode == "cpu" and (dtype, kind) not in CASES:
                continue
            errors = check(dtype, kind, mode)
            print(f"{'FAIL' if errors else 'ok  '} {kind:6} {dtype:4} {mode}")
            for e in errors[:20]:
                print("    " + e)
            failed += bool(errors)
    if "cpu" in modes and len(modes) == 1:
        print("(no GPU: the CPU reference only)")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

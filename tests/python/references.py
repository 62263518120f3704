"""Every example of examples/ written again in float64, once, over a small
set of ops that NumPy (the CPU tests) and PyTorch eager (the GPU tests)
both provide; the inputs each example is run on; and the comparison.

A reference takes the inputs as float64 arrays of the values the program
receives (half inputs already rounded) and returns the outputs in the
order of the out statements, rounded where the program casts explicitly.
"""

import math

import numpy as np

from fusec._cpu import numpy_dtype

# ---- the ops: last-axis reductions keep the axis, as fz's do -------------------------


class NumpyOps:
    xp = np

    def max(self, x):
        return x.max(-1, keepdims=True)

    def sum(self, x):
        return x.sum(-1, keepdims=True)

    def mean(self, x):
        return x.mean(-1, keepdims=True)

    def rsqrt(self, x):
        return 1.0 / np.sqrt(x)

    def relu(self, x):
        return np.maximum(x, 0.0)

    def round_to(self, x, dtype):
        """x (float64) rounded to dtype, as an explicit cast does."""
        if dtype == "bf16":
            b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
            r = ((b + (np.uint32(0x7FFF) + ((b >> 16) & 1))) >> 16) << 16
            return np.where(np.isnan(x), np.nan, r.astype(np.uint32).view(np.float32)).astype(np.float64)
        return x.astype({"f16": np.float16, "f32": np.float32}[dtype]).astype(np.float64)


class TorchOps:
    def __init__(self, torch):
        self.xp = torch

    def max(self, x):
        return x.amax(-1, keepdim=True)

    def sum(self, x):
        return x.sum(-1, keepdim=True)

    def mean(self, x):
        return x.mean(-1, keepdim=True)

    def rsqrt(self, x):
        return self.xp.rsqrt(x)

    def relu(self, x):
        return self.xp.relu(x)

    def round_to(self, x, dtype):
        t = self.xp
        return x.to({"bf16": t.bfloat16, "f16": t.float16, "f32": t.float32}[dtype]).to(t.float64)


# ---- the examples --------------------------------------------------------------------


def _gelu_tanh(F, x, c=math.sqrt(2 / math.pi)):
    return 0.5 * x * (1 + F.xp.tanh(c * (x + 0.044715 * x * x * x)))


def _layernorm(F, x, w, b, eps):
    xc = x - F.mean(x)
    return xc * F.rsqrt(F.mean(xc * xc) + eps) * w + b


def _softmax(F, x):
    e = F.xp.exp(x - F.max(x))
    return (e / F.sum(e),)


def _adam(F, p, g, m, v, lr, beta1, beta2, eps, bc1, bc2):
    m2 = beta1 * m + (1 - beta1) * g
    v2 = beta2 * v + (1 - beta2) * g * g
    return p - lr * (m2 / bc1) / (F.xp.sqrt(v2 / bc2) + eps), m2, v2


def _log_softmax(F, x):
    m = F.max(x)
    return (x - m - F.xp.log(F.sum(F.xp.exp(x - m))),)


def _logsumexp(F, x):
    m = F.max(x)
    return (m + F.xp.log(F.sum(F.xp.exp(x - m))),)


def _spec_layernorm_gelu(F, x, w, b, eps):
    y = F.round_to(_layernorm(F, x, w, b, eps), "bf16")
    return y, 0.5 * y * (1 + F.xp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


REFERENCES = {
    "adam": _adam,
    "add_scale_bias_relu": lambda F, x, y, bias, s: (F.relu((x + y) * s + bias),),
    "bias_gelu_residual_layernorm": lambda F, x, bias, res, w, b, eps:
        (_layernorm(F, _gelu_tanh(F, x + bias) + res, w, b, eps),),
    "gelu_tanh": lambda F, x: (_gelu_tanh(F, x, 0.79788456),),
    "l2norm": lambda F, x, eps: (x * F.rsqrt(F.xp.maximum(F.sum(x * x), F.xp.zeros_like(x[..., :1]) + eps * eps)),),
    "layernorm": lambda F, x, w, b, eps: (_layernorm(F, x, w, b, eps),),
    "layernorm_bf16": lambda F, x, w, b, eps: (_layernorm(F, x, w, b, eps),),
    "layernorm_f16": lambda F, x, w, b, eps: (_layernorm(F, x, w, b, eps),),
    "log_softmax": _log_softmax,
    "logsumexp": _logsumexp,
    "rmsnorm": lambda F, x, w, eps: (x * F.rsqrt(F.mean(x * x) + eps) * w,),
    "rowsum_sq": lambda F, x: (F.sum(x * x),),
    "softmax": _softmax,
    "softmax_bf16": _softmax,
    "softmax_f16": _softmax,
    "spec_layernorm_gelu": _spec_layernorm_gelu,
    "spec_relu": lambda F, x, y, bias, scale: (F.relu((x + y) * scale + bias),),
    "spec_softmax": _softmax,
}

# scalar inputs by name; tensors are standard normal unless named here
SCALARS = {"eps": 1e-5, "lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "bc1": 0.1, "bc2": 0.001, "s": 0.5,
           "scale": 0.5}
NONNEGATIVE = {"v"}  # adam's second moment


def make_inputs(prog, rows, cols, seed):
    """NumPy inputs for an example: dims N and C are `cols` (the reduced
    axis), every other dim `rows`; float64 values of the program's dtypes."""
    rng = np.random.default_rng(seed)
    dims = {d: (cols if d in ("N", "C") else rows) for d in prog.dims}
    values = {}
    for spec in prog.inputs:
        if not spec.shape:
            values[spec.name] = SCALARS[spec.name]
            continue
        shape = tuple(dims[d] if isinstance(d, str) else d for d in spec.shape)
        a = rng.standard_normal(shape)
        if spec.name in NONNEGATIVE:
            a = np.abs(a)
        values[spec.name] = a
    return values


def tolerance(dtype, row, per_op=False):
    """(rtol, relative atol) for an output of `dtype` after reductions over
    rows of length `row`: docs/runtime.md's table (per-op mode rounds every
    half value it stores: twice as much), the absolute part taken relative
    to the largest reference value."""
    rtol = {"f64": 1e-10, "f32": 1e-4, "f16": 1e-2, "bf16": 2e-2}[dtype]
    if dtype in ("f32", "f64"):
        rtol *= max(1.0, math.sqrt(row) / 8)
    elif per_op:
        rtol *= 2
    return rtol, rtol


def assert_close(name, got, want, dtype, row, per_op=False):
    """got, want: float64 NumPy arrays."""
    assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
    rtol, atol = tolerance(dtype, row, per_op)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = np.abs(got - want)
    bad = ~(err <= atol * scale + rtol * np.abs(want))
    if bad.any():
        i = np.unravel_index(np.argmax(np.where(bad, err, -1)), got.shape)
        raise AssertionError(f"{name}: {int(bad.sum())} of {got.size} elements differ; worst at {i}: "
                             f"got {got[i]!r}, expected {want[i]!r} (rtol {rtol:g}, atol {atol * scale:g})")


def random_inputs(prog, rec, rng):
    """NumPy inputs for a program of tests/progen_dump, drawn as its record
    says (bf16 as float32 values, which the package and torch round alike)."""
    by_name = {i["name"]: i for i in rec["inputs"]}
    args = []
    for spec in prog.inputs:
        r = by_name[spec.name]
        shape = tuple(rec["dims"][d] if isinstance(d, str) else d for d in spec.shape)
        lo, hi = r["lo"], r["hi"]
        if spec.dtype == "bool":
            a = rng.integers(0, 2, size=shape).astype(bool)
        elif spec.dtype in ("i32", "i64"):
            a = rng.integers(int(lo), int(hi) + 1, size=shape).astype(numpy_dtype(spec.dtype))
        else:
            a = rng.uniform(lo, hi, size=shape)
            if r["nonfinite"] and a.size:
                k = rng.integers(0, a.size, size=max(1, a.size // 20))
                a.flat[k] = rng.choice([np.nan, np.inf, -np.inf], size=k.size)
            a = a.astype(np.float32 if spec.dtype == "bf16" else numpy_dtype(spec.dtype))
        if not spec.shape:
            a = a.item() if spec.dtype not in ("bool",) else bool(a)
        args.append(a)
    return args

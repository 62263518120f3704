"""The torch backend op by op: each function compiled with backend="fusec"
gives what eager PyTorch gives, on special values too (NaN, infinities,
signed zeros, denormals, huge values), and becomes exactly the regions and
fallbacks expected. On the CPU the regions run on fusec's CPU reference; the
same cases run on the GPU where there is one. Skipped where torch is absent.

The tolerance is docs/runtime.md's: |got - want| <= atol + rtol * |want|
(f32 1e-5 + 1e-4, f16 1e-2, bf16 2e-2, doubled for halves since eager rounds
every intermediate; integers and bools exact), NaN must meet NaN and an
infinity the same infinity."""

import math

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import fusec.torch  # noqa: E402

TOL = {torch.float64: (1e-12, 1e-10), torch.float32: (1e-5, 1e-4), torch.float16: (2e-2, 2e-2),
       torch.bfloat16: (4e-2, 4e-2)}


def assert_close(got, want, row=1):
    """got equals want within the tolerance (scaled by max(1, sqrt(row)/8)
    for results of reductions over rows of length `row`)."""
    assert isinstance(got, torch.Tensor), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    assert got.device == want.device
    g, w = got.detach().cpu().double(), want.detach().cpu().double()
    if want.dtype not in TOL:
        assert torch.equal(g, w), (g, w)
        return
    atol, rtol = TOL[want.dtype]
    scale = max(1.0, math.sqrt(row) / 8)
    ok = (g == w) | ((g - w).abs() <= (atol + rtol * w.abs()) * scale) | (g.isnan() & w.isnan())
    if not bool(ok.all()):
        bad = (~ok).nonzero()[:5].tolist()
        raise AssertionError(f"{int((~ok).sum())} of {ok.numel()} elements differ, e.g. "
                             + ", ".join(f"{tuple(i)}: got {g[tuple(i)].item()!r}, want {w[tuple(i)].item()!r}"
                                         for i in bad))


def special(shape, dtype=torch.float32, seed=0):
    """Random values with NaN, infinities, signed zeros, a denormal and
    huge values at the front."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 3
    vals = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-40, 1e30, -2.5, 2.5, 0.5, -0.5, 88.0, -100.0]
    x.view(-1)[:len(vals)] = torch.tensor(vals)
    return x.to(dtype)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


X = special((6, 16))
Y = torch.randn(6, 16, generator=_gen(1)) * 2
YP = torch.rand(6, 16, generator=_gen(2)) + 0.5
I = torch.randint(-20, 20, (6, 16), dtype=torch.int32, generator=_gen(3))
J = torch.randint(1, 7, (6, 16), dtype=torch.int32, generator=_gen(4))
L = torch.randint(-2**40, 2**40, (6, 16), dtype=torch.int64, generator=_gen(5))
B = torch.rand(6, 16, generator=_gen(6)) > 0.5
W = torch.randn(16, generator=_gen(7))

# name: (fn, inputs, regions expected); every case is expected to leave
# nothing to PyTorch unless the fourth field lists the ops that stay.
CASES = {
    # one operand
    **{name: (getattr(torch, name), [X], 1) for name in
       ("exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf",
        "sigmoid", "relu", "abs", "neg", "reciprocal", "floor", "ceil", "round", "trunc", "sign", "sgn",
        "isnan", "isinf", "isfinite", "logical_not", "square", "frac")},
    "relu_int": (torch.relu, [I], 1), "abs_int": (torch.abs, [I], 1), "neg_long": (torch.neg, [L], 1),
    "reciprocal_int": (torch.reciprocal, [I], 1), "floor_int": (lambda a: torch.floor(a) + 1, [I], 1),
    "sign_int": (torch.sign, [I], 1), "bitwise_not": (torch.bitwise_not, [I], 1),
    "bitwise_not_long": (torch.bitwise_not, [L], 1), "bitwise_not_bool": (torch.bitwise_not, [B], 1),
    "exp_int": (torch.exp, [I], 1), "sqrt_long": (torch.sqrt, [L], 1),
    # two or three operands
    "add": (torch.add, [X, Y], 1), "add_alpha": (lambda x, y: torch.add(x, y, alpha=2.5), [X, Y], 1),
    "sub": (lambda x, y: x - y * 2, [X, Y], 1), "rsub": (lambda x: 1 - x, [X], 1),
    "mul_bool": (torch.mul, [B, ~B], 1), "add_bool": (torch.add, [B, ~B], 1),
    "bool_plus_1": (lambda b: b + 1, [B], 1), "long_times_float": (lambda a: a * 0.5, [L], 1),
    "div": (torch.div, [X, Y], 1), "div_int": (torch.div, [I, J], 1),
    "div_trunc": (lambda x, y: torch.div(x, y, rounding_mode="trunc"), [X, Y], 1),
    "div_trunc_int": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), [I, -J], 1),
    "div_floor": (lambda x, y: torch.div(x, y, rounding_mode="floor"), [X, Y], 1),
    "div_floor_int": (lambda a, b: torch.div(a, b, rounding_mode="floor"), [I, -J], 1),
    "remainder": (torch.remainder, [X, Y], 1), "remainder_int": (torch.remainder, [I, -J], 1),
    "fmod": (torch.fmod, [X, Y], 1), "fmod_int": (torch.fmod, [I, -J], 1),
    "pow_2": (lambda x: x ** 2, [X], 1), "pow_3": (lambda x: x ** 3, [X], 1),
    "pow_half": (lambda x: x ** 0.5, [X], 1), "pow_minus_half": (lambda x: x ** -0.5, [X], 1),
    "pow_1_7": (lambda x: x ** 1.7, [X], 1), "pow_tensors": (torch.pow, [YP, Y], 1),
    "pow_int": (lambda a: a ** 3, [I], 1), "pow_scalar_base": (lambda y: 2.0 ** y, [Y], 1),
    "maximum": (torch.maximum, [X, Y], 1), "minimum": (torch.minimum, [X, Y], 1),
    "clamp": (lambda x: x.clamp(-1, 1), [X], 1), "clamp_min": (lambda x: x.clamp(min=0.5), [X], 1),
    "clamp_tensors": (lambda x, y: x.clamp(y, y + 1), [X, Y], 1),
    "where": (lambda x, y: torch.where(x > y, x, y), [X, Y], 1),
    "where_scalar": (lambda x: torch.where(x > 0, x, 0.0), [X], 1),
    "masked_fill": (lambda x, b: x.masked_fill(b, float("-inf")), [X, B], 1),
    "compare": (lambda x, y: (x < y) | (x == y) | (x >= 2 * y), [X, Y], 1),
    "compare_int_float": (lambda a: a > 2.5, [I], 1),
    "logical": (lambda a, b: torch.logical_xor(a > 0, b > 0) & (a != b), [X, Y], 1),
    "logical_and_or": (lambda a, b: torch.logical_and(a, b) | torch.logical_or(a, ~b), [B, B], 1),
    "bitwise_bool": (lambda a, b: (a & b) | (a ^ b), [B, ~B], 1),
    "int_and_float": (lambda a, x: a * x + a, [I, Y], 1),
    "casts": (lambda x: x.to(torch.int32).to(torch.float32) + x.double().float(), [Y], 1),
    "lerp": (lambda x, y: torch.lerp(x, y, 0.3), [X, Y], 1),
    "addcmul": (lambda x, y: torch.addcmul(x, y, y, value=0.5), [X, Y], 1),
    "nan_to_num": (lambda x: torch.nan_to_num(x, nan=1.0), [X], 1),
    # activations (decomposed)
    # (eager's vectorised CPU gelu gives NaN for +inf, its scalar path inf: Y has no infinities)
    "gelu": (F.gelu, [Y], 1), "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [X], 1),
    "silu": (F.silu, [X], 1), "mish": (F.mish, [X], 1), "softplus": (F.softplus, [X], 1),
    "elu": (F.elu, [X], 1), "leaky_relu": (F.leaky_relu, [X], 1), "hardswish": (F.hardswish, [X], 1),
    "hardsigmoid": (F.hardsigmoid, [X], 1), "hardtanh": (F.hardtanh, [X], 1), "relu6": (F.relu6, [X], 1),
    # last-axis reductions
    "sum": (lambda x: x.sum(-1), [Y], 1), "sum_keepdim": (lambda x: x / x.sum(-1, keepdim=True), [Y], 1),
    "mean": (lambda x: x.mean(-1, keepdim=True) - x, [Y], 1), "amax": (lambda x: x.amax(-1), [X], 1),
    "amin": (lambda x: x.amin(-1) * 2, [Y], 1), "sum_int": (lambda a: a.sum(-1), [I], 1),
    "sum_bool": (lambda b: b.sum(-1), [B], 1), "sum_dtype": (lambda a: a.sum(-1, dtype=torch.float32), [I], 1),
    "any": (lambda b: b.any(-1), [B], 1), "all": (lambda x: (x > -1).all(-1), [Y], 1),
    "var": (lambda x: torch.var(x, -1), [Y], 1),
    "var_keepdim": (lambda x: torch.var(x, -1, keepdim=True, correction=0) + x, [Y], 1),
    "std": (lambda x: torch.std(x, -1), [Y], 1), "var_mean": (lambda x: torch.var_mean(x, -1), [Y], 1),
    "sum_1d": (lambda w: w.sum() * w, [W], 1), "mean_1d": (lambda w: w - w.mean(), [W], 1),
    "softmax": (lambda x: torch.softmax(x, -1), [Y], 1),
    "softmax_specials": (lambda x: torch.softmax(x, -1), [X], 1),
    "log_softmax": (lambda x: torch.log_softmax(x, -1), [Y], 1),
    "logsumexp": (lambda x: torch.logsumexp(x, -1), [Y], 1),
    "layer_norm": (lambda x, w: F.layer_norm(x, (16,), w, w), [Y, W], 1),
    "rms_norm": (lambda x, w: F.rms_norm(x, (16,), w, 1e-6), [Y, W], 1),
    # shapes
    "unsqueeze_after_sum": (lambda x: x.sum(-1).unsqueeze(-1) * x, [Y], 1),
    "leading_view": (lambda x: (x.view(1, 6, 16) + 1).view(6, 16), [Y], 1),
    "broadcast_row": (lambda x, w: x * w + w, [Y, W], 1),
    "expand_output": (lambda w: (w * 2).expand(6, 16), [W], 1),
    "reduced_then_scalar_ops": (lambda x: x.sum(-1) * 2 + 1, [Y], 1),
    "zero_dim_tensor": (lambda x, s: x * s + s, [Y, torch.tensor(2.5)], 1),
    "zeros_like": (lambda x: torch.zeros_like(x) + x, [Y], 1),
    "full": (lambda x: x + torch.full((6, 16), 2.0, device=x.device), [Y], 1),
    "rank_3": (lambda x: torch.softmax(x.view(2, 3, 16), -1), [Y], 1, ["aten.view.default"]),
    "rank_1_scalar_out": (lambda w: w.sum(), [W], 1),
    # dtypes
    "f16": (lambda x: (x.half() * 2).float(), [Y], 1), "bf16_softmax": (lambda x: torch.softmax(x.bfloat16(), -1), [Y], 1),
    "f64": (lambda x: x.double() * 0.1 + 1e-10, [Y], 1),
    # partly left to PyTorch
    "transposed_input": (lambda x: x.t() * 2, [Y], 1, ["aten.permute.default"]),
    "select_then_add": (lambda x, y: x.sum(-1) + y[:, 0], [Y, Y], 1,
                        ["aten.select.int", "aten.add.Tensor"]),
    "reduce_first_axis": (lambda x: x.sum(0) * 2, [Y], 1, ["aten.sum.dim_IntList"]),
    "matmul": (lambda x, w: torch.relu(x @ w.view(16, 1)) + 1, [Y, W], 1, ["aten.view.default", "aten.mm.default"]),
    "int8_stays": (lambda a: (a + 1) * 2, [I.to(torch.int8)], 0, ["aten.add.Tensor", "aten.mul.Tensor"]),
}


def run_case(name, device):
    fn, args, regions, *rest = CASES[name]
    args = [a.to(device) for a in args]
    report = fusec.torch.explain(fn, *args, quiet=True)
    got, want = report.result, fn(*args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    for g, w in zip(got, want):
        assert_close(g, w, row=16)
    assert len(report.regions) == regions, report
    assert sorted(f.op for f in report.fallbacks) == sorted(rest[0] if rest else []), report
    return report


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_cpu(name):
    run_case(name, "cpu")


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_gpu(name, cuda):
    report = run_case(name, "cuda")
    assert report.kernels >= len(report.regions)


def test_fz_11_builtins_when_the_library_has_them():
    from fusec.torch.runtime import features
    fns = {"tan": torch.tan, "atan": torch.atan, "asin": torch.asin, "acos": torch.acos, "sinh": torch.sinh,
           "cosh": torch.cosh, "atan2": lambda x: torch.atan2(x, x * 0.5 - 1),
           "hypot": lambda x: torch.hypot(x, x + 1), "bitwise": lambda x: (x.int() & 3) | (x.int() ^ 5)}
    have = features()
    for name, fn in fns.items():
        report = fusec.torch.explain(fn, Y, quiet=True)
        assert_close(report.result, fn(Y))
        if name in have:
            assert not report.fallbacks, (name, report)
        else:
            assert report.fallbacks and "which this libfusec lacks" in report.fallbacks[0].reason

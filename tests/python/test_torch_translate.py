"""The torch backend's translation: the fz source each region of a small
function becomes, as golden text, and the nodes left to PyTorch with their
reasons. Runs on the CPU (the regions run on the CPU reference, and each
result is checked against eager too); skipped where torch is absent."""

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import fusec.torch  # noqa: E402

from test_torch_ops import assert_close  # noqa: E402


def explain(fn, *args, **kwargs):
    report = fusec.torch.explain(fn, *args, quiet=True, **kwargs)
    want = fn(*args)
    got = report.result
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert_close(g, w)
    return report


def sources(report):
    return [r.source for r in report.regions]


def fallbacks(report):
    return [(f.node, f.op, f.reason) for f in report.fallbacks]


X = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
Y = torch.randn(4, 8, generator=torch.Generator().manual_seed(2))
W = torch.randn(8, generator=torch.Generator().manual_seed(3))


def test_softmax_decomposes_into_one_region():
    r = explain(lambda x: torch.softmax(x, -1), X)
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
amax = max(arg0_1)
sub = arg0_1 - amax
exp_ = exp(sub)
sum_1 = sum(exp_)
div = exp_ / sum_1
out div
"""]
    assert fallbacks(r) == []


def test_layer_norm_var_mean_in_one_pass():
    r = explain(lambda x, w, b: F.layer_norm(x, (8,), w, b, 1e-5), X, W, W + 1)
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
in arg1_1: f32[D1]
in arg2_1: f32[D1]
var_mean_mean = mean(arg0_1)
var_mean_dev = arg0_1 - var_mean_mean
var_mean_var = mean(var_mean_dev * var_mean_dev)
add = var_mean_var + 1e-05
rsqrt_ = rsqrt(add)
sub = arg0_1 - var_mean_mean
mul = sub * rsqrt_
mul_1 = mul * arg1_1
add_1 = mul_1 + arg2_1
out add_1
"""]


def test_rms_norm_bf16_computes_in_f32_as_pytorch_does():
    r = explain(lambda x, w: F.rms_norm(x, (8,), w, 1e-6), X.bfloat16(), W.bfloat16())
    assert sources(r) == ["""\
in arg0_1: bf16[D0, D1]
in arg1_1: bf16[D1]
_to_copy = f32(arg0_1)
pow_1 = _to_copy * _to_copy
mean_ = mean(pow_1)
add = mean_ + 9.999999974752427e-07
rsqrt_ = rsqrt(add)
mul = _to_copy * rsqrt_
mul_1 = mul * arg1_1
_to_copy_1 = bf16(mul_1)
out _to_copy_1
"""]


def test_python_scalars_are_weak_literals():
    r = explain(lambda x, y, b: torch.relu((x + y) * 0.5 + b), X, Y, W)
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
in arg1_1: f32[D0, D1]
in arg2_1: f32[D1]
add = arg0_1 + arg1_1
mul = add * 0.5
add_1 = mul + arg2_1
relu_ = relu(add_1)
out relu_
"""]


def test_casts_only_where_fz_promotes_differently():
    # i32 * f32 and i32 / 2 promote alike in fz (no cast) except that
    # PyTorch's / is true division; bool + 1 is i64 in PyTorch, i32 in fz.
    i = torch.arange(32, dtype=torch.int32).view(4, 8) - 10
    r = explain(lambda i, b, x: (i * x, i / 2, b + 1), i, X > 0, X)
    assert sources(r) == ["""\
in arg0_1: i32[D0, D1]
in arg1_1: f32[D0, D1]
mul = arg0_1 * arg1_1
div = f32(arg0_1) / 2
out mul
out div
""", """\
in arg2_1: bool[D0, D1]
add = i64(arg2_1) + 1
out add
"""]


def test_zero_dim_tensor_rounds_to_the_half_type():
    # A 0-dim f32 tensor meets a bf16 tensor as PyTorch does on the GPU:
    # converted to bf16 first. A CPU 0-dim tensor is passed as a scalar.
    r = explain(lambda x, s: x.bfloat16() * s, X, torch.tensor(2.7))
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
in arg1_1: f32
_to_copy = bf16(arg0_1)
mul = _to_copy * bf16(arg1_1)
out mul
"""]


def test_reduction_without_keepdim():
    r = explain(lambda x: (x.sum(-1), x * x.amax(-1).unsqueeze(-1)), X)
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
sum_1 = sum(arg0_1)
amax = max(arg0_1)
mul = arg0_1 * amax
out sum_1
out mul
"""]
    assert r.result[0].shape == (4,)


def test_expanded_input_is_read_once_not_copied():
    # w.expand inside the region is fz's broadcast; the expand that feeds
    # PyTorch's sum over dim 0 stays a view, and that sum an input.
    r = explain(lambda w, x: w.expand(4, 8) * x + w.expand(4, 8).sum(0), W, X)
    assert sources(r) == ["""\
in arg0_1: f32[D0]
in arg1_1: f32[D1, D0]
in sum_1: f32[D0]
mul = arg0_1 * arg1_1
add = mul + sum_1
out add
"""]
    assert fallbacks(r) == [
        ("expand_1", "aten.expand.default", "a view or constant with no fz computation around it"),
        ("sum_1", "aten.sum.dim_IntList", "reduces an axis other than the last (fz reduces rows)")]


def test_stride_zero_input_is_declared_with_size_1():
    # An expanded tensor made by PyTorch reaches the region with stride 0:
    # declared as 1 and passed as its one slice.
    def f(w, x):
        e = torch.ops.aten.expand.default(w.sum(0, keepdim=True), [4, 8])
        return e * x
    r = explain(f, X, Y)
    assert sources(r) == ["""\
in sum_1: f32[1, D0]
in arg1_1: f32[D1, D0]
mul = sum_1 * arg1_1
out mul
"""]


def test_dynamic_shapes_pass_sizes_as_scalars():
    r = explain(lambda x: x.var(-1) * x.shape[0], X, dynamic=True)
    assert sources(r) == ["""\
in arg2_1: f32[D0, D1]
in var_rows: i64
in arg0_1: i64
var_mean = mean(arg2_1)
var_dev = arg2_1 - var_mean
var = sum(var_dev * var_dev) / (var_rows - 1)
mul_1 = var * f32(arg0_1)
out mul_1
"""]


def test_infinities_and_nan_as_constant_expressions():
    r = explain(lambda x, m: x.masked_fill(m, float("-inf")).clamp(min=-3.0), X, X > 1)
    assert sources(r) == ["""\
in arg1_1: bool[D0, D1]
in arg0_1: f32[D0, D1]
where_ = where(arg1_1, f32((-1.0 / 0.0)), arg0_1)
clamp_ = maximum(where_, (-3.0))
out clamp_
"""]


def test_matmul_splits_regions():
    r = explain(lambda x, w: torch.softmax(torch.relu(x + 1) @ w, -1), X, torch.randn(8, 8))
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
add = arg0_1 + 1
relu_ = relu(add)
out relu_
""", """\
in mm: f32[D0, D1]
amax = max(mm)
sub = mm - amax
exp_ = exp(sub)
sum_1 = sum(exp_)
div = exp_ / sum_1
out div
"""]
    assert fallbacks(r) == [("mm", "aten.mm.default", "matrix multiply stays in PyTorch")]


def test_floor_division_follows_aten():
    r = explain(lambda a, b: torch.div(a, b, rounding_mode="floor"), X, Y)
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
in arg1_1: f32[D0, D1]
div_q = arg0_1 / arg1_1
div_mod = arg0_1 % arg1_1
div_div = (arg0_1 - div_mod) / arg1_1
div_div1 = where((div_mod != 0) && ((arg1_1 < 0) != (div_mod < 0)), div_div - 1, div_div)
div_floor = floor(div_div1)
div_floor1 = where(div_div1 - div_floor > 0.5, div_floor + 1, div_floor)
div = where(arg1_1 == 0, div_q, where(div_div1 != 0, div_floor1, div_q * 0))
out div
"""]


def test_cycle_through_pytorch_splits_a_region():
    # c reads a and a matmul of a: joining c to a's region would need the
    # matmul both before and after it.
    def f(x):
        a = torch.exp(x)
        return a * (a @ x)
    r = explain(f, torch.randn(8, 8))
    assert sources(r) == ["""\
in arg0_1: f32[D0, D1]
exp_ = exp(arg0_1)
out exp_
""", """\
in exp_: f32[D0, D1]
in mm: f32[D0, D1]
mul = exp_ * mm
out mul
"""]


def test_siblings_reading_one_tensor_share_a_region():
    r = explain(lambda x: (torch.softmax(x, -1), x.sum(-1)), X)
    assert len(r.regions) == 1 and r.kernels == 1

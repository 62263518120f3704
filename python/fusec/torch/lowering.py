"""The op table: each aten op fz can express, and the fz it becomes.

One small function per op (or family), registered with @lowers for the
overloads it handles, in the manner of Inductor's lowerings. A function gets
the Translator and the node, and returns the node's value, usually through
`t.bind` (which also casts to the node's dtype) or, for views and identities,
`t.as_view`. It raises Unsupported with a reason for what it cannot express;
an op that is not in the table at all is reported by `reason()`.

The formulas follow PyTorch's CUDA kernels where fz has no builtin of the
same meaning: remainder takes the divisor's sign, floor division is
ATen's div_floor_floating, sign(NaN) is 0 as in PyTorch, pow by small
constant exponents multiplies as ATen does. fz 1.1 builtins are used only
where libfusec has them (`t.features`).
"""

import operator

import torch

from .fz import Unsupported, Val, fz_dtype, literal, natural, shape_keys
from .translate import KIND, align

aten = torch.ops.aten
prims = torch.ops.prims

__all__ = ["lower", "reason", "TABLE", "VIEW_OPS"]

TABLE = {}


def lowers(*ops):
    def register(fn):
        for op in ops:
            TABLE[op] = fn
        return fn
    return register


def lower(t, n):
    if n.op != "call_function" or n.target not in TABLE:
        raise Unsupported(reason(n))
    return TABLE[n.target](t, n)


def reason(n):
    """Why a node that is not in the table stays in PyTorch."""
    return _WHY.get(getattr(n.target, "overloadpacket", None)) or \
        "no fz translation (not elementwise, a last-axis reduction or a size-1 reshape)"


_WHY = {
    aten.mm: "matrix multiply stays in PyTorch", aten.bmm: "matrix multiply stays in PyTorch",
    aten.addmm: "matrix multiply stays in PyTorch", aten.baddbmm: "matrix multiply stays in PyTorch",
    aten.convolution: "convolution stays in PyTorch",
    aten.permute: "moves data between dims (fz has no transpose)",
    aten.transpose: "moves data between dims (fz has no transpose)",
    aten.clone: "copies into another memory layout",
    aten.native_dropout: "random numbers (fz has no random ops)",
    aten.rand: "random numbers (fz has no random ops)", aten.randn: "random numbers (fz has no random ops)",
    aten.gather: "indexing (fz has no gather)", aten.index: "indexing (fz has no gather)",
    aten.embedding: "indexing (fz has no gather)", aten.scatter: "indexing (fz has no scatter)",
    aten.cat: "concatenation (fz has no concatenation)", aten.slice: "a slice (fz reads whole tensors)",
    aten.select: "a slice (fz reads whole tensors)", aten.copy_: "writes into an input",
    aten.argmax: "an index-valued reduction", aten.argmin: "an index-valued reduction",
    aten.cumsum: "a scan (fz has no scans)", aten.prod: "product reduction (fz has sum, mean, max, min)",
    prims.iota: "an index sequence (fz has no iota)", aten.arange: "an index sequence (fz has no iota)",
    aten.sym_size: "a size, computed by PyTorch",
}


def _dtype(n):
    return n.meta["val"].dtype


def _float_result(v):
    return v.dtype if v.dtype is not None and v.dtype.is_floating_point else torch.float32


def _tshape(n):
    return shape_keys(n.meta["val"])


def ew(t, n, fmt, args, kind=KIND.DEFAULT, result="natural"):
    """An elementwise op: format `fmt` with the operands (cast to PyTorch's
    common dtype), and bind it. `result` is the dtype fz gives the
    expression: "natural" (the operands' promotion), "bool", or "common"."""
    vals, common = t.coerce([t.arg(a) for a in args], args, kind)
    text = fmt.format(*[v.text for v in vals])
    dtype = {"natural": lambda: natural(vals), "bool": lambda: torch.bool, "common": lambda: common}[result]()
    shape, k = t.broadcast(vals, _tshape(n))
    return t.bind(n, text, dtype, shape, k)


def unary(t, n, fmt, dtype):
    v = t.arg(n.args[0])
    return t.bind(n, fmt.format(v.text), dtype, v.shape, v.k)


# ---- elementwise, one operand ----------------------------------------------------------

_FLOAT_FNS = {aten.exp: "exp", aten.exp2: "exp2", aten.log: "log", aten.log2: "log2", aten.log1p: "log1p",
              aten.expm1: "expm1", aten.sqrt: "sqrt", aten.rsqrt: "rsqrt", aten.sin: "sin", aten.cos: "cos",
              aten.tanh: "tanh", aten.erf: "erf", aten.sigmoid: "sigmoid"}
_FLOAT_FNS_11 = {aten.tan: "tan", aten.atan: "atan", aten.asin: "asin", aten.acos: "acos",
                 aten.sinh: "sinh", aten.cosh: "cosh"}


@lowers(*[p.default for p in _FLOAT_FNS], *[p.default for p in _FLOAT_FNS_11])
def _float_fn(t, n):
    packet = n.target.overloadpacket
    name = _FLOAT_FNS.get(packet) or _FLOAT_FNS_11[packet]
    if packet in _FLOAT_FNS_11 and name not in t.features:
        raise Unsupported(f"needs the fz 1.1 builtin '{name}', which this libfusec lacks")
    v = t.arg(n.args[0])
    return t.bind(n, f"{name}({v.text})", _float_result(v), v.shape, v.k)


@lowers(aten.relu.default)
def _relu(t, n):
    v = t.arg(n.args[0])
    if v.dtype.is_floating_point:
        return unary(t, n, "relu({})", v.dtype)
    return unary(t, n, "maximum({}, 0)", v.dtype)


@lowers(aten.abs.default)
def _abs(t, n):
    v = t.arg(n.args[0])
    return unary(t, n, "abs({})", torch.float32 if v.dtype == torch.bool else v.dtype)


@lowers(aten.neg.default)
def _neg(t, n):
    return unary(t, n, "-{}", t.arg(n.args[0]).dtype)


@lowers(aten.reciprocal.default)
def _reciprocal(t, n):
    return ew(t, n, "1 / {0}", [n.args[0]], KIND.INT_TO_FLOAT)


@lowers(aten.floor.default, aten.ceil.default, aten.round.default, aten.trunc.default)
def _rounding(t, n):
    v = t.arg(n.args[0])
    if not v.dtype.is_floating_point:
        return t.as_view(n, v)  # PyTorch gives integers back unchanged
    name = n.target.overloadpacket.__name__
    if name == "trunc":
        return unary(t, n, "where({0} < 0, ceil({0}), floor({0}))", v.dtype)
    return unary(t, n, name + "({})", v.dtype)


@lowers(aten.sign.default, aten.sgn.default)
def _sign(t, n):
    v = t.arg(n.args[0])
    if v.dtype == torch.bool:
        return t.as_view(n, v)
    d = fz_dtype(v.dtype)
    return unary(t, n, f"{d}({{0}} > 0) - {d}({{0}} < 0)", v.dtype)


@lowers(aten.isnan.default, aten.isinf.default)
def _isnan(t, n):
    return unary(t, n, n.target.overloadpacket.__name__ + "({})", torch.bool)


@lowers(aten.isfinite.default)
def _isfinite(t, n):
    return unary(t, n, "!(isnan({0}) || isinf({0}))", torch.bool)


@lowers(aten.logical_not.default)
def _logical_not(t, n):
    v = t.arg(n.args[0])
    return unary(t, n, "!{}" if v.dtype == torch.bool else "!bool({})", torch.bool)


@lowers(aten.bitwise_not.default)
def _bitwise_not(t, n):
    v = t.arg(n.args[0])
    if v.dtype == torch.bool:
        return unary(t, n, "!{}", torch.bool)
    if v.dtype.is_floating_point:
        raise Unsupported("on a float")
    return unary(t, n, "-{} - 1", v.dtype)  # ~x in two's complement, wrapping included


# ---- elementwise, two or three operands ------------------------------------------------


def _alpha(n, text):
    alpha = n.kwargs.get("alpha", 1)
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
        raise Unsupported(f"alpha {alpha!r} is not a number")
    return text if alpha == 1 else f"{text} * {literal(alpha)}"


@lowers(aten.add.Tensor, aten.add.Scalar)
def _add(t, n):
    if _dtype(n) == torch.bool:
        return ew(t, n, "{0} || {1}", n.args[:2])
    return ew(t, n, "{0} + " + _alpha(n, "{1}"), n.args[:2])


@lowers(aten.sub.Tensor, aten.sub.Scalar)
def _sub(t, n):
    return ew(t, n, "{0} - " + _alpha(n, "{1}"), n.args[:2])


@lowers(aten.rsub.Tensor, aten.rsub.Scalar)
def _rsub(t, n):
    return ew(t, n, "{1} - " + _alpha(n, "{0}"), n.args[:2])


@lowers(aten.mul.Tensor, aten.mul.Scalar)
def _mul(t, n):
    if _dtype(n) == torch.bool:
        return ew(t, n, "{0} && {1}", n.args[:2])
    return ew(t, n, "{0} * {1}", n.args[:2])


@lowers(aten.div.Tensor, aten.div.Scalar, aten.true_divide.Tensor, prims.div.default)
def _div(t, n):
    if n.target is prims.div.default and not _dtype(n).is_floating_point:
        return ew(t, n, "{0} / {1}", n.args[:2])  # prims.div truncates integers, as fz does
    return ew(t, n, "{0} / {1}", n.args[:2], KIND.INT_TO_FLOAT)


@lowers(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(t, n):
    mode = n.kwargs.get("rounding_mode")
    if mode is None:
        return ew(t, n, "{0} / {1}", n.args[:2], KIND.INT_TO_FLOAT)
    a, b = t.coerce([t.arg(x) for x in n.args[:2]], n.args[:2])[0]
    shape, k = t.broadcast([a, b], _tshape(n))
    dtype = _dtype(n)
    if not dtype.is_floating_point:
        if mode == "trunc":
            return t.bind(n, f"{a.text} / {b.text}", dtype, shape, k)
        q = f"{a.text} / {b.text}"
        fix = f"({a.text} % {b.text} != 0) && (({a.text} < 0) != ({b.text} < 0))"
        return t.bind(n, f"where({fix}, {q} - 1, {q})", dtype, shape, k)
    like = Val("", dtype, shape, k, _tshape(n))
    q = t.temp(n, "q", f"{a.text} / {b.text}", dtype, like)
    if mode == "trunc":
        return t.bind(n, f"where({q.text} < 0, ceil({q.text}), floor({q.text}))", dtype, shape, k)
    # ATen's div_floor_floating: exact where floor(a / b) would round first.
    m = t.temp(n, "mod", f"{a.text} % {b.text}", dtype, like)
    d = t.temp(n, "div", f"({a.text} - {m.text}) / {b.text}", dtype, like)
    d = t.temp(n, "div1", f"where(({m.text} != 0) && (({b.text} < 0) != ({m.text} < 0)), {d.text} - 1, {d.text})",
               dtype, like)
    f = t.temp(n, "floor", f"floor({d.text})", dtype, like)
    f = t.temp(n, "floor1", f"where({d.text} - {f.text} > 0.5, {f.text} + 1, {f.text})", dtype, like)
    return t.bind(n, f"where({b.text} == 0, {q.text}, where({d.text} != 0, {f.text}, {q.text} * 0))",
                  dtype, shape, k)


@lowers(aten.remainder.Tensor, aten.remainder.Scalar)
def _remainder(t, n):
    a, b = t.coerce([t.arg(x) for x in n.args[:2]], n.args[:2])[0]
    shape, k = t.broadcast([a, b], _tshape(n))
    like = Val("", _dtype(n), shape, k, _tshape(n))
    m = t.temp(n, "mod", f"{a.text} % {b.text}", _dtype(n), like)
    fix = f"({m.text} != 0) && (({m.text} < 0) != ({b.text} < 0))"
    return t.bind(n, f"where({fix}, {m.text} + {b.text}, {m.text})", _dtype(n), shape, k)


@lowers(aten.fmod.Tensor, aten.fmod.Scalar)
def _fmod(t, n):
    return ew(t, n, "{0} % {1}", n.args[:2])


# The exponents ATen's pow_tensor_scalar_optimized_kernel computes without pow.
_POW = {1: "{0}", 2: "{0} * {0}", 3: "{0} * {0} * {0}", 0.5: "sqrt({0})", -0.5: "rsqrt({0})",
        -1: "1 / {0}", -2: "1 / ({0} * {0})"}


@lowers(aten.pow.Tensor_Scalar)
def _pow_scalar(t, n):
    e = n.args[1]
    if type(e) in (int, float) and e in _POW and _dtype(n).is_floating_point:
        x = t.cast(t.arg(n.args[0]), _dtype(n))
        return t.bind(n, _POW[e].format(x.text), _dtype(n), x.shape, x.k)
    return ew(t, n, "pow({0}, {1})", n.args[:2], KIND.BOOL_TO_LONG)


@lowers(aten.pow.Tensor_Tensor, aten.pow.Scalar)
def _pow(t, n):
    return ew(t, n, "pow({0}, {1})", n.args[:2], KIND.BOOL_TO_LONG)


@lowers(aten.maximum.default, aten.minimum.default)
def _maxmin(t, n):
    return ew(t, n, n.target.overloadpacket.__name__ + "({0}, {1})", n.args[:2])


@lowers(aten.clamp.default, aten.clamp.Tensor, aten.clamp_min.default, aten.clamp_min.Tensor,
        aten.clamp_max.default, aten.clamp_max.Tensor)
def _clamp(t, n):
    name = n.target.overloadpacket.__name__
    x = n.args[0]
    if name == "clamp":
        lo = n.args[1] if len(n.args) > 1 else n.kwargs.get("min")
        hi = n.args[2] if len(n.args) > 2 else n.kwargs.get("max")
    else:
        lo, hi = (n.args[1], None) if name == "clamp_min" else (None, n.args[1])
    args, fmt = [x], "{0}"
    if lo is not None:
        args.append(lo)
        fmt = f"maximum({fmt}, {{{len(args) - 1}}})"
    if hi is not None:
        args.append(hi)
        fmt = f"minimum({fmt}, {{{len(args) - 1}}})"
    return ew(t, n, fmt, args)


@lowers(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(t, n):
    c = t.arg(n.args[0])
    if c.dtype != torch.bool:
        raise Unsupported("the condition is not bool")
    vals, _ = t.coerce([t.arg(a) for a in n.args[1:3]], n.args[1:3])
    shape, k = t.broadcast([c] + vals, _tshape(n))
    return t.bind(n, f"where({c.text}, {vals[0].text}, {vals[1].text})", natural(vals), shape, k)


_CMP = {aten.eq: "==", aten.ne: "!=", aten.lt: "<", aten.le: "<=", aten.gt: ">", aten.ge: ">="}


@lowers(*[p.Tensor for p in _CMP], *[p.Scalar for p in _CMP])
def _compare(t, n):
    return ew(t, n, "{0} " + _CMP[n.target.overloadpacket] + " {1}", n.args[:2], KIND.ALWAYS_BOOL, "bool")


def _as_bool(t, x):
    v = t.arg(x)
    return v if v.dtype == torch.bool else Val(f"bool({v.text})", torch.bool, v.shape, v.k, v.torch)


@lowers(aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default)
def _logical(t, n):
    op = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}[n.target.overloadpacket.__name__]
    a, b = _as_bool(t, n.args[0]), _as_bool(t, n.args[1])
    shape, k = t.broadcast([a, b], _tshape(n))
    return t.bind(n, f"{a.text} {op} {b.text}", torch.bool, shape, k)


_BITWISE = {aten.bitwise_and: ("&", "&&"), aten.bitwise_or: ("|", "||"), aten.bitwise_xor: ("^", "!=")}


@lowers(*[p.Tensor for p in _BITWISE], *[p.Scalar for p in _BITWISE])
def _bitwise(t, n):
    op, logical = _BITWISE[n.target.overloadpacket]
    if _dtype(n) == torch.bool:
        return ew(t, n, "{0} " + logical + " {1}", n.args[:2])
    if "bitwise" not in t.features:
        raise Unsupported("needs fz 1.1's bitwise operators, which this libfusec lacks")
    return ew(t, n, "{0} " + op + " {1}", n.args[:2])


@lowers(aten.atan2.default, aten.hypot.default)
def _binary_float_11(t, n):
    name = n.target.overloadpacket.__name__
    if name not in t.features:
        raise Unsupported(f"needs the fz 1.1 builtin '{name}', which this libfusec lacks")
    return ew(t, n, name + "({0}, {1})", n.args[:2], KIND.INT_TO_FLOAT)


# ---- casts, constants, identities, views ----------------------------------------------


@lowers(prims.convert_element_type.default, aten._to_copy.default)
def _convert(t, n):
    for key, value in n.kwargs.items():
        if key not in ("dtype", "layout", "device", "memory_format", "pin_memory", "non_blocking") or (
                key == "memory_format" and value not in (None, torch.preserve_format, torch.contiguous_format)):
            raise Unsupported(f"{key}={value}")
    v = t.arg(n.args[0])
    val = n.meta["val"]
    if n.args[0].meta["val"].device != val.device:
        raise Unsupported("moves between devices")
    fz_dtype(val.dtype)
    if v.dtype == val.dtype:
        return t.as_view(n, v)
    return t.bind(n, f"{fz_dtype(val.dtype)}({v.text})", val.dtype, v.shape, v.k)


@lowers(aten.full.default, aten.scalar_tensor.default, aten.full_like.default)
def _full(t, n):
    value = n.args[1] if n.target is not aten.scalar_tensor.default else n.args[0]
    if not isinstance(value, (int, float, bool)):
        raise Unsupported(f"fill value {value!r} is not a Python number")
    dtype = _dtype(n)
    text = literal(int(value) if isinstance(value, bool) else value)
    return Val(f"{fz_dtype(dtype)}({text})", dtype, (), 0, _tshape(n), source="const")


# Ops whose translation depends on the value they reshape (see graph.py).
VIEW_OPS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.unsqueeze.default,
            aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, prims.squeeze.default,
            aten.permute.default, aten.transpose.int, aten.t.default}


@lowers(aten.alias.default, aten.clone.default, aten.detach.default, aten.lift_fresh_copy.default,
        aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.unsqueeze.default,
        aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, prims.squeeze.default)
def _view(t, n):
    if n.target is aten.clone.default and n.kwargs.get("memory_format") not in (
            None, torch.preserve_format, torch.contiguous_format):
        raise Unsupported("copies into another memory layout")
    return t.as_view(n, t.arg(n.args[0]))


@lowers(aten.permute.default, aten.transpose.int, aten.t.default)
def _permute(t, n):
    # A permutation that keeps the order of the dims of size other than 1
    # moves no data: a reshape for fz.
    v = t.arg(n.args[0])
    tin = v.torch
    if n.target is aten.permute.default:
        perm = [d % len(tin) for d in n.args[1]]
    else:
        perm = list(range(len(tin)))
        i, j = (n.args[1] % len(tin), n.args[2] % len(tin)) if n.target is aten.transpose.int else (0, len(tin) - 1)
        perm[i], perm[j] = perm[j], perm[i]
    moved = [p for p in perm if tin[p] != 1]
    if moved != sorted(moved):
        raise Unsupported("moves data between dims (fz has no transpose)")
    return t.as_view(n, v)


@lowers(aten.expand.default, prims.broadcast_in_dim.default)
def _expand(t, n):
    v = t.arg(n.args[0])
    tout = _tshape(n)
    if n.target is prims.broadcast_in_dim.default and list(n.args[2]) != list(
            range(len(tout) - len(v.torch), len(tout))):
        raise Unsupported("broadcasts to other than the trailing dims")
    if align(v.shape, v.k, tout) is None:
        raise Unsupported("broadcasts differently in fz")
    return Val(v.text, v.dtype, v.shape, v.k, tout, weak=v.weak, source=v.source)


@lowers(aten.slice.Tensor)
def _slice(t, n):
    # Only the slice that takes everything (x[:, :]), an identity.
    v = t.arg(n.args[0])
    start = n.args[2] if len(n.args) > 2 else None
    step = n.args[4] if len(n.args) > 4 else 1
    if start not in (None, 0) or step != 1 or _tshape(n) != v.torch:
        raise Unsupported("a slice (fz reads whole tensors)")
    return t.as_view(n, v)


@lowers(operator.getitem)
def _getitem(t, n):
    src = n.args[0]
    vals = t.vals.get(src) if src in t.members else None
    if not isinstance(vals, tuple):
        raise Unsupported("getitem of a value computed by PyTorch")
    return vals[n.args[1]]


# ---- last-axis reductions ----------------------------------------------------------------


def _reduce_dims(t, n, v, dims):
    """Check that `dims` reduces the last axis (and otherwise only size-1
    dims) of `v`; returns the keepdim value's shape and k."""
    tin = v.torch
    rank = len(tin)
    dims = list(range(rank)) if dims is None or list(dims) == [] else [d % max(rank, 1) for d in dims]
    if rank == 0:
        raise Unsupported("reduces a 0-dim tensor")
    if rank - 1 not in dims or any(tin[d] != 1 for d in dims if d != rank - 1):
        raise Unsupported("reduces an axis other than the last (fz reduces rows)")
    if v.k:
        raise Unsupported("reduces a tensor already reduced without keepdim")
    if not v.shape or v.shape[-1] == 1 and tin[-1] != 1:
        raise Unsupported("reduces along a broadcast (fz would reduce a size-1 axis)")
    return v.shape[:-1] + (1,), dims


def reduction(t, n, fn, x, dims, keepdim, dtype=None):
    v = t.arg(x)
    shape, dims = _reduce_dims(t, n, v, dims)
    if dtype is not None and dtype != v.dtype:
        v = t.cast(v, dtype)
    text = f"{fn}({v.text})"
    fz = {"sum": torch.int64 if not v.dtype.is_floating_point else v.dtype,
          "mean": v.dtype if v.dtype.is_floating_point else torch.float32}.get(fn, v.dtype)
    kept = tuple(1 if p in dims else s for p, s in enumerate(v.torch))
    val = Val(text, fz, shape, 0, kept)
    k = 0 if keepdim else t.reshape(val, _tshape(n))
    return t.bind(n, text, fz, shape, k)


@lowers(aten.sum.dim_IntList, aten.mean.dim, aten.amax.default, aten.amin.default, aten.any.dim,
        aten.any.dims, aten.all.dim, aten.all.dims)
def _reduce(t, n):
    fn = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min", "any": "max", "all": "min"}[
        n.target.overloadpacket.__name__]
    dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    if isinstance(dims, int):
        dims = [dims]
    keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    x = n.args[0]
    if fn in ("max", "min") and n.target.overloadpacket in (aten.any, aten.all):
        x_val = t.arg(x)
        if x_val.dtype != torch.bool:
            raise Unsupported("of a non-bool tensor")
    return reduction(t, n, fn, x, dims, keepdim, n.kwargs.get("dtype"))


@lowers(aten.sum.default, aten.mean.default, aten.max.default, aten.min.default, aten.any.default,
        aten.all.default)
def _reduce_all(t, n):
    fn = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "any": "max", "all": "min"}[
        n.target.overloadpacket.__name__]
    return reduction(t, n, fn, n.args[0], None, False, n.kwargs.get("dtype"))


def _var(t, n, with_mean):
    """var (and var_mean): the mean of squared deviations, scaled by
    N / (N - correction); N must be known when the correction is not 0."""
    x = n.args[0]
    dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    correction = n.kwargs.get("correction", 1)
    correction = 1 if correction is None else correction
    keepdim = n.kwargs.get("keepdim", False)
    v = t.arg(x)
    if not v.dtype.is_floating_point:
        raise Unsupported("of a non-float tensor")
    shape, dims = _reduce_dims(t, n, v, dims)
    rows = v.torch[-1]
    kept = tuple(1 if p in dims else s for p, s in enumerate(v.torch))
    like = Val("", v.dtype, shape, 0, kept)
    mean = t.temp(n, "mean", f"mean({v.text})", v.dtype, like)
    dev = Val("", v.dtype, v.shape, 0, v.torch)
    dev = t.temp(n, "dev", f"{v.text} - {mean.text}", v.dtype, dev)
    text = f"mean({dev.text} * {dev.text})"
    if correction != 0 and isinstance(rows, int):
        text += f" * {literal(rows / (rows - correction)) if rows != correction else literal(float('inf'))}"
    elif correction != 0:
        # The row's length is a run-time size: an input.
        rows = t.size(rows, f"{n.name}_rows")
        text = f"sum({dev.text} * {dev.text}) / ({rows.text} - {literal(correction)})"
    k = 0 if keepdim else t.reshape(Val("", v.dtype, shape, 0, kept), shape_keys(n.meta["val"][0]
                                                                                if with_mean else n.meta["val"]))
    if not with_mean:
        return t.bind(n, text, v.dtype, shape, k)
    var = t.temp(n, "var", text, v.dtype, Val("", v.dtype, shape, k, shape_keys(n.meta["val"][0])))
    return (var, Val(mean.text, v.dtype, shape, k, shape_keys(n.meta["val"][1]), source="binding"))


@lowers(aten.var.correction)
def _var_only(t, n):
    return _var(t, n, False)


@lowers(aten.var_mean.correction)
def _var_mean(t, n):
    return _var(t, n, True)


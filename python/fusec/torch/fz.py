"""What the backend knows of the fz language: dtype names, the promotion
table, literals, names it may not bind, and the values and dimensions a
region is written in.

Translation mirrors fz's type rules (docs/language.md) here, in one place,
so that it can tell where fz would compute in another dtype than PyTorch
does and write a cast there, and nowhere else.

A region value (`Val`) carries two shapes. `shape` is its fz shape: a tuple
of `Dim`s and literal 1s (a `Dim` is a run-time size, unified with the dims
it meets in a broadcast, since fz broadcasts only equal names); `k` counts
trailing 1s of it that the PyTorch tensor does not have (a last-axis
reduction without keepdim). `torch` is PyTorch's shape, as size keys (ints,
or sympy expressions under dynamic shapes). The invariant: the fz shape less
its k trailing 1s, aligned from the right, gives every dim of the PyTorch
tensor either the same size or a 1 (the tensor is constant along that dim:
a broadcast). Right alignment is what both fz and NumPy broadcast by, so
elementwise ops keep the invariant; reductions and reshapes check it.
"""

import math

import torch

__all__ = ["FZ_DTYPE", "fz_dtype", "promote", "natural", "literal", "Dim", "Val", "Unsupported",
           "size_key", "shape_keys", "RESERVED"]


class Unsupported(Exception):
    """A node that fz cannot express; the message is the reason shown to the
    user ("aten.mm: matrix multiply stays in PyTorch")."""


FZ_DTYPE = {
    torch.bool: "bool", torch.int32: "i32", torch.int64: "i64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
}

# The language's promotion order; f16 with bf16 gives f32 (promote()).
_RANK = {torch.bool: 0, torch.int32: 1, torch.int64: 2, torch.float16: 3, torch.bfloat16: 3,
         torch.float32: 4, torch.float64: 5}

# Reserved words and builtins (fz 1.1): a binding may not take these names.
RESERVED = frozenset("""in out fn f16 bf16 f32 f64 i32 i64 bool
abs exp exp2 log log2 log1p expm1 sqrt rsqrt sin cos tanh erf sigmoid relu silu gelu gelu_tanh
floor ceil round isnan isinf minimum maximum pow where clamp sum mean max min
tan atan asin acos sinh cosh reciprocal sign trunc softplus mish hardswish hardsigmoid elu
isfinite atan2 hypot logaddexp leaky_relu""".split())


def fz_dtype(dtype):
    """The fz name of a torch dtype; Unsupported for one fz lacks."""
    name = FZ_DTYPE.get(dtype)
    if name is None:
        raise Unsupported(f"dtype {str(dtype).replace('torch.', '')} has no fz equivalent")
    return name


def promote(a, b):
    """fz's promotion of two typed operands."""
    if a == b:
        return a
    if {a, b} == {torch.float16, torch.bfloat16}:
        return torch.float32
    return a if _RANK[a] > _RANK[b] else b


def natural(vals):
    """The dtype fz gives an arithmetic operation on `vals`: typed operands
    promote by the table, then weak literals only lift the category."""
    typed = [v.dtype for v in vals if v.dtype is not None]
    r = None
    for t in typed:
        r = t if r is None else promote(r, t)
    if any(v.weak == "float" for v in vals) and (r is None or not r.is_floating_point):
        return torch.float32
    if r is None or r == torch.bool and any(v.weak == "int" for v in vals):
        return torch.int32
    return r


def literal(v):
    """fz text of a Python number. Literals are never negative in fz, and
    infinities and NaN are spelled as constant expressions (folded)."""
    if isinstance(v, bool):
        return "bool(1)" if v else "bool(0)"
    if isinstance(v, int):
        if v >= 2**63 or v < -2**63:
            raise Unsupported(f"integer constant {v} does not fit in i64")
        if v == -2**63:
            return "(-9223372036854775807 - 1)"
        return str(v) if v >= 0 else f"(-{-v})"
    if math.isnan(v):
        return "(0.0 / 0.0)"
    if math.isinf(v):
        return "(1.0 / 0.0)" if v > 0 else "(-1.0 / 0.0)"
    text = repr(abs(v))
    if "." not in text and "e" not in text:
        text += ".0"
    return f"(-{text})" if math.copysign(1.0, v) < 0 else text


def size_key(s):
    """A size or stride as a comparable key: an int, or under dynamic
    shapes the sympy expression of a SymInt (an int when it is one)."""
    if isinstance(s, int):
        return s
    expr = s.node.expr
    return int(expr) if expr.is_number else expr


def shape_keys(t):
    return tuple(size_key(s) for s in t.shape)


class Dim:
    """A run-time fz dimension, with union-find over the dims broadcasting
    makes equal. `key` is PyTorch's size for it (see size_key)."""

    __slots__ = ("key", "parent", "name")

    def __init__(self, key):
        self.key, self.parent, self.name = key, None, None

    def find(self):
        d = self
        while d.parent is not None:
            d = d.parent
        return d

    def union(self, other):
        a, b = self.find(), other.find()
        if a is not b:
            b.parent = a


class Val:
    """A value in a region: `text` is how fz refers to it (a binding's name,
    an input's, or a literal's text). `dtype` is its fz dtype as a torch
    dtype, None for a weak literal, whose kind is `weak` ("int", "float").
    See the module's comment for `shape`, `k` and `torch`."""

    __slots__ = ("text", "dtype", "weak", "shape", "k", "torch", "source", "value")

    def __init__(self, text, dtype, shape=(), k=0, torch_shape=(), weak=None, source=None, value=None):
        self.text, self.dtype, self.weak, self.value = text, dtype, weak, value
        self.shape, self.k, self.torch = tuple(shape), k, tuple(torch_shape)
        # What holds it: "binding" (a name this region computes), "input",
        # or "const" (a literal or constant expression, whose Python number
        # is `value` for a weak literal).
        self.source = source

    @property
    def is_scalar(self):
        """True when the fz value broadcasts like a scalar (all 1s or rank 0)."""
        return all(d == 1 for d in self.shape)

    def __repr__(self):
        return f"Val({self.text!r}, {self.dtype}, {self.shape}, k={self.k}, torch={self.torch})"

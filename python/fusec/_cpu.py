"""The CPU reference: NumPy arrays in, the interpreter (fz_program_run_cpu),
NumPy arrays out. Slow and exact (f32 sums in f64): the oracle the GPU is
checked against, and a way to use and test programs without a GPU.

Dtypes are checked, not converted: an f32 input takes a float32 array, and
a float64 one is an error that says how to convert, as on the GPU. The CPU
copies freely, so arrays need not be contiguous. bf16 has no NumPy dtype:
a bf16 input takes an ml_dtypes.bfloat16 array when ml_dtypes is installed,
or a float32 array (rounded to nearest even, as torch does); bf16 outputs
are ml_dtypes.bfloat16 arrays when ml_dtypes is installed, else float32
arrays holding the bf16 values exactly.

Scalar inputs take Python or NumPy numbers, converted as the C API does
(fz_run_bind_scalar): integers must be exact, halves round to nearest even.
"""

import ctypes
import math

import numpy as np

from . import _lib

try:
    import ml_dtypes
    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    _BF16 = None

_NP = {"bool": np.dtype(np.bool_), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
       "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}

_FLOAT_HINT = {"f32": "np.float32", "f64": "np.float64", "f16": "np.float16", "i32": "np.int32",
               "i64": "np.int64", "bool": "bool", "bf16": "ml_dtypes.bfloat16 or np.float32"}


def numpy_dtype(fz):
    """The NumPy dtype holding an fz dtype's values (bf16: see the module doc)."""
    if fz == "bf16":
        return _BF16 if _BF16 is not None else np.dtype(np.float32)
    return _NP[fz]


def to_bf16_bits(a):
    """float32 values -> bf16 bit patterns (uint16), rounded to nearest even."""
    a = np.asarray(a, dtype=np.float32)
    b = np.ascontiguousarray(a).view(np.uint32).reshape(a.shape)  # (ascontiguousarray makes 0-d 1-d)
    r = ((b + (np.uint32(0x7FFF) + ((b >> 16) & 1))) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), r)


def _array(spec, x):
    """An input tensor as a C-ordered array in storage format."""
    if not isinstance(x, np.ndarray):
        x = _from_dlpack(spec, x)
    if x.ndim != len(spec.shape):
        raise ValueError(f"input '{spec.name}' is {_decl(spec)} (rank {len(spec.shape)}); got an array of "
                         f"shape {tuple(x.shape)} (rank {x.ndim})")
    if spec.dtype == "bf16":
        if _BF16 is not None and x.dtype == _BF16:
            return np.ascontiguousarray(x)
        if x.dtype == np.float32:
            return to_bf16_bits(x)
    elif x.dtype == _NP[spec.dtype]:
        return np.ascontiguousarray(x)
    raise TypeError(f"input '{spec.name}' is {_decl(spec)}: got a {x.dtype} array "
                    f"(convert it with .astype({_FLOAT_HINT[spec.dtype]}))")


def _from_dlpack(spec, x):
    if hasattr(x, "__dlpack__") or type(x).__name__ == "PyCapsule":
        from . import _dlpack
        return _dlpack.to_numpy(x, spec.name)
    raise TypeError(f"input '{spec.name}' is the tensor {_decl(spec)}: got {type(x).__name__} "
                    "(the CPU reference takes NumPy arrays)")


def scalar_bits(spec, v):
    """A scalar input's value as a one-element array of its dtype."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, (bool, np.bool_)):
        v = int(v)
    if not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"input '{spec.name}' is a scalar {spec.dtype}: got {type(v).__name__} "
                        "(pass a Python number)")
    t = spec.dtype
    if t == "bool":
        return np.array(v != 0, dtype=np.bool_)
    if t in ("i32", "i64"):
        info = np.iinfo(_NP[t])
        exact = isinstance(v, (int, np.integer)) or (math.isfinite(v) and float(v).is_integer())
        if not exact or not info.min <= int(v) <= info.max:
            raise ValueError(f"input '{spec.name}' is {t}: {v!r} is not a value of that type")
        return np.array(int(v), dtype=_NP[t])
    if t == "bf16":
        # one rounding, from the double (as the C API's fz_run_bind_scalar)
        return to_bf16_bits(np.array(_round_f32_odd(float(v)), dtype=np.float32))
    return np.array(v, dtype=_NP[t])


def _round_f32_odd(v):
    """v rounded to float32 to odd (the inexact case keeps the neighbour whose
    last bit is 1), so that rounding the result to bf16 rounds v once."""
    f = np.float32(v)
    if float(f) == v or not math.isfinite(v):
        return f
    g = np.nextafter(f, np.float32(math.copysign(math.inf, v - float(f))))
    return f if np.array(f).view(np.uint32) & 1 else g


def run(prog, args):
    ins = []
    for spec, x in zip(prog.inputs, args):
        ins.append(_array(spec, x) if spec.shape else scalar_bits(spec, x))
    n = len(ins)
    shapes = [d for a in ins for d in a.shape]
    in_shapes = (ctypes.c_int64 * max(len(shapes), 1))(*shapes)
    ptrs = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in ins])
    out_dims = (ctypes.c_int64 * max(sum(len(s.shape) for s in prog.outputs), 1))()
    dims = (ctypes.c_int64 * max(len(prog.dims), 1))()
    L = _lib.lib
    _lib.check(L.fz_program_shapes(prog._handle, in_shapes, dims, out_dims),
               L.fz_program_error(prog._handle).decode("utf-8", "replace"))
    outs, k = [], 0
    for spec in prog.outputs:
        r = len(spec.shape)
        shape = tuple(out_dims[k:k + r])
        k += r
        storage = np.uint16 if spec.dtype == "bf16" else _NP[spec.dtype]
        outs.append(np.empty(shape, dtype=storage))
    optrs = (ctypes.c_void_p * max(len(outs), 1))(*[o.ctypes.data for o in outs])
    _lib.check(L.fz_program_run_cpu(prog._handle, ptrs, in_shapes, optrs),
               L.fz_program_error(prog._handle).decode("utf-8", "replace"))
    outs = [_bf16_out(o) if s.dtype == "bf16" else o for s, o in zip(prog.outputs, outs)]
    return prog._result(outs)


def _bf16_out(bits):
    if _BF16 is not None:
        return bits.view(_BF16)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _decl(s):
    return s.dtype + (f"[{', '.join(str(d) for d in s.shape)}]" if s.shape else "")

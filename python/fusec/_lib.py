"""The C library, through ctypes: where it is found, the prototypes of the
calls the package makes, and the status codes turned into exceptions.

The library is found, in order, at $FUSEC_LIBRARY, inside the installed
package (what `pip install .` puts there), or in the build tree next to a
source checkout (build/libfusec.so), so `PYTHONPATH=python` works in a tree
built by tools/setup.sh.

Two handles on the same library: `lib` (ctypes.CDLL) releases the GIL
around a call, for compiling and copying, which can take milliseconds;
`fast` (ctypes.PyDLL) keeps it, for the launch, which takes microseconds:
releasing and taking the GIL back would cost more, and holding it means no
other Python thread can touch the run while C uses it.
"""

import ctypes
import os

from ._errors import CompileError, Error

__all__ = ["lib", "fast", "path", "check", "DTYPES", "DTYPE_SIZES"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAMES = ("libfusec.so", "libfusec.so.0")


def _candidates():
    env = os.environ.get("FUSEC_LIBRARY")
    if env:
        return [env]
    tree = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build")
    return [os.path.join(d, n) for d in (_HERE, tree) for n in _NAMES]


def _load():
    tried = _candidates()
    for p in tried:
        if os.path.exists(p):
            try:
                return p, ctypes.CDLL(p), ctypes.PyDLL(p)
            except OSError as e:
                raise ImportError(f"fusec: cannot load {p}: {e}") from None
    if os.environ.get("FUSEC_LIBRARY"):
        raise ImportError(f"fusec: FUSEC_LIBRARY names {tried[0]}, which does not exist")
    raise ImportError(
        "fusec: libfusec.so was not found (looked for " + ", ".join(tried) + "): install the package "
        "with 'pip install .' at the repository root, or point FUSEC_LIBRARY at a built library "
        "(build/libfusec.so after tools/setup.sh)")


path, lib, fast = _load()

# fz_dtype, in the header's order: the language's names, and sizes in bytes.
DTYPES = ("bool", "i32", "i64", "f16", "bf16", "f32", "f64")
DTYPE_SIZES = (1, 4, 8, 2, 2, 4, 8)

# fz_status, in the header's order.
_STATUS = ("FZ_OK", "FZ_ERR_PROGRAM", "FZ_ERR_ARGUMENT", "FZ_ERR_NOMEM", "FZ_ERR_LIMIT", "FZ_ERR_IO",
           "FZ_ERR_BINDING", "FZ_ERR_RUNTIME", "FZ_ERR_NO_DRIVER", "FZ_ERR_NO_DEVICE", "FZ_ERR_CUDA",
           "FZ_ERR_DEVICE_MEMORY", "FZ_ERR_NVRTC", "FZ_ERR_CACHE", "FZ_ERR_INTERNAL")
OK, ERR_PROGRAM, ERR_ARGUMENT, ERR_NOMEM, ERR_LIMIT, ERR_IO, ERR_BINDING, ERR_RUNTIME = range(8)


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * 8), ("dim_names", ctypes.c_char_p * 8)]


class Diag(ctypes.Structure):
    _fields_ = [("file", ctypes.c_char * 256), ("line", ctypes.c_int), ("col", ctypes.c_int),
                ("len", ctypes.c_int), ("message", ctypes.c_char * 512), ("rendered", ctypes.c_char * 2048)]


class CompileOptions(ctypes.Structure):
    _fields_ = [("fuse", ctypes.c_int), ("disk_cache", ctypes.c_int)]


class Call(ctypes.Structure):
    """fz_call: a launch's run, stream and sizes, prepared once per signature and stream."""
    _fields_ = [("run", ctypes.c_void_p), ("stream", ctypes.c_void_p), ("in_shapes", ctypes.POINTER(ctypes.c_int64)),
                ("out_shapes", ctypes.POINTER(ctypes.c_int64))]


_vp, _i64p, _int, _sz, _cp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, ctypes.c_size_t, \
    ctypes.c_char_p

_PROTOS = {
    "fz_version": (_cp, []),
    "fz_last_error": (_cp, []),
    "fz_context_create": (_int, [_int, ctypes.POINTER(_vp)]),
    "fz_context_destroy": (None, [_vp]),
    "fz_context_warnings": (_cp, [_vp]),
    "fz_device_alloc": (_int, [_vp, _sz, ctypes.POINTER(_vp)]),
    "fz_device_free": (None, [_vp, _vp]),
    "fz_copy_to_device": (_int, [_vp, _vp, _vp, _sz]),
    "fz_copy_to_host": (_int, [_vp, _vp, _vp, _sz]),
    "fz_program_compile": (_int, [_vp, _cp, _cp, _sz, ctypes.POINTER(CompileOptions), ctypes.POINTER(_vp),
                                  ctypes.POINTER(Diag)]),
    "fz_program_destroy": (None, [_vp]),
    "fz_program_error": (_cp, [_vp]),
    "fz_program_name": (_cp, [_vp]),
    "fz_program_cuda_source": (_cp, [_vp]),
    "fz_program_num_kernels": (_int, [_vp]),
    "fz_program_num_inputs": (_int, [_vp]),
    "fz_program_num_outputs": (_int, [_vp]),
    "fz_program_num_dims": (_int, [_vp]),
    "fz_program_dim_name": (_cp, [_vp, _int]),
    "fz_program_input": (_int, [_vp, _int, ctypes.POINTER(TensorInfo)]),
    "fz_program_output": (_int, [_vp, _int, ctypes.POINTER(TensorInfo)]),
    "fz_program_explain": (_sz, [_vp, ctypes.c_char_p, _sz]),
    "fz_program_shapes": (_int, [_vp, _i64p, _i64p, _i64p]),
    "fz_program_run_cpu": (_int, [_vp, _vp, _i64p, _vp]),
    "fz_program_prepare": (_int, [_vp, _i64p]),
    "fz_program_set_interpret": (_int, [_vp, _int]),
    "fz_run_create": (_int, [_vp, _vp, ctypes.POINTER(_vp)]),
    "fz_run_destroy": (None, [_vp]),
    "fz_run_error": (_cp, [_vp]),
    "fz_run_set_graph": (_int, [_vp, _int]),
    "fz_run_synchronize": (_int, [_vp]),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args

# The launch, through the handle that keeps the GIL, with its two arguments
# as they come: a prepared fz_call's address (a c_void_p) and the call's
# pointers and scalars packed into bytes (struct.pack), which ctypes passes
# as a pointer to their storage. A ctypes call costs about 40 ns and 30 more
# an argument (measured on a CPU of the development machines), so the six
# arguments of a launch with arrays cost twice as much as these two.
call_launch = fast.fz_call_launch
call_launch.restype = ctypes.c_int


def last_error():
    return lib.fz_last_error().decode("utf-8", "replace")


def check(status, message=None):
    """Raise the exception for a failed status (message: the handle's, else
    the thread's last error)."""
    if status == OK:
        return
    if message is None:
        message = last_error()
    raise exception(status, message)


def exception(status, message):
    if status in (ERR_BINDING, ERR_RUNTIME, ERR_ARGUMENT, ERR_LIMIT):
        return ValueError(message)
    if status == ERR_NOMEM:
        return MemoryError(message)
    if status == ERR_PROGRAM:
        return CompileError(message, status=_STATUS[status])
    return Error(message, status=_STATUS[status] if 0 <= status < len(_STATUS) else str(status))

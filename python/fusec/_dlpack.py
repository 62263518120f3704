"""DLPack without a framework: reading a tensor's pointer, shape, dtype and
device from a capsule (or an object's __dlpack__), and exporting fusec's
own DeviceArrays as capsules. The structures are DLPack's stable ABI (the
"dltensor" capsule of DLManagedTensor).

A capsule this module reads is not consumed (not renamed), so it keeps
owning its memory; the caller holds it while the data is used. An exported
capsule keeps its DeviceArray alive until the consumer calls the deleter,
or until the capsule dies unconsumed.
"""

import ctypes
import threading

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
_INT, _UINT, _FLOAT, _BFLOAT, _BOOL = 0, 1, 2, 4, 6

# (code, bits) -> fz dtype name, and back
_FZ = {(_BOOL, 8): "bool", (_INT, 32): "i32", (_INT, 64): "i64", (_FLOAT, 16): "f16", (_BFLOAT, 16): "bf16",
       (_FLOAT, 32): "f32", (_FLOAT, 64): "f64"}
_CODE = {v: k for k, v in _FZ.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype, _api.PyCapsule_GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                                          ctypes.c_char_p]
_api.PyCapsule_IsValid.restype, _api.PyCapsule_IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype, _api.PyCapsule_New.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                                             _CapsuleDestructor]
# the same two calls on a capsule being destroyed, taken as a raw pointer (a
# py_object would take a reference to an object whose count is already 0)
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))


class View:
    """What a DLPack tensor holds, read from its capsule (kept alive here)."""

    def __init__(self, capsule, name):
        if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise ValueError(f"input '{name}': the DLPack capsule was already consumed")
        t = DLManagedTensor.from_address(_api.PyCapsule_GetPointer(capsule, b"dltensor")).dl_tensor
        self.capsule = capsule
        self.device_type, self.device_id = t.device.device_type, t.device.device_id
        self.ptr = (t.data or 0) + t.byte_offset
        self.shape = tuple(t.shape[k] for k in range(t.ndim))
        strides = tuple(t.strides[k] for k in range(t.ndim)) if t.strides else None
        self.contiguous = strides is None or _is_dense(self.shape, strides)
        self.strides = strides
        if t.dtype.lanes != 1 or (t.dtype.code, t.dtype.bits) not in _FZ:
            raise TypeError(f"input '{name}': DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, "
                            f"{t.dtype.lanes} lanes) is not one of fusec's dtypes")
        self.dtype = _FZ[(t.dtype.code, t.dtype.bits)]


def _is_dense(shape, strides):
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def view(x, name, stream=None):
    """A View of a capsule, or of an object's __dlpack__() (asked for `stream`)."""
    if type(x).__name__ == "PyCapsule":
        return View(x, name)
    try:
        cap = x.__dlpack__() if stream is None else x.__dlpack__(stream=stream)
    except TypeError:
        cap = x.__dlpack__()
    return View(cap, name)


class _Capsule:
    """A bare capsule as the object numpy.from_dlpack expects."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def to_numpy(x, name):
    """A host DLPack tensor as a NumPy array (for the CPU reference)."""
    import numpy as np
    cap = x if type(x).__name__ == "PyCapsule" else None
    dev = x.__dlpack_device__() if cap is None else (View(cap, name).device_type, 0)
    if dev[0] not in (CPU, CUDA_HOST):
        raise ValueError(f"input '{name}' is on a device (DLPack device type {dev[0]}): the CPU reference takes "
                         "host arrays; NumPy arrays, or device tensors for the GPU")
    if cap is None:
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError) as e:  # bf16 has no NumPy dtype, say
            raise TypeError(f"input '{name}': NumPy cannot read this DLPack tensor ({e})") from None
    return np.from_dlpack(_Capsule(cap, dev))


# ---- export ---------------------------------------------------------------------

_exports = {}  # address of a DLManagedTensor -> what keeps it and its data alive
_exports_lock = threading.RLock()  # a capsule may die (GC) while it is held


@_Deleter
def _delete(managed):
    with _exports_lock:
        _exports.pop(ctypes.addressof(managed.contents), None)


@_CapsuleDestructor
def _capsule_dead(capsule):
    # an unconsumed capsule (still named "dltensor") owns its tensor
    if _is_valid_raw(capsule, b"dltensor"):
        with _exports_lock:
            _exports.pop(_get_pointer_raw(capsule, b"dltensor"), None)


def export(ptr, shape, dtype, device_type, device_id, owner):
    """A "dltensor" capsule for dense C-ordered memory that `owner` keeps alive."""
    m = DLManagedTensor()
    shp = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    code, bits = _CODE[dtype]
    m.dl_tensor = DLTensor(ptr, DLDevice(device_type, device_id), len(shape), DLDataType(code, bits, 1),
                           ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64)), None, 0)
    m.deleter = _delete
    addr = ctypes.addressof(m)
    with _exports_lock:
        _exports[addr] = (m, shp, owner)
    return _api.PyCapsule_New(addr, b"dltensor", _capsule_dead)


def exported():
    """How many exported tensors are still held (for tests)."""
    return len(_exports)


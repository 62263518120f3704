"""Device arrays without torch: inputs read through __cuda_array_interface__
or DLPack, outputs as DeviceArrays (device memory fusec allocates with the
C API). Launches go to the legacy default stream, which orders them after
work on every blocking stream (CuPy's and Numba's defaults among them);
DLPack producers are asked for that stream.

This path allocates with cuMemAlloc and is not the one measured for speed:
with torch installed, such inputs become torch tensors (no copy) and take
the torch path.
"""

import ctypes

from . import _dlpack, _gpu, _lib

_TYPESTR = {"bool": "|b1", "i32": "<i4", "i64": "<i8", "f16": "<f2", "f32": "<f4", "f64": "<f8"}
_FROM_TYPESTR = {v: k for k, v in _TYPESTR.items()}
_FROM_TYPESTR.update({"<b1": "bool", "|i4": "i32", "|i8": "i64"})
_LEGACY_STREAM = 1  # the CUDA array interface's and DLPack's name for it


class DeviceArray:
    """A dense C-ordered array in device memory owned by fusec: what calls
    return when torch is not installed. It has __cuda_array_interface__
    (except bf16, which that interface cannot name) and __dlpack__, so CuPy,
    Numba, JAX or torch take it without a copy; .numpy() copies it to the host."""

    def __init__(self, shape, dtype, device=0):
        self.shape, self.dtype, self.device = tuple(int(d) for d in shape), dtype, int(device)
        n = 1
        for d in self.shape:
            n *= d
        self.nbytes = n * _lib.DTYPE_SIZES[_lib.DTYPES.index(dtype)]
        self._ctx = _gpu.context(self.device)
        p = ctypes.c_void_p()
        _lib.check(_lib.lib.fz_device_alloc(self._ctx, self.nbytes, ctypes.byref(p)))
        self.ptr = p.value or 0

    def __del__(self):
        if getattr(self, "ptr", 0):
            _lib.lib.fz_device_free(self._ctx, self.ptr)
            self.ptr = 0

    def __repr__(self):
        return f"<fusec.DeviceArray {self.dtype}{list(self.shape)} on cuda:{self.device}>"

    @property
    def __cuda_array_interface__(self):
        if self.dtype == "bf16":
            raise AttributeError("the CUDA array interface has no bf16 type: use DLPack (__dlpack__)")
        return {"shape": self.shape, "typestr": _TYPESTR[self.dtype], "data": (self.ptr, False), "strides": None,
                "version": 3, "stream": _LEGACY_STREAM}

    def __dlpack__(self, stream=None, **kwargs):
        # launches and copies are on the legacy default stream, which orders
        # them before any later work on blocking streams: nothing to wait for
        return _dlpack.export(self.ptr, self.shape, self.dtype, _dlpack.CUDA, self.device, self)

    def __dlpack_device__(self):
        return (_dlpack.CUDA, self.device)

    def numpy(self):
        """A copy on the host (waits for the work before it on the legacy default stream)."""
        from . import _cpu
        import numpy as np
        storage = np.uint16 if self.dtype == "bf16" else _cpu.numpy_dtype(self.dtype)
        a = np.empty(self.shape, dtype=storage)
        _lib.check(_lib.lib.fz_copy_to_host(self._ctx, a.ctypes.data, self.ptr, self.nbytes))
        return _cpu._bf16_out(a) if self.dtype == "bf16" else a


def to_device(array, device=0):
    """A NumPy array copied to CUDA device `device`, as a DeviceArray (bf16:
    an ml_dtypes.bfloat16 array, or float32 values rounded to bf16, with dtype="bf16")."""
    import numpy as np
    a = np.asarray(array)
    fz = _fz_of_numpy(a.dtype)
    if fz is None:
        raise TypeError(f"fusec.to_device: NumPy dtype {a.dtype} is not one of fusec's dtypes")
    a = np.ascontiguousarray(a)
    d = DeviceArray(a.shape, fz, device)
    _lib.check(_lib.lib.fz_copy_to_device(d._ctx, d.ptr, a.ctypes.data, d.nbytes))
    return d


def _fz_of_numpy(dt):
    from . import _cpu
    if _cpu._BF16 is not None and dt == _cpu._BF16:
        return "bf16"
    for fz, nd in _cpu._NP.items():
        if dt == nd:
            return fz
    return None


class _Input:
    """An input's pointer, shape, dtype and device, from either interface."""

    def __init__(self, spec, x):
        self.keep = x
        self.bare_capsule = type(x).__name__ == "PyCapsule"
        if self.bare_capsule or hasattr(x, "__dlpack__"):  # first: it names the device
            v = _dlpack.view(x, spec.name, stream=_LEGACY_STREAM)
            self.keep = v
            self.ptr, self.shape, self.dtype, self.contiguous = v.ptr, v.shape, v.dtype, v.contiguous
            self.device = v.device_id
            self.cuda = v.device_type in (_dlpack.CUDA, _dlpack.CUDA_MANAGED)
        elif hasattr(x, "__cuda_array_interface__"):
            cai = x.__cuda_array_interface__
            self.ptr = cai["data"][0] or 0
            self.shape = tuple(cai["shape"])
            self.dtype = _FROM_TYPESTR.get(cai["typestr"])
            if self.dtype is None:
                raise TypeError(f"input '{spec.name}': __cuda_array_interface__ type '{cai['typestr']}' is not "
                                "one of fusec's dtypes")
            strides = cai.get("strides")
            self.contiguous = strides is None or _dlpack._is_dense(
                self.shape, [s // _lib.DTYPE_SIZES[_lib.DTYPES.index(self.dtype)] for s in strides])
            # the interface does not say the device: CuPy arrays do (.device.id), others are on device 0
            self.device = getattr(getattr(x, "device", None), "id", 0)
            self.cuda = True
        else:
            raise TypeError(f"input '{spec.name}' is the tensor {_gpu._decl(spec)}: got {type(x).__name__} (pass "
                            "an array with __cuda_array_interface__ or __dlpack__, or NumPy arrays for the CPU "
                            "reference)")


def call(prog, args, out):
    ins, device, first = {}, None, None
    for p in prog._tensor_pos:
        spec = prog.inputs[p]
        t = ins[p] = _Input(spec, args[p])
        if not t.cuda:
            raise ValueError(f"input '{spec.name}' is not in CUDA device memory: pass NumPy arrays (all inputs) "
                             "for the CPU reference")
        if device is None:
            device, first = t.device, spec.name
        elif t.device != device:
            raise ValueError(f"input '{spec.name}' is on cuda:{t.device}, but input '{first}' is on "
                             f"cuda:{device}: all inputs of a call must be on one device")
        if t.dtype != spec.dtype:
            raise TypeError(f"input '{spec.name}' is {_gpu._decl(spec)}: got an array of dtype {t.dtype}")
        if len(t.shape) != len(spec.shape):
            raise ValueError(f"input '{spec.name}' is {_gpu._decl(spec)} (rank {len(spec.shape)}): got an array of "
                             f"shape {t.shape} (rank {len(t.shape)})")
        if not t.contiguous:
            raise ValueError(f"input '{spec.name}' is not contiguous: fusec reads dense row-major arrays")
    key = ("raw", device) + tuple((ins[p].shape, ins[p].dtype) for p in prog._tensor_pos)
    shapes = [ins[p].shape for p in prog._tensor_pos]
    sig = _gpu.find_signature(prog, key, lambda: _gpu.Signature(prog, _gpu.device_program(prog, device), shapes))
    outs = _outputs(prog, sig, out, device)
    values = [ins[p].ptr if spec.shape else _gpu.scalar_value(spec, args[p]) for p, spec in enumerate(prog.inputs)]
    c = sig.launch(0, values + [o.ptr for o in outs])
    if any(t.bare_capsule for t in ins.values()):  # a bare capsule may free its memory once we return
        _lib.check(_lib.lib.fz_run_synchronize(c.run), _lib.lib.fz_run_error(c.run).decode("utf-8", "replace"))
    return prog._result(outs)


def _outputs(prog, sig, out, device):
    specs = prog.outputs
    if out is None:
        return [DeviceArray(shape, spec.dtype, device) for spec, shape in zip(specs, sig.shapes)]
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(out) != len(specs):
        raise TypeError(f"out= must give all {len(specs)} outputs of program '{prog.name}'")
    for spec, o, shape in zip(specs, out, sig.shapes):
        if not isinstance(o, DeviceArray):
            raise TypeError(f"out= for output '{spec.name}': without torch, out= takes fusec.DeviceArray")
        if o.dtype != spec.dtype or o.shape != shape or o.device != device:
            raise ValueError(f"out= for output '{spec.name}' must be {spec.dtype}{list(shape)} on cuda:{device}: "
                             f"got {o!r}")
    return out

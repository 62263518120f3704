"""Programs on CUDA devices: one fz_context per device, made when a tensor of
that device first arrives (the device's primary context, which PyTorch
shares), and per program and device a DeviceProgram.

The per-call path (call_torch) is what the package is measured by, so all
that can be decided once is decided per *signature* (the inputs' shapes,
dtypes and device, and that they are contiguous): the output shapes, the
ctypes arrays of sizes, and the fz_run. A signature is made only after
every check has passed, so finding one in the table is the whole check of a
later call with the same signature. A call then stores the data pointers
into prepared ctypes arrays, allocates the outputs with torch (its caching
allocator, on the inputs' device), and crosses into C once
(fz_run_launch_with) to bind and launch on torch's current stream. No
synchronisation and no host copy.

A run's temporaries belong to it, so each stream gets its own run: work
launched on two streams at once never shares scratch memory.

Inputs that are not torch tensors but have __cuda_array_interface__ or
__dlpack__ become torch tensors without a copy when torch is importable;
without torch they run on their raw pointers and the outputs are
DeviceArrays (device memory owned by fusec, with __cuda_array_interface__
and __dlpack__).
"""

import ctypes
import sys
import threading

from . import _lib

_contexts = {}
_contexts_lock = threading.Lock()
_SIG_CAP = 64  # signatures kept per program and device (then the oldest goes)

_torch = None       # the torch module, once a torch tensor has been seen
_Tensor = None
_raw_stream = None  # ordinal -> the current stream's handle (an int)
_TORCH_DTYPES = {}


def is_torch(x):
    """Whether x is a torch tensor (without importing torch for the check)."""
    if _Tensor is not None:
        return isinstance(x, _Tensor)
    if "torch" not in sys.modules or not isinstance(x, sys.modules["torch"].Tensor):
        return False
    _init_torch()
    return True


def _init_torch():
    global _torch, _Tensor, _raw_stream
    import torch
    _torch = torch
    _TORCH_DTYPES.update({"bool": torch.bool, "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
                          "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64})
    get = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    _raw_stream = get if get is not None else (lambda d: torch.cuda.current_stream(d).cuda_stream)
    _Tensor = torch.Tensor


def torch_dtype(fz):
    if not _TORCH_DTYPES:
        _init_torch()
    return _TORCH_DTYPES[fz]


def context(ordinal):
    """The fz_context of CUDA device `ordinal` (made once, kept for the process)."""
    ctx = _contexts.get(ordinal)
    if ctx is None:
        with _contexts_lock:
            ctx = _contexts.get(ordinal)
            if ctx is None:
                h = ctypes.c_void_p()
                _lib.check(_lib.lib.fz_context_create(ordinal, ctypes.byref(h)))
                ctx = _contexts[ordinal] = h.value
    return ctx


class Signature:
    """What calls with one set of input shapes and dtypes share."""

    __slots__ = ("in_shapes", "out_shapes", "shapes", "dtypes", "alloc", "in_bytes", "device", "runs", "dp")

    def __init__(self, dp, in_shapes, out_shapes, shapes, dtypes, device, in_bytes):
        self.dp, self.in_shapes, self.out_shapes = dp, in_shapes, out_shapes
        self.shapes, self.dtypes, self.device = shapes, dtypes, device
        self.alloc = tuple(zip(shapes, dtypes))  # (shape, dtype) of each output
        self.in_bytes = in_bytes                 # (position, bytes) of each tensor input
        self.runs = {}  # stream handle (an int) -> (fz_run, stream) as c_void_p

    def run(self, stream):
        """The run for `stream`, made now: the launch's first two arguments."""
        h = ctypes.c_void_p()
        _lib.check(_lib.lib.fz_run_create(self.dp.handle, None, ctypes.byref(h)))
        r = self.runs[stream] = (h, ctypes.c_void_p(stream))
        return r

    def close(self):
        for r, _ in self.runs.values():
            _lib.lib.fz_run_destroy(r)
        self.runs = {}


class DeviceProgram:
    """A program compiled in one device's context, with its signatures."""

    def __init__(self, prog, ordinal):
        from ._program import _c_compile
        self.prog, self.ordinal = prog, ordinal
        self.handle = _c_compile(context(ordinal), prog.name, prog.source, prog.fuse)
        n, self.nout = len(prog.inputs), len(prog.outputs)
        self.ptrs = (ctypes.c_void_p * max(n, 1))()
        self.outs = (ctypes.c_void_p * max(self.nout, 1))()
        self.scalars = (ctypes.c_double * max(len(prog._scalar_pos), 1))()
        for j, i in enumerate(prog._scalar_pos):  # a scalar input points at its double for good
            self.ptrs[i] = ctypes.addressof(self.scalars) + 8 * j
        self.sigs = {}
        self.lock = threading.Lock()

    def signature(self, key, shapes, device, torch_outputs=True):
        """Make the signature of inputs with these sizes (checked already);
        its output dtypes are torch's, or fz names for DeviceArrays."""
        prog = self.prog
        flat = [d for s in shapes for d in s]
        in_shapes = (ctypes.c_int64 * max(len(flat), 1))(*flat)
        out_shapes = (ctypes.c_int64 * max(sum(len(s.shape) for s in prog.outputs), 1))()
        dims = (ctypes.c_int64 * max(len(prog.dims), 1))()
        L = _lib.lib
        _lib.check(L.fz_program_shapes(self.handle, in_shapes, dims, out_shapes),
                   L.fz_program_error(self.handle).decode("utf-8", "replace"))
        outs, k = [], 0
        for s in prog.outputs:
            outs.append(tuple(out_shapes[k:k + len(s.shape)]))
            k += len(s.shape)
        dtypes = [torch_dtype(s.dtype) if torch_outputs else s.dtype for s in prog.outputs]
        in_bytes = []
        for p, shape in zip(prog._tensor_pos, shapes):
            n = _lib.DTYPE_SIZES[_lib.DTYPES.index(prog.inputs[p].dtype)]
            for d in shape:
                n *= d
            in_bytes.append((p, n))
        sig = Signature(self, in_shapes, out_shapes, outs, dtypes, device, tuple(in_bytes))
        if len(self.sigs) >= _SIG_CAP:
            self.sigs.pop(next(iter(self.sigs))).close()
        self.sigs[key] = sig
        return sig

    def prepare(self, shapes):
        """JIT-compile now what calls with tensor inputs of these shapes
        need (None: every path); NVRTC runs without the GIL."""
        L, dims = _lib.lib, None
        if shapes is not None:
            flat = [d for s in shapes for d in s]
            dims = (ctypes.c_int64 * max(len(self.prog.dims), 1))()
            out_shapes = (ctypes.c_int64 * max(sum(len(s.shape) for s in self.prog.outputs), 1))()
            _lib.check(L.fz_program_shapes(self.handle, (ctypes.c_int64 * max(len(flat), 1))(*flat), dims,
                                           out_shapes), L.fz_program_error(self.handle).decode("utf-8", "replace"))
        _lib.check(L.fz_program_prepare(self.handle, dims),
                   L.fz_program_error(self.handle).decode("utf-8", "replace"))

    def close(self):
        for s in self.sigs.values():
            s.close()
        self.sigs = {}
        if self.handle:
            _lib.lib.fz_program_destroy(self.handle)
            self.handle = None


def device_program(prog, ordinal):
    dp = prog._devices.get(ordinal)
    if dp is None:
        with prog._lock:
            dp = prog._devices.get(ordinal)
            if dp is None:
                dp = prog._devices[ordinal] = DeviceProgram(prog, ordinal)
    return dp


_launch = _lib.launch_with


def _launch_error(run, status):
    raise _lib.exception(status, _lib.lib.fz_run_error(run).decode("utf-8", "replace"))


# ---- torch tensors ----

def call_torch(prog, args, out):
    tpos = prog._tensor_pos
    dp = prog._devices.get(args[tpos[0]].get_device())  # never a CPU tensor's -1
    try:
        key = []
        for p in tpos:
            a = args[p]
            key += (a.shape, a.dtype, a.get_device(), a.is_contiguous())
        key = tuple(key)
        sig = dp.sigs.get(key) if dp is not None else None
    except (AttributeError, TypeError):  # not a torch tensor: _torch_signature says which
        sig = key = None
    if sig is None:
        sig = _torch_signature(prog, args, key)
        dp = sig.dp
    with dp.lock:
        P = dp.ptrs
        for p in tpos:
            P[p] = args[p].data_ptr()
        S = dp.scalars
        for j, p in prog._scalar_slots:
            v = args[p]
            S[j] = v if type(v) is float or type(v) is int else scalar_value(prog.inputs[p], v)
        O = dp.outs
        if out is None:
            empty, dev = _torch.empty, sig.device
            outs = [empty(s, dtype=t, device=dev) for s, t in sig.alloc]
        else:
            outs = _given_outputs(prog, sig, dp, out)
        i = 0
        for o in outs:
            O[i] = o.data_ptr()
            i += 1
        stream = _raw_stream(dp.ordinal)
        run, st = sig.runs.get(stream) or sig.run(stream)
        s = _launch(run, st, P, sig.in_shapes, O, sig.out_shapes)
    if s:
        _launch_error(run, s)
    return outs[0] if i == 1 else prog._Outputs(*outs)


def _torch_signature(prog, args, key):
    """Check every tensor input of a call whose signature is new, and make it."""
    ordinal, device, shapes = None, None, []
    for spec, x in zip(prog.inputs, args):
        if not spec.shape:
            scalar_value(spec, x)
            continue
        x = _as_torch(spec, x)
        if x.device.type != "cuda":
            raise ValueError(f"input '{spec.name}' is on the {x.device.type.upper()}: fusec runs torch tensors on "
                             f"CUDA devices (move it with .cuda(), or pass NumPy arrays for the CPU reference)")
        if ordinal is None:
            ordinal, device, first = x.get_device(), x.device, spec.name
        elif x.get_device() != ordinal:
            raise ValueError(f"input '{spec.name}' is on {x.device}, but input '{first}' is on {device}: "
                             "all inputs of a call must be on one device")
        if x.dtype != torch_dtype(spec.dtype):
            raise TypeError(f"input '{spec.name}' is {_decl(spec)}: got a tensor of dtype {x.dtype} "
                            f"(convert it with .to({torch_dtype(spec.dtype)}))")
        if x.dim() != len(spec.shape):
            raise ValueError(f"input '{spec.name}' is {_decl(spec)} (rank {len(spec.shape)}): got a tensor of "
                             f"shape {tuple(x.shape)} (rank {x.dim()})")
        if not x.is_contiguous():
            raise ValueError(f"input '{spec.name}' is not contiguous (shape {tuple(x.shape)}, strides "
                             f"{tuple(x.stride())}): fusec reads dense row-major tensors; pass "
                             f"{spec.name}.contiguous()")
        shapes.append(tuple(x.shape))
    dp = device_program(prog, ordinal)
    return dp.signature(key, shapes, device)


def _as_torch(spec, x):
    if isinstance(x, _Tensor):
        return x
    raise TypeError(f"input '{spec.name}' is the tensor {_decl(spec)}: got {type(x).__name__}, among torch "
                    "tensors (pass every tensor input as a torch tensor)")


def _given_outputs(prog, sig, dp, out):
    """out= as a list in output order, each checked against the signature
    (the inputs' pointers are in dp.ptrs already)."""
    out = [out] if isinstance(out, _Tensor) else _out_list(prog, out)
    if len(out) != len(sig.shapes):
        n = len(sig.shapes)
        raise TypeError(f"out= must give all {n} output{'s' if n != 1 else ''} of program '{prog.name}' "
                        f"({', '.join(s.name for s in prog.outputs)})")
    for i, o in enumerate(out):
        shape, dtype = sig.alloc[i]
        if not isinstance(o, _Tensor) or o.dtype is not dtype or o.shape != shape or \
                o.get_device() != dp.ordinal or not o.is_contiguous():
            _bad_output(prog.outputs[i], o, shape, dtype, sig.device)
        lo = o.data_ptr()
        hi = lo + o.numel() * o.element_size()
        for p, nbytes in sig.in_bytes:
            a = dp.ptrs[p] or 0
            if nbytes and hi > lo and lo < a + nbytes and a < hi:
                raise ValueError(f"out= for output '{prog.outputs[i].name}' overlaps input '{prog.inputs[p].name}': "
                                 "a kernel may read an input after writing an output")
    return out


def _out_list(prog, out):
    specs = prog.outputs
    if isinstance(out, dict):
        unknown = [k for k in out if k not in {s.name for s in specs}]
        if unknown:
            raise TypeError(f"out=: program '{prog.name}' has no output named '{unknown[0]}'")
        out = [out.get(s.name) for s in specs]
        return [] if any(o is None for o in out) else out
    if isinstance(out, (list, tuple)):
        return list(out)
    raise TypeError(f"out= takes a tensor, or a sequence or dict of tensors, not {type(out).__name__}")


def _bad_output(spec, o, shape, dtype, device):
    if not isinstance(o, _Tensor):
        raise TypeError(f"out= for output '{spec.name}': got {type(o).__name__}, not a torch tensor")
    if o.dtype != dtype or tuple(o.shape) != shape:
        raise ValueError(f"out= for output '{spec.name}' must be {dtype} of shape {shape}: got {o.dtype} of "
                         f"shape {tuple(o.shape)}")
    if o.device != device:
        raise ValueError(f"out= for output '{spec.name}' is on {o.device}; the inputs are on {device}")
    raise ValueError(f"out= for output '{spec.name}' is not contiguous")


def scalar_value(spec, v):
    """A scalar input's value as a float for the C call; never synchronises."""
    if type(v) in (float, int, bool):
        return float(v)
    if _Tensor is not None and isinstance(v, _Tensor):
        if v.dim() != 0:
            raise ValueError(f"input '{spec.name}' is a scalar {spec.dtype}: got a tensor of shape {tuple(v.shape)}")
        if v.device.type != "cpu":
            raise ValueError(f"input '{spec.name}' is a scalar {spec.dtype}: got a tensor on {v.device}, whose "
                             "value would need a synchronising copy (pass a Python number)")
        return float(v.item())
    try:
        import numbers
        if isinstance(v, numbers.Real):
            return float(v)
    except TypeError:
        pass
    raise TypeError(f"input '{spec.name}' is a scalar {spec.dtype}: got {type(v).__name__} (pass a Python number)")


def _decl(s):
    return s.dtype + (f"[{', '.join(str(d) for d in s.shape)}]" if s.shape else "")


# ---- other device arrays ----

def call_foreign(prog, args, out):
    """Inputs that are neither torch tensors nor NumPy arrays: through torch
    when it is importable, else on their raw device pointers."""
    try:
        import torch  # noqa: F401  (only whether it is there)
    except ImportError:
        from . import _raw
        return _raw.call(prog, args, out)
    _init_torch()
    conv = list(args)
    for p in prog._tensor_pos:
        conv[p] = _to_torch(prog.inputs[p], args[p])
    return call_torch(prog, conv, out)


def _to_torch(spec, x):
    if isinstance(x, _Tensor):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return _torch.as_tensor(x, device="cuda")
    if hasattr(x, "__dlpack__") or type(x).__name__ == "PyCapsule":
        return _torch.from_dlpack(x)
    if hasattr(x, "__array_interface__") or isinstance(x, (list, tuple)):
        raise TypeError(f"input '{spec.name}' is the tensor {_decl(spec)}: got {type(x).__name__} among device "
                        "tensors (NumPy arrays run on the CPU reference when every input is one)")
    raise TypeError(f"input '{spec.name}' is the tensor {_decl(spec)}: got {type(x).__name__} (pass a torch tensor, "
                    "an array with __cuda_array_interface__ or __dlpack__, or a NumPy array)")

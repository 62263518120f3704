"""Programs on CUDA devices: one fz_context per device, made when a tensor of
that device first arrives (the device's primary context, which PyTorch
shares), per program and device a DeviceProgram, and per program the
signatures of the calls it has seen.

The per-call path is what the package is measured by (issue 12: 10 µs or
less per call), so everything that can be decided once is decided per
*signature*: the inputs' shapes, dtypes and device, and that they are
contiguous, read from the tensors into one flat tuple, the key. A signature
is made only after every check of its inputs has passed, so finding the key
in Program._calls is the whole check of a later call; what the key finds is
the signature's launch function. That function is generated for the
signature as straight-line Python (see _launch_source, and Signature.source
for an example): it reads the scalars and the data pointers, allocates the
outputs through torch's caching allocator (_fast_alloc: the private call
that the code torch.compile generates allocates with, where the current
device is the inputs'; else torch.empty_like of an input with the output's
shape and dtype, else torch.empty with the sizes as separate arguments,
which torch parses faster than a tuple), reads torch's current stream,
packs the pointers and scalar values into bytes (struct.pack) and crosses
into C once: fz_call_launch binds by position and launches. A loop over the
inputs, a lock, or a ctypes array filled slot by slot each cost more than
the work they do here.

out= is part of the key too: a call whose out= tensors were checked once
against a signature (dtype, shape, device, contiguity) finds the key (input
key, output key) and the launch function that writes into them. C refuses
an output that overlaps an input.

A run's temporaries belong to it, so each stream gets its own run (a
_Call): work launched on two streams at once never shares scratch memory.
Nothing is shared between calls but runs, and C calls hold the GIL, so
calls from several threads need no lock. Ownership follows references: a
_Call holds its DeviceProgram, so a run is destroyed before the program it
runs, and only once no call is using it.

Inputs that are not torch tensors but have __cuda_array_interface__ or
__dlpack__ become torch tensors without a copy when torch is importable;
without torch they run on their raw pointers and the outputs are
DeviceArrays (device memory owned by fusec, with __cuda_array_interface__
and __dlpack__).
"""

import ctypes
import functools
import struct
import sys
import threading

from . import _lib

_contexts = {}
_contexts_lock = threading.Lock()
_SIG_CAP = 64  # signatures kept per program (then the oldest goes)

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


def key_function(positions, whole=False):
    """The key of the tensors at these positions of a sequence: each one's
    shape, dtype, device and contiguity, in one flat tuple. Generated
    unrolled, since it runs at every call and a loop would cost more than
    reading the attributes; for positions (0, 2):

        def key(a):
            t0 = a[0]
            t2 = a[2]
            return (t0.shape, t0.dtype, t0.device, t0.is_contiguous(), t2.shape, ...)

    Anything that is not a torch tensor raises (AttributeError, say), which
    sends the call to the general path. With whole, the key also holds the
    sequence's length (out= of too many tensors must not find the key of the
    right ones)."""
    lines = ["def key(a):"] + [f"    t{p} = a[{p}]" for p in positions]
    items = "".join(f"t{p}.shape, t{p}.dtype, t{p}.device, t{p}.is_contiguous(), " for p in positions)
    env = {}
    if whole:
        items += "len(a), "
    exec("\n".join(lines + [f"    return ({items})"]) + "\n", env)
    return env["key"]


def out_tuple(out):
    """out= as a tuple for the fast path's key, if it is a tensor or a list
    or tuple (else None, which no key takes: a dict, say, goes the general
    way)."""
    return (out,) if isinstance(out, _Tensor) else tuple(out) if type(out) in (tuple, list) else None


class DeviceProgram:
    """A program compiled in one device's context. Destroyed with the last
    reference to it: every run holds one."""

    def __init__(self, prog, ordinal):
        from ._program import _c_compile
        self.ordinal = ordinal
        self.ndims, self.out_rank = len(prog.dims), sum(len(s.shape) for s in prog.outputs)  # for prepare
        self.handle = _c_compile(context(ordinal), prog.name, prog.source, prog.fuse)
        self._interpreters, self._ilock = 0, threading.Lock()

    def prepare(self, shapes):
        """JIT-compile now what calls with tensor inputs of these shapes
        need (None: every path); NVRTC runs without the GIL."""
        L, dims = _lib.lib, None
        if shapes is not None:
            flat = [d for s in shapes for d in s]
            dims = (ctypes.c_int64 * max(self.ndims, 1))()
            out_shapes = (ctypes.c_int64 * max(self.out_rank, 1))()
            _lib.check(L.fz_program_shapes(self.handle, (ctypes.c_int64 * max(len(flat), 1))(*flat), dims,
                                           out_shapes), L.fz_program_error(self.handle).decode("utf-8", "replace"))
        _lib.check(L.fz_program_prepare(self.handle, dims),
                   L.fz_program_error(self.handle).decode("utf-8", "replace"))

    def interpret(self, on):
        """Count a reason for launches to run on the GPU interpreter (on) or
        drop one: they do while any remains (fz_program_set_interpret)."""
        with self._ilock:
            self._interpreters += 1 if on else -1
            _lib.check(_lib.lib.fz_program_set_interpret(self.handle, int(self._interpreters > 0)))

    def __del__(self):
        if getattr(self, "handle", None) and not sys.is_finalizing():
            _lib.lib.fz_program_destroy(self.handle)
            self.handle = None


def device_program(prog, ordinal):
    """prog compiled for CUDA device `ordinal` (once; a disk-cache hit after
    the first process)."""
    dp = prog._devices.get(ordinal)
    if dp is None:
        with prog._lock:
            dp = prog._devices.get(ordinal)
            if dp is None:
                dp = prog._devices[ordinal] = DeviceProgram(prog, ordinal)
    return dp


class _Call(ctypes.c_void_p):
    """A launch prepared for one signature and stream: its value is the
    address of an fz_call (run, stream, sizes), the first argument of
    fz_call_launch; it owns the run, which it makes now."""

    def __init__(self, dp, in_shapes, out_shapes, stream):
        h = ctypes.c_void_p()
        _lib.check(_lib.lib.fz_run_create(dp.handle, None, ctypes.byref(h)))
        self.run, self.dp = h.value, dp
        self.fields = _lib.Call(h.value, stream, in_shapes, out_shapes)
        super().__init__(ctypes.addressof(self.fields))

    def __del__(self):
        if getattr(self, "run", None) and not sys.is_finalizing():
            _lib.lib.fz_run_destroy(self.run)  # waits for its stream
            self.run = None


def _new_call(calls, dp, in_shapes, out_shapes, stream):
    c = calls[stream] = _Call(dp, in_shapes, out_shapes, stream)
    return c


def _fail(call, status):
    raise _lib.exception(status, _lib.lib.fz_run_error(call.run).decode("utf-8", "replace"))


class Signature:
    """What calls with one set of input shapes, dtypes and device share: the
    output shapes, the sizes C reads, a _Call per stream, and for torch
    tensors the launch functions `call` (outputs allocated) and `call_into`
    (out= given, checked), with their source in `source`."""

    def __init__(self, prog, dp, shapes, device=None):
        """shapes: the tensor inputs' (checked already); device: their torch
        device (outputs are torch tensors), or None (DeviceArrays)."""
        self.dp, self.device = dp, device
        self.key, self.keys = None, []  # its key, and its keys in Program._calls
        flat = [d for s in shapes for d in s]
        self.in_shapes = (ctypes.c_int64 * max(len(flat), 1))(*flat)
        self.out_shapes = (ctypes.c_int64 * max(sum(len(s.shape) for s in prog.outputs), 1))()
        dims = (ctypes.c_int64 * max(len(prog.dims), 1))()
        L = _lib.lib
        _lib.check(L.fz_program_shapes(dp.handle, self.in_shapes, dims, self.out_shapes),
                   L.fz_program_error(dp.handle).decode("utf-8", "replace"))
        outs, k = [], 0
        for s in prog.outputs:
            outs.append(tuple(self.out_shapes[k:k + len(s.shape)]))
            k += len(s.shape)
        self.shapes = tuple(outs)
        self.calls = {}  # stream handle (an int) -> _Call
        self.new_call = functools.partial(_new_call, self.calls, dp, self.in_shapes, self.out_shapes)
        self.pack = struct.Struct("".join("Q" if s.shape else "d" for s in prog.inputs) + "Q" * len(outs)).pack
        if device is not None:
            self.dtypes = tuple(torch_dtype(s.dtype) for s in prog.outputs)
            self.source, self.call, self.call_into = _launch_functions(prog, self, shapes)

    def launch(self, stream, values):
        """Launch on `stream` with these pointers and scalars (the general
        way, for DeviceArrays); returns the _Call."""
        c = self.calls.get(stream)
        if c is None:
            c = self.new_call(stream)
        s = _lib.call_launch(c, self.pack(*values))
        if s:
            _fail(c, s)
        return c


def _launch_source(prog, sig, shapes, into, fast):
    """The source of a signature's launch function, for example (a program
    `in x: f32[N]; in y: f32[N]; in s: f32; out z = ...` at N = 4096,
    outputs allocated):

        def call(a, out):
            s2 = a[2]
            if type(s2) is not float and type(s2) is not int:
                s2 = scalar(2, s2)
            here = current() == 0
            o0 = empty_strided((4096,), (1,), dtype0) if here else empty_like(a[0])
            st = stream(0)
            c = calls.get(st)
            if c is None:
                c = new_call(st)
            r = launch(c, pack(a[0].data_ptr(), a[1].data_ptr(), s2, o0.data_ptr()))
            if r:
                fail(c, r)
            return o0

    An output is allocated by empty_strided (with fast, see _fast_alloc)
    where the current device is the inputs', else by empty_like of an input
    with its shape and dtype, else by empty. With into, the outputs are
    out[j] (a tuple, checked already)."""
    lines, values = [f"def {'call_into' if into else 'call'}(a, out):"], []
    for i, spec in enumerate(prog.inputs):
        if spec.shape:
            values.append(f"a[{i}].data_ptr()")
            continue
        lines += [f"    s{i} = a[{i}]", f"    if type(s{i}) is not float and type(s{i}) is not int:",
                  f"        s{i} = scalar({i}, s{i})"]
        values.append(f"s{i}")
    fast = fast and not into and prog.outputs
    if fast:
        lines.append(f"    here = current() == {sig.dp.ordinal}")
    inputs = [(p, shapes[k], prog.inputs[p].dtype) for k, p in enumerate(prog._tensor_pos)]
    for j, spec in enumerate(prog.outputs):
        like = [p for p, shape, dtype in inputs if shape == sig.shapes[j] and dtype == spec.dtype]
        if into:
            alloc = f"out[{j}]"
        elif like:
            alloc = f"empty_like(a[{like[0]}])"
        else:
            alloc = f"empty({''.join(f'{d}, ' for d in sig.shapes[j]) or '(), '}dtype=dtype{j}, device=device)"
        if fast:
            alloc = f"empty_strided({sig.shapes[j]}, {_strides(sig.shapes[j])}, dtype{j}) if here else {alloc}"
        lines.append(f"    o{j} = {alloc}")
        values.append(f"o{j}.data_ptr()")
    outs = ", ".join(f"o{j}" for j in range(len(prog.outputs)))
    lines += [f"    st = stream({sig.dp.ordinal})", "    c = calls.get(st)", "    if c is None:",
              "        c = new_call(st)", f"    r = launch(c, pack({', '.join(values)}))", "    if r:",
              "        fail(c, r)", f"    return {outs if len(prog.outputs) == 1 else f'Outputs({outs})'}"]
    return "\n".join(lines) + "\n"


def _strides(shape):
    """A dense row-major tensor's strides."""
    strides, n = [], 1
    for d in reversed(shape):
        strides.append(n)
        n *= d
    return tuple(reversed(strides))


_fast = None  # (current device, empty_strided), or False where torch has none that works


def _fast_alloc(ordinal):
    """torch's cheapest allocation through its CUDA caching allocator, the
    one the code torch.compile generates uses: _empty_strided_cuda (private,
    so found and tried once, on device `ordinal` if it is the current one;
    None where missing or not working). It parses nothing but sizes, strides
    and a dtype, and allocates on the current device, which a call checks is
    the inputs' (current() is the C function behind
    torch.cuda.current_device). On a CPU, torch.empty_like costs 2 times as
    much and torch.empty 2.6 (their CPU twins, measured)."""
    global _fast
    if _fast is None:
        try:
            current, empty_strided = _torch._C._cuda_getDevice, _torch._C._dynamo.guards._empty_strided_cuda
            if current() != ordinal:
                return None  # tried later, where no context need be made for it
            t, u = empty_strided((2, 3), (3, 1), _torch.float32), empty_strided((), (), _torch.int64)
            ok = (t.shape, t.stride(), t.dtype, u.shape, u.dtype, t.device.type, t.get_device()) == \
                ((2, 3), (3, 1), _torch.float32, (), _torch.int64, "cuda", current())
        except Exception:  # not there, or not as it was: torch's public calls allocate
            ok = False
        _fast = (current, empty_strided) if ok else False
    return _fast or None


def _launch_functions(prog, sig, shapes):
    """(source, call, call_into) of a signature of torch tensors."""
    env = {"empty": _torch.empty, "empty_like": _torch.empty_like, "device": sig.device, "stream": _raw_stream,
           "calls": sig.calls, "new_call": sig.new_call, "launch": _lib.call_launch, "pack": sig.pack,
           "fail": _fail, "scalar": functools.partial(_scalar_at, prog.inputs), "Outputs": prog._Outputs}
    fast = _fast_alloc(sig.dp.ordinal)
    if fast:
        env["current"], env["empty_strided"] = fast
    env.update((f"dtype{j}", t) for j, t in enumerate(sig.dtypes))
    source = _launch_source(prog, sig, shapes, False, fast) + "\n" + _launch_source(prog, sig, shapes, True, fast)
    exec(source, env)
    return source, env["call"], env["call_into"]


def _scalar_at(specs, i, v):
    return scalar_value(specs[i], v)


def find_signature(prog, key, make):
    """The signature under key, or make() kept under it; beyond _SIG_CAP
    signatures the oldest goes, with its fast-path keys (its runs are
    destroyed once no call is using them)."""
    sig = prog._signatures.get(key)
    if sig is not None:
        return sig
    with prog._sig_lock:
        sig = prog._signatures.get(key)
        if sig is None:
            sig = make()
            sig.key = key
            if len(prog._signatures) >= _SIG_CAP:
                old = prog._signatures.pop(next(iter(prog._signatures)))
                for k in old.keys:
                    prog._calls.pop(k, None)
            prog._signatures[key] = sig
    return sig


def _keep_call(prog, sig, key, launch):
    """Send later calls with this key straight to launch (unless sig has gone)."""
    with prog._sig_lock:
        if prog._signatures.get(sig.key) is sig:
            sig.keys.append(key)
            prog._calls[key] = launch


# ---- torch tensors ----

def call_torch(prog, args, out):
    """A call on torch tensors off the fast path: a signature not seen yet,
    out= not seen yet with it, or a misuse, which raises here, naming the
    input."""
    shapes, device = _check_inputs(prog, args)
    key = prog._key(args)
    sig = find_signature(prog, key, lambda: Signature(prog, device_program(prog, device.index), shapes, device))
    if key not in prog._calls:
        _keep_call(prog, sig, key, sig.call)
    if out is None:
        return sig.call(args, None)
    out = _given_outputs(prog, sig, out)
    _keep_call(prog, sig, (key, prog._out_key(out)), sig.call_into)
    return sig.call_into(args, out)


def _check_inputs(prog, args):
    """Every input of a call checked: the tensor inputs' shapes and device."""
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
    return shapes, device


def _as_torch(spec, x):
    if isinstance(x, _Tensor):
        return x
    raise TypeError(f"input '{spec.name}' is the tensor {_decl(spec)}: got {type(x).__name__}, among torch "
                    "tensors (pass every tensor input as a torch tensor)")


def _given_outputs(prog, sig, out):
    """out= as a tuple in output order, each checked against the signature
    (C checks that none overlaps an input)."""
    out = [out] if isinstance(out, _Tensor) else _out_list(prog, out)
    if len(out) != len(sig.shapes):
        n = len(sig.shapes)
        raise TypeError(f"out= must give all {n} output{'s' if n != 1 else ''} of program '{prog.name}' "
                        f"({', '.join(s.name for s in prog.outputs)})")
    for i, o in enumerate(out):
        shape, dtype = sig.shapes[i], sig.dtypes[i]
        if not isinstance(o, _Tensor) or o.dtype is not dtype or o.shape != shape or o.device != sig.device or \
                not o.is_contiguous():
            _bad_output(prog.outputs[i], o, shape, dtype, sig.device)
    return tuple(out)


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

"""Programs: compiling (cached per process), introspection, and calls,
which go to the GPU (torch tensors and other device arrays, _gpu.py) or to
the CPU reference interpreter (NumPy arrays, _cpu.py) by the type of the
inputs.

A Program owns one C program compiled without a context, for introspection
and the CPU, and, per CUDA device it has run on, one compiled in that
device's context (_gpu.DeviceProgram). Compiling is deterministic, so the
two agree; the disk cache makes the second JIT of a program cheap.
"""

import collections
import ctypes
import os
import sys
import threading

from . import _gpu, _lib
from ._errors import CompileError

__all__ = ["Program", "TensorSpec", "compile", "compile_file"]

TensorSpec = collections.namedtuple("TensorSpec", "name dtype shape")
TensorSpec.__doc__ = """An input or output as the program declares it: name, dtype (the
language's name: "f32", "bf16", ...) and shape (a tuple of sizes and dim
names, () for a scalar)."""


def _c_compile(ctx, name, source, fuse):
    """The C program for source, compiled in ctx (None: no GPU)."""
    opts = _lib.CompileOptions(fuse=1 if fuse else 0, disk_cache=1)
    handle = ctypes.c_void_p()
    diag = _lib.Diag()
    data = source.encode("utf-8", "surrogateescape")
    s = _lib.lib.fz_program_compile(ctx, name.encode("utf-8"), data, len(data), ctypes.byref(opts),
                                    ctypes.byref(handle), ctypes.byref(diag))
    if s == _lib.ERR_PROGRAM:
        raise CompileError(diag.rendered.decode("utf-8", "replace"), file=diag.file.decode("utf-8", "replace"),
                           line=diag.line, column=diag.col, length=diag.len,
                           message=diag.message.decode("utf-8", "replace"))
    _lib.check(s, diag.message.decode("utf-8", "replace") or None)
    return handle.value


def _spec(info):
    shape = tuple(info.dim_names[k].decode() if info.shape[k] < 0 else info.shape[k] for k in range(info.rank))
    return TensorSpec(info.name.decode(), _lib.DTYPES[info.dtype], shape)


class Program:
    """A compiled fz program. Made by fusec.compile or fusec.compile_file;
    call it with its inputs (positional in declaration order, or by name)."""

    def __init__(self, source, name, fuse, _key=None):
        self.source, self.name, self.fuse = source, name, bool(fuse)
        self._handle = _c_compile(None, name, source, fuse)
        h, L = self._handle, _lib.lib
        info = _lib.TensorInfo()
        self.inputs = tuple(_spec(info) for i in range(L.fz_program_num_inputs(h))
                            if L.fz_program_input(h, i, ctypes.byref(info)) == 0)
        self.outputs = tuple(_spec(info) for i in range(L.fz_program_num_outputs(h))
                             if L.fz_program_output(h, i, ctypes.byref(info)) == 0)
        self.dims = tuple(L.fz_program_dim_name(h, k).decode() for k in range(L.fz_program_num_dims(h)))
        self.kernels = L.fz_program_num_kernels(h)
        self.cuda_source = L.fz_program_cuda_source(h).decode("utf-8")
        self._index = {s.name: i for i, s in enumerate(self.inputs)}
        self._tensor_pos = tuple(i for i, s in enumerate(self.inputs) if s.shape)
        self._scalar_pos = tuple(i for i, s in enumerate(self.inputs) if not s.shape)
        self._scalar_slots = tuple(enumerate(self._scalar_pos))  # (index among scalars, position)
        names = [s.name for s in self.outputs]
        self._Outputs = collections.namedtuple("Outputs", names, rename=True) if len(names) > 1 else None
        self._devices = {}  # CUDA ordinal -> _gpu.DeviceProgram
        self._lock = threading.Lock()
        # the fast path (_gpu): a call's key -> its signature's launch function
        self._n = len(self.inputs)
        self._key = _gpu.key_function(self._tensor_pos)
        self._out_key = _gpu.key_function(range(len(self.outputs)), whole=True)
        self._calls = {}
        self._signatures = {}  # input key -> _gpu.Signature, oldest first
        self._sig_lock = threading.Lock()

    def __repr__(self):
        ins = ", ".join(_decl(s) for s in self.inputs)
        outs = ", ".join(_decl(s) for s in self.outputs)
        return f"<fusec.Program {self.name}({ins}) -> ({outs}), {self.kernels} kernel" \
               f"{'' if self.kernels == 1 else 's'}{'' if self.fuse else ', per-op'}>"

    def __del__(self):
        # its device programs and runs go with their last references
        if getattr(self, "_handle", None) and not sys.is_finalizing():
            _lib.lib.fz_program_destroy(self._handle)
            self._handle = None

    def explain(self):
        """Why each edge between kernels was not fused (`fusec --explain`)."""
        n = _lib.lib.fz_program_explain(self._handle, None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        _lib.lib.fz_program_explain(self._handle, buf, n + 1)
        return buf.value.decode("utf-8")

    # ---- calls ----

    def __call__(self, *args, out=None, **kwargs):
        """Run the program: on the GPU of the inputs for torch tensors (and
        __cuda_array_interface__ or DLPack arrays), on the CPU reference for
        NumPy arrays. Returns the output, or a named tuple of them."""
        if kwargs or len(args) != self._n:
            args = self._arrange(args, kwargs)
        try:  # torch tensors of a signature seen before (_gpu): the key is the whole check
            if out is None:
                launch = self._calls[self._key(args)]
            else:
                given = _gpu.out_tuple(out)
                launch = self._calls[(self._key(args), self._out_key(given))]
                out = given
        except Exception:  # anything else (new, wrong, other arrays) is sorted out here
            return self._call(args, out)
        return launch(args, out)

    def _call(self, args, out):
        """A call off the fast path: by its inputs' type, to the GPU (a new
        signature, or a misuse to report), or to the CPU reference."""
        if self._tensor_pos:
            first = args[self._tensor_pos[0]]
            if _gpu.is_torch(first):
                return _gpu.call_torch(self, args, out)
            if _is_numpy(first):
                if out is not None:
                    raise TypeError("out= is for device tensors; the CPU reference returns new arrays")
                return self._run_cpu(args)
            return _gpu.call_foreign(self, args, out)
        # scalars only: nothing says where to run; the CPU reference does
        if out is not None:
            raise TypeError(f"program '{self.name}' has only scalar inputs: it runs on the CPU reference, "
                            "which returns new arrays (out= is for device tensors)")
        return self._run_cpu(args)

    def prepare(self, shapes=None, device=0):
        """JIT-compile the kernels for CUDA device `device` now, rather than
        at the first call that needs them: those that calls with tensor
        inputs of these shapes take (one shape per tensor input, in order),
        or with shapes None every path any size can take. Thread-safe, and
        NVRTC runs without the GIL: prepare many programs from a thread
        pool to compile them in parallel."""
        from . import _gpu
        _gpu.device_program(self, device).prepare(shapes)

    def run_cpu(self, *args, **kwargs):
        """Run on the CPU reference interpreter (f32 sums in f64): NumPy
        arrays (or what NumPy can take through DLPack) in, NumPy arrays out."""
        if kwargs or len(args) != len(self.inputs):
            args = self._arrange(args, kwargs)
        return self._run_cpu(args)

    def _run_cpu(self, args):
        from . import _cpu
        return _cpu.run(self, args)

    def _arrange(self, args, kwargs):
        """Positional and keyword arguments as one list in declaration order,
        with the errors Python gives a function."""
        n = len(self.inputs)
        if len(args) > n:
            raise TypeError(f"program '{self.name}' takes {n} input{'s' if n != 1 else ''} "
                            f"({', '.join(s.name for s in self.inputs)}); {len(args)} were given")
        full = list(args) + [_MISSING] * (n - len(args))
        for k, v in kwargs.items():
            i = self._index.get(k)
            if i is None:
                raise TypeError(f"program '{self.name}' has no input named '{k}' "
                                f"(its inputs: {', '.join(s.name for s in self.inputs)})")
            if full[i] is not _MISSING:
                raise TypeError(f"input '{k}' of program '{self.name}' is given twice")
            full[i] = v
        missing = [self.inputs[i].name for i, v in enumerate(full) if v is _MISSING]
        if missing:
            raise TypeError(f"program '{self.name}' is missing input{'s' if len(missing) > 1 else ''} "
                            + ", ".join(f"'{m}'" for m in missing))
        return full

    def _result(self, outs):
        return outs[0] if self._Outputs is None else self._Outputs(*outs)


_MISSING = object()


def _decl(s):
    return f"{s.name}: {s.dtype}" + (f"[{', '.join(str(d) for d in s.shape)}]" if s.shape else "")


def _is_numpy(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, (np.ndarray, np.generic))


# ---- compiling, cached per process ----

_cache = {}
_cache_lock = threading.Lock()


def compile(source, name=None, fuse=True):
    """Compile fz source text into a Program (no GPU needed). `name` names it
    in diagnostics and its kernels ("<string>" by default); fuse=False gives
    one kernel per op, as eager PyTorch runs them. The same source, name and
    options give the same Program object for the life of the process.
    Raises fusec.CompileError for an error in the program."""
    if not isinstance(source, str):
        raise TypeError(f"fusec.compile: source must be str, not {type(source).__name__}")
    name = "<string>" if name is None else str(name)
    key = (source, name, bool(fuse))
    p = _cache.get(key)
    if p is None:
        with _cache_lock:
            p = _cache.get(key)
            if p is None:
                p = _cache[key] = Program(source, name, fuse)
    return p


def compile_file(path, fuse=True):
    """Compile the program in a file (diagnostics name the file, kernels its stem)."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise OSError(e.errno, f"cannot read {path}: {e.strerror}", path) from None
    # bytes that are not UTF-8 reach the compiler as they are (its lexer locates them)
    return compile(data.decode("utf-8", "surrogateescape"), name=path, fuse=fuse)

"""A region at run time: the callable the rewritten graph calls.

It turns the region's arguments into the program's inputs (most pass as
they are; see InputSpec for the others), calls the fusec Program, which
launches on torch's current stream with outputs from torch's allocator, and
gives each output node its PyTorch shape (a view, or an expand where the
node is a broadcast). What can be decided once is: `_direct` marks regions
whose arguments and outputs need nothing, the common case, whose call is the
program call alone.

CPU tensors (a model on the CPU, or the tests of a machine without a GPU)
run through the package's CPU reference interpreter, by way of NumPy:
exact and slow, there to make the whole path testable anywhere.
"""

import threading

import torch

from .fz import FZ_DTYPE

__all__ = ["Region", "compile_source", "jit_async", "example_shapes", "kernel_names", "features"]

NAME = "torch"  # the programs' name: their kernels are torch_k0, torch_k1, ...


def compile_source(source, fuse=True):
    import fusec
    return fusec.compile(source, name=NAME, fuse=fuse)


def jit_async(program, device, shapes, interpret=True):
    """Start JIT-compiling `program` for CUDA device `device` on a worker
    thread (the package releases the GIL while NVRTC runs), and return the
    Future, or None when there is nothing to compile now (a CPU region,
    `device` None, or sizes that cannot be told, `shapes` None). It compiles
    the kernel paths that calls at `shapes` (the example inputs' sizes)
    take, not every path, since each path is an NVRTC compile of its own and
    other sizes compile theirs when they come (cached on disk).

    The caller does not wait: the compile overlaps what Dynamo and
    AOTAutograd do after the backend returns (building guards, wrapping the
    graph). With `interpret`, until it ends the program's calls on that
    device run on fusec's GPU interpreter (no compile, every node a pass over
    memory); else the region's first call waits for it (Region)."""
    if device is None or shapes is None:
        return None
    if not interpret:
        return _pool().submit(program.prepare, shapes, device)
    from .._gpu import device_program
    dp = device_program(program, device)
    dp.interpret(True)
    return _pool().submit(_prepare_interpreting, program, dp, shapes, device)


def _prepare_interpreting(program, dp, shapes, device):
    try:
        program.prepare(shapes, device)
    finally:
        dp.interpret(False)


_POOL = None


def _pool():
    global _POOL
    if _POOL is None:
        import os
        from concurrent.futures import ThreadPoolExecutor
        _POOL = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1), thread_name_prefix="fusec-jit")
    return _POOL


def example_shapes(inputs):
    """The shapes of the program's tensor inputs at the graph's example
    inputs (a dynamic size by its hint), in order; None where they cannot be
    told (an input sliced by `index`, a size without a hint)."""
    shapes = []
    for spec in inputs:
        if spec.kind == "reshape1":
            shapes.append((1,))
        elif spec.kind == "tensor":
            val = spec.node.meta.get("val")
            if spec.index is not None or val is None:
                return None
            dims = [_hint(d) for d in val.shape]
            if any(d is None for d in dims):
                return None
            shapes.append(tuple(dims))
    return shapes


def _hint(d):
    if isinstance(d, int):
        return d
    hint = getattr(getattr(d, "node", None), "hint", None)
    return hint if isinstance(hint, int) else None


def kernel_names(program):
    return [f"{program.name}_k{i}" for i in range(program.kernels)]


_FEATURES = None
_PROBES = {
    "tan": "tan(x)", "atan": "atan(x)", "asin": "asin(x)", "acos": "acos(x)", "sinh": "sinh(x)",
    "cosh": "cosh(x)", "atan2": "atan2(x, x)", "hypot": "hypot(x, x)", "bitwise": "f32(i32(x) & 1)",
}


def features():
    """The fz 1.1 features this libfusec has (one compile, no GPU, per process)."""
    global _FEATURES
    if _FEATURES is None:
        import fusec
        body = "\n".join(f"out {name} = {expr}" for name, expr in _PROBES.items())
        try:
            fusec.compile("in x: f32[N]\n" + body + "\n", name="probe")
            _FEATURES = frozenset(_PROBES)
        except fusec.CompileError:
            _FEATURES = frozenset()
    return _FEATURES


class Region:
    """Calls `program` on the region's arguments; returns a tuple with one
    tensor per output node (see translate.OutputSpec).

    `pending` is the Future of the program's JIT compile (jit_async). With
    `interpret` (as given to jit_async), calls while it runs go to the
    program, which runs them on the GPU interpreter; else the first call
    waits for it. The first call after it ended settles it: if it failed,
    `on_fail(exception)` reports it and returns what runs the region's nodes
    in PyTorch instead, from then on. A refusal found late still costs
    speed, never a wrong answer."""

    def __init__(self, name, source, program, inputs, outputs, cpu=False, pending=None, on_fail=None,
                 interpret=False):
        self.__name__ = self.__qualname__ = name
        self.source, self.program, self.cpu = source, program, cpu
        self.inputs, self.outputs = inputs, outputs
        self._nout = len(program.outputs)
        self._direct = (all(s.kind == "tensor" and s.index is None and not s.copy or s.kind == "scalar"
                            for s in inputs)
                        and [o.index for o in outputs] == list(range(self._nout))
                        and all(o.shape is None for o in outputs))
        self._pending, self._on_fail, self._fallback = pending, on_fail, None
        self._lock = threading.Lock()
        self._interpret = interpret
        # One test per call: whether the call must first settle the JIT, or
        # go to PyTorch.
        self._detour = pending is not None

    def __repr__(self):
        return f"<fusec region {self.__name__}: {self.program!r}>"

    def __call__(self, *args):
        if self._detour:
            return self._call_detoured(args)
        return self._call(args)

    def _call(self, args):
        ins = args if self._direct else [_prepare(s, a) for s, a in zip(self.inputs, args)]
        outs = _run_cpu(self.program, ins) if self.cpu else self.program(*ins)
        if self._nout == 1:
            outs = (outs,)
        if self._direct:
            return outs
        return tuple(_finish(o, outs[o.index], args) for o in self.outputs)

    def _call_detoured(self, args):
        pending = self._pending
        if self._interpret and pending is not None and not pending.done():
            try:
                return self._call(args)
            except Exception:
                if not pending.done():
                    raise
                # the JIT ended meanwhile: settle it, and run as after it
        self.settle()
        if self._fallback is not None:
            return self._fallback(*args)
        self._detour = False
        return self(*args)

    def settle(self):
        """Wait for the JIT compile; on failure, switch to the fallback."""
        if self._pending is None:
            return
        with self._lock:
            if self._pending is None:
                return
            e = self._pending.exception()
            if e is not None:
                self._fallback = self._on_fail(e)
            self._pending = self._on_fail = None


def _prepare(spec, a):
    if spec.kind == "scalar":
        return a
    if spec.kind == "size":
        return a.shape[spec.index]
    if spec.kind == "item":
        return a.item()  # a CPU tensor: no synchronisation
    if spec.kind == "reshape1":
        return a.reshape(1)
    if spec.index is not None:
        a = a[spec.index]
    return a.contiguous() if spec.copy else a


def _finish(spec, t, args):
    if spec.shape is None:
        return t
    size = [_size(s, t, args) for s in spec.shape]
    if not spec.expand:
        return t.view(size)
    aligned = [n if keep else 1 for n, keep in zip(size, spec.aligned)]
    return t.view(aligned).expand(size)


def _size(s, t, args):
    if s[0] == "int":
        return s[1]
    if s[0] == "out":
        return t.shape[s[1]]
    return args[s[1]].shape[s[2]]


def _run_cpu(program, ins):
    """The CPU reference on CPU tensors, through NumPy (bf16 as float32)."""
    arrays = []
    for a in ins:
        if isinstance(a, torch.Tensor):
            a = a.detach()
            arrays.append((a.float() if a.dtype == torch.bfloat16 else a).numpy())
        else:
            arrays.append(a)
    outs = program.run_cpu(*arrays)
    if len(program.outputs) == 1:
        outs = (outs,)
    import numpy as np
    result = []
    for spec, o in zip(program.outputs, outs):
        dtype = _TORCH_DTYPE[spec.dtype]
        if dtype == torch.bfloat16:
            o = np.asarray(o, dtype=np.float32)
        result.append(torch.from_numpy(np.ascontiguousarray(o)).to(dtype))
    return result[0] if len(result) == 1 else tuple(result)


_TORCH_DTYPE = {name: dtype for dtype, name in FZ_DTYPE.items()}

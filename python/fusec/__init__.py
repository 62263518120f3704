"""fusec from Python: compile fz programs and run them on PyTorch tensors.

    import fusec, torch
    prog = fusec.compile('''
    in x: f32[B, N]
    e = exp(x - max(x))
    out y = e / sum(e)
    ''')
    y = prog(torch.randn(4, 1000, device="cuda"))    # one fused kernel
    y = prog.run_cpu(x_numpy)                        # the CPU reference

Calls on torch tensors launch on torch's current stream of the inputs'
device, with outputs from torch's allocator; NumPy arrays run on the CPU
reference interpreter. docs/python.md has the whole API.

A pure-Python package over libfusec.so (ctypes): _lib finds and loads the
library, _program compiles and describes programs, _gpu runs them on CUDA
devices, _cpu on the CPU reference, _raw and _dlpack serve arrays of other
libraries when torch is not installed.
"""

from . import _lib
from ._errors import CompileError, Error
from ._program import Program, TensorSpec, compile, compile_file

__all__ = ["compile", "compile_file", "Program", "TensorSpec", "CompileError", "Error", "DeviceArray",
           "to_device", "version", "library_path"]

version = _lib.lib.fz_version().decode()
__version__ = version
library_path = _lib.path


def __getattr__(name):
    # the device-array helpers import numpy lazily: only when asked for
    if name in ("DeviceArray", "to_device"):
        from . import _raw
        return getattr(_raw, name)
    raise AttributeError(f"module 'fusec' has no attribute '{name}'")

"""The package's device path on the stand-in driver (tests/fakecuda.c) and a
stand-in torch (below), in a process of its own (test_fake_driver.py starts
it): device memory is host memory there, so every copy the runtime makes is
real, and launches are counted but compute nothing. That checks, without a
GPU, what surrounds a launch: signatures, runs per stream, outputs, out=,
the checks and their messages, scalars through the C call (C's own check
of an integer scalar sees the value the package passed), the path without
torch (DeviceArray, DLPack, copies to and from the device) and launch
counts.

    FUSEC_CUDA_LIBRARY=build/tests/libfakecuda.so FUSEC_FAKE_CUDA=... python3 fake_driver_check.py
"""

import ctypes
import os
import sys
import types

import numpy as np

# ---- a stand-in torch: CUDA tensors as NumPy arrays (the fake device memory is host memory) ----


class dtype:
    def __init__(self, name, np_dtype):
        self.name, self.np = name, np.dtype(np_dtype)

    def __repr__(self):
        return "torch." + self.name


class device:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class Tensor:
    def __init__(self, array, dev):
        self.a, self.device = array, dev
        self.dtype = _DTYPES[array.dtype.str if array.dtype != np.uint16 else "bf16"]

    @property
    def shape(self):
        return tuple(self.a.shape)

    def get_device(self):
        return -1 if self.device.type == "cpu" else self.device.index

    def is_contiguous(self):
        return self.a.flags.c_contiguous

    def data_ptr(self):
        return self.a.ctypes.data if self.a.size else 0

    def dim(self):
        return self.a.ndim

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def numel(self):
        return self.a.size

    def element_size(self):
        return self.a.itemsize

    def t(self):
        return Tensor(self.a.T, self.device)


float32, float64, int32, float16 = dtype("float32", np.float32), dtype("float64", np.float64), \
    dtype("int32", np.int32), dtype("float16", np.float16)
bfloat16, int64, bool_ = dtype("bfloat16", np.uint16), dtype("int64", np.int64), dtype("bool", np.bool_)
_DTYPES = {np.dtype(d.np).str: d for d in (float32, float64, int32, float16, int64, bool_)}
_DTYPES["bf16"] = bfloat16
_stream = [0]


def empty(shape, dtype=float32, device=None):
    return Tensor(np.empty(shape, dtype=dtype.np), device)


def cuda_tensor(a):
    return Tensor(np.ascontiguousarray(a) if a.ndim else a, device("cuda", 0))


torch = types.ModuleType("torch")
torch.Tensor, torch.empty, torch.device = Tensor, empty, device
torch.float32, torch.float64, torch.int32, torch.float16, torch.bfloat16, torch.int64, torch.bool = \
    float32, float64, int32, float16, bfloat16, int64, bool_
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: _stream[0])
sys.modules["torch"] = torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import fusec  # noqa: E402
from fusec import _dlpack, _raw  # noqa: E402

fake = ctypes.CDLL(os.environ["FUSEC_FAKE_CUDA"])
fake.fake_cuda_launches.restype = ctypes.c_long
fake.fake_cuda_launches.argtypes = [ctypes.POINTER(ctypes.c_void_p)]


def launches():
    s = ctypes.c_void_p()
    n = fake.fake_cuda_launches(ctypes.byref(s))
    return n, s.value or 0


def raises(exc, message, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        assert str(e) == message, f"got {str(e)!r}\nwant {message!r}"
        return
    raise AssertionError(f"no {exc.__name__}: {message}")


def check_torch_path():
    prog = fusec.compile("in x: f32[B, N]\nin w: f32[N]\nin n: i32\nout y = x * w * f32(n)\nout m = n\n",
                         name="p.fz")
    x, w = cuda_tensor(np.ones((4, 3), np.float32)), cuda_tensor(np.ones(3, np.float32))
    n0, _ = launches()
    r = prog(x, w, 7)
    assert r.y.shape == (4, 3) and r.y.dtype is torch.float32 and r.y.device == x.device
    assert r.m.shape == () and r.m.dtype is torch.int32
    n1, s1 = launches()
    assert n1 == n0 + prog.kernels and s1 == 0, (n0, n1, s1)
    prog(x, w, n=-3)
    assert len(prog._devices[0].sigs) == 1
    _stream[0] = 0x5000  # a side stream: a run of its own
    prog(x, w, 1)
    assert launches()[1] == 0x5000 and set(prog._devices[0].sigs[next(iter(prog._devices[0].sigs))].runs) == {
        0, 0x5000}
    _stream[0] = 0
    # C reads a scalar's double through the pointer the package prepared: 2.5 arrives as 2.5
    raises(ValueError, "input 'n' is i32: 2.5 is not a value of that type", prog, x, w, 2.5)
    raises(TypeError, "input 'w' is f32[N]: got a tensor of dtype torch.float64 (convert it with .to(torch.float32))",
           prog, x, cuda_tensor(np.ones(3)), 1)
    raises(ValueError, "input 'x' is not contiguous (shape (3, 4), strides (1, 3)): fusec reads dense row-major "
           "tensors; pass x.contiguous()", prog, x.t(), cuda_tensor(np.ones(4, np.float32)), 1)
    raises(ValueError, "input 'w': dim N (axis 0) is 5, but input 'x' gives N = 3", prog, x,
           cuda_tensor(np.ones(5, np.float32)), 1)
    raises(ValueError, "input 'w' is on the CPU: fusec runs torch tensors on CUDA devices (move it with .cuda(), or "
           "pass NumPy arrays for the CPU reference)", prog, x, Tensor(np.ones(3, np.float32), device("cpu")), 1)
    y, m = empty((4, 3), float32, x.device), empty((), int32, x.device)
    r = prog(x, w, 5, out=(y, m))
    assert r.y is y and r.m is m
    raises(ValueError, "out= for output 'y' overlaps input 'x': a kernel may read an input after writing an output",
           prog, x, w, 1, out=(x, m))
    empty_rows = cuda_tensor(np.ones((0, 3), np.float32))
    before = launches()[0]
    assert prog(empty_rows, w, 1).y.shape == (0, 3) and launches()[0] == before + 1  # m's kernel only


def check_kernel_counts():
    prog = fusec.compile("in x: f32[B, N]\nin w: f32[C, B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n"
                         "out z = e * w\n")
    n0 = launches()[0]
    prog(cuda_tensor(np.ones((2, 3), np.float32)), cuda_tensor(np.ones((4, 2, 3), np.float32)))
    assert launches()[0] - n0 == prog.kernels == 2
    mx = fusec.compile("in x: f32[B, N]\nout y = max(x)\n")
    raises(ValueError, "max at 2:9 reduces an empty axis (N = 0)", mx, cuda_tensor(np.ones((2, 0), np.float32)))


def check_without_torch():
    prog = fusec.compile("in x: f32[N]\nin s: f32\nout y = x\nout z = x * s\n")
    a = np.arange(6, dtype=np.float32)
    d = fusec.to_device(a)
    np.testing.assert_array_equal(d.numpy(), a)
    assert d.__cuda_array_interface__["data"] == (d.ptr, False)
    n0 = launches()[0]
    r = _raw.call(prog, [d, 2.0], None)
    assert isinstance(r.y, fusec.DeviceArray) and r.y.shape == (6,) and launches()[0] == n0 + 1
    v = _dlpack.view(r.y, "y")  # fusec's own export, read back
    assert (v.ptr, v.shape, v.dtype, v.device_type) == (r.y.ptr, (6,), "f32", _dlpack.CUDA)
    r2 = _raw.call(prog, [r.y, 1.0], None)  # a DeviceArray as input, through DLPack
    assert r2.z.shape == (6,) and launches()[0] == n0 + 2
    h = fusec.to_device(np.ones(3, np.float16))
    raises(TypeError, "input 'x' is f32[N]: got an array of dtype f16", _raw.call, prog, [h, 1.0], None)


def check_prepare():
    prog = fusec.compile("in x: f32[B, N]\nin w: f32[N]\ne = exp(x * w - max(x * w))\nout y = e / sum(e)\n",
                         name="q.fz")
    prog.prepare([(4, 3), (3,)])
    prog.prepare()
    raises(ValueError, "input 'w': dim N (axis 0) is 5, but input 'x' gives N = 3", prog.prepare, [(4, 3), (5,)])
    n0, _ = launches()
    prog(cuda_tensor(np.ones((4, 3), np.float32)), cuda_tensor(np.ones(3, np.float32)))
    assert launches()[0] == n0 + 1


if __name__ == "__main__":
    for check in (check_torch_path, check_kernel_counts, check_without_torch, check_prepare):
        check()
        print("ok", check.__name__)

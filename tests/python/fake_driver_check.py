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
_current = [0]  # the current device
_fast_allocs = [0]


def empty(*size, dtype=float32, device=None):
    shape = size[0] if len(size) == 1 and isinstance(size[0], tuple) else size
    return Tensor(np.empty(shape, dtype=dtype.np), device)


def empty_like(t):
    return Tensor(np.empty_like(t.a), t.device)


def _empty_strided_cuda(size, stride, dtype):  # torch's private one: on the current device
    _fast_allocs[0] += 1
    a = np.empty(size, dtype=dtype.np)
    assert a.size == 0 or tuple(s // a.itemsize for s in a.strides) == tuple(stride)
    return Tensor(a, device("cuda", _current[0]))


def cuda_tensor(a):
    return Tensor(np.ascontiguousarray(a) if a.ndim else a, device("cuda", 0))


torch = types.ModuleType("torch")
torch.Tensor, torch.empty, torch.empty_like, torch.device = Tensor, empty, empty_like, device
torch.float32, torch.float64, torch.int32, torch.float16, torch.bfloat16, torch.int64, torch.bool = \
    float32, float64, int32, float16, bfloat16, int64, bool_
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: _stream[0], _cuda_getDevice=lambda: _current[0],
                                 _dynamo=types.SimpleNamespace(
                                     guards=types.SimpleNamespace(_empty_strided_cuda=_empty_strided_cuda)))
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
    (sig,) = prog._signatures.values()
    assert list(prog._calls.values()) == [sig.call]  # later calls find it by their key alone
    _stream[0] = 0x5000  # a side stream: a run of its own
    prog(x, w, 1)
    assert launches()[1] == 0x5000 and set(sig.calls) == {0, 0x5000}
    _stream[0] = 0
    # the outputs: from torch's _empty_strided_cuda where the current device is the inputs', else y like x (its
    # shape and dtype) from torch.empty_like and the scalar m from torch.empty
    assert "    o0 = empty_strided((4, 3), (3, 1), dtype0) if here else empty_like(a[0])\n" in sig.source and \
        "    o1 = empty_strided((), (), dtype1) if here else empty((), dtype=dtype1, device=device)\n" in sig.source, \
        sig.source
    fast = _fast_allocs[0]
    r = prog(x, w, 7)
    assert _fast_allocs[0] == fast + 2 and r.y.shape == (4, 3) and r.m.dtype is torch.int32
    _current[0] = 1
    r = prog(x, w, 7)
    assert _fast_allocs[0] == fast + 2 and r.y.device == x.device and r.m.device == x.device
    assert r.y.shape == (4, 3) and r.y.dtype is torch.float32 and r.m.shape == () and r.m.dtype is torch.int32
    _current[0] = 0
    # C reads a scalar's double as the package packed it: 2.5 arrives as 2.5
    raises(ValueError, "input 'n' is i32: 2.5 is not a value of that type", prog, x, w, 2.5)
    raises(TypeError, "input 'n' is a scalar i32: got str (pass a Python number)", prog, x, w, "2")
    raises(ValueError, "input 'n' is a scalar i32: got a tensor on cuda:0, whose value would need a synchronising "
           "copy (pass a Python number)", prog, x, w, cuda_tensor(np.array(2, np.int32)))
    # a call that differs from the signature in anything the checks look at misses its key
    raises(TypeError, "input 'w' is f32[N]: got a tensor of dtype torch.float64 (convert it with .to(torch.float32))",
           prog, x, cuda_tensor(np.ones(3)), 1)
    raises(ValueError, "input 'x' is not contiguous (shape (3, 4), strides (1, 3)): fusec reads dense row-major "
           "tensors; pass x.contiguous()", prog, x.t(), cuda_tensor(np.ones(4, np.float32)), 1)
    raises(ValueError, "input 'w': dim N (axis 0) is 5, but input 'x' gives N = 3", prog, x,
           cuda_tensor(np.ones(5, np.float32)), 1)
    raises(ValueError, "input 'w' is on the CPU: fusec runs torch tensors on CUDA devices (move it with .cuda(), or "
           "pass NumPy arrays for the CPU reference)", prog, x, Tensor(np.ones(3, np.float32), device("cpu")), 1)
    raises(TypeError, "input 'w' is the tensor f32[N]: got ndarray, among torch tensors (pass every tensor input as a "
           "torch tensor)", prog, x, np.ones(3, np.float32), 1)
    y, m = empty((4, 3), dtype=float32, device=x.device), empty((), dtype=int32, device=x.device)
    for _ in range(2):  # checked, then found by key
        r = prog(x, w, 5, out=(y, m))
        assert r.y is y and r.m is m
    assert (sig.key, prog._out_key((y, m))) in prog._calls
    assert prog(x, w, 5, out=[y, m]).y is y and prog(x, w, 5, out={"m": m, "y": y}).m is m
    raises(ValueError, "out= for output 'y' must be torch.float32 of shape (4, 3): got torch.float64 of shape (4, 3)",
           prog, x, w, 1, out=(empty((4, 3), dtype=float64, device=x.device), m))
    raises(ValueError, "out= for output 'y' is not contiguous", prog, x, w, 1,
           out=(cuda_tensor(np.ones((3, 4), np.float32)).t(), m))
    raises(TypeError, "out= must give all 2 outputs of program 'p.fz' (y, m)", prog, x, w, 1, out=y)
    # the key of out=(x, m) is the key of out=(y, m): C finds the overlap, by address ranges
    raises(ValueError, "output 'y' overlaps input 'x': a kernel may read an input after writing an output",
           prog, x, w, 1, out=(x, m))
    buf = cuda_tensor(np.ones(15, np.float32))
    row = Tensor(buf.a[:12].reshape(4, 3), x.device)
    raises(ValueError, "output 'y' overlaps input 'w': a kernel may read an input after writing an output",
           prog, x, Tensor(buf.a[11:14], x.device), 1, out=(row, m))  # w's first element is y's last
    assert prog(x, Tensor(buf.a[12:], x.device), 1, out=(row, m)).y is row  # just after it
    raises(ValueError, "output 'm' overlaps input 'w': a kernel may read an input after writing an output",
           prog, x, w, 1, out=(y, Tensor(w.a[1:2].view(np.int32).reshape(()), x.device)))
    empty_rows = cuda_tensor(np.ones((0, 3), np.float32))
    before = launches()[0]
    assert prog(empty_rows, w, 1).y.shape == (0, 3) and launches()[0] == before + 1  # m's kernel only


def check_signatures():
    """Without torch's private allocation; the oldest of more than 64
    signatures goes, with its keys; calls from several threads."""
    import threading
    from fusec import _gpu
    fast, _gpu._fast = _gpu._fast, False
    prog = fusec.compile("in x: f32[N]\nin s: f32\nout y = x * s\nout t = sum(x)\n")
    xs = [cuda_tensor(np.ones(n, np.float32)) for n in range(1, 67)]
    for x in xs:
        r = prog(x, 2.0)
        assert r.y.shape == x.shape and r.t.shape == (1,) and r.y.device == r.t.device == x.device
    _gpu._fast = fast
    sig = prog._signatures[prog._key([xs[-1]])]
    assert "    o0 = empty_like(a[0])\n" in sig.source and "    o1 = empty(1, dtype=dtype1, device=device)\n" in \
        sig.source, sig.source
    assert len(prog._signatures) == 64 and len(prog._calls) == 64
    assert prog._key([xs[0]]) not in prog._calls and prog._key([xs[-1]]) in prog._calls
    assert prog(xs[0], 1.0).y.shape == (1,) and prog._key([xs[0]]) in prog._calls
    n0, failures = launches()[0], []

    def work():
        try:
            for x in xs[:8] * 25:
                assert prog(x, 3.0).y.shape == x.shape
        except Exception as e:  # reported below
            failures.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between any two steps of a call
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sys.setswitchinterval(interval)
    assert not failures and launches()[0] == n0 + 4 * 200 * prog.kernels, failures


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
    for check in (check_torch_path, check_signatures, check_kernel_counts, check_without_torch, check_prepare):
        check()
        print("ok", check.__name__)

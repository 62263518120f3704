"""bench/fake_gpu.py: stand-ins for torch, triton and a GPU fusec, for testing
bench/run.py on a machine with neither a GPU nor PyTorch (test_scripts.py).

The fake torch computes with NumPy on the CPU and implements only what
run.py and sweep.py call. The fake fusec answers `bench` with the real binary's
--dry-run figures plus timings that are made up (1.0, 2.0 µs: no
measurement), and runs `run` through the real binary's CPU interpreter, so
that run.py's .npy hand-over is checked against the real `fusec run`.
"""

import contextlib
import math
import sys
import types

import numpy as np


class DType:
    def __init__(self, name, np_dtype, size):
        self.name, self.np, self.size = name, np_dtype, size

    def __repr__(self):
        return "torch." + self.name


float32 = DType("float32", np.float32, 4)
float64 = DType("float64", np.float64, 8)
float16 = DType("float16", np.float16, 2)
bfloat16 = DType("bfloat16", np.float32, 2)  # NumPy has none: float32 storage
int32 = DType("int32", np.int32, 4)
int64 = DType("int64", np.int64, 8)
bool_ = DType("bool", np.bool_, 1)


def _round_bf16(a):
    b = np.asarray(a, dtype=np.float32).copy().view(np.uint32)
    b += 0x7FFF + ((b >> 16) & 1)
    return (b & 0xFFFF0000).view(np.float32)


class Tensor:
    def __init__(self, a, dtype):
        self.dtype = dtype
        a = np.asarray(a)
        self.a = _round_bf16(a) if dtype is bfloat16 else a.astype(dtype.np)

    shape = property(lambda self: self.a.shape)

    def _wrap(self, a):
        return Tensor(a, self.dtype)

    def _val(self, o):
        return o.a if isinstance(o, Tensor) else o

    def __add__(self, o): return self._wrap(self.a + self._val(o))
    __radd__ = __add__
    def __sub__(self, o): return self._wrap(self.a - self._val(o))
    def __rsub__(self, o): return self._wrap(self._val(o) - self.a)
    def __mul__(self, o): return self._wrap(self.a * self._val(o))
    __rmul__ = __mul__
    def __truediv__(self, o): return self._wrap(self.a / self._val(o))
    def __lt__(self, o): return Tensor(self.a < self._val(o), bool_)

    def amax(self, dim, keepdim=False): return self._wrap(self.a.max(axis=dim, keepdims=keepdim))
    def sum(self, dim, keepdim=False): return self._wrap(self.a.sum(axis=dim, keepdims=keepdim, dtype=np.float64))
    def mean(self, dim, keepdim=False): return self._wrap(self.a.mean(axis=dim, keepdims=keepdim, dtype=np.float64))
    def to(self, dtype): return Tensor(self.a, dtype)
    def double(self): return Tensor(self.a, float64)
    def float(self): return Tensor(self.a, float32)
    def cpu(self): return self
    def cuda(self): return self
    def numpy(self): return self.a.astype(np.float16 if self.dtype is float16 else self.a.dtype)
    def numel(self): return self.a.size
    def element_size(self): return self.dtype.size
    def all(self): return Tensor(np.all(self.a), bool_)
    def item(self): return self.a.item()
    def is_floating_point(self): return self.dtype in (float16, bfloat16, float32, float64)
    def __bool__(self): return bool(self.a)

    def clone(self): return Tensor(self.a.copy(), self.dtype)

    def copy_(self, o):
        self.a[...] = o.a
        return self


class Generator:
    def __init__(self, device=None):
        self.rng = np.random.default_rng(0)

    def manual_seed(self, s):
        self.rng = np.random.default_rng(s)


def rand(shape, generator=None, device=None, dtype=float32):
    rng = generator.rng if generator else np.random.default_rng(0)
    return Tensor(rng.random(shape), dtype)


def empty_like(t): return Tensor(np.empty_like(t.a), t.dtype)
def exp(t): return t._wrap(np.exp(t.a))
def log(t): return t._wrap(np.log(t.a))
def sqrt(t): return t._wrap(np.sqrt(t.a))
def is_tensor(v): return isinstance(v, Tensor)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def where(c, a, b):
    t = a if isinstance(a, Tensor) else b
    return t._wrap(np.where(c.a, t._val(a), t._val(b)))


def tanh(t): return t._wrap(np.tanh(t.a))
def rsqrt(t): return t._wrap(1 / np.sqrt(t.a))
def relu(t): return t._wrap(np.maximum(t.a, 0))
def isfinite(t): return Tensor(np.isfinite(t.a), bool_)
def from_numpy(a): return Tensor(a, float64 if a.dtype == np.float64 else float32)


def _compile(fn, dynamic=None):
    return fn


def _functional():
    F = types.ModuleType("torch.nn.functional")

    def gelu(x, approximate="none"):
        if approximate == "none":
            return x._wrap(0.5 * x.a * (1 + _erf(x.a / math.sqrt(2))))
        c = math.sqrt(2 / math.pi)
        return x._wrap(0.5 * x.a * (1 + np.tanh(c * (x.a + 0.044715 * x.a ** 3))))

    def silu(x):
        return x._wrap(x.a / (1 + np.exp(-x.a)))

    def softmax(x, dim=-1):
        e = np.exp(x.a - x.a.max(axis=dim, keepdims=True))
        return x._wrap(e / e.sum(axis=dim, keepdims=True))

    def layer_norm(x, shape, w, b, eps):
        mu = x.a.mean(axis=-1, keepdims=True)
        var = ((x.a - mu) ** 2).mean(axis=-1, keepdims=True)
        return x._wrap((x.a - mu) / np.sqrt(var + eps) * w.a + b.a)

    def rms_norm(x, shape, w, eps):
        return x._wrap(x.a / np.sqrt((x.a * x.a).mean(axis=-1, keepdims=True) + eps) * w.a)

    F.gelu, F.silu, F.softmax, F.layer_norm, F.rms_norm = gelu, silu, softmax, layer_norm, rms_norm
    return F


class _Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 1e-3  # 1 µs a replay, made up


class _Graph:
    """A CUDA graph: the fake runs the captured calls once, at capture."""

    def replay(self):
        pass


@contextlib.contextmanager
def _capture(graph):
    assert isinstance(graph, _Graph)
    yield


class _Stream:
    def wait_stream(self, other):
        pass


@contextlib.contextmanager
def _on_stream(stream):
    yield


class _Props:
    multi_processor_count = 2
    L2_cache_size = 1 << 20
    total_memory = 1 << 30


def install():
    """Put the fake torch and triton in sys.modules."""
    torch = types.ModuleType("torch")
    for k, v in dict(globals()).items():
        if isinstance(v, DType) or k in ("Tensor", "Generator", "rand", "empty_like", "exp", "tanh", "rsqrt",
                                         "relu", "isfinite", "from_numpy", "log", "sqrt", "is_tensor",
                                         "where"):
            setattr(torch, k, v)
    torch.bool = bool_
    torch.__version__ = "fake"
    torch.compile = _compile
    torch._dynamo = types.SimpleNamespace(reset=lambda: None)
    torch.linalg = types.SimpleNamespace(vector_norm=lambda t: Tensor(np.linalg.norm(t.a.ravel()), float64))
    torch.version = types.SimpleNamespace(cuda="fake")
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None,
                                       get_device_name=lambda i=None: "FAKE GPU",
                                       get_device_properties=lambda i=None: _Props(),
                                       set_device=lambda i: None, current_device=lambda: 0,
                                       Stream=_Stream, stream=_on_stream, current_stream=_Stream,
                                       CUDAGraph=_Graph, graph=_capture, Event=_Event)
    nn = types.ModuleType("torch.nn")
    nn.functional = _functional()
    torch.nn = nn
    triton = types.ModuleType("triton")
    triton.__version__ = "fake"
    testing = types.ModuleType("triton.testing")

    def do_bench(fn, warmup=25, rep=100, return_mode="mean"):
        assert return_mode == "median"
        fn()
        return 1e-3  # 1 µs, made up
    testing.do_bench = do_bench
    triton.testing = testing
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": nn.functional,
                        "triton": triton, "triton.testing": testing})


FAKE_FUSEC = r'''#!/usr/bin/env python3
# A GPU fusec for tests: bench gives the real --dry-run figures and made-up times.
import json, os, subprocess, sys
real = os.environ["FAKE_REAL_FUSEC"]
args = sys.argv[1:]
if args and args[0] == "run":
    os.execv(real, [real] + args + ["--cpu"])
if not args or args[0] != "bench":
    os.execv(real, [real] + args)
keep, i = [], 1
while i < len(args):
    if args[i] in ("--reps", "--warmup", "--seed", "--device"):
        i += 2
        continue
    if args[i] not in ("--json", "--graph"):
        keep.append(args[i])
    i += 1
p = subprocess.run([real, "bench"] + keep + ["--dry-run", "--json"], capture_output=True, text=True)
if p.returncode:
    sys.stderr.write(p.stderr)
    sys.exit(p.returncode)
d = json.loads(p.stdout)
for k, t in (("fused", 1.0), ("per_op", 2.0)):
    if k in d:
        d[k].update(median_us=t, min_us=t, host_us_per_call=3.0, wall_us_per_call=4.0, compile_ms=5.0,
                    jit_ms=5.0, compiles=1, disk_hits=0)
        if "--graph" in args:
            d[k].update(graph_host_us_per_call=6.0, graph_wall_us_per_call=7.0)
if "fused" in d and "per_op" in d:
    # FAKE_OUTPUTS_DIFF: fused and per-op outputs that disagree (a test of the checks)
    d.update(speedup=2.0, outputs_rel_diff=float(os.environ.get("FAKE_OUTPUTS_DIFF", 0.0)), outputs_nan=False)
print(json.dumps(d))
'''

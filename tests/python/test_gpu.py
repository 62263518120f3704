"""The package on a GPU (skipped without torch and a CUDA device): every
example against PyTorch eager in float64, fused and per-op; torch's
streams and allocator; out=; the errors of device tensors; inputs through
__cuda_array_interface__ and DLPack; the path without torch (DeviceArray);
and random programs of the C tests' generator against the CPU reference."""

import concurrent.futures
import json
import os
import subprocess

import numpy as np
import pytest

import fusec
from conftest import progen_tool
from fusec import _gpu, _raw
from references import REFERENCES, TorchOps, assert_close, make_inputs, random_inputs

# 4500 rows: enough (4224 on an H200) for the register path's lane class, a
# warp a row: its entries of 32 elements (1001), of 3 (93, f32 rows), and
# f32 rows of a multiple of 4 its aligned class would hold half empty (300);
# 300 rows of 32768: every row example in the row cache's aligned class (_rowa);
# 40000 rows (33792 fill an H100 or H200 at 8 threads a row) of 32, 64 and 128:
# rows of one or two 128-byte lines of f32 or halves, the line entries (8
# threads a row, 16 for two lines of halves: launch_rules.c's line_rule)
SIZES = [(3, 67), (64, 1000), (4097, 33), (2, 100003), (8, 1), (4500, 1001), (4500, 93), (4500, 300),
         (300, 32768), (40000, 32), (40000, 64), (40000, 128)]


def _torch_dtype(torch, fz):
    return {"bool": torch.bool, "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
            "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}[fz]


def _example_args(torch, prog, rows, cols, seed):
    vals = make_inputs(prog, rows, cols, seed)
    args = []
    for s in prog.inputs:
        v = vals[s.name]
        args.append(torch.from_numpy(v).to("cuda", _torch_dtype(torch, s.dtype)) if s.shape else v)
    return args


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "per-op"])
@pytest.mark.parametrize("rows,cols", SIZES)
def test_every_example_matches_torch_eager_float64(cuda, example_files, rows, cols, fuse):
    torch = cuda
    F = TorchOps(torch)
    for path in example_files:
        stem = os.path.basename(path)[:-3]
        prog = fusec.compile_file(path, fuse=fuse)
        args = _example_args(torch, prog, rows, cols, seed=rows + cols)
        got = prog(*args)
        got = got if isinstance(got, tuple) else (got,)
        want = REFERENCES[stem](F, *[a.double() if isinstance(a, torch.Tensor) else a for a in args])
        for spec, g, w in zip(prog.outputs, got, want):
            assert g.device == args[0].device and g.dtype == _torch_dtype(torch, spec.dtype), f"{stem}: {spec.name}"
            w = torch.broadcast_to(w, g.shape)
            # per-op mode stores (rounds) every half value, as eager does: twice the tolerance
            assert_close(f"{stem} {rows}x{cols} {'fused' if fuse else 'per-op'}: {spec.name}",
                         g.double().cpu().numpy(), w.cpu().numpy(), spec.dtype, cols, per_op=not fuse)


def test_outputs_come_from_torch_on_the_inputs_device(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\nout m = max(x)\n")
    x = torch.randn(16, 256, device="cuda")
    before = torch.cuda.memory_allocated()
    r = prog(x)
    assert torch.cuda.memory_allocated() - before >= (16 * 256 + 16) * 4  # torch's allocator made them
    assert r.y.shape == (16, 256) and r.m.shape == (16, 1) and r.y.is_contiguous()
    torch.testing.assert_close(r.y, torch.softmax(x, -1))
    torch.testing.assert_close(r.m, x.amax(-1, keepdim=True))


def test_runs_on_torchs_current_stream_without_synchronising(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[N]\nin a: f32\nout y = x * a\n")
    x = torch.zeros(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # first: the module, the run and the output block, made before the check
        prog(x, 2.0)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # keeps the side stream busy for a while
        x.fill_(3.0)                     # ordered after the sleep, on the side stream
        y = prog(x, 2.0)                 # must see the 3s: launched on the side stream
        assert not side.query(), "the call waited for the side stream"
    assert torch.cuda.default_stream().query(), "the call put work on the default stream"
    side.synchronize()
    assert torch.equal(y, torch.full_like(x, 6.0))
    # and back on the default stream, a fresh run of its own
    y2 = prog(x, 0.5)
    torch.cuda.synchronize()
    assert torch.equal(y2, torch.full_like(x, 1.5))
    (sig,) = prog._signatures.values()
    assert set(sig.calls) == {side.cuda_stream, torch.cuda.default_stream().cuda_stream}


@pytest.mark.parametrize("fuse", [True, False])
def test_first_call_inside_a_cuda_graph_capture(cuda, fuse):
    # torch.cuda.graph captures on a stream of its own, where the program has
    # no run yet: the run's first launch allocates its scratch (the split
    # rows' workspace fused, the temporaries per-op) inside the capture,
    # which must go on; the graph then replays on new inputs
    torch = cuda
    prog = fusec.compile("in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", fuse=fuse)
    x = torch.randn(2, 1 << 20, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = prog(x)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y.double(), torch.softmax(x.double(), -1), rtol=1e-5, atol=1e-12)


def test_out_writes_into_given_tensors(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[B, N]\nout s = sum(x)\nout y = x + 1\n")
    x = torch.randn(8, 33, device="cuda")
    s, y = torch.empty(8, 1, device="cuda"), torch.empty(8, 33, device="cuda")
    r = prog(x, out=(s, y))
    assert r.s is s and r.y is y
    torch.testing.assert_close(y, x + 1)
    torch.testing.assert_close(s, x.sum(-1, keepdim=True))
    y.zero_()
    assert prog(x, out={"y": y, "s": s}).y is y
    torch.testing.assert_close(y, x + 1)
    single = fusec.compile("in x: f32[N]\nout y = x * 2\n")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        o = torch.empty(5, device="cuda")
        assert single(torch.ones(5, device="cuda"), out=o) is o
    side.synchronize()
    assert torch.equal(o, torch.full((5,), 2.0, device="cuda"))


def _raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as e:
        fn(*args, **kwargs)
    assert str(e.value) == message


def test_errors_of_device_tensors(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[B, N]\nin w: f32[N]\nin n: f32\nout y = x * w * n\n", name="p.fz")
    x, w = torch.ones(4, 3, device="cuda"), torch.ones(3, device="cuda")
    _raises(TypeError, "input 'w' is f32[N]: got a tensor of dtype torch.float64 (convert it with .to(torch.float32))",
            prog, x, w.double(), 1.0)
    _raises(ValueError, "input 'x' is not contiguous (shape (3, 4), strides (1, 3)): fusec reads dense row-major "
            "tensors; pass x.contiguous()", prog, x.t(), torch.ones(4, device="cuda"), 1.0)
    _raises(ValueError, "input 'w': dim N (axis 0) is 5, but input 'x' gives N = 3", prog, x,
            torch.ones(5, device="cuda"), 1.0)
    _raises(ValueError, "input 'x' is f32[B, N] (rank 2): got a tensor of shape (12,) (rank 1)", prog,
            torch.ones(12, device="cuda"), w, 1.0)
    _raises(ValueError, "input 'w' is on the CPU: fusec runs torch tensors on CUDA devices (move it with .cuda(), or "
            "pass NumPy arrays for the CPU reference)", prog, x, torch.ones(3), 1.0)
    _raises(ValueError, "input 'n' is a scalar f32: got a tensor on cuda:0, whose value would need a synchronising "
            "copy (pass a Python number)", prog, x, w, torch.tensor(2.0, device="cuda"))
    _raises(TypeError, "input 'w' is the tensor f32[N]: got ndarray, among torch tensors (pass every tensor input as "
            "a torch tensor)", prog, x, np.ones(3, np.float32), 1.0)
    y = torch.empty(4, 3, device="cuda")
    _raises(ValueError, "out= for output 'y' must be torch.float32 of shape (4, 3): got torch.float32 of shape (3, 4)",
            prog, x, w, 1.0, out=torch.empty(3, 4, device="cuda"))
    _raises(ValueError, "output 'y' overlaps input 'x': a kernel may read an input after writing an output",
            prog, x, w, 1.0, out=x)
    prog(x, w, 1.0, out=y)  # now out= of this dtype and shape takes the fast path, where C finds the overlap
    _raises(ValueError, "output 'y' overlaps input 'x': a kernel may read an input after writing an output",
            prog, x, w, 1.0, out=x)
    buf = torch.ones(15, device="cuda")  # w's last element in y's first row, then w just after y
    _raises(ValueError, "output 'y' overlaps input 'w': a kernel may read an input after writing an output",
            prog, x, buf[11:14], 1.0, out=buf[:12].view(4, 3))
    torch.testing.assert_close(prog(x, buf[12:], 1.0, out=buf[:12].view(4, 3)), torch.ones(4, 3, device="cuda"))
    _raises(TypeError, "out= must give all 1 output of program 'p.fz' (y)", prog, x, w, 1.0, out=[y, y])
    # a CPU 0-d tensor is a number, and a good call after errors still works
    torch.testing.assert_close(prog(x, w, torch.tensor(2.0), out=y), torch.full((4, 3), 2.0, device="cuda"))
    if torch.cuda.device_count() > 1:
        _raises(ValueError, "input 'w' is on cuda:1, but input 'x' is on cuda:0: all inputs of a call must be on one "
                "device", prog, x, w.to("cuda:1"), 1.0)


def test_calls_from_threads(cuda):
    """Threads calling one program with the same signature share its run on
    the default stream: each call binds its own pointers and launches."""
    import sys
    torch = cuda
    prog = fusec.compile("in x: f32[N]\nin s: f32\nout y = x * s\n")
    xs = [torch.full((1000,), float(i + 1), device="cuda") for i in range(4)]

    def work(i):
        outs = [(k, prog(xs[i], float(k))) for k in range(300)]
        torch.cuda.synchronize()
        return [k for k, y in outs if not torch.equal(y, xs[i] * k)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            assert list(pool.map(work, range(4))) == [[]] * 4
    finally:
        sys.setswitchinterval(interval)


def test_outputs_from_torchs_cheapest_allocation(cuda):
    """torch's private _empty_strided_cuda works as the package expects (on
    a torch without it, calls fall back to torch.empty_like and torch.empty,
    and this test says so); on another current device, outputs still go to
    the inputs' device."""
    torch = cuda
    prog = fusec.compile("in x: f32[B, N]\nout y = x + 1\nout s = sum(x)\n")
    x = torch.randn(5, 7, device="cuda")
    r = prog(x)
    (sig,) = prog._signatures.values()
    assert _gpu._fast_alloc(0) is not None and "empty_strided((5, 7), (7, 1), dtype0) if here" in sig.source, \
        sig.source
    torch.testing.assert_close(r.y, x + 1)
    torch.testing.assert_close(r.s, x.sum(-1, keepdim=True))
    if torch.cuda.device_count() > 1:
        with torch.cuda.device(1):
            r = prog(x)
        assert r.y.device == r.s.device == x.device
        torch.testing.assert_close(r.y, x + 1)


def test_each_device_of_the_tensors(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[N]\nout y = x * 2\n")
    for d in range(torch.cuda.device_count()):
        x = torch.arange(4.0, device=f"cuda:{d}")
        y = prog(x)
        assert y.device == x.device
        torch.testing.assert_close(y, x * 2)
    assert sorted(prog._devices) == list(range(torch.cuda.device_count()))


def test_one_signature_per_shape(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[B, N]\nout y = x - max(x)\n")
    for shape in [(4, 8), (4, 8), (2, 8), (4, 8), (0, 8)]:
        x = torch.randn(*shape, device="cuda")
        torch.testing.assert_close(prog(x), x - x.amax(-1, keepdim=True))
    assert len(prog._signatures) == 3


def test_cuda_array_interface_and_dlpack_inputs(cuda):
    torch = cuda
    prog = fusec.compile("in x: f32[N]\nin y: f32[N]\nout z = x * y\n")
    x, y = torch.arange(5.0, device="cuda"), torch.full((5,), 3.0, device="cuda")

    class CAI:  # what CuPy or Numba arrays show
        def __init__(self, t):
            self.__cuda_array_interface__ = t.__cuda_array_interface__
            self.t = t

    class DL:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None, **kwargs):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    want = x * y
    for a, b in [(CAI(x), CAI(y)), (DL(x), DL(y)), (torch.utils.dlpack.to_dlpack(x), DL(y))]:
        z = prog(a, b)
        assert isinstance(z, torch.Tensor)
        torch.testing.assert_close(z, want)


def test_without_torch_device_arrays(gpu_context):
    """The no-torch path (as if torch were not installed): DeviceArray in and out."""
    prog = fusec.compile("in x: f32[B, N]\nin s: f32\ne = exp(x * s - max(x * s))\nout y = e / sum(e)\n"
                         "out h = bf16(e)\n")
    xs = np.random.default_rng(0).standard_normal((5, 300)).astype(np.float32)
    x = fusec.to_device(xs)
    assert x.__cuda_array_interface__["shape"] == (5, 300)
    y, h = _raw.call(prog, [x, 0.5], None)
    assert isinstance(y, fusec.DeviceArray) and (y.shape, y.dtype, h.dtype) == ((5, 300), "f32", "bf16")
    want = prog.run_cpu(xs, 0.5)
    np.testing.assert_allclose(y.numpy(), want.y, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(h.numpy().astype(np.float32), want.h.astype(np.float32), rtol=1e-2)
    assert not hasattr(h, "__cuda_array_interface__")  # bf16: DLPack only
    out = fusec.DeviceArray((5, 300), "f32"), fusec.DeviceArray((5, 300), "bf16")
    r = _raw.call(prog, [x, 0.5], out)
    assert r.y is out[0]
    np.testing.assert_allclose(out[0].numpy(), want.y, rtol=1e-5, atol=1e-7)
    try:
        import torch
    except ImportError:
        return
    t = torch.from_dlpack(y)  # fusec's export, consumed by torch without a copy
    assert t.data_ptr() == y.ptr
    np.testing.assert_allclose(t.cpu().numpy(), want.y, rtol=1e-5, atol=1e-7)
    assert torch.as_tensor(x, device="cuda").data_ptr() == x.ptr


# ---- random programs ---------------------------------------------------------------------

def _compare(seed, name, got, want, atol, rtol):
    """got, want: float64 arrays; NaN matches NaN, an infinity the same one."""
    assert got.shape == want.shape, f"seed {seed}: {name} has shape {got.shape}, expected {want.shape}"
    nan = np.isnan(want)
    ok = np.where(nan, np.isnan(got), got == want)
    fin = np.isfinite(want) & np.isfinite(got)
    ok |= fin & (np.abs(got - want) <= atol + rtol * np.abs(want))
    if not ok.all():
        i = np.unravel_index(np.argmin(ok), ok.shape)
        raise AssertionError(f"seed {seed}: {name}: {int((~ok).sum())} of {ok.size} elements differ; at {i} got "
                             f"{got[i]!r}, expected {want[i]!r} (atol {atol:g}, rtol {rtol:g})")


def test_random_programs_match_the_cpu_reference(cuda):
    torch = cuda
    tool = progen_tool()
    if tool is None:
        pytest.skip("tests/progen_dump is not built (FUSEC_PROGEN_DUMP names it)")
    count = int(os.environ.get("FUSEC_PY_RANDOM_COUNT", "1000"))
    seed0 = int(os.environ.get("FUSEC_PY_RANDOM_SEED0", "500000"))
    recs = [json.loads(line) for line in subprocess.run([tool, "--size", "small", str(seed0), str(count)], check=True,
                                                        capture_output=True, text=True).stdout.splitlines()]
    assert len(recs) == count
    progs = [fusec.compile(r["source"], name=r["name"], fuse=r["seed"] % 10 != 0) for r in recs]
    rng = np.random.default_rng(seed0)
    inputs = [random_inputs(prog, rec, rng) for rec, prog in zip(recs, progs)]

    def prepare(i):  # the kernels of each program's sizes, compiled in parallel
        prog = progs[i]
        if prog._tensor_pos:
            prog.prepare([np.shape(inputs[i][p]) for p in prog._tensor_pos], 0)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 4) as pool:  # NVRTC runs without the GIL
        list(pool.map(prepare, range(count)))
    ran = 0
    for rec, prog, args in zip(recs, progs, inputs):
        if not prog._tensor_pos:  # scalars only: nothing says which device (the CPU reference runs it)
            continue
        dev = [torch.from_numpy(np.ascontiguousarray(a)).to("cuda", _torch_dtype(torch, s.dtype))
               if s.shape else a for s, a in zip(prog.inputs, args)]
        if rec["runtime_error"]:
            with pytest.raises(ValueError, match="reduces an empty axis"):
                prog(*dev)
            continue
        got = prog(*dev)
        want = prog.run_cpu(*args)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for o, g, w in zip(rec["outputs"], got, want):
            _compare(rec["seed"], o["name"], g.double().cpu().numpy(), np.asarray(w).astype(np.float64),
                     o["atol"], o["rtol"])
        ran += 1
    assert ran >= count * 9 // 10, f"only {ran} of {count} programs ran on the GPU"


# Inputs of the rows that later passes read first: in the register path's
# masked class (rows not a multiple of 8 halves) each pass copies its own a
# row ahead, a group of asynchronous copies a pass (row_plan.c's pf_late):
# two groups (modulated RMSNorm), three (q read first by the second pass).
# Rows many times the resident blocks, so that every block loops over rows
# and each group's wait matters.
LATE_INPUTS = {
    "modulated": "in x: bf16[T, C]\nin a: bf16[T, C]\nin b: bf16[T, C]\n"
                 "out y = bf16(x * rsqrt(mean(x * x) + 1e-6) * (1 + a) + b)\n",
    "three_groups": "in x: bf16[T, C]\nin a: bf16[T, C]\nin b: bf16[T, C]\nxc = x - mean(x)\n"
                    "out y = bf16(xc * rsqrt(mean(xc * xc * a) + 1e-5) + b)\n",
}


@pytest.mark.parametrize("name", sorted(LATE_INPUTS))
@pytest.mark.parametrize("rows,cols", [(4095, 2047), (2340, 3583), (1023, 8191), (8191, 4095), (3, 2047)])
def test_late_inputs_copied_a_row_ahead_match_torch_float64(cuda, name, rows, cols):
    torch = cuda
    prog = fusec.compile(LATE_INPUTS[name])
    g = torch.Generator(device="cuda").manual_seed(rows + cols)
    vals = [torch.randn(rows, cols, device="cuda", generator=g) for _ in range(3)]
    if name == "three_groups":
        vals[1] = vals[1].abs() + 0.5  # a weight of the variance: positive
    # one element past an allocation's start: rows not 16-byte aligned, the
    # masked class at every width
    args = [torch.empty(rows * cols + 1, device="cuda", dtype=torch.bfloat16)[1:].view(rows, cols).copy_(v)
            for v in vals]
    got = prog(*args)
    x, a, b = (t.double() for t in args)
    if name == "modulated":
        want = x * (x * x).mean(-1, keepdim=True).add(1e-6).rsqrt() * (1 + a) + b
    else:
        xc = x - x.mean(-1, keepdim=True)
        want = xc * (xc * xc * a).mean(-1, keepdim=True).add(1e-5).rsqrt() + b
    assert_close(f"{name} {rows}x{cols}", got.double().cpu().numpy(), want.cpu().numpy(), "bf16", cols)


# Few rows of halves too long for on-chip memory: the split rows' entry
# without a row cache (`_stream`), whose passes copy their streams stages
# ahead into a ring in shared memory (row_ring.c; test_codegen's stream_ring
# asserts that these shapes take it on an H100/H200): a column operand of f32
# (two pieces a chunk), a mask of bools (loaded where it is used), rows of a
# width not a multiple of 8 and x one element past an allocation's start (the
# rows' ends and the misaligned column chunks loaded where they are used).
RING_PROGRAMS = {
    "rms_cols": "in x: bf16[B, N]\nin w: f32[N]\nin r: bf16[B, N]\nin m: bool[B, N]\n"
                "out y = bf16(where(m, x * rsqrt(mean(x * x) + 1e-6) * w + r, 0.0))\n",
    "layernorm_f16": "in x: f16[B, N]\nin w: f16[N]\nin b: f16[N]\nxc = x - mean(x)\n"
                     "out y = f16(xc * rsqrt(mean(xc * xc) + 1e-5) * w + b)\n",
    "softmax_bf16": "in x: bf16[B, N]\ne = exp(x - max(x))\nout y = bf16(e / sum(e))\n",
}


@pytest.mark.parametrize("name", sorted(RING_PROGRAMS))
@pytest.mark.parametrize("rows,cols,shift", [(4, 8388608, 0), (3, 8388611, 0), (4, 8388608, 1)])
def test_stream_ring_matches_torch_float64(cuda, name, rows, cols, shift):
    torch = cuda
    prog = fusec.compile(RING_PROGRAMS[name])
    g = torch.Generator(device="cuda").manual_seed(rows + cols + shift)
    half = torch.float16 if name == "layernorm_f16" else torch.bfloat16
    x = torch.empty(rows * cols + shift, device="cuda", dtype=half)[shift:].view(rows, cols)
    x.copy_(torch.randn(rows, cols, device="cuda", generator=g))
    if name == "rms_cols":
        w = torch.randn(cols, device="cuda", generator=g)
        r = torch.randn(rows, cols, device="cuda", generator=g).to(half)
        m = torch.rand(rows, cols, device="cuda", generator=g) < 0.5
        got = prog(x, w, r, m)
        xd = x.double()
        want = torch.where(m, xd * (xd * xd).mean(-1, keepdim=True).add(1e-6).rsqrt() * w.double() + r.double(),
                           torch.zeros((), dtype=torch.float64, device="cuda"))
    elif name == "layernorm_f16":
        w, b = (torch.randn(cols, device="cuda", generator=g).to(half) for _ in range(2))
        got = prog(x, w, b)
        xc = x.double() - x.double().mean(-1, keepdim=True)
        want = xc * (xc * xc).mean(-1, keepdim=True).add(1e-5).rsqrt() * w.double() + b.double()
    else:
        got = prog(x)
        want = torch.softmax(x.double(), -1)
    dtype = "f16" if half == torch.float16 else "bf16"
    assert_close(f"{name} {rows}x{cols}+{shift}", got.double().cpu().numpy(), want.cpu().numpy(), dtype, cols)


def test_f32_rsqrt_is_one_over_sqrt_at_every_float(cuda):
    """rsqrt(x) in f32 is sem.def's 1 / sqrt(x), an IEEE square root then an
    IEEE division, bit for bit, at each of the 2^32 bit patterns (the kernels
    compute it inline where x is a normal of 2^-101 .. FLT_MAX, prelude.c's
    pre_rsqrt, and call the text elsewhere): against torch's, and at the edges
    of that range against the CPU reference."""
    torch = cuda
    prog = fusec.compile("in x: f32[N]\nout y = rsqrt(x)\n")
    n = 1 << 28
    for k in range(1 << 32 >> 28):
        x = torch.arange(k * n, (k + 1) * n, dtype=torch.int64, device="cuda").to(torch.int32).view(torch.float32)
        got = prog(x)
        s = torch.sqrt(x)
        want = torch.ones_like(s) / s
        bad = (got.view(torch.int32) != want.view(torch.int32)) & ~(torch.isnan(got) & torch.isnan(want))
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0])
            raise AssertionError(f"rsqrt of bits {k * n + i:#010x}: {int(bad.sum())} of {n} differ in this block; "
                                 f"got {float(got[i])!r}, expected {float(want[i])!r}")
    edges = np.array([0x0cffffff, 0x0d000000, 0x0d000001, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x00000001,
                      0x007fffff, 0x00800000, 0x80000000, 0x00000000, 0x3f800000, 0xbf800000, 0x8d000000],
                     dtype=np.uint32).view(np.float32)
    got = prog(torch.from_numpy(edges).cuda()).cpu().numpy()
    want = prog.run_cpu(edges)
    np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()


def test_f32_division_by_a_row_value_is_ieee_at_every_divisor(cuda):
    """a / max(x) in f32, which the row kernels compute from the row's
    reciprocal (prelude.c, fz_rcp_row and fz_divr), is IEEE division bit for
    bit at each of the 2^32 divisors, each over two numerators drawn from
    every bit pattern: against torch's division."""
    torch = cuda
    prog = fusec.compile("in x: f32[R, N]\nin a: f32[R, N]\nout y = a / max(x)\n")
    n = 1 << 26
    for k in range(1 << 32 >> 26):
        bits = torch.arange(k * n, (k + 1) * n, dtype=torch.int64, device="cuda")
        d = bits.to(torch.int32).view(torch.float32)
        x = torch.stack([d, torch.full_like(d, -float("inf"))], 1)  # max(x) is d (NaN where d is)
        a = torch.stack([(bits * 0x9E3779B1) & 0xffffffff, (bits * 0x85EBCA77 + 0x3C6EF372) & 0xffffffff], 1)
        a = a.to(torch.int32).view(torch.float32)
        got = prog(x, a)
        want = a / d[:, None]
        bad = (got.view(torch.int32) != want.view(torch.int32)) & ~(torch.isnan(got) & torch.isnan(want))
        if bool(bad.any()):
            i, j = (int(v) for v in torch.nonzero(bad)[0])
            raise AssertionError(f"{float(a[i, j])!r} / {float(d[i])!r}: {int(bad.sum())} quotients of this block "
                                 f"differ; got {float(got[i, j])!r}, expected {float(want[i, j])!r}")


@pytest.mark.parametrize("cols", [64, 127])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_division_by_a_row_value_at_every_divisor(cuda, dtype, cols):
    """a / max(x) of halves, which the row kernels compute as a times the
    row's reciprocal, and where the divisor has none (0, infinite, NaN,
    beyond 2^-40 .. 2^40) with the halves' division inline (prelude_ops.c,
    fz_divrh, fz_divqh), at each of the 2^16 divisors over numerators drawn
    from every bit pattern: the quotient rounded to the half, or its
    neighbour (docs/language.md), NaN where it is NaN. Rows of 64 take the
    line entries (8 threads a row), of 127 the staged ones."""
    torch = cuda
    th = torch.float16 if dtype == "f16" else torch.bfloat16
    prog = fusec.compile(f"in x: {dtype}[R, N]\nin a: {dtype}[R, N]\nout y = a / max(x)\n")
    bits = torch.arange(1 << 16, dtype=torch.int64, device="cuda")
    d = bits.to(torch.int16).view(th)
    x = torch.full((1 << 16, cols), -float("inf"), dtype=th, device="cuda")
    x[:, 0] = d  # max(x) is d (NaN where d is)
    j = torch.arange(cols, dtype=torch.int64, device="cuda")
    a = ((bits[:, None] * 0x9E3779B1 + j * 0x85EBCA77) >> 7) & 0xffff
    a = a.to(torch.int16).view(th).clone()
    a[:, 0], a[:, 1] = 0.0, 1.0
    got = prog(x, a)
    want = (a.double() / d.double()[:, None]).to(th)
    gb, wb = got.view(torch.int16).int(), want.view(torch.int16).int()
    nan_g, nan_w = torch.isnan(got), torch.isnan(want)
    bad = (nan_g != nan_w) | (~nan_w & ((gb - wb).abs() > 1))
    if bool(bad.any()):
        i, k = (int(v) for v in torch.nonzero(bad)[0])
        raise AssertionError(f"{float(a[i, k])!r} / {float(d[i])!r}: {int(bad.sum())} of {bad.numel()} quotients "
                             f"differ by more than a unit; got {float(got[i, k])!r}, expected {float(want[i, k])!r}")


# The aligned classes (`_reg<K>`, `_reg<K>h`, `_rowa`: every vector of every
# row aligned, tested nowhere in the kernel) take only buffers that are: the
# same program at the same shape, called with its input, its output or both
# one element past an allocation's start, and aligned again, matches float64
# each time (the run takes another size plan: runtime/bind.c's mark_ragged,
# codegen's cg_launch `aligned`). Shapes that take each aligned class on an
# H100 or H200: rows of one 128-byte line (8 threads a row), of 1024 in
# registers, the entry holding column operands (layernorm f32 8191x1024),
# the row cache's (bf16 rows of 32768).
ALIGNED_CLASSES = [("softmax", "f32", 40000, 32), ("softmax", "f16", 40000, 64), ("softmax", "f32", 4096, 1024),
                   ("layernorm", "f32", 8191, 1024), ("softmax", "bf16", 300, 32768)]


@pytest.mark.parametrize("name,dtype,rows,cols", ALIGNED_CLASSES)
def test_aligned_classes_take_only_aligned_buffers(cuda, name, dtype, rows, cols):
    torch = cuda
    td = _torch_dtype(torch, dtype)
    cast = (lambda e: e) if dtype == "f32" else (lambda e: f"{dtype}({e})")
    if name == "softmax":
        prog = fusec.compile(f"in x: {dtype}[B, N]\ne = exp(x - max(x))\nout y = {cast('e / sum(e)')}\n")
    else:
        prog = fusec.compile(f"in x: {dtype}[B, N]\nin w: {dtype}[N]\nin b: {dtype}[N]\nd = x - mean(x)\n"
                             f"out y = {cast('d * rsqrt(mean(d * d) + 1e-5) * w + b')}\n")
    g = torch.Generator(device="cuda").manual_seed(rows + cols)
    x = torch.randn(rows, cols, device="cuda", generator=g).to(td)
    cols_in = [torch.randn(cols, device="cuda", generator=g).to(td) for _ in range(2)] if name != "softmax" else []
    xd = x.double()
    if name == "softmax":
        want = torch.softmax(xd, -1)
    else:
        d = xd - xd.mean(-1, keepdim=True)
        want = d * (d * d).mean(-1, keepdim=True).add(1e-5).rsqrt() * cols_in[0].double() + cols_in[1].double()

    def shifted(t):
        return torch.empty(t.numel() + 1, device="cuda", dtype=t.dtype)[1:].view(t.shape).copy_(t)

    for ragged in ["", "x", "y", "xy", ""]:
        xa = shifted(x) if "x" in ragged else x
        out = shifted(torch.zeros_like(x)) if "y" in ragged else None
        got = prog(xa, *cols_in, out=out) if out is not None else prog(xa, *cols_in)
        assert out is None or got is out
        assert_close(f"{name} {dtype} {rows}x{cols} ragged {ragged or 'none'}", got.double().cpu().numpy(),
                     want.cpu().numpy(), dtype, cols)


# The line entries (launch_rules.c's line_rule) of kernels with one column
# operand in one pass, whose other aligned entries prefetch: an rmsnorm with
# a residual add (two outputs), on an H100 or H200 at rows of one and two
# lines, 8 threads a row, and of two lines of halves, 16 threads of a chunk
# (20000 rows: the fewest that 16 threads a row fill once, 16896, and more);
# then with its input one element off (the classes for rows of any length).
LINE_SHAPES = [("f32", 40000, 32), ("f32", 40000, 64), ("bf16", 40000, 64), ("f16", 20000, 128), ("bf16", 40000, 128)]


@pytest.mark.parametrize("dtype,rows,cols", LINE_SHAPES)
def test_line_entries_with_a_column_operand(cuda, dtype, rows, cols):
    torch = cuda
    td = _torch_dtype(torch, dtype)
    cast = (lambda e: e) if dtype == "f32" else (lambda e: f"{dtype}({e})")
    prog = fusec.compile(f"in x: {dtype}[T, C]\nin r: {dtype}[T, C]\nin w: {dtype}[C]\nout h = {cast('x + r')}\n"
                         f"out y = {cast('h * rsqrt(mean(h * h) + 1e-6) * w')}\n")
    g = torch.Generator(device="cuda").manual_seed(rows + cols)
    x, r = (torch.randn(rows, cols, device="cuda", generator=g).to(td) for _ in range(2))
    w = torch.randn(cols, device="cuda", generator=g).to(td)
    hd = (x.double() + r.double()).to(td).double()  # h as stored, then read back
    want_y = hd * (hd * hd).mean(-1, keepdim=True).add(1e-6).rsqrt() * w.double()
    for shift in [False, True, False]:
        xa = torch.empty(x.numel() + 1, device="cuda", dtype=td)[1:].view(x.shape).copy_(x) if shift else x
        h, y = prog(xa, r, w)
        what = f"add_rmsnorm {dtype} {rows}x{cols}{' ragged x' if shift else ''}"
        assert_close(what + " h", h.double().cpu().numpy(), (x.double() + r.double()).cpu().numpy(), dtype, cols)
        assert_close(what + " y", y.double().cpu().numpy(), want_y.cpu().numpy(), dtype, cols)

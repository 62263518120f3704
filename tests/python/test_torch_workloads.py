"""The public workloads (bench/run.py's WORKLOADS, written there as plain
PyTorch functions) compiled with backend="fusec": each equals eager within
the tolerance and becomes exactly one region and one fusec kernel, with
nothing left to PyTorch. On the CPU at small odd sizes (the CPU reference);
on the GPU at the suite's sizes, where the backend's result is also checked
against the example program called directly. Skipped where torch is absent."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import fusec  # noqa: E402
import fusec.torch  # noqa: E402
from conftest import EXAMPLES, ROOT  # noqa: E402
from test_torch_ops import assert_close  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import run as suite  # noqa: E402

PROGRAMS = suite.torch_programs(torch, F)
KEYS = [w["key"] for w in suite.WORKLOADS]
CPU_DIMS = {"N": 4099, "B": 5, "R": 5, "C": 257}  # odd sizes: no power of two hides a bug


def inputs(w, dims, device, seed=0):
    gen = torch.Generator().manual_seed(seed)
    args = []
    for name, dtype, shape in suite.parse_inputs(suite.program_path(EXAMPLES, w["program"])):
        if shape is None:
            args.append(suite.SCALARS.get(name, 0.5))
            continue
        t = torch.rand(suite.shape_of(shape, dims), generator=gen) * 4 - 2
        args.append(t.to(getattr(torch, suite.TORCH_DTYPES[dtype])).to(device))
    return args


def check(w, dims, device):
    fn = PROGRAMS[w["name"]][0]
    args = inputs(w, dims, device)
    report = fusec.torch.explain(fn, *args, quiet=True)
    assert_close(report.result, fn(*args), row=args[0].shape[-1])
    assert (len(report.regions), report.kernels, report.fallbacks) == (1, 1, []), str(report)
    return report, args


def workload(key):
    return next(w for w in suite.WORKLOADS if w["key"] == key)


@pytest.mark.parametrize("key", KEYS)
def test_workload_cpu(key):
    w = workload(key)
    check(w, {d: CPU_DIMS[d] for d in w["dims"]}, "cpu")


@pytest.mark.parametrize("key", KEYS)
def test_workload_gpu(key, cuda):
    w = workload(key)
    report, args = check(w, w["dims"], "cuda")
    direct = fusec.compile_file(suite.program_path(EXAMPLES, w["program"]))
    assert_close(report.result.reshape(direct(*args).shape), direct(*args), row=args[0].shape[-1])
    del args
    torch.cuda.empty_cache()


def test_first_calls_run_on_the_interpreter_until_the_jit_ends(cuda, monkeypatch, capfd):
    """A region's calls while its JIT compile runs (held back here) go to
    fusec's GPU interpreter and equal eager; once the compile ends, to the
    compiled kernel."""
    import threading

    import fusec.torch.graph as graph
    import fusec.torch.runtime as runtime
    gate, futures = threading.Event(), []
    prepare, start = runtime._prepare_interpreting, graph.jit_async
    monkeypatch.setattr(runtime, "_prepare_interpreting", lambda *a: gate.wait(120) and prepare(*a))
    monkeypatch.setattr(graph, "jit_async", lambda *a: futures.append(start(*a)) or futures[-1])
    monkeypatch.setenv("FUSEC_LOG", "1")

    def fn(x, w):  # a program no other test compiles
        return F.layer_norm(x.float(), (x.shape[-1],), w, None, 1e-3).to(torch.bfloat16) * 3

    x = torch.randn(29, 3001, device="cuda").to(torch.bfloat16)
    w = torch.randn(3001, device="cuda")
    compiled = torch.compile(fn, backend="fusec")
    capfd.readouterr()
    for _ in range(2):
        assert_close(compiled(x, w), fn(x, w), row=3001)
    logged = capfd.readouterr().err
    assert logged.count("fusec: interpreter: torch launched in 3 kernels") == 2, logged
    assert "nvrtc:" not in logged
    gate.set()
    assert len(futures) == 1
    futures[0].result(120)
    assert_close(compiled(x, w), fn(x, w), row=3001)
    assert "interpreter:" not in capfd.readouterr().err


def test_one_program_for_every_size():
    """Sizes are run-time arguments: a new batch size reuses the program
    (under dynamic=True Dynamo does not even recompile)."""
    fn = PROGRAMS["softmax"][0]
    compiled = torch.compile(fn, backend="fusec", dynamic=True)
    from torch._dynamo.utils import counters
    counters.clear()
    for rows, cols in ((3, 7), (64, 100), (5, 257), (2, 2)):  # (sizes 0 and 1 are specialised)
        x = torch.randn(rows, cols)
        assert_close(compiled(x), fn(x), row=cols)
    assert counters["stats"]["unique_graphs"] == 1
    # static shapes: Dynamo recompiles per size, but the fz text is the same
    torch._dynamo.reset()
    reports = [fusec.torch.explain(fn, torch.randn(r, c), quiet=True) for r, c in ((3, 7), (64, 100))]
    assert reports[0].regions[0].program is reports[1].regions[0].program
    # a size of 1 is literal in the program (PyTorch broadcasts it)
    one = fusec.torch.explain(fn, torch.randn(1, 9), quiet=True)
    assert one.regions[0].source.startswith("in arg0_1: f32[1, D0]\n")

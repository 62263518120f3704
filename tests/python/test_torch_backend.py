"""The torch backend as a user meets it: the name "fusec" (after import, and
through the torch_dynamo_backends entry point), explain() and its printout,
FUSEC_TORCH_LOG, options, inputs that are not dense, and what happens when
fusec refuses a translated region (the region runs in PyTorch, with the
reason). CPU; skipped where torch is absent."""

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

import fusec  # noqa: E402
import fusec.torch  # noqa: E402
from conftest import ROOT  # noqa: E402
from test_torch_ops import assert_close  # noqa: E402


def softmax(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


X = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))


def test_registered_as_fusec():
    from torch._dynamo.backends.registry import lookup_backend
    assert lookup_backend("fusec") is fusec.torch.backend
    torch._dynamo.reset()
    assert_close(torch.compile(softmax, backend="fusec")(X), softmax(X))


def run_python(code, env=None, cwd=None):
    full = dict(os.environ, **(env or {}))
    full["PYTHONPATH"] = os.pathsep.join(p for p in (full.get("PYTHONPATH"), os.path.join(ROOT, "python")) if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full, cwd=cwd, timeout=300)


def test_entry_point(tmp_path):
    """Installed, the package declares the entry point pyproject.toml names;
    Dynamo loads it by name, with nothing imported first."""
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        eps = tomllib.load(f)["project"]["entry-points"]["torch_dynamo_backends"]
    assert eps == {"fusec": "fusec.torch:backend"}
    dist = tmp_path / "fusec_test-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fusec-test\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[torch_dynamo_backends]\nfusec = fusec.torch:backend\n")
    p = run_python("""
        import sys, torch
        assert "fusec.torch" not in sys.modules
        f = torch.compile(lambda x: torch.softmax(x, -1), backend="fusec")
        x = torch.randn(3, 5)
        assert torch.allclose(f(x), torch.softmax(x, -1), atol=1e-6)
        import fusec.torch
        from torch._dynamo.backends.registry import lookup_backend
        assert lookup_backend("fusec") is fusec.torch.backend
        print("ok")
        """, env={"PYTHONPATH": str(tmp_path)})
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr


def test_explain_prints_regions_and_fallbacks(capsys):
    report = fusec.torch.explain(lambda x, w: torch.relu(x @ w) * 2, X, torch.randn(8, 8))
    out = capsys.readouterr().out
    assert out == textwrap.dedent("""\
        fusec: inference graph: 1 region(s), 1 kernel(s), 1 node(s) left to PyTorch
          fusec_region_0: nodes relu, mul
            kernels: torch_k0
            | in mm: f32[D0, D1]
            | relu_ = relu(mm)
            | mul = relu_ * 2
            | out mul
          PyTorch: mm (aten.mm.default): matrix multiply stays in PyTorch
        """)
    assert report.reasons() == {"matrix multiply stays in PyTorch": 1}
    assert [r.kernels for r in report.regions] == [["torch_k0"]]


def test_explain_of_nothing_says_so():
    report = fusec.torch.Report()
    assert str(report).startswith("fusec: no graph was compiled")


@pytest.mark.parametrize("level, lines", [("1", 1), ("2", 7), ("0", 0)])
def test_log_environment_variable(level, lines):
    p = run_python("""
        import torch, fusec.torch
        f = torch.compile(lambda x: torch.relu(x) + 1, backend="fusec")
        f(torch.randn(4))
        """, env={"FUSEC_TORCH_LOG": level})
    assert p.returncode == 0, p.stderr
    logged = [line for line in p.stderr.splitlines() if line.startswith(("fusec:", "  "))]
    assert len(logged) == lines, p.stderr
    if lines:
        assert logged[0] == "fusec: inference graph: 1 region(s), 1 kernel(s), 0 node(s) left to PyTorch"


def test_per_op_option():
    fused = fusec.torch.explain(softmax, X, quiet=True)
    per_op = fusec.torch.explain(softmax, X, options={"fuse": False}, quiet=True)
    assert (fused.kernels, per_op.kernels) == (1, 5)
    assert_close(per_op.result, softmax(X))


def test_inputs_that_are_not_dense():
    """A transposed graph input is copied; a broadcast (stride 0) one is
    read through its one slice."""
    t = X.t()
    report = fusec.torch.explain(softmax, t, quiet=True)
    assert_close(report.result, softmax(t))
    assert report.regions[0].source.startswith("in arg0_1: f32[D0, D1]\n")
    e = torch.randn(8).expand(4, 8)
    report = fusec.torch.explain(softmax, e, quiet=True)
    assert_close(report.result, softmax(e))
    assert report.regions[0].source.startswith("in arg0_1: f32[1, D0]\n")


def test_a_region_fusec_rejects_runs_in_pytorch(monkeypatch):
    import fusec.torch.graph as graph

    def reject(source, fuse=True):
        raise fusec.CompileError("torch:1:1: error: refused for the test")
    monkeypatch.setattr(graph, "compile_source", reject)
    report = fusec.torch.explain(softmax, X, quiet=True)
    assert_close(report.result, softmax(X))
    assert report.regions == []
    assert set(report.reasons()) == {"fusec rejected the translated region: torch:1:1: error: refused for the test"}


def test_python_int_wraps_into_i32_as_in_pytorch():
    i = torch.arange(-4, 4, dtype=torch.int32)
    fn = lambda i: (i + 3000000000) * 2  # noqa: E731
    report = fusec.torch.explain(fn, i, quiet=True)
    assert torch.equal(report.result, fn(i))
    assert report.fallbacks == []


def test_graph_breaks_compile_each_graph():
    def f(x):
        y = torch.exp(x)
        print("", end="")  # a graph break
        return torch.relu(y) + 1
    report = fusec.torch.explain(f, X, quiet=True)
    assert_close(report.result, f(X))
    assert [len(g.regions) for g in report.graphs] == [1, 1]


def _future(exception=None):
    from concurrent.futures import Future
    f = Future()
    if exception is None:
        f.set_result(None)
    else:
        f.set_exception(exception)
    return f


def test_a_region_waits_for_its_jit_at_its_first_call(monkeypatch):
    """The JIT compile is started at graph compile time with the example
    inputs' shapes and waited for by the region's first call (faked here:
    the CPU has no JIT)."""
    import fusec.torch.graph as graph
    jobs = []
    monkeypatch.setattr(graph, "jit_async", lambda p, device, shapes, interpret: jobs.append((device, shapes, interpret)) or _future())
    report = fusec.torch.explain(softmax, X, quiet=True)
    assert_close(report.result, softmax(X))
    assert jobs == [(None, [tuple(X.shape)], True)]
    torch._dynamo.reset()
    fusec.torch.explain(softmax, X, options={"interpret": False}, quiet=True)
    assert jobs[1] == (None, [tuple(X.shape)], False)
    assert len(report.regions) == 1 and report.fallbacks == []


def test_a_region_the_gpu_jit_fails_runs_in_pytorch(monkeypatch):
    """A CUDA region whose JIT compile fails is found at its first call,
    reported with the message and run in PyTorch (faked here: the CPU has
    no JIT)."""
    import fusec.torch.graph as graph
    monkeypatch.setattr(graph, "jit_async", lambda p, device, shapes, interpret: _future(fusec.Error("NVRTC said no\nmore")))
    report = fusec.torch.explain(softmax, X, quiet=True)
    assert_close(report.result, softmax(X))
    assert report.regions == []
    assert report.reasons() == {"fusec could not compile the region for the GPU: NVRTC said no": 5}


def test_benchmark_script_on_the_cpu(tmp_path):
    """bench/torch_backend.py's harness, on the CPU reference (the GPU run
    is the lead's)."""
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "torch_backend.py"), "--device", "cpu",
                        "--backends", "fusec", "--only", "add_scale_bias_relu_4096", "--per-call-n", "5",
                        "--out", str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    import json
    (r,) = json.loads(out.read_text())
    assert r["key"] == "add_scale_bias_relu_4096"
    assert (r["fusec"]["regions"], r["fusec"]["kernels"], r["fusec"]["fallbacks"]) == (1, 1, 0)
    assert r["fusec"]["err"] <= 1 and r["direct"]["err"] <= 1
    assert r["fusec"]["first_call_ms"] > 0 and r["eager"]["us"] > 0
    assert "add_scale_bias_relu_4096" in p.stdout.splitlines()[-1]

"""The package without a GPU: loading the library, compiling, the program
cache, introspection, explain and the generated source."""

import os
import subprocess
import sys

import pytest

import fusec
from conftest import EXAMPLES, ROOT

SOFTMAX_3D = "in x: f32[B, N]\nin w: f32[C, B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\nout z = e * w\n"


def test_version_and_library():
    assert fusec.version == fusec.__version__
    assert fusec.version.count(".") == 2
    assert os.path.isfile(fusec.library_path)


def test_compile_introspection():
    prog = fusec.compile_file(os.path.join(EXAMPLES, "layernorm.fz"))
    assert prog.name == os.path.join(EXAMPLES, "layernorm.fz")
    assert prog.inputs == (fusec.TensorSpec("x", "f32", ("R", "C")), fusec.TensorSpec("w", "f32", ("C",)),
                           fusec.TensorSpec("b", "f32", ("C",)), fusec.TensorSpec("eps", "f32", ()))
    assert prog.outputs == (fusec.TensorSpec("y", "f32", ("R", "C")),)
    assert prog.dims == ("R", "C")
    assert prog.kernels == 1
    assert prog.fuse is True
    assert "extern \"C\"" in prog.cuda_source and "layernorm_k0" in prog.cuda_source
    assert repr(prog) == f"<fusec.Program {prog.name}(x: f32[R, C], w: f32[C], b: f32[C], eps: f32) -> " \
                         "(y: f32[R, C]), 1 kernel>"


def test_literal_sizes_and_several_outputs():
    prog = fusec.compile("in x: f16[4, N]\nin k: i64\nout a = x\nout b = sum(x)\n", name="two.fz")
    assert prog.inputs[0].shape == (4, "N")
    assert [o.name for o in prog.outputs] == ["a", "b"]
    assert prog.outputs[1] == fusec.TensorSpec("b", "f16", (4, 1))


def test_kernel_counts_fused_and_per_op():
    fused = fusec.compile(SOFTMAX_3D)
    per_op = fusec.compile(SOFTMAX_3D, fuse=False)
    assert fused.kernels == 2
    assert per_op.kernels == 6
    assert repr(per_op).endswith("6 kernels, per-op>")


def test_explain_is_the_cli_text(tmp_path):
    prog = fusec.compile(SOFTMAX_3D)
    want = "%2 (max at 3:13) is stored: its consumer %3 iterates over [C, B, N], not the rows [B, N]\n"
    assert prog.explain() == want
    f = tmp_path / "p.fz"
    f.write_text(SOFTMAX_3D)
    cli = os.path.join(os.path.dirname(fusec.library_path), "fusec")
    if os.access(cli, os.X_OK):
        assert subprocess.run([cli, "--explain", str(f)], capture_output=True, text=True).stdout == want
    assert fusec.compile("in x: f32[N]\nout y = x\n").explain() == "no edge crosses kernels (1 kernel)\n"


def test_programs_are_cached_per_process():
    src = "in x: f32[N]\nout y = x * 3\n"
    a = fusec.compile(src)
    assert fusec.compile(src) is a
    assert fusec.compile(src, name="<string>", fuse=True) is a
    assert fusec.compile(src, fuse=False) is not a
    assert fusec.compile(src, name="other.fz") is not a
    path = os.path.join(EXAMPLES, "softmax.fz")
    assert fusec.compile_file(path) is fusec.compile_file(path)


def test_source_is_kept_byte_for_byte(tmp_path):
    f = tmp_path / "bytes.fz"
    f.write_bytes(b"in x: f32[N]\n# caf\xe9 (latin-1 in a comment)\nout y = x\n")
    prog = fusec.compile_file(f)
    assert prog.source.encode("utf-8", "surrogateescape") == f.read_bytes()


def test_arguments_positional_and_by_name():
    np = pytest.importorskip("numpy")
    prog = fusec.compile("in x: f32[N]\nin y: f32[N]\nin s: f32\nout z = x * s + y\n")
    x, y = np.ones(2, np.float32), np.full(2, 2, np.float32)
    want = np.full(2, 5, np.float32)
    for call in (lambda: prog(x, y, 3), lambda: prog(x, y, s=3), lambda: prog(s=3, y=y, x=x),
                 lambda: prog(x, s=3, y=y)):
        np.testing.assert_array_equal(call(), want)


def test_import_without_library_says_how_to_get_one(tmp_path):
    env = dict(os.environ, FUSEC_LIBRARY=str(tmp_path / "nope.so"), PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", "import fusec"], capture_output=True, text=True, env=env)
    assert r.returncode != 0
    assert f"ImportError: fusec: FUSEC_LIBRARY names {tmp_path / 'nope.so'}, which does not exist" in r.stderr

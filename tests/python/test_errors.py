"""Every error the package raises without a GPU, with its exact message."""

import os
import subprocess
import sys

import numpy as np
import pytest

import fusec
from conftest import ROOT


def raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as e:
        fn(*args, **kwargs)
    assert str(e.value) == message
    return e.value


def test_compile_error_is_the_located_diagnostic():
    e = raises(fusec.CompileError, "prog.fz:2:9: error: unknown name 'z'\nout y = z + 1\n        ^",
               fusec.compile, "in x: f32[N]\nout y = z + 1\n", name="prog.fz")
    assert (e.file, e.line, e.column, e.length) == ("prog.fz", 2, 9, 1)
    assert e.message == "unknown name 'z'"
    assert e.status == "FZ_ERR_PROGRAM"
    assert isinstance(e, fusec.Error)


def test_compile_error_of_a_file(tmp_path):
    f = tmp_path / "bad.fz"
    f.write_text("in x: f32[N]\nout y = exp(x, x)\n")
    e = raises(fusec.CompileError, f"{f}:2:9: error: 'exp' takes 1 argument, got 2\nout y = exp(x, x)\n        ^~~",
               fusec.compile_file, f)
    assert (e.line, e.column, e.length) == (2, 9, 3)


def test_compile_arguments():
    raises(TypeError, "fusec.compile: source must be str, not bytes", fusec.compile, b"in x: f32[N]\n")
    missing = os.path.join(ROOT, "no-such-file.fz")
    raises(OSError, f"[Errno 2] cannot read {missing}: No such file or directory: '{missing}'",
           fusec.compile_file, missing)


PROG = "in x: f32[B, N]\nin w: f32[N]\nin n: i32\nout y = x * w * n\n"


def test_call_arguments_as_python_functions_say():
    prog = fusec.compile(PROG, name="p.fz")
    x, w = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    raises(TypeError, "program 'p.fz' is missing input 'n'", prog, x, w)
    raises(TypeError, "program 'p.fz' is missing inputs 'w', 'n'", prog, x)
    raises(TypeError, "program 'p.fz' has no input named 'q' (its inputs: x, w, n)", prog, x, w, 1, q=2)
    raises(TypeError, "input 'x' of program 'p.fz' is given twice", prog, x, w, 1, x=x)
    raises(TypeError, "program 'p.fz' takes 3 inputs (x, w, n); 4 were given", prog, x, w, 1, 2)
    raises(TypeError, "out= is for device tensors; the CPU reference returns new arrays", prog, x, w, 1, out=x)


def test_shapes_dtypes_and_ranks():
    prog = fusec.compile(PROG, name="p.fz")
    x, w = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    raises(ValueError, "input 'w': dim N (axis 0) is 4, but input 'x' gives N = 3", prog, x, np.ones(4, np.float32), 1)
    raises(ValueError, "input 'x' is f32[B, N] (rank 2); got an array of shape (6,) (rank 1)", prog,
           np.ones(6, np.float32), w, 1)
    raises(TypeError, "input 'w' is f32[N]: got a float64 array (convert it with .astype(np.float32))", prog, x,
           np.ones(3), 1)
    raises(TypeError, "input 'x' is the tensor f32[B, N]: got list (the CPU reference takes NumPy arrays)",
           prog.run_cpu, [[1.0]], w, 1)
    lit = fusec.compile("in a: f32[N, 4]\nout y = a\n")
    raises(ValueError, "input 'a': axis 1 is 5, but the program declares it 4", lit, np.ones((2, 5), np.float32))
    same = fusec.compile("in a: f32[N, N]\nout y = a\n")
    raises(ValueError, "input 'a': dim N is 2 at axis 0 but 3 at axis 1", same, np.ones((2, 3), np.float32))


def test_scalars():
    prog = fusec.compile(PROG, name="p.fz")
    x, w = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    raises(ValueError, "input 'n' is i32: 2.5 is not a value of that type", prog, x, w, 2.5)
    raises(ValueError, "input 'n' is i32: 4294967296 is not a value of that type", prog, x, w, 2**32)
    raises(TypeError, "input 'n' is a scalar i32: got str (pass a Python number)", prog, x, w, "1")
    raises(TypeError, "input 'n' is a scalar i32: got ndarray (pass a Python number)", prog, x, w, np.ones(2))


def test_run_time_errors():
    prog = fusec.compile("in x: f32[N]\nout y = max(x)\n")
    raises(ValueError, "max at 2:9 reduces an empty axis (N = 0)", prog, np.ones(0, np.float32))


def test_no_gpu_is_a_fusec_error():
    code = ("import fusec, numpy\n"
            "try:\n"
            "    fusec.to_device(numpy.ones(3, numpy.float32))\n"
            "except fusec.Error as e:\n"
            "    print(e.status, str(e).split(':')[0])\n")
    env = dict(os.environ, FUSEC_CUDA_LIBRARY="/nonexistent/libcuda.so.1",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.stdout == "FZ_ERR_NO_DRIVER no CUDA driver\n", r.stderr


def test_torch_cpu_tensors_are_refused(torch_module):
    torch = torch_module
    prog = fusec.compile(PROG, name="p.fz")
    raises(ValueError, "input 'x' is on the CPU: fusec runs torch tensors on CUDA devices (move it with .cuda(), or "
           "pass NumPy arrays for the CPU reference)", prog, torch.ones(2, 3), torch.ones(3), 1)

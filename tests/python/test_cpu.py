"""The CPU reference through the package: every example on NumPy arrays
against a float64 NumPy reference (references.py), the dtypes (bf16
included), scalars, DLPack, and random programs' shapes and dtypes."""

import json
import os
import subprocess

import numpy as np
import pytest

import fusec
from conftest import progen_tool
from fusec import _cpu
from references import REFERENCES, NumpyOps, assert_close, make_inputs, random_inputs


def _as_program_dtype(spec, a):
    """float64 values in the dtype the program declares (NumPy storage)."""
    return np.asarray(a, dtype=np.float32) if spec.dtype == "bf16" else np.asarray(a).astype(
        _cpu.numpy_dtype(spec.dtype))


def _as_f64(a):
    return np.asarray(a).astype(np.float64)


def _received(spec, a):
    """The values the program receives for an input, as float64 (bf16 rounded as the package rounds it)."""
    if spec.dtype == "bf16":
        return NumpyOps().round_to(np.asarray(a, dtype=np.float64), "bf16")
    return _as_f64(_as_program_dtype(spec, a))


@pytest.mark.parametrize("rows,cols", [(3, 67), (1, 1000), (5, 1)])
def test_every_example_matches_float64_numpy(example_files, rows, cols):
    assert {os.path.basename(f)[:-3] for f in example_files} == set(REFERENCES), \
        "every example needs a reference in references.py, and every reference an example"
    for path in example_files:
        stem = os.path.basename(path)[:-3]
        prog = fusec.compile_file(path)
        vals = make_inputs(prog, rows, cols, seed=len(stem))
        args = [_as_program_dtype(s, vals[s.name]) if s.shape else vals[s.name] for s in prog.inputs]
        got = prog.run_cpu(*args)
        got = got if isinstance(got, tuple) else (got,)
        want = REFERENCES[stem](NumpyOps(), *[_received(s, vals[s.name]) if s.shape else vals[s.name]
                                               for s in prog.inputs])
        assert len(got) == len(prog.outputs)
        for spec, g, w in zip(prog.outputs, got, want):
            want_dtype = np.float32 if spec.dtype == "bf16" and _cpu._BF16 is None else _cpu.numpy_dtype(spec.dtype)
            assert g.dtype == want_dtype, f"{stem}: output {spec.name} is {g.dtype}"
            assert_close(f"{stem}: {spec.name}", _as_f64(g), np.broadcast_to(w, g.shape), spec.dtype, cols)


def test_call_with_numpy_is_the_cpu_reference():
    prog = fusec.compile("in x: f32[N]\nin a: f32\nout y = relu(x * a)\n")
    x = np.array([-1, 0.5, 2], dtype=np.float32)
    np.testing.assert_array_equal(prog(x, 2.0), np.array([0, 1, 4], dtype=np.float32))
    np.testing.assert_array_equal(prog(a=2, x=x), prog.run_cpu(x, a=2.0))


def test_outputs_are_a_named_tuple_in_out_order():
    prog = fusec.compile("in x: i32[N]\nout b = x * 2\nout a = x + 1\n")
    r = prog.run_cpu(np.arange(4, dtype=np.int32))
    assert type(r).__name__ == "Outputs" and r._fields == ("b", "a")
    np.testing.assert_array_equal(r.b, [0, 2, 4, 6])
    np.testing.assert_array_equal(r[1], [1, 2, 3, 4])


def test_dtypes_round_trip():
    src = ("in a: bool[N]\nin b: i32[N]\nin c: i64[N]\nin d: f16[N]\nin e: f64[N]\n"
           "out ra = a\nout rb = b * 3\nout rc = c - 1\nout rd = d * 2\nout re = e / 4\n")
    prog = fusec.compile(src)
    a = np.array([True, False, True])
    b = np.array([1, -2, 2**30], dtype=np.int32)
    c = np.array([2**40, 0, -5], dtype=np.int64)
    d = np.array([0.5, 1e4, -3], dtype=np.float16)
    e = np.array([1, 2, 3], dtype=np.float64)
    r = prog.run_cpu(a, b, c, d, e)
    np.testing.assert_array_equal(r.ra, a)
    np.testing.assert_array_equal(r.rb, (b.astype(np.int64) * 3).astype(np.int32))  # wraps, as the language says
    np.testing.assert_array_equal(r.rc, c - 1)
    np.testing.assert_array_equal(r.rd, np.array([1, 2e4, -6], dtype=np.float16))
    np.testing.assert_array_equal(r.re, e / 4)
    assert [x.dtype for x in r] == [np.bool_, np.int32, np.int64, np.float16, np.float64]


def test_bf16_inputs_from_float32_round_to_nearest_even():
    prog = fusec.compile("in x: bf16[N]\nout y = f32(x)\n")
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1; 1 + 3 * 2^-8 rounds up to 1 + 2^-6
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.5, np.inf, np.nan], dtype=np.float32)
    y = prog.run_cpu(x)
    np.testing.assert_array_equal(y[:4], np.array([1, 1 + 2**-6, -2.5, np.inf], dtype=np.float32))
    assert np.isnan(y[4])


def test_bf16_outputs():
    prog = fusec.compile("in x: f32[N]\nout y = bf16(x)\n")
    y = prog.run_cpu(np.array([1 + 2**-8, 3.0], dtype=np.float32))
    if _cpu._BF16 is None:
        assert y.dtype == np.float32
    else:
        assert y.dtype == _cpu._BF16
    np.testing.assert_array_equal(y.astype(np.float32), np.array([1, 3], dtype=np.float32))


def test_scalars_convert_as_the_c_api():
    prog = fusec.compile("in n: i32\nin h: f16\nin b: bool\nin x: f32[N]\nout y = x * n + h + f32(b)\n")
    x = np.zeros(2, dtype=np.float32)
    want = np.float32(np.float16(0.1)) + 1
    np.testing.assert_array_equal(prog.run_cpu(3, 0.1, True, x), np.full(2, want, dtype=np.float32))
    np.testing.assert_array_equal(prog.run_cpu(np.int64(2), np.float32(1.5), 0, x + 1),
                                  np.full(2, 3.5, dtype=np.float32))
    np.testing.assert_array_equal(prog.run_cpu(4.0, 0, np.array(False), x), np.zeros(2, dtype=np.float32))


def test_bf16_scalar_rounds_once():
    prog = fusec.compile("in s: bf16\nin x: f32[N]\nout y = x + f32(s)\n")
    x = np.zeros(1, dtype=np.float32)
    # just above the tie 1 + 2^-8: one rounding from the double goes up; rounding
    # to f32 first (which would give the tie) and then to bf16 would go down
    v = 1 + 2**-8 + 2**-40
    assert prog.run_cpu(v, x)[0] == np.float32(1 + 2**-7)


def test_empty_and_non_contiguous_arrays():
    prog = fusec.compile("in x: f32[B, N]\nout s = sum(x)\nout y = x * 2\n")
    r = prog.run_cpu(np.zeros((0, 3), dtype=np.float32))
    assert r.s.shape == (0, 1) and r.y.shape == (0, 3)
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T  # strided: the CPU copies
    r = prog.run_cpu(x)
    np.testing.assert_array_equal(r.y, x * 2)
    np.testing.assert_array_equal(r.s, x.sum(-1, keepdims=True))


def test_dlpack_inputs_on_the_cpu():
    prog = fusec.compile("in x: f32[N]\nout y = x + 1\n")
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(prog.run_cpu(x.__dlpack__()), x + 1)  # a capsule

    class Holder:  # an object with only the DLPack protocol
        def __dlpack__(self, stream=None):
            return x.__dlpack__()

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    np.testing.assert_array_equal(prog.run_cpu(Holder()), x + 1)


def test_dlpack_export_round_trips_through_numpy():
    from fusec import _dlpack
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = _dlpack.exported()

    class Export:
        def __init__(self):
            self.cap = _dlpack.export(a.ctypes.data, a.shape, "f32", _dlpack.CPU, 0, a)

        def __dlpack__(self, stream=None):
            return self.cap

        def __dlpack_device__(self):
            return (_dlpack.CPU, 0)

    e = Export()
    b = np.from_dlpack(e)
    np.testing.assert_array_equal(b, a)
    assert _dlpack.exported() == before + 1  # NumPy holds it
    del b, e
    import gc
    gc.collect()
    assert _dlpack.exported() == before  # the deleter ran
    unused = _dlpack.export(a.ctypes.data, a.shape, "f32", _dlpack.CPU, 0, a)
    assert _dlpack.exported() == before + 1
    del unused  # never consumed: the capsule's destructor frees it
    gc.collect()
    assert _dlpack.exported() == before


def test_random_programs_bind_every_input_and_output():
    """Random programs (the C tests' generator): the package binds inputs of
    every dtype and rank and returns outputs of the declared dtypes and the
    shapes the dims give; a max over an empty axis is a ValueError."""
    tool = progen_tool()
    if tool is None:
        pytest.fail("tests/progen_dump was not built (build the tree with tools/setup.sh)")
    lines = subprocess.run([tool, "--size", "tiny", "1000", "150"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    assert len(lines) == 150
    rng = np.random.default_rng(1)
    for line in lines:
        rec = json.loads(line)
        prog = fusec.compile(rec["source"], name=rec["name"])
        args = random_inputs(prog, rec, rng)
        if rec["runtime_error"]:
            with pytest.raises(ValueError, match="reduces an empty axis"):
                prog.run_cpu(*args)
            continue
        out = prog.run_cpu(*args)
        out = out if isinstance(out, tuple) else (out,)
        for spec, o in zip(prog.outputs, out):
            want = tuple(rec["dims"][d] if isinstance(d, str) else d for d in spec.shape)
            assert o.shape == want, f"seed {rec['seed']}: {spec.name} has shape {o.shape}, not {want}"
            dt = np.float32 if spec.dtype == "bf16" and _cpu._BF16 is None else _cpu.numpy_dtype(spec.dtype)
            assert o.dtype == dt, f"seed {rec['seed']}: {spec.name} is {o.dtype}, not {spec.dtype}"

#!/usr/bin/env python3
"""bench/test_scripts.py: checks of the suite's scripts that need no GPU.

  python3 bench/test_scripts.py

The figures below are made up to exercise the code; they are no measurement.
run.py's dry run, report.py's table and (where matplotlib is installed)
plot.py's PNG are checked; so are the sweep's plan, its report and plot,
sweep.py and gpu-sweep.sh end to end on the fake GPU, and sass_counts.py's
reading of cuobjdump's output.

Exit status 77 (skipped, under CTest) when NumPy is missing: the end-to-end
runs, the point of this file, need it; 1 if any test fails.
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cubin_lab  # noqa: E402
import plot  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402
import sass_counts  # noqa: E402
import sweep  # noqa: E402
import sweep_report  # noqa: E402

FUSEC_BIN = os.environ.get("FUSEC_BIN", os.path.join(run.ROOT, "build", "fusec"))


def have_numpy():
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def synthetic_doc():
    doc = {"meta": {"device": "TEST DEVICE", "sm_count": 2, "l2_bytes": 4 << 20, "date": "D",
                    "torch": "T", "triton": "TR", "cuda": "C", "python": "P", "command": "CMD",
                    "elapsed_s": 1.0},
           "workloads": [
               {"key": "softmax_64x64", "label": "softmax 64x64", "launch_bound": False,
                "min_bytes": 2000, "errors": ["eager: relative error 1 over 1e-05"],
                "fusec_raw": {"speedup": 2.0, "ideal_speedup": 4.0, "outputs_rel_diff": 3e-8},
                "fusec_check": {"rel_err": 2e-7, "ok": True},
                "results": {"fusec": {"us": 2.0, "kernels": 1}, "fusec_per_op": {"us": 4.0, "kernels": 4},
                            "eager": {"us": 8.0, "rel_err": 1.0},
                            "builtin": {"us": 4.0, "name": "F.softmax", "rel_err": float("nan")},
                            "compiled": {"us": 1.0, "compile_s": 0.5}}},
               {"key": "softmax_8x8", "label": "softmax 8x8", "launch_bound": True, "min_bytes": 512,
                "errors": [],
                "results": {"fusec": {"us": 3.0, "wall_us_per_call": 5.0, "host_us_per_call": 4.0},
                            "eager": {"us": 9.0, "wall_us_per_call": 20.0, "host_us_per_call": 19.0}}},
           ],
           "copy": {"gbps": 1.0, "gbps_start": 1.0, "gbps_end": 0.9, "method": "M"},
           "jit": {"program": "gelu_tanh", "dims": {"N": 4096}, "command": "X", "cold_process_ms": 300.0,
                   "warm_process_ms": 100.0, "cold_compile_ms": 40.0, "warm_compile_ms": 2.0,
                   "cold_compiles": 1, "warm_compiles": 0, "cold_cache_files": 1, "warm_cache_files": 1},
           "recompiles": [{"program": "softmax", "runs": 20, "compiles": 1, "cache_files": 1}]}
    run.apply_floor(doc, 1.0)  # 1 GB/s: 1000 bytes a microsecond
    return doc


class StrictJson(unittest.TestCase):
    def test_save_writes_no_nan(self):
        import json

        def refuse(c):
            raise ValueError(c)

        doc = synthetic_doc()  # its builtin rel_err is NaN
        doc["workloads"][0]["results"]["eager"]["us"] = float("inf")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            run.save(doc, out)
            with open(out) as f:
                back = json.loads(f.read(), parse_constant=refuse)
        res = back["workloads"][0]["results"]
        self.assertIsNone(res["builtin"]["rel_err"])
        self.assertIsNone(res["eager"]["us"])
        self.assertEqual(res["fusec"]["us"], 2.0)


class Report(unittest.TestCase):
    def test_floor(self):
        doc = synthetic_doc()
        rec = doc["workloads"][0]
        self.assertAlmostEqual(rec["floor_us"], 2.0)
        self.assertAlmostEqual(rec["results"]["fusec"]["pct_floor"], 100.0)
        self.assertAlmostEqual(rec["results"]["eager"]["pct_floor"], 25.0)

    def test_render(self):
        md = report.render(synthetic_doc())
        self.assertIn("| softmax 64x64 | 2.00 | 2.00 (100%) | 4.00 (50%) | 8.00 (25%) | "
                      "4.00 (50%) `F.softmax` | 1.00 (200%) | 0.50 | 2.00x (4.00x) | 1 / 4 |", md)
        self.assertIn("| softmax 8x8 | eager | 9.00 | 20.0 | 19.0 |", md)
        self.assertIn("| whole process (ms) | 300 | 100 |", md)
        self.assertIn("| softmax | 20 | 1 | 1 |", md)
        self.assertIn("- softmax 64x64: eager: relative error 1 over 1e-05", md)
        self.assertIn("Command: `CMD`.", md)
        self.assertIn("| softmax 64x64 | 1.0e+00 | NaN | - | 2.0e-07 | 3.0e-08 |", md)
        self.assertNotIn("None", md)
        self.assertNotIn("fusec (Python)", md)  # a run without the package has no such column

    def test_python_column(self):
        doc = synthetic_doc()
        doc["workloads"][0]["results"]["fusec_py"] = {"us": 2.5}
        doc["workloads"][1]["results"]["fusec_py"] = {"us": 3.5, "wall_us_per_call": 7.0, "host_us_per_call": 6.0}
        run.apply_floor(doc, 1.0)
        md = report.render(doc)
        self.assertIn("| softmax 64x64 | 2.00 | 2.00 (100%) | 4.00 (50%) | 2.50 (80%) | 8.00 (25%) | ", md)
        self.assertIn("| softmax 8x8 | fusec (Python) | 3.50 | 7.00 | 6.00 |", md)

    def test_missing_is_dash(self):
        doc = synthetic_doc()
        del doc["workloads"][0]["results"]["fusec"]
        md = report.render(doc)
        self.assertIn("| softmax 64x64 | 2.00 | - | 4.00 (50%)", md)


    def test_update(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "b.md")
            with open(path, "w") as f:
                f.write("# B\n\n<!-- results:begin (x) -->\nold\n<!-- results:end -->\ntail\n")
            report.update(path, "new\n")
            with open(path) as f:
                self.assertEqual(f.read(), "# B\n\n<!-- results:begin (x) -->\nnew\n<!-- results:end -->\ntail\n")
            with open(path, "w") as f:
                f.write("no markers\n")
            self.assertRaises(ValueError, report.update, path, "new\n")

    def test_docs_have_markers(self):
        with open(os.path.join(run.ROOT, "docs", "benchmarks.md")) as f:
            text = f.read()
        self.assertIn(report.BEGIN, text)
        self.assertIn(report.END, text)


class Plot(unittest.TestCase):
    def test_png(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.png")
            plot.plot(synthetic_doc(), path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


class Run(unittest.TestCase):
    def test_inputs_of_every_program(self):
        for w in run.WORKLOADS:
            decl = run.parse_inputs(run.program_path(os.path.join(run.ROOT, "examples"), w["program"]))
            self.assertTrue(decl, w["key"])
            for name, dt, dims in decl:
                if dims is not None:
                    run.shape_of(dims, w["dims"])  # every dim is bound
        decl = run.parse_inputs(os.path.join(run.ROOT, "examples", "layernorm_bf16.fz"))
        self.assertEqual(decl, [("x", "bf16", ["R", "C"]), ("w", "bf16", ["C"]),
                                ("b", "bf16", ["C"]), ("eps", "f32", None)])

    def test_replay_profile_checks_its_keys_first(self):
        """bench/replay_profile.py, likewise."""
        p = subprocess.run([sys.executable, os.path.join(HERE, "replay_profile.py"), "dyt-bf16-4095x4096",
                            "nosuch-bf16-8x8"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(), "replay_profile: unknown or no point keys: nosuch-bf16-8x8 "
                         "(see bench/sweep.py --dry-run)")
        p = subprocess.run([sys.executable, os.path.join(HERE, "replay_profile.py")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown or no point keys", p.stderr)

    def test_cubin_lab_checks_its_spec_first(self):
        """bench/cubin_lab.py: a missing cubin, a spec that is not one, and
        unknown keys stop it before torch is imported; the shipped spec
        names its points."""
        tool = os.path.join(HERE, "cubin_lab.py")
        spec = os.path.join(HERE, "lab", "short_rows.json")
        p = subprocess.run([sys.executable, tool, "--cubin", "/nonexistent.cubin", spec], capture_output=True,
                           text=True)
        self.assertEqual((p.returncode, p.stderr.strip()), (1, "cubin_lab: /nonexistent.cubin: no such cubin"))
        p = subprocess.run([sys.executable, tool, spec], capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stderr.strip()), (1, "cubin_lab: a point without a cubin, and no --cubin"))
        with tempfile.TemporaryDirectory() as d:
            cubin, bad, unknown = (os.path.join(d, f) for f in ("k.cubin", "bad.json", "unknown.json"))
            nogrid = os.path.join(d, "nogrid.json")
            for path, text in ((cubin, ""), (bad, '{"points": [{"key": "softmax-f32-8x8"}]}'),
                               (unknown, '{"points": [{"key": "nosuch-f32-8x8", "kernels": []}]}'),
                               (nogrid, '{"points": [{"key": "softmax-f32-8x8", "kernels": '
                                        '[{"name": "k", "block": [32, 1, 1], "args": []}]}]}')):
                with open(path, "w") as f:
                    f.write(text)
            p = subprocess.run([sys.executable, tool, "--cubin", cubin, bad], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip(), "cubin_lab: %s: not a spec (KeyError: 'kernels')" % bad)
            p = subprocess.run([sys.executable, tool, "--cubin", cubin, nogrid], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip(), "cubin_lab: %s: not a spec (KeyError: 'kernel k lacks grid or "
                             "rows_per_block')" % nogrid)
            p = subprocess.run([sys.executable, tool, "--cubin", cubin, unknown], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip(), "cubin_lab: unknown or no point keys: nosuch-f32-8x8 "
                             "(see bench/sweep.py --dry-run)")
        got, points = cubin_lab.load_spec(spec)
        self.assertEqual(len(points), 12)
        self.assertEqual((points[0]["key"], points[0]["rows"], points[0]["width"]),
                         ("logsumexp-f32-2097152x7", 2097152, 7))

    def test_ldgsts_scan_flags_unset_descriptors(self):
        """tools/ldgsts_scan.py: an LDGSTS whose policy register is odd or
        never written in its function is reported; one after its UMOV is
        not."""
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
        import ldgsts_scan
        sass = "\n".join([
            ".text.k_a:",
            "        /*0010*/                   UMOV UR10, 0x0 ;",
            "        /*0020*/                   UMOV UR11, 0x12f00000 ;",
            "        /*0030*/                   LDGSTS.E.BYPASS.128 [R4], desc[UR10][R16.64] ;",
            "        /*0040*/                   LDGSTS.E.BYPASS.128 [R2+UR0], desc[UR1][R16.64] ;",
            ".text.k_b:",
            "        /*0010*/                   LDGSTS.E.BYPASS.128 [R4], desc[UR10][R16.64] ;",
            "        /*0020*/                   LDGSTS.E.BYPASS.128 [R4], [R16.64] ;"])
        got = ldgsts_scan.bad_descriptors(sass)
        self.assertEqual([(fn, line.split()[-2]) for fn, line in got],
                         [("k_a", "desc[UR1][R16.64]"), ("k_b", "desc[UR10][R16.64]")])

    def test_cubin_lab_opts_in_past_48k_with_static_memory(self):
        """Module.func: a kernel of 512 bytes of static shared memory gets
        48 KiB - 512 of dynamic without opting in; 48 KiB, or more, opts in
        (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), once per size."""
        class Cu:
            def __init__(self):
                self.set = []

            def cuModuleGetFunction(self, f, m, name):
                return 0

            def cuFuncGetAttribute(self, v, attr, f):
                v._obj.value = 512 if attr == 1 else -1
                return 0

            def cuFuncSetAttribute(self, f, attr, v):
                self.set.append((attr, v.value))
                return 0

        mod = object.__new__(cubin_lab.Module)
        mod.cu, mod.m, mod.f, mod.smem = Cu(), None, {}, {}
        mod.func("k", 48 * 1024 - 512)
        self.assertEqual(mod.cu.set, [])
        mod.func("k", 48 * 1024)
        mod.func("k", 48 * 1024)
        mod.func("k", 64 * 1024)
        self.assertEqual(mod.cu.set, [(8, 48 * 1024), (8, 64 * 1024)])

    def test_cubin_lab_passes_each_kind_of_argument(self):
        """kernel_fn: inputs and the output by address, "@null", "@rows" and
        "@n" as 64-bit, [type, value] with a number, an input scalar or a
        special name (a list: no key of the specials), a workspace zeroed
        once (["ws", bytes]) and one zeroed every launch (["wsz", bytes]),
        on a grid of rows / rows_per_block (rounded
        up)."""
        class Tensor:
            def __init__(self, ptr):
                self.ptr, self.dtype, self.device, self.zeroed = ptr, "f32", "cuda", 0

            def data_ptr(self):
                return self.ptr

            def zero_(self):
                self.zeroed += 1

        class Torch:
            def is_tensor(self, v):
                return isinstance(v, Tensor)

            uint8 = "u8"

            def empty(self, shape, dtype, device):
                return Tensor(0x9000)

            def zeros(self, n, dtype, device):
                self.zeroed = getattr(self, "zeroed", []) + [(n, dtype, device)]
                self.ws = getattr(self, "ws", []) + [Tensor(0xa000 + 0x1000 * len(self.zeroed))]
                return self.ws[-1]

        class Module:
            def launch(self, name, grid, block, smem, values):
                self.got = (name, grid, block, smem, [(type(v).__name__, v.value) for v in values])

        k = {"name": "k", "rows_per_block": 4, "block": [32, 4, 1], "smem": 512,
             "args": ["x", "@out", "@null", ["f32", "eps"], ["i32", "@n"], "@rows", "@n", ["i64", 7], ["ws", 64],
                      ["wsz", 32]]}
        mod, torch = Module(), Torch()
        fn = cubin_lab.kernel_fn(torch, mod, k, {"rows": 10, "width": 6}, (10, 6))
        self.assertEqual(torch.zeroed, [(64, "u8", "cuda"), (32, "u8", "cuda")])
        for n in range(1, 3):  # "ws" zeroed once (allocated so), "wsz" every launch
            self.assertEqual(fn(x=Tensor(0x1000), eps=0.5).ptr, 0x9000)
            self.assertEqual(mod.got, ("k", [3, 1, 1], [32, 4, 1], 512,
                                       [("c_void_p", 0x1000), ("c_void_p", 0x9000), ("c_void_p", None),
                                        ("c_float", 0.5), ("c_int", 6), ("c_long", 10), ("c_long", 6), ("c_long", 7),
                                        ("c_void_p", 0xb000), ("c_void_p", 0xc000)]))
            self.assertEqual([w.zeroed for w in torch.ws], [0, n])
        self.assertEqual(len(torch.zeroed), 2)
        self.assertEqual(cubin_lab.label(k), "k")  # no label: the entry's name
        self.assertEqual(cubin_lab.label(dict(k, label="k R=32")), "k R=32")

    def test_replay_ab_checks_its_keys_and_libraries_first(self):
        """bench/replay_ab.py, likewise; and a library that is not there."""
        p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "a=/nonexistent.so",
                            "nosuch-bf16-8x8"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(), "replay_ab: unknown or no point keys: nosuch-bf16-8x8 "
                         "(see bench/sweep.py --dry-run)")
        p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "a=/nonexistent.so",
                            "--lib", "b", "dyt-bf16-4095x4096"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(), "replay_ab: --lib LABEL=PATH of an existing library, at least once "
                         "(not: b /nonexistent.so)")

    # A stand-in fusec package: says which library it loaded, and runs the
    # point's torch function (on the fake torch) as the program, off by 1%
    # in library b.so where FAKE_WRONG is set.
    STAND_IN_FUSEC = """import os, sys
import sweep
def compile_file(path):
    lib = os.path.basename(os.environ['FUSEC_LIBRARY'])
    sys.stderr.write('loaded %s for %s\\n' % (lib, os.path.basename(path)))
    if 'FAKE_KNOB' in os.environ:
        sys.stderr.write('knob %s for %s\\n' % (os.environ['FAKE_KNOB'], os.path.basename(path)))
    import torch
    import torch.nn.functional as F_
    fam = [f for f in sweep.FAMILIES if os.path.basename(f['program']) == os.path.basename(path)][0]
    fn = sweep.torch_programs(torch, F_)[fam['torch']]
    k = 1.01 if lib == 'b.so' and os.environ.get('FAKE_WRONG') else 1.0
    return lambda **kw: fn(**kw) * k
"""

    def test_replay_ab_on_a_fake_gpu(self):
        """Two libraries, each in its process (FUSEC_LIBRARY), every point
        asked of both in each round, its outputs checked once in each: on
        the fake torch (a replay of 1 µs) and the stand-in fusec above."""
        if not have_numpy():
            self.skipTest("numpy is not installed")
        with tempfile.TemporaryDirectory() as d:
            for pkg, text in (("torch", "import sys\nsys.path.insert(0, %r)\nimport fake_gpu\nfake_gpu.install()\n"
                               % HERE),
                              ("fusec", "import sys\nsys.path.insert(0, %r)\n" % HERE + self.STAND_IN_FUSEC)):
                os.makedirs(os.path.join(d, pkg))
                with open(os.path.join(d, pkg, "__init__.py"), "w") as f:
                    f.write(text)
            libs = []
            for name in ("a.so", "b.so"):
                libs.append(os.path.join(d, name))
                open(libs[-1], "w").close()
            env = dict(os.environ, PYTHONPATH=d)
            p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "main=" + libs[0],
                                "--lib", "new=" + libs[1], "--rounds", "3", "--seconds", "0",
                                "dyt-bf16-4095x4096", "softmax-f32-8388608x1"], capture_output=True, text=True,
                               env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            self.assertEqual(len(lines), 3, p.stdout)
            self.assertTrue(lines[0].startswith("point (µs a call, each round)"), lines[0])
            # the fake's replay takes 1 µs; one copy of the inputs (64 MB already pass 4x its 1 MiB L2)
            self.assertEqual(lines[1].split()[:5], ["dyt-bf16-4095x4096", "1.0", "/", "1.0", "/"])
            self.assertIn("(1.000x)", lines[1])
            self.assertTrue(lines[1].endswith("  checked"), lines[1])
            self.assertTrue(lines[2].startswith("softmax-f32-8388608x1"), lines[2])
            self.assertTrue(lines[2].endswith("  checked"), lines[2])
            # each point, three rounds, once in each library's own process
            loaded = sorted(l for l in p.stderr.splitlines() if l.startswith("loaded "))
            self.assertEqual(loaded, ["loaded a.so for dyt_bf16.fz"] * 3 + ["loaded a.so for softmax.fz"] * 3 +
                             ["loaded b.so for dyt_bf16.fz"] * 3 + ["loaded b.so for softmax.fz"] * 3)
            # one library twice, a knob set in one process only (--env)
            p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "off=" + libs[0],
                                "--lib", "on=" + libs[0], "--env", "on:FAKE_KNOB=1", "--rounds", "2",
                                "--seconds", "0", "softmax-f32-8388608x1"], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(sorted(l for l in p.stderr.splitlines() if l.startswith(("loaded ", "knob "))),
                             ["knob 1 for softmax.fz"] * 2 + ["loaded a.so for softmax.fz"] * 4)
            p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "off=" + libs[0],
                                "--env", "on:FAKE_KNOB=1", "softmax-f32-8388608x1"], capture_output=True, text=True,
                               env=env)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip(), "replay_ab: --env LABEL:VAR=VALUE with the LABEL of a --lib "
                             "(not: on:FAKE_KNOB=1)")
            # a library whose outputs are 1% off: its check fails, named, and the exit status says so
            p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "main=" + libs[0],
                                "--lib", "new=" + libs[1], "--rounds", "1", "--seconds", "0",
                                "softmax-f32-8388608x1"], capture_output=True, text=True,
                               env=dict(env, FAKE_WRONG="1"))
            self.assertEqual(p.returncode, 1, p.stderr)
            line = p.stdout.splitlines()[1]
            self.assertIn("  CHECK FAILED: new: softmax-f32-8388608x1: output 0: relative error 0.01 over", line)
            self.assertNotIn("main:", line)
            self.assertIn("replay_ab: a check failed at 1 of 1 points", p.stderr)
            # --no-check: no check, no verdict
            p = subprocess.run([sys.executable, os.path.join(HERE, "replay_ab.py"), "--lib", "main=" + libs[0],
                                "--lib", "new=" + libs[1], "--rounds", "1", "--seconds", "0", "--no-check",
                                "softmax-f32-8388608x1"], capture_output=True, text=True,
                               env=dict(env, FAKE_WRONG="1"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.splitlines()[1].endswith("(1.000x)"), p.stdout)

    def test_dry_run(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--dry-run",
                            "--fusec", "/nonexistent/fusec"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("/nonexistent/fusec bench %s --dim B=4096 --dim N=4096 --json --reps 200 --warmup 20"
                      % os.path.join(run.ROOT, "examples", "softmax.fz"), p.stdout)
        self.assertEqual(p.stdout.count("    torch: "), len(run.WORKLOADS))
        self.assertNotIn("import torch", p.stderr)


class FakeGpuRun(unittest.TestCase):
    """run.py end to end on fake torch and triton (NumPy) and a fake GPU fusec
    over the real binary (FUSEC_BIN, default build/fusec): catches glue
    errors before they cost a GPU run."""

    def test_end_to_end(self):
        real = os.environ.get("FUSEC_BIN", os.path.join(run.ROOT, "build", "fusec"))
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("numpy is not installed")
        if not os.access(real, os.X_OK):
            self.skipTest("no fusec binary at %s (set FUSEC_BIN)" % real)
        import json
        import fake_gpu
        saved = dict(sys.modules), run.WORKLOADS, run.RECOMPILE_SIZES, os.environ.copy()
        try:
            fake_gpu.install()
            small = {"N": 4096, "B": 8, "R": 8}
            run.WORKLOADS = [dict(w, dims={k: min(v, small.get(k, 64)) for k, v in w["dims"].items()})
                             for w in run.WORKLOADS]
            run.RECOMPILE_SIZES = {"softmax": [{"B": 2, "N": 3}, {"B": 4, "N": 5}]}
            with tempfile.TemporaryDirectory() as d:
                fake = os.path.join(d, "fusec")
                with open(fake, "w") as f:
                    f.write(fake_gpu.FAKE_FUSEC)
                os.chmod(fake, 0o755)
                os.environ["FAKE_REAL_FUSEC"] = os.path.abspath(real)
                out = os.path.join(d, "r.json")
                import contextlib
                import io
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    rc = run.main(["--fusec", fake, "--out", out, "--copy-mib", "16"])
                self.assertEqual(rc, 0)
                with open(out) as f:
                    doc = json.load(f)
        finally:
            sys.modules.clear()
            sys.modules.update(saved[0])
            run.WORKLOADS, run.RECOMPILE_SIZES = saved[1], saved[2]
            os.environ.clear()
            os.environ.update(saved[3])
        self.assertEqual(len(doc["workloads"]), len(saved[1]))
        for rec in doc["workloads"]:
            self.assertEqual(rec["errors"], [], rec["key"])
            self.assertEqual(set(rec["results"]) - {"builtin"}, {"eager", "compiled", "fusec", "fusec_per_op"})
            self.assertTrue(rec["fusec_check"]["ok"], rec["key"])
            self.assertEqual(rec["min_bytes"], rec["fusec_raw"]["min_bytes"], rec["key"])
        self.assertEqual(doc["jit"]["cold_compiles"], 1)
        self.assertEqual([r["runs"] for r in doc["recompiles"]], [2])
        self.assertIn("| softmax 8x1024 | fusec | 1.00 | 4.00 | 3.00 |\n"
                      "| softmax 8x1024 | fusec, CUDA graph | - | 7.00 | 6.00 |", buf.getvalue())


# ---- the shape sweep ----------------------------------------------------------------------


SASS = """
	code for sm_90
		Function : k_reg4
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                         /* 0x00000a00ff017b82 */
                                                                                  /* 0x000ff00000000800 */
        /*0010*/              @!P0 BRA 0x6f0 ;                                    /* 0x0000000000fc8947 */
        /*0020*/                   LDG.E.128.CONSTANT R20, desc[UR10][R20.64] ;   /* 0x0000000a14147981 */
        /*0030*/               @P0 LDG.E.128.CONSTANT R16, desc[UR10][R16.64] ;   /* 0x0000000a10107981 */
        /*0040*/         @!UP0 FFMA.SAT R14, R43, R16.reuse, 0.5 ;               /* 0x3f0000002b0e7423 */
		Function : k_tile1d
        /*0000*/                   EXIT ;                                         /* 0x000000000000794d */
"""


class SassCounts(unittest.TestCase):
    def test_parse(self):
        c = sass_counts.parse_sass(SASS)
        self.assertEqual(sorted(c), ["k_reg4", "k_tile1d"])
        self.assertEqual(dict(c["k_reg4"]), {"LDC": 1, "BRA": 1, "LDG": 2, "FFMA": 1})
        self.assertEqual(dict(c["k_tile1d"]), {"EXIT": 1})
        lines = sass_counts.report({"a": c, "b": {"k_reg4": c["k_reg4"] + c["k_reg4"]}}, 1)
        self.assertEqual(lines[0].split(), ["k_reg4", "a", "5", "b", "10"])
        self.assertEqual(lines[1].split(), ["LDG", "2", "4"])
        self.assertEqual(lines[2].split(), ["k_tile1d", "a", "1", "b", "0"])


class SweepPlan(unittest.TestCase):
    """The plan as the issue asks it: about 150 points, each large one moving
    64 MiB with the fewest rows, every class of width, halves that cover it."""

    def test_points(self):
        points = sweep.plan()
        self.assertTrue(140 <= len(points) <= 170, len(points))
        self.assertEqual(len({p["key"] for p in points}), len(points))
        self.assertEqual([p["index"] for p in points], list(range(len(points))))
        for p in points:
            if p["launch_bound"]:
                self.assertLess(p["min_bytes"], 1 << 20, p["key"])
                continue
            self.assertGreaterEqual(p["min_bytes"], sweep.TARGET_BYTES, p["key"])
            fam = sweep.family(p["family"], p["dtype"])
            if not fam["pointwise"]:
                self.assertLess(p["min_bytes"], 1.3 * sweep.TARGET_BYTES, p["key"])
        self.assertEqual(sum(p["launch_bound"] for p in points), len(sweep.LAUNCH_BOUND))

    def test_fewest_rows(self):
        for fam in sweep.FAMILIES:
            for w in fam["widths"]:
                r = sweep.rows_for(fam, w)
                self.assertGreaterEqual(sweep.min_bytes(fam, fam["dims"](w, r)), sweep.TARGET_BYTES)
                if r > 1:
                    self.assertLess(sweep.min_bytes(fam, fam["dims"](w, r - 1)), sweep.TARGET_BYTES)

    def test_widths_and_families(self):
        panels = {(f["family"], f["dtype"]) for f in sweep.FAMILIES}
        for name in ("softmax", "log_softmax", "layernorm", "rmsnorm"):
            for dt in ("f32", "f16", "bf16"):
                self.assertIn((name, dt), panels)
        for k in (("masked_softmax", "f16"), ("bcast3", "f32"), ("logsumexp", "f32"), ("gelu_tanh", "f32"),
                  ("silu_mul", "bf16"), ("adam", "f32"), ("dyt", "bf16"), ("add_rmsnorm", "bf16"),
                  ("modrms_row", "bf16"), ("modrms_batch", "bf16"), ("silu", "bf16"), ("gelu", "bf16"),
                  ("swiglu", "bf16")):
            self.assertIn(k, panels)
        rows = [p["width"] for p in sweep.plan() if not p["launch_bound"]
                and not sweep.family(p["family"], p["dtype"])["pointwise"]]
        for w in [1, 7, 31, 127, 1001, 3001, 4099, 10007] + [1 << k for k in (5, 8, 10, 12, 14, 17)]:
            self.assertIn(w, rows)
        self.assertGreaterEqual(sum(30000 <= w <= 160000 for w in rows), 10)
        self.assertGreaterEqual(sum(w >= 1000000 for w in rows), 8)

    def test_checks(self):
        points = sweep.plan()
        for fam in sweep.FAMILIES:
            ps = [p for p in points if (p["family"], p["dtype"]) == (fam["family"], fam["dtype"])
                  and not p["launch_bound"]]
            n = sum(p["check"] for p in ps)
            self.assertTrue(1 <= n <= 3, (fam["family"], fam["dtype"], n))
            for p in ps:
                d = sweep.check_dims(fam, p)
                n = sweep.numel(sweep.run.parse_inputs(os.path.join(run.ROOT, fam["program"]))[0][2], d)
                # rows rounded up to a whole Q of masked_softmax: a few more
                self.assertTrue(n <= 1.01 * sweep.CHECK_ELEMS or n == p["width"] or
                                (fam["pointwise"] and n < sweep.CHECK_ELEMS + 4096), p["key"])
                self.assertEqual(p["width"] if not fam["pointwise"] else p["width"] % 4096,
                                 list(d.values())[-1] if not fam["pointwise"] else list(d.values())[-1] % 4096)

    def test_keys_of_shapes_the_plan_lacks(self):
        """The tools take a row family's shape written as the plan writes
        it (rows x width, or every dim: a masked softmax's B x H x Q x K),
        in or out of the plan; nothing else."""
        p = sweep.point_of_key("softmax-f32-645278x13")
        self.assertEqual(p["dims"], {"B": 645278, "N": 13})
        self.assertEqual((p["width"], p["family"], p["dtype"]), (13, "softmax", "f32"))
        self.assertEqual(sweep.point_of_key("layernorm-bf16-1525201x11")["dims"], {"R": 1525201, "C": 11})
        planned = {q["key"]: q for q in sweep.plan()}
        self.assertIs(sweep.point_of_key("softmax-f32-8381x1001", planned), planned["softmax-f32-8381x1001"])
        p = sweep.point_of_key("masked_softmax-f16-4x16x1024x96")
        self.assertEqual(p["dims"], {"B": 4, "H": 16, "Q": 1024, "K": 96})
        self.assertEqual((p["width"], p["rows"]), (96, 4 * 16 * 1024))
        for key in ("softmax-f32-x1", "softmax-f32-0x13", "nosuch-f32-8x8", "softmax-f64-8x8", "gelu_tanh-f32-1x8",
                    "softmax-f32-8x8x8", "softmax", "masked_softmax-f16-2x16x1024x96", "masked_softmax-f16-96",
                    "masked_softmax-f16-4x16x0x96"):
            self.assertIsNone(sweep.point_of_key(key), key)

    def test_overflow_is_not_compared(self):
        """f16 softmax past 65504 elements a row: the per-op plan and the torch
        function store a sum that overflows, the fused kernel does not; the
        point says so instead of failing, and narrower points stay compared."""
        points = {p["key"]: p for p in sweep.plan()}
        fam = sweep.family("softmax", "f16")
        self.assertIn("65504", sweep.overflows(fam, points["softmax-f16-17x1000003"]))
        self.assertIsNone(sweep.overflows(fam, points["softmax-f16-334x50257"]))
        self.assertIsNone(sweep.overflows(sweep.family("softmax", "f32"), points["softmax-f32-1x10000019"]))
        raw = {"min_bytes": points["softmax-f16-17x1000003"]["min_bytes"], "outputs_rel_diff": 1.0}
        self.assertEqual(sweep.fusec_errors(fam, points["softmax-f16-17x1000003"], raw), [])
        self.assertEqual(len(sweep.fusec_errors(fam, points["softmax-f16-334x50257"],
                                                dict(raw, min_bytes=points["softmax-f16-334x50257"]["min_bytes"]))),
                         1)
        cell = sweep_report.check_cell({"errors": [], "not_checked": "why", "fusec_check": {"rel_err": 0.0}})
        self.assertEqual(cell, "ok, run 0.0e+00; per-op and torch not compared: why")

    def test_parts(self):
        points = sweep.plan()
        args = sweep.parse_args([])
        for m in (1, 2, 3):
            got = []
            for k in range(1, m + 1):
                args.part = (k, m)
                got += [p["key"] for p in sweep.select(points, args)]
            self.assertEqual(sorted(got), sorted(p["key"] for p in points))
        args.part = (1, 1)
        args.quick = True
        self.assertEqual(len(sweep.select(points, args)), len(sweep.QUICK))
        for bad in ("0/2", "3/2", "1", "a/b"):
            self.assertRaises(Exception, sweep.parse_part, bad)

    def test_ncu_points_checks_its_keys_first(self):
        """bench/ncu_points.py names the keys it does not know before it
        imports torch (so a typo costs no GPU time)."""
        p = subprocess.run([sys.executable, os.path.join(HERE, "ncu_points.py"), "softmax-f32-8192x1024",
                            "softmax-f32-x1"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(), "ncu_points: unknown or no point keys: softmax-f32-x1 "
                         "(see bench/sweep.py --dry-run)")

    def test_dry_run(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "sweep.py"), "--dry-run", "--part", "2/2",
                            "--fusec", "/nonexistent/fusec"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        n = len(sweep.plan()) // 2
        self.assertIn("# %d points (part 2/2)" % n, p.stdout)
        self.assertEqual(p.stdout.count("    $ /nonexistent/fusec bench "), n)
        self.assertIn("%s bench %s --dim B=1198373 --dim N=7 --json --mode both --reps 100 --warmup 10"
                      % ("/nonexistent/fusec", os.path.join(run.ROOT, "examples", "softmax.fz")), p.stdout)
        self.assertNotIn("import torch", p.stderr)
        p = subprocess.run([sys.executable, os.path.join(HERE, "sweep.py"), "--dry-run", "--quick",
                            "--device", "1"], capture_output=True, text=True)
        self.assertEqual(p.stdout.count(" --device 1\n"), len(sweep.QUICK))
        p = subprocess.run([sys.executable, os.path.join(HERE, "sweep.py"), "--dry-run", "--part", "3/2"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--part 3/2: N must be 1 to M", p.stderr)


class SweepPrograms(unittest.TestCase):
    """Every program's bytes as fusec counts them, and its outputs."""

    def test_min_bytes_as_fusec_counts(self):
        if not os.access(FUSEC_BIN, os.X_OK):
            self.skipTest("no fusec binary at %s (set FUSEC_BIN)" % FUSEC_BIN)
        import json
        for fam in sweep.FAMILIES:
            dims = fam["dims"](5, 3 if not fam["pointwise"] else 1)
            cmd = [FUSEC_BIN, "bench", os.path.join(run.ROOT, fam["program"]), "--dry-run", "--json"]
            cmd += sum((["--dim", "%s=%d" % kv] for kv in dims.items()), [])
            p = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["min_bytes"], sweep.min_bytes(fam, dims), fam["program"])
            outs = run.parse_outputs(os.path.join(run.ROOT, fam["program"]))
            self.assertEqual(len(outs), len(fam["outs"]), fam["program"])


def sweep_point(index, family, dtype, shape, fusec_us, tc_us, floor_us, launch_bound=False, errors=()):
    dims = dict(zip("ABCD", (int(v) for v in shape.split("x"))))
    return {"index": index, "key": "%s-%s-%s" % (family, dtype, shape), "family": family, "dtype": dtype,
            "shape": shape, "dims": dims, "width": list(dims.values())[-1], "rows": 1,
            "launch_bound": launch_bound, "min_bytes": int(floor_us * 1000), "check": False,
            "results": {"fusec": {"us": fusec_us, "wall_us_per_call": 4.0, "host_us_per_call": 3.0},
                        "compiled": {"us": tc_us, "wall_us_per_call": 40.0, "host_us_per_call": 39.0}},
            "errors": list(errors)}


def sweep_doc():
    """Two halves of a sweep, as sweep.py writes them (made-up figures)."""
    meta = {"device": "TEST DEVICE", "sm_count": 2, "date": "D", "torch": "T", "triton": "TR", "cuda": "C",
            "python": "P", "elapsed_s": 10.0}
    a = {"meta": dict(meta, command="CMD1"), "plan": {"part": "1/2"},
         "copy": {"gbps_start": 1.0, "gbps_end": 1.0, "method": "M"}, "not_run": [],
         "points": [sweep_point(0, "softmax", "f32", "9x7", 125.0, 110.0, 100.0),
                    sweep_point(2, "softmax", "f32", "2x4099", 100.0, 120.0, 100.0),
                    sweep_point(9, "softmax", "f32", "8x1024", 3.0, 4.0, 0.1, launch_bound=True)]}
    b = {"meta": dict(meta, command="CMD2"), "plan": {"part": "2/2"}, "copy": {"gbps_start": 1.0, "method": "M"},
         "not_run": ["rmsnorm-bf16-8x8"],
         "points": [sweep_point(1, "layernorm", "f16", "16x4099", 230.0, 100.0, 100.0,
                                errors=["fusec run: output 0: relative error 1 over 0.004"])]}
    for d in (a, b):
        sweep.set_floors(d)
    return a, b


class SweepReport(unittest.TestCase):
    def test_merge_and_render(self):
        doc = sweep_report.merge(sweep_doc())
        self.assertEqual([p["index"] for p in doc["points"]], [0, 1, 2, 9])
        md = sweep_report.render(doc)
        self.assertIn("- Points: 4 measured (3 large, 1 launch-bound); 1 not run (stopped by the time budget): "
                      "rmsnorm-bf16-8x8.", md)
        self.assertIn("- fusec / torch.compile time: worst 2.30x at layernorm f16 16x4099; fusec slower at 2 of 3 "
                      "points, median ratio 1.14x.", md)
        self.assertIn("- fusec: under 90% of the floor at 2 of 3 points, under 85% at 2; under the target (90% in "
                      "f32, 85% in f16/bf16) at 2; the lowest: layernorm f16 16x4099 43%, softmax f32 9x7 80%.",
                      md)
        self.assertIn("- torch.compile: under 90% of the floor at 1 of 3 points, under 85% at 1; under the target "
                      "(90% in f32, 85% in f16/bf16) at 1; the lowest: softmax f32 2x4099 83%.", md)
        self.assertIn("- Launch-bound, wall time per call of back-to-back calls, fusec / torch.compile: worst "
                      "0.10x at softmax f32 8x1024; fusec slower at 0 of 1.", md)
        self.assertIn("- Checks: a failed check or an error at 1 of 4 points (listed at the end).", md)
        self.assertIn("| softmax | f32 | 9x7 | 7 | 0.1 | 100 | 125 | 80% | 110 | 91% | 1.14x | 125 | ok |", md)
        self.assertIn("| layernorm | f16 | 16x4099 | 4099 | 0.1 | 100 | 230 | 43% | 100 | 100% | 2.30x | 230 | "
                      "FAIL |", md)
        self.assertIn("| softmax | f32 | 8x1024 | 3.00 | 4.00 | 3.00 | 4.00 | 40.0 | 39.0 | 0.10x | 3.00 | 4.00 | - "
                      "| ok |", md)
        self.assertIn("- layernorm-f16-16x4099: fusec run: output 0: relative error 1 over 0.004", md)
        self.assertIn("Run 1 (part 1/2): TEST DEVICE", md)
        self.assertIn("Run 2 (part 2/2): TEST DEVICE", md)
        self.assertIn("1 GB/s at the start, not measured at the end (the run stopped early)", md)
        self.assertIn("Command: `CMD2`.", md)
        self.assertNotIn("None", md)
        # A merged file merges again to the same sweep.
        self.assertEqual(sweep_report.render(sweep_report.merge([doc])), md)

    def test_missing_is_dash(self):
        a, b = sweep_doc()
        del a["points"][0]["results"]["compiled"]
        md = sweep_report.render(sweep_report.merge([a, b]))
        self.assertIn("| softmax | f32 | 9x7 | 7 | 0.1 | 100 | 125 | 80% | - | - | - | 125 | ok |", md)

    def test_python_timing_is_compared(self):
        # fusec from Python, timed as torch.compile is, is the figure compared;
        # fusec bench's own stays beside it
        a, b = sweep_doc()
        a["points"][0]["results"]["fusec_py"] = {"us": 100.0, "rel_err": 2e-8}
        a["points"][2]["results"]["fusec_py"] = {"us": 2.0, "wall_us_per_call": 8.0, "host_us_per_call": 7.0}
        for d in (a, b):
            sweep.set_floors(d)
        md = sweep_report.render(sweep_report.merge([a, b]))
        self.assertIn("| softmax | f32 | 9x7 | 7 | 0.1 | 100 | 100 | 100% | 110 | 91% | 0.91x | 125 | "
                      "ok, py 2.0e-08 |", md)
        self.assertIn("- fusec / torch.compile time: worst 2.30x at layernorm f16 16x4099; fusec slower at 1 of 3 "
                      "points, median ratio 0.91x.", md)
        self.assertIn("| softmax | f32 | 8x1024 | 2.00 | 8.00 | 7.00 | 4.00 | 40.0 | 39.0 | 0.20x | 3.00 | 4.00 | - "
                      "| ok |", md)

    def test_update_docs(self):
        with open(os.path.join(run.ROOT, "docs", "benchmarks.md")) as f:
            text = f.read()
        self.assertIn(sweep_report.BEGIN, text)
        self.assertIn(sweep_report.END, text)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "b.md")
            with open(path, "w") as f:
                f.write("<!-- results:begin -->\nR\n<!-- results:end -->\n<!-- sweep:begin x -->\nS\n"
                        "<!-- sweep:end -->\n")
            report.update(path, "new\n", sweep_report.BEGIN, sweep_report.END)
            with open(path) as f:
                self.assertEqual(f.read(), "<!-- results:begin -->\nR\n<!-- results:end -->\n"
                                           "<!-- sweep:begin x -->\nnew\n<!-- sweep:end -->\n")

    def test_command_line(self):
        import json
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, n) for n in ("a.json", "b.json", "m.json", "s.md", "docs.md", "s.png")]
            for path, part in zip(paths, sweep_doc()):
                with open(path, "w") as f:
                    json.dump(part, f)
            with open(paths[4], "w") as f:
                f.write("# B\n<!-- sweep:begin x -->\nold\n<!-- sweep:end -->\n")
            argv = paths[:2] + ["--json", paths[2], "--md", paths[3], "--update", paths[4]]
            if have_matplotlib():
                argv += ["--png", paths[5]]
            self.assertEqual(sweep_report.main(argv), 0)
            md = sweep_report.render(sweep_report.merge(sweep_doc()))
            with open(paths[3]) as f:
                self.assertEqual(f.read(), md)
            with open(paths[2]) as f:
                self.assertEqual(sweep_report.render(sweep_report.merge([json.load(f)])), md)
            with open(paths[4]) as f:
                text = f.read()
            self.assertTrue(text.startswith("# B\n<!-- sweep:begin x -->\n" + md), text)
            self.assertEqual("![% of the floor against the row width, a panel a family](s.png)" in text,
                             have_matplotlib())
            self.assertTrue(text.endswith("<!-- sweep:end -->\n"))
            self.assertEqual(sweep_report.main([paths[0], "--update", paths[3]]), 1)  # no markers

    def test_png(self):
        if not have_matplotlib():
            self.skipTest("matplotlib is not installed")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.png")
            sweep_report.plot(sweep_report.merge(sweep_doc()), path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


class FakeGpuSweep(unittest.TestCase):
    """sweep.py end to end on the fake torch and GPU fusec of fake_gpu.py:
    every family at two small widths (its own rows rule, a smaller target),
    the launch-bound set, the checks against the real fusec's CPU
    interpreter; then its report and plot."""

    def setUp(self):
        if not have_numpy():
            self.skipTest("numpy is not installed")
        if not os.access(FUSEC_BIN, os.X_OK):
            self.skipTest("no fusec binary at %s (set FUSEC_BIN)" % FUSEC_BIN)

    def fake_sweep(self, argv, env=None, programs=None):
        """sweep.main on the fake GPU; (exit status, JSON or None, stdout)."""
        import contextlib
        import io
        import json
        import fake_gpu
        saved = (dict(sys.modules), sweep.FAMILIES, sweep.TARGET_BYTES, sweep.torch_programs, os.environ.copy())
        try:
            fake_gpu.install()
            sweep.TARGET_BYTES = 16 << 10
            sweep.FAMILIES = [dict(f, widths=[1000, 4099] if f["pointwise"] else [3, 129]) for f in saved[1]]
            if programs:
                sweep.torch_programs = lambda torch, F_: programs(saved[3](torch, F_))
            with tempfile.TemporaryDirectory() as d:
                fake = os.path.join(d, "fusec")
                with open(fake, "w") as f:
                    f.write(fake_gpu.FAKE_FUSEC)
                os.chmod(fake, 0o755)
                os.environ.update(env or {}, FAKE_REAL_FUSEC=os.path.abspath(FUSEC_BIN))
                out = os.path.join(d, "s.json")
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    rc = sweep.main(["--fusec", fake, "--out", out, "--copy-mib", "1"] + argv)
                doc = None
                if os.path.exists(out):
                    with open(out) as f:
                        doc = json.load(f)
        finally:
            sys.modules.clear()
            sys.modules.update(saved[0])
            sweep.FAMILIES, sweep.TARGET_BYTES, sweep.torch_programs = saved[1:4]
            os.environ.clear()
            os.environ.update(saved[4])
        return rc, doc, buf.getvalue()

    def test_every_family(self):
        rc, doc, out = self.fake_sweep([])
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(doc["points"]), 2 * len(sweep.FAMILIES) + len(sweep.LAUNCH_BOUND))
        self.assertEqual(doc["not_run"], [])
        for p in doc["points"]:
            self.assertEqual(p["errors"], [], p["key"])
            self.assertEqual(set(p["results"]), {"fusec", "fusec_per_op", "compiled"}, p["key"])
            self.assertEqual(p["fusec_raw"]["min_bytes"], p["min_bytes"], p["key"])
            self.assertLess(p["results"]["compiled"]["rel_err"], run.TOLERANCE[p["dtype"]], p["key"])
            self.assertTrue(p["check"], p["key"])  # two widths a family: both are checked
            self.assertTrue(p["fusec_check"]["ok"], p["key"])
            self.assertGreater(p["floor_us"], 0, p["key"])
            if p["launch_bound"]:
                self.assertIn("wall_us_per_call", p["results"]["compiled"])
                self.assertIn("graph_wall_us_per_call", p["results"]["fusec"])
        self.assertIn("- Checks: all passed.", out)
        md = sweep_report.render(sweep_report.merge([doc]))
        for fam in sweep.FAMILIES:
            self.assertIn("| %s | %s | " % (fam["family"], fam["dtype"]), md)
        if have_matplotlib():
            with tempfile.TemporaryDirectory() as d:
                sweep_report.plot(sweep_report.merge([doc]), os.path.join(d, "s.png"))
                self.assertGreater(os.path.getsize(os.path.join(d, "s.png")), 10000)

    def test_wrong_answers_are_errors(self):
        # fusec's fused outputs that differ from its per-op outputs
        rc, doc, _ = self.fake_sweep(["--only", "softmax-f32"], env={"FAKE_OUTPUTS_DIFF": "0.5"})
        self.assertEqual(rc, 0)
        for p in doc["points"]:
            self.assertIn("fusec bench: fused vs per-op outputs differ by 0.5 (over 1e-05)", p["errors"], p["key"])

        # fusec run's outputs (here right) that differ from the reference
        def off(fns):
            return dict(fns, softmax=lambda x: fns["softmax"](x) * 1.01)
        rc, doc, out = self.fake_sweep(["--only", "rmsnorm-f32,softmax-f32"], programs=off)
        self.assertEqual(rc, 0)
        for p in doc["points"]:
            bad = [e for e in p["errors"] if e.startswith("fusec run: output 0: relative error")]
            self.assertEqual(len(bad), p["family"] == "softmax", p["key"])
        self.assertIn("- Checks: a failed check or an error at 4 of 8 points", out)

    def test_only_a_shape_outside_the_plan(self):
        rc, doc, _ = self.fake_sweep(["--only", "softmax-f32-1000x33,rmsnorm-f32-1198373x7,nosuch-f32-1x2"])
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(p["key"] for p in doc["points"]), ["rmsnorm-f32-1198373x7", "softmax-f32-1000x33"])
        p = [p for p in doc["points"] if p["key"] == "softmax-f32-1000x33"][0]
        self.assertEqual((p["dims"], p["width"], p["rows"]), ({"B": 1000, "N": 33}, 33, 1000))
        self.assertEqual(p["errors"], [])

    def test_budget(self):
        rc, doc, out = self.fake_sweep(["--budget", "0", "--only", "adam"])
        self.assertEqual(rc, 0)
        self.assertEqual(doc["points"], [])
        self.assertEqual(doc["not_run"], ["adam-f32-1000", "adam-f32-4099", "lb-adam-f32-4096"])
        self.assertIn("3 not run (stopped by the time budget)", out)
        self.assertEqual(sweep.estimate([]), 0.0)
        self.assertAlmostEqual(sweep.estimate([1.0] * 20 + [3.0] * 10), 4.5)

    def test_gpu_sweep_sh(self):
        """The GPU machine's command, on a fake torch package and fake fusec."""
        import fake_gpu
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("import sys\nsys.path.insert(0, %r)\nimport fake_gpu\nfake_gpu.install()\n" % HERE)
            os.makedirs(os.path.join(d, "build"))
            fake = os.path.join(d, "build", "fusec")
            with open(fake, "w") as f:
                f.write(fake_gpu.FAKE_FUSEC)
            os.chmod(fake, 0o755)
            env = dict(os.environ, PYTHONPATH=d, PYTHON=sys.executable, FAKE_REAL_FUSEC=os.path.abspath(FUSEC_BIN))
            out = os.path.join(d, "OUT")
            p = subprocess.run(["sh", os.path.join(HERE, "gpu-sweep.sh"), os.path.join(d, "build"), out,
                                "--part", "1/2", "--only", "lb-", "--copy-mib", "1"],
                               capture_output=True, text=True, env=env)
            files = sorted(os.listdir(out))
            self.assertEqual(p.returncode, 0 if have_matplotlib() else 1, p.stdout + p.stderr)
            want = ["gpu-1of2.txt", "sweep-1of2.json", "sweep-1of2.log", "sweep-1of2.md"]
            self.assertEqual([f for f in files if f != "sweep-1of2.png"], want)
            self.assertEqual("sweep-1of2.png" in files, have_matplotlib())
            with open(os.path.join(out, "sweep-1of2.md")) as f:
                md = f.read()
            self.assertIn("- Points: 5 measured (0 large, 5 launch-bound).", md)
            self.assertIn("Command: `bench/gpu-sweep.sh %s %s --part 1/2 --only lb- --copy-mib 1`"
                          % (os.path.join(d, "build"), out), md)
            self.assertIn("### Summary", p.stdout)


if __name__ == "__main__":
    result = unittest.main(exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(0 if have_numpy() else 77)

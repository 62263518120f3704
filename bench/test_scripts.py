#!/usr/bin/env python3
"""bench/test_scripts.py: checks of the suite's scripts that need no GPU.

  python3 bench/test_scripts.py

The figures below are made up to exercise the code; they are no measurement.
run.py's dry run, report.py's table and (where matplotlib is installed)
plot.py's PNG are checked.
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import plot  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402


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
                    rc = run.main(["--fusec", fake, "--out", out])
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


if __name__ == "__main__":
    unittest.main()

"""The device path without a GPU: fake_driver_check.py on the stand-in
driver (tests/fakecuda.c), in a process of its own, since a process loads
its CUDA driver once."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_device_path_on_a_stand_in_driver(tmp_path):
    fake = os.environ.get("FUSEC_FAKE_CUDA")
    if not fake:
        lib = os.environ.get("FUSEC_LIBRARY", os.path.join(os.path.dirname(os.path.dirname(HERE)), "build",
                                                           "libfusec.so"))
        fake = os.path.join(os.path.dirname(os.path.abspath(lib)), "tests", "libfakecuda.so")
    if not os.path.exists(fake):
        pytest.fail(f"the stand-in driver {fake} was not built (tools/setup.sh builds it)")
    env = dict(os.environ, FUSEC_CUDA_LIBRARY=fake, FUSEC_FAKE_CUDA=fake, FUSEC_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, os.path.join(HERE, "fake_driver_check.py")], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["ok", "check_torch_path", "ok", "check_signatures", "ok", "check_kernel_counts", "ok",
                                "check_without_torch", "ok", "check_prepare"]

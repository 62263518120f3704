"""Shared by every test of the Python package (tests/python/test_*.py, the
torch backend's test_torch_*.py included).

The package is imported from this tree's python/ (with the library from
FUSEC_LIBRARY, else build/libfusec.so), unless FUSEC_TEST_INSTALLED=1 asks
for the installed one. NumPy and pytest are required: a missing one is an
error, never a silently skipped suite. GPU tests take the `cuda` fixture
(torch with a CUDA device; skipped without) or `gpu_context` (a CUDA device
through fusec alone, for the no-torch path).
"""

import os
import sys

import numpy  # noqa: F401  (required: the CPU tests need it)
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

if os.environ.get("FUSEC_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "python"))

import fusec  # noqa: E402


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if not torch.cuda.is_available():
        return None, "torch sees no CUDA device"
    return torch, None


@pytest.fixture(scope="session")
def torch_module():
    """torch, CPU or not (skips where it is not installed)."""
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def cuda():
    """torch with a CUDA device (skips without one)."""
    torch, why = _torch_cuda()
    if torch is None:
        pytest.skip(why)
    return torch


@pytest.fixture(scope="session")
def gpu_context():
    """Device 0 through fusec itself (skips without a driver or GPU)."""
    from fusec import _gpu
    try:
        return _gpu.context(0)
    except fusec.Error as e:
        pytest.skip(f"no GPU: {e}")


@pytest.fixture(scope="session")
def example_files():
    return sorted(os.path.join(EXAMPLES, f) for f in os.listdir(EXAMPLES) if f.endswith(".fz"))


def progen_tool():
    """The random program generator (tests/progen_dump.c) of this build, or None."""
    env = os.environ.get("FUSEC_PROGEN_DUMP")
    if env:
        return env
    lib = os.environ.get("FUSEC_LIBRARY", os.path.join(ROOT, "build", "libfusec.so"))
    path = os.path.join(os.path.dirname(os.path.abspath(lib)), "tests", "progen_dump")
    return path if os.access(path, os.X_OK) else None

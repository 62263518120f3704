#!/bin/sh
# Install what fusec needs to build and test (Debian packages), then configure
# and build it in ./build. Safe to run again: it installs only what is missing
# and rebuilds only what changed.
#
#   tools/setup.sh            build with -Werror (as CI does)
#   BUILD_DIR=dir tools/setup.sh
#   CMAKE_ARGS="-DFUSEC_SANITIZE=ON" BUILD_DIR=build-asan tools/setup.sh
#
# The CUDA toolkit (NVRTC and headers) is expected under /usr/local/cuda, or
# wherever FUSEC_CUDA_ROOT points; no GPU or driver is needed to build.
#
# The Python package's tests (tests/python) need a Python 3 with numpy and
# pytest: the first of $FUSEC_PYTHON, python3 and /usr/bin/python3 that has
# them, else Debian's python3-numpy and python3-pytest are installed for
# /usr/bin/python3. CMake is told which (FUSEC_PYTHON). python3-venv too, for
# the README's `python3 -m venv` and `pip install .`.
set -eu

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
CUDA_ROOT=${FUSEC_CUDA_ROOT:-/usr/local/cuda}

need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake re2c check libsubunit-dev libxxhash-dev pkg-config; do
	have_pkg "$p" || need="$need $p"
done

# a Python with numpy and pytest, as its real path (not a shim's)
find_python() {
	for p in ${FUSEC_PYTHON:-} python3 /usr/bin/python3; do
		command -v "$p" >/dev/null 2>&1 &&
			"$p" -c 'import sys, numpy, pytest; print(sys.executable)' 2>/dev/null && return 0
	done
	return 1
}
PYTHON=$(find_python) || {
	for p in python3 python3-numpy python3-pytest; do
		have_pkg "$p" || need="$need $p"
	done
	PYTHON=/usr/bin/python3
}
# `python3 -m venv` (the README's `pip install .`) needs ensurepip, which
# Debian ships apart
python3 -c 'import ensurepip' 2>/dev/null || have_pkg python3-venv || need="$need python3-venv"
if [ -n "$need" ]; then
	echo "setup: installing:$need"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need
fi

# The CTest test bench_scripts runs the benchmark scripts on NumPy stand-ins
# for PyTorch and the GPU (bench/test_scripts.py); it is skipped without NumPy.
if command -v python3 >/dev/null && ! python3 -c 'import numpy' 2>/dev/null; then
	echo "setup: installing NumPy for python3 (pip)"
	python3 -m pip install --quiet numpy || echo "setup: no NumPy: the test bench_scripts will be skipped" >&2
fi

if [ ! -f "$CUDA_ROOT/include/nvrtc.h" ]; then
	echo "setup: the CUDA toolkit was not found under $CUDA_ROOT (set FUSEC_CUDA_ROOT)" >&2
	exit 1
fi

# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -DFUSEC_WERROR=ON -DFUSEC_CUDA_ROOT="$CUDA_ROOT" -DFUSEC_PYTHON="$PYTHON" \
	${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"

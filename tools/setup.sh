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
set -eu

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
CUDA_ROOT=${FUSEC_CUDA_ROOT:-/usr/local/cuda}

need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake re2c check libsubunit-dev libxxhash-dev pkg-config; do
	have_pkg "$p" || need="$need $p"
done
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
cmake -S . -B "$BUILD_DIR" -DFUSEC_WERROR=ON -DFUSEC_CUDA_ROOT="$CUDA_ROOT" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"

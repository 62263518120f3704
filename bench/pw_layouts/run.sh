#!/bin/sh
# run.sh FUSEC OUT [FILTER]: the pointwise layout harness (harness.cu) on the GPU.
#
# Writes OUT/gen/kernels.h (one prelude, the op helpers and the pointwise entries
# of gelu_tanh, silu(a) * b and swiglu's silu in bf16, gelu (erf) in bf16 and
# adam, from `FUSEC --emit=cuda`), builds the harness twice with nvcc (with
# fusec's `-Ofc min`, and with the full optimizer) and runs both, writing
# OUT/ofc.txt and OUT/full.txt. FILTER: a program name (substring match).
# The run of docs/performance.md ("A chunk a thread") used main 963a6a0's
# fusec; nvcc 13.0 there, 2026-11-25.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 FUSEC OUT [FILTER]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fusec=$1 out=$2 filter=${3:-}
mkdir -p "$out/gen"
for p in "examples/gelu_tanh.fz --dim N=64" "bench/sweep/silu_mul_bf16.fz --dim N=64" "examples/adam.fz --dim N=64" \
	"bench/sweep/silu_bf16.fz --dim T=2 --dim H=64" "bench/sweep/gelu_bf16.fz --dim T=2 --dim H=64"; do
	# shellcheck disable=SC2086
	"$fusec" "$root"/$p --emit=cuda
	echo "// ==== end of module"
done | python3 -c '
import re, sys
mods = sys.stdin.read().split("// ==== end of module\n")[:-1]
head = mods[0][:mods[0].index("\n// ---- kernel")]
prelude = head.split("// The ops that need")[0]
helpers, seen, kernels = [], set(), []
for m in mods:
    h, k = m[:m.index("\n// ---- kernel")], m[m.index("\n// ---- kernel"):]
    for body in re.findall(r"(__device__ __forceinline__ \w+ fz_\w+\([^\n]*\)\n\{\n.*?\n\}\n)", h.split("// The ops that need")[-1] if "// The ops that need" in h else "", re.S):
        name = re.match(r"__device__ __forceinline__ \w+ (fz_\w+)", body).group(1)
        if name not in seen:
            seen.add(name)
            helpers.append(body)
    kernels.append(k)
sys.stdout.write(prelude + "".join(helpers) + "".join(kernels))
' >"$out/gen/kernels.h"
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nv" -std=c++17 -O3 -arch=sm_90 --fmad=false -Ofc min -I"$out" -o "$out/gen/harness_ofc" "$here/harness.cu"
"$nv" -std=c++17 -O3 -arch=sm_90 --fmad=false -I"$out" -o "$out/gen/harness_full" "$here/harness.cu"
"$out/gen/harness_ofc" $filter | tee "$out/ofc.txt"
"$out/gen/harness_full" $filter >"$out/full.txt"

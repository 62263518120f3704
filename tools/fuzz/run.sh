#!/bin/sh
# run.sh SECONDS [TARGET]: build the libFuzzer targets (if needed) and fuzz
# TARGET for SECONDS (every target, SECONDS each, when none is named).
#
#   tools/fuzz/run.sh 600 fuzz_compile     ten minutes of the compiler
#   tools/fuzz/run.sh 60 fuzz_npy          a minute of the .npy reader
#   tools/fuzz/run.sh 20                   fuzz_compile, fuzz_npy, fuzz_nvrtc, 20 s each
#
# Targets (tools/fuzz/*.c): fuzz_compile (lex, parse, IR, fusion, codegen,
# every printer, the interpreter), fuzz_nvrtc (the same plus NVRTC: slow),
# fuzz_npy (the .npy reader and writer).
#
# The build is BUILD_DIR (default build-fuzz), configured with clang and
# -DFUSEC_FUZZ=ON -DFUSEC_TESTS=OFF: the library is instrumented for libFuzzer
# with ASan and UBSan (tools/fuzz/CMakeLists.txt). The corpus grows in
# BUILD_DIR/corpus/TARGET across runs; the seeds (examples/*.fz and
# tests/golden/*.fz, or tools/fuzz/seeds/npy) are read from
# BUILD_DIR/seeds/TARGET; crashes, hangs and leaks are saved as
# BUILD_DIR/artifacts/TARGET-crash-*, -timeout-*, -leak-*, -oom-* (slow-unit-*
# files are only reported), and reproduce with
# `BUILD_DIR/tools/fuzz/TARGET FILE`.
#
# Environment: JOBS (parallel fuzzing processes, default 1: the CI machine
# has 2 cores), MAX_LEN (largest input, default 4096 bytes for programs,
# 1024 for .npy files), RSS_LIMIT_MB (default 2048). Each input has 2 seconds
# (-timeout=2; 30 for fuzz_nvrtc, NVRTC's own time): a hang is a bug. Exits
# non-zero if anything was found, after
# printing one line of figures per target (also in BUILD_DIR/fuzz-TARGET.stats).
set -eu

usage() {
	echo "usage: $0 SECONDS [fuzz_compile|fuzz_nvrtc|fuzz_npy]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
seconds=$1
case $seconds in '' | *[!0-9]*) usage ;; esac
targets=${2:-"fuzz_compile fuzz_npy fuzz_nvrtc"}
for t in $targets; do
	case $t in fuzz_compile | fuzz_nvrtc | fuzz_npy) ;; *) usage ;; esac
done

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${BUILD_DIR:-build-fuzz}
jobs=${JOBS:-1}

if [ ! -f "$build/CMakeCache.txt" ]; then
	command -v clang >/dev/null || {
		echo "run.sh: clang is needed (apt-get install clang libclang-rt-14-dev)" >&2
		exit 1
	}
	cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DFUSEC_FUZZ=ON -DFUSEC_TESTS=OFF \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# shellcheck disable=SC2086
cmake --build "$build" -j 2 --target $targets >/dev/null

# (NVRTC runs under ASan with the default options: no shadow-gap or leak
# exceptions are needed for it.)
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

status=0
for t in $targets; do
	seeds=$build/seeds/$t
	corpus=$build/corpus/$t
	rm -rf "$seeds"
	mkdir -p "$seeds" "$corpus" "$build/artifacts"
	timeout=2
	if [ "$t" = fuzz_npy ]; then
		cp tools/fuzz/seeds/npy/*.npy "$seeds/"
		maxlen=${MAX_LEN:-1024}
	else
		cp examples/*.fz tests/golden/*.fz "$seeds/"
		maxlen=${MAX_LEN:-4096}
		# NVRTC takes up to a few seconds a module on a loaded machine
		[ "$t" = fuzz_nvrtc ] && timeout=30
	fi
	log=$build/fuzz-$t.log
	par=""
	[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
	echo "run.sh: $t for ${seconds}s (corpus $corpus, log $log)"
	rc=0
	# shellcheck disable=SC2086
	"$build/tools/fuzz/$t" "$corpus" "$seeds" -dict=tools/fuzz/fz.dict -max_len="$maxlen" -timeout="$timeout" \
		-rss_limit_mb="${RSS_LIMIT_MB:-2048}" -max_total_time="$seconds" -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/$t-" $par >"$log" 2>&1 || rc=$?
	[ "$jobs" -gt 1 ] && cat fuzz-*.log >>"$log" 2>/dev/null && rm -f fuzz-*.log
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | awk '{s += $1} END {print s + 0}')
	size=$(find "$corpus" -type f | wc -l)
	found=$(find "$build/artifacts" -newer "$seeds" -type f \( -name "$t-crash-*" -o -name "$t-timeout-*" \
		-o -name "$t-leak-*" -o -name "$t-oom-*" \) | wc -l)
	line="$t: ${seconds}s, $runs runs, $eps exec/s, corpus $size files, $found new artifacts, exit $rc"
	echo "$line" | tee "$build/fuzz-$t.stats"
	if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
		tail -n 60 "$log" >&2
		status=1
	fi
done
exit $status

#!/usr/bin/env bash
# gpu-check.sh BUILD_DIR OUTDIR: every test of a build, on the GPU machine, in
# one go (the tree may have moved; re2c, Check and CMake need not be there).
#
#   - every unit test binary (BUILD_DIR/tests/test_*) and the golden and
#     `fusec run --cpu` scripts, on the CPU, several at a time;
#   - every GPU test binary (BUILD_DIR/tests/gpu_test_*), one after another,
#     test_random last with what is left of the time (FUSEC_RANDOM_SECONDS);
#   - compute-sanitizer over `fusec run --check` of every example at small
#     sizes: memcheck (fused and per-op), racecheck, synccheck and initcheck;
#     memcheck also at 2 rows of 4194309, where split rows go without a cache,
#     memcheck and racecheck at tens of thousands of short rows, which are
#     staged through shared memory (and of rows of 255 and 511, staged where
#     that saves a chunk), and memcheck of the GPU interpreter
#     (`--interpret`);
#   - gpu_test_examples and gpu_test_random again on the GPU interpreter
#     (FUSEC_TEST_INTERPRET=1).
#
# The binaries run directly (not through ctest, whose paths are this build's),
# with FUSEC_SOURCE_DIR pointing at this tree. Each step has a timeout; a
# failing step never stops the others; the whole run ends well before 8
# minutes (GPU_CHECK_SECONDS, default 420). Logs go to OUTDIR/logs, failing
# random programs and their inputs to OUTDIR/artifacts, the kernel cache to
# OUTDIR/cache. The last lines are a table of the steps and
# "N passed, N failed" over them; the exit status is 1 if any step failed or
# timed out.
#
# Environment: GPU_CHECK_SECONDS (total budget), GPU_CHECK_JOBS (CPU steps at
# once, default 8), FUSEC_RANDOM_COUNT / FUSEC_RANDOM_SEED0 (test_random),
# COMPUTE_SANITIZER (its path), GPU_CHECK_ONLY (an extended regex: only the
# steps whose names match, say 'san-.*-40000x' to run some again).
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR OUTDIR" >&2
	exit 2
fi
abspath() { (cd "$1" 2>/dev/null && pwd); }
BUILD=$(abspath "$1") || { echo "gpu-check: no build directory '$1'" >&2; exit 2; }
mkdir -p "$2" || exit 2
OUT=$(abspath "$2")
SRC=$(abspath "$(dirname "$0")/..")
LOG=$OUT/logs
ST=$OUT/status
rm -rf "$LOG" "$ST" "$OUT/artifacts" "$OUT/san"
mkdir -p "$LOG" "$ST" "$OUT/artifacts" "$OUT/san" "$OUT/cache"
: >"$OUT/steps"

BUDGET=${GPU_CHECK_SECONDS:-420}
JOBS=${GPU_CHECK_JOBS:-8}
T0=$(date +%s)
FUSEC=$BUILD/fusec
export FUSEC_SOURCE_DIR=$SRC FUSEC_BIN=$FUSEC FUSEC_CACHE_DIR=$OUT/cache FUSEC_TEST_OUT=$OUT/artifacts
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-180}

SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}
[ -z "$SAN" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && SAN=/usr/local/cuda/bin/compute-sanitizer

left() { echo $((BUDGET - ($(date +%s) - T0))); }

# step NAME LIMIT CMD...: record NAME, run CMD with a timeout (cut to the
# time left), output to logs/NAME.log, "RC SECONDS" to status/NAME.
step() {
	local name=$1 limit=$2 l s rc
	shift 2
	[ -n "${GPU_CHECK_ONLY:-}" ] && ! printf '%s\n' "$name" | grep -Eq -- "$GPU_CHECK_ONLY" && return
	echo "$name" >>"$OUT/steps"
	mkdir -p "$(dirname "$LOG/$name")" "$(dirname "$ST/$name")"
	l=$(left)
	[ "$l" -lt "$limit" ] && limit=$l
	if [ "$limit" -le 5 ]; then
		echo "not run: out of time" >"$LOG/$name.log"
		echo "NOTRUN 0" >"$ST/$name"
		return
	fi
	s=$(date +%s)
	timeout -k 10 "$limit" "$@" >"$LOG/$name.log" 2>&1 </dev/null
	rc=$?
	echo "$rc $(($(date +%s) - s))" >"$ST/$name"
}

# Like step, in the background, at most JOBS at once.
spawn() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n 2>/dev/null || sleep 0.2
	done
	step "$@" &
}

# Symbolic dims of an example, "NAME row" (last axis of some input) or "NAME lead".
dims_of() {
	awk '/^[ \t]*in[ \t]/ && match($0, /\[[^]]*\]/) {
		n = split(substr($0, RSTART + 1, RLENGTH - 2), a, ",")
		for (i = 1; i <= n; i++) {
			gsub(/[ \t]/, "", a[i])
			if (a[i] ~ /^[A-Za-z_]/) print a[i], (i == n ? "row" : "lead")
		}
	}' "$1" | sort -u | awk '{ if ($2 == "row" || !($1 in r)) r[$1] = $2 } END { for (d in r) print d, r[d] }'
}

dim_args() { # FILE LEAD ROW
	dims_of "$1" | while read -r d role; do
		[ "$role" = row ] && printf -- '--dim %s=%s ' "$d" "$3" || printf -- '--dim %s=%s ' "$d" "$2"
	done
}

# sanitize TOOL CONFIG LEAD ROW [--no-fuse]: one tool over every example.
sanitize() {
	local tool=$1 cfg=$2 lead=$3 row=$4 extra=${5:-} ex base args
	local opts=(--tool "$tool" --error-exitcode 99)
	[ "$tool" = memcheck ] && opts+=(--leak-check full)
	[ "$tool" = racecheck ] && opts+=(--racecheck-report analysis)
	for ex in "$SRC"/examples/*.fz; do
		base=$(basename "$ex" .fz)
		args=$(dim_args "$ex" "$lead" "$row")
		# eps as its users give it: a random one in [-1, 1) makes var + eps
		# nearly 0 in some of 40001 rows (2.7e-6 in layernorm's row 2169),
		# where the GPU and the CPU reference rightly differ past --check's
		# tolerance
		grep -q '^in eps:' "$ex" && args="$args --in eps=1e-5"
		# shellcheck disable=SC2086
		spawn "san-$tool-$cfg/$base" 150 "$SAN" "${opts[@]}" "$FUSEC" run "$ex" $args $extra --check \
			--out-dir "$OUT/san/$tool-$cfg-$base"
	done
}

gpu_tests() {
	local t name secs
	for t in "$BUILD"/tests/gpu_test_*; do
		name=$(basename "$t")
		[ -f "$t" ] && [ -x "$t" ] && [ "$name" != gpu_test_random ] && step "gpu/$name" 150 "$t"
	done
	# the GPU interpreter (fz_program_set_interpret) over the same programs: no compiles, quick
	[ -x "$BUILD/tests/gpu_test_examples" ] &&
		FUSEC_TEST_INTERPRET=1 step gpu/gpu_test_examples_interpret 120 "$BUILD/tests/gpu_test_examples"
	[ -x "$BUILD/tests/gpu_test_random" ] &&
		FUSEC_TEST_INTERPRET=1 FUSEC_RANDOM_SECONDS=60 step gpu/gpu_test_random_interpret 100 "$BUILD/tests/gpu_test_random"
	if [ -x "$BUILD/tests/gpu_test_random" ]; then
		secs=$(($(left) - 45))
		[ "$secs" -gt 240 ] && secs=240
		[ "$secs" -lt 10 ] && secs=10
		FUSEC_RANDOM_SECONDS=$secs step gpu/gpu_test_random $((secs + 40)) "$BUILD/tests/gpu_test_random"
	fi
}

echo "gpu-check: build $BUILD, tree $SRC, logs $LOG"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# The GPU tests, one at a time, alongside the CPU steps.
gpu_tests &

# Each up to the whole budget. test_codegen_emu and test_codegen a tcase at a
# time, as ctest runs them (their cases read from their source): whole, each
# ran past 300 s there (test_codegen's NVRTC compiles past 400 s beside the
# GPU pytest, on 2026-11-30).
for t in "$BUILD"/tests/test_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=$(basename "$t")
	if { [ "$name" = test_codegen_emu ] || [ "$name" = test_codegen ]; } && [ -f "$SRC/tests/unit/$name.c" ]; then
		for c in $(sed -n 's/.*tcase_create("\([a-z0-9_]*\)").*/\1/p' "$SRC/tests/unit/$name.c"); do
			CK_RUN_CASE=$c spawn "unit/$name.$c" "$BUDGET" "$t"
		done
	else
		spawn "unit/$name" "$BUDGET" "$t"
	fi
done
[ -x "$FUSEC" ] && spawn cpu/golden 120 sh "$SRC/tests/golden/run.sh" "$FUSEC" "$SRC/tests/golden"
[ -x "$FUSEC" ] && [ -f "$SRC/tests/cli_run.sh" ] && spawn cpu/cli_run 120 sh "$SRC/tests/cli_run.sh" "$FUSEC" "$SRC"

if [ -n "$SAN" ] && [ -x "$FUSEC" ]; then
	sanitize memcheck fused-3x67 3 67
	sanitize memcheck perop-3x67 3 67 --no-fuse
	sanitize memcheck fused-2x5000 2 5000
	sanitize memcheck fused-1x100003 1 100003
	sanitize memcheck fused-2x4194309 2 4194309 # split rows without a cache
	sanitize memcheck fused-40001x31 40001 31   # short rows staged (TILE), several threads a row
	sanitize memcheck fused-40003x13 40003 13   # ... a thread a row
	sanitize memcheck fused-40000x64 40000 64   # short aligned rows of halves: 2 chunks a thread (reg_k)
	sanitize memcheck fused-40000x16 40000 16   # ... of 2 chunks: 1 a thread
	sanitize racecheck fused-40000x64 40000 64
	sanitize racecheck fused-40001x31 40001 31
	sanitize memcheck fused-20001x511 20001 511 # rows of a few hundred, a warp a row (the lane class)
	sanitize memcheck fused-20001x1001 20001 1001 # ... its entries of 32 elements a lane
	sanitize memcheck fused-40001x93 40001 93   # ... of 3, f32 rows of kernels that write rows
	sanitize memcheck fused-300x32768 300 32768 # long rows of a multiple of V: the row cache's aligned class
	sanitize racecheck fused-20001x255 20001 255
	sanitize memcheck interpret-3x515 3 515 --interpret
	sanitize racecheck interpret-3x5000 3 5000 --interpret
	sanitize racecheck fused-3x67 3 67
	sanitize racecheck fused-2x5000 2 5000
	sanitize racecheck fused-1x100003 1 100003
	sanitize synccheck fused-2x5000 2 5000
	sanitize initcheck fused-3x67 3 67
else
	step sanitizer 10 sh -c 'echo "compute-sanitizer not found (set COMPUTE_SANITIZER)"; exit 77'
fi
wait

# ---- the summary ----------------------------------------------------------------------------------

verdict() { # NAME -> PASS|FAIL|SKIP|TIMEOUT|NOTRUN
	local rc
	read -r rc _ <"$ST/$1" 2>/dev/null || { echo NOTRUN; return; }
	case $rc in
	0) if grep -qE "ERROR SUMMARY: [1-9]" "$LOG/$1.log" 2>/dev/null; then echo FAIL; else echo PASS; fi ;;
	77) echo SKIP ;;
	124 | 137) echo TIMEOUT ;;
	NOTRUN) echo NOTRUN ;;
	*) echo FAIL ;;
	esac
}

detail() { # the log's closing line worth quoting
	grep -aE "[0-9]+ passed, [0-9]+ failed|Checks: [0-9]+|ERROR SUMMARY|RACECHECK SUMMARY|skipped|not run|not found" \
		"$LOG/$1.log" 2>/dev/null | tail -1 | cut -c1-70
}

# the first lines of what failed, before the table
while read -r name; do
	case $(verdict "$name") in
	TIMEOUT)
		echo "---- $name timed out (logs/$name.log ends:)"
		tail -2 "$LOG/$name.log" | cut -c1-300
		;;
	FAIL)
		echo "---- $name (logs/$name.log)"
		grep -aE "FAIL|:F:|:E:|ERROR SUMMARY: [1-9]|=+ (Invalid|Race|Error|Barrier|Uninitialized|Leaked)|[Hh]azard|rror:" \
			"$LOG/$name.log" 2>/dev/null | head -4 | cut -c1-300
		;;
	esac
done <"$OUT/steps"

pass=0
fail=0
printf '\n%-44s %-8s %5s  %s\n' STEP RESULT SECS DETAIL
# plain steps
while read -r name; do
	case $name in san-*) continue ;; esac
	v=$(verdict "$name")
	read -r _ secs <"$ST/$name" 2>/dev/null || secs=0
	printf '%-44s %-8s %5s  %s\n' "$name" "$v" "$secs" "$(detail "$name")"
	case $v in PASS | SKIP) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
done <"$OUT/steps"
# sanitizer runs, one line per tool and size set
for group in $(sed -n 's|^\(san-[^/]*\)/.*|\1|p' "$OUT/steps" | sort -u); do
	total=0 bad=0 names=""
	for name in $(grep "^$group/" "$OUT/steps"); do
		total=$((total + 1))
		v=$(verdict "$name")
		if [ "$v" != PASS ]; then
			bad=$((bad + 1))
			names="$names ${name#*/}($v)"
		fi
	done
	v=PASS
	[ "$bad" -gt 0 ] && v=FAIL
	printf '%-44s %-8s %5s  %s\n' "$group" "$v" "-" "$((total - bad))/$total examples clean$names" | cut -c1-160
	[ "$bad" -eq 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))
done
echo
echo "gpu-check: $(($(date +%s) - T0)) s; logs in $LOG"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

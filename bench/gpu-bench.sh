#!/bin/sh
# bench/gpu-bench.sh BUILD_DIR OUTDIR [RUN.PY OPTIONS]: the benchmark suite on the GPU machine,
# the one command to run there (from any copy of the tree; the binaries of
# BUILD_DIR are run directly). Writes under OUTDIR, in at most six files:
#
#   bench.json      every measurement (bench/run.py)
#   benchmarks.md   the table for docs/benchmarks.md (bench/report.py)
#   pct_floor.png   % of the bandwidth floor per workload (bench/plot.py)
#   run.log         the suite's log, fusec bench's stderr included
#   gpu.txt         nvidia-smi before the run
#
# Options after OUTDIR go to bench/run.py (e.g. --only softmax,layernorm).
# The suite should take about 3 to 5 minutes on an H100; it is stopped at 7.
set -u
if [ $# -lt 2 ]; then
	echo "usage: bench/gpu-bench.sh BUILD_DIR OUTDIR [RUN.PY OPTIONS]" >&2
	exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$1" && pwd) || exit 2
OUTDIR=$2
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
FUSEC=$BUILD/fusec
if [ ! -x "$FUSEC" ]; then
	echo "gpu-bench: $FUSEC is not an executable" >&2
	exit 1
fi

export PYTHONUNBUFFERED=1
nvidia-smi >"$OUTDIR/gpu.txt" 2>&1

CMD="bench/gpu-bench.sh $*"
shift 2
rc=0
# The Python column: this tree's package over this build's library.
PYTHONPATH="$HERE/../python${PYTHONPATH:+:$PYTHONPATH}" FUSEC_LIBRARY=${FUSEC_LIBRARY:-$BUILD/libfusec.so} \
	timeout 420 python3 "$HERE/run.py" --fusec "$FUSEC" --examples "$HERE/../examples" \
	--out "$OUTDIR/bench.json" "$@" >"$OUTDIR/run.log" 2>&1 || rc=$?
if [ ! -f "$OUTDIR/bench.json" ]; then
	tail -n 30 "$OUTDIR/run.log"
	echo "gpu-bench: run.py wrote no results (exit $rc); see run.log" >&2
	exit 1
fi
[ $rc -eq 124 ] && echo "gpu-bench: run.py was stopped at 420 s; the results are partial"
grep -E "ERROR|Traceback" "$OUTDIR/run.log" | head -n 30
python3 "$HERE/report.py" --command "$CMD" "$OUTDIR/bench.json" >"$OUTDIR/benchmarks.md" || rc=1
python3 "$HERE/plot.py" "$OUTDIR/bench.json" "$OUTDIR/pct_floor.png" || rc=1
cat "$OUTDIR/benchmarks.md"
echo "gpu-bench: results in $OUTDIR (exit $rc)"
exit $rc

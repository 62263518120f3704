#!/bin/sh
# bench/gpu-sweep.sh BUILD_DIR OUTDIR [SWEEP.PY OPTIONS]: the shape sweep on the
# GPU machine (bench/sweep.py), the one command to run there, from any copy of
# the tree; the fusec of BUILD_DIR is run directly. Writes under OUTDIR five
# files, named after the part (sweep-1of2.json with --part 1/2, sweep.json
# without):
#
#   sweep*.json   every measurement (bench/sweep.py)
#   sweep*.md     the tables and the summary (bench/sweep_report.py)
#   sweep*.png    % of the floor against the row width, a panel a family
#   sweep*.log    the sweep's log, fusec's stderr included
#   gpu*.txt      nvidia-smi before the run
#
# Options after OUTDIR go to bench/sweep.py: --part 1/2 (then 2/2, in a
# second call), --quick, --only softmax,rmsnorm, --budget SECONDS. Its budget
# (480 s by default) stops it cleanly before a point that would not fit; it
# is killed at 560 s in any case, so that the report and the plot are
# written within a 10-minute call. PYTHON names the interpreter (default
# python3). Merge the parts where you read them:
#   python3 bench/sweep_report.py sweep-1of2.json sweep-2of2.json --md sweep.md --png sweep.png
set -u
if [ $# -lt 2 ]; then
	echo "usage: bench/gpu-sweep.sh BUILD_DIR OUTDIR [SWEEP.PY OPTIONS]" >&2
	exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$1" && pwd) || exit 2
OUTDIR=$2
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
FUSEC=$BUILD/fusec
if [ ! -x "$FUSEC" ]; then
	echo "gpu-sweep: $FUSEC is not an executable" >&2
	exit 1
fi
CMD="bench/gpu-sweep.sh $*"
shift 2
# The files' suffix: -NofM for --part N/M.
TAG=""
prev=""
for a in "$@"; do
	case "$prev" in --part) TAG="-$(echo "$a" | sed 's|/|of|')" ;; esac
	case "$a" in --part=*) TAG="-$(echo "${a#--part=}" | sed 's|/|of|')" ;; esac
	prev=$a
done

PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
nvidia-smi >"$OUTDIR/gpu$TAG.txt" 2>&1

rc=0
# fusec from Python, the figure compared with torch.compile: this tree's
# package over this build's library.
PYTHONPATH="$HERE/../python${PYTHONPATH:+:$PYTHONPATH}" FUSEC_LIBRARY=${FUSEC_LIBRARY:-$BUILD/libfusec.so} \
	timeout 560 "$PY" "$HERE/sweep.py" --fusec "$FUSEC" --out "$OUTDIR/sweep$TAG.json" "$@" \
	>"$OUTDIR/sweep$TAG.log" 2>&1 || rc=$?
if [ ! -f "$OUTDIR/sweep$TAG.json" ]; then
	tail -n 30 "$OUTDIR/sweep$TAG.log"
	echo "gpu-sweep: sweep.py wrote no results (exit $rc); see sweep$TAG.log" >&2
	exit 1
fi
[ $rc -eq 124 ] && echo "gpu-sweep: sweep.py was killed at 560 s; the results are partial"
grep -E "ERROR|Traceback|budget:" "$OUTDIR/sweep$TAG.log" | head -n 40
"$PY" "$HERE/sweep_report.py" --command "$CMD" --md "$OUTDIR/sweep$TAG.md" "$OUTDIR/sweep$TAG.json" || rc=1
"$PY" "$HERE/sweep_report.py" --png "$OUTDIR/sweep$TAG.png" "$OUTDIR/sweep$TAG.json" >/dev/null || rc=1
sed -n '/^### Summary/,/^### Large/p' "$OUTDIR/sweep$TAG.md"
echo "gpu-sweep: results in $OUTDIR (exit $rc)"
exit $rc

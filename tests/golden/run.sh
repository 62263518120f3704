#!/bin/sh
# run.sh FUSEC GOLDENDIR [--update]: the golden tests.
#
# For every NAME.fz in GOLDENDIR, fusec runs on the relative name NAME.fz from
# inside GOLDENDIR (so that file names in messages are stable), and its output
# is compared exactly (diff -u) with each expected file present:
#
#   NAME.err     stderr of `fusec --emit=ir NAME.fz`, which must exit 1
#   NAME.tokens  stdout of `fusec --emit=tokens NAME.fz`, which must exit 0
#   NAME.ast     stdout of `fusec --emit=ast NAME.fz`, exit 0
#   NAME.ir      stdout of `fusec --emit=ir NAME.fz`, exit 0
#   NAME.fused   stdout of `fusec --emit=fused NAME.fz`, exit 0
#   NAME.cu      stdout of `fusec NAME.fz`, exit 0
#   NAME.launch  stdout of `fusec --emit=launch ARGS NAME.fz` for each line
#                `# launch: ARGS` of NAME.fz (the sizes), each after a line
#                `>>> ARGS`; exit 0
#
# A .fz with no expected file fails (a forgotten golden). With --update the
# expected files that exist are rewritten from the actual output (when the
# exit status is the expected one). Ends with "N passed, N failed" and exits
# non-zero if anything failed.
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ] || { [ $# -eq 3 ] && [ "$3" != --update ]; }; then
	echo "usage: $0 FUSEC GOLDENDIR [--update]" >&2
	exit 2
fi
fusec=$1
update=0
[ $# -eq 3 ] && update=1
case $fusec in
/*) ;;
*) fusec=$(pwd)/$fusec ;;
esac
if [ ! -x "$fusec" ]; then
	echo "run.sh: $fusec is not an executable" >&2
	exit 2
fi
cd "$2" || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fusec-golden.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

passed=0
failed=0

# check NAME.fz EXPECTED_FILE: runs fusec for the kind of EXPECTED_FILE.
check() {
	fz=$1
	expected=$2
	case $expected in
	*.err)
		"$fusec" --emit=ir "$fz" >"$tmp/stdout" 2>"$tmp/actual"
		rc=$? want=1 ;;
	*.cu)
		"$fusec" "$fz" >"$tmp/actual" 2>"$tmp/stderr"
		rc=$? want=0 ;;
	*.launch)
		: >"$tmp/actual"
		rc=0 want=0
		sed -n 's/^# launch: //p' "$fz" >"$tmp/sizes"
		while read -r args; do
			echo ">>> $args" >>"$tmp/actual"
			# shellcheck disable=SC2086
			"$fusec" --emit=launch $args "$fz" >>"$tmp/actual" 2>"$tmp/stderr" || rc=$?
		done <"$tmp/sizes" ;;
	*)
		"$fusec" --emit="${expected##*.}" "$fz" >"$tmp/actual" 2>"$tmp/stderr"
		rc=$? want=0 ;;
	esac
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $expected: fusec exited with $rc, expected $want"
		[ "$want" -eq 0 ] && sed 's/^/  | /' "$tmp/stderr"
		failed=$((failed + 1))
		return
	fi
	if [ "$update" -eq 1 ]; then
		if ! cmp -s "$tmp/actual" "$expected"; then
			cp "$tmp/actual" "$expected"
			echo "updated $expected"
		fi
		passed=$((passed + 1))
	elif diff -u "$expected" "$tmp/actual"; then
		passed=$((passed + 1))
	else
		echo "FAIL $expected: output differs (above)"
		failed=$((failed + 1))
	fi
}

for fz in *.fz; do
	[ -f "$fz" ] || continue
	name=${fz%.fz}
	found=0
	for ext in err tokens ast ir fused cu launch; do
		if [ -f "$name.$ext" ]; then
			found=1
			check "$fz" "$name.$ext"
		fi
	done
	if [ "$found" -eq 0 ]; then
		echo "FAIL $fz: no expected file ($name.err, .tokens, .ast, .ir, .fused, .cu or .launch)"
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

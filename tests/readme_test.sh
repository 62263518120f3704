#!/bin/sh
# readme_test.sh BUILD_DIR SOURCE_DIR: the README's "Using it" commands, run as
# written, one line at a time, in a scratch directory that holds `build` (this
# build) and `examples` as the repository's root does. A line must exit 0;
# a line that needs a GPU (fusec run without --cpu, fusec bench without
# --dry-run) may instead exit 77, the status of "no usable GPU". The kernel
# cache goes to the scratch directory. Prints one line per command.
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fusec-readme.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
ln -s "$build" "$tmp/build"
ln -s "$src/examples" "$tmp/examples"
export FUSEC_CACHE_DIR="$tmp/cache"

# the first sh block after "## Using it"
sed -n '/^## Using it/,/^## /p' "$src/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >"$tmp/block"
[ -s "$tmp/block" ] || { echo "readme_test: no sh block under '## Using it'" >&2; exit 1; }
grep -q '^fusec ' "$tmp/block" || { echo "readme_test: the block runs no fusec command" >&2; exit 1; }

mkdir "$tmp/.log"
cd "$tmp" || exit 2
fail=0
while IFS= read -r line; do
	eval "$line" >"$tmp/.log/out" 2>"$tmp/.log/err" </dev/null
	rc=$?
	case $line in
	*"fusec run "*--cpu* | *--dry-run*) gpu=no ;;
	*"fusec run "* | *"fusec bench "*) gpu=yes ;;
	*) gpu=no ;;
	esac
	if [ "$rc" -eq 0 ] || { [ "$gpu" = yes ] && [ "$rc" -eq 77 ]; }; then
		echo "ok ($rc): $line"
	else
		echo "FAIL ($rc): $line"
		sed 's/^/  /' "$tmp/.log/err"
		fail=1
	fi
done <"$tmp/block"
exit $fail

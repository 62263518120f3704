#!/bin/sh
# Install fusec into a temporary prefix and build examples/embed.c against
# the installed tree, as a user would: with pkg-config (shared and static
# library) and with CMake's find_package(fusec) (fusec::fusec and
# fusec::fusec_static). Each build is run: 0 (checked on the GPU) or 77 (no
# GPU here) both pass. Also checks that the shared library exports only the
# public API and that the header compiles as C++.
#
#   tests/install_test.sh BUILD_DIR SOURCE_DIR
set -eu

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d /tmp/fusec-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cc=${CC:-cc}

fail() {
	echo "install_test: $*" >&2
	exit 1
}

# A sanitizer build's library needs the sanitizer runtime in its users too.
san=""
if grep -q '^FUSEC_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
	san="-fsanitize=address,undefined"
fi

cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install failed"
pc=$(find "$prefix" -name fusec.pc | head -n 1)
[ -n "$pc" ] || fail "no fusec.pc was installed"
libdir=$(dirname "$(dirname "$pc")")
for f in "$prefix/include/fusec.h" "$libdir/libfusec.a" "$libdir/libfusec.so" "$prefix/bin/fusec" \
	"$libdir/cmake/fusec/fusecConfig.cmake"; do
	[ -e "$f" ] || fail "$f was not installed"
done

# The shared library exports the fz_ API and nothing else.
others=$(nm -D --defined-only "$libdir/libfusec.so" | awk '{print $3}' | grep -v '^fz_' || true)
[ -z "$others" ] || fail "libfusec.so exports more than the API: $(echo "$others" | head -n 5 | tr '\n' ' ')"

"$prefix/bin/fusec" --version >/dev/null || fail "the installed fusec does not run"

if command -v c++ >/dev/null 2>&1; then
	echo '#include <fusec.h>
int main() { fz_compile_options o = fz_compile_options_default(); return o.fuse - 1; }' >"$tmp/hdr.cc"
	c++ -Wall -Wextra -Werror -I"$prefix/include" -c "$tmp/hdr.cc" -o "$tmp/hdr.o" || fail "fusec.h does not compile as C++"
fi

run() { # NAME BINARY: 0 or 77 pass
	set +e
	"$2" >"$tmp/$1.out" 2>&1
	rc=$?
	set -e
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		cat "$tmp/$1.out" >&2
		fail "$1 exited with $rc"
	fi
	echo "install_test: $1: $(head -n 1 "$tmp/$1.out")"
}

flags="-std=c11 -Wall -Wextra -Wpedantic -Werror $san"
export PKG_CONFIG_PATH="$libdir/pkgconfig"

# The build command embed.c's comment documents, run as written (plus the
# sanitizer runtime of a sanitizer build): the program must start, which
# means it finds libfusec.so.0 in the prefix.
doc=$(sed -n 's/^ \*     \(cc embed\.c .*\)$/\1/p' "$src/examples/embed.c")
[ -n "$doc" ] || fail "examples/embed.c documents no 'cc embed.c ...' command"
mkdir "$tmp/doc"
cp "$src/examples/embed.c" "$tmp/doc/"
(cd "$tmp/doc" && eval "$doc $san") || fail "embed.c's documented command failed: $doc"
run "documented: $doc" "$tmp/doc/embed"
# shellcheck disable=SC2046
$cc $flags "$src/examples/embed.c" -o "$tmp/embed_pc" $(pkg-config --cflags --libs fusec) -lm \
	-Wl,-rpath,"$libdir" $san || fail "embed.c does not build with pkg-config"
run "pkg-config (shared)" "$tmp/embed_pc"
# shellcheck disable=SC2046
$cc $flags "$src/examples/embed.c" -o "$tmp/embed_pc_static" \
	$(pkg-config --static --cflags --libs fusec | sed 's/-lfusec\b/-l:libfusec.a/') $san \
	|| fail "embed.c does not build with pkg-config --static"
run "pkg-config (static)" "$tmp/embed_pc_static"

mkdir "$tmp/cmake"
cat >"$tmp/cmake/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(embed_consumer C)
find_package(fusec 0.1 REQUIRED)
add_executable(embed $src/examples/embed.c)
target_link_libraries(embed PRIVATE fusec::fusec m)
add_executable(embed_static $src/examples/embed.c)
target_link_libraries(embed_static PRIVATE fusec::fusec_static m)
EOF
cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$san" \
	-DCMAKE_EXE_LINKER_FLAGS="$san" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "find_package(fusec) failed"; }
cmake --build "$tmp/cmake/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; fail "embed.c does not build with CMake"; }
run "cmake fusec::fusec" "$tmp/cmake/build/embed"
run "cmake fusec::fusec_static" "$tmp/cmake/build/embed_static"
echo "install_test: ok"

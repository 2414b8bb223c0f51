#!/bin/sh
# Installs the build into a temporary prefix (meson install --destdir), then
# builds README.md's library example against the *installed* library with
# `pkg-config --cflags --libs libnbg` and runs it on the bundled sample,
# expecting the input size the sample declares.  Also checks that the
# installed tree has the shared library with its soname, the static library
# and every public header.
# Usage: check_install.sh BUILD_DIR SOURCE_ROOT
# Environment: CC, NBG_LDFLAGS (extra link arguments) and NM for the machine
# the build is for; MESON_EXE_WRAPPER (shell words) runs the example in a
# cross build (qemu-user).  Unset: cc, nm, run directly.
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "meson install failed"; exit 1; }
pc=$(find "$tmp/root" -name libnbg.pc | head -n 1)
[ -n "$pc" ] || { echo "no libnbg.pc installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
for f in libnbg.so libnbg.so.0 libnbg.a; do
	[ -e "$libdir/$f" ] || { echo "missing $libdir/$f"; exit 1; }
done
incdir=$(find "$tmp/root" -type d -path '*/include/nbg' | head -n 1)
for h in "$src"/include/nbg/*.h; do
	[ -f "$incdir/$(basename "$h")" ] || { echo "header $(basename "$h") not installed"; exit 1; }
done
[ -f "$incdir/version.h" ] || { echo "generated version.h not installed"; exit 1; }
soname=$(objdump -p "$libdir/libnbg.so.0" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libnbg.so.0 ] || { echo "soname is '$soname', not libnbg.so.0"; exit 1; }

# The example, exactly as README.md shows it.
awk '/^## Library/ { f = 1 } f && /^```c/ { g = 1; next } g && /^```/ { exit } g { print }' \
	"$src/README.md" >"$tmp/example.c"
[ -s "$tmp/example.c" ] || { echo "no C example under '## Library' in README.md"; exit 1; }
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$tmp/root" \
	pkg-config --cflags --libs libnbg)
echo "pkg-config --cflags --libs libnbg: $flags"
# A sanitizer build of the library needs its runtime in the program too.
san=""
if "${NM:-nm}" -D "$libdir/libnbg.so.0" 2>/dev/null | grep -q ' U __asan_init'; then
	san="-fsanitize=address,undefined"
fi
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/example" "$tmp/example.c" $flags \
	${NBG_LDFLAGS:-}
# shellcheck disable=SC2086 # the wrapper is words
out=$(LD_LIBRARY_PATH="$libdir" ${MESON_EXE_WRAPPER:-} "$tmp/example" "$src/samples/sample.nb")
echo "example: $out"
# The sample's one input is UINT8 [1,28,28,1]: 784 bytes (its report in doc/cli.md).
[ "$out" = "input 0: 784 bytes" ] || { echo "unexpected example output"; exit 1; }
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$libdir" ${MESON_EXE_WRAPPER:-} "$tmp/example" /nonexistent.nb &&
	{ echo "example accepted a missing file"; exit 1; }
echo "installed library, headers and pkg-config file work"

# Each installed header compiles on its own without NBG_STATIC_LINKING_ONLY
# (the stable interface needs nothing from the experimental blocks), and
# with it defined only after a first include (each header's block is then
# still declared, as nbg.h's is).  A static-linking-only function is
# undeclared without it.
cflags=$(PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$tmp/root" \
	pkg-config --cflags libnbg)
for h in "$incdir"/*.h; do
	b=$(basename "$h")
	printf '#include <nbg/%s>\n#define NBG_STATIC_LINKING_ONLY\n#include <nbg/%s>\n' \
		"$b" "$b" > "$tmp/header.c"
	# shellcheck disable=SC2086
	${CC:-cc} -std=c11 -Wall -Wextra -Werror -fsyntax-only $cflags "$tmp/header.c" ||
		{ echo "nbg/$b does not compile on its own"; exit 1; }
done
printf '#include <nbg/graph.h>\nvoid *f(void);\nvoid *f(void) { return (void *)nbg_graph_free; }\n' \
	> "$tmp/slo.c"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Werror -fsyntax-only $cflags "$tmp/slo.c" 2>/dev/null &&
	{ echo "nbg_graph_free is declared without NBG_STATIC_LINKING_ONLY"; exit 1; }
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Werror -fsyntax-only -DNBG_STATIC_LINKING_ONLY $cflags "$tmp/slo.c" ||
	{ echo "nbg_graph_free is not declared with NBG_STATIC_LINKING_ONLY"; exit 1; }
echo "every header compiles alone; the static-linking-only ones hide behind the switch"

# The Python package, when the build has it (NBG_PYTHON: its interpreter):
# imported from the staged site directory with the staged libnbg (no build
# tree on any path), and used on the sample.
if [ -n "${NBG_PYTHON:-}" ]; then
	site=$(find "$tmp/root" -type d -name nbgkit -path '*-packages/nbgkit' | head -n 1)
	[ -n "$site" ] || { echo "the Python package nbgkit was not installed"; exit 1; }
	# a sanitizer build: the interpreter is not instrumented, so its
	# runtimes are preloaded (LeakSanitizer off: the interpreter keeps
	# memory at exit by design)
	preload=""
	if [ -n "$san" ]; then
		for rt in libasan.so libubsan.so; do
			preload="$preload $(${CC:-cc} -print-file-name=$rt)"
		done
	fi
	out=$(cd "$tmp" && PYTHONPATH="$(dirname "$site")" LD_LIBRARY_PATH="$libdir" \
		LD_PRELOAD="${preload# }" ASAN_OPTIONS=detect_leaks=0 "$NBG_PYTHON" -c 'import sys, nbgkit
m = nbgkit.open(sys.argv[1])
print(nbgkit.__file__, m.inputs[0].byte_size)' "$src/samples/sample.nb")
	echo "python: $out"
	[ "$out" = "$site/__init__.py 784" ] || { echo "unexpected Python output"; exit 1; }
	echo "installed Python package works"
fi

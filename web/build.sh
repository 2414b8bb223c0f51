#!/bin/sh
# sh web/build.sh [OUT]: the page (web/README in doc/web.md) in OUT, default
# build-web/site: libnbg and web/nbg_web.c compiled to WebAssembly with
# Debian's emscripten, jansson compiled the same way from Debian's source
# package, and Graphviz for the browser (@viz-js/viz, from node_modules in web/).
# Everything is in OUT, nothing is fetched when the page runs: it works from
# file:// and from any static host.
#
# Needs what `sh scripts/setup.sh --web` installs (emscripten, dpkg-dev, the npm
# packages of web/package-lock.json).  Objects are kept in build-web/obj and
# rebuilt when a source or header changes (make, -j2).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-web/site}
work=$root/build-web
mkdir -p "$work" "$out"
out=$(cd "$out" && pwd)

for t in emcc emar make dpkg-source; do
	command -v $t >/dev/null 2>&1 || {
		echo "web/build.sh: $t is missing: run sh scripts/setup.sh --web" >&2
		exit 3
	}
done
viz=$root/web/node_modules/@viz-js/viz/dist/viz-global.js
[ -f "$viz" ] || {
	echo "web/build.sh: $viz is missing: run sh scripts/setup.sh --web (npm ci in web/)" >&2
	exit 3
}

# jansson: Debian's source package (the version libjansson-dev has), its
# patches applied by dpkg-source, fetched once into build-web/.
jansson=$(ls -d "$work"/jansson-*/ 2>/dev/null | head -n 1 || true)
if [ -z "$jansson" ]; then
	sh "$root/web/fetch-source.sh" jansson "$work"
	jansson=$(ls -d "$work"/jansson-*/ | head -n 1)
fi
jansson=${jansson%/}

# The headers meson generates, written the same way: the version from
# meson.build, the portable SHA-256 and CRC-32 (no CPU instructions, no
# libdeflate in the browser).
gen=$work/gen
mkdir -p "$gen/nbg"
version=$(sed -n "s/^ *version : '\([0-9.]*\)'.*/\1/p" "$root/meson.build" | head -n 1)
major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}; patch=${rest#*.}
sed -e "s/@NBG_VERSION_MAJOR@/$major/" -e "s/@NBG_VERSION_MINOR@/$minor/" \
    -e "s/@NBG_VERSION_PATCH@/$patch/" -e "s/@NBG_VERSION_STRING@/\"$version\"/" \
    "$root/include/nbg/version.h.in" > "$gen/nbg/version.h.new"
printf '#pragma once\n#define NBG_CRC32_LIBDEFLATE 0\n#define NBG_SHA256_ARM 0\n#define NBG_SHA256_X86 0\n' \
	> "$gen/nbg_hash_config.h.new"
sed 's/@json_inline@/inline/; s/@json_have_long_long@/1/; s/@json_have_localeconv@/1/;
     s/@json_have_atomic_builtins@/1/; s/@json_have_sync_builtins@/1/' \
	"$jansson/src/jansson_config.h.in" > "$gen/jansson_config.h.new"
# what jansson's configure finds on a Linux libc (emscripten's is musl)
printf '%s\n' '#define HAVE_STDINT_H 1' '#define HAVE_UNISTD_H 1' '#define HAVE_SYS_TYPES_H 1' \
	'#define HAVE_SYS_STAT_H 1' '#define HAVE_SYS_TIME_H 1' '#define HAVE_FCNTL_H 1' \
	'#define HAVE_SCHED_H 1' '#define HAVE_GETTIMEOFDAY 1' '#define HAVE_SCHED_YIELD 1' \
	'#define HAVE_ATOMIC_BUILTINS 1' '#define HAVE_SYNC_BUILTINS 1' '#define HAVE_LOCALE_H 1' \
	'#define HAVE_SETLOCALE 1' '#define INITIAL_HASHTABLE_ORDER 3' \
	> "$gen/jansson_private_config.h.new"
for f in nbg/version.h nbg_hash_config.h jansson_config.h jansson_private_config.h; do
	cmp -s "$gen/$f.new" "$gen/$f" 2>/dev/null && rm "$gen/$f.new" || mv "$gen/$f.new" "$gen/$f"
done

# The library's sources, as lib/meson.build lists them, less the vendor NPU
# runtime (dlopen, processes and devices: nothing a browser has); the CPU
# backend (lib/cpu/) and the runtime's error helpers it uses stay.
lib_srcs=$(sed -n "s/^ *'\([a-z0-9_/]*\.c\)',*$/lib\/\1/p" "$root/lib/meson.build" |
	grep -v '^lib/runtime/' ; sed -n "s/^ *'\(runtime\/cpu\/[a-z0-9_]*\.c\|runtime\/errors\.c\)',*$/lib\/\1/p" "$root/lib/meson.build")
# Debian's emscripten runs node with Debian's node-acorn, which a node from
# elsewhere on PATH finds only through NODE_PATH.
NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH} \
make -s -C "$root" -f web/web.mk -j2 WORK="$work" JANSSON="$jansson" LIB_SRCS="$lib_srcs" \
	"$work/nbg.js" "$work/nbg-simd.js"

# The page: the static files, then the worker sources as script files that
# hand their text to the page (a file:// page may not fetch, and may start
# a worker only from a blob: URL).
cp "$root"/web/src/index.html "$root"/web/src/style.css "$root"/web/src/app.js \
   "$root"/web/src/render.js "$root"/web/src/panel.js "$out/"
node "$root/web/embed.js" NBG_WORKER_SOURCE "$out/nbg-worker.js" \
	"$work/nbg.js" "$root/web/src/worker.js"
node "$root/web/embed.js" NBG_WORKER_SIMD_SOURCE "$out/nbg-worker-simd.js" \
	"$work/nbg-simd.js" "$root/web/src/worker.js"
node "$root/web/embed.js" VIZ_WORKER_SOURCE "$out/viz-worker.js" \
	"$viz" "$root/web/src/viz-worker.js"
cp "$root/web/THIRD-PARTY.txt" "$out/"
cp "$jansson/LICENSE" "$out/jansson-LICENSE.txt"
echo "web/build.sh: the page is $out/index.html"

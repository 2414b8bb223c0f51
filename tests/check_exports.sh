#!/bin/sh
# The exported interface of libnbg (doc/api.md, "How the API grows"):
#  - every symbol it exports carries the nbg_ prefix (the library is built
#    with -fvisibility=hidden and NBG_API on the public functions);
#  - every exported function is declared by a public header, and every
#    function a header declares is exported;
#  - the stable set (declared outside the NBG_STATIC_LINKING_ONLY blocks) is
#    exactly tests/abi-stable.txt, so a change of the stable interface is an
#    edit of that list, never a side effect.  The same declarations,
#    counted per header, are doc/api.md's table (the test api-doc).
# usage: check_exports.sh LIBNBG.so SOURCE_ROOT
set -eu
lib=$1
src=$2
nm=${NM:-nm} # the cross build's nm, from tests/meson.build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort > "$tmp/exported"
bad=$(grep -v '^nbg_' "$tmp/exported" || true)
if [ -n "$bad" ]; then
	echo "exported without the nbg_ prefix:"; echo "$bad"
	echo "0 passed, 1 failed"
	exit 1
fi

# Declarations: "stable NAME" or "static NAME", one per NBG_API line
# (scripts/api-counts.py, which also counts them for doc/api.md).
${PYTHON:-python3} "$src/scripts/api-counts.py" "$src" --declared > "$tmp/declared"
awk '{print $2}' "$tmp/declared" | sort -u > "$tmp/declared_names"
awk '$1 == "stable" {print $2}' "$tmp/declared" | sort > "$tmp/stable"
awk '$1 == "static" {print $2}' "$tmp/declared" | sort > "$tmp/static"
grep -v '^#' "$src/tests/abi-stable.txt" | sed '/^$/d' | sort > "$tmp/listed"

fail=0
missing=$(comm -23 "$tmp/exported" "$tmp/declared_names")
if [ -n "$missing" ]; then
	echo "exported but declared by no public header:"; echo "$missing"; fail=1
fi
unexported=$(comm -13 "$tmp/exported" "$tmp/declared_names")
if [ -n "$unexported" ]; then
	echo "declared NBG_API but not exported:"; echo "$unexported"; fail=1
fi
if ! cmp -s "$tmp/stable" "$tmp/listed"; then
	echo "the stable set the headers declare differs from tests/abi-stable.txt"
	echo "(< headers, > list):"
	diff "$tmp/stable" "$tmp/listed" | grep '^[<>]' || true
	fail=1
fi
if [ "$fail" != 0 ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
echo "$(wc -l < "$tmp/exported") exported functions, all prefixed nbg_:" \
	"$(wc -l < "$tmp/stable") stable (tests/abi-stable.txt)," \
	"$(wc -l < "$tmp/static") static-linking-only"

#!/bin/sh
# Every symbol libnbg exports carries the nbg_ prefix (the library is built
# with -fvisibility=hidden and NBG_API on the public functions).
set -eu
lib=$1
nm=${NM:-nm} # the cross build's nm, from tests/meson.build
bad=$($nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '^nbg_' || true)
count=$($nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/' | wc -l)
if [ -n "$bad" ]; then
	echo "exported without the nbg_ prefix:"; echo "$bad"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "$count exported symbols, all prefixed nbg_"

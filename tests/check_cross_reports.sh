#!/bin/sh
# check_cross_reports.sh - a cross-built nbg reports exactly what the native
# one does.  For samples/sample.nb, the synthesized fuzz seeds (v1 and v2
# shapes, written by nbg-fuzz-seeds of the native build) and every NBG file
# of the corpus (v1/*.nb, v2/*.nb), runs both binaries with the same
# arguments from the repository root and requires byte-identical stdout and
# the same exit code for each command below.  Output that depends on the
# machine (sizeof(long), alignment, char signedness, byte order, libc
# formatting) shows up here.  Without the corpus directory the real files
# are skipped (said so, with how to get them) and the rest still runs.
#
# usage: tests/check_cross_reports.sh NATIVE_NBG CROSS_NBG [CORPUS_DIR]
#   CORPUS_DIR  default ../shared/corpus beside the repository (the default
#               of the meson option corpus_dir)
#   MESON_EXE_WRAPPER  words that run CROSS_NBG on this machine, as meson
#               names them (scripts/cross-aarch64.sh sets qemu-aarch64 -L ...)
#   NBG_CROSS_KEEP=DIR  keep the outputs of each differing run in DIR
#
# Exit 0 all equal, 1 some differ.  Prints 'N passed, N failed'.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
native=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cross=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
corpus=${3:-$root/../shared/corpus}
wrapper=${MESON_EXE_WRAPPER:-}

cd "$root"

tmp=$(mktemp -d /tmp/nbg-cross-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ ! -d "$corpus" ]; then
	echo "check_cross_reports.sh: real files skipped: $corpus does not exist. Get the" \
	     "files with \`sh scripts/fetch-corpus.sh $corpus\` (it downloads them from their" \
	     "public repositories and checks each SHA-256), or pass CORPUS_DIR."
fi
seeds=$(dirname "$native")/fuzz/nbg-fuzz-seeds
mkdir "$tmp/seeds"
if [ -x "$seeds" ]; then
	"$seeds" "$tmp/seeds" >/dev/null
else
	echo "note: $seeds not built: the synthesized seeds are not compared"
fi

# Every command nbg's help lists of these; ledger only where it exists.
set -- "inspect" "inspect --json" "inspect --json --layers --operations --patches" "verify"
if "$native" --help | grep -q '^  ledger '; then
	set -- "$@" "ledger" "ledger --json"
fi

# Both binaries get the same path (they print it), from the same directory.
files=$(
	for f in "$corpus"/v1/*.nb "$corpus"/v2/*.nb "$tmp"/seeds/*.nb; do
		[ -f "$f" ] && echo "$f"
	done
	echo samples/sample.nb
)
nfiles=$(echo "$files" | wc -l)
echo "native: $native"
echo "cross:  ${wrapper:+$wrapper }$cross"
echo "$nfiles files x $# commands"

passed=0 failed=0
while IFS= read -r f; do
	for cmd in "$@"; do
		set +e
		# shellcheck disable=SC2086 # cmd and wrapper are words
		"$native" $cmd "$f" </dev/null >"$tmp/native.out" 2>"$tmp/native.err"
		rn=$?
		# shellcheck disable=SC2086
		$wrapper "$cross" $cmd "$f" </dev/null >"$tmp/cross.out" 2>"$tmp/cross.err"
		rc=$?
		set -e
		if [ "$rn" -eq "$rc" ] && cmp -s "$tmp/native.out" "$tmp/cross.out"; then
			passed=$((passed + 1))
			continue
		fi
		failed=$((failed + 1))
		echo "FAIL nbg $cmd $f: exit $rn native, $rc cross"
		diff "$tmp/native.out" "$tmp/cross.out" | head -20 || true
		if [ -n "${NBG_CROSS_KEEP:-}" ]; then
			mkdir -p "$NBG_CROSS_KEEP"
			k="$NBG_CROSS_KEEP/$failed"
			for s in native.out native.err cross.out cross.err; do
				cp "$tmp/$s" "$k.$s"
			done
		fi
	done
done <<EOF
$files
EOF
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

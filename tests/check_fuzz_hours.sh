#!/bin/sh
# The cumulative fuzzing table of doc/security.md is fuzz/hours.sh's
# output, to the byte: regenerate it with scripts/gen-docs.sh after a run.
# Usage: check_fuzz_hours.sh SOURCE_DIR
set -eu
cd "$1"
doc=doc/security.md
want=$(sh fuzz/hours.sh)
have=$(awk '$0 == "<!-- END fuzz/hours.sh -->" { on = 0 } on { print } $0 == "<!-- BEGIN fuzz/hours.sh -->" { on = 1 }' "$doc")
if [ -z "$have" ]; then
	echo "$doc has no block between <!-- BEGIN fuzz/hours.sh --> and <!-- END fuzz/hours.sh -->" >&2
	exit 1
fi
if [ "$have" != "$want" ]; then
	echo "$doc: the cumulative fuzzing table differs from sh fuzz/hours.sh (run scripts/gen-docs.sh):" >&2
	printf '%s\n' "$want" > "${TMPDIR:-/tmp}/fuzz-hours.want.$$"
	printf '%s\n' "$have" | diff -u - "${TMPDIR:-/tmp}/fuzz-hours.want.$$" >&2 || true
	rm -f "${TMPDIR:-/tmp}/fuzz-hours.want.$$"
	exit 1
fi
echo "doc/security.md's cumulative fuzzing table matches fuzz/runs.tsv"

#!/bin/sh
# fuzz/hours.sh - the cumulative fuzzing figures per harness, as the
# Markdown table of doc/security.md ("Cumulative figures"), computed from
# fuzz/runs.tsv (one line per run, appended by fuzz/run.sh) and the
# committed corpus archives fuzz/corpus/HARNESS.tar.gz (inputs, their bytes,
# the archive's size).  scripts/gen-docs.sh writes the
# table into the page and tests/check_fuzz_hours.sh fails when the page
# and this output differ, so the figures cannot drift from the log.
# Usage: sh fuzz/hours.sh [RUNS.tsv]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-fuzz/runs.tsv}
# The harnesses of fuzz/run.sh, in its order; one without a run gets a row too.
all="parse report_json report_text ledger ledger_doc graph diff commands coef memory escape tensor sample manifest corpus_part cpu"
aim=2
# members ARCHIVE: its inputs, their bytes and its own size ("0 0 0" without one)
members() {
	if [ -f "$1" ]; then
		tar -tvzf "$1" | awk -v packed="$(stat -c %s "$1")" '
			{ n++; s += $3 } END { print n + 0, s + 0, packed }'
	else
		echo 0 0 0
	fi
}
echo '| harness | runs | total time | total execs | of which synthesized-seed runs | failed runs | last coverage (cov / ft) | committed corpus |'
echo '|---|---|---|---|---|---|---|---|'
for h in $all; do
	a=fuzz/corpus/$h.tar.gz
	set -- $(members "$a")
	awk -F'\t' -v h="$h" -v files="$1" -v bytes="$2" -v packed="$3" '
		NR > 1 && $2 == h {
			n++; t += $3; e += $4
			if ($8 == "synthesized") { st += $3; se += $4 }
			if ($5 != "ok") f++
			cov = $6
		}
		END {
			sub(/^cov: /, "", cov); sub(/ ft: /, " / ", cov)
			printf "| `%s` | %d | %.2f h | %d | %.2f h, %d execs | %d | %s | %d inputs, %d KB (%d KB packed) |\n",
				h, n, t / 3600, e, st / 3600, se, f, n ? cov : "-", files,
				(bytes + 1023) / 1024, (packed + 1023) / 1024
		}' "$runs"
done
set -- $(for h in $all; do members "fuzz/corpus/$h.tar.gz"; done |
	awk '{ n += $1; s += $2; p += $3 } END { print n, s, p }')
awk -F'\t' -v aim="$aim" -v list="$all" -v files="$1" -v bytes="$2" -v packed="$3" '
	NR > 1 { t[$2] += $3 }
	END {
		k = split(list, hs, " "); lo = -1; met = 0
		for (i = 1; i <= k; i++) {
			x = t[hs[i]] / 3600
			if (lo < 0 || x < lo) lo = x
			if (hi == "" || x > hi) hi = x
			if (x >= aim) met++
		}
		printf "\nHarnesses at the aim of %d cumulative hours: %d of %d (%.2f-%.2f h per harness). ",
			aim, met, k, lo, hi
		printf "Committed corpus: %d inputs, %d KB, in %d KB of archives.\n", files,
			(bytes + 1023) / 1024, (packed + 1023) / 1024
	}' "$runs"

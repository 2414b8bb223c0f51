#!/bin/sh
# fuzz/hours.sh - the cumulative fuzzing figures per harness, as the
# Markdown table of doc/security.md ("Cumulative figures"), computed from
# fuzz/runs.tsv (one line per run, appended by fuzz/run.sh) and the
# committed corpus fuzz/corpus/HARNESS/.  scripts/gen-docs.sh writes the
# table into the page and tests/check_fuzz_hours.sh fails when the page
# and this output differ, so the figures cannot drift from the log.
# Usage: sh fuzz/hours.sh [RUNS.tsv]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-fuzz/runs.tsv}
# The harnesses of fuzz/run.sh, in its order; one without a run gets a row too.
all="parse report_json report_text ledger ledger_doc graph diff commands coef memory escape tensor sample manifest corpus_part cpu"
aim=2
echo '| harness | runs | total time | total execs | of which synthesized-seed runs | failed runs | last coverage (cov / ft) | committed corpus |'
echo '|---|---|---|---|---|---|---|---|'
for h in $all; do
	files=0 bytes=0
	if [ -d "fuzz/corpus/$h" ]; then
		files=$(find "fuzz/corpus/$h" -type f | wc -l)
		bytes=$(find "fuzz/corpus/$h" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	fi
	awk -F'\t' -v h="$h" -v files="$files" -v bytes="$bytes" '
		NR > 1 && $2 == h {
			n++; t += $3; e += $4
			if ($8 == "synthesized") { st += $3; se += $4 }
			if ($5 != "ok") f++
			cov = $6
		}
		END {
			sub(/^cov: /, "", cov); sub(/ ft: /, " / ", cov)
			printf "| `%s` | %d | %.2f h | %d | %.2f h, %d execs | %d | %s | %d files, %d KB |\n",
				h, n, t / 3600, e, st / 3600, se, f, n ? cov : "-", files, (bytes + 1023) / 1024
		}' "$runs"
done
files=$(find fuzz/corpus -type f | wc -l)
bytes=$(find fuzz/corpus -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
awk -F'\t' -v aim="$aim" -v list="$all" -v files="$files" -v bytes="$bytes" '
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
		printf "Committed corpus: %d files, %d KB.\n", files, (bytes + 1023) / 1024
	}' "$runs"

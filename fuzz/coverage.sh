#!/bin/sh
# fuzz/coverage.sh [HARNESS...] - source coverage (clang -fcoverage-mapping)
# of what each harness's inputs reach: the synthesized seeds, the shrunk and
# full real corpus (when there), fuzz/regressions/, the committed corpus
# fuzz/corpus/HARNESS.tar.gz and what fuzz/run.sh grew in
# fuzz/out/corpus/HARNESS/ since.  Prints, per harness, line / region / function
# coverage of the files that harness exists for, and writes the full
# llvm-cov report to fuzz/out/cov/HARNESS.txt.
set -eu
cd "$(dirname "$0")/.."

# Every harness of fuzz/meson.build's table by default.
harnesses=${*:-$(sed -n "s/^  '\([a-z_0-9]*\)' *: files('fuzz_.*/\1/p" fuzz/meson.build)}
out=fuzz/out
corpus=${NBG_CORPUS:-../shared/corpus}
profdata=$(command -v llvm-profdata-14 || command -v llvm-profdata)
llvmcov=$(command -v llvm-cov-14 || command -v llvm-cov)

if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzzing=true --buildtype=debugoptimized >/dev/null
fi
targets=""
for h in $harnesses; do targets="$targets fuzz/nbg-cov-$h"; done
meson compile -C build-fuzz $targets >/dev/null
mkdir -p "$out/cov"

for h in $harnesses; do
	case $h in
	# the files (or directories, ending in /) each harness exists for
	parse) files="lib/format/" ;;
	report_json) files="lib/report/json.c lib/report/json_v1.c lib/report/json_common.c" ;;
	report_text) files="lib/report/text.c lib/report/text_v1.c" ;;
	ledger | ledger_doc) files="lib/analysis/ledger/ledger.c lib/analysis/ledger/ledger_json.c lib/analysis/ledger/ledger_map.c" ;;
	graph) files="lib/analysis/graph/graph_check.c lib/analysis/graph/graph_context.c lib/analysis/graph/graph_decode.c lib/report/json_graph.c lib/report/text_graph.c" ;;
	commands) files="lib/analysis/graph/commands.c lib/analysis/graph/commands_check.c lib/analysis/graph/commands_fields.c lib/analysis/graph/dataflow.c" ;;
	diff) files="lib/analysis/diff/diff.c lib/analysis/diff/diff_locate.c lib/analysis/diff/reconstruct.c" ;;
	memory) files="lib/analysis/memory/memory.c lib/analysis/memory/memory_rules.c lib/report/json_memory.c lib/report/text_memory.c" ;;
	escape) files="lib/common/escape.c" ;;
	tensor) files="lib/tensor/npy.c lib/tensor/tensor.c lib/tensor/quant.c lib/common/half.c" ;;
	sample) files="lib/tensor/sample.c" ;;
	manifest) files="programs/manifest.c" ;;
	cpu) files="lib/cpu/" ;;
	corpus_part) files="programs/corpus/part.c programs/corpus/aggregate.c programs/corpus/sets.c programs/corpus/json.c programs/corpus/text.c" ;;
	*) files="lib/" ;;
	esac
	extra=""
	[ $h = ledger_doc ] && extra="--optional $out/seeds-json"
	rm -f "$out/cov/$h.profraw"
	LLVM_PROFILE_FILE="$out/cov/$h.profraw" build-fuzz/fuzz/nbg-cov-$h --synth --shrink \
		fuzz/regressions fuzz/corpus/$h.tar.gz --optional "$corpus/v2" \
		--optional "$corpus/v1" --optional "$out/corpus/$h" $extra >/dev/null 2>&1
	"$profdata" merge -sparse "$out/cov/$h.profraw" -o "$out/cov/$h.profdata"
	"$llvmcov" report build-fuzz/fuzz/nbg-cov-$h -instr-profile="$out/cov/$h.profdata" \
		>"$out/cov/$h.txt"
	# columns: file, regions, missed, %, functions, missed, %, lines, missed, %
	awk -v h="$h" -v files=" $files " '
		{
			name = $1; sub(/^(\.\.\/)+/, "", name); hit = 0
			n = split(files, want, " ")
			for (i = 1; i <= n; i++)
				if (name == want[i] || (want[i] ~ /\/$/ && index(name, want[i]) == 1))
					hit = 1
		}
		hit {
			r += $2; rm += $3; f += $5; fm += $6; l += $8; lm += $9
			printf "  %-28s lines %5d/%-5d (%s)  regions %s  functions %s\n", $1, $8 - $9, $8, $10, $4, $7
		}
		END {
			printf "%s: lines %d/%d (%.1f%%), regions %d/%d (%.1f%%), functions %d/%d\n",
				h, l - lm, l, l ? 100 * (l - lm) / l : 0, r - rm, r, r ? 100 * (r - rm) / r : 0, f - fm, f
		}' "$out/cov/$h.txt"
done

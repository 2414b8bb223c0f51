#!/bin/sh
# Regenerates the generated blocks of doc/*.md from the nbg binary, so the
# docs and the code share one list.  tests/test_codes_doc.c fails when a block
# is stale.  Usage: scripts/gen-docs.sh [path/to/nbg]
set -eu
nbg=${1:-build/nbg}
cd "$(dirname "$0")/.."
regen() { # file marker command...
	file=$1; marker=$2; shift 2
	tmp=$(mktemp)
	"$@" > "$tmp.block"
	awk -v m="$marker" -v blk="$tmp.block" '
		$0 == "<!-- BEGIN " m " -->" { print; while ((getline l < blk) > 0) print l; skip = 1; next }
		$0 == "<!-- END " m " -->" { skip = 0 }
		!skip { print }' "$file" > "$tmp"
	mv "$tmp" "$file"
	rm -f "$tmp.block"
}
regen doc/failure-codes.md "nbg codes --markdown" "$nbg" codes --markdown
regen doc/field-map.md "nbg fields" sh -c "echo '\`\`\`'; \"$nbg\" fields; echo '\`\`\`'"
# doc/ledger.md, doc/memory.md, doc/cpu-coverage.md and doc/cli.md's weights example show real files,
# by the default corpus_dir path the docs name; without it those blocks are
# left as they are.
if [ -d ../shared/corpus ]; then
	regen doc/ledger.md "nbg ledger ../shared/corpus/v2/face_detector_nbg_int16.nb" sh -c "echo '\`\`\`'; \"$nbg\" ledger ../shared/corpus/v2/face_detector_nbg_int16.nb; echo '\`\`\`'"
	regen doc/cli.md "nbg weights ../shared/corpus/v1/1000f_ee_lenet_model.nb" sh -c "echo '\`\`\`'; echo '\$ nbg weights ../shared/corpus/v1/1000f_ee_lenet_model.nb'; \"$nbg\" weights ../shared/corpus/v1/1000f_ee_lenet_model.nb; echo '\`\`\`'"
	regen doc/cpu-coverage.md "cpu coverage ../shared/corpus" python3 scripts/cpu-coverage.py "$nbg" ../shared/corpus
	regen doc/memory.md "nbg inspect --memory face_detector_nbg_int16" sh -c "echo '\`\`\`'; echo '\$ nbg inspect --memory ../shared/corpus/v2/face_detector_nbg_int16.nb'; echo '...'; \"$nbg\" inspect --memory ../shared/corpus/v2/face_detector_nbg_int16.nb | sed -n '/^Memory:/,\$p'; echo '\`\`\`'"
else
	echo "gen-docs.sh: ../shared/corpus does not exist: the doc/ledger.md, doc/memory.md," \
	     "doc/cpu-coverage.md and doc/cli.md weights examples, which show real files, were left as they are (sh scripts/fetch-corpus.sh" \
	     "gets the corpus)." >&2
fi
# doc/diff.md: nbg diff on the controlled pair the fixture builds, in a
# temporary directory (the pair writer is built next to the tests)
pair_tool=$(dirname "$nbg")/tests/nbg-fixture-pair
nbg_abs=$(cd "$(dirname "$nbg")" && pwd)/$(basename "$nbg")
pair=$(mktemp -d)
"$pair_tool" "$pair"
regen doc/diff.md "nbg diff A.nb B.nb" sh -c "echo '\`\`\`'; echo '\$ nbg diff A.nb B.nb'; cd '$pair' && '$nbg_abs' diff A.nb B.nb; echo '\`\`\`'"
rm -rf "$pair"
regen doc/security.md "fuzz/hours.sh" sh fuzz/hours.sh
regen doc/architecture.md "crossings" python3 scripts/crossings.py .
regen doc/api.md "api counts" python3 scripts/api-counts.py .
regen doc/cli.md "nbg inspect samples/sample.nb" sh -c "echo '\`\`\`'; echo '\$ nbg inspect samples/sample.nb'; \"$nbg\" inspect samples/sample.nb; echo '\`\`\`'"
"$nbg" help --man > doc/nbg.1
"$nbg" help --completion > completion/nbg

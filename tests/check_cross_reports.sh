#!/bin/sh
# check_cross_reports.sh - a cross-built nbg reports and computes exactly
# what the native one does.  Both binaries run from the repository root with
# the same arguments (they print the paths they are given).
#
# 1. Reports.  For samples/sample.nb, the synthesized fuzz seeds (v1 and v2
#    shapes, written by nbg-fuzz-seeds of the native build) and every NBG
#    file of the corpus (v1/*.nb, v2/*.nb), each command below runs once
#    over all of them (`nbg inspect FILE...`: one report per file, headed by
#    its name, a failing file's error in its place, the exit code the worst
#    one, doc/cli.md "Several files"), and stdout, stderr and the exit code must
#    be the same bytes.  Output that depends on the machine (sizeof(long),
#    alignment, char signedness, byte order, libc formatting) shows up here.
#    Where a command differs, it is run again file by file to name the files.
# 2. The CPU backend.  `nbg run --backend cpu --check` on every corpus file
#    and the sample: the same plan, byte for byte, and exit code.  Each file
#    whose plan runs whole (exit 0) is then run natively and under the cross
#    nbg on the same synthesized input (for each input, its element count of
#    numbers in [-1, 1), a fixed sequence, as text the model's record
#    quantizes): the same exit code and the same bytes in every output_N.bin
#    and output_N.npy.  NBG_CROSS_CPU says which models run (below).
#
# Every cross run is bounded: one that has not ended after NBG_CROSS_LIMIT
# seconds (default 300) is stopped and counts as a failure, saying so; each
# step prints its wall time.  Without the corpus directory the real files
# are skipped (said so, with how to get them) and the rest still runs.
#
# usage: tests/check_cross_reports.sh NATIVE_NBG CROSS_NBG [CORPUS_DIR]
#   CORPUS_DIR  default ../shared/corpus beside the repository (the default
#               of the meson option corpus_dir)
#   MESON_EXE_WRAPPER  words that run CROSS_NBG on this machine, as meson
#               names them (scripts/cross-aarch64.sh sets qemu-aarch64 -L ...)
#   NBG_CROSS_CPU=cover  (default) the cheapest models that together execute
#               every operation kind the whole-running models execute: by MACs
#               ascending, a model is taken when it executes a kind no taken
#               one does; none above NBG_CROSS_CPU_MACS multiply-accumulates
#               (default 2000000000), and the kinds only those have are
#               listed as not covered
#   NBG_CROSS_CPU=all    every model the CPU backend runs whole (minutes
#               under qemu: doc/cross.md)
#   NBG_CROSS_CPU=none   no model run (the plans are still compared)
#   NBG_CROSS_KEEP=DIR  keep the outputs of each differing run in DIR
#   NBG_CROSS_REPORTS=all  also every table of inspect (text and JSON) and,
#               file by file, graph (DOT and SVG), map (SVG) and weights
#               --json (scripts/same-behaviour.sh: two builds of this
#               machine)
#
# Exit 0 all equal, 1 some differ.  Prints 'N passed, N failed'.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,48p' "$0"; exit 2; }
native=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cross=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
corpus=${3:-$root/../shared/corpus}
wrapper=${MESON_EXE_WRAPPER:-}
limit=${NBG_CROSS_LIMIT:-300}
cpu_mode=${NBG_CROSS_CPU:-cover}
cpu_macs=${NBG_CROSS_CPU_MACS:-2000000000}
case $cpu_mode in all | cover | none) ;; *) echo "NBG_CROSS_CPU: all, cover or none" >&2; exit 2 ;; esac

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

# mark: $now, the wall seconds since the start and the CPU seconds of both
# binaries (every program this script ran) so far.  times must run in this
# shell: in a $(...) subshell it would count nothing.
t0=$(date +%s)
mark() {
	times >"$tmp/times"
	now="$(($(date +%s) - t0)) s, CPU $(awk 'NR == 2 { gsub(/[ms]/, " "); printf "%d", $1 * 60 + $2 + $3 * 60 + $4 }' "$tmp/times") s"
}
passed=0 failed=0

# run_pair TAG ARGS...: the native nbg and the cross one (under the wrapper,
# bounded) with the same arguments; stdout, stderr and exit code in
# $tmp/TAG.{native,cross}.{out,err} and $rn, $rc.
run_pair() {
	tag=$1
	shift
	set +e
	"$native" "$@" </dev/null >"$tmp/$tag.native.out" 2>"$tmp/$tag.native.err"
	rn=$?
	# shellcheck disable=SC2086 # the wrapper is words
	timeout "$limit" $wrapper "$cross" "$@" </dev/null >"$tmp/$tag.cross.out" 2>"$tmp/$tag.cross.err"
	rc=$?
	set -e
	if [ "$rc" -eq 124 ]; then
		echo "FAIL nbg $*: the cross run did not end within $limit s (NBG_CROSS_LIMIT)" \
		     >>"$tmp/$tag.cross.err"
	fi
}

# same TAG: whether the last run_pair TAG gave the same exit code and bytes
# (stdout and stderr).
same() {
	[ "$rn" -eq "$rc" ] && cmp -s "$tmp/$1.native.out" "$tmp/$1.cross.out" &&
		cmp -s "$tmp/$1.native.err" "$tmp/$1.cross.err"
}

# fail TAG WHAT: counts and shows a difference (and keeps it).
fail() {
	failed=$((failed + 1))
	echo "FAIL $2: exit $rn native, $rc cross"
	diff "$tmp/$1.native.out" "$tmp/$1.cross.out" | head -20 || true
	diff "$tmp/$1.native.err" "$tmp/$1.cross.err" | head -10 || true
	if [ -n "${NBG_CROSS_KEEP:-}" ]; then
		mkdir -p "$NBG_CROSS_KEEP"
		for s in native.out native.err cross.out cross.err; do
			cp "$tmp/$1.$s" "$NBG_CROSS_KEEP/$failed.$s"
		done
	fi
}

# ------------------------------------------------------------------ reports
# Every command nbg's help lists of these; ledger only where it exists.
set -- "inspect" "inspect --json" "inspect --json --layers --operations --patches" "verify"
if "$native" --help | grep -q '^  ledger '; then
	set -- "$@" "ledger" "ledger --json"
fi
if [ "${NBG_CROSS_REPORTS:-}" = all ]; then
	set -- "$@" "inspect --layers --operations --patches --commands --memory --weights" \
		"inspect --json --layers --operations --patches --commands --memory --weights" \
		"verify --sha256"
fi
# Both binaries get the same paths, from the same directory.
for f in "$corpus"/v1/*.nb "$corpus"/v2/*.nb "$tmp"/seeds/*.nb samples/sample.nb; do
	[ -f "$f" ] && echo "$f"
done >"$tmp/files"
nfiles=$(wc -l <"$tmp/files")
echo "native: $native"
echo "cross:  ${wrapper:+$wrapper }$cross"
echo "reports: $nfiles files x $# commands, one run of each binary per command"
for cmd in "$@"; do
	# shellcheck disable=SC2046,SC2086 # cmd is words; paths have no spaces
	run_pair report $cmd $(cat "$tmp/files")
	if same report; then
		passed=$((passed + nfiles))
		mark
		echo "  nbg $cmd: $nfiles files the same ($now)"
		continue
	fi
	echo "  nbg $cmd: the runs over all files differ; file by file:"
	while IFS= read -r f; do
		# shellcheck disable=SC2086
		run_pair one $cmd "$f"
		if same one; then
			passed=$((passed + 1))
		else
			fail one "nbg $cmd $f"
		fi
	done <"$tmp/files"
done

# The commands that take one file, file by file.
if [ "${NBG_CROSS_REPORTS:-}" = all ]; then
	for cmd in "graph" "graph --svg -" "map --svg -" "weights --json"; do
		n=0
		while IFS= read -r f; do
			# shellcheck disable=SC2086 # cmd is words
			run_pair one $cmd "$f"
			n=$((n + 1))
			if same one; then
				passed=$((passed + 1))
			else
				fail one "nbg $cmd $f"
			fi
		done <"$tmp/files"
		mark
		echo "  nbg $cmd: $n files, file by file ($now)"
	done
fi

# -------------------------------------------------------- the CPU backend
# The input of a model: for each input record, its element count of numbers
# in [-1, 1) as text (doc/runtime.md section 8), the same on every machine
# (integer arithmetic; awk's doubles hold it exactly).
make_inputs() {
	"$native" inspect --format vpm "$1" | awk -v dir="$tmp" '
		$1 == "input" && $3 == "dim" {
			n = 1
			for (i = 4; i <= NF; i++) { v = $i; last = sub(/,$/, "", v); n *= v; if (last) break }
			f = dir "/in" $2 ".txt"
			for (k = 0; k < n; k++) printf "%.4f\n", ((k * 7919 + $2 * 104729) % 20000 - 10000) / 10000 > f
			close(f)
			printf " %s", f
		}'
}

# The operation kinds a plan executes: each executed step's layer type and
# description, its numbers left out ("ConvolutionReluPoolingLayer2 NN conv
# relu uint8").
kinds() {
	sed -n 's/^  op [0-9]* \[layer [0-9]* \([^]]*\)\] \(.*\): execute.*/\1 \2/p' "$1" | tr ',()' '   ' |
		awk '{ k = ""; for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z][A-Za-z0-9_-]*$/) k = k " " $i; print k }' |
		sort -u
}

# The output files a run wrote into DIR.
outputs() {
	(cd "$1" && ls output_*) 2>/dev/null || true
}

macs() {
	sed -n 's/.*(\([0-9]*\) MACs).*/\1/p' "$1" | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

models=$(for f in "$corpus"/v1/*.nb "$corpus"/v2/*.nb samples/sample.nb; do
	[ -f "$f" ] && echo "$f"
done)
nplans=0
: >"$tmp/whole"
mark
echo "CPU backend: the plans of $(echo "$models" | wc -l) files ($now)"
while IFS= read -r f; do
	run_pair plan run --backend cpu --check "$f"
	nplans=$((nplans + 1))
	if same plan; then
		passed=$((passed + 1))
	else
		fail plan "nbg run --backend cpu --check $f"
		continue
	fi
	[ "$rn" -eq 0 ] || continue
	k=$(basename "$f")
	kinds "$tmp/plan.native.out" >"$tmp/kinds.$k"
	echo "$(macs "$tmp/plan.native.out") $f" >>"$tmp/whole"
done <<EOF
$models
EOF
sort -n -k1,1 -k2 "$tmp/whole" -o "$tmp/whole"
mark
echo "  $nplans plans compared; $(wc -l <"$tmp/whole") files run whole ($now)"

# Which models run: NBG_CROSS_CPU (the header).
: >"$tmp/covered"
: >"$tmp/chosen"
while read -r m f; do
	k=$tmp/kinds.$(basename "$f")
	case $cpu_mode in
	none) continue ;;
	cover)
		[ -n "$(sort -u "$tmp/covered" | comm -23 "$k" -)" ] || continue
		if [ "$m" -gt "$cpu_macs" ]; then
			sort -u "$tmp/covered" | comm -23 "$k" - | sed "s|^|  not covered (only in $f, $m MACs):|"
			cat "$k" >>"$tmp/notcovered"
			continue
		fi
		cat "$k" >>"$tmp/covered" ;;
	esac
	echo "$m $f" >>"$tmp/chosen"
done <"$tmp/whole"
echo "CPU backend runs ($cpu_mode): $(wc -l <"$tmp/chosen") models," \
     "$(awk '{ s += $1 } END { printf "%.0f", s }' "$tmp/chosen") MACs"
while read -r m f; do
	# shellcheck disable=SC2046 # the input files are words
	set -- $(make_inputs "$f")
	rm -rf "$tmp/out.native" "$tmp/out.cross"
	set +e
	"$native" run --backend cpu --input "$@" --output-dir "$tmp/out.native" "$f" </dev/null \
		>/dev/null 2>"$tmp/model.native.err"
	rn=$?
	# shellcheck disable=SC2086 # the wrapper is words
	timeout "$limit" $wrapper "$cross" run --backend cpu --input "$@" --output-dir "$tmp/out.cross" "$f" \
		</dev/null >/dev/null 2>"$tmp/model.cross.err"
	rc=$?
	set -e
	outs=$(outputs "$tmp/out.native")
	ok=1
	[ "$rn" -eq 0 ] && [ "$rc" -eq 0 ] && [ -n "$outs" ] || ok=0
	[ "$(outputs "$tmp/out.cross")" = "$outs" ] || ok=0
	for o in $outs; do
		cmp -s "$tmp/out.native/$o" "$tmp/out.cross/$o" || { ok=0; echo "  $o differs"; }
	done
	if [ $ok = 1 ]; then
		passed=$((passed + 1))
		mark
		echo "  $f: $(echo "$outs" | wc -l) output files the same ($m MACs; $now)"
	else
		failed=$((failed + 1))
		[ "$rc" -ne 124 ] || echo "  the cross run did not end within $limit s (NBG_CROSS_LIMIT)"
		echo "FAIL nbg run --backend cpu $f: exit $rn native, $rc cross"
		tail -3 "$tmp/model.native.err" "$tmp/model.cross.err"
		if [ -n "${NBG_CROSS_KEEP:-}" ]; then
			mkdir -p "$NBG_CROSS_KEEP/$failed.run"
			cp -r "$tmp/out.native" "$tmp/out.cross" "$NBG_CROSS_KEEP/$failed.run/" 2>/dev/null || true
		fi
	fi
done <"$tmp/chosen"
mark
echo "done ($now)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

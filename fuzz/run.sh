#!/bin/sh
# fuzz/run.sh SECONDS [HARNESS...] - builds the libFuzzer targets with clang
# (build-fuzz, -Dfuzzing=true) and runs each harness for SECONDS seconds
# (default 60; every harness when none is named).  Not part of the test
# suite: developers run it in the background (nice -n 19) and commit what it
# records.  SECONDS 0 runs no fuzzer: it only merges what fuzz/out/corpus/
# HARNESS/ holds (inputs of your own, or of a libFuzzer run started by hand)
# into the archive, and records no run.
#
# Seeds: the synthesized ones only, so that everything a run finds descends
# from bytes written by this project and may be committed.  With
# NBG_FUZZ_REAL_SEEDS=1 the shrunk copies of ../shared/corpus join them;
# such a run keeps its finds in fuzz/out/corpus-real/HARNESS/ and commits
# nothing (the real files are never copied into the project).
#
# The committed corpus of a harness is one archive, fuzz/corpus/HARNESS.tar.gz
# (ustar, gzip; the replay tests read it as it is).  A run unpacks it into
# fuzz/out/committed/HARNESS/ for libFuzzer and grows its own corpus in
# fuzz/out/corpus/HARNESS/ (kept between runs, ignored by git); after the run
# both are merged (libFuzzer -merge=1: the smallest set of inputs with the
# same coverage, none over 16 KB) and packed back into the archive, the same
# way every time (sorted names, fixed dates and owners, gzip -n), so an
# unchanged corpus gives the same bytes and git sees no change.
#
# What fails a run: a crash, leak, timeout, out-of-memory or violated
# invariant.  libFuzzer writes the input to fuzz/out/crashes/HARNESS/; this
# script also copies it to fuzz/regressions/HARNESS/unfixed-KIND-SHA1 (KIND:
# crash, leak, timeout, oom), where every replay test reads it, so it fails
# the suite until it is fixed and cannot be lost with fuzz/out/.  Fix the
# library, rename the input after the bug and commit both.  (A run with the
# real seeds keeps it in fuzz/out/crashes/ only: it may hold their bytes.)
#
# Each run appends a line to fuzz/runs.tsv (date, harness, seconds, execs,
# result, coverage, corpus size, seeds); the totals per harness (fuzz/hours.sh)
# are printed at the end.  NBG_FUZZ_RECORD=0 (a throwaway run) merges and
# records nothing, but still keeps a failing input.  Seeds are regenerated
# every run into fuzz/out/seeds/.  Figures (execs, execs/s, coverage) go to
# fuzz/out/logs/HARNESS.log and are summarized at the end.
set -eu
cd "$(dirname "$0")/.."

secs=${1:-60}
[ $# -gt 0 ] && shift
case $secs in
*[!0-9]* | '') echo "fuzz: SECONDS must be a whole number, not '$secs'" >&2; exit 2 ;;
esac
all="parse report_json report_text ledger ledger_doc graph diff commands coef memory escape tensor sample manifest corpus_part cpu"
harnesses=${*:-$all}
for h in $harnesses; do
	case " $all " in
	*" $h "*) ;;
	*) echo "fuzz: no harness '$h' (one of: $all)" >&2; exit 2 ;;
	esac
done
out=fuzz/out
corpus=${NBG_CORPUS:-../shared/corpus}

# pack DIR ARCHIVE: every file of DIR into ARCHIVE, deterministically (the
# replay driver reads POSIX ustar only, fuzz/archive.c).
pack() {
	(cd "$1" && find . -maxdepth 1 -type f ! -name '.*' -printf '%f\n' | LC_ALL=C sort |
		tar --format=ustar --no-recursion --mtime=@0 --owner=0 --group=0 \
		--numeric-owner --mode=0644 -cf - -T -) >"$2.tar.tmp"
	gzip -n -9 --rsyncable <"$2.tar.tmp" >"$2.tmp"
	rm -f "$2.tar.tmp"
	mv "$2.tmp" "$2"
}

# keep HARNESS LOG STAMP: copies what libFuzzer wrote to fuzz/out/crashes/
# after STAMP into fuzz/regressions/HARNESS/ and says what to do.
keep() {
	find "$out/crashes/$1" -type f -newer "$3" ! -name 'slow-unit-*' | LC_ALL=C sort |
	while read -r a; do
		kind=${a##*/}
		kind=${kind%%-*}
		if [ "$real" = 1 ]; then
			echo "fuzz $1: $kind input $a (from a run with the real seeds: it may hold their bytes; rebuild it from synthesized bytes before committing it)" >&2
			continue
		fi
		dest=fuzz/regressions/$1/unfixed-$kind-$(sha1sum <"$a" | cut -c1-12)
		# an input already kept (a bug come back) is not kept twice
		for f in fuzz/regressions/*/*; do
			cmp -s "$a" "$f" && dest=$f
		done
		if [ -f "$dest" ]; then
			kept="already kept as"
		else
			cp "$a" "$dest"
			kept="kept as"
		fi
		echo "fuzz $1: $kind input $kept $dest: every fuzz-replay test runs it and fails until it is fixed (under build-asan for a leak). Reproduce with build-fuzz/fuzz/fuzz_$1 $dest or build-asan/fuzz/nbg-replay-$1 $dest, fix the library, rename the file after the bug and commit both. Log: $2" >&2
	done
}

if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzzing=true --buildtype=debugoptimized >/dev/null
fi
# Only what a run needs (not the coverage replays of fuzz/coverage.sh).
targets="nbg:executable fuzz/nbg-fuzz-seeds"
for h in $harnesses; do targets="$targets fuzz/fuzz_$h"; done
# Regenerate first when a meson.build changed (a new harness is otherwise
# an unknown target to meson compile).
ninja -C build-fuzz build.ninja >/dev/null
meson compile -C build-fuzz $targets >/dev/null
mkdir -p "$out/seeds" "$out/logs"
real=${NBG_FUZZ_REAL_SEEDS:-0}
record=${NBG_FUZZ_RECORD:-1}
rm -rf "$out/seeds" "$out/seeds-json"
if [ "$real" = 1 ]; then
	build-fuzz/fuzz/nbg-fuzz-seeds "$out/seeds" "$corpus/v2" "$corpus/v1" >/dev/null
	kind=real
else
	build-fuzz/fuzz/nbg-fuzz-seeds "$out/seeds" >/dev/null
	kind=synthesized
fi
# Ledger documents of the seeds, for the ledger-document reader.
mkdir -p "$out/seeds-json"
for f in "$out"/seeds/*.nb; do
	j=$out/seeds-json/$(basename "$f" .nb).json
	build-fuzz/nbg ledger --json "$f" >"$j" 2>/dev/null || rm -f "$j"
done

fail=0
for h in $harnesses; do
	bin=build-fuzz/fuzz/fuzz_$h
	work=$out/corpus/$h
	[ "$real" = 1 ] && work=$out/corpus-real/$h
	archive=fuzz/corpus/$h.tar.gz
	committed=$out/committed/$h
	rm -rf "$committed"
	mkdir -p "$work" "$out/crashes/$h" fuzz/regressions/"$h" "$committed"
	[ -f "$archive" ] && tar -xzf "$archive" -C "$committed"
	case $h in
	ledger_doc) seeds="$out/seeds-json $out/seeds" dict=fuzz/ledger_doc.dict ;;
	# not NBG files: their seeds are the committed corpus alone
	# (fuzz/mkseeds_inputs.py wrote the first ones)
	tensor|sample|manifest|corpus_part) seeds= dict=fuzz/$h.dict ;;
	*) seeds=$out/seeds dict=fuzz/nbg.dict ;;
	esac
	log=$out/logs/$h.log
	stamp=$out/logs/$h.start
	: >"$stamp"
	# libFuzzer first runs every input of every directory (so a fixed bug
	# that comes back fails at once); new inputs go to the first directory,
	# the seeds and fuzz/regressions/ (read recursively) are only read.
	began=$(date +%s)
	if [ "$secs" = 0 ]; then
		status=ok
		: >"$log"
	elif ASAN_OPTIONS=detect_leaks=1 \
	   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	   "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
		-max_len=65536 -dict="$dict" -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$h/" \
		"$work" "$committed" $seeds fuzz/regressions >"$log" 2>&1; then
		status=ok
	else
		status=FAILED
		fail=1
	fi
	# the seconds the fuzzer ran: a run a finding stopped early ran fewer
	# than asked, and the hours count what ran
	ran=$(($(date +%s) - began))
	[ "$ran" -lt "$secs" ] || ran=$secs
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
	# Fold what the run found into the committed, minimized corpus.
	merged=$out/merge/$h
	rm -rf "$merged"
	mkdir -p "$merged"
	if [ "$real" != 1 ] && [ "$record" = 1 ] && "$bin" -merge=1 -max_len=16384 -rss_limit_mb=2048 -timeout=10 "$merged" \
		"$committed" "$out/corpus/$h" >"$out/logs/$h.merge.log" 2>&1; then
		find "$merged" -type f -size +16k -delete
		pack "$merged" "$archive"
		rm -rf "$committed"
		mv "$merged" "$committed"
	elif [ "$real" != 1 ] && [ "$record" = 1 ]; then
		echo "fuzz $h: the merge failed ($out/logs/$h.merge.log); $archive is unchanged" >&2
		fail=1
	fi
	units=$(find "$committed" -type f | wc -l)
	echo "fuzz $h: $status, ${ran}s, ${execs:-?} execs (${rate:-?}/s), $cov, corpus $units"
	if [ $status = FAILED ]; then
		grep -E 'ERROR|SUMMARY|invariant|Test unit written' "$log" | head -20 >&2
		keep "$h" "$log" "$stamp"
	fi
	[ "$record" = 1 ] && [ "$secs" != 0 ] || continue
	[ -f fuzz/runs.tsv ] || printf 'date\tharness\tseconds\texecs\tresult\tcoverage\tcorpus\tseeds\n' >fuzz/runs.tsv
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)" "$h" "$ran" \
		"${execs:-0}" "$status" "${cov:-?}" "$units" "$kind" >>fuzz/runs.tsv
done
# Cumulative figures per harness, from every run recorded: the table of
# doc/security.md (scripts/gen-docs.sh writes it there; the fuzz-hours test
# fails until it is regenerated after a recorded run).
[ -f fuzz/runs.tsv ] && sh fuzz/hours.sh
if [ "$record" = 1 ] && [ "$secs" = 0 ]; then
	echo "fuzz: merged into fuzz/corpus/*.tar.gz (no run recorded); run scripts/gen-docs.sh to update doc/security.md"
elif [ "$record" = 1 ]; then
	echo "fuzz: recorded in fuzz/runs.tsv and fuzz/corpus/*.tar.gz; run scripts/gen-docs.sh to update doc/security.md"
fi
exit $fail

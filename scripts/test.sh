#!/bin/sh
# scripts/test.sh - the test suite, by tier (doc/testing.md).  Run
# scripts/setup.sh first on a fresh machine.
#
#   sh scripts/test.sh           the README's test command: the tiers quick
#                                and corpus in the normal build (warnings are
#                                errors), then the same two tiers under
#                                AddressSanitizer + UndefinedBehaviorSanitizer
#                                (-fno-sanitize-recover=all)
#   sh scripts/test.sh --slow    all three tiers natively (quick, corpus,
#                                slow), then quick and corpus under the
#                                sanitizers: everything there is
#   sh scripts/test.sh --quick   the tier quick alone, both builds (the habit
#                                while editing: doc/testing.md)
#   --tiers T,T                  exactly these tiers natively (quick, corpus,
#                                slow), the sanitizer build running those of
#                                them that are not slow
#   --no-sanitizers              the normal build only
#
# Every test belongs to exactly one tier, a meson suite (test `tiers` checks
# it against doc/testing.md): quick (unit tests, synthesized files, the fuzz
# replays, the per-operation CPU tests: any clone, seconds), corpus (checks
# on the real files of the meson option corpus_dir, default
# ../shared/corpus, the vendor inspector's output of reference_dir and the
# source models of models_dir; cheap enough to run under the sanitizers),
# slow (whole-model CPU checks over every corpus file, mutation over the
# corpus, the Python corpus sweep).  The corpus and slow tests are skipped,
# saying why, when those directories are absent.  With CI=true or
# NBG_REQUIRE_CORPUS=1 they must be there: the run fails before any test
# when corpus_dir, reference_dir or models_dir does not exist, and after
# each run when any test was skipped for lack of the real files, so CI
# never passes by skipping them.  A test skipped for another reason (a tool
# this machine lacks) is listed and does not fail the run.
#
# Timed fuzzing is not part of the suite (fuzz/run.sh, doc/security.md);
# the committed fuzz corpora are replayed in the tier quick.
set -eu
cd "$(dirname "$0")/.."

tiers=quick,corpus
sanitizers=1
while [ $# -gt 0 ]; do
	case $1 in
	--slow) tiers=quick,corpus,slow ;;
	--quick) tiers=quick ;;
	--tiers)
		[ $# -ge 2 ] || { echo "test.sh: --tiers needs a list (quick,corpus,slow)" >&2; exit 2; }
		tiers=$2
		shift
		;;
	--no-sanitizers) sanitizers=0 ;;
	*)
		echo "usage: sh scripts/test.sh [--slow | --quick | --tiers T,T] [--no-sanitizers]" >&2
		exit 2
		;;
	esac
	shift
done
suites=""
asan_suites=""
for t in $(echo "$tiers" | tr ',' ' '); do
	case $t in
	quick | corpus | slow) ;;
	*) echo "test.sh: no tier '$t' (quick, corpus, slow)" >&2; exit 2 ;;
	esac
	suites="$suites --suite $t"
	[ "$t" = slow ] || asan_suites="$asan_suites --suite $t"
done
[ "${NBG_SKIP_SANITIZERS:-0}" = 1 ] && sanitizers=0

require=0
[ "${CI:-}" = true ] && require=1
[ "${NBG_REQUIRE_CORPUS:-0}" = 1 ] && require=1

# The tests the last `meson test` in build directory $1 skipped, one a line:
# "  NAME: REASON" (the last line each printed), the reason prefixed with
# "[no real files] " when it is the corpus tests' skip sentence.
skipped() {
	python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
with open(sys.argv[1]) as log:
    for line in log:
        t = json.loads(line)
        if t.get("result") != "SKIP":
            continue
        out = (t.get("stdout") or "").strip().splitlines()
        why = out[-1] if out else "(no reason printed)"
        real = any("-D%s=DIR" % o in why for o in ("corpus_dir", "reference_dir", "models_dir"))
        print("  %s: %s%s" % (t["name"], "[no real files] " if real else "", why))
PY
}

# The directory a build directory's option ($2: corpus_dir, reference_dir)
# names, relative ones taken from the source root as tests/meson.build does.
option_dir() {
	meson introspect "$1" --buildoptions | python3 -c '
import json, os, sys
v = [o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]]
print(os.path.join(os.getcwd(), v[0]) if v else "")' "$2"
}

need_corpus() {
	[ $require = 1 ] || return 0
	for opt in corpus_dir reference_dir models_dir; do
		d=$(option_dir "$1" $opt)
		if [ -n "$d" ] && [ ! -d "$d" ]; then
			echo "test.sh: this run must run every test (CI=true or NBG_REQUIRE_CORPUS=1)," \
			     "but $opt $d of $1 does not exist: give it the real files" \
			     "(sh scripts/fetch-corpus.sh for the corpus, or -D$opt=DIR)." >&2
			exit 1
		fi
	done
}

# meson test in build directory $1 with timeout multiplier $2 and the
# suites $3 (the sanitizer build runs the CPU checks several times slower),
# environment as given, then the skips and the time it took.
run_suite() {
	dir=$1
	mult=$2
	sel=$3
	shift 3
	start=$(date +%s)
	# shellcheck disable=SC2086 # the suite options are words
	env "$@" meson test -C "$dir" --print-errorlogs --timeout-multiplier "$mult" $sel
	echo "test.sh: $dir,$(echo "$sel" | sed 's/ --suite / /g'): $(($(date +%s) - start)) s"
	s=$(skipped "$dir")
	[ -n "$s" ] || return 0
	n=$(printf '%s\n' "$s" | wc -l | tr -d ' ')
	echo "$n tests skipped in $dir:"
	printf '%s\n' "$s"
	r=$(printf '%s\n' "$s" | grep -c '\[no real files\]' || true)
	if [ $require = 1 ] && [ "$r" -gt 0 ]; then
		echo "test.sh: $r tests were skipped in $dir for lack of the real files, and this" \
		     "run must run every test (CI=true or NBG_REQUIRE_CORPUS=1): give it the corpus" \
		     "(sh scripts/fetch-corpus.sh, or -Dcorpus_dir=DIR)." >&2
		exit 1
	fi
}

[ -d build ] || meson setup build --buildtype=debugoptimized -Dwerror=true -Dtests=true -Dfuzzers=true
meson compile -C build
need_corpus build
run_suite build 1 "$suites"

if [ $sanitizers = 1 ] && [ -n "$asan_suites" ]; then
	[ -d build-asan ] || meson setup build-asan --buildtype=debug -Dwerror=true -Dtests=true -Dfuzzers=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=all
	meson compile -C build-asan
	need_corpus build-asan
	run_suite build-asan 3 "$asan_suites" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
echo "all test suites passed ($tiers)"

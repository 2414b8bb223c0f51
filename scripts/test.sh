#!/bin/sh
# Runs the whole test suite: the normal build (warnings are errors), then the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (-fno-sanitize-recover=all).  Run scripts/setup.sh first on a fresh machine.
#
# The tests of the suite 'corpus' read the real NBG files of the meson option
# corpus_dir (default ../shared/corpus beside the checkout), the vendor
# inspector's output of reference_dir and the source models of models_dir
# (the LeNet oracle of the weights); they are skipped when the directory
# is absent, and every other test runs anywhere (doc/testing.md).  Skipped
# tests are listed with their reason.  With CI=true or NBG_REQUIRE_CORPUS=1
# the corpus must be there: the run fails before any test when corpus_dir,
# reference_dir or models_dir does not exist, and after each suite when any test was skipped for lack of the real
# files, so CI never passes by skipping them.  A test skipped for another
# reason (a tool this machine lacks) is listed and does not fail the run.
set -eu
cd "$(dirname "$0")/.."

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

# meson test in build directory $1 with timeout multiplier $2 (the sanitizer
# build runs the whole-model CPU checks several times slower), environment as
# given, then the skips.
run_suite() {
	dir=$1
	mult=$2
	shift 2
	env "$@" meson test -C "$dir" --print-errorlogs --timeout-multiplier "$mult"
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
run_suite build 1

if [ "${NBG_SKIP_SANITIZERS:-0}" != 1 ]; then
	[ -d build-asan ] || meson setup build-asan --buildtype=debug -Dwerror=true -Dtests=true -Dfuzzers=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=all
	meson compile -C build-asan
	need_corpus build-asan
	run_suite build-asan 2 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

# Bounded libFuzzer runs (clang): 30 s for each of the 7 harnesses, fails on
# any crash.
if [ "${NBG_SKIP_FUZZ:-0}" != 1 ]; then
	NBG_FUZZ_RECORD=0 sh fuzz/run.sh 30
fi
echo "all test suites passed"

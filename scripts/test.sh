#!/bin/sh
# Runs the whole test suite: the normal build (warnings are errors), then the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (-fno-sanitize-recover=all).  Needs ../shared/corpus beside the checkout.
# Run scripts/setup.sh first on a fresh machine.
set -eu
cd "$(dirname "$0")/.."

[ -d build ] || meson setup build --buildtype=debugoptimized -Dwerror=true
meson compile -C build
meson test -C build --print-errorlogs

if [ "${NBG_SKIP_SANITIZERS:-0}" != 1 ]; then
	[ -d build-asan ] || meson setup build-asan --buildtype=debug -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=all
	meson compile -C build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		meson test -C build-asan --print-errorlogs
fi

# Bounded libFuzzer runs (clang): 30 s for each of the 7 harnesses, fails on
# any crash.
if [ "${NBG_SKIP_FUZZ:-0}" != 1 ]; then
	NBG_FUZZ_RECORD=0 sh fuzz/run.sh 30
fi
echo "all test suites passed"

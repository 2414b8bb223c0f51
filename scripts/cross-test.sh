# scripts/cross-test.sh - the steps every cross build shares, sourced by
# scripts/cross-aarch64.sh and scripts/cross-armhf.sh once the packages are
# in place: configure and build, check that nbg under qemu-user loads only
# libraries of the target machine, run the meson test suite under qemu, and
# compare the native and the cross nbg's reports on the corpus.
#
# The caller sets: arch (dpkg name), build (directory), crossfile, qemu,
# machine (readelf's name of the target), wrapper (the cross file's exe
# wrapper, as words) and step() (prints a timed step); it runs from the
# checkout's root with scripts/setup.sh done (build/nbg exists).
# Environment: NBG_CROSS_TESTS, NBG_CROSS_TIMEOUT_MULTIPLIER,
# NBG_CROSS_SKIP_REPORTS (doc/cross.md).
# shellcheck shell=sh disable=SC2154 # the variables above come from the caller

# ------------------------------------------------------------------- build
step "configure and build $build"
[ -d "$build" ] || meson setup "$build" --cross-file "$crossfile" \
	--buildtype=debugoptimized -Dwerror=true -Dtests=true -Dfuzzers=true
meson compile -C "$build"
file_machine() { readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p'; }
[ "$(file_machine "$build/nbg")" = "$machine" ] || {
	echo "$build/nbg is not a $machine ELF" >&2
	exit 1
}

# Which files the emulated nbg opens: those after qemu opened nbg itself are
# the program's (qemu's own x86-64 libraries come before).
step "libraries nbg loads under $qemu"
log=$(mktemp)
# shellcheck disable=SC2086 # the wrapper is words
strace -f -e trace=openat -o "$log" $wrapper "$build/nbg" inspect samples/sample.nb >/dev/null
bad=0
# shellcheck disable=SC2013 # paths without spaces
for f in $(sed -n "/\"[^\"]*$build\\/nbg\"/,\$p" "$log" | grep -v ENOENT |
	sed -n 's/.*openat([^"]*"\([^"]*\.so[.0-9]*\)".*/\1/p' | sort -u); do
	m=$(file_machine "$f")
	printf '  %-70s %s\n' "$f" "$m"
	[ "$m" = "$machine" ] || bad=1
done
rm -f "$log"
[ "$bad" -eq 0 ] || { echo "a library nbg loaded is not $machine" >&2; exit 1; }

# -------------------------------------------------------------------- tests
step "meson test under $qemu"
# shellcheck disable=SC2086 # test names are words
meson test -C "$build" --print-errorlogs \
	--timeout-multiplier "${NBG_CROSS_TIMEOUT_MULTIPLIER:-5}" ${NBG_CROSS_TESTS:-}

if [ "${NBG_CROSS_SKIP_REPORTS:-0}" != 1 ]; then
	step "native and $arch nbg reports"
	set +e
	MESON_EXE_WRAPPER="$wrapper" sh tests/check_cross_reports.sh build/nbg "$build/nbg"
	rc=$?
	set -e
	[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"
fi
step "$arch build and tests passed"

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
# Environment: NBG_CROSS_SUITES, NBG_CROSS_TESTS, NBG_CROSS_TIMEOUT_MULTIPLIER,
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
	case $f in */ld-linux*) loader=$f ;; */libc.so.6) libc=$f ;; esac
done
rm -f "$log"
[ "$bad" -eq 0 ] || { echo "a library nbg loaded is not $machine" >&2; exit 1; }
# The dynamic loader and libc share private structures, so they must be one
# glibc build.  A pair of two builds runs until the first thread starts and
# then spins in its first lock: qemu -L with a directory that has a loader
# but no libc where the loader looks (the cross toolchain's
# /usr/aarch64-linux-gnu: its 2.36-8 loader, then the host's arm64 libc)
# did so in nbg on every file of 1 MB or more (doc/cross.md).
glibc_build() {
	LC_ALL=C grep -a -o -m1 '([^()]*GLIBC [^()]*) [a-z ]*release version [0-9.]*' "$1" | head -1 | sed 's/) .*/)/'
}
lb=$(glibc_build "${loader:-/dev/null}")
cb=$(glibc_build "${libc:-/dev/null}")
echo "  loader ${loader:-none} $lb, libc ${libc:-none} $cb"
if [ -z "$lb" ] || [ "$lb" != "$cb" ]; then
	echo "the dynamic loader and libc nbg loaded are not one glibc build: check the exe" \
	     "wrapper's -L directory ($wrapper)" >&2
	exit 1
fi

# -------------------------------------------------------------------- tests
# NBG_CROSS_TESTS names tests; else NBG_CROSS_SUITES names meson suites
# (default quick; "all": every test; "none": no test).  A suite with no test
# (tests/meson.build names none such) runs nothing, and says so.
suites=${NBG_CROSS_SUITES:-quick}
if [ -n "${NBG_CROSS_TESTS:-}" ]; then
	sel=$NBG_CROSS_TESTS
elif [ "$suites" = all ]; then
	sel=""
elif [ "$suites" != none ]; then
	sel=$(for s in $suites; do printf -- '--suite %s ' "$s"; done)
fi
if [ "$suites" = none ] && [ -z "${NBG_CROSS_TESTS:-}" ]; then
	step "no meson test under $qemu (NBG_CROSS_SUITES=none)"
else
	step "meson test under $qemu: ${NBG_CROSS_TESTS:-suites $suites}"
	# shellcheck disable=SC2086 # test names and options are words
	n=$(meson test -C "$build" --no-rebuild --list $sel 2>/dev/null |
		grep -v -e '^ninja: ' -e '^No suitable tests' | grep -c . || true)
	[ "$n" -gt 0 ] || echo "note: no test in ${NBG_CROSS_TESTS:-suites $suites}: none run"
	# shellcheck disable=SC2086
	[ "$n" -eq 0 ] || meson test -C "$build" --print-errorlogs \
		--timeout-multiplier "${NBG_CROSS_TIMEOUT_MULTIPLIER:-5}" $sel
fi

if [ "${NBG_CROSS_SKIP_REPORTS:-0}" != 1 ]; then
	step "native and $arch nbg reports"
	set +e
	MESON_EXE_WRAPPER="$wrapper" sh tests/check_cross_reports.sh build/nbg "$build/nbg"
	rc=$?
	set -e
	[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"
fi
step "$arch build and tests passed"

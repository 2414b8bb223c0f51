#!/bin/sh
# scripts/cross-aarch64.sh - one command: nbgkit built for aarch64 (arm64)
# with Debian 12's cross toolchain, and its tests run under qemu-user.  As
# root (or with sudo) on a fresh Debian 12 it:
#
#  1. runs scripts/setup.sh (the native packages and build/, needed for the
#     native-against-aarch64 comparison in step 6);
#  2. adds the arm64 architecture (dpkg --add-architecture arm64) and
#     installs what is missing: gcc-aarch64-linux-gnu,
#     binutils-aarch64-linux-gnu, qemu-user (without its binfmt_misc
#     recommendation: nothing here needs binfmt), strace, and the arm64
#     -dev packages of nbgkit's dependencies with their runtime libraries,
#     all Multi-Arch: same (installed beside the native ones).  A package
#     that is not would replace its native twin: the script refuses it;
#  3. configures build-aarch64/ with cross/aarch64-linux-gnu.ini and
#     -Dwerror=true, and builds it;
#  4. checks that nbg under qemu loads the arm64 dynamic loader and
#     libraries (each file it opens after itself is an AArch64 ELF);
#  5. runs `meson test` there, the suite quick by default (NBG_CROSS_SUITES):
#     meson starts each test under the cross file's exe_wrapper
#     (qemu-aarch64 -L /), and tests that start nbg go through the same
#     wrapper (tests/exe_wrapper.h);
#  6. runs tests/check_cross_reports.sh: the native and the aarch64 nbg print
#     the same bytes and exit codes for the sample, the synthesized fuzz
#     seeds and every corpus file, make the same CPU backend plans, and the
#     CPU backend's outputs are the same bytes on the models NBG_CROSS_CPU
#     names (the corpus files skipped, with a message, when the corpus
#     directory is absent).
# Steps 3 to 6 are scripts/cross-test.sh, shared with scripts/cross-armhf.sh.
#
# Environment: NBG_CROSS_SUITES="SUITE..." the meson suites step 5 runs
# (default quick; all: every test; none); NBG_CROSS_TESTS="NAME..." runs
# those meson tests instead; NBG_CROSS_TIMEOUT_MULTIPLIER (default 5:
# emulation is slower) scales their timeouts; NBG_CROSS_CPU (cover by
# default, all, none: tests/check_cross_reports.sh) the models step 6 runs;
# NBG_CROSS_SKIP_REPORTS=1 leaves out step 6.  doc/cross.md says what each
# costs; NBG_CROSS_SUITES=all NBG_CROSS_CPU=all is everything.
set -eu
cd "$(dirname "$0")/.."

arch=arm64 triplet=aarch64-linux-gnu qemu=qemu-aarch64 machine=AArch64 build=build-aarch64
# shellcheck source=scripts/cross-start.sh
. scripts/cross-start.sh

# ---------------------------------------------------------------- packages
step "packages for $arch"
updated=""
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
	echo "dpkg --add-architecture $arch"
	$SUDO dpkg --add-architecture "$arch"
	$SUDO apt-get update -qq
	updated=1
fi
tools="gcc-$triplet binutils-$triplet qemu-user strace"
devs="libssl-dev zlib1g-dev libdeflate-dev libjansson-dev libcmocka-dev libpng-dev
      libjpeg62-turbo-dev"
missing=""
for p in $tools; do
	installed "$p" || missing="$missing $p"
done
# The ARCH records of the -dev packages, in one apt-cache call (each call
# reads every package list: seconds).
records() {
	for p in "$@"; do echo "$p:$arch"; done | xargs apt-cache show --no-all-versions 2>/dev/null || true
}
# shellcheck disable=SC2086 # package names are words
recs=$(records $devs)
if [ -z "$updated" ] && { [ -n "$missing" ] || [ -z "$recs" ]; }; then
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	recs=$(records $devs)
fi
# Only a Multi-Arch: same package installs beside its native twin; any
# other would remove the amd64 one that the native build needs.
for p in $devs; do
	ma=$(printf '%s\n' "$recs" | awk -v p="$p" '
		/^Package: / { cur = substr($0, 10) }
		cur == p && /^Multi-Arch: / { print substr($0, 13); exit }')
	if [ "$ma" != same ]; then
		echo "$p:$arch is not Multi-Arch: same (${ma:-no such field}): installing it would" \
			"remove $p for $(dpkg --print-architecture); not installed" >&2
		exit 1
	fi
	installed "$p:$arch" || missing="$missing $p:$arch"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	# shellcheck disable=SC2086 # package names are words
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# ------------------------------------- build, library check, tests, reports
# shellcheck source=scripts/cross-test.sh
. scripts/cross-test.sh

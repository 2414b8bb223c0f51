#!/bin/sh
# scripts/cross-armhf.sh - nbgkit built for 32-bit Arm, hard float (armhf:
# the Cortex-A7 boards, Allwinner V853 / V851S with VIPLite 1.x) with
# Debian 12's cross toolchain, and its test suite run under qemu-arm.  As
# root (or with sudo) on Debian 12 it:
#
#  1. runs scripts/setup.sh (the native packages and build/);
#  2. installs the host tools (gcc-arm-linux-gnueabihf,
#     binutils-arm-linux-gnueabihf, libc6-dev-armhf-cross, qemu-user without
#     its binfmt recommendation, strace: all amd64 packages), and puts the
#     armhf libraries nbgkit needs into the overlay directory the cross file
#     names, WITHOUT adding armhf to dpkg: apt reads the armhf package lists
#     into a private directory (-o Dir::State::Lists=...), downloads the
#     .debs (apt-get download) and the script unpacks them (dpkg-deb -x).
#     No armhf package is ever installed, so nothing can replace a native
#     one, whatever its Multi-Arch field says;
#  3-6. the shared steps of scripts/cross-test.sh: build build-armhf/, check
#     the libraries nbg loads, meson test under qemu-arm (the suite quick by
#     default), and the comparison against the native nbg: reports, CPU
#     plans and the CPU backend's outputs.
#
# Environment as scripts/cross-aarch64.sh: NBG_CROSS_SUITES, NBG_CROSS_TESTS,
# NBG_CROSS_TIMEOUT_MULTIPLIER, NBG_CROSS_CPU, NBG_CROSS_SKIP_REPORTS.
# doc/cross.md says what it costs and which tests skip on a 32-bit build,
# and why.
set -eu
cd "$(dirname "$0")/.."

arch=armhf triplet=arm-linux-gnueabihf qemu=qemu-arm machine=ARM build=build-armhf
# shellcheck source=scripts/cross-start.sh
. scripts/cross-start.sh

# ---------------------------------------------------------------- packages
step "host tools for $arch"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=""
for p in gcc-$triplet binutils-$triplet libc6-dev-$arch-cross qemu-user strace; do
	installed "$p" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086 # package names are words
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# The armhf libraries: the -dev packages of the dependencies, their runtime
# libraries, and libc6 (the dynamic loader /lib/ld-linux-armhf.so.3 and
# libc) with libgcc_s.  Linking uses the toolchain's own libc
# (libc6-dev-armhf-cross); running uses these, through qemu-arm -L.
libs="libssl-dev libssl3 zlib1g-dev zlib1g libjansson-dev libjansson4 libcmocka-dev
      libcmocka0 libdeflate-dev libdeflate0 libpng-dev libpng16-16 libjpeg62-turbo-dev
      libjpeg62-turbo libc6 libgcc-s1"
step "$arch libraries into $overlay"
state=$overlay/.nbgkit/apt
$SUDO mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
apt_armhf() {
	$SUDO apt-get -q -o Dir::State::Lists="$state/lists" -o Dir::Cache="$state/cache" \
		-o APT::Architectures::="$arch" -o APT::Sandbox::User=root "$@"
}
# (the lists of an earlier run do when the mirror cannot be reached)
apt_armhf update -qq || [ -n "$(find "$state/lists" -name '*_Packages*' -print -quit)" ] || exit 1
# shellcheck disable=SC2086 # package names are words
vers=$(for p in $libs; do echo "$p:$arch"; done | xargs apt-cache -o Dir::State::Lists="$state/lists" \
	-o Dir::Cache="$state/cache" -o APT::Architectures::="$arch" show --no-all-versions |
	awk '/^Package: / { p = $2 } /^Version: / { print p, $2 }')
# The packages whose recorded version is not the lists', downloaded in one
# apt call (each call reads every list: seconds), then unpacked.
want=""
for p in $libs; do
	v=$(printf '%s\n' "$vers" | awk -v p="$p" '$1 == p { print $2; exit }')
	[ -n "$v" ] || { echo "no $arch package $p in the package lists" >&2; exit 1; }
	[ "$(cat "$overlay/.nbgkit/$p" 2>/dev/null)" = "$v" ] || want="$want $p:$arch"
done
if [ -n "$want" ]; then
	echo "downloading:$want"
	dl=$(mktemp -d)
	# shellcheck disable=SC2086 # package names are words
	(cd "$dl" && apt_armhf download -qq $want)
	for p in $want; do
		p=${p%:"$arch"}
		v=$(printf '%s\n' "$vers" | awk -v p="$p" '$1 == p { print $2; exit }')
		echo "unpacking $p:$arch $v into $overlay"
		$SUDO dpkg-deb -x "$dl/${p}_"*.deb "$overlay"
		echo "$v" | $SUDO tee "$overlay/.nbgkit/$p" >/dev/null
	done
	rm -rf "$dl"
fi
fix_overlay
# The emulated loader reads /etc/ld.so.cache, the overlay's or else the
# host's, whose entries (i386 ones under /lib32, say) it would try before
# its own directories.  An empty cache in the overlay is none: it searches
# /lib/arm-linux-gnueabihf and the rest, all in the overlay.
[ -e "$overlay/etc/ld.so.cache" ] || { $SUDO mkdir -p "$overlay/etc" && $SUDO touch "$overlay/etc/ld.so.cache"; }

# ------------------------------------- build, library check, tests, reports
# shellcheck source=scripts/cross-test.sh
. scripts/cross-test.sh

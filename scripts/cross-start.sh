# scripts/cross-start.sh - the start every cross build shares, sourced by
# scripts/cross-aarch64.sh and scripts/cross-armhf.sh before their package
# steps: the overlay directory and exe wrapper from the cross file, sudo
# when not root, the timed step() printer, and scripts/setup.sh (the native
# packages and build/, which the report comparison needs).
#
# The caller sets: triplet and qemu, from the checkout's root.
# shellcheck shell=sh disable=SC2154,SC2034 # triplet and qemu come from the caller; the rest is for it
crossfile=cross/$triplet.ini
overlay=$(sed -n "s/^overlay = '\(.*\)'\$/\1/p" "$crossfile")
[ -n "$overlay" ] || { echo "$crossfile names no overlay" >&2; exit 1; }
wrapper="$qemu -L $overlay"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
t0=$(date +%s)
step() { echo "== $(($(date +%s) - t0)) s: $*"; }

step "native packages and build (scripts/setup.sh)"
sh scripts/setup.sh >/dev/null

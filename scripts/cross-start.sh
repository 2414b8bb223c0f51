# scripts/cross-start.sh - the start every cross build shares, sourced by
# scripts/cross-aarch64.sh and scripts/cross-armhf.sh before their package
# steps: the overlay directory (armhf's; aarch64 has none) and exe wrapper
# from the cross file, sudo when not root, the timed step() printer,
# fix_overlay (for after the unpacking), and scripts/setup.sh (the native
# packages and build/, which the report comparison needs).
#
# The caller sets: triplet and qemu, from the checkout's root.
# shellcheck shell=sh disable=SC2154,SC2034 # triplet and qemu come from the caller; the rest is for it
crossfile=cross/$triplet.ini
overlay=$(sed -n "s/^overlay = '\(.*\)'\$/\1/p" "$crossfile")
wrapper="$qemu -L ${overlay:-/}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
t0=$(date +%s)
# Each step's line: the wall seconds since the start, and the CPU seconds of
# every program run so far (on a loaded machine, the wall time is the
# machine's; the CPU time is this script's).
# (times runs in this shell: in a $(...) subshell it would count none.)
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
step() {
	times >"$times_file"
	cpu=$(awk 'NR == 2 { gsub(/[ms]/, " "); printf "%d", $1 * 60 + $2 + $3 * 60 + $4 }' "$times_file")
	echo "== $(($(date +%s) - t0)) s, CPU $cpu s: $*"
}
# After the packages are unpacked into the overlay, and idempotent, so it
# runs every time: .pc files name /usr (prefix=/usr, or -L/usr/...,
# -I/usr/...), which becomes the overlay's; an absolute symlink (libz.so ->
# /lib/...) would leave the overlay (one already pointing into it is left).
fix_overlay() {
	for pc in "$overlay/usr/lib/$triplet/pkgconfig"/*.pc "$overlay/usr/share/pkgconfig"/*.pc; do
		[ -f "$pc" ] && $SUDO sed -i -e "s#^\([a-z_]*\)=/usr\(/\|\$\)#\1=$overlay/usr\2#" \
			-e "s#-\([IL]\)/usr/#-\1$overlay/usr/#g" "$pc"
	done
	find "$overlay" -type l -lname '/*' ! -lname "$overlay/*" | while IFS= read -r l; do
		$SUDO ln -sf "$overlay$(readlink "$l")" "$l"
	done
}

step "native packages and build (scripts/setup.sh)"
sh scripts/setup.sh >/dev/null

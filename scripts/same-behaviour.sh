#!/bin/sh
# scripts/same-behaviour.sh [REV] [CORPUS_DIR] - whether this checkout's nbg
# prints, draws and computes exactly what revision REV's does: for a change
# meant to leave behaviour alone (a restructuring, a speed-up).
#
# Builds REV (default HEAD, i.e. the last commit against the working tree)
# in a temporary worktree with the options of build/, builds build/ (this
# checkout, uncommitted changes included) and runs
# tests/check_cross_reports.sh with REV's nbg as the first binary and this
# one as the second, no emulator between:
#   - every report over every file (the corpus, the synthesized fuzz seeds,
#     the sample): inspect with every table, text and JSON, verify, ledger;
#   - file by file: graph as DOT and as SVG, map as SVG, weights --json;
#   - the CPU backend's plan of every file and the outputs of every model it
#     runs whole, on the same synthesized input;
# each the same bytes on stdout and stderr and the same exit code.
#
# Environment: NBG_CROSS_CPU (default all; cover: the cheapest models that
# execute every operation kind), NBG_CROSS_KEEP=DIR keeps what differs
# (tests/check_cross_reports.sh).  Exit 0 all the same, 1 something differs,
# 2 a build failed.  Takes some minutes: the CPU runs dominate.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-HEAD}
corpus=${2:-$root/../shared/corpus}
cd "$root"
git rev-parse --verify -q "$rev^{commit}" >/dev/null || {
	echo "same-behaviour.sh: $rev is not a revision of this repository" >&2
	exit 2
}
old=$(mktemp -d /tmp/nbg-same-XXXXXX)
trap 'git worktree remove --force "$old/src" >/dev/null 2>&1 || true; rm -rf "$old"' EXIT INT TERM
git worktree add -q --detach "$old/src" "$rev"

# The corpus path is given explicitly, so the old tree needs no ../shared.
echo "== building $rev ($(git rev-parse --short "$rev")) in $old/src/build"
if ! { meson setup "$old/src/build" "$old/src" --buildtype=debugoptimized \
	-Dfuzzers=true -Dpython=disabled >"$old/setup.log" 2>&1 &&
	meson compile -C "$old/src/build" nbg:executable nbg-fuzz-seeds >"$old/build.log" 2>&1; }; then
	tail -n 20 "$old/setup.log" "$old/build.log" >&2
	echo "same-behaviour.sh: $rev does not build" >&2
	exit 2
fi
echo "== building this checkout in build"
[ -d build ] || meson setup build --buildtype=debugoptimized -Dtests=true -Dfuzzers=true >/dev/null
meson compile -C build nbg:executable >/dev/null || { echo "same-behaviour.sh: build/ does not build" >&2; exit 2; }

NBG_CROSS_REPORTS=all NBG_CROSS_CPU=${NBG_CROSS_CPU:-all} MESON_EXE_WRAPPER= \
	sh tests/check_cross_reports.sh "$old/src/build/nbg" build/nbg "$corpus"

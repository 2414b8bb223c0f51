#!/bin/sh
# One command on a fresh Debian 12 machine (as root, or with sudo): installs
# what is missing, builds nbgkit, and runs the main job on the bundled sample.
#
# sh scripts/setup.sh --web also installs what the page in the browser needs
# (doc/web.md): emscripten, make and dpkg-dev to build it, Chromium for its
# tests, the npm packages web/package-lock.json pins (Graphviz for the
# browser, puppeteer-core, which downloads no browser); then builds it (sh
# web/build.sh, into build-web/site), so its tests run.
set -eu
cd "$(dirname "$0")/.."
web=0
for a in "$@"; do
	case $a in
	--web) web=1 ;;
	*) echo "usage: sh scripts/setup.sh [--web]" >&2; exit 2 ;;
	esac
done

# graphviz is only needed at run time, by `nbg graph --svg` and its test.
# python3-dev and python3-numpy build the Python package nbgkit (python/);
# python3-pytest runs its tests; python3-pip, python3-venv and
# python3-mesonpy (Debian's meson-python) are pip install . from the clone
# (doc/python.md); mypy checks its type stubs.
pkgs="build-essential meson ninja-build pkg-config libssl-dev libdeflate-dev zlib1g-dev
      libpng-dev libjpeg62-turbo-dev libjpeg-turbo-progs
      libjansson-dev libcmocka-dev clang lld libclang-rt-14-dev python3 python3-dev
      python3-numpy python3-pytest python3-yaml python3-protobuf python3-pip python3-venv
      python3-mesonpy mypy graphviz"
[ $web = 0 ] || pkgs="$pkgs emscripten make dpkg-dev chromium"
# node and npm from elsewhere (nodesource) do as well as Debian's
[ $web = 0 ] || command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

# The face photograph test cpu-int16 runs the v2 files on (meson option
# face_image, doc/testing.md): the NASA astronaut portrait (public domain)
# Debian ships as skimage/data/astronaut.png in python3-skimage.  Installing
# that package pulls some 160 others: its .deb alone is downloaded (apt-get
# download, into a temporary directory), that one file extracted and checked
# against its SHA-256 (as tests/tc_face.py pins it), and kept in
# /var/cache/nbgkit, outside the source tree, for every clone and build
# directory.  Optional: when it fails, the test skips those checks and says
# why (a run with CI=true or NBG_REQUIRE_CORPUS=1 fails instead).
face=/var/cache/nbgkit/astronaut.png
face_in_deb=./usr/lib/python3/dist-packages/skimage/data/astronaut.png
face_sha=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
if [ ! -f "$face" ]; then
	tmp=$(mktemp -d)
	# the package lists may be empty on a fresh machine that needed no
	# install above: one update, then the download again
	(cd "$tmp" && apt-get download -qq python3-skimage >/dev/null 2>&1) ||
		$SUDO apt-get update -qq || true
	if (cd "$tmp" && { ls python3-skimage_*.deb >/dev/null 2>&1 || apt-get download -qq python3-skimage; } &&
		dpkg-deb --fsys-tarfile python3-skimage_*.deb | tar -x "$face_in_deb") &&
		echo "$face_sha  $tmp/$face_in_deb" | sha256sum -c --status; then
		$SUDO mkdir -p "$(dirname "$face")"
		$SUDO cp "$tmp/$face_in_deb" "$face"
	else
		echo "note: $face could not be extracted from python3-skimage; cpu-int16 will skip its face checks"
	fi
	rm -rf "$tmp"
fi

# The Kaitai Struct compiler (JavaScript, from npm; no dependencies) for the
# test that decodes the corpus with doc/nbg_v2.ksy.  Optional: without node
# and npm, or when the install fails, that test is skipped and says why.
kaitai=build-tools/kaitai
if command -v npm >/dev/null 2>&1 &&
	[ ! -f "$kaitai/node_modules/kaitai-struct-compiler/package.json" ]; then
	npm install --silent --no-audit --no-fund --prefix "$kaitai" \
		kaitai-struct-compiler@0.11.0 kaitai-struct@0.11.0 ||
		echo "note: the Kaitai Struct compiler did not install; ksy-decode will skip"
fi

[ -d build ] || meson setup build --buildtype=debugoptimized -Dwerror=true -Dtests=true -Dfuzzers=true
meson compile -C build
echo "samples/sample.nb: a synthesized model (tests/sample_model.c), not a real one"
./build/nbg inspect samples/sample.nb
if [ $web = 1 ]; then
	(cd web && { npm ls --silent >/dev/null 2>&1 || npm ci --no-audit --no-fund --silent; })
	sh web/build.sh
fi

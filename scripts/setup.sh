#!/bin/sh
# One command on a fresh Debian 12 machine (as root, or with sudo): installs
# what is missing, builds nbgkit, and runs the main job on the bundled sample.
set -eu
cd "$(dirname "$0")/.."

# graphviz is only needed at run time, by `nbg graph --svg` and its test.
# python3-dev and python3-numpy build the Python package nbgkit (python/);
# python3-pytest runs its tests.
pkgs="build-essential meson ninja-build pkg-config libssl-dev libdeflate-dev zlib1g-dev
      libjansson-dev libcmocka-dev clang lld libclang-rt-14-dev python3 python3-dev
      python3-numpy python3-pytest python3-yaml python3-protobuf graphviz"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
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

[ -d build ] || meson setup build --buildtype=debugoptimized -Dwerror=true
meson compile -C build
echo "samples/sample.nb: a synthesized model (tests/sample_model.c), not a real one"
./build/nbg inspect samples/sample.nb

#!/bin/sh
# sh web/setup.sh: what the page (web/, doc/web.md) needs on Debian 12, as
# root or with sudo: emscripten and make to build it, dpkg-dev to unpack
# jansson's source package, Chromium for its tests; then the npm packages of
# web/package-lock.json (Graphviz for the browser, puppeteer-core) into
# node_modules in web/.  Installs only what is missing.  `sh scripts/setup.sh
# --web` runs it too.
set -eu
cd "$(dirname "$0")"
pkgs="emscripten make dpkg-dev chromium nodejs npm"
missing=""
for p in $pkgs; do
	# node and npm may come from elsewhere than Debian: take them as they are
	case $p in nodejs|npm) command -v "${p%js}" >/dev/null 2>&1 && continue ;; esac
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
# the versions package-lock.json pins; puppeteer-core downloads no browser
if ! npm ls --silent >/dev/null 2>&1; then
	npm ci --no-audit --no-fund --silent
fi

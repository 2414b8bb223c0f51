#!/bin/sh
# sh web/fetch-source.sh PACKAGE DIR: Debian's source package PACKAGE (the
# release this machine's apt knows) unpacked into DIR with its patches, through
# a private apt source list: the machine's apt configuration is left as it is.
set -eu
pkg=$1
dir=$2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
apt=$dir/apt-src
mkdir -p "$apt/lists/partial"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
echo "deb-src http://deb.debian.org/debian $codename main" > "$apt/sources.list"
opts="-o Dir::Etc::SourceList=$apt/sources.list -o Dir::Etc::SourceParts=$apt/none
      -o Dir::State::Lists=$apt/lists -o Debug::NoLocking=1"
apt-get $opts -qq update
cd "$dir"
apt-get $opts -qq source --download-only "$pkg"
# apt checked the files against the signed Sources index; dpkg-source has
# no keyring for the upload signature and would only warn about it
dpkg-source -x "$(ls "$pkg"_*.dsc | head -n 1)" >/dev/null 2>&1
rm -rf "$apt"

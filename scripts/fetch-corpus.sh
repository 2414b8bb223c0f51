#!/bin/sh
# scripts/fetch-corpus.sh [DIR] - downloads the real NBG files that the test
# suite 'corpus' reads: every file of tests/corpus/MANIFEST.tsv (the NBG
# files) and tests/corpus/META.tsv (the vendor's meta.json beside each v2
# file), each from its public repository at the commit named there, and
# checks each file's size and SHA-256 against the list.
#
# DIR defaults to ../shared/corpus beside the checkout, where the meson
# option corpus_dir looks by default; for another DIR configure the build
# with -Dcorpus_dir=DIR.  A new DIR is filled in DIR.partial and renamed
# only when every file is there and verified, so a failed run never leaves
# a half corpus for the tests to fail on; a second run resumes.  Files
# already in place with the right SHA-256 are kept.
#
# Exit 0 when every file is verified, 1 when one cannot be downloaded (no
# network, host unreachable, file gone) or does not match, 2 on usage.
#
# Environment (for mirrors and for tests/check_fetch_corpus.py):
#   NBG_CORPUS_URL           base URL, default https://raw.githubusercontent.com;
#                            a file's URL is BASE/REPO/COMMIT/PATH
#   NBG_CORPUS_MANIFEST_DIR  where MANIFEST.tsv and META.tsv are, default
#                            tests/corpus
#   NBG_FETCH_TIMEOUT        connect timeout in seconds, default 15
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
lists=${NBG_CORPUS_MANIFEST_DIR:-$src/tests/corpus}
base=${NBG_CORPUS_URL:-https://raw.githubusercontent.com}
timeout=${NBG_FETCH_TIMEOUT:-15}
me=fetch-corpus.sh

case "${1:-}" in
-h | --help)
	echo "usage: sh scripts/fetch-corpus.sh [DIR]   (default: $src/../shared/corpus)"
	exit 0 ;;
-*)
	echo "usage: sh scripts/fetch-corpus.sh [DIR]" >&2
	exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: sh scripts/fetch-corpus.sh [DIR]" >&2; exit 2; }
dest=${1:-$src/../shared/corpus}
dest=${dest%/}

die() {
	echo "$me: $*" >&2
	exit 1
}

command -v curl >/dev/null 2>&1 ||
	die "needs curl to download the corpus; install it (apt-get install curl) and run this again."
command -v sha256sum >/dev/null 2>&1 || die "needs sha256sum (coreutils) to check the files."
[ -r "$lists/MANIFEST.tsv" ] || die "cannot read the file list $lists/MANIFEST.tsv."

# The outermost directory this run creates (the staging directory, or a
# parent of it that did not exist): on failure it goes away if it holds no
# downloaded file.
made=
if [ -d "$dest" ]; then
	work=$dest
else
	work=$dest.partial
	made=$work
	while [ ! -d "$(dirname "$made")" ]; do made=$(dirname "$made"); done
	[ -d "$made" ] && made=
	mkdir -p "$work" || die "cannot create $work."
fi

cleanup() {
	[ -n "$made" ] || return 0
	find "$work" -name '*.part' -type f -exec rm -f {} + 2>/dev/null || true
	find "$made" -depth -type d -empty -exec rmdir {} \; 2>/dev/null || true
}

# Both lists, columns found by name: file sha256 bytes repo commit path.
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for list in "$lists/MANIFEST.tsv" "$lists/META.tsv"; do
	[ -r "$list" ] || continue
	awk -F'\t' -v list="$list" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
			  if (!c["file"] || !c["sha256"] || !c["bytes"] || !c["repo"] || !c["commit"] || !c["path"]) {
				  print list ": the header lacks one of file sha256 bytes repo commit path" > "/dev/stderr"
				  exit 1 }
			  next }
		NF { print $c["file"] "\t" $c["sha256"] "\t" $c["bytes"] "\t" $c["repo"] "\t" $c["commit"] "\t" $c["path"] }
	' "$list" >>"$rows" || die "cannot read the file list $list."
done

tab=$(printf '\t')
total=0 fetched=0 kept=0
while IFS=$tab read -r file sha bytes repo commit path; do
	total=$((total + 1))
	case $file in
	/* | *..* | "" | *[!A-Za-z0-9._/+-]*)
		cleanup
		die "refuses the file name '$file' in the list: only names inside DIR are allowed." ;;
	esac
	target=$work/$file
	if [ -f "$target" ] && [ "$(sha256sum <"$target" | cut -c1-64)" = "$sha" ]; then
		kept=$((kept + 1))
		continue
	fi
	mkdir -p "$(dirname "$target")"
	url=$base/$repo/$commit/$path
	part=$target.part
	if err=$(curl -fsS --connect-timeout "$timeout" --speed-limit 1024 --speed-time 30 \
		-o "$part" "$url" 2>&1); then
		rc=0
	else
		rc=$?
	fi
	if [ $rc -ne 0 ]; then
		rm -f "$part"
		cleanup
		host=${url#*://}
		host=${host%%/*}
		case $rc in
		5 | 6 | 7 | 28 | 35 | 60)
			die "cannot reach ${host:-the server} to download $file ($err). This machine has no route to the public repository the files come from: run it where the network reaches that host, or copy an existing corpus to $dest (or anywhere, and configure the build with -Dcorpus_dir=DIR)." ;;
		*)
			die "cannot download $file from $url ($err): the repository may no longer serve that commit; nothing was changed for this file." ;;
		esac
	fi
	got=$(sha256sum <"$part" | cut -c1-64)
	size=$(wc -c <"$part" | tr -d ' ')
	if [ "$got" != "$sha" ] || [ "$size" != "$bytes" ]; then
		rm -f "$part"
		cleanup
		die "$file from $url is $size bytes with SHA-256 $got, but the list says $bytes bytes with SHA-256 $sha: not the file the tests expect, so it was not kept."
	fi
	mv "$part" "$target"
	fetched=$((fetched + 1))
done <"$rows"

[ $total -gt 0 ] || { cleanup; die "the file list $lists/MANIFEST.tsv names no file."; }
cmp -s "$lists/MANIFEST.tsv" "$work/MANIFEST.tsv" || cp "$lists/MANIFEST.tsv" "$work/MANIFEST.tsv"
if [ "$work" != "$dest" ]; then
	mv "$work" "$dest" || die "cannot rename $work to $dest."
fi
abs=$(cd "$dest" && pwd -P)
echo "$me: $abs: $total files verified by SHA-256 ($fetched downloaded, $kept already there)"
if [ "$abs" != "$(cd "$src/.." && pwd -P)/shared/corpus" ]; then
	echo "$me: not the default corpus_dir: configure the build with -Dcorpus_dir=$abs"
fi

#!/bin/sh
# bench/run.sh - nbg's commands beside the tools that bound them, side by
# side in one run, as a table on standard output and as JSON.
#
#  1. Synthesized v2 files of 16 MiB, 256 MiB and 1 GiB (bench/mkfile.c: the
#     section mix of the public corpus's largest model), each pair timed in
#     interleaved rounds so that machine noise hits both alike (the reading
#     commands in rounds of their own, then the writing ones):
#       nbg verify FILE                vs  cat FILE >/dev/null   (reading the bytes)
#       nbg inspect --json FILE        vs  openssl dgst -sha256  (one SHA-256 pass)
#       nbg reemit FILE OUT            vs  cp FILE OUT && sync OUT
#       nbg reemit --no-readback ...   vs  the same
#     GB/s (10^9 file bytes per second of the median) shows whether the cost
#     is linear in the size.  A size under 256 MiB gets proportionally more
#     rounds (16 MiB: 16 times as many).  Every write (cp, reemit) is preceded,
#     untimed, by a file of the same size written with dd and removed
#     (bench/run.py, settle), so that no write pays for memory the command
#     before it freed.
#  2. The graph JSON's memory: nbg inspect --json --layers --operations
#     --patches on a file that is almost all records (bench_mkfile --records),
#     peak RSS over the file's size.
#  3. Per-file cost over a directory of small files, one process per file
#     (what a user's script does): nbg inspect and nbg verify beside cat, and
#     the vendor's inspector (nbinfo -a) when BENCH_NBINFO names it.
#  4. nbg corpus --jobs 1 vs --jobs 2 over BENCH_CORPUS_SMALL copies of the
#     sample (and the real files of BENCH_CORPUS, the directory named
#     BENCH_CORPUS_REPEAT times), so that a run is long beside its start.
#
# Peak RSS is GNU time's %M (ru_maxrss of the command's process tree; a
# mapped input's pages count).  The page cache is warm: every figure is CPU
# and memory work, except the sync, fsync and read-back of the writes.
#
# Usage: bench/run.sh [--quick] [BUILD_DIR]      (default: build)
#   --quick: 16 and 256 MiB, 3 rounds, 5000 record groups, 100 small files
#   (1000 for corpus; about a minute on an idle 2-core machine, the full run
#   about two).
#  5. MB/s per core of every SHA-256 and CRC-32 implementation libnbg can
#     use beside OpenSSL's, zlib's and ISA-L's (bench/bench_hash.c, on core 0).
# As on a CPU without SHA-NI: OPENSSL_ia32cap=':~0x20000000' makes openssl
# take its AVX2 code, and a BUILD_DIR configured with -Dsha256=portable
# gives nbg without the SHA instructions.
# Environment: BENCH_RUNS (5), BENCH_SIZES ("16 256 1024", MiB),
# BENCH_RECORDS (20000 record groups, about 19 MB), BENCH_SMALL (200 files),
# BENCH_CORPUS_SMALL (5000 files), BENCH_CORPUS_REPEAT (4),
# BENCH_CORPUS (a directory of real .nb files for sections 3 and 4),
# BENCH_NBINFO (the vendor's nbinfo), BENCH_DIR (where the files go, default
# ${TMPDIR:-/tmp}/nbg-bench), BENCH_JSON (default $BENCH_DIR/results.json).
set -eu
quick=0
if [ "${1:-}" = --quick ]; then
	quick=1
	shift
fi
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
work=${BENCH_DIR:-${TMPDIR:-/tmp}/nbg-bench}
if [ $quick = 1 ]; then
	runs=${BENCH_RUNS:-3} sizes=${BENCH_SIZES:-16 256} records=${BENCH_RECORDS:-5000}
	small=${BENCH_SMALL:-100} corpus_small=${BENCH_CORPUS_SMALL:-1000}
else
	runs=${BENCH_RUNS:-5} sizes=${BENCH_SIZES:-16 256 1024} records=${BENCH_RECORDS:-20000}
	small=${BENCH_SMALL:-200} corpus_small=${BENCH_CORPUS_SMALL:-5000}
fi
mkdir -p "$work"
meson compile -C "$build" nbg:executable tests/bench_mkfile tests/bench_hash >/dev/null
for mib in $sizes; do
	[ -s "$work/synth-$mib.nb" ] || "$build/tests/bench_mkfile" "$mib" "$work/synth-$mib.nb"
done
[ -s "$work/records-$records.nb" ] ||
	"$build/tests/bench_mkfile" --records "$records" "$work/records-$records.nb"
exec python3 "$src/bench/run.py" --nbg "$build/nbg" --work "$work" --runs "$runs" \
	--sizes "$sizes" --records "$work/records-$records.nb" --small "$small" \
	--corpus-small "$corpus_small" --corpus-repeat "${BENCH_CORPUS_REPEAT:-4}" \
	--sample "$src/samples/sample.nb" --corpus "${BENCH_CORPUS:-}" \
	--nbinfo "${BENCH_NBINFO:-}" --json "${BENCH_JSON:-$work/results.json}" \
	--bench-hash "$build/tests/bench_hash"

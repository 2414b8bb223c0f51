#!/bin/sh
# bench/run.sh - nbg's commands beside the tools that bound them, on
# synthesized v2 files of 16 MiB and 256 MiB (bench/mkfile.c: the section mix
# of the public corpus's largest model).  Five interleaved runs of each pair,
# so machine noise hits both alike:
#   nbg verify FILE          vs  cat FILE >/dev/null    (reading the bytes)
#   nbg inspect --json FILE  vs  openssl dgst -sha256   (one SHA-256 pass)
#   nbg reemit FILE OUT      vs  cp FILE OUT && sync OUT
# Prints medians, min-max, GB/s (10^9 bytes per second of the median) and the
# peak RSS of each command (GNU time's %M: ru_maxrss over the command's
# process tree), as a table on standard output and as JSON in $BENCH_JSON (default
# $WORK/results.json).  The page cache is warm: every figure is CPU and
# memory work, not the disk's speed, except the sync and fsync of the writes.
# Usage: bench/run.sh [BUILD_DIR]     (default: build)
# Environment: BENCH_RUNS (5), BENCH_SIZES ("16 256", MiB), BENCH_DIR (where
# the files go, default ${TMPDIR:-/tmp}/nbg-bench), BENCH_JSON.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
work=${BENCH_DIR:-${TMPDIR:-/tmp}/nbg-bench}
mkdir -p "$work"
meson compile -C "$build" nbg:executable tests/bench_mkfile >/dev/null
for mib in ${BENCH_SIZES:-16 256}; do
	[ -s "$work/synth-$mib.nb" ] || "$build/tests/bench_mkfile" "$mib" "$work/synth-$mib.nb"
done
exec python3 - "$build/nbg" "$work" "${BENCH_RUNS:-5}" "${BENCH_SIZES:-16 256}" \
	"${BENCH_JSON:-$work/results.json}" <<'PY'
import json, os, platform, statistics, subprocess, sys, time

nbg, work, runs, sizes, out_json = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(), sys.argv[5]

rss_file = os.path.join(work, "rss.txt")

def run(argv):
    """Wall seconds and peak RSS (KiB) of argv, stdout to /dev/null.  The RSS
    comes from GNU time (%M, the process tree's ru_maxrss): measured from
    Python it would include the interpreter's pages the child had before exec."""
    argv = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + argv
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        status = subprocess.call(argv, stdout=null)
        t = time.perf_counter() - t0
    if status != 0:
        sys.exit("bench: %s failed (%d)" % (" ".join(argv), status))
    with open(rss_file) as r:
        return t, int(r.read().split()[-1])

def pairs(f, o):
    return [
        ("verify", [nbg, "verify", f], "cat >/dev/null", ["cat", f]),
        ("inspect --json", [nbg, "inspect", "--json", f], "openssl dgst -sha256",
         ["openssl", "dgst", "-sha256", f]),
        ("reemit", [nbg, "reemit", f, o], "cp && sync",
         ["sh", "-c", 'cp "$0" "$1" && sync "$1"', f, o]),
    ]

results = []
for mib in sizes:
    f, o = os.path.join(work, "synth-%s.nb" % mib), os.path.join(work, "out-%s.nb" % mib)
    size = os.path.getsize(f)
    run(["cat", f])  # warm the page cache
    samples = {}
    for _ in range(runs):
        for name, argv, bname, bargv in pairs(f, o):
            for key, a in ((name, argv), (bname, bargv)):
                if os.path.exists(o):
                    os.unlink(o)
                samples.setdefault(key, []).append(run(a))
    if os.path.exists(o):
        os.unlink(o)
    for name, _, bname, _ in pairs(f, o):
        for key, base in ((name, bname), (bname, None)):
            ts = [t for t, _ in samples[key]]
            med = statistics.median(ts)
            results.append({
                "size_mib": int(mib), "bytes": size, "command": key, "baseline": base,
                "median_s": med, "min_s": min(ts), "max_s": max(ts),
                "gb_per_s": size / med / 1e9,
                "peak_rss_kib": max(r for _, r in samples[key]),
                "runs": runs})
    for r in results:
        if r["size_mib"] == int(mib) and r["baseline"]:
            b = next(x for x in results if x["size_mib"] == int(mib) and x["command"] == r["baseline"])
            r["ratio_to_baseline"] = r["median_s"] / b["median_s"]

load = os.getloadavg()
machine = {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                        if l.startswith("model name")), platform.processor()),
           "cores": os.cpu_count(), "kernel": platform.release(),
           "loadavg_at_end": [round(x, 2) for x in load]}
print("| size | command | median s | min–max s | GB/s | peak RSS MiB | × baseline |")
print("|---|---|---|---|---|---|---|")
for r in results:
    ratio = "%.2f× %s" % (r["ratio_to_baseline"], r["baseline"]) if r["baseline"] else ""
    print("| %d MiB | %s | %.4f | %.4f–%.4f | %.2f | %.1f | %s |" % (
        r["size_mib"], r["command"], r["median_s"], r["min_s"], r["max_s"], r["gb_per_s"],
        r["peak_rss_kib"] / 1024, ratio))
print("\n%s, %d cores, Linux %s; load average %.1f %.1f %.1f at the end; %d runs each, interleaved"
      % (machine["cpu"], machine["cores"], machine["kernel"], *load, runs))
with open(out_json, "w") as j:
    json.dump({"machine": machine, "results": results}, j, indent=2)
print("JSON: %s" % out_json)
PY

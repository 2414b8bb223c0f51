#!/usr/bin/env python3
"""How much faster `nbg corpus` is with two jobs than with one.

Times `nbg corpus --quiet --json --records FILE` with --jobs 1 and --jobs 2,
interleaved round by round so that load from other programs on the machine
hits both alike, over two sets:

  real   the real corpus directory, named REPEAT times on the command line
         (each PATH is walked on its own, so every file is measured REPEAT
         times: enough work for a stable time);
  small  COUNT synthesized files (copies of samples/sample.nb, 15,056 bytes,
         100 to a directory), built in a temporary directory and removed.

For each it prints the best and the median wall time of each job count, the
CPU time the runs used, and the speedup best(1) / best(2).  The machine's load
average is printed before and after: on a shared machine the speedup is only
as good as the second core is free.  It reports; it never fails on a time.

Usage: bench_corpus.py NBG SOURCE_ROOT CORPUS_DIR [ROUNDS] [COUNT] [REPEAT]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f'{" ".join(cmd)} exited {code}')
    return wall, ru.ru_utime + ru.ru_stime


def bench(name, nbg, paths, rounds, records):
    times = {1: [], 2: []}
    cpu = {1: [], 2: []}
    for r in range(rounds):
        for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
            wall, c = timed([nbg, 'corpus', '--quiet', '--json', '--records', records,
                             '--jobs', str(jobs)] + paths)
            times[jobs].append(wall)
            cpu[jobs].append(c)
    for jobs in (1, 2):
        print(f'{name:6} --jobs {jobs}: best {min(times[jobs]):7.3f} s, median '
              f'{statistics.median(times[jobs]):7.3f} s, CPU {statistics.median(cpu[jobs]):7.3f} s')
    speedup = min(times[1]) / min(times[2])
    med = statistics.median(times[1]) / statistics.median(times[2])
    print(f'{name:6} speedup --jobs 2 over --jobs 1: {speedup:.2f}x (best), {med:.2f}x (median)')
    return speedup


def main():
    nbg, root, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    count = int(sys.argv[5]) if len(sys.argv) > 5 else 5000
    repeat = int(sys.argv[6]) if len(sys.argv) > 6 else 4
    print(f'CPUs {os.cpu_count()}, load average before: {os.getloadavg()}')
    tmp = tempfile.mkdtemp(prefix='nbg-bench-corpus-')
    try:
        records = os.path.join(tmp, 'records.jsonl')
        if os.path.isdir(corpus):
            bench('real', nbg, [corpus] * repeat, rounds, records)
        else:
            print(f'real: {corpus} is absent, skipped')
        sample = open(os.path.join(root, 'samples', 'sample.nb'), 'rb').read()
        small = os.path.join(tmp, 'small')
        for i in range(count):
            d = os.path.join(small, f'd{i // 100:04d}')
            if i % 100 == 0:
                os.makedirs(d)
            with open(os.path.join(d, f'f{i:06d}.nb'), 'wb') as f:
                f.write(sample)
        bench('small', nbg, [small], rounds, records)
    finally:
        shutil.rmtree(tmp)
    print(f'load average after: {os.getloadavg()}')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""The measurements of bench/run.sh (which builds the files and calls this).

Every command is run with its output to /dev/null.  Wall time is measured
around the process; peak RSS comes from GNU time (%M), whose fork is small:
measured from Python, ru_maxrss would include the interpreter's pages the
child had before exec.  Pairs are interleaved round by round.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

NULL = open(os.devnull, 'wb')


def run(argv, rss_file=None):
    """Wall seconds and peak RSS (KiB, 0 without rss_file) of argv."""
    if rss_file:
        argv = ['/usr/bin/time', '-f', '%M', '-o', rss_file] + argv
    t0 = time.perf_counter()
    status = subprocess.call(argv, stdout=NULL, stderr=NULL)
    t = time.perf_counter() - t0
    if status != 0:
        sys.exit('bench: %s failed (%d)' % (' '.join(argv), status))
    if not rss_file:
        return t, 0
    with open(rss_file) as r:
        return t, int(r.read().split()[-1])


def summary(samples, size=None):
    ts = [t for t, _ in samples]
    med = statistics.median(ts)
    r = {'median_s': med, 'min_s': min(ts), 'max_s': max(ts), 'runs': len(ts),
         'peak_rss_kib': max(k for _, k in samples)}
    if size:
        r['bytes'] = size
        r['gb_per_s'] = size / med / 1e9
    return r


def rounds(cmds, runs, rss_file, before=None):
    """cmds: [(key, argv)]; every round runs each once, in order; before(key),
    when given, runs ahead of each, untimed."""
    samples = {}
    for _ in range(runs):
        for key, argv in cmds:
            if before:
                before(key)
            samples.setdefault(key, []).append(run(argv, rss_file))
    return samples


def settle(src, scratch):
    """Ahead of a timed write: a file of src's size written with dd and
    removed, then sync.  On a virtual machine whose freed memory goes back
    to the host, the first writer after a large file is removed can pay for
    faulting that memory in again: here, a write after cp's output was
    removed ran 3 to 5 times slower than one after dd's.  With this step
    every write starts from the same state, whichever command ran before."""
    subprocess.check_call(['dd', 'if=' + src, 'of=' + scratch, 'bs=8M', 'status=none'])
    os.unlink(scratch)
    os.sync()


def big_files(a, rss_file):
    """Section 1: each size, the commands beside their baselines."""
    out = []
    for mib in a.sizes.split():
        f = os.path.join(a.work, 'synth-%s.nb' % mib)
        o = os.path.join(a.work, 'out-%s.nb' % mib)
        size = os.path.getsize(f)
        run(['cat', f])  # warm the page cache
        pairs = [
            ('verify', [a.nbg, 'verify', f], 'cat >/dev/null'),
            ('inspect --json', [a.nbg, 'inspect', '--json', f], 'openssl dgst -sha256'),
            ('verify --sha256', [a.nbg, 'verify', '--sha256', f], 'openssl dgst -sha256'),
            ('reemit', [a.nbg, 'reemit', f, o], 'cp && sync'),
            ('reemit --no-readback', [a.nbg, 'reemit', '--no-readback', f, o], 'cp && sync'),
        ]
        base = {'cat >/dev/null': ['cat', f],
                'openssl dgst -sha256': ['openssl', 'dgst', '-sha256', f],
                'cp && sync': ['sh', '-c', 'cp "$0" "$1" && sync "$1"', f, o]}
        cmds = []
        for name, argv, b in pairs:
            if b not in [k for k, _ in cmds]:
                cmds.append((b, base[b]))
            cmds.append((name, argv))

        def clear(key=None):
            if os.path.exists(o):
                os.unlink(o)
            if key in writes:
                settle(f, os.path.join(a.work, 'settle.tmp'))
        writes = {'cp && sync'} | {n for n, _, b in pairs if b == 'cp && sync'}
        # Small files get more rounds: a run of a few milliseconds is noisy.
        runs = a.runs * max(1, (256 << 20) // size)
        # The commands that only read run in rounds of their own, before
        # the writes: the kernel's writeback and discard work that the
        # writes leave behind would take a core from the two-thread
        # commands (verify, inspect) and not from cat or openssl.
        samples = rounds([c for c in cmds if c[0] not in writes], runs, rss_file, clear)
        samples.update(rounds([c for c in cmds if c[0] in writes], runs, rss_file, clear))
        clear()
        for name, _, b in pairs:
            for key, bl in ((b, None), (name, b)):
                if any(r['command'] == key and r['set'] == '%s MiB' % mib for r in out):
                    continue
                r = dict(summary(samples[key], size), set='%s MiB' % mib, command=key,
                         baseline=bl)
                out.append(r)
        for r in out:
            if r['set'] == '%s MiB' % mib and r['baseline']:
                b = next(x for x in out if x['set'] == r['set'] and x['command'] == r['baseline'])
                r['ratio_to_baseline'] = r['median_s'] / b['median_s']
    return out


def records(a, rss_file):
    """Section 2: the graph JSON's peak memory per byte of file."""
    f = a.records
    size = os.path.getsize(f)
    argv = [a.nbg, 'inspect', '--json', '--layers', '--operations', '--patches', f]
    run(['cat', f])
    doc = subprocess.run(argv, stdout=subprocess.PIPE, check=True).stdout
    r = dict(summary(rounds([('x', argv)], a.runs, rss_file)['x'], size),
             set='records, %.1f MB' % (size / 1e6),
             command='inspect --json --layers --operations --patches', baseline=None,
             document_bytes=len(doc))
    r['rss_per_file_byte'] = r['peak_rss_kib'] * 1024 / size
    return [r]


def small_set(a, tmp, count, name='small'):
    """The small files: `count` copies of the sample."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    data = open(a.sample, 'rb').read()
    files = []
    for i in range(count):
        p = os.path.join(d, 'f%05d.nb' % i)
        with open(p, 'wb') as f:
            f.write(data)
        files.append(p)
    return d, files


def libcrypto():
    """The path of OpenSSL's libcrypto.so.3, or None."""
    out = subprocess.run(['ldconfig', '-p'], stdout=subprocess.PIPE, text=True).stdout
    return next((l.split('=>')[1].strip() for l in out.splitlines()
                 if 'libcrypto.so.3 ' in l and '=>' in l), None)


def per_file(a, name, files):
    """Section 3: one process per file, each command over all files per round.
    With libcrypto preloaded, nbg pays what linking OpenSSL would cost a
    process at its start (mapping and relocating the library; not the
    initialization OpenSSL would add at the first digest): the figure
    behind the choice of libnbg's own SHA-256 (doc/api.md)."""
    crypto = libcrypto()
    pre = dict(os.environ, LD_PRELOAD=crypto) if crypto else None
    cmds = [('cat', lambda f: ['cat', f], None),
            ('nbg verify', lambda f: [a.nbg, 'verify', f], None),
            ('nbg inspect', lambda f: [a.nbg, 'inspect', f], None)]
    if pre:
        cmds += [('nbg verify, libcrypto preloaded', lambda f: [a.nbg, 'verify', f], pre),
                 ('nbg inspect, libcrypto preloaded', lambda f: [a.nbg, 'inspect', f], pre)]
    if a.nbinfo:
        cmds.append(('nbinfo -a', lambda f: [a.nbinfo, '-a', f], None))
    samples = {}
    for _ in range(a.runs):
        for key, mk, env in cmds:
            t0 = time.perf_counter()
            for f in files:
                subprocess.call(mk(f), stdout=NULL, stderr=NULL, env=env)
            samples.setdefault(key, []).append(((time.perf_counter() - t0) / len(files), 0))
    out = []
    for key, _, _ in cmds:
        r = dict(summary(samples[key]), set='%s, %d files, per file' % (name, len(files)),
                 command=key, baseline=None if key == 'cat' else 'cat')
        out.append(r)
    for r in out:
        if r['baseline']:
            r['ratio_to_baseline'] = r['median_s'] / out[0]['median_s']
        if a.nbinfo and r['command'] == 'nbg inspect':
            nb = next(x for x in out if x['command'] == 'nbinfo -a')
            r['ratio_to_nbinfo'] = r['median_s'] / nb['median_s']
    return out


def corpus_jobs(a, name, paths, count, rss_file):
    """Section 4: nbg corpus with one job and with two."""
    mk = lambda j: [a.nbg, 'corpus', '--quiet', '--json', '--jobs', str(j)] + paths
    samples = rounds([('1', mk(1)), ('2', mk(2))], a.runs, rss_file)
    out = []
    for j in ('1', '2'):
        out.append(dict(summary(samples[j]), set='%s, %d files' % (name, count),
                        command='corpus --jobs %s' % j,
                        baseline=None if j == '1' else 'corpus --jobs 1'))
    out[1]['ratio_to_baseline'] = out[1]['median_s'] / out[0]['median_s']
    out[1]['speedup'] = out[0]['median_s'] / out[1]['median_s']
    return out


def hash_rates(a):
    """Section 5: MB/s per core of each SHA-256 and CRC-32 implementation
    (bench/bench_hash.c), pinned to core 0 where taskset is there."""
    if not a.bench_hash:
        return []
    argv = [a.bench_hash, '16', str(max(5, a.runs * 2 + 1))]
    if shutil.which('taskset'):
        argv = ['taskset', '-c', '0'] + argv
    return subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()


def real_files(d):
    files = []
    for root, _, names in os.walk(d):
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith('.nb')]
    return files


def table(results):
    print('| set | command | median s | min–max s | GB/s | peak RSS MiB | × baseline |')
    print('|---|---|---|---|---|---|---|')
    for r in results:
        ratio = ''
        if r.get('ratio_to_baseline') is not None:
            ratio = '%.2f× %s' % (r['ratio_to_baseline'], r['baseline'])
        if 'speedup' in r:
            ratio += ' (speedup %.2f×)' % r['speedup']
        if 'rss_per_file_byte' in r:
            ratio = 'peak RSS %.2f× the file; %.0f MB document' % (
                r['rss_per_file_byte'], r['document_bytes'] / 1e6)
        if 'ratio_to_nbinfo' in r:
            ratio += '; %.2f× nbinfo -a' % r['ratio_to_nbinfo']
        gbs = '%.2f' % r['gb_per_s'] if 'gb_per_s' in r else ''
        rss = '%.1f' % (r['peak_rss_kib'] / 1024) if r['peak_rss_kib'] else ''
        fmt = '%.4f' if r['median_s'] >= 0.01 else '%.6f'
        print(('| %s | %s | ' + fmt + ' | ' + fmt + '–' + fmt + ' | %s | %s | %s |') % (
            r['set'], r['command'], r['median_s'], r['min_s'], r['max_s'], gbs, rss, ratio))


def main():
    p = argparse.ArgumentParser()
    for k in ('nbg', 'work', 'sizes', 'records', 'sample', 'corpus', 'nbinfo', 'json',
              'bench-hash'):
        p.add_argument('--' + k, default='')
    p.add_argument('--runs', type=int, default=5)
    p.add_argument('--small', type=int, default=200)
    p.add_argument('--corpus-small', type=int, default=5000)
    p.add_argument('--corpus-repeat', type=int, default=4)
    a = p.parse_args()
    rss_file = os.path.join(a.work, 'rss.txt')
    t_start = time.monotonic()
    load_start = os.getloadavg()
    results = big_files(a, rss_file) + records(a, rss_file)
    tmp = tempfile.mkdtemp(prefix='nbg-bench-small-', dir=a.work)
    try:
        d, files = small_set(a, tmp, a.small)
        results += per_file(a, 'sample.nb copies', files)
        real = real_files(a.corpus) if a.corpus and os.path.isdir(a.corpus) else []
        if real:
            results += per_file(a, 'real corpus', real)
        # nbg corpus runs long enough that its start (one process, the
        # threads) is not what is timed: many small files, and the real
        # directory named several times over.
        d, files = small_set(a, tmp, a.corpus_small, 'corpus-small')
        results += corpus_jobs(a, 'sample.nb copies', [d], len(files), rss_file)
        if real:
            results += corpus_jobs(a, 'real corpus ×%d' % a.corpus_repeat,
                                   [a.corpus] * a.corpus_repeat,
                                   len(real) * a.corpus_repeat, rss_file)
    finally:
        shutil.rmtree(tmp)
    rates = hash_rates(a)
    load = os.getloadavg()
    machine = {'cpu': next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo')
                            if l.startswith('model name')), platform.processor()),
               'cores': os.cpu_count(), 'kernel': platform.release(),
               'sha_ni': any('sha_ni' in l for l in open('/proc/cpuinfo') if l.startswith('flags')),
               'loadavg_at_start': [round(x, 2) for x in load_start],
               'loadavg_at_end': [round(x, 2) for x in load],
               'seconds': round(time.monotonic() - t_start, 1),
               # OpenSSL's capability mask (OPENSSL_ia32cap=':~0x20000000'
               # hides SHA-NI from openssl; nbg's is its build's, -Dsha256)
               'openssl_ia32cap': os.environ.get('OPENSSL_ia32cap')}
    table(results)
    if rates:
        print('\nSHA-256 and CRC-32, one thread (bench/bench_hash.c):\n')
        print('\n'.join('    ' + l for l in rates))
    cap = machine['openssl_ia32cap']
    print('\n%s, %d cores%s, Linux %s; load average %.1f at the start, %.1f at the end; '
          '%d rounds; %.0f s' % (machine['cpu'], machine['cores'],
                                 (', SHA-NI' if machine['sha_ni'] else ', no SHA-NI') +
                                 (' (OPENSSL_ia32cap=%s)' % cap if cap is not None else ''),
                                 machine['kernel'], load_start[0], load[0], a.runs,
                                 machine['seconds']))
    with open(a.json, 'w') as j:
        json.dump({'machine': machine, 'results': results, 'hash_rates': rates}, j, indent=2)
    print('JSON: %s' % a.json)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""The command-line conventions: several files, tables that add to the
report, '-' for standard input and output, the known-target names and
--expect-target.

Expected values come from outside nbgkit where there is one: SHA-256 from
hashlib, re-emitted bytes against the file itself, targets from the
corpus MANIFEST.tsv (the value each file's source gives), XML from the
Python parser; elsewhere the check is that two routes to the same output
agree (a file read from a path and from standard input, one file alone
and among several, a table with and without the report).
--synthesized runs every check on the committed sample and files derived
from it here (any clone; the target is the word at offset 8 of the sample,
read here); --corpus runs the checks that need real files (a v1 file among
v2 ones, a real file re-emitted to standard output, every corpus file's
target against MANIFEST.tsv), exit 77 (skipped, with how to get the files)
when CORPUS_DIR is absent.
Usage: check_cli_io.py NBG SOURCE_ROOT --synthesized|--corpus CORPUS_DIR
"""
import hashlib
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import tc_corpus
from exe_wrapper import command

nbg, root, part, corpus = command(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
sample = os.path.join(root, 'samples', 'sample.nb')
sample_bytes = open(sample, 'rb').read()
bad = []
checks = 0


def run(*args, stdin=None, env=None, cwd=None):
    return subprocess.run([*nbg, *args], input=stdin, capture_output=True, cwd=cwd,
                          env=dict(os.environ, **(env or {})))


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        bad.append(what)


def text(r):
    return r.stdout.decode('utf-8', 'replace')


def stdin_reads():
    single = text(run('inspect', sample))
    r = run('inspect', '-', stdin=sample_bytes)
    check(r.returncode == 0 and text(r) == single.replace('NBG file: ' + sample, 'NBG file: -'),
          'inspect - differs from inspect FILE')
    sha = hashlib.sha256(sample_bytes).hexdigest()
    r = run('verify', '--sha256', '-', stdin=sample_bytes)
    check(r.returncode == 0 and text(r).startswith('-: OK v2') and sha in text(r),
          'verify -: %r' % text(r))
    r = run('ledger', '--json', '-', stdin=sample_bytes)
    check(r.returncode == 0 and json.loads(r.stdout)['sha256'] == sha,
          'ledger --json -: %r' % r.stdout[:200])
    r = run('diff', sample, '-', stdin=sample_bytes)
    check(r.returncode == 0, 'diff FILE - of the same bytes: exit %d' % r.returncode)
    r = run('reemit', '-', '-', stdin=sample_bytes)
    check(r.returncode == 0 and r.stdout == sample_bytes, 'reemit - -: not the same bytes')
    # one '-' only: the second finds standard input read already
    r = run('inspect', '-', '-', stdin=sample_bytes)
    check(r.returncode == 3 and text(r).count('NBG file: -') == 1 and
          b'standard input was read already' in r.stderr, 'inspect - -: %r' % r.stderr)
    # the bound, exactly: the file's size passes, one byte less fails
    n = len(sample_bytes)
    r = run('verify', '-', stdin=sample_bytes, env={'NBG_MAX_STDIN': str(n)})
    check(r.returncode == 0, 'NBG_MAX_STDIN=%d rejects a %d-byte input' % (n, n))
    r = run('inspect', '-', stdin=sample_bytes, env={'NBG_MAX_STDIN': str(n - 1)})
    check(r.returncode == 3 and (b'more than %d bytes' % (n - 1)) in r.stderr and
          b'NBG_MAX_STDIN' in r.stderr and not r.stdout,
          'over NBG_MAX_STDIN: exit %d %r' % (r.returncode, r.stderr))
    r = run('inspect', '-', stdin=sample_bytes, env={'NBG_MAX_STDIN': '4K'})
    check(r.returncode == 3 and b'more than 4096 bytes' in r.stderr, 'NBG_MAX_STDIN=4K')
    # a terminal is never read as a model, nor written a binary to
    master, slave = pty.openpty()
    r = subprocess.run([*nbg, 'inspect', '-'], stdin=slave, capture_output=True, timeout=30)
    check(r.returncode == 3 and b'standard input is a terminal' in r.stderr,
          'inspect - from a terminal: exit %d %r' % (r.returncode, r.stderr))
    r = subprocess.run([*nbg, 'reemit', sample, '-'], stdout=slave, stderr=subprocess.PIPE,
                       timeout=30)
    check(r.returncode == 2 and b'standard output is a terminal' in r.stderr,
          'reemit FILE - to a terminal: exit %d %r' % (r.returncode, r.stderr))
    os.close(master)
    os.close(slave)


def reemit_real():
    real = os.path.join(corpus, 'v2', 'face_detector_nbg_int16.nb')
    r = run('reemit', real, '-')
    check(r.returncode == 0 and r.stdout == open(real, 'rb').read(),
          'reemit of a corpus file to stdout is not the file')


def stdout_writes(tmp):
    r = run('reemit', sample, '-')
    check(r.returncode == 0 and r.stdout == sample_bytes and
          b'-> standard output: %d bytes' % len(sample_bytes) in r.stderr,
          'reemit FILE -: exit %d' % r.returncode)
    out = os.path.join(tmp, 'm.svg')
    r1, r2 = run('map', sample, '--svg', '-'), run('map', sample, '--svg', out)
    check(r1.returncode == 0 and r2.returncode == 0 and r1.stdout == open(out, 'rb').read(),
          'map --svg - differs from map --svg FILE')
    ET.fromstring(r1.stdout)
    r1, r2 = run('graph', sample, '--dot', '-'), run('graph', sample)
    check(r1.returncode == 0 and r1.stdout == r2.stdout, 'graph --dot - differs from graph')
    if shutil.which('dot'):
        out = os.path.join(tmp, 'g.svg')
        r1, r2 = run('graph', sample, '--svg', '-'), run('graph', sample, '--svg', out)
        check(r1.returncode == 0 and r2.returncode == 0 and
              r1.stdout == open(out, 'rb').read(), 'graph --svg - differs from --svg FILE')
        ET.fromstring(r1.stdout)
    else:
        print('note: graphviz absent, graph --svg - not checked')


def several_files(tmp, other):
    """The sample and `other` (a copy of the sample, or a real v1 file)."""
    a, b = text(run('inspect', sample)), text(run('inspect', other))
    r = run('inspect', sample, other)
    check(r.returncode == 0 and text(r) == a + '\n' + b, 'inspect A B is not A, blank, B')
    notnbg = os.path.join(tmp, 'not.nb')
    open(notnbg, 'wb').write(b'PK\x03\x04' + bytes(60))
    r = run('inspect', sample, notnbg, other)
    check(r.returncode == 1 and text(r) == a + '\n' + b and b'not.nb: bad-magic' in r.stderr,
          'inspect with an invalid file between: exit %d' % r.returncode)
    r = run('inspect', notnbg, '/nonexistent/x.nb', sample)
    check(r.returncode == 3 and text(r) == a, 'a missing file gives exit %d' % r.returncode)
    r = run('inspect', '--json', sample, notnbg, other)
    docs = json.loads(r.stdout)
    check(r.returncode == 1 and [d['valid'] for d in docs] == [True, False, True] and
          docs[0] == json.loads(run('inspect', '--json', sample).stdout) and
          docs[1]['error']['code'] == 'bad-magic', 'inspect --json A BAD B')
    # ledger: tables one after another, documents in one array
    la, lb = text(run('ledger', sample)), text(run('ledger', other))
    r = run('ledger', sample, other)
    check(r.returncode == 0 and text(r) == la + '\n' + lb, 'ledger A B')
    r = run('ledger', '--json', sample, other)
    check(r.returncode == 0 and json.loads(r.stdout) ==
          [json.loads(run('ledger', '--json', p).stdout) for p in (sample, other)],
          'ledger --json A B is not the array of the single documents')
    # map: one picture per file inside --svg DIR, named after the file
    d = os.path.join(tmp, 'maps')
    os.mkdir(d)
    r = run('map', sample, other, '--svg', d)
    want = sorted(['sample.svg', os.path.basename(other)[:-3] + '.svg'])
    check(r.returncode == 0 and sorted(os.listdir(d)) == want, 'map A B --svg DIR: %s'
          % os.listdir(d))
    single = os.path.join(tmp, 'single.svg')
    run('map', sample, '--svg', single)
    check(open(os.path.join(d, 'sample.svg'), 'rb').read() == open(single, 'rb').read(),
          'map into DIR differs from the single picture')
    r = run('map', sample, other, '--svg', os.path.join(tmp, 'x.svg'))
    check(r.returncode == 2 and not os.path.exists(os.path.join(tmp, 'x.svg')),
          'map A B --svg FILE: exit %d' % r.returncode)
    e = os.path.join(tmp, 'empty')
    os.mkdir(e)
    r = run('map', sample, sample, '--svg', e)
    check(r.returncode == 2 and not os.listdir(e) and b'both be drawn into' in r.stderr,
          'map A A --svg DIR: exit %d %s' % (r.returncode, os.listdir(e)))


def tables_add():
    report = text(run('inspect', sample))
    head = 'NBG file: %s\n' % sample
    for flags in (['--layers'], ['--operations'], ['--patches'], ['--commands'], ['--memory'],
                  ['--layers', '--patches', '--commands']):
        full, only = run('inspect', *flags, sample), run('inspect', '--only', *flags, sample)
        t, o = text(full), text(only)
        check(full.returncode == 0 and only.returncode == 0 and o.startswith(head) and
              len(o) > len(head) and t == report + o[len(head):],
              '%s is not the report followed by the --only tables' % ' '.join(flags))
    core = json.loads(run('inspect', '--json', sample).stdout)
    full = json.loads(run('inspect', '--json', '--layers', sample).stdout)
    only = json.loads(run('inspect', '--json', '--only', '--layers', sample).stdout)
    added = set(full) - set(core)
    check('layers' in added and all(full[k] == core[k] for k in core),
          '--json --layers does not keep the core report')
    check(set(only) == {'nbgkit_version', 'path'} | added and
          all(only[k] == full[k] for k in only), '--json --only --layers: %s' % list(only))
    r = run('inspect', '--only', sample)
    check(r.returncode == 2, '--only without a table: exit %d' % r.returncode)


def manifest():
    """{path: target} of every corpus file MANIFEST.tsv lists."""
    rows = {}
    path = os.path.join(corpus, 'MANIFEST.tsv')
    for line in open(path).read().splitlines()[1:]:
        f = line.split('\t')
        rows[os.path.join(corpus, f[0])] = int(f[4], 16)
    check(rows, '%s lists no file' % path)
    return rows


def targets(rows):
    """The target table, and each file of rows {path: target} against it."""
    r = run('targets', '--json')
    table = {t['target']: t for t in json.loads(r.stdout)}
    check(r.returncode == 0 and len(table) > 10, 'nbg targets --json')
    listing = text(run('targets'))
    for t in table.values():
        check('0x%08x  %-34s  %s' % (t['target'], t['config'] or 'unknown',
                                    t['soc'] or 'unknown') in listing,
              'nbg targets text lacks 0x%x' % t['target'])
    known = sorted(table)
    for path, target in sorted(rows.items()):
        check(os.path.exists(path), '%s is listed but absent' % path)
        if not os.path.exists(path):
            continue
        doc = json.loads(run('inspect', '--json', path).stdout)
        t = table.get(target)
        check(doc['target'] == target and doc['target_name'] == (t and t['config']) and
              doc['target_soc'] == (t and t['soc']),
              '%s: target %s / %s, MANIFEST 0x%x' % (path, doc['target'], doc['target_name'],
                                                    target))
        line = [ln for ln in text(run('inspect', path)).splitlines()
                if 'Target (product):' in ln][0]
        check(('0x%08x (' % target) in line and (not t or not t['config'] or
                                                  t['config'] in line), line)
        r = run('verify', '--expect-target', '0x%x' % target, path)
        check(r.returncode == 0, '%s: --expect-target its own target fails' % path)
        if t and t['config']:
            r = run('inspect', '--expect-target', t['config'].lower(), path)
            check(r.returncode == 0, '%s: --expect-target by name fails' % path)
        other = next(k for k in known if k != target)
        r = run('verify', '--expect-target', str(other), path)
        out = text(r)
        check(r.returncode == 1 and ': FAIL target-mismatch at offset 8:' in out and
              '0x%08x' % target in out and '0x%08x' % other in out and
              (table[other]['config'] or '') in out, '%s: mismatch line %r' % (path, out))


def targets_synthesized(tmp):
    # an unknown target, and the check made before the parse: a file whose
    # NN section is damaged fails on the target first
    b = bytearray(sample_bytes)
    b[8:12] = (0x15).to_bytes(4, 'little')
    unknown = os.path.join(tmp, 'unknown.nb')
    open(unknown, 'wb').write(b)
    doc = json.loads(run('inspect', '--json', unknown).stdout)
    check(doc['target'] == 0x15 and doc['target_name'] is None and doc['target_soc'] is None,
          'unknown target JSON %s' % doc.get('target_name'))
    check('0x00000015 (unknown target)' in text(run('inspect', unknown)), 'unknown target text')
    sub = int.from_bytes(b[0x18:0x1c], 'little')
    sh_off, sh_count = (int.from_bytes(b[sub + k:sub + k + 4], 'little') for k in (0, 8))
    for k in range(sh_count):
        d = sh_off + 44 * k
        if int.from_bytes(b[d:d + 4], 'little') == 7:  # NN, under a checksum record
            b[int.from_bytes(b[d + 4:d + 8], 'little') + 3] ^= 0x10
    damaged = os.path.join(tmp, 'damaged.nb')
    open(damaged, 'wb').write(b)
    r = run('inspect', '--json', '--expect-target', '0x1000003b', damaged)
    check(r.returncode == 1 and json.loads(r.stdout)['error']['code'] == 'target-mismatch' and
          json.loads(r.stdout)['error']['offset'] == 8, 'target not checked before the parse')
    r = run('inspect', '--json', '--expect-target', '0x15', damaged)
    check(r.returncode == 1 and json.loads(r.stdout)['error']['code'] != 'target-mismatch',
          'a matching target hides the damage')
    r = run('inspect', '--expect-target', 'NO_SUCH_CONFIG', sample)
    check(r.returncode == 2 and b'nbg targets' in r.stderr, 'unknown target name: usage')


with tempfile.TemporaryDirectory() as tmp:
    if part == '--corpus':
        tc_corpus.need('check_cli_io.py', 'real-file checks', corpus)
        reemit_real()
        v1dir = os.path.join(corpus, 'v1')
        several_files(tmp, os.path.join(v1dir, sorted(os.listdir(v1dir))[0]))
        targets(manifest())
    else:
        stdin_reads()
        stdout_writes(tmp)
        other = os.path.join(tmp, 'other.nb')
        shutil.copy(sample, other)
        several_files(tmp, other)
        tables_add()
        targets({sample: int.from_bytes(sample_bytes[8:12], 'little')})
        targets_synthesized(tmp)
for b in bad:
    print(b)
print('%d checks, %d problem(s)' % (checks, len(bad)))
sys.exit(1 if bad else 0)

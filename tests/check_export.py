#!/usr/bin/env python3
"""`nbg inspect --format meta|vpm|jevois` on every real file.

Expected values never come from nbgkit:
- meta: against the vendor compiler's own nbg_meta.json shipped beside each
  v2 file (corpus/v2/*.meta.json), input by input and output by output, in
  order: shape, dtype (unquantized), quantizer, qtype and fl (or scale and
  zero_point).  Names and ACUITY's `format`, `max_value` and `min_value` are
  not stored in an NBG (doc/export.md) and must be absent: the test says so.
- vpm and jevois, on every v1 and v2 file: each line is parsed with the
  grammar of doc/export.md (regular expressions written here), and every
  value is compared with the I/O records decoded here from the raw bytes
  (v2: section directory, 112-byte records; v1: entry table, 44/108/116-byte
  records, doc/format-v1.md).  The meta shapes and quantizers are checked
  against the same raw records on every file.
On any clone the same checks run on the files named (samples/sample.nb, no
vendor file beside it); with --corpus DIR on every real file of DIR/v2 and
DIR/v1, exit 77 (skipped, with how to get them) when DIR is absent.
Usage: check_export.py NBG --corpus CORPUS_DIR | NBG FILE...
"""
import glob
import json
import os
import re
import struct
import subprocess
import sys

import tc_corpus
from exe_wrapper import command

nbg, args = command(sys.argv[1]), sys.argv[2:]
if args[:1] == ['--corpus']:
    corpus = args[1]
    tc_corpus.need('check_export.py', 'real-file checks', corpus)
    files = sorted(glob.glob(os.path.join(corpus, 'v2', '*.nb'))) + \
        sorted(glob.glob(os.path.join(corpus, 'v1', '*.nb')))
else:
    files = args
bad = []


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def i32(b, o):
    return struct.unpack_from('<i', b, o)[0]


def record(dims, fmt, qf, w0, w1, w2, name):
    """One I/O record: dims in file order, the three quantization words raw
    (v2: the union's two words; v1: fl, scale, zero point)."""
    return {'dims': dims, 'fmt': fmt, 'qf': qf, 'w': (w0, w1, w2), 'name': name}


def v2_records(b):
    sub = u32(b, 0x18)
    sh_off, sh_size, sh_count = u32(b, sub), u32(b, sub + 4), u32(b, sub + 8)
    out = {1: [], 2: []}
    for k in range(sh_count):
        d = sh_off + k * sh_size
        typ = u32(b, d)
        off = u32(b, d + 4) | u32(b, d + 8) << 32
        size = u32(b, d + 12) | u32(b, d + 16) << 32
        if typ not in out:
            continue
        for r in range(off, off + size, 112):
            n = u32(b, r)
            dims = [u32(b, r + 4 + 4 * i) for i in range(n)]
            name = b[r + 0x30:r + 0x70].split(b'\0')[0]
            out[typ].append(record(dims, u32(b, r + 0x1c), u32(b, r + 0x24),
                                   b[r + 0x28:r + 0x2c], b[r + 0x2c:r + 0x30], None, name))
    return out[1], out[2]


def v1_records(b):
    version = u32(b, 4)
    m = 348 if version >= 0x10003 else 92
    e = m + 28 if version >= 0x10008 else m + 20
    sides = []
    for k, count in ((0, u32(b, 84)), (1, u32(b, 88))):
        off, size = u32(b, e + 8 * k), u32(b, e + 8 * k + 4)
        recs = []
        if count:
            stride = size // count
            nd = 6 if stride == 116 else 4
            q = 4 + 4 * nd
            for r in range(off, off + count * stride, stride):
                n = u32(b, r)
                dims = [u32(b, r + 4 + 4 * i) for i in range(n)]
                name = b[r + q + 24:r + q + 88].split(b'\0')[0] if stride > 44 else b''
                recs.append(record(dims, u32(b, r + q), u32(b, r + q + 8),
                                   b[r + q + 12:r + q + 16], b[r + q + 16:r + q + 20],
                                   b[r + q + 20:r + q + 24], name))
        sides.append(recs)
    return sides[0], sides[1]


def quant(rec, family):
    """(fl,) for dynamic fixed point, (scale f32 bytes, zero point) for
    affine, () otherwise."""
    w0, w1, w2 = rec['w']
    if rec['qf'] == 1:
        return (struct.unpack('<i', w0)[0],)
    if rec['qf'] == 2:
        scale, zp = (w0, w1) if family == 2 else (w1, w2)
        return (scale, struct.unpack('<i', zp)[0])
    return ()


def unescape(s):
    """doc/export.md: vpm names are printable ASCII with every other byte,
    ',' and backslash as \\xNN."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == '\\':
            if not re.fullmatch(r'x[0-9a-f]{2}', s[i + 1:i + 4]):
                raise ValueError('bad escape in %r' % s)
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        else:
            if s[i] in ',\\' or not ' ' <= s[i] <= '~':
                raise ValueError('unescaped %r in %r' % (s[i], s))
            out.append(ord(s[i]))
            i += 1
    return bytes(out)


def run(*args):
    return subprocess.run([*nbg, 'inspect', *args], capture_output=True)


def f32_bytes(text):
    # %.9g round-trips every float32
    return struct.pack('<f', float(text))


VPM = re.compile(r'(input|output) (\d+) dim((?: \d+)+), data_format=(\d+), quant_format=(\d+), '
                 r'name=([^,]*)(?:, dfp=(-?\d+)|, scale=([^,]+), zero_point=(-?\d+))?')


def check_vpm(path, ins, outs, family):
    r = run('--format', 'vpm', path)
    if r.returncode != 0:
        bad.append('%s: --format vpm exit %d: %s' % (path, r.returncode, r.stderr[:200]))
        return
    lines = r.stdout.decode('ascii').splitlines()
    want = [('input', i, x) for i, x in enumerate(ins)] + \
           [('output', i, x) for i, x in enumerate(outs)]
    if len(lines) != len(want):
        bad.append('%s: vpm has %d lines for %d records' % (path, len(lines), len(want)))
        return
    for line, (side, idx, rec) in zip(lines, want):
        m = VPM.fullmatch(line)
        if not m:
            bad.append('%s: vpm line breaks the grammar: %r' % (path, line))
            continue
        got_q = ()
        if m.group(7) is not None:
            got_q = (int(m.group(7)),)
        elif m.group(8) is not None:
            got_q = (f32_bytes(m.group(8)), int(m.group(9)))
        got = (m.group(1), int(m.group(2)), [int(d) for d in m.group(3).split()],
               int(m.group(4)), int(m.group(5)), unescape(m.group(6)), got_q)
        exp = (side, idx, rec['dims'], rec['fmt'], rec['qf'], rec['name'], quant(rec, family))
        if got != exp:
            bad.append('%s: vpm %s, raw bytes say %s' % (path, got, exp))


# JeVois element types from the public buffer-format enum (doc/format-v2.md,
# section 6): width in bits and kind; CHAR is a signed byte, BFP16 a 16-bit
# float, BOOL8 an unsigned byte.
JEVOIS_TYPE = {0: '32F', 1: '16F', 2: '8U', 3: '8S', 4: '16U', 5: '16S', 6: '8S', 7: '16F',
               8: '32S', 9: '32U', 10: '64S', 11: '64U', 12: '64F', 16: '8U'}
JEVOIS_LINE = re.compile(r'(intensors|outtensors): "(.*)"')
JEVOIS_TENSOR = re.compile(r'(8U|8S|16U|16S|16F|32U|32S|32F|64U|64S|64F):(\d+(?:x\d+)*)'
                           r'(?::DFP:(-?\d+)|:AA:([^:]+):(-?\d+))?')


def check_jevois(path, ins, outs, family):
    r = run('--format', 'jevois', path)
    if r.returncode != 0:
        bad.append('%s: --format jevois exit %d' % (path, r.returncode))
        return
    lines = r.stdout.decode('ascii').splitlines()
    if len(lines) != 2:
        bad.append('%s: jevois gives %d lines, not 2' % (path, len(lines)))
        return
    for line, key, recs in zip(lines, ('intensors', 'outtensors'), (ins, outs)):
        m = JEVOIS_LINE.fullmatch(line)
        if not m or m.group(1) != key:
            bad.append('%s: jevois line breaks the grammar: %r' % (path, line))
            continue
        specs = m.group(2).split(', ') if m.group(2) else []
        if len(specs) != len(recs):
            bad.append('%s: %s lists %d tensors for %d records' % (path, key, len(specs),
                                                                   len(recs)))
            continue
        for spec, rec in zip(specs, recs):
            t = JEVOIS_TENSOR.fullmatch(spec)
            if not t:
                bad.append('%s: jevois tensor breaks the grammar: %r' % (path, spec))
                continue
            got_q = ()
            if t.group(3) is not None:
                got_q = (int(t.group(3)),)
            elif t.group(4) is not None:
                got_q = (f32_bytes(t.group(4)), int(t.group(5)))
            got = (t.group(1), [int(d) for d in t.group(2).split('x')], got_q)
            exp = (JEVOIS_TYPE.get(rec['fmt']), rec['dims'][::-1], quant(rec, family))
            if got != exp:
                bad.append('%s: jevois %s, raw bytes say %s' % (path, got, exp))


def check_meta_raw(path, ins, outs, family):
    """The meta document's shapes and quantizers against the raw records."""
    r = run('--format', 'meta', path)
    if r.returncode != 0:
        bad.append('%s: --format meta exit %d: %s' % (path, r.returncode, r.stderr[:200]))
        return None
    doc = json.loads(r.stdout)
    for key, recs in (('Inputs', ins), ('Outputs', outs)):
        got = list(doc[key].values())
        if len(got) != len(recs):
            bad.append('%s: meta %s has %d entries for %d records' % (path, key, len(got),
                                                                      len(recs)))
            continue
        for g, rec in zip(got, recs):
            q = quant(rec, family)
            want_q = {1: 'dynamic_fixed_point', 2: 'asymmetric_affine'}.get(rec['qf'])
            ok = g['shape'] == rec['dims'][::-1] and g.get('quantizer') == want_q
            if ok and rec['qf'] == 1:
                ok = g['quantize']['fl'] == q[0]
            if ok and rec['qf'] == 2:
                ok = (f32_bytes(repr(g['quantize']['scale'])) == q[0] and
                      g['quantize']['zero_point'] == q[1])
            if not ok:
                bad.append('%s: meta %s entry %s, raw record %s' % (path, key, g, rec))
    return doc


ABSENT = ('format', 'max_value', 'min_value')


def check_meta_vendor(path, doc):
    """Against the vendor compiler's nbg_meta.json beside the file."""
    ref = json.load(open(path[:-3] + '.meta.json'))
    for key in ('Inputs', 'Outputs'):
        mine, theirs = list(doc[key].values()), list(ref[key].values())
        if len(mine) != len(theirs):
            bad.append('%s: %d %s, the vendor file %d' % (path, len(mine), key, len(theirs)))
            continue
        for i, (a, b) in enumerate(zip(mine, theirs)):
            where = '%s %s[%d]' % (os.path.basename(path), key, i)
            if a['shape'] != b['shape']:
                bad.append('%s: shape %s, vendor %s' % (where, a['shape'], b['shape']))
            if 'dtype' in b:
                if a.get('dtype') != b['dtype'] or 'quantizer' in a:
                    bad.append('%s: dtype %s, vendor %s' % (where, a.get('dtype'), b['dtype']))
                continue
            if a.get('quantizer') != b['quantizer']:
                bad.append('%s: quantizer %s, vendor %s' % (where, a.get('quantizer'),
                                                            b['quantizer']))
                continue
            qa, qb = a['quantize'], b['quantize']
            for k in ('qtype', 'fl', 'scale', 'zero_point'):
                if k in qb and qa.get(k) != qb[k]:
                    bad.append('%s: %s %s, vendor %s' % (where, k, qa.get(k), qb[k]))
            for k in ABSENT:
                if k in a or k in qa:
                    bad.append('%s: %s is not stored in an NBG but was written' % (where, k))
    return 1


if not files:
    bad.append('no NBG file to check')
vendor = 0
for path in files:
    b = open(path, 'rb').read()
    family = 2 if u32(b, 4) == 0x20000 else 1
    ins, outs = v2_records(b) if family == 2 else v1_records(b)
    check_vpm(path, ins, outs, family)
    check_jevois(path, ins, outs, family)
    doc = check_meta_raw(path, ins, outs, family)
    if doc is not None and family == 2 and os.path.exists(path[:-3] + '.meta.json'):
        vendor += check_meta_vendor(path, doc)

if args[:1] == ['--corpus'] and not vendor:
    bad.append('no vendor nbg_meta.json beside the v2 files of %s' % corpus)

# Several files: vpm blocks under "# NBG file:" comments, meta as one array,
# each equal to the single-file output.
two = (files * 2)[:2]
r = run('--format', 'vpm', *two)
blocks = r.stdout.decode().split('\n\n')
singles = [run('--format', 'vpm', p).stdout.decode() for p in two]
if r.returncode or len(blocks) != 2 or any(
        blk.rstrip('\n') != '# NBG file: %s\n%s' % (p, s.rstrip('\n'))
        for blk, p, s in zip(blocks, two, singles)):
    bad.append('vpm with two files: %r' % r.stdout[:300])
r = run('--format', 'meta', *two)
if r.returncode or json.loads(r.stdout) != [json.loads(run('--format', 'meta', p).stdout)
                                            for p in two]:
    bad.append('meta with two files is not the array of the single documents')

for b in bad:
    print(b)
print('%d files: vpm and jevois lines parsed and matched to the raw I/O records; '
      'meta against the raw records on all and against %d vendor nbg_meta.json files '
      '(names, format, max_value, min_value: not in an NBG, checked absent); %d problem(s)'
      % (len(files), vendor, len(bad)))
sys.exit(1 if bad else 0)

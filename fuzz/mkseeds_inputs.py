#!/usr/bin/env python3
"""fuzz/mkseeds_inputs.py NBG OUTDIR - the first seeds of the harnesses that
read what is not an NBG: tensor (.npy, text and raw tensor files behind the
16 bytes that choose the record), sample (sample.txt), manifest (sha256sum
manifests) and corpus_part (the parts `nbg corpus --json` writes, measured
here over files synthesized by nbg-fuzz-seeds).  Every byte is written by
this script or by nbg from synthesized files.  Written into
fuzz/out/corpus/HARNESS/, they are merged into the committed archive
fuzz/corpus/HARNESS.tar.gz by the next fuzz/run.sh of the harness.

    python3 fuzz/mkseeds_inputs.py build/nbg fuzz/out/corpus
"""
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

nbg, outdir = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))


def put(harness, name, data):
    d = os.path.join(outdir, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ------------------------------------------------------------ tensor

def head(kind, fmt, quant, fl=0, scale=0.5, zp=0, dims=(4, 3)):
    """The 16 bytes fuzz_tensor.c reads: kind, format, quantization, fl,
    scale word, zero point, dimension count, dimensions (value - 1)."""
    h = bytearray(16)
    h[0], h[1], h[2], h[3] = kind, fmt, quant, fl & 0xff
    h[4:8] = struct.pack('<f', scale)
    h[8] = zp & 0xff
    h[9] = len(dims) - 1
    for i, d in enumerate(dims):
        h[10 + i] = d - 1
    return bytes(h)


def npy(descr, shape, data, fortran=False, version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, 'True' if fortran else 'False',
        ''.join('%d, ' % s for s in shape) if len(shape) != 1 else '%d,' % shape[0])
    pre = 10 if version == 1 else 12
    total = pre + len(d) + 1
    pad = (total + 63) // 64 * 64 - total
    hdr = (d + ' ' * pad + '\n').encode()
    ln = struct.pack('<H', len(hdr)) if version == 1 else struct.pack('<I', len(hdr))
    return b'\x93NUMPY' + bytes([version, 0]) + ln + hdr + data


# record dims innermost first (4, 3): the shape outermost first is (3, 4)
f32 = struct.pack('<12f', *[i * 0.25 - 1 for i in range(12)])
put('tensor', 'npy-f4-u8-affine', head(0, 2, 2, scale=0.5, zp=10) + npy('<f4', (3, 4), f32))
put('tensor', 'npy-own-i16-dfp', head(0, 5, 1, fl=4) + npy('<i2', (3, 4), struct.pack('<12h', *range(-6, 6))))
put('tensor', 'npy-fortran', head(0, 5, 0) + npy('<i2', (3, 4), struct.pack('<12h', *range(12)), True))
put('tensor', 'npy-inner-order', head(0, 3, 0) + npy('|i1', (4, 3), bytes(range(12))))
put('tensor', 'npy-palindrome', head(0, 5, 0, dims=(1, 3, 3, 1)) +
    npy('<i2', (1, 3, 3, 1), struct.pack('<9h', *range(9)), True))
put('tensor', 'npy-f8-be', head(0, 0, 0) + npy('>f8', (3, 4), struct.pack('>12d', *range(12))))
put('tensor', 'npy-v2-f2', head(0, 1, 0) + npy('<f2', (12,), struct.pack('<12e', *range(12)), version=2))
put('tensor', 'npy-bool', head(0, 16, 0) + npy('|b1', (3, 4), bytes([0, 1] * 6)))
put('tensor', 'npy-i64-dfp', head(0, 10, 1, fl=-3) + npy('<f4', (3, 4), f32))
put('tensor', 'text-fp32', head(1, 0, 0) + ''.join('%.9g\n' % (i / 3) for i in range(12)).encode())
put('tensor', 'text-u8-affine', head(1, 2, 2, scale=0.25, zp=128) + b'0\n1.5\n-2\n3e1\nnan\ninf\n7\n8\n9\n10\n11\n12\n')
put('tensor', 'raw-u16', head(2, 4, 2, scale=0.125, zp=100) + struct.pack('<12H', *range(12)))
put('tensor', 'raw-bf16', head(2, 7, 0) + bytes(24))

# ------------------------------------------------------------ sample

put('sample', 'one', '# vpm_run sample\n[network]\n  ./a.nb  \n[input]\nin0.dat\n# between\n'
    'in1.tensor\n\n[golden]\ng0.dat\n[output]\nout0.dat\n')
put('sample', 'two', '[NETWORK]\nb.nb\n[Input]\nx.npy\n[network]\nc.nb\r\n[input]\r\ny.bin\r\n'
    '[output]\ndir/o.bin\n')
put('sample', 'bad-section', '[network]\na.nb\n[inputs]\nx\n')
put('sample', 'two-models', '[network]\na.nb\nb.nb\n[input]\nx\n')

# ------------------------------------------------------------ manifest

def line(name, data=None):
    d = hashlib.sha256((data or name).encode()).hexdigest()
    if any(c in name for c in '\\\n\r'):
        esc = name.replace('\\', '\\\\').replace('\n', '\\n').replace('\r', '\\r')
        return '\\%s  %s\n' % (d, esc)
    return '%s  %s\n' % (d, name)


put('manifest', 'plain', line('zoo/a.nb') + line('zoo/b c.nb') + line('x.nb').replace('  ', ' *'))
put('manifest', 'escaped', line('odd\\name\nx.nb') + line('cr\rname.nb'))
put('manifest', 'crlf', (line('a.nb') + line('b.nb')).replace('\n', '\r\n'))
put('manifest', 'malformed', line('a.nb') + 'not a manifest line\n' + 'ab' * 32 + '  \n' +
    '\\' + 'cd' * 32 + '  bad\\q\n')

# ------------------------------------------------------------ corpus_part

with tempfile.TemporaryDirectory() as tmp:
    seeds = os.path.join(tmp, 'seeds')
    tool = os.path.join(os.path.dirname(nbg), 'fuzz', 'nbg-fuzz-seeds')
    subprocess.run([tool, seeds], check=True, stdout=subprocess.DEVNULL)
    files = sorted(os.path.join(seeds, f) for f in os.listdir(seeds))
    v2 = [f for f in files if 'v1' not in os.path.basename(f)][:6]
    v1 = [f for f in files if 'v1' in os.path.basename(f)][:6]
    with open(os.path.join(tmp, 'bad.nb'), 'wb') as f:
        f.write(b'XXXX')
    for name, paths in (('v2', v2), ('v1', v1), ('mixed', v2[:2] + v1[:2] +
                                                  [os.path.join(tmp, 'bad.nb'),
                                                   os.path.join(tmp, 'absent.nb')])):
        r = subprocess.run([nbg, 'corpus', '--json', '--quiet'] + paths,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        put('corpus_part', name, r.stdout)
    doc = json.loads(r.stdout)
    doc['notes'] = {'a-made-up-note': 3}
    put('corpus_part', 'notes', json.dumps(doc, indent=2))

#!/usr/bin/env python3
"""doc/nbg_v2.ksy, the Kaitai Struct description of NBG v2, against nbgkit.

fields: the field table the .ksy declares (each type's -nbg-structure; each
  field's offset and width computed here from the sequence of Kaitai types,
  bit fields from their bit positions; its -nbg-name, -nbg-key and
  -nbg-alias) must equal, row for row, the library's field map
  (`nbg fields --json`) for every v2 structure: every v2 row described, no
  row invented.
decode: the Kaitai compiler (npm package kaitai-struct-compiler, runtime
  kaitai-struct, run by node) compiles the .ksy and the generated parser
  decodes the sample (--synthesized) or every v2 corpus file (--corpus,
  exit 77 with how to get them when CORPUS_DIR is absent); every header, sub-header,
  directory, I/O, NETWORK_INFO, memory, checksum, dynamic-I/O and graph
  record it reads must equal what `nbg inspect --json` reports: two
  independent decoders of the same bytes.  Exit 77 (skipped) with the
  reason when node, the packages or PyYAML are missing.
Usage: check_ksy.py fields NBG SOURCE_ROOT
       check_ksy.py decode NBG SOURCE_ROOT --synthesized|--corpus CORPUS_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import tc_corpus
from exe_wrapper import command

mode, nbg, root = sys.argv[1:4]
nbg = command(nbg)
part, corpus = (sys.argv[4:6] + ['--synthesized', ''])[:2]
if mode == 'decode' and part == '--corpus':
    tc_corpus.need('check_ksy.py', 'decoding the real files', corpus)
try:
    import yaml
except ImportError:
    print('SKIP: PyYAML is not installed (Debian: python3-yaml)')
    sys.exit(77)
ksy = yaml.safe_load(open(os.path.join(root, 'doc', 'nbg_v2.ksy')))
bad = []

WIDTH = {'u1': 1, 's1': 1, 'u2': 2, 's2': 2, 'u4': 4, 's4': 4, 'f4': 4, 'u8': 8, 's8': 8,
         'f8': 8}


def item_width(f):
    """Bytes one seq item takes, from its Kaitai type (fixed sizes only)."""
    if 'contents' in f:
        return len(f['contents'].encode() if isinstance(f['contents'], str) else f['contents'])
    n = f['size'] if 'size' in f and isinstance(f['size'], int) else WIDTH[f['type']]
    if f.get('repeat') == 'expr':
        n *= f['repeat-expr']
    return n


def rows_of_type(name, base):
    """(structure, offset, width, bits, name, key, alias) for a type's seq,
    starting at byte `base`; bit runs give their container's offset and
    width and each field's bit range (bit-endian le: first field lowest)."""
    t = ksy['types'][name]
    struct, out, off, bit, bit_start = t.get('-nbg-structure'), [], base, 0, None
    fields = t.get('seq', [])
    for i, f in enumerate(fields):
        m = re.fullmatch(r'b(\d+)', str(f.get('type', '')))
        if m:
            if bit_start is None:
                bit_start, bit = off, 0
            n = int(m.group(1))
            out.append([struct, bit_start, None, [bit, bit + n - 1], f.get('-nbg-name'),
                        f.get('-nbg-key'), f.get('-nbg-alias')])
            bit += n
            nxt = fields[i + 1] if i + 1 < len(fields) else None
            if not nxt or not re.fullmatch(r'b\d+', str(nxt.get('type', ''))):
                width = (bit + 7) // 8
                for r in out:
                    if r[2] is None:
                        r[2] = width
                off, bit_start = bit_start + width, None
            continue
        out.append([struct, off, item_width(f), None, f.get('-nbg-name'), f.get('-nbg-key'),
                    f.get('-nbg-alias')])
        off += item_width(f)
    # instances that read a bit-field type at a fixed position (the
    # attribute word, the preempt word)
    for inst in t.get('instances', {}).values():
        if isinstance(inst.get('pos'), int) and inst.get('type') in ksy['types'] and \
                ksy['types'][inst['type']].get('-nbg-structure') == struct:
            out += rows_of_type(inst['type'], base + inst['pos'])
    return out


def ksy_rows():
    rows = []
    for name, t in ksy['types'].items():
        if '-nbg-structure' not in t:
            continue
        # bit-field types reached through an instance are listed by it
        if any(f.get('type', '').startswith('b') and re.fullmatch(r'b\d+', f['type'])
               for f in t.get('seq', [])) and all(re.fullmatch(r'b\d+', str(f.get('type')))
                                                   for f in t['seq']):
            continue
        rows += rows_of_type(name, 0)
    return sorted((tuple(tuple(x) if isinstance(x, list) else x for x in r) for r in rows),
                  key=repr)


def check_fields():
    fm = json.loads(subprocess.run([*nbg, 'fields', '--json'], capture_output=True,
                                   check=True).stdout)
    lib = list((r['structure'], r['offset'], r['width'],
                  tuple(r['bits']) if 'bits' in r else None, r['public_name'], r['key'],
                  r.get('alias')) for r in fm if not r['structure'].startswith('v1_'))
    lib.sort(key=repr)
    mine = ksy_rows()
    for r in sorted(set(lib) - set(mine), key=repr):
        bad.append('field map row not in the .ksy: %s' % (r,))
    for r in sorted(set(mine) - set(lib), key=repr):
        bad.append('.ksy field not in the field map: %s' % (r,))
    if len(mine) != len(lib):
        bad.append('the .ksy declares %d fields, the field map has %d v2 rows'
                   % (len(mine), len(lib)))
    structs = sorted({r[0] for r in lib})
    print('%d v2 field-map rows in %d structures (%s), %d .ksy fields'
          % (len(lib), len(structs), ', '.join(structs), len(mine)))


def node_modules():
    for d in (os.environ.get('NBG_KAITAI_NODE_MODULES'),
              os.path.join(root, 'build-tools', 'kaitai', 'node_modules')):
        if d and os.path.isfile(os.path.join(d, 'kaitai-struct-compiler', 'package.json')) \
                and os.path.isdir(os.path.join(d, 'kaitai-struct')):
            return d
    return None


def words(b):
    return [int.from_bytes(bytes(b[i:i + 4]), 'little') for i in range(0, len(b), 4)]


def compare(path, k, n):
    """One file: the Kaitai decode k against nbg's report n (and tables t)."""
    t = json.loads(subprocess.run([*nbg, 'inspect', '--json', '--only', '--layers',
                                   '--operations', '--patches', path],
                                  capture_output=True, check=True).stdout)
    h, nh = k['header'], n['header']
    got = [h['version'], h['target'], h['crcSum'], h['declaredFileSize'], h['subHeaderOffset'],
           h['subHeaderSize'], h['subHeaderCount'], int(h['classBit']), h['reserved1'],
           h['reserved2'], h['reserved3']]
    want = [nh['version'], nh['target'], nh['crc32'], nh['declared_file_size'],
            nh['sub_header_offset'], nh['sub_header_size'], nh['sub_header_count'], nh['class'],
            nh['reserved']['class_word_reserved_bits'], nh['reserved']['reserved2'],
            nh['reserved']['reserved3']]
    diff = [('header', got, want)]
    s = k['subHeader']
    diff.append(('sub_header', [s['shOffset'], s['shSize'], s['shCount']],
                 list(n['sub_header'].values())))
    secs = {}
    got, want = [], []
    for d, ns in zip(k['directory'], n['sections']):
        secs[d['sdType']] = d
        got.append([d['sdType'], d['offset'], d['size'],
                    d['sdAddrLow'] + d['sdAddrHigh'] * 2 ** 32, d['sdAlignsize'], d['sdEntsize'],
                    [d['reserved1'], d['reserved2']]])
        want.append([ns['type'], ns['offset'], ns['size'], ns['load_address'], ns['alignment'],
                     ns['entry_size'], ns['reserved_words']])
    diff.append(('directory', got, want))
    for typ, key in ((1, 'inputs'), (2, 'outputs')):
        recs = secs[typ]['body']['records'] if typ in secs else []
        diff.append((key, [[r['dimCount'], r['dimSize'][:r['dimCount']], r['dataFormat'],
                            r['dataType'], r['quantFormat'], words(r['quantData']), r['name']]
                           for r in recs],
                     [[x['dimension_count'], x['dimensions'], x['data_format'], x['data_type'],
                       x['quantization']['format'], x['quantization']['raw_words'], x['name']]
                      for x in n[key]]))
    ni = secs[35]['body']
    ab = ni['attributeBits']
    diff.append(('network_info',
                 [ni['name'], ni['inputCount'], ni['outputCount'], ni['layerCount'],
                  ni['absOpCount'], ni['operationCount'], ni['coreCount'], ni['addressWidth'],
                  ni['attribute'], int(ab['changePpuParam']), ab['nnCmdSize'], ab['tpCmdSize'],
                  ab['supportDma'], ab['reserved'], sum(1 for w in ni['vsiReserved'] if w)],
                 [n['network_info']['name'], n['input_count'], n['output_count'],
                  n['layer_count'], n['absolute_operation_count'], n['operation_count'],
                  n['core_count'], n['address_width'], n['attribute'],
                  n['attribute_bits']['change_ppu_param'],
                  n['attribute_bits']['nn_command_size_code'],
                  n['attribute_bits']['tp_command_size_code'],
                  n['attribute_bits']['dma_support_code'], n['attribute_bits']['reserved'],
                  n['vsi_reserved']['nonzero_words']]))
    diff.append(('memory', [secs[37]['body']['memoryPoolBytes'] if 37 in secs else None,
                            secs[38]['body']['size'] if 38 in secs else None,
                            secs[39]['body']['size'] if 39 in secs else None],
                 [n['memory_pool_bytes'], n['vip_sram_bytes'], n['axi_sram_bytes']]))
    diff.append(('checksums', [[r['sdType'], r['checksumValue']]
                               for r in secs[40]['body']['records']] if 40 in secs else [],
                 [[c['section_type'], c['stored']] for c in n['section_checksums']]))
    dy = n['dynamic_io'] or {'entries': []}
    diff.append(('dynaio', [[e['offset'], e['size']] for e in secs[26]['body']['records']]
                 if 26 in secs else [], [[e['offset'], e['size']] for e in dy['entries']]))
    graph = ((3, 'layers', ['name', 'nodeId', 'operationCount', 'uid'],
              ['name', 'node_id', 'operation_count', 'uid']),
             (4, 'operations', ['type', 'index', 'layerId', 'stateId', 'patchIndex',
                                'patchCount', 'preemptWord', 'absOpId'],
              ['type', 'index', 'layer_id', 'state_id', 'patch_index', 'patch_count',
               'preempt_word', 'abs_op_id']),
             (10, 'patches', ['type', 'destOffset', 'sourceType', 'index', 'srcOffset',
                              'transformed', 'name'],
              ['type', 'dest_offset', 'source_type', 'index', 'src_offset', 'transformed',
               'name']),
             (9, 'sh_operations', ['instrIndex', 'ppuParamIndex'],
              ['instr_index', 'ppu_param_index']))
    for typ, key, kk, nk in graph:
        recs = secs[typ]['body']['records'] if typ in secs and secs[typ]['body'] else []
        diff.append((key, [[r.get(a) for a in kk] for r in recs],
                     [[x.get(b) for b in nk] for x in t[key]]))
    for table in t['tables']:
        if not table['decoded'] or table['table_type'] not in secs:
            continue
        recs = secs[table['table_type']]['body']['records']
        diff.append((table['name'], [[r['offset'], r['size']] for r in recs],
                     [[e['offset'], e['size']] for e in table['entries']]))
    for what, got, want in diff:
        if got != want:
            bad.append('%s: %s: kaitai %s, nbg %s' % (os.path.basename(path), what,
                                                      str(got)[:300], str(want)[:300]))
    return len(diff)


def check_decode():
    mods = node_modules()
    if not shutil.which('node') or not mods:
        print('SKIP: the Kaitai Struct compiler is not installed: needs node and the npm '
              'packages kaitai-struct-compiler and kaitai-struct (scripts/setup.sh puts them '
              'in build-tools/kaitai, or set NBG_KAITAI_NODE_MODULES)')
        sys.exit(77)
    if part == '--corpus':
        files = sorted(glob.glob(os.path.join(corpus, 'v2', '*.nb')))
    else:
        files = [os.path.join(root, 'samples', 'sample.nb')]
    if not files:
        bad.append('no v2 file in %s' % corpus)
        return
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump(ksy, f)
    try:
        r = subprocess.run(['node', os.path.join(root, 'tests', 'ksy_decode.js'), f.name,
                            *files], capture_output=True, env=dict(os.environ, NODE_PATH=mods))
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        bad.append('kaitai failed: %s' % r.stderr.decode()[:2000])
        return
    decoded = json.loads(r.stdout)
    groups = 0
    for path, k in zip(files, decoded):
        n = json.loads(subprocess.run([*nbg, 'inspect', '--json', path], capture_output=True,
                                      check=True).stdout)
        groups += compare(path, k, n)
    print('%d files decoded by the Kaitai parser, %d record groups compared with nbg'
          % (len(files), groups))


if mode == 'fields':
    check_fields()
else:
    check_decode()
for b in bad:
    print(b)
print('%d problem(s)' % len(bad))
sys.exit(1 if bad else 0)

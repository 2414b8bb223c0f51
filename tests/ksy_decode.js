// ksy_decode.js - compiles doc/nbg_v2.ksy (given as JSON) with the Kaitai
// Struct compiler and decodes each file with the generated parser; prints
// one JSON document: an array of the decoded files, every field and
// instance as the parser returns it (camelCase names, bytes as arrays).
// Usage: node ksy_decode.js KSY.json FILE...  (NODE_PATH: the node_modules
// holding kaitai-struct-compiler and kaitai-struct)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const compiler = require('kaitai-struct-compiler');
const KaitaiStream = require('kaitai-struct/KaitaiStream');

function dump(o, depth) {
  if (o === null || o === undefined || typeof o !== 'object') return o;
  if (o instanceof Uint8Array) return o.length <= 64 ? Array.from(o) : { bytes: o.length };
  if (Array.isArray(o)) return o.map(x => dump(x, depth + 1));
  if (depth > 8) return null;
  const out = { _type: o.constructor.name };
  for (const k of Object.keys(o))
    if (!k.startsWith('_')) out[k] = dump(o[k], depth + 1);
  const proto = Object.getPrototypeOf(o);
  for (const k of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, k);
    if (d && d.get) out[k] = dump(o[k], depth + 1);
  }
  return out;
}

const ksy = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
compiler.compile('javascript', ksy, null, false).then(files => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nbg-ksy-'));
  let Parser = null;
  for (const f in files) {
    fs.writeFileSync(path.join(dir, f), files[f]);
    Parser = require(path.join(dir, f)).NbgV2;
  }
  const out = process.argv.slice(3).map(p =>
    dump(new Parser(new KaitaiStream(fs.readFileSync(p))), 0));
  fs.rmSync(dir, { recursive: true });
  process.stdout.write(JSON.stringify(out));
}).catch(e => { console.error('kaitai: ' + (e && e.stack || e)); process.exit(1); });

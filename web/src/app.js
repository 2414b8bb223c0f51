/*
 * app.js - the page: a file dropped or picked is read in this page, handed
 * to libnbg (WebAssembly) in a Web Worker, and its reports are drawn with
 * DOM calls (render.js).  Nothing is sent anywhere.
 *
 * Each request to a worker has a time limit (?limit=MS in the page's URL,
 * default 20 s); past it the worker is ended, the page says so, and the
 * next request starts a new worker.  A run of the CPU backend keeps its
 * operations' outputs within ?keep=BYTES (256 MiB at most).  libnbg is the build with WebAssembly
 * SIMD where the browser validates a SIMD instruction, else (or with ?simd=0) the scalar build;
 * both compute the same bytes (web/web.mk).  window.nbgState tells a test driver
 * where the page is: {phase: 'idle'|'loading'|'report'|'done'|'error', ...}.
 */
'use strict';
/* global R, P, NBG_WORKER_SOURCE, NBG_WORKER_SIMD_SOURCE, VIZ_WORKER_SOURCE */

const params = new URLSearchParams(location.search);
const LIMIT_MS = Math.max(1, Number(params.get('limit')) || 20000);
/* The most bytes of a run's operation outputs kept (?keep=BYTES; the page
 * keeps 256 MiB at most, -1: that). */
const KEEP_BYTES = params.has('keep') ? Math.max(0, Number(params.get('keep')) || 0) : -1;

/* The NBG_JSON_DOC_* and NBG_GRAPH_JSON_* bits (include/nbg/report.h, graph.h). */
const DOC = { SUMMARY: 0x01, LAYERS: 0x02, OPERATIONS: 0x04, TABLES: 0x10, FINDINGS: 0x20,
	NO_CORE: 0x100, COMMANDS: 0x200, MEMORY: 0x400, NETWORK: 0x1000 };
const TABLES_WHAT = DOC.SUMMARY | DOC.LAYERS | DOC.OPERATIONS | DOC.TABLES | DOC.FINDINGS | DOC.MEMORY;

/* The largest file the page reads: the file and what the parse makes of it
 * live in the worker's WebAssembly memory, at most 2 GiB (web/web.mk). */
const MAX_FILE = 1 << 30;

class TimeLimit extends Error {}

/* One worker made from a script's text, restarted after a time limit. */
class Worker1 {
	constructor(source, what) {
		this.url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
		this.what = what;
		this.worker = null;
		this.next = 1;
		this.pending = new Map();
	}
	start() {
		if (this.worker)
			return this.worker;
		const w = new Worker(this.url);
		w.onmessage = (e) => {
			const p = this.pending.get(e.data.id);
			if (!p)
				return;
			this.pending.delete(e.data.id);
			clearTimeout(p.timer);
			if (e.data.fault)
				p.reject(new Error(e.data.fault));
			else
				p.resolve(e.data);
		};
		w.onerror = (e) => {
			e.preventDefault();
			this.stop(new Error(this.what + ' failed: ' + (e.message || 'worker error')));
		};
		this.worker = w;
		return w;
	}
	stop(err) {
		if (this.worker)
			this.worker.terminate();
		this.worker = null;
		for (const p of this.pending.values()) {
			clearTimeout(p.timer);
			p.reject(err);
		}
		this.pending.clear();
	}
	call(req, transfer) {
		const w = this.start();
		const id = this.next++;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => this.stop(new TimeLimit(
				this.what + ' was stopped after ' + (LIMIT_MS / 1000) + ' s: the file asks for ' +
				'more work than this page allows (the time limit is ?limit=MS in the address)')), LIMIT_MS);
			this.pending.set(id, { resolve, reject, timer });
			w.postMessage(Object.assign({ id: id }, req), transfer || []);
		});
	}
}

/* A module of one function, i32.const 0, i8x16.splat, i8x16.popcnt: valid
 * only where the browser has WebAssembly SIMD. */
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
	10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
const BUILD = params.get('simd') !== '0' && typeof NBG_WORKER_SIMD_SOURCE === 'string' &&
	WebAssembly.validate(SIMD_PROBE) ? 'simd' : 'scalar';
const BUILD_TEXT = BUILD === 'simd' ? 'WebAssembly with SIMD' : 'WebAssembly without SIMD';
const nbg = new Worker1(BUILD === 'simd' ? NBG_WORKER_SIMD_SOURCE : NBG_WORKER_SOURCE, 'libnbg');
const viz = new Worker1(VIZ_WORKER_SOURCE, 'Graphviz');

async function lib(req, transfer) {
	const answer = await nbg.call(req, transfer);
	return JSON.parse(answer.text);
}

/* The wrapped answers of nbg_web.c: {ok, text} or {ok: false, error}. */
async function libText(req) {
	const r = await lib(req);
	if (!r.ok)
		throw Object.assign(new Error(r.error.message), { nbg: r.error });
	return r.text;
}

const $ = (id) => document.getElementById(id);
const state = window.nbgState = { phase: 'idle', build: BUILD };
let current = null; /* {name, size, report, tables, dot, graphSvg, map, meta} */

function status(text, cls) {
	const s = R.clear($('status'));
	s.className = cls || '';
	s.appendChild(document.createTextNode(text));
}

function errorLine(err) {
	const e = err.nbg;
	return e ? e.code + (e.offset !== undefined ? ' at offset ' + e.offset : '') +
		(e.field ? ', field ' + e.field : '') + ': ' + e.message : String(err.message || err);
}

/* ------------------------------------------------------------ verdict */

function crcState(report, section) {
	const recs = (report.section_checksums || []).filter((c) => c.section_type === section.type);
	if (recs.length)
		return recs.map((c) => (c.matches ? 'matches' : 'MISMATCH') + ' (stored ' + R.hex(c.stored) +
			', computed ' + R.hex(c.computed) + ')').join('; ');
	return 'no stored CRC' + (typeof section.crc32 === 'number' ? ' (computed ' + R.hex(section.crc32) + ')' : '');
}

/* The headline of each integrity state (lib/format/parse.c names them);
 * the sentence under it is the library's own (integrity_detail). */
const VERDICTS = {
	'verified': 'Verified',
	'structure-only': 'Structure valid; no checksum to verify',
	'checksum-unknown': 'Structure valid; its checksum cannot be checked',
};

function showVerdict(parse, report, name) {
	const box = $('verdict-box'), v = $('verdict'), d = $('verdict-detail');
	const checks = R.clear($('checks'));
	checks.appendChild(R.el('caption', {}, 'What was checked'));
	R.clear(v);
	R.clear(d);
	if (!report) {
		box.className = 'verdict fail';
		v.textContent = 'Not a valid NBG: ' + parse.error.code;
		d.textContent = name + ': ' + errorLine({ nbg: parse.error });
		checks.appendChild(R.el('tr', {}, R.el('td', {}, 'The file was refused at byte offset ' +
			parse.error.offset + '; nothing after that failure is reported.')));
		return;
	}
	const unverified = parse.unverified;
	box.className = 'verdict ' + (unverified ? 'fail' : report.integrity === 'verified' ? 'ok' : 'partial');
	v.textContent = unverified ? 'Checksum mismatch: shown unverified' : VERDICTS[report.integrity] ||
		'Structure valid: ' + report.integrity;
	d.textContent = unverified ? name + ': ' + errorLine({ nbg: parse.error }) + '. Everything below is decoded from bytes whose checksum does not hold; no export is made from them.' :
		name + ': ' + report.integrity + ': ' + report.integrity_detail;
	const rows = [];
	rows.push(['structure', 'every rule of the format (header, directory, records, bounds)', 'holds']);
	for (const c of report.section_checksums || [])
		rows.push(['section ' + c.section_type_name + ' CRC-32', 'stored ' + R.hex(c.stored) + ', computed ' + R.hex(c.computed),
			c.matches ? 'matches' : 'MISMATCH']);
	const fc = report.file_checksum;
	if (fc)
		rows.push(['file checksum (' + fc.algorithm + ')', 'recorded ' + fc.recorded_crc32_hex + ', computed ' + fc.computed_crc32_hex +
			' over ' + fc.covered_section_bytes + ' section bytes', fc.matches ? 'matches' : 'MISMATCH']);
	if (report.v1 && report.v1.crc_sum)
		rows.push(['v1 crc_sum', R.text(report.v1.crc_sum), '']);
	rows.push(['SHA-256 of the file', report.sha256, 'computed (compare it with a published digest)']);
	const head = R.el('tr', {}, R.el('th', {}, 'check'), R.el('th', {}, 'evidence'), R.el('th', {}, 'result'));
	checks.appendChild(R.el('thead', {}, head));
	const body = R.el('tbody');
	for (const [what, ev, res] of rows)
		body.appendChild(R.el('tr', { class: /MISMATCH/.test(res) ? 'bad' : '' }, R.el('td', {}, what),
			R.el('td', { class: 'mono' }, ev), R.el('td', {}, res)));
	checks.appendChild(body);
}

/* ------------------------------------------------------------ report */

function ioRows(list, kind) {
	return (list || []).map((io) => {
		const q = io.quantization || {};
		let quant = q.format_name || '—';
		if (q.interpretation === 'affine')
			quant += ' scale ' + q.scale + ', zero point ' + q.zero_point;
		else if (q.interpretation === 'dynamic_fixed_point')
			quant += ' fixed-point position ' + q.fixed_point_position;
		return { kind: kind, index: io.index, name: io.name, shape: (io.dimensions_outermost_first || []).join('×'),
			format: io.data_format_name, type: io.data_type_name, quant: quant, bytes: io.byte_size };
	});
}

function showReport(r) {
	const out = R.clear($('report'));
	out.appendChild(R.pairs('t-header', 'Header', [
		['magic', r.magic], ['version', r.version_hex + ' (v' + r.family + ')'], ['file size', R.bytes(r.file_size)],
		['SHA-256', r.sha256], ['network name', r.network_name],
		['inputs / outputs', r.input_count + ' / ' + r.output_count], ['layers', r.layer_count],
		['operations', r.operation_count], r.core_count !== undefined ? ['cores', r.core_count] : null,
		['memory pool', R.bytes(r.memory_pool_bytes)], ['VIP SRAM', R.bytes(r.vip_sram_bytes)],
		['AXI SRAM', R.bytes(r.axi_sram_bytes)],
		r.header ? ['declared file size', R.bytes(r.header.declared_file_size)] : null,
		r.header ? ['header crc32', R.hex(r.header.crc32)] : null,
		r.sub_header ? ['directory', r.sub_header.section_header_count + ' entries of ' + r.sub_header.section_header_size +
			' bytes at offset ' + r.sub_header.section_headers_offset] : null]));
	out.appendChild(R.pairs('t-target', 'Target and SoC', [
		['target', R.hex(r.target) + (r.target_name ? ' ' + r.target_name : ' (unknown target)')],
		['SoC and runtime', r.target_soc || 'not in the target table'], ['product', R.hex(r.product)]]));
	out.appendChild(R.table('t-io', 'Inputs and outputs', [
		{ key: 'kind', title: 'record' }, { key: 'index', title: '#' }, { key: 'name', title: 'name' },
		{ key: 'shape', title: 'shape (outermost first)' }, { key: 'format', title: 'data format' },
		{ key: 'type', title: 'type' }, { key: 'quant', title: 'quantization' },
		{ key: 'bytes', title: 'bytes', fmt: (x) => R.bytes(x.bytes) }],
		ioRows(r.inputs, 'input').concat(ioRows(r.outputs, 'output'))));
	out.appendChild(R.table('t-sections', 'Sections', [
		{ key: 'index', title: '#' }, { key: 'type_name', title: 'type', fmt: (s) => s.type_name || R.text(s.type) },
		{ key: 'offset', title: 'offset' }, { key: 'size', title: 'size', fmt: (s) => R.bytes(s.size) },
		{ key: 'class', title: 'class' }, { key: 'crc', title: 'CRC-32', fmt: (s) => crcState(r, s),
			cls: (s) => /MISMATCH/.test(crcState(r, s)) ? 'bad' : '' }],
		r.sections || []));
	out.appendChild(R.table('t-notes', 'Notes and findings', [
		{ key: 'id', title: 'note' }, { key: 'offset', title: 'offset' }, { key: 'text', title: 'what' }],
		r.notes || []));
	filter();
}

function showTables(t) {
	const out = $('report');
	for (const id of ['t-layers', 't-operations', 't-findings']) {
		const old = document.getElementById(id);
		if (old)
			old.remove();
	}
	out.appendChild(R.table('t-layers', 'Layers', [
		{ key: 'record_index', title: '#' }, { key: 'name', title: 'name' }, { key: 'uid', title: 'uid' },
		{ key: 'operation_count', title: 'operations' }, { key: 'record_offset', title: 'record offset' }],
		t.layers || []));
	out.appendChild(R.table('t-operations', 'Operations', [
		{ key: 'record_index', title: '#' }, { key: 'type_name', title: 'type' },
		{ key: 'layer_id', title: 'layer', fmt: (o) => o.layer_id > 0xffff ? '—' : String(o.layer_id) },
		{ key: 'layer_name', title: 'layer name' }, { key: 'patch_count', title: 'patches' },
		{ key: 'record_offset', title: 'record offset' }], t.operations || []));
	out.appendChild(R.table('t-findings', 'Graph findings', [
		{ key: 'id', title: 'finding', fmt: (f) => R.text(f.id || f.rule || f.kind) },
		{ key: 'offset', title: 'offset' }, { key: 'text', title: 'what', fmt: (f) => R.text(f.text || f.message) }],
		t.graph_findings || []));
	showMemory(t.memory);
	filter();
}

function showMemory(m) {
	const out = R.clear($('memory'));
	if (!m) {
		out.appendChild(R.el('p', {}, 'No memory analysis for this file.'));
		return;
	}
	const figs = Object.entries(m.figures || {}).map(([k, f]) => Object.assign({ key: k }, f));
	out.appendChild(R.el('p', {}, 'Layout: ' + R.text(m.layout) + '. Each figure is what a runtime needs, with the rule it follows and its evidence; "vendor" is the value the vendor inspector prints, "exact" the bytes themselves.'));
	out.appendChild(R.table('t-memory', 'Memory a runtime needs', [
		{ key: 'label', title: 'figure', fmt: (f) => '\u2003'.repeat(f.depth || 0) + f.label },
		{ key: 'vendor_bytes', title: 'vendor', fmt: (f) => R.bytes(f.vendor_bytes) },
		{ key: 'exact_bytes', title: 'exact', fmt: (f) => R.bytes(f.exact_bytes) },
		{ key: 'from_file', title: 'from the file' }, { key: 'evidence', title: 'evidence' },
		{ key: 'rule', title: 'rule' }], figs));
	const sh = m.sharing;
	if (sh)
		out.appendChild(R.pairs('t-memory-sharing', 'Can the inputs and outputs share the memory pool?', [
			['verdict', sh.verdict], ['evidence', sh.evidence], ['pool bytes', R.bytes(sh.pool_bytes)],
			['allocation', R.bytes(sh.allocation)], ['conflicts', sh.conflicts_total]]));
	const layers = m.layers || [];
	const ranked = (m.largest_layers || []).map((i) => layers.find((l) => l.layer === i)).filter((l) => l);
	out.appendChild(R.table('t-memory-layers', 'Largest layers', [
		{ key: 'layer', title: '#' }, { key: 'name', title: 'layer' }, { key: 'operations', title: 'operations' },
		{ key: 'coefficient_bytes', title: 'coefficients', fmt: (l) => R.bytes(l.coefficient_bytes) },
		{ key: 'command_bytes', title: 'commands', fmt: (l) => R.bytes(l.command_bytes) },
		{ key: 'instruction_bytes', title: 'instructions', fmt: (l) => R.bytes(l.instruction_bytes) },
		{ key: 'total_bytes', title: 'total', fmt: (l) => R.bytes(l.total_bytes) }], ranked));
}

/* Search: rows of the report's tables whose text does not hold the query are hidden. */
function filter() {
	const q = $('search').value.trim().toLowerCase();
	let shown = 0, all = 0;
	for (const tr of document.querySelectorAll('#report tbody tr')) {
		all++;
		const hit = !q || tr.textContent.toLowerCase().includes(q);
		tr.hidden = !hit;
		shown += hit ? 1 : 0;
	}
	$('search-count').textContent = q ? shown + ' of ' + all + ' rows' : '';
}

/* ------------------------------------------------------------ pictures */

function place(box, svg) {
	R.clear(box);
	box.appendChild(svg);
	box.dataset.zoom = '1';
	const w = parseFloat(svg.getAttribute('width')) || 800;
	svg.dataset.width = String(w);
	svg.style.width = w + 'px';
	svg.style.height = 'auto';
}

function zoom(box, how) {
	const svg = box.querySelector('svg');
	if (!svg)
		return;
	let z = parseFloat(box.dataset.zoom) || 1;
	const w = parseFloat(svg.dataset.width) || 800;
	/* the point at the middle of the view stays there */
	const cx = (box.scrollLeft + box.clientWidth / 2) / (w * z), cy = (box.scrollTop + box.clientHeight / 2) / svg.clientHeight;
	if (how === 'in')
		z *= 1.25;
	else if (how === 'out')
		z /= 1.25;
	else if (how === 'one')
		z = 1;
	else if (how === 'readable')
		/* the whole width where its text stays readable, else 1:1 */
		z = (box.clientWidth - 8) / w < READABLE ? 1 : Math.min(4, (box.clientWidth - 8) / w);
	else
		z = Math.min(4, (box.clientWidth - 8) / w);
	box.dataset.zoom = String(z);
	svg.style.width = (w * z) + 'px';
	if (how === 'in' || how === 'out' || how === 'one') {
		box.scrollLeft = cx * w * z - box.clientWidth / 2;
		box.scrollTop = cy * svg.clientHeight - box.clientHeight / 2;
	}
	if (box.id === 'graph')
		minimapView();
}

/* The smallest scale at which the network's 10-point labels stay readable. */
const READABLE = 0.8;

async function showMap() {
	const box = $('map');
	try {
		current.map = await libText({ op: 'map', slot: 0, name: current.name });
		place(box, R.svg(current.map));
		box.onmouseover = (e) => {
			const t = e.target.closest ? e.target.closest('rect,polygon,path') : null;
			const title = t && t.querySelector('title');
			$('map-owner').textContent = title ? title.textContent : '';
		};
	} catch (err) {
		R.clear(box).appendChild(R.el('p', { class: 'error' }, 'No byte map: ' + errorLine(err)));
	}
}

/* ------------------------------------------------------------ weights */

/* Blank lines added to a node's label before the layout: the room its
 * histograms (or its streams' status) are drawn in (one more: Graphviz
 * drops the empty line after a label's last newline). */
const HIST_LINES = 5, STATUS_LINES = 1;

/* The DOT of `nbg graph` with room in the box of each node that has a kernel
 * stream; the DOT itself (exported as it is) is not changed. */
function roomyDot(dot, ops) {
	const lines = new Map();
	for (const o of P.streams(ops))
		lines.set(o.node, (lines.get(o.node) || 0) + (o.histogram ? HIST_LINES : STATUS_LINES));
	return dot.replace(/^( {2}([A-Za-z]+[0-9]+) \[label="(?:[^"\\]|\\.)*)"/gm,
		(m, head, node) => (lines.has(node) ? head + '\\n'.repeat(lines.get(node) + 1) + '"' : m));
}

/* The histogram of one stream: a bar per value of (code - zero point), its
 * count in a data attribute and a tooltip. */
function histogram(o, x, y, w, h) {
	const hist = o.histogram, n = hist.counts.length;
	const g = R.svgEl('g', { class: 'histogram', 'data-node': o.node, 'data-operation': o.operation,
		'data-operations': (o.tiles || [o.operation]).join(' '), 'data-lo': hist.lo, 'data-zero-point': o.zero_point });
	const top = Math.max(1, ...hist.counts), bw = w / n;
	g.appendChild(R.svgEl('title', {}, 'weights of ' + P.tilesText(o) + ': stored code minus zero point ' +
		o.zero_point + ', from ' + hist.lo + ' to ' + (hist.lo + (n - 1) * (hist.width || 1))));
	g.appendChild(R.svgEl('rect', { x: x, y: y, width: w, height: h, fill: '#fff', stroke: '#9ab' }));
	hist.counts.forEach((c, i) => {
		const bh = c ? Math.max(0.5, (h - 2) * c / top) : 0;
		const r = R.svgEl('rect', { class: 'bin', x: x + i * bw, y: y + h - 1 - bh, width: Math.max(bw, 0.3), height: bh,
			fill: hist.lo + i * (hist.width || 1) === 0 ? '#c77' : '#357', 'data-value': hist.lo + i * (hist.width || 1), 'data-count': c });
		r.appendChild(R.svgEl('title', {}, (hist.lo + i * (hist.width || 1)) + ': ' + c));
		g.appendChild(r);
	});
	const zero = -hist.lo / (hist.width || 1);
	if (zero >= 0 && zero < n)
		g.appendChild(R.svgEl('line', { x1: x + (zero + 0.5) * bw, x2: x + (zero + 0.5) * bw, y1: y, y2: y + h,
			stroke: '#c77', 'stroke-width': 0.5, 'stroke-dasharray': '2,1' }));
	return g;
}

/* The bounding box of a node's outline from its coordinates (Graphviz
 * writes absolute ones): the picture may be in a hidden tab, where the
 * browser measures nothing. */
function outline(shape) {
	const v = (shape.getAttribute('points') || shape.getAttribute('d') || '').match(/-?[0-9.]+(e-?[0-9]+)?/g) || [];
	const xs = [], ys = [];
	for (let i = 0; i + 1 < v.length; i += 2) {
		xs.push(parseFloat(v[i]));
		ys.push(parseFloat(v[i + 1]));
	}
	const x = Math.min(...xs), y = Math.min(...ys);
	return { x: x, y: y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

/* Draws each operation's histogram, or its status, in the room roomyDot made
 * at the bottom of its node's box. */
function drawWeights(svg, ops) {
	const byNode = new Map();
	for (const o of P.streams(ops))
		byNode.set(o.node, (byNode.get(o.node) || []).concat([o]));
	for (const g of svg.querySelectorAll('g.node')) {
		const title = g.querySelector('title');
		const mine = title && byNode.get(title.textContent);
		const shape = g.querySelector('path,polygon');
		if (!mine || !shape)
			continue;
		const box = outline(shape);
		const texts = Array.from(g.querySelectorAll('text'));
		/* the last line's baseline, and its descent */
		let y = texts.length ? Math.max(...texts.map((t) => parseFloat(t.getAttribute('y')) || box.y)) + 3 : box.y + 4;
		const room = box.y + box.height - 4 - y;
		const units = mine.reduce((a, o) => a + (o.histogram ? HIST_LINES : STATUS_LINES), 0);
		for (const o of mine) {
			const h = room * (o.histogram ? HIST_LINES : STATUS_LINES) / units;
			if (o.histogram)
				g.appendChild(histogram(o, box.x + 8, y + 1, box.width - 16, h - 2));
			else {
				const t = R.svgEl('text', { class: 'weights-status', x: box.x + box.width / 2, y: y + h - 3,
					'text-anchor': 'middle', 'font-size': 9, 'font-family': 'Courier', fill: '#a33',
					'data-node': o.node, 'data-operation': o.operation, 'data-operations': o.tiles.join(' ') },
				'weights: ' + o.status + ' (' + o.reason_id + ')');
				t.appendChild(R.svgEl('title', {}, P.tilesText(o) + ': ' + o.reason));
				g.appendChild(t);
			}
			y += h;
		}
	}
}

/* Under the picture: every NN operation's line of `nbg weights`, and the
 * reason of each stream that did not decode. */
function weightsList(ops) {
	const box = R.clear($('weights'));
	if (!ops.length)
		return;
	box.appendChild(R.el('h3', {}, 'Weights of the NN-engine operations'));
	box.appendChild(R.el('p', {}, 'Each histogram counts the decoded kernel values, the stored codes minus the ' +
		'kernel zero point (a bar per value; the zero point in red), as nbg weights decodes them.'));
	const ul = R.el('ul', { class: 'weights' });
	for (const o of ops)
		ul.appendChild(R.el('li', { 'data-node': o.node, 'data-status': o.status }, o.line.trim(),
			o.histogram ? null : R.el('div', { class: 'error' }, o.status + ': ' + o.reason)));
	box.appendChild(ul);
}

async function showGraph() {
	const box = $('graph');
	R.clear($('weights'));
	try {
		current.dot = await libText({ op: 'dot', slot: 0, name: current.name });
		/* the network view and the commands, for the panels: without them
		 * the picture is still drawn */
		const net = await lib({ op: 'report', slot: 0, name: current.name, what: DOC.NO_CORE | DOC.NETWORK | DOC.COMMANDS });
		current.net = net.ok === false ? { layers: [], edges: [], data_flow_warnings: [] } : net.network;
		current.cmds = net.ok === false ? {} : net.commands;
		banner(current.net);
		let ops = [];
		try {
			ops = JSON.parse(await libText({ op: 'weights', slot: 0 })).operations;
		} catch (err) {
			$('weights').appendChild(R.el('p', { class: 'error' }, 'No weights: ' + errorLine(err)));
		}
		R.clear(box).appendChild(R.el('p', {}, 'Laying out the network with Graphviz…'));
		/* Graphviz in the browser has no font files: it sizes text from its
		 * tables of the PostScript fonts, in which "monospace" is unknown
		 * (sized as Times, narrower than any monospace font) and Courier
		 * is known; the page draws with the font the box was sized for */
		let laid = roomyDot(current.dot, ops).replace(/fontname="monospace"/g, 'fontname="Courier"');
		if (current.net.layers.length > LARGE)
			laid = packDot(compactDot(laid), current.net);
		current.wops = ops;
		/* ranks of hundreds of nodes side by side are laid out left to right:
		 * where one node has more than 60 edges into it, or where the picture
		 * top to bottom came out too wide */
		const lr = (dot) => dot.replace(/^digraph nbg \{\n/, 'digraph nbg {\n  rankdir=LR;\n');
		state.rankdir = fanIn(current.net) > 60 ? 'LR' : 'TB';
		const t0 = performance.now();
		let answer = await viz.call({ dot: state.rankdir === 'LR' ? lr(laid) : laid });
		if (state.rankdir === 'TB' && tooWide(answer.svg)) {
			state.rankdir = 'LR';
			answer = await viz.call({ dot: lr(laid) });
		}
		state.layoutMs = performance.now() - t0;
		const svg = R.svg(answer.svg);
		place(box, svg);
		drawWeights(svg, ops);
		minimap(box, svg);
		const copy = svg.cloneNode(true);
		copy.removeAttribute('style');
		current.graphSvg = new XMLSerializer().serializeToString(copy);
		weightsList(ops);
		if (net.ok === false)
			$('weights').prepend(R.el('p', { class: 'error', id: 'panel-error' }, 'No node panels: ' + errorLine({ nbg: net.error })));
		const nodes = svg.querySelectorAll('g.node').length, edges = svg.querySelectorAll('g.edge').length;
		$('graph-count').textContent = nodes + ' nodes, ' + edges + ' edges' +
			(current.net.layers.length > LARGE ? '; each node\'s operations are in its panel (click it)' : '');
		$('graph-count').dataset.nodes = String(nodes);
	} catch (err) {
		R.clear(box).appendChild(R.el('p', { class: 'error' }, 'No network: ' + errorLine(err)));
		$('graph-count').textContent = '';
	}
}

/* ------------------------------------------------------------ the network's nodes */

/* Above this many nodes a node's box holds its layer and operator only:
 * its operations' lines move to its panel, and the picture stays small. */
const LARGE = 80;

/* The DOT with each layer's label cut after its operator line (the label's
 * second line; the blank lines roomyDot added for the histograms stay). */
function compactDot(dot) {
	return dot.replace(/^( {2}(?:L|op)[0-9]+ \[label=")((?:[^"\\]|\\.)*)"/gm, (m, head, label) => {
		const parts = label.split(/(\\.)/).filter((p) => p !== '');
		let tail = 0;
		while (tail < parts.length && parts[parts.length - 1 - tail] === '\\n')
			tail++;
		let lines = 0, out = '';
		for (const p of parts.slice(0, parts.length - tail)) {
			if (p === '\\n' && ++lines >= 2)
				break;
			out += p;
		}
		return head + out + '\\n'.repeat(tail) + '"';
	});
}

/* The DOT with the disconnected parts of the network laid out in rows and
 * columns (Graphviz's pack, in the order of the file), not all in one row:
 * a large network of many parts would otherwise be one picture hundreds of
 * screens wide.  About 2 columns for 3 rows per square root of the parts
 * (a part is wider than tall: boxes of long lines).  A connected network
 * is left as it is. */
function packDot(dot, net) {
	const up = net.layers.map((_, i) => i);
	const root = (i) => (up[i] === i ? i : (up[i] = root(up[i])));
	for (const e of net.edges)
		if (e.from.node !== undefined && e.to.node !== undefined)
			up[root(e.from.node)] = root(e.to.node);
	const parts = new Set(net.layers.map((_, i) => root(i))).size;
	if (parts < 2)
		return dot;
	const columns = Math.max(1, Math.ceil(Math.sqrt(parts) * 2 / 3));
	return dot.replace(/^digraph nbg \{\n/, 'digraph nbg {\n  pack=true;\n  packmode="array_u' + columns + '";\n');
}

/* The most edges of the network view that end at one node. */
function fanIn(net) {
	const n = new Map();
	for (const e of net.edges) {
		const k = JSON.stringify(e.to);
		n.set(k, (n.get(k) || 0) + 1);
	}
	return Math.max(0, ...n.values());
}

/* A layout more than 20 screens wide and 4 times wider than tall: a
 * network whose ranks hold hundreds of nodes side by side (a fan-in of
 * many layers into one output), read better left to right, where each
 * rank is a column of boxes far less tall than they are wide. */
function tooWide(svgText) {
	const m = /viewBox="([-0-9. ]+)"/.exec(svgText);
	const vb = m ? m[1].trim().split(/\s+/).map(Number) : null;
	return !!vb && vb[2] > 25000 && vb[2] > 4 * vb[3];
}

/* The library's sentence that the data flow is unreliable, over the picture. */
function banner(net) {
	const b = $('dataflow-banner'), w = (net && net.data_flow_warnings) || [];
	b.hidden = !w.length;
	b.textContent = w.length ? 'Data flow unreliable: ' + w.map((x) => x.relation + ' fails ' + x.failed + ' of ' +
		x.checked).join('; ') + ' (edges and propagated shapes may be wrong there).' : '';
}

/* The whole picture, small, in a corner; the rectangle is the part shown. */
function minimap(box, svg) {
	const m = R.clear($('minimap'));
	const copy = svg.cloneNode(true);
	copy.removeAttribute('style');
	for (const t of copy.querySelectorAll('text, title'))
		t.remove();
	const vb = (svg.getAttribute('viewBox') || '0 0 100 100').split(/[\s,]+/).map(Number);
	/* at most 180 wide and 280 high, the picture's proportions kept */
	const k = Math.min(180 / vb[2], 280 / vb[3]);
	copy.setAttribute('width', Math.max(20, vb[2] * k));
	copy.setAttribute('height', Math.max(20, vb[3] * k));
	copy.appendChild(R.svgEl('rect', { class: 'view', x: vb[0], y: vb[1], width: vb[2], height: vb[3] }));
	m.appendChild(copy);
	m.dataset.vb = vb.join(' ');
	m.onclick = (e) => {
		const r = m.getBoundingClientRect(), s = box.querySelector('svg');
		box.scrollLeft = (e.clientX - r.left) / r.width * s.clientWidth - box.clientWidth / 2;
		box.scrollTop = (e.clientY - r.top) / copy.clientHeight * s.clientHeight - box.clientHeight / 2;
	};
	box.onscroll = minimapView;
}

function minimapView() {
	const box = $('graph'), m = $('minimap'), svg = box.querySelector('svg'), v = m.querySelector('rect.view');
	if (!svg || !v || !svg.clientWidth)
		return;
	/* only when the picture does not fit in its box */
	m.hidden = box.scrollWidth <= box.clientWidth + 1 && box.scrollHeight <= box.clientHeight + 1;
	const vb = m.dataset.vb.split(' ').map(Number);
	const fx = vb[2] / svg.clientWidth, fy = vb[3] / svg.clientHeight;
	v.setAttribute('x', vb[0] + box.scrollLeft * fx);
	v.setAttribute('y', vb[1] + box.scrollTop * fy);
	v.setAttribute('width', Math.min(vb[2], box.clientWidth * fx));
	v.setAttribute('height', Math.min(vb[3], box.clientHeight * fy));
}

/* A node chosen (a click, a search): outlined, brought into view, told in
 * the panel. */
function selectNode(key, scroll) {
	const box = $('graph');
	let g = null;
	for (const n of box.querySelectorAll('g.node')) {
		const t = n.querySelector('title');
		const me = t && t.textContent === key;
		n.classList.toggle('selected', me);
		if (me)
			g = n;
	}
	if (!g || !current.net)
		return;
	state.selected = key;
	P.show($('panel'), key, { net: current.net, cmds: current.cmds || {}, tables: current.tables,
		wops: current.wops, report: current.report, run: current.run }, saveNpy, saveTensor);
	if (scroll) {
		const r = g.getBoundingClientRect(), b = box.getBoundingClientRect();
		box.scrollLeft += r.left + r.width / 2 - (b.left + box.clientWidth / 2);
		box.scrollTop += r.top + r.height / 2 - (b.top + box.clientHeight / 2);
	}
}

async function saveNpy(o) {
	const k = current.wops.findIndex((x) => x.operation === o.operation); /* o: P.streams' copy */
	const answer = await nbg.call({ op: 'weights-npy', slot: 0, index: k });
	if (!answer.npy || !answer.npy[0])
		return;
	R.download('op' + o.operation + '_weights.npy', 'application/octet-stream', answer.npy[0]);
}

/* A kept output of the last run, as nbg run --dump names its file. */
async function saveTensor(t) {
	const answer = await nbg.call({ op: 'cpu-tensor-npy', index: t.k });
	if (!answer.npy || !answer.npy[0])
		return;
	R.download(String(t.k).padStart(3, '0') + '-op' + t.operation + (t.whole_layer ? '-whole' : '') + '.npy',
		'application/octet-stream', answer.npy[0]);
}

/* The panel shown again (a run or a comparison changed what it tells). */
function refreshPanel() {
	if (state.selected && !$('panel').hidden)
		selectNode(state.selected, false);
}

/* Search: every node that matches is marked, the first (Enter: the next)
 * is selected. */
function graphSearch(next) {
	if (!current || !current.net)
		return;
	const hits = P.search($('graph-search').value, { net: current.net, tables: current.tables });
	const set = new Set(hits);
	for (const n of $('graph').querySelectorAll('g.node')) {
		const t = n.querySelector('title');
		n.classList.toggle('hit', !!t && set.has(t.textContent));
	}
	state.hits = hits;
	if (!hits.length) {
		$('graph-hits').textContent = $('graph-search').value.trim() ? 'no node' : '';
		return;
	}
	const at = next ? (hits.indexOf(state.selected) + 1) % hits.length : 0;
	$('graph-hits').textContent = (at + 1) + ' of ' + hits.length;
	selectNode(hits[at], true);
}

/* Pan by dragging the picture; zoom with Ctrl and the wheel; a click that
 * did not drag selects the node under it. */
function wireGraph() {
	const box = $('graph');
	let drag = null;
	box.addEventListener('mousedown', (e) => {
		if (e.button !== 0)
			return;
		drag = { x: e.clientX, y: e.clientY, l: box.scrollLeft, t: box.scrollTop, moved: false };
		e.preventDefault();
	});
	window.addEventListener('mousemove', (e) => {
		if (!drag)
			return;
		const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
		if (Math.abs(dx) + Math.abs(dy) > 4) {
			drag.moved = true;
			box.classList.add('panning');
		}
		box.scrollLeft = drag.l - dx;
		box.scrollTop = drag.t - dy;
	});
	window.addEventListener('mouseup', (e) => {
		if (drag && !drag.moved) {
			const g = e.target.closest ? e.target.closest('#graph g.node') : null;
			const t = g && g.querySelector('title');
			if (t)
				selectNode(t.textContent, false);
		}
		drag = null;
		box.classList.remove('panning');
	});
	box.addEventListener('wheel', (e) => {
		if (!e.ctrlKey)
			return;
		e.preventDefault();
		zoom(box, e.deltaY < 0 ? 'in' : 'out');
	}, { passive: false });
	$('graph-search').addEventListener('input', () => graphSearch(false));
	$('graph-search').addEventListener('keydown', (e) => {
		if (e.key === 'Enter')
			graphSearch(true);
	});
}
wireGraph();

/* ------------------------------------------------------------ diff */

async function showDiff(file) {
	const box = R.clear($('diff'));
	box.appendChild(R.el('p', {}, 'Comparing with ' + file.name + '…'));
	try {
		const bytes = await file.arrayBuffer();
		const p = await lib({ op: 'load', slot: 1, bytes: bytes }, [bytes]);
		if (!p.ok)
			throw Object.assign(new Error(p.error.message), { nbg: p.error });
		const d = JSON.parse(await libText({ op: 'diff', name: current.name, name2: file.name }));
		R.clear(box);
		box.appendChild(R.el('h3', { id: 'diff-verdict' }, 'Verdict: ' + d.verdict));
		if (d.summary)
			box.appendChild(R.pairs('t-diff-summary', 'Summary', Object.entries(d.summary).map(([k, v]) => [k, R.text(v)])));
		const rc = d.reconstruction;
		if (rc && rc.reason)
			box.appendChild(R.el('p', { id: 'diff-reason' }, rc.reason));
		box.appendChild(R.table('t-diff-owners', 'What changed, by owner', [
			{ key: 'owner', title: 'owner' }, { key: 'kind', title: 'kind' },
			{ key: 'offset_a', title: 'offset A' }, { key: 'size_a', title: 'size A' },
			{ key: 'offset_b', title: 'offset B' }, { key: 'size_b', title: 'size B' },
			{ key: 'bytes_changed', title: 'bytes changed' }, { key: 'runs', title: 'runs' }],
			d.owners || []));
		box.appendChild(R.table('t-diff-items', 'Differences', [
			{ key: 'kind', title: 'kind' }, { key: 'path', title: 'what', fmt: (x) => R.text(x.path || x.owner) },
			{ key: 'a', title: 'A' }, { key: 'b', title: 'B' }], (d.differences || []).slice(0, 2000),
			(d.differences || []).length > 2000 ? '(the first 2000; the JSON of nbg diff has all)' : ''));
	} catch (err) {
		R.clear(box).appendChild(R.el('p', { class: 'error' }, 'Cannot compare: ' + errorLine(err)));
	}
	selectTab('diff');
}

/* ------------------------------------------------------------ CPU backend */

/* The Run tab: the CPU backend's plan of the file (every operation's
 * verdict, as nbg run --backend cpu --check prints it) and, when it runs
 * every operation, a run on input files chosen here, read as nbg run
 * --input reads them.  Asked for when the tab is first shown. */
async function showCpu() {
	const box = R.clear($('cpu'));
	box.appendChild(R.el('p', {}, 'Planning the CPU backend…'));
	let plan;
	try {
		plan = JSON.parse(await libText({ op: 'cpu-plan' }));
	} catch (err) {
		R.clear(box).appendChild(R.el('p', { class: 'error', id: 'cpu-verdict' }, 'No plan: ' + errorLine(err)));
		return;
	}
	current.cpuPlan = plan;
	R.clear(box);
	/* the verdict a run gives (runs_whole, refusal: nbg_cpu_plan_check) */
	const r = plan.first_refused, no = plan.refusal;
	box.appendChild(R.el('p', { id: 'cpu-verdict', class: plan.runs_whole ? '' : 'error' }, r
		? 'The CPU backend cannot run this model: operation ' + r.operation + ' (' + r.type + ', layer ' +
			r.layer + ') is refused first: ' + r.reason_id + ': ' + r.reason
		: !plan.runs_whole
		? 'The CPU backend cannot run this model: ' + no.code + ': ' + no.message
		: 'The CPU backend runs every operation of this model: ' + plan.executed + ' executed (' +
			plan.executed_by_reference_semantics + ' by reference semantics, not from their code), ' +
			plan.nothing + ' with nothing to compute.'));
	if (plan.caveat)
		box.appendChild(R.el('p', { id: 'cpu-caveat', class: 'note' }, 'Caveat: ' + plan.caveat));
	box.appendChild(R.el('p', {}, 'It computes what the compiled commands say on this machine, with ' +
		'no NPU (doc/cpu-backend.md); a result is not an NPU\'s result, whose bit-exact equality is not established.'));
	box.appendChild(R.el('p', { id: 'cpu-build' }, 'This page runs it in ' + BUILD_TEXT + (BUILD === 'simd'
		? ' (the address\'s ?simd=0 runs the build without; both give the same bytes).'
		: params.get('simd') === '0' ? ' (?simd=0 in the address).' : ' (this browser has no WebAssembly SIMD).')));
	if (plan.runs_whole)
		box.appendChild(cpuForm());
	const table = R.table('t-cpu-plan', 'Operations', [
		{ key: 'operation', title: '#' }, { key: 'type', title: 'type' }, { key: 'layer', title: 'layer' },
		{ key: 'what', title: 'what' },
		{ key: 'verdict', title: 'verdict', fmt: (x) => x.verdict + (x.reference_semantics ? ' (reference semantics)' : ''),
			cls: (x) => x.verdict === 'refused' ? 'bad' : '' },
		{ key: 'reason', title: 'reason', fmt: (x) => x.reason_id ? x.reason_id + ': ' + x.reason : '' }],
	plan.steps);
	if (plan.steps.length > LARGE)
		groupPlan(table, plan.steps);
	box.appendChild(table);
}

/* A long plan (a tiled model runs hundreds of operations) folded into its
 * layers: a row per layer, before its first operation, saying how many
 * operations it has and their verdicts; a click on it shows or hides
 * them.  The layer holding a refused operation is open. */
function groupPlan(table, steps) {
	const body = table.tBodies[0], rows = Array.from(body.rows);
	const groups = new Map();
	steps.forEach((st, i) => {
		const g = groups.get(st.layer_id) || { layer: st.layer, rows: [], verdicts: new Map() };
		g.rows.push(rows[i]);
		g.verdicts.set(st.verdict, (g.verdicts.get(st.verdict) || 0) + 1);
		groups.set(st.layer_id, g);
	});
	for (const [id, g] of groups) {
		const open = g.verdicts.has('refused');
		const head = R.el('tr', { class: 'group', 'data-layer': id, 'data-count': g.rows.length },
			R.el('td', { colspan: 6 }, (open ? '▾ ' : '▸ ') + (id === 65535 ? 'no layer' : 'layer ' + id + ' ' + g.layer) + ': ' +
				g.rows.length + ' operation' + (g.rows.length === 1 ? '' : 's') + ', ' +
				Array.from(g.verdicts).map(([v, n]) => n + ' ' + v).join(', ')));
		head.addEventListener('click', () => {
			const show = g.rows[0].hidden;
			g.rows.forEach((r) => { r.hidden = !show; });
			head.firstChild.firstChild.nodeValue = (show ? '▾ ' : '▸ ') + head.firstChild.firstChild.nodeValue.slice(2);
		});
		body.insertBefore(head, g.rows[0]);
		/* the layer's operations after its row, in their order */
		let at = head;
		for (const r of g.rows) {
			r.hidden = !open;
			at.after(r);
			at = r;
		}
	}
	table.caption.appendChild(R.el('span', { class: 'note' }, ' ' + steps.length + ' operations in ' + groups.size +
		' layers: click a layer to show its operations'));
}

/* One file per input record, then Run. */
function cpuForm() {
	const form = R.el('div', { id: 'cpu-form' });
	const ins = (current.report.inputs || []);
	const chosen = [];
	ins.forEach((io, k) => {
		const pick = R.el('input', { type: 'file', id: 'cpu-input-' + k });
		pick.addEventListener('change', (e) => { chosen[k] = e.target.files[0]; });
		form.appendChild(R.el('p', {}, 'input ' + k + (io.name ? ' (' + io.name + ')' : '') + ': ' +
			(io.dimensions_outermost_first || []).join('×') + ' ' + io.data_format_name + ', ' +
			R.bytes(io.byte_size) + ' raw, or .npy, or .tensor text: ', pick));
	});
	const run = R.el('button', { id: 'cpu-run' }, 'Run on this machine');
	run.addEventListener('click', async () => {
		run.disabled = true; /* one run at a time: a second would wait in the worker's queue */
		try {
			await cpuRun(chosen, ins.length);
		} finally {
			run.disabled = false;
		}
	});
	form.appendChild(run);
	form.appendChild(R.el('div', { id: 'cpu-result' }));
	return form;
}

/* The shown file handed again to a new worker (after a time limit). */
async function reload(file, out) {
	try {
		const bytes = await file.arrayBuffer();
		const p = await lib({ op: 'load', slot: 0, bytes: bytes }, [bytes]);
		out.appendChild(R.el('p', {}, p.ok ? 'The file was loaded again in a new worker.'
			: 'The file could not be loaded again: ' + errorLine({ nbg: p.error })));
	} catch (err) {
		out.appendChild(R.el('p', { class: 'error' }, 'The file could not be loaded again: ' + errorLine(err)));
	}
}

async function cpuRun(chosen, count) {
	const out = R.clear($('cpu-result'));
	state.cpu = { phase: 'running' };
	current.run = null;
	try {
		const inputs = [];
		for (let k = 0; k < count; k++) {
			if (!chosen[k])
				throw new Error('choose a file for input ' + k);
			inputs.push({ name: chosen[k].name, bytes: await chosen[k].arrayBuffer() });
		}
		out.appendChild(R.el('p', {}, 'Running…'));
		const t0 = performance.now();
		const answer = await nbg.call({ op: 'cpu-run', inputs: inputs, keep: KEEP_BYTES }, inputs.map((i) => i.bytes));
		const r = JSON.parse(answer.text);
		if (!r.ok)
			throw Object.assign(new Error(r.error.message), { nbg: r.error });
		const doc = JSON.parse(r.text);
		const ms = performance.now() - t0;
		R.clear(out);
		out.appendChild(R.el('p', { id: 'cpu-done' }, 'Run in ' + Math.round(ms) + ' ms on this machine (' + BUILD_TEXT + ').'));
		for (const x of doc.reference_semantics)
			out.appendChild(R.el('p', { class: 'note' }, 'operation ' + x.operation + ' (' + x.layer + ', ' + x.what +
				'): computed by reference semantics, not from the operation\'s code'));
		doc.outputs.forEach((o, i) => {
			out.appendChild(R.pairs('t-cpu-output-' + i, 'Output ' + i + (o.name ? ' (' + o.name + ')' : ''), [
				['shape', o.shape.join('×')], ['format', o.format], ['bytes', o.bytes], ['SHA-256 of the bytes', o.sha256],
				['largest values (index: value)', o.top.map((t) => t.index + ': ' +
					(typeof t.value === 'number' ? t.value.toPrecision(6) : String(t.value))).join(', ')]]));
			const npy = answer.npy && answer.npy[i];
			if (npy) {
				const b = R.el('button', { 'data-output': i }, 'output_' + i + '.npy (float32)');
				b.addEventListener('click', () => R.download('output_' + i + '.npy', 'application/octet-stream', npy));
				out.appendChild(b);
			}
		});
		keptRun(out, doc.dump);
		out.appendChild(goldenForm(doc.outputs));
		state.cpu = { phase: 'done', outputs: doc.outputs, ms: ms, dump: doc.dump, build: BUILD };
	} catch (err) {
		R.clear(out).appendChild(R.el('p', { class: 'error', id: 'cpu-error' }, 'Not run: ' + errorLine(err)));
		state.cpu = { phase: 'error', error: errorLine(err) };
		/* a stopped worker is replaced by one that holds no file: load it again */
		if (err instanceof TimeLimit && current.file)
			await reload(current.file, out);
	}
}

/* What the run kept of each operation (nbg_web_cpu_run's dump), for the
 * node panels. */
function keptRun(out, dump) {
	if (!dump.kept) {
		out.appendChild(R.el('p', { id: 'cpu-kept', class: 'note' }, 'The operations\' outputs were not kept: they ' +
			'hold ' + R.bytes(dump.bytes) + ', over the ' + R.bytes(dump.limit) + ' this page keeps; nbg run --dump writes them.'));
		return;
	}
	current.run = { tensors: dump.tensors.map((t, k) => Object.assign({ k: k }, t)), compared: null, limit: dump.limit };
	out.appendChild(R.el('p', { id: 'cpu-kept' }, 'Every executed operation\'s output is kept (' + dump.tensors.length +
		' tensors, ' + R.bytes(dump.bytes) + ', as nbg run --dump writes them): click a node in the Network tab to see ' +
		'its own, with their figures, histogram and .npy.'));
	refreshPanel();
}

/* The comparisons of a run: its outputs against golden files (as nbg run
 * --golden measures them) and its operations' outputs against a dump of
 * nbg run --dump (as nbg compare measures two dumps: the first operation
 * that differs). */
function goldenForm(outputs) {
	const form = R.el('div', { id: 'cpu-compare' }, R.el('h3', {}, 'Compare'));
	const tol = R.el('input', { id: 'cpu-tolerance', type: 'number', min: '0', step: 'any', value: '0' });
	form.appendChild(R.el('p', {}, 'Tolerance (float32 values for the outputs, stored values for a dump): ', tol));
	const chosen = [];
	outputs.forEach((o, i) => {
		const pick = R.el('input', { type: 'file', id: 'cpu-golden-' + i });
		pick.addEventListener('change', (e) => { chosen[i] = e.target.files[0]; });
		form.appendChild(R.el('p', {}, 'golden of output ' + i + ' (raw bytes, .npy or .tensor text, read as nbg run ' +
			'--golden reads it): ', pick));
	});
	const go = R.el('button', { id: 'cpu-golden-run' }, 'Compare the outputs');
	go.addEventListener('click', () => guarded(go, () => goldenCompare(chosen, Number(tol.value))));
	form.appendChild(go);
	form.appendChild(R.el('div', { id: 'cpu-golden-result' }));
	const dir = R.el('input', { type: 'file', id: 'cpu-dump', multiple: '', webkitdirectory: '' });
	dir.addEventListener('change', (e) => guarded(dir, () => dumpCompare(Array.from(e.target.files), Number(tol.value))));
	form.appendChild(R.el('p', {}, 'A dump of nbg run --backend cpu --dump DIR of the same model and inputs, or of ' +
		'another build (its directory, or dump.json and its .npy files): ', dir));
	form.appendChild(R.el('div', { id: 'cpu-dump-result' }));
	return form;
}

/* One comparison at a time: the control disabled meanwhile. */
async function guarded(control, fn) {
	control.disabled = true;
	try {
		await fn();
	} finally {
		control.disabled = false;
	}
}

const FIGURES = [
	{ key: 'beyond', title: 'beyond the tolerance', fmt: (x) => x.beyond + ' of ' + x.elements +
		(x.first_beyond !== null ? ' (first at ' + x.first_beyond + ')' : '') },
	{ key: 'max', title: 'max |diff|', fmt: (x) => P.num(x.max_abs_diff_float32 !== undefined ? x.max_abs_diff_float32 : x.max_abs_diff_stored) },
	{ key: 'mean', title: 'mean |diff|', fmt: (x) => P.num(x.mean_abs_diff_float32 !== undefined ? x.mean_abs_diff_float32 : x.mean_abs_diff_stored) },
	{ key: 'cosine', title: 'cosine', fmt: (x) => P.num(x.cosine) },
	{ key: 'top', title: 'top-k common', fmt: (x) => x.top_k_common + '/' + x.top_k + (x.top1_equal ? ', top-1 equal' : '') }];

async function goldenCompare(chosen, tolerance) {
	const out = R.clear($('cpu-golden-result'));
	state.golden = { phase: 'running' };
	try {
		const goldens = [];
		for (let i = 0; i < chosen.length; i++) {
			if (chosen[i] && chosen[i].size > MAX_FILE)
				throw new Error('the golden of output ' + i + ' holds ' + R.bytes(chosen[i].size) + ', more than this page reads (' +
					R.bytes(MAX_FILE) + '); use nbg run --golden');
			if (chosen[i])
				goldens.push({ index: i, name: chosen[i].name, bytes: await chosen[i].arrayBuffer() });
		}
		if (!goldens.length)
			throw new Error('choose a golden file for an output');
		const doc = JSON.parse(await libText({ op: 'cpu-golden', goldens: goldens, tolerance: tolerance }));
		out.appendChild(R.el('p', { id: 'cpu-golden-verdict', class: doc.match ? '' : 'error' }, (doc.match
			? 'Equal within the tolerance: ' : 'DIFFERENT: ') + doc.outputs.map((o) => 'output ' + o.index + ' ' +
			(o.equal ? 'equal' : 'different')).join(', ') + ' (compared as ' + doc.compared_as + ').'));
		out.appendChild(R.table('t-cpu-golden', 'Outputs against their goldens',
			[{ key: 'index', title: 'output' }, { key: 'equal', title: 'verdict', fmt: (x) => x.equal ? 'equal' : 'different',
				cls: (x) => x.equal ? '' : 'bad' }].concat(FIGURES), doc.outputs));
		state.golden = { phase: 'done', doc: doc };
	} catch (err) {
		out.appendChild(R.el('p', { class: 'error', id: 'cpu-golden-verdict' }, 'Not compared: ' + errorLine(err)));
		state.golden = { phase: 'error', error: errorLine(err) };
	}
}

/* The dump's dump.json and, in its order, each entry's .npy (a plain name
 * among the files chosen), then the page's run tensor by tensor. */
async function dumpCompare(files, tolerance) {
	const out = R.clear($('cpu-dump-result'));
	state.dump = { phase: 'running' };
	try {
		if (!current.run)
			throw new Error('run the model first, with its operations\' outputs kept');
		const byName = new Map(files.map((f) => [f.name, f]));
		if (!byName.has('dump.json'))
			throw new Error('no dump.json among the files chosen: choose the directory nbg run --dump wrote');
		const doc = JSON.parse(await byName.get('dump.json').text());
		const ops = doc && Array.isArray(doc.operations) ? doc.operations : null;
		if (!ops)
			throw new Error('dump.json is not the one nbg run --dump writes (no operations array)');
		if (ops.length !== current.run.tensors.length)
			throw new Error('the dump lists ' + ops.length + ' tensors, the page\'s run ' + current.run.tensors.length +
				': a dump of another model');
		const listed = ops.map((e) => (typeof e.file === 'string' ? byName.get(e.file) : null));
		const missing = listed.indexOf(null);
		if (missing >= 0)
			throw new Error('dump.json lists ' + String(ops[missing].file) + ', which is not among the files chosen');
		/* its .npy files hold what the page's run kept, with their headers */
		const total = listed.reduce((a, f) => a + f.size, 0);
		if (total > current.run.limit + 128 * listed.length)
			throw new Error('the dump\'s files hold ' + R.bytes(total) + ', more than the ' + R.bytes(current.run.limit) +
				' this page keeps of a run');
		const entries = [];
		for (let k = 0; k < ops.length; k++)
			entries.push({ entry: JSON.stringify(ops[k]), bytes: await listed[k].arrayBuffer() });
		const r = JSON.parse(await libText({ op: 'cpu-dump-compare', entries: entries, tolerance: tolerance },
			entries.map((e) => e.bytes)));
		current.run.compared = r.tensors;
		const bad = r.tensors.find((t) => t.error);
		const first = r.tensors.findIndex((t) => !t.error && !t.equal);
		const t = first >= 0 ? current.run.tensors[first] : null;
		out.appendChild(R.el('p', { id: 'cpu-dump-verdict', class: bad || t ? 'error' : '' }, bad
			? 'Not compared: ' + bad.error.code + ': ' + bad.error.message
			: t ? 'The first operation that differs: operation ' + t.operation + (t.whole_layer ? ' (whole layer)' : '') +
				', layer ' + t.layer_id + ' ' + t.layer + ' (' + t.operator + '), tensor ' + first + ' of ' + r.tensors.length + '.'
			: 'Every tensor of the ' + r.tensors.length + ' is equal within the tolerance.'));
		out.appendChild(R.table('t-cpu-dump', 'The run\'s operations against the dump',
			[{ key: 'operation', title: 'op', fmt: (x) => current.run.tensors[x.k].operation },
				{ key: 'layer', title: 'layer', fmt: (x) => current.run.tensors[x.k].layer },
				{ key: 'equal', title: 'verdict', fmt: (x) => x.error ? x.error.code : x.equal ? 'equal' : 'different',
					cls: (x) => x.equal ? '' : 'bad' }].concat(FIGURES.map((c) => Object.assign({}, c,
				{ fmt: (x) => (x.error ? '' : c.fmt(x)) }))), r.tensors.map((x, k) => Object.assign({ k: k }, x))));
		state.dump = { phase: 'done', first: t ? { k: first, operation: t.operation, whole_layer: t.whole_layer } : null,
			count: r.tensors.length, error: bad ? bad.error : null };
		refreshPanel();
	} catch (err) {
		out.appendChild(R.el('p', { class: 'error', id: 'cpu-dump-verdict' }, 'Not compared: ' + errorLine(err)));
		state.dump = { phase: 'error', error: errorLine(err) };
	}
}

/* ------------------------------------------------------------ opening */

async function open(file) {
	const t0 = performance.now();
	state.phase = 'loading';
	state.name = file.name;
	if (file.size > MAX_FILE) {
		state.phase = 'error';
		state.error = { message: 'too large' };
		status(file.name + ': ' + R.bytes(file.size) + ' is more than this page reads (' + R.bytes(MAX_FILE) +
			': the WebAssembly memory holds at most 2 GiB); use the nbg command for it.', 'error');
		return;
	}
	status('Reading ' + file.name + ' (' + R.bytes(file.size) + ')…');
	$('main').hidden = true;
	current = { name: file.name, size: file.size, file: file };
	try {
		const bytes = await file.arrayBuffer();
		const parse = await lib({ op: 'load', slot: 0, bytes: bytes }, [bytes]);
		current.parse = parse;
		if (!parse.ok) {
			showVerdict(parse, null, file.name);
			$('main').hidden = false;
			$('tabs').hidden = true;
			for (const t of document.querySelectorAll('.tab'))
				t.hidden = true;
			status(file.name + ': not shown: ' + errorLine({ nbg: parse.error }), 'error');
			state.phase = 'error';
			state.error = parse.error;
			return;
		}
		const report = JSON.parse((await nbg.call({ op: 'report', slot: 0, name: file.name, what: 0 })).text);
		if (report.ok === false)
			throw Object.assign(new Error(report.error.message), { nbg: report.error });
		current.report = report;
		showVerdict(parse, report, file.name);
		showReport(report);
		$('tabs').hidden = false;
		selectTab('report');
		$('main').hidden = false;
		state.firstReportMs = performance.now() - t0;
		state.phase = 'report';
		status(file.name + ': report in ' + Math.round(state.firstReportMs) + ' ms; decoding the graph and memory…');
		const tables = JSON.parse((await nbg.call({ op: 'report', slot: 0, name: file.name, what: DOC.NO_CORE | TABLES_WHAT })).text);
		current.tables = tables;
		showTables(tables);
		await Promise.all([showMap(), showGraph()]);
		state.phase = 'done';
		state.doneMs = performance.now() - t0;
		status(file.name + ': report in ' + Math.round(state.firstReportMs) + ' ms, everything in ' +
			Math.round(state.doneMs) + ' ms. Nothing left this page.');
	} catch (err) {
		state.phase = 'error';
		state.error = { message: errorLine(err) };
		status(file.name + ': ' + errorLine(err), 'error');
	}
}

function selectTab(name) {
	for (const b of document.querySelectorAll('#tabs button'))
		b.classList.toggle('active', b.dataset.tab === name);
	for (const t of document.querySelectorAll('.tab'))
		t.hidden = t.id !== 'tab-' + name;
	if (name === 'map')
		zoom($(name), 'fit');
	if (name === 'graph' && !current.graphSeen) {
		/* once: the verdict folded away from the picture, which opens at a
		 * scale its labels can be read at */
		current.graphSeen = true;
		$('verdict-more').open = false;
		zoom($('graph'), 'readable');
	}
	if (name === 'cpu' && current && current.report && !current.cpuShown) {
		current.cpuShown = true;
		showCpu();
	}
}

/* ------------------------------------------------------------ wiring */

$('pick').addEventListener('change', (e) => e.target.files[0] && open(e.target.files[0]));
$('pick2').addEventListener('change', (e) => {
	const f = e.target.files[0];
	if (!f)
		return;
	if (!current || !current.report)
		status('Open a first file before choosing one to compare with it.', 'error');
	else
		showDiff(f);
});
const drop = $('drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
	e.preventDefault();
	drop.classList.remove('over');
	const files = Array.from(e.dataTransfer.files);
	if (!files.length)
		return;
	if (files.length > 1) {
		open(files[0]).then(() => current && current.report && showDiff(files[1]));
	} else {
		open(files[0]);
	}
});
document.addEventListener('dragover', (e) => e.preventDefault());
document.addEventListener('drop', (e) => e.preventDefault());
$('search').addEventListener('input', filter);
for (const b of document.querySelectorAll('#tabs button'))
	b.addEventListener('click', () => selectTab(b.dataset.tab));
for (const b of document.querySelectorAll('[data-zoom]'))
	b.addEventListener('click', () => zoom(b.closest('.tab').querySelector('.picture'), b.dataset.zoom));

function exporting(fn) {
	return async () => {
		$('export-note').textContent = '';
		try {
			if (!current || !current.report)
				throw new Error('open a file first');
			await fn();
		} catch (err) {
			$('export-note').textContent = 'Not exported: ' + errorLine(err);
		}
	};
}
const base = () => current.name.replace(/\.nb$/i, '');
$('export-json').addEventListener('click', exporting(async () => {
	if (current.parse.unverified)
		throw new Error('the file\'s checksums do not hold; nothing is exported from it');
	const t = (await nbg.call({ op: 'report', slot: 0, name: current.name, what: TABLES_WHAT })).text;
	R.download(base() + '.json', 'application/json', t + '\n');
}));
$('export-meta').addEventListener('click', exporting(async () => {
	R.download('nbg_meta.json', 'application/json', await libText({ op: 'meta', slot: 0 }) + '\n');
}));
$('export-map').addEventListener('click', exporting(async () => {
	if (!current.map)
		throw new Error('no byte map for this file');
	R.download(base() + '.map.svg', 'image/svg+xml', current.map);
}));
$('export-dot').addEventListener('click', exporting(async () => {
	if (!current.dot)
		throw new Error('no network for this file');
	R.download(base() + '.dot', 'text/vnd.graphviz', current.dot);
}));
$('export-graph').addEventListener('click', exporting(async () => {
	if (!current.graphSvg)
		throw new Error('no network picture for this file');
	R.download(base() + '.graph.svg', 'image/svg+xml', current.graphSvg);
}));
/* The workers start now, so their WebAssembly is compiled before a file comes. */
nbg.call({ op: 'ping' }).catch((err) => status(errorLine(err), 'error'));
viz.call({ dot: 'digraph{}' }).catch(() => {});
state.ready = true;

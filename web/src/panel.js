/*
 * panel.js - a node of the network picture, told whole: the side panel a
 * click on a node opens (its layer of `nbg inspect --json --network`, its
 * operations of `--commands` with their engine and command, its records,
 * its edges with their basis, its weights as `nbg weights` decodes them),
 * and the search that finds nodes by name, operator or byte offset.
 * Everything from the file reaches the page through render.js (text
 * nodes, attributes set through the DOM).
 */
'use strict';
/* global R */

const P = {};

/* The weights document's operations one per kernel stream of a node: the
 * row tiles of a layer name one stream, drawn once (their statuses, where
 * none decoded, once per status and reason); each the first operation of
 * its group, with `tiles`, the operations of the group. */
P.streams = function (ops) {
	const groups = new Map();
	for (const o of ops) {
		const key = o.node + '\n' + (o.histogram ? 'stream ' + o.stream_of : o.status + ' ' + o.reason_id);
		const g = groups.get(key);
		if (g)
			g.tiles.push(o.operation);
		else
			groups.set(key, Object.assign({}, o, { tiles: [o.operation] }));
	}
	return Array.from(groups.values());
};

/* The operations of a group, as a label: "operation 3" or "operations 3, 7
 * and 9 more (11 tiles, one kernel stream)". */
P.tilesText = function (o) {
	const t = o.tiles || [o.operation];
	return t.length === 1 ? 'operation ' + t[0] : 'operations ' + t.slice(0, 3).join(', ') +
		(t.length > 3 ? ' and ' + (t.length - 3) + ' more' : '') + ' (' + t.length + ' tiles, one kernel stream)';
};

/* The DOT node of a network layer (lib/report/dot_commands.c names them). */
P.key = (l) => (l.layer !== null && l.layer !== undefined ? 'L' + l.layer : 'op' + l.first_operation);

/* The name of an edge's end: a node's DOT name, or input / output i. */
function endName(net, end) {
	if (end.node !== undefined)
		return P.key(net.layers[end.node] || {});
	return end.input !== undefined ? 'in' + end.input : 'out' + end.output;
}

/* The operations of a node: those of its layer, or its one operation. */
function mine(l, op) {
	return l.layer !== null && l.layer !== undefined ? op.layer_id === l.layer : op.operation === l.first_operation;
}

function quant(q) {
	if (!q)
		return '—';
	const s = [q.format_name || q.interpretation];
	if (q.scale !== undefined && q.scale !== null)
		s.push('scale ' + q.scale);
	if (q.zero_point !== undefined && q.zero_point !== null)
		s.push('zero point ' + q.zero_point);
	if (q.fixed_point_pos !== undefined && q.fixed_point_pos !== null)
		s.push('fixed point ' + q.fixed_point_pos);
	return s.join(', ');
}

/* The x and y axes of a w x h plot at (L, T) in svg; returns
 * label(x, y, anchor, text, class), which writes a label there. */
function axes(svg, L, T, w, h) {
	const axis = { stroke: '#333', 'stroke-width': 1 };
	svg.appendChild(R.svgEl('line', Object.assign({ x1: L, x2: L + w, y1: T + h, y2: T + h }, axis)));
	svg.appendChild(R.svgEl('line', Object.assign({ x1: L, x2: L, y1: T, y2: T + h }, axis)));
	return (x, y, anchor, t, cls) => svg.appendChild(R.svgEl('text', { x: x, y: y, 'text-anchor': anchor,
		'font-size': 10, fill: '#333', class: cls }, t));
}

/* A histogram with its axes: o.histogram = {lo, width, counts}, values
 * along x (xTitle: by default the weights' stored code minus the zero
 * point), their count along y, the bar of the value `mark` (0 by default:
 * the zero point of the weights) in red. */
P.histogram = function (o, xTitle, mark) {
	const W = 340, H = 150, L = 44, B = 28, T = 8, Rm = 8;
	const hist = o.histogram, n = hist.counts.length, top = Math.max(1, ...hist.counts);
	const w = W - L - Rm, h = H - B - T, bw = w / n, red = mark === undefined || mark === null ? 0 : mark;
	const svg = R.svgEl('svg', { class: 'hist', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H,
		'data-operation': o.operation, 'data-operations': (o.tiles || [o.operation]).join(' '), 'data-lo': hist.lo });
	svg.appendChild(R.svgEl('title', {}, o.title || P.tilesText(o) + ': how many kernel values have each ' +
		'stored code minus the zero point ' + o.zero_point));
	hist.counts.forEach((c, i) => {
		const bh = c ? Math.max(0.5, h * c / top) : 0, v = hist.lo + i * (hist.width || 1);
		const r = R.svgEl('rect', { class: 'bin', x: L + i * bw, y: T + h - bh, width: Math.max(bw, 0.4), height: bh,
			fill: v === red ? '#c44' : '#357', 'data-value': v, 'data-count': c });
		r.appendChild(R.svgEl('title', {}, v + ': ' + c));
		svg.appendChild(r);
	});
	const label = axes(svg, L, T, w, h);
	label(L - 4, T + 8, 'end', top, 'y-max');
	label(L - 4, T + h, 'end', 0, 'y-min');
	label(L, T + h + 12, 'middle', P.num(hist.lo), 'x-min');
	label(L + w, T + h + 12, 'middle', P.num(hist.lo + (n - 1) * (hist.width || 1)), 'x-max');
	if (-hist.lo / (hist.width || 1) > 0 && -hist.lo / (hist.width || 1) < n - 1)
		label(L + (-hist.lo / (hist.width || 1) + 0.5) * bw, T + h + 12, 'middle', 0, 'x-zero');
	label(L + w / 2, H - 2, 'middle', xTitle || 'stored code - zero point', 'x-title');
	const yt = R.svgEl('text', { x: 10, y: T + h / 2, 'text-anchor': 'middle', 'font-size': 10, fill: '#333',
		transform: 'rotate(-90 10 ' + (T + h / 2) + ')' }, 'count');
	svg.appendChild(yt);
	return svg;
};

/* A number as a label: integers as they are, others to 5 significant digits. */
P.num = (v) => (typeof v !== 'number' ? '—' : Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(5))));

/* The per-channel figures of a kernel (channels: [min, max, mean] per
 * output channel): a vertical bar from min to max and a dot at the mean
 * per channel, the channel along x, the value (code - zero point) along y. */
P.channels = function (o) {
	const ch = o.histogram.channels;
	const W = 340, H = 140, L = 44, B = 28, T = 8, Rm = 8, w = W - L - Rm, h = H - B - T;
	const vals = ch.flat().filter((v) => typeof v === 'number');
	const lo = Math.min(0, ...vals), hi = Math.max(0, ...vals), span = hi - lo || 1;
	const y = (v) => T + h - (v - lo) / span * h, step = w / ch.length;
	const svg = R.svgEl('svg', { class: 'channels', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H,
		'data-operation': o.operation });
	svg.appendChild(R.svgEl('title', {}, 'operation ' + o.operation + ': per output channel, the smallest and largest ' +
		'kernel value (code - zero point) and the mean (dot)'));
	svg.appendChild(R.svgEl('line', { x1: L, x2: L + w, y1: y(0), y2: y(0), stroke: '#c77', 'stroke-width': 0.5 }));
	ch.forEach((c, i) => {
		const x = L + (i + 0.5) * step, g = R.svgEl('g', { class: 'ch', 'data-channel': i, 'data-min': c[0],
			'data-max': c[1], 'data-mean': c[2] });
		if (c[0] !== null && c[1] !== null)
			g.appendChild(R.svgEl('line', { x1: x, x2: x, y1: y(c[0]), y2: y(c[1]), stroke: '#357', 'stroke-linecap': 'square',
				'stroke-width': Math.max(0.6, Math.min(4, step * 0.6)) }));
		if (c[2] !== null)
			g.appendChild(R.svgEl('circle', { cx: x, cy: y(c[2]), r: Math.max(0.8, Math.min(2.5, step / 3)), fill: '#c44' }));
		g.appendChild(R.svgEl('title', {}, 'channel ' + i + ': min ' + P.num(c[0]) + ', max ' + P.num(c[1]) +
			', mean ' + P.num(c[2])));
		svg.appendChild(g);
	});
	const label = axes(svg, L, T, w, h);
	label(L - 4, T + 8, 'end', P.num(hi), 'y-max');
	label(L - 4, T + h, 'end', P.num(lo), 'y-min');
	label(L, T + h + 12, 'start', 0, 'x-min');
	label(L + w, T + h + 12, 'end', ch.length - 1, 'x-max');
	label(L + w / 2, H - 2, 'middle', 'output channel', 'x-title');
	return svg;
};

/* The outputs the last run kept of a node's operations (run.tensors,
 * each {k, operation, ...: nbg_web_cpu_run's dump entries}): a row of
 * figures per tensor, its histogram, its .npy (onTensor(t)); with a
 * comparison to a dump (run.compared[k]), its verdict. */
function runPart(l, run, onTensor) {
	const own = run.tensors.filter((t) => mine(l, t));
	if (!own.length)
		return null;
	const part = section('Outputs of the last run (CPU)');
	part.id = 'p-run';
	for (const t of own) {
		const v = t.values || {}, cmp = run.compared && run.compared[t.k];
		part.appendChild(R.pairs('p-run-' + t.k, 'operation ' + t.operation + (t.whole_layer ? ', whole layer (' + t.tiles +
			' tiles)' : '') + ': ' + t.operator, [
			['shape', t.shape.join('×')], ['data type', t.data_type],
			['zero point (command)', R.text(t.zero_point)], ['output record', R.text(t.output_record)],
			['min', P.num(v.min)], ['max', P.num(v.max)], ['mean', P.num(v.mean)],
			['not finite', v.nonfinite === undefined ? '—' : v.nonfinite],
			['against the dump', !cmp ? '—' : cmp.error ? cmp.error.code + ': ' + cmp.error.message
				: (cmp.equal ? 'equal' : 'DIFFERENT: ' + cmp.beyond + ' of ' + cmp.elements + ' beyond ' + cmp.tolerance) +
				', max |diff| ' + P.num(cmp.max_abs_diff_stored) + ', cosine ' + P.num(cmp.cosine)]]));
		if (t.values)
			part.appendChild(P.histogram({ histogram: t.values, operation: t.operation, title: 'operation ' + t.operation +
				': how many elements of its output have each stored value' }, 'stored value' +
				(t.data_type === 'FP16' ? '' : ' (code)'), t.data_type === 'FP16' ? 0 : t.zero_point));
		const b = R.el('button', { class: 'tensor-npy', 'data-tensor': t.k }, 'output (.npy, as nbg run --dump writes it)');
		b.addEventListener('click', () => onTensor(t));
		part.appendChild(b);
	}
	return part;
}

function section(title, ...children) {
	return R.el('section', { class: 'panel-part' }, R.el('h4', {}, title), ...children);
}

/* The panel of node `key`: d = {net, cmds, tables, wops, run}; onNpy(o)
 * saves operation o's kernel codes, onTensor(t) a kept output of the run. */
P.show = function (aside, key, d, onNpy, onTensor) {
	R.clear(aside);
	const l = d.net.layers.find((x) => P.key(x) === key);
	aside.hidden = false;
	aside.dataset.node = key;
	const close = R.el('button', { class: 'close', title: 'close' }, '×');
	close.addEventListener('click', () => { aside.hidden = true; });
	aside.appendChild(close);
	if (!l) {
		const io = /^in/.test(key) ? 'input' : /^out/.test(key) ? 'output' : null;
		aside.appendChild(R.el('h3', { id: 'panel-title' }, key));
		if (io) {
			const rec = (d.report && d.report[io + 's'] || [])[Number(key.replace(/^\D+/, ''))];
			aside.appendChild(R.pairs('p-record', io + ' record', rec ? Object.entries(rec).map(([k, v]) => [k, R.text(v)]) : []));
		}
		return;
	}
	aside.appendChild(R.el('h3', { id: 'panel-title' }, (l.layer !== null ? 'layer ' + l.layer + ' ' : 'operation ' +
		l.first_operation + ' ') + l.name));
	aside.appendChild(R.pairs('p-operator', 'Operator', [
		['operator', l.operator], ['basis', l.operator_basis], ['description', l.description],
		['activation', R.text(l.activation)], ['fused', R.text(l.fused)], ['kernel', R.text(l.kernel)],
		['pool', R.text(l.pool)], ['stride', l.stride === null ? '—' : l.stride + (l.stride_inferred ? ' (inferred)' : '')],
		['decoded operations', l.decoded_operations],
		['other operations', l.other_operations + (l.other_type ? ' (' + l.other_type + ')' : '')]]));
	const tensor = (f) => ({ field: f[0], input: f[1](l.input), output: f[1](l.output) });
	aside.appendChild(R.table('p-tensors', 'Tensors (x y z, innermost first)', [
		{ key: 'field', title: '' }, { key: 'input', title: 'input' }, { key: 'output', title: 'output' }], [
		['shape', (t) => R.text(t.shape)], ['basis', (t) => t.basis], ['engine view', (t) => R.text(t.engine_view)],
		['data type', (t) => R.text(t.data_type)], ['record', (t) => R.text(t.record)],
		['zero point (commands)', (t) => R.text(t.zero_point)], ['quantization (record)', (t) => quant(t.quantization)]]
		.map(tensor)));
	const rec = d.tables && d.tables.operations || [];
	const ops = (d.cmds.operations || []).filter((o) => mine(l, o)).map((o) => ({
		operation: o.operation, engine: o.engine, command: o.command, what: o.description,
		offset: rec[o.operation] ? R.hex(rec[o.operation].record_offset) : '—' }));
	for (const o of (d.cmds.other_operations || []).filter((x) => mine(l, x)))
		ops.push({ operation: o.operation, engine: o.type_name, command: '—', offset: rec[o.operation] ? R.hex(rec[o.operation].record_offset) : '—',
			what: 'not decoded; ' + (o.references || []).map((r) => r.role + ' ' + r.source_type_name).join(', ') });
	ops.sort((a, b) => a.operation - b.operation);
	aside.appendChild(R.table('p-operations', 'Operations', [
		{ key: 'operation', title: 'op' }, { key: 'engine', title: 'engine' }, { key: 'command', title: 'command' },
		{ key: 'offset', title: 'record' }, { key: 'what', title: 'what it does' }], ops));
	const w = P.streams((d.wops || []).filter((o) => o.node === key));
	if (w.length) {
		const part = section('Weights');
		for (const o of w) {
			part.appendChild(R.el('p', { class: 'mono' }, o.line.trim()));
			if (o.tiles.length > 1)
				part.appendChild(R.el('p', { class: 'note' }, 'The same kernel stream for ' + P.tilesText(o) + '.'));
			if (o.histogram) {
				part.appendChild(P.histogram(o));
				if (o.histogram.channels)
					part.appendChild(P.channels(o));
				if (onNpy) {
					const b = R.el('button', { class: 'npy', 'data-operation': o.operation }, 'kernel codes (.npy)');
					b.addEventListener('click', () => onNpy(o));
					part.appendChild(b);
				}
			} else {
				part.appendChild(R.el('p', { class: 'error' }, o.status + ' (' + o.reason_id + '): ' + o.reason));
			}
		}
		aside.appendChild(part);
	}
	const run = d.run && d.run.tensors ? runPart(l, d.run, onTensor) : null;
	if (run)
		aside.appendChild(run);
	/* the findings of the commands' checks that name one of its operations */
	const own = new Set(ops.map((o) => o.operation));
	aside.appendChild(R.table('p-findings', 'Findings (evidence code, offset)', [
		{ key: 'id', title: 'code' }, { key: 'offset', title: 'offset', fmt: (f) => R.hex(f.offset) },
		{ key: 'text', title: 'what' }],
	(d.cmds.findings || []).filter((f) => own.has(P.findingOperation(f)))));
	const lr = l.layer !== null && d.tables && d.tables.layers ? d.tables.layers[l.layer] : null;
	if (lr)
		aside.appendChild(R.pairs('p-layer', 'LAYER record', [['offset', R.hex(lr.record_offset)], ['uid', lr.uid],
			['operations', lr.operation_count]]));
	const edges = d.net.edges.filter((e) => endName(d.net, e.from) === key || endName(d.net, e.to) === key);
	aside.appendChild(R.table('p-edges', 'Edges and their evidence', [
		{ key: 'from', title: 'from' }, { key: 'to', title: 'to' }, { key: 'bytes', title: 'bytes' },
		{ key: 'basis', title: 'basis' }],
	edges.map((e) => ({ from: endName(d.net, e.from), to: endName(d.net, e.to), bytes: e.bytes,
		basis: e.basis + (e.backward ? ', backward' : '') +
			(e.slice_of_channels ? ', a slice of the producer\'s ' + e.slice_of_channels + ' channels' : '') }))));
};

/* The operation a finding of the commands names ("operation N ..."), or null. */
P.findingOperation = function (f) {
	const m = /^operation ([0-9]+)\b/.exec(f.text || '');
	return m ? Number(m[1]) : null;
};

/* The nodes whose layer name, operator or description holds q, or whose
 * LAYER or OPERATIONS record holds the byte offset q (decimal or 0x hex). */
P.search = function (q, d) {
	q = q.trim().toLowerCase();
	if (!q)
		return [];
	const off = /^(0x[0-9a-f]+|[0-9]+)$/.test(q) ? Number(q) : null;
	const hits = [];
	const within = (r, size) => r && off !== null && off >= r.record_offset && off < r.record_offset + size;
	const recs = d.tables && d.tables.graph ? d.tables.graph.records : null;
	for (const l of d.net.layers) {
		const text = [l.name, l.operator, l.description].join('\n').toLowerCase();
		let hit = text.includes(q);
		if (!hit && off !== null && d.tables) {
			hit = l.layer !== null && within(d.tables.layers[l.layer], recs ? recs.layer.record_size : 0);
			for (const o of d.tables.operations || [])
				hit = hit || (mine(l, { layer_id: o.layer_id, operation: o.record_index }) &&
					within(o, recs ? recs.operation.record_size : 0));
		}
		if (hit)
			hits.push(P.key(l));
	}
	return hits;
};

self.P = P;

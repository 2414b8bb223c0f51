// check_web.js - the page (web/) in headless Chromium, opened from file://
// as a person opens it, against the native nbg of the same checkout.
//
//   node check_web.js --synthesized|--corpus|--graph|--every CORPUS_DIR NBG FIXTURE_NAME SOURCE_ROOT ARTIFACTS MKSAMPLE
//
// --synthesized: the sample; a truncated copy (the error text); a valid copy
//   whose layer name is an HTML tag with an event handler (shown as text,
//   no script runs); the time limit (a worker stopped, the page says so); a
//   diff against nbg diff; the weight histograms of the sample's nodes
//   against the kernels its builder encoded (MKSAMPLE --values); the byte
//   map's hover against `nbg ledger --json`; each export against the
//   command line's output; the Run (CPU) tab's plan of the sample.
// --graph: the corpus file with the most network nodes: its time to open,
//   its scale, minimap, data-flow banner, side panel and search.
// --every: every corpus file: the page finishes, its verdict against nbg
//   verify, its node count against nbg graph --dot, about five nodes'
//   panels against nbg inspect --json --network --commands.
// --corpus: three real files (a large v2, a small v2, a v1); the Run (CPU)
//   tab on a v1 file the CPU backend runs whole (run in the page against
//   nbg run --backend cpu), on one it refuses, and on LeNet 0x10016 of
//   NBG_MODELS_DIR (its caveat).
//
// For each file opened: the verdict against `nbg inspect --json` (and the
// SHA-256 against node's crypto, an implementation of its own), the I/O
// table row by row against the JSON I/O records, the layer table's length
// against the JSON graph summary, and the network's node count against the
// node statements of `nbg graph --dot`.  Screenshots go to ARTIFACTS.
// Exits 77 (meson: skipped), saying why, when the page is not built or
// Chromium or puppeteer-core is absent.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { execFileSync, spawnSync } = require('child_process');

const [part, corpus, nbg, fixtureName, rootArg, artifacts, mksample, mkhostile, mkfile] = process.argv.slice(2);
const root = path.resolve(rootArg);
const SKIP = 77;
const site = process.env.NBG_WEB_SITE || path.join(root, 'build-web', 'site');
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']
	.find((p) => fs.existsSync(p));

function skip(why) {
	console.log('check_web.js: skipped: ' + why);
	process.exit(SKIP);
}
if (!fs.existsSync(path.join(site, 'index.html')))
	skip(site + '/index.html is not built: run sh scripts/setup.sh --web (it builds it), or sh web/build.sh');
if (!chromium)
	skip('Chromium is not installed (Debian: apt-get install chromium, or sh scripts/setup.sh --web)');
let puppeteer;
try {
	puppeteer = require(path.join(root, 'web', 'node_modules', 'puppeteer-core'));
} catch (e) {
	skip('puppeteer-core is not in web/node_modules: run sh scripts/setup.sh --web (npm ci in web/)');
}
if (part !== '--synthesized' && !fs.existsSync(corpus)) {
	console.log('check_web.js: real-file checks skipped: ' + corpus + ' does not exist. Get the ' +
		'files with `sh scripts/fetch-corpus.sh ' + corpus + '` (it downloads them from their ' +
		'public repositories and checks each SHA-256), or point the build at a copy: ' +
		'`meson configure BUILD -Dcorpus_dir=DIR`.');
	process.exit(SKIP);
}

/* In a cross build the programs run under the cross file's exe wrapper,
 * which tests/meson.build names in MESON_EXE_WRAPPER (tests/exe_wrapper.py). */
const wrapper = (process.env.MESON_EXE_WRAPPER || '').split(/\s+/).filter((w) => w);
function argv(prog, args) {
	return wrapper.length ? [wrapper[0], [...wrapper.slice(1), path.resolve(prog), ...args]] : [prog, args];
}

let checks = 0;
const bad = [];
function check(ok, what) {
	checks++;
	if (!ok)
		bad.push(what);
}

function nbgJson(...args) {
	const r = spawnSync(...argv(nbg, args), { encoding: 'utf8', maxBuffer: 1 << 30 });
	return JSON.parse(r.stdout);
}

/* The node statements of nbg graph's DOT document: `  ID [label=...`. */
function dotNodes(file) {
	const dot = execFileSync(...argv(nbg, ['graph', file, '--dot', '-']), { encoding: 'utf8', maxBuffer: 1 << 30 });
	return dot.split('\n').filter((l) => /^\s+[A-Za-z_][A-Za-z0-9_]* \[/.test(l) &&
		!/^\s+(node|edge|graph) \[/.test(l)).length;
}

/* The time the largest corpus network may take to open, everything drawn
 * (measured: doc/web.md), and the synthesized network of 503 nodes, 2.2
 * times as many (measured 1.4 to 4.4 s on a machine loaded by others). */

const url = 'file://' + path.join(site, 'index.html');
fs.mkdirSync(artifacts, { recursive: true });

async function openFile(browser, file, query) {
	const page = await browser.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
	await page.setViewport({ width: 1280, height: 1000 });
	await page.goto(url + (query || ''));
	await page.waitForFunction(() => window.nbgState && window.nbgState.ready, { timeout: 30000 });
	const input = await page.$('#pick');
	await input.uploadFile(file);
	await page.waitForFunction((name) => window.nbgState.name === name &&
		['done', 'error'].includes(window.nbgState.phase), { timeout: 120000 }, path.basename(file));
	return { page, errors };
}

async function shot(page, name, tab) {
	if (tab)
		await page.click('button[data-tab=' + tab + ']');
	await page.screenshot({ path: path.join(artifacts, name + '.png') });
}

/* What the page shows: verdict, checks, the I/O table, layer rows, graph nodes. */
function shown(page) {
	return page.evaluate(() => {
		const rows = (id) => Array.from(document.querySelectorAll('#' + id + ' tbody tr'))
			.filter((tr) => !tr.classList.contains('empty'))
			.map((tr) => Array.from(tr.cells).map((td) => td.textContent));
		const nodes = document.getElementById('graph-count').dataset.nodes;
		return {
			state: window.nbgState,
			verdict: document.getElementById('verdict').textContent,
			detail: document.getElementById('verdict-detail').textContent,
			status: document.getElementById('status').textContent,
			checks: rows('checks'),
			header: rows('t-header'),
			io: rows('t-io'),
			layers: rows('t-layers'),
			nodes: nodes === undefined ? -1 : Number(nodes),
			imgs: document.querySelectorAll('img, iframe, object, embed, script:not([src])').length,
			pwned: window.__pwned === 1,
		};
	});
}

/* One valid file: everything the page shows against nbg. */
async function valid(browser, file, label) {
	const { page, errors } = await openFile(browser, file);
	const s = await shown(page);
	const want = nbgJson('inspect', '--json', file);
	const g = nbgJson('inspect', '--json', '--layers', '--only', file);
	const name = path.basename(file);
	check(s.state.phase === 'done', name + ': page ended in ' + s.state.phase + ': ' + s.status);
	check(errors.length === 0, name + ': page errors: ' + errors.join('; '));
	/* the headline of each state, as doc/web.md lists them */
	const headline = { 'verified': 'Verified', 'structure-only': 'Structure valid; no checksum to verify',
		'checksum-unknown': 'Structure valid; its checksum cannot be checked' };
	check(s.verdict === headline[want.integrity],
		name + ': verdict "' + s.verdict + '", nbg says ' + want.integrity);
	check(s.detail === name + ': ' + want.integrity + ': ' + want.integrity_detail,
		name + ': verdict detail "' + s.detail + '"');
	const sha = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
	check(s.checks.some((r) => r[0] === 'SHA-256 of the file' && r[1] === sha), name + ': SHA-256 row');
	for (const c of want.section_checksums || [])
		check(s.checks.some((r) => r[0] === 'section ' + c.section_type_name + ' CRC-32' &&
			r[2] === (c.matches ? 'matches' : 'MISMATCH') &&
			r[1].includes(c.computed.toString(16).padStart(8, '0'))), name + ': check row of ' + c.section_type_name);
	const ios = [...want.inputs.map((x) => ['input', x]), ...want.outputs.map((x) => ['output', x])];
	check(s.io.length === ios.length, name + ': ' + s.io.length + ' I/O rows, nbg has ' + ios.length);
	ios.forEach(([kind, x], i) => {
		const r = s.io[i] || [];
		const q = x.quantization;
		check(r[0] === kind && r[1] === String(x.index) && r[2] === (x.name === null ? '—' : x.name) &&
			r[3] === x.dimensions_outermost_first.join('×') && r[4] === x.data_format_name &&
			r[6].startsWith(q.format_name) &&
			(q.interpretation !== 'affine' || r[6].includes('scale ' + q.scale + ', zero point ' + q.zero_point)) &&
			(q.interpretation !== 'dynamic_fixed_point' || r[6].endsWith('position ' + q.fixed_point_position)),
		name + ': I/O row ' + i + ' ' + JSON.stringify(r));
	});
	check(s.layers.length === g.graph.layer_count, name + ': ' + s.layers.length + ' layer rows, nbg: ' + g.graph.layer_count);
	const nodes = dotNodes(file);
	check(s.nodes === nodes, name + ': the network shows ' + s.nodes + ' nodes, nbg graph --dot has ' + nodes);
	/* each NN operation of `nbg weights --json`: a histogram of as many
	 * values as its kernel shape holds where it decoded, else its status;
	 * once per node and kernel stream (the row tiles of a layer name one:
	 * the same stream offset), a status once per node, status and reason */
	const ws = nbgJson('weights', '--json', file).weights.operations;
	const groupOf = (o) => (o.layer_id < g.graph.layer_count ? 'L' + o.layer_id : 'op' + o.operation) + ' ' +
		(o.status === 'decoded' ? 'stream ' + o.stream.offset : o.status + ' ' + o.reason_id);
	const groups = new Map();
	for (const o of ws)
		groups.set(groupOf(o), (groups.get(groupOf(o)) || []).concat([o.operation]));
	const drawn = await page.evaluate(() => Array.from(document.querySelectorAll('#graph [data-operation]'))
		.map((e) => ({ op: Number(e.getAttribute('data-operation')), text: e.classList.contains('histogram') ? null : e.textContent,
			ops: e.getAttribute('data-operations'),
			total: Array.from(e.querySelectorAll('rect.bin')).reduce((a, r) => a + Number(r.getAttribute('data-count')), 0) })));
	check(drawn.length === groups.size, name + ': ' + drawn.length + ' weight figures, nbg weights has ' + groups.size +
		' streams of nodes (' + ws.length + ' operations)');
	for (const o of ws) {
		const d = drawn.find((x) => x.ops === groups.get(groupOf(o)).join(' '));
		const ok = d && (o.status === 'decoded' ? d.text === null && d.total === o.shape.reduce((a, b) => a * b, 1) :
			d.text.startsWith('weights: ' + o.status + ' (' + o.reason_id + ')'));
		check(ok, name + ': operation ' + o.operation + ' (' + o.status + ') shows ' + JSON.stringify(d));
	}
	check(s.header.some((r) => r[0] === 'file size' && r[1].startsWith(fs.statSync(file).size.toLocaleString('en-US'))),
		name + ': file size row');
	await shot(page, label + '-report');
	await shot(page, label + '-network', 'graph');
	await shot(page, label + '-map', 'map');
	await page.close();
	console.log(name + ': verdict ' + s.verdict + ', ' + s.io.length + ' I/O rows, ' + s.layers.length +
		' layers, ' + s.nodes + ' nodes, ' + ws.filter((o) => o.status === 'decoded').length + ' of ' + ws.length +
		' kernel streams drawn as histograms (' + Array.from(groups.values()).filter((x) => x.length > 1).length +
		' drawn once for several operations); first report ' + Math.round(s.state.firstReportMs) + ' ms');
}

async function truncated(browser, tmp) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const bytes = fs.readFileSync(sample);
	const file = path.join(tmp, 'truncated.nb');
	fs.writeFileSync(file, bytes.subarray(0, 3000));
	const { page } = await openFile(browser, file);
	const s = await shown(page);
	/* the size the header declares is the sample's own, read from its bytes */
	const declared = bytes.readUInt32LE(16);
	check(s.state.phase === 'error' && s.verdict === 'Not a valid NBG: file-size-mismatch',
		'truncated: verdict "' + s.verdict + '"');
	check(s.detail.includes('at offset 16') && s.detail.includes('declares ' + declared + ' bytes but the file has 3000'),
		'truncated: detail "' + s.detail + '"');
	await shot(page, 'truncated');
	await page.close();
}

async function hostile(browser, tmp) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const evil = '<img src=x onerror=window.__pwned=1>';
	const rec = nbgJson('inspect', '--json', '--layers', '--only', sample).layers[0].record_offset;
	const file = path.join(tmp, 'hostile.nb');
	execFileSync(...argv(fixtureName, [sample, file, String(rec), evil]));
	const { page, errors } = await openFile(browser, file);
	await page.click('button[data-tab=graph]');
	await new Promise((r) => setTimeout(r, 300));
	const s = await shown(page);
	check(s.state.phase === 'done' && s.verdict === 'Verified', 'hostile: the crafted file is valid: ' + s.verdict + ' ' + s.status);
	check(s.layers.some((r) => r[1] === evil), 'hostile: the name is not shown as text: ' + JSON.stringify(s.layers));
	const inGraph = await page.evaluate((e) => Array.from(document.querySelectorAll('#graph text'))
		.some((t) => t.textContent.includes(e)), evil);
	check(inGraph, 'hostile: the name is not in the network picture as text');
	/* its panel and the search for it: text again */
	await clickNode(page, 'L0');
	const title = await page.evaluate(() => document.getElementById('panel-title').textContent);
	check(title === 'layer 0 ' + evil, 'hostile: the panel\'s title is not the name as text: ' + title);
	const found = await search(page, evil);
	check(found.selected === 'L0', 'hostile: the search for the name: ' + JSON.stringify(found));
	await shot(page, 'hostile-panel');
	check(!s.pwned && s.imgs === 0 && errors.length === 0,
		'hostile: markup ran or was inserted: pwned ' + s.pwned + ', elements ' + s.imgs + ', ' + errors.join('; '));
	await shot(page, 'hostile-network');
	await shot(page, 'hostile-report', 'report');
	/* the diff of the sample and this copy, against nbg diff --json */
	const want = nbgJson('diff', '--json', sample, file);
	const pick2 = await page.$('#pick2');
	await page.evaluate(() => { window.nbgState.diff = null; });
	await pick2.uploadFile(sample);
	await page.waitForFunction(() => document.getElementById('diff-verdict') ||
		document.querySelector('#diff .error'), { timeout: 60000 });
	const dv = await page.evaluate(() => (document.getElementById('diff-verdict') || document.querySelector('#diff .error')).textContent);
	/* the page compares the shown file (A) with the second (B) */
	const back = nbgJson('diff', '--json', file, sample);
	check(dv === 'Verdict: ' + back.verdict && back.verdict === want.verdict, 'diff: page "' + dv + '", nbg diff ' + back.verdict);
	const owners = await page.evaluate(() => Array.from(document.querySelectorAll('#t-diff-owners tbody tr'))
		.map((tr) => [tr.cells[0].textContent, tr.cells[6] ? tr.cells[6].textContent : '']));
	check(JSON.stringify(owners) === JSON.stringify(back.owners.map((o) => [o.owner, String(o.bytes_changed)])),
		'diff: owners ' + JSON.stringify(owners));
	/* the bytes the crafted name changed in the LAYER record, counted here */
	const a = fs.readFileSync(sample), b = fs.readFileSync(file);
	let changed = 0;
	for (let i = rec; i < rec + 64; i++)
		changed += a[i] !== b[i] ? 1 : 0;
	check(owners.some((o) => /LAYER/.test(o[0]) && o[1] === String(changed)),
		'diff: the LAYER owner does not show the ' + changed + ' bytes the name changed');
	await shot(page, 'diff');
	await page.close();
}

/* The histogram in each NN node of the sample's network against the
 * kernels tests/sample_model.c encoded: `nbg-mksample --values` writes its
 * arrays of codes, the zero points are the builder's constants (read from
 * its source); the counts of (code - zero point) are computed here. */
async function histograms(browser, tmp) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const dir = fs.mkdtempSync(path.join(tmp, 'values-'));
	execFileSync(...argv(mksample, ['--values', dir]));
	const src = fs.readFileSync(path.join(root, 'tests', 'sample_model.c'), 'utf8');
	const zps = Array.from(src.matchAll(/layers\[(\d)\] = \(ce_layer\)\{[^}]*?\.zp = (\d+)/g))
		.map((m) => Number(m[2]));
	check(zps.length === 2, 'histograms: the zero points of tests/sample_model.c not found: ' + zps);
	const { page, errors } = await openFile(browser, sample);
	await page.click('button[data-tab=graph]');
	const shownHist = await page.evaluate(() => Array.from(document.querySelectorAll('#graph g.node'))
		.map((g) => ({ node: g.querySelector('title').textContent,
			bins: Array.from(g.querySelectorAll('g.histogram rect.bin'))
				.map((r) => [Number(r.getAttribute('data-value')), Number(r.getAttribute('data-count'))]) }))
		.filter((n) => n.bins.length));
	['conv_w.u8', 'fc_w.u8'].forEach((f, i) => {
		const want = new Map();
		for (const c of fs.readFileSync(path.join(dir, f)))
			want.set(c - zps[i], (want.get(c - zps[i]) || 0) + 1);
		const node = shownHist.find((n) => n.node === 'L' + i);
		const got = new Map((node ? node.bins : []).filter(([, c]) => c));
		const same = got.size === want.size && Array.from(want).every(([v, c]) => got.get(v) === c);
		check(same, 'histograms: node L' + i + ' shows ' + JSON.stringify(Array.from(got)) +
			', the builder encoded ' + JSON.stringify(Array.from(want).sort((a, b) => a[0] - b[0])));
	});
	check(errors.length === 0, 'histograms: page errors: ' + errors.join('; '));
	await shot(page, 'sample-weights');
	await page.close();
	console.log('histograms: ' + shownHist.map((n) => n.node + ' ' + n.bins.length + ' bins').join(', '));
}

/* The byte map's hover: the pointer moved along the linear band, the owner
 * the page shows is a range of `nbg ledger --json` (owner, offset, size,
 * class), the one that holds the byte at the pointer's place along the
 * band (to within 2 px), and offsets grow from left to right. */
async function mapHover(browser) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const ledger = nbgJson('ledger', '--json', sample);
	const { page } = await openFile(browser, sample);
	await page.click('button[data-tab=map]');
	const band = await page.evaluate(() => {
		const rs = Array.from(document.querySelectorAll('#map #linear rect')).filter((r) => r.querySelector('title'));
		const a = rs[0].getBoundingClientRect(), b = rs[rs.length - 1].getBoundingClientRect();
		return { left: a.left, right: b.right, y: (a.top + a.bottom) / 2 };
	});
	const perPx = ledger.file_size / (band.right - band.left);
	let last = -1, seen = 0;
	for (let x = band.left + 0.5; x < band.right; x += 7) {
		await page.mouse.move(x, band.y);
		const text = await page.evaluate(() => document.getElementById('map-owner').textContent);
		const at = (x - band.left) * perPx;
		const r = ledger.ranges.find((g) => text === g.owner + ': offset ' +
			g.offset.toLocaleString('en-US') + ', ' + g.size.toLocaleString('en-US') + ' bytes, ' + g.class);
		check(r && r.offset <= at + 2 * perPx && at - 2 * perPx < r.end && r.offset >= last,
			'map hover at byte ' + Math.round(at) + ': "' + text + '"' + (r ? '' : ' is no range of nbg ledger --json'));
		if (r) {
			last = r.offset;
			seen++;
		}
	}
	check(seen > 50, 'map hover: only ' + seen + ' places showed an owner');
	await page.close();
	console.log('map hover: ' + seen + ' places along the band');
}

/* Every file the page saves from now on, captured where the page hands
 * its blob to the browser, into window.__saved: {name, text, hex}. */
function captureSaves(page) {
	return page.evaluate(() => {
		window.__saved = [];
		const blobs = new Map(), create = URL.createObjectURL;
		URL.createObjectURL = (b) => { const u = create(b); blobs.set(u, b); return u; };
		HTMLAnchorElement.prototype.click = function () {
			const b = blobs.get(this.href);
			if (b)
				b.arrayBuffer().then((t) => window.__saved.push({ name: this.download,
					text: new TextDecoder().decode(t),
					hex: Array.from(new Uint8Array(t)).map((x) => x.toString(16).padStart(2, '0')).join('') }));
		};
	});
}

/* Each export button: the file the page saves (its blob, captured where
 * the page hands it to the browser) against the command line's output. */
async function exportsMatch(browser) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const { page } = await openFile(browser, sample);
	await page.click('button[data-tab=export]');
	await captureSaves(page);
	const cli = (args) => execFileSync(...argv(nbg, args), { encoding: 'utf8', maxBuffer: 1 << 30,
		cwd: path.dirname(sample) });
	const name = path.basename(sample);
	const want = {
		'export-json': ['sample.json', cli(['inspect', '--json', '--layers', '--operations', '--memory', name])],
		'export-meta': ['nbg_meta.json', cli(['inspect', '--format', 'meta', name])],
		'export-map': ['sample.map.svg', cli(['map', name, '--svg', '-'])],
		'export-dot': ['sample.dot', cli(['graph', name, '--dot', '-'])],
	};
	for (const [button, [file, text]] of Object.entries(want)) {
		await page.evaluate(() => { window.__saved = []; });
		await page.click('#' + button);
		await page.waitForFunction(() => window.__saved.length || document.getElementById('export-note').textContent,
			{ timeout: 30000 });
		const saved = await page.evaluate(() => window.__saved[0] || { note: document.getElementById('export-note').textContent });
		check(saved.name === file && saved.text === text, button + ': saved ' + (saved.name || saved.note) +
			' (' + (saved.text || '').length + ' chars), the command line writes ' + file + ' (' + text.length + ' chars)');
	}
	/* the network SVG has no command-line twin: it is the picture shown,
	 * its histograms included, as an SVG document of its own */
	await page.evaluate(() => { window.__saved = []; });
	await page.click('#export-graph');
	await page.waitForFunction(() => window.__saved.length, { timeout: 30000 });
	const net = await page.evaluate(() => {
		const t = window.__saved[0].text;
		const doc = new DOMParser().parseFromString(t, 'image/svg+xml');
		return { name: window.__saved[0].name, root: doc.documentElement.localName,
			ns: doc.documentElement.namespaceURI, bins: doc.querySelectorAll('rect.bin').length,
			shown: document.querySelectorAll('#graph rect.bin').length };
	});
	check(net.name === 'sample.graph.svg' && net.root === 'svg' && net.ns === 'http://www.w3.org/2000/svg' &&
		net.bins === net.shown && net.bins > 0, 'export-graph: ' + JSON.stringify(net));
	await page.close();
}

/* The Run (CPU) tab: the plan against `nbg run --backend cpu --check
 * --json` (the verdict sentence: the first refused operation, or the
 * refusal of a plan over its limits, word for word; every row's
 * verdict); for a model that
 * runs whole, an input of the wrong size (the error nbg run gives), then
 * synthesized inputs run in the page (the CPU backend compiled to
 * WebAssembly) against nbg run --backend cpu natively: each output's
 * SHA-256, and the .npy the page saves against the one nbg run writes
 * (not with planOnly). */
async function cpuTab(browser, file, tmp, label, planOnly) {
	const name = path.basename(file);
	const { page, errors } = await openFile(browser, file);
	await page.click('button[data-tab=cpu]');
	await page.waitForFunction(() => document.getElementById('cpu-verdict'), { timeout: 120000 });
	const plan = nbgJson('run', '--backend', 'cpu', '--check', '--json', file);
	const seen = await page.evaluate(() => ({
		verdict: document.getElementById('cpu-verdict').textContent,
		caveat: (document.getElementById('cpu-caveat') || {}).textContent || null,
		rows: Array.from(document.querySelectorAll('#t-cpu-plan tbody tr:not(.group)')).map((tr) =>
			Array.from(tr.cells).map((td) => td.textContent)),
		groups: Array.from(document.querySelectorAll('#t-cpu-plan tbody tr.group')).map((tr) =>
			[Number(tr.dataset.layer), Number(tr.dataset.count)]),
		shownRows: Array.from(document.querySelectorAll('#t-cpu-plan tbody tr:not(.group)')).filter((tr) => !tr.hidden).length,
		form: !!document.getElementById('cpu-form'),
	}));
	const r = plan.first_refused, no = plan.refusal;
	check(r ? seen.verdict.includes('operation ' + r.operation + ' ') && seen.verdict.includes(r.reason_id + ': ' + r.reason)
		: no ? seen.verdict === 'The CPU backend cannot run this model: ' + no.code + ': ' + no.message
		: seen.verdict.startsWith('The CPU backend runs every operation of this model: ' + plan.executed + ' executed'),
	name + ': CPU verdict "' + seen.verdict + '", nbg: ' + (r ? r.reason_id : no ? no.code : 'runs whole'));
	check(seen.caveat === (plan.caveat ? 'Caveat: ' + plan.caveat : null), name + ': caveat ' + seen.caveat);
	/* independently of the plan: the notes of nbg inspect that make one */
	const noted = nbgJson('inspect', '--json', file).notes.some((n) => ['v1-version-unsampled',
		'v1-patch-stride-from-data', 'v1-entry-count-derived'].includes(n.id));
	check(noted === (seen.caveat !== null), name + ': caveat shown ' + (seen.caveat !== null) + ', notes ' + noted);
	/* a long plan's rows are grouped by layer: in the order of operations again */
	seen.rows.sort((a, b) => Number(a[0]) - Number(b[0]));
	check(seen.rows.length === plan.steps.length && plan.steps.every((st, i) =>
		seen.rows[i][0] === String(st.operation) && seen.rows[i][4].startsWith(st.verdict)),
	name + ': ' + seen.rows.length + ' plan rows, nbg has ' + plan.steps.length);
	check(seen.form === plan.runs_whole, name + ': the run form is ' + (seen.form ? 'shown' : 'absent'));
	/* over 80 operations: a row per layer (in the order of its first
	 * operation, its count of operations), the operations hidden but those
	 * of a layer holding a refused one; a click on a layer shows its own */
	const want = [];
	for (const st of plan.steps) {
		const g = want.find((x) => x[0] === st.layer_id);
		if (g)
			g[1]++;
		else
			want.push([st.layer_id, 1]);
	}
	const refusedIn = new Set(plan.steps.filter((st) => st.verdict === 'refused').map((st) => st.layer_id));
	const open = plan.steps.filter((st) => refusedIn.has(st.layer_id)).length;
	check(plan.steps.length > 80 ? JSON.stringify(seen.groups) === JSON.stringify(want) && seen.shownRows === open
		: seen.groups.length === 0 && seen.shownRows === plan.steps.length,
	name + ': plan grouped as ' + JSON.stringify(seen.groups.slice(0, 8)) + '... (' + seen.shownRows + ' shown), from nbg: ' +
		JSON.stringify(want.slice(0, 8)) + '... (' + open + ')');
	if (plan.steps.length > 80) {
		const g = want.findIndex((x) => !refusedIn.has(x[0]));
		await page.click('#t-cpu-plan tr.group[data-layer="' + want[g][0] + '"]');
		const shown = await page.evaluate(() => Array.from(document.querySelectorAll('#t-cpu-plan tbody tr:not(.group)'))
			.filter((tr) => !tr.hidden).length);
		check(shown === open + want[g][1], name + ': a click on layer ' + want[g][0] + ' shows ' + (shown - open) +
			' operations, it has ' + want[g][1]);
		console.log(name + ': ' + plan.steps.length + ' operations folded into ' + want.length + ' layers');
	}
	let ran = '';
	if (plan.runs_whole && !planOnly) {
		const ins = nbgJson('inspect', '--json', file).inputs;
		const run = async (files, pg = page) => {
			for (let k = 0; k < files.length; k++)
				await (await pg.$('#cpu-input-' + k)).uploadFile(files[k]);
			await pg.evaluate(() => { window.nbgState.cpu = null; });
			await pg.click('#cpu-run');
			await pg.waitForFunction(() => window.nbgState.cpu && window.nbgState.cpu.phase !== 'running',
				{ timeout: 120000 });
			return pg.evaluate(() => window.nbgState.cpu);
		};
		/* one byte short: refused as nbg run refuses it */
		const short = ins.map((io, k) => {
			const f = path.join(tmp, label + '-short' + k + '.bin');
			fs.writeFileSync(f, Buffer.alloc(io.byte_size - 1));
			return f;
		});
		const cliShort = spawnSync(...argv(nbg, ['run', '--backend', 'cpu', file, ...short.flatMap((f) => ['--input', f]),
			'--output-dir', path.join(tmp, label + '-short-out')]), { encoding: 'utf8' });
		const code = (cliShort.stderr.match(/: ([a-z0-9-]+)/) || [])[1];
		const bad1 = await run(short);
		check(bad1.phase === 'error' && code && bad1.error.startsWith(code), name + ': a short input: page "' +
			bad1.error + '", nbg run: ' + cliShort.stderr.trim().split('\n')[0]);
		/* synthesized inputs: byte j of input k is (j * 31 + k * 7 + 3) mod 251 */
		const good = ins.map((io, k) => {
			const f = path.join(tmp, label + '-in' + k + '.bin');
			fs.writeFileSync(f, Buffer.from(Array.from({ length: io.byte_size }, (_, j) => (j * 31 + k * 7 + 3) % 251)));
			return f;
		});
		const res = await run(good);
		const od = path.join(tmp, label + '-out');
		execFileSync(...argv(nbg, ['run', '--backend', 'cpu', file, ...good.flatMap((f) => ['--input', f]), '--output-dir', od]));
		const summary = JSON.parse(fs.readFileSync(path.join(od, 'summary.json'), 'utf8'));
		check(res.phase === 'done' && res.outputs.length === summary.outputs.length &&
			res.outputs.every((o, i) => o.sha256 === summary.outputs[i].sha256),
		name + ': page outputs ' + JSON.stringify(res.outputs && res.outputs.map((o) => o.sha256)) + ', nbg run: ' +
			JSON.stringify(summary.outputs.map((o) => o.sha256)) + (res.error ? ' (' + res.error + ')' : ''));
		/* the saved .npy of output 0, hashed in the page, against nbg run's */
		await page.evaluate(() => {
			window.__npy = null;
			const blobs = new Map(), create = URL.createObjectURL;
			URL.createObjectURL = (b) => { const u = create(b); blobs.set(u, b); return u; };
			HTMLAnchorElement.prototype.click = function () {
				const b = blobs.get(this.href);
				if (b)
					b.arrayBuffer().then((a) => crypto.subtle.digest('SHA-256', a)).then((d) => {
						window.__npy = { name: this.download, sha: Array.from(new Uint8Array(d))
							.map((x) => x.toString(16).padStart(2, '0')).join('') };
					});
			};
		});
		await page.click('button[data-output="0"]');
		await page.waitForFunction(() => window.__npy, { timeout: 30000 });
		const npy = await page.evaluate(() => window.__npy);
		const want = crypto.createHash('sha256').update(fs.readFileSync(path.join(od, 'output_0.npy'))).digest('hex');
		check(npy.name === 'output_0.npy' && npy.sha === want, name + ': saved ' + JSON.stringify(npy) +
			', nbg run\'s output_0.npy ' + want);
		/* the same inputs in the build without SIMD (?simd=0): the same
		 * output bytes as the SIMD build's and nbg run's, the same figures of
		 * every operation's output kept */
		const { page: sp, errors: se } = await openFile(browser, file, '?simd=0');
		await sp.click('button[data-tab=cpu]');
		await sp.waitForFunction(() => document.getElementById('cpu-form'), { timeout: 120000 });
		const sres = await run(good, sp);
		const builds = [await page.$eval('#cpu-build', (e) => e.textContent), await sp.$eval('#cpu-build', (e) => e.textContent)];
		await sp.close();
		check(res.build === 'simd' && builds[0].includes('WebAssembly with SIMD') && sres.build === 'scalar' &&
			builds[1].includes('WebAssembly without SIMD (?simd=0'), name + ': builds ' + res.build + ', ' + sres.build +
			': ' + JSON.stringify(builds));
		check(sres.phase === 'done' && sres.outputs.length === summary.outputs.length &&
			sres.outputs.every((o, i) => o.sha256 === summary.outputs[i].sha256 && o.sha256 === res.outputs[i].sha256) &&
			JSON.stringify(sres.dump) === JSON.stringify(res.dump) && se.length === 0,
		name + ': the build without SIMD: outputs ' + JSON.stringify(sres.outputs && sres.outputs.map((o) => o.sha256)) +
			', kept ' + (sres.dump && sres.dump.tensors ? sres.dump.tensors.length : 0) + ' tensors' + (sres.error ? ' (' + sres.error + ')' : '') + se.join('; '));
		ran = ', ran in the page as nbg run does (' + res.outputs.length + ' outputs), with SIMD and without';
	}
	check(errors.length === 0, name + ': page errors on the Run tab: ' + errors.join('; '));
	await shot(page, label + '-cpu');
	await page.close();
	console.log(name + ': Run tab: ' + plan.steps.length + ' operations, ' + (r ? 'refused at ' + r.operation +
		' (' + r.reason_id + ')' : no ? 'refused whole (' + no.code + ', ' + no.limit + ')' : 'runs whole') + ran);
}

/* An IEEE half's value from its 16 bits. */
function half(h) {
	const e = (h >> 10) & 31, m = h & 1023, sign = h & 0x8000 ? -1 : 1;
	return sign * (e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15));
}

/* A .npy file's values (|u1, |i1, <f2, <f4: what nbg run --dump and nbg
 * run write), decoded here from its header and bytes. */
function npyValues(buf) {
	const major = buf[6], len = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8), at = major === 1 ? 10 : 12;
	const header = buf.slice(at, at + len).toString('latin1');
	const descr = /'descr': *'([^']+)'/.exec(header)[1];
	const shape = /'shape': *\(([^)]*)\)/.exec(header)[1].split(',').filter((x) => x.trim()).map(Number);
	const data = buf.slice(at + len);
	const v = [];
	for (let i = 0; i < data.length;)
		if (descr === '|u1') v.push(data[i++]);
		else if (descr === '|i1') v.push(data.readInt8(i++));
		else if (descr === '<f2') { v.push(half(data.readUInt16LE(i))); i += 2; }
		else if (descr === '<i2') { v.push(data.readInt16LE(i)); i += 2; }
		else if (descr === '<f4') { v.push(data.readFloatLE(i)); i += 4; }
		else throw new Error('npyValues: ' + descr);
	return { descr, shape, values: v };
}

/* The figures the page prints of a number (panel.js's P.num). */
const num = (v) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(5))));

/* Output 0 of the page's run against a golden file and against a copy
 * with one value changed (its element 3), the figures computed here from
 * the values of nbg run's output_0.npy (in od) and the golden's; returns
 * how many elements of the first differ. */
async function goldenChecks(page, name, od, golden, tmp, label) {
	const outVals = npyValues(fs.readFileSync(path.join(od, 'output_0.npy'))).values;
	const goldenCheck = async (gfile, gv, what) => {
		let beyond = 0, maxd = 0, first = null;
		outVals.forEach((v, i) => {
			const d = Math.abs(v - gv[i]);
			if (d > 0 && first === null)
				first = i;
			beyond += d > 0;
			maxd = Math.max(maxd, d);
		});
		await (await page.$('#cpu-golden-0')).uploadFile(gfile);
		await page.evaluate(() => { window.nbgState.golden = null; });
		await page.click('#cpu-golden-run');
		await page.waitForFunction(() => window.nbgState.golden && window.nbgState.golden.phase !== 'running', { timeout: 60000 });
		const g = await page.evaluate(() => ({ s: window.nbgState.golden, verdict: document.getElementById('cpu-golden-verdict').textContent }));
		const go = g.s.doc && g.s.doc.outputs[0];
		check(go && go.beyond === beyond && go.first_beyond === first && go.elements === outVals.length &&
			Math.abs(go.max_abs_diff_float32 - maxd) <= 1e-6 * Math.max(1, maxd) &&
			g.verdict.startsWith(beyond ? 'DIFFERENT' : 'Equal within the tolerance'),
		name + ': golden ' + what + ': page ' + JSON.stringify(go) + ' "' + g.verdict + '", computed here: ' + beyond +
			' beyond (first ' + first + '), max ' + maxd);
		return beyond;
	};
	const beyond = await goldenCheck(golden.file, golden.values, path.basename(golden.file));
	const other = Buffer.from(golden.bytes);
	other[2 * 3 + 1] ^= 0x40; /* element 3's exponent changed */
	const otherFile = path.join(tmp, label + '-golden-changed' + path.extname(golden.file));
	fs.writeFileSync(otherFile, other);
	check(await goldenCheck(otherFile, golden.decode(other), 'with element 3 changed') >= 1,
		name + ': a golden with a value changed compares equal');
	return beyond;
}

/* A run kept every operation's output: each node holding one clicked, its
 * panel's figures (shape, type, min, max, mean, the histogram's counts)
 * against the .npy files `nbg run --backend cpu --dump` wrote for the same
 * model and input -- the native build of the library, a path independent
 * of the page's WebAssembly and its JavaScript -- the figures computed here
 * from those files' bytes, and each tensor saved from the panel byte for
 * byte against its file; the outputs against a golden file (the verdict and
 * figures computed here from the two files' values); the run against the
 * CLI's dump (equal), and against a copy with one byte changed (the first
 * operation that differs is the one changed). */
async function runOutputs(browser, file, input, golden, tmp, label) {
	const name = path.basename(file);
	const dumpDir = path.join(tmp, label + '-dump'), od = path.join(tmp, label + '-dump-out');
	execFileSync(...argv(nbg, ['run', '--backend', 'cpu', file, '--input', input, '--output-dir', od, '--dump', dumpDir]));
	const ops = JSON.parse(fs.readFileSync(path.join(dumpDir, 'dump.json'), 'utf8')).operations;
	const { page, errors } = await openFile(browser, file);
	await page.click('button[data-tab=cpu]');
	await page.waitForFunction(() => document.getElementById('cpu-form'), { timeout: 120000 });
	await (await page.$('#cpu-input-0')).uploadFile(input);
	await page.evaluate(() => { window.nbgState.cpu = null; });
	await page.click('#cpu-run');
	await page.waitForFunction(() => window.nbgState.cpu && window.nbgState.cpu.phase !== 'running', { timeout: 120000 });
	const res = await page.evaluate(() => window.nbgState.cpu);
	check(res.phase === 'done' && res.dump.kept && res.dump.tensors.length === ops.length,
		name + ': the run kept ' + (res.dump ? res.dump.tensors.length : res.error) + ' tensors, nbg run --dump wrote ' + ops.length);
	let beyond = null;
	if (golden)
		beyond = await goldenChecks(page, name, od, golden, tmp, label);
	/* the nodes: each tensor in its node's panel */
	const net = nbgJson('inspect', '--json', '--only', '--network', file).network;
	await page.click('button[data-tab=graph]');
	await captureSaves(page);
	let shownCount = 0;
	for (const l of net.layers) {
		const own = ops.map((o, k) => Object.assign({ k }, o)).filter((o) => (l.layer !== null ? o.layer_id === l.layer
			: o.operation === l.first_operation));
		if (!own.length)
			continue;
		await clickNode(page, nodeKey(l));
		for (const o of own) {
			const what = name + ': node ' + nodeKey(l) + ', tensor ' + o.k + ' (operation ' + o.operation + '): ';
			const p = await page.evaluate((k) => {
				const t = document.getElementById('p-run-' + k);
				const svg = t && t.nextElementSibling;
				return t ? { pairs: Array.from(t.querySelectorAll('tbody tr')).map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]),
					bins: svg && svg.matches('svg.hist') ? Array.from(svg.querySelectorAll('rect.bin')).map((r) =>
						[Number(r.dataset.value), Number(r.dataset.count)]) : null } : null;
			}, o.k);
			check(p !== null, what + 'not in the panel');
			if (!p)
				continue;
			const f = new Map(p.pairs), bytes = fs.readFileSync(path.join(dumpDir, o.file));
			const v = npyValues(bytes).values.filter((x) => Number.isFinite(x));
			const mean = v.reduce((a, x) => a + x, 0) / v.length;
			const min = v.reduce((a, x) => Math.min(a, x), Infinity), max = v.reduce((a, x) => Math.max(a, x), -Infinity);
			check(f.get('shape') === o.shape.join('×') && f.get('data type') === o.data_type,
				what + 'shape ' + f.get('shape') + ' ' + f.get('data type') + ', nbg run --dump: ' + o.shape + ' ' + o.data_type);
			if (o.output_record === null)
				check(f.get('zero point (command)') === (o.quantization.zero_point === undefined || o.quantization.zero_point === null
					? '—' : String(o.quantization.zero_point)), what + 'zero point ' + f.get('zero point (command)'));
			check(f.get('min') === num(min) && f.get('max') === num(max) && f.get('mean') === num(mean),
				what + 'min/max/mean ' + [f.get('min'), f.get('max'), f.get('mean')] + ', from the dump\'s file: ' + [min, max, mean]);
			if (o.data_type !== 'FP16') {
				const counts = new Map();
				v.forEach((x) => counts.set(x, (counts.get(x) || 0) + 1));
				check(p.bins && p.bins.every(([val, c]) => (counts.get(val) || 0) === c) &&
					p.bins.reduce((a, b) => a + b[1], 0) === v.length, what + 'histogram ' + JSON.stringify(p.bins));
			} else {
				check(p.bins && p.bins.reduce((a, b) => a + b[1], 0) === v.length, what + 'histogram holds ' +
					(p.bins && p.bins.reduce((a, b) => a + b[1], 0)) + ' values of ' + v.length);
			}
			await page.evaluate(() => { window.__saved = []; });
			await page.click('#panel button.tensor-npy[data-tensor="' + o.k + '"]');
			await page.waitForFunction(() => window.__saved.length, { timeout: 30000 });
			const saved = await page.evaluate(() => window.__saved[0]);
			check(saved.hex === bytes.toString('hex'), what + 'the .npy saved from the panel (' + saved.hex.length / 2 +
				' bytes) differs from nbg run --dump\'s ' + o.file + ' (' + bytes.length + ')');
			shownCount++;
		}
	}
	check(shownCount === ops.length, name + ': ' + shownCount + ' tensors in the panels of ' + ops.length);
	await shot(page, label + '-run-panel');
	/* the CLI's dump, then a copy with one byte changed in a tensor's data */
	const compareDump = async (dir) => {
		await page.click('button[data-tab=cpu]');
		await page.evaluate(() => { window.nbgState.dump = null; });
		await (await page.$('#cpu-dump')).uploadFile(dir); /* a directory chooser: the directory */
		await page.waitForFunction(() => window.nbgState.dump && window.nbgState.dump.phase !== 'running', { timeout: 60000 });
		return page.evaluate(() => ({ s: window.nbgState.dump, verdict: document.getElementById('cpu-dump-verdict').textContent }));
	};
	const same = await compareDump(dumpDir);
	check(same.s.phase === 'done' && !same.s.first && !same.s.error && same.s.count === ops.length,
		name + ': the run against nbg run --dump: ' + JSON.stringify(same));
	const bad = path.join(tmp, label + '-dump-changed'), k = Math.min(2, ops.length - 1);
	fs.cpSync(dumpDir, bad, { recursive: true });
	const changed = fs.readFileSync(path.join(bad, ops[k].file));
	changed[changed.length - 1] ^= 0x01;
	fs.writeFileSync(path.join(bad, ops[k].file), changed);
	const diff = await compareDump(bad);
	check(diff.s.phase === 'done' && diff.s.first && diff.s.first.k === k && diff.s.first.operation === ops[k].operation &&
		diff.verdict.includes('operation ' + ops[k].operation), name + ': a byte changed in tensor ' + k + ' (operation ' +
		ops[k].operation + '): ' + JSON.stringify(diff));
	await shot(page, label + '-run-compare');
	check(errors.length === 0, name + ': page errors: ' + errors.join('; '));
	await page.close();
	/* the bound on what a run keeps (?keep=BYTES): the tensors' .npy files,
	 * their bytes as nbg run --dump lists them and a header of 128 each */
	const need = ops.reduce((a, o) => a + o.bytes + 128, 0);
	for (const keep of [need, need - 1]) {
		const { page: pk } = await openFile(browser, file, '?keep=' + keep);
		await pk.click('button[data-tab=cpu]');
		await pk.waitForFunction(() => document.getElementById('cpu-form'), { timeout: 120000 });
		await (await pk.$('#cpu-input-0')).uploadFile(input);
		await pk.click('#cpu-run');
		await pk.waitForFunction(() => window.nbgState.cpu && window.nbgState.cpu.phase !== 'running', { timeout: 120000 });
		const k = await pk.evaluate(() => ({ s: window.nbgState.cpu, kept: (document.getElementById('cpu-kept') || {}).textContent }));
		check(k.s.phase === 'done' && k.s.dump.bytes === need && k.s.dump.limit === keep && k.s.dump.kept === (keep >= need) &&
			k.kept.startsWith(keep >= need ? 'Every executed operation' : 'The operations\' outputs were not kept') &&
			k.s.outputs.length === res.outputs.length, name + ': ?keep=' + keep + ' (' + need + ' needed): ' + JSON.stringify(k.s.dump && {
			kept: k.s.dump.kept, bytes: k.s.dump.bytes, limit: k.s.dump.limit }) + ' "' + k.kept + '"');
		await pk.close();
	}
	console.log(name + ': ' + shownCount + ' tensors of a run in the node panels as nbg run --dump wrote them (' +
		ops.filter((o) => o.whole_layer).length + ' whole layers); golden: ' + (golden ? beyond + ' beyond 0' : 'none') +
		'; dump comparison: equal, and operation ' + ops[k].operation + ' first differs');
}

async function timeLimit(browser) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const { page } = await openFile(browser, sample, '?limit=1');
	const s = await shown(page);
	check(s.state.phase === 'error' && /was stopped after 0\.001 s/.test(s.status),
		'time limit: page ended in ' + s.state.phase + ': ' + s.status);
	await page.close();
}

/* Page, WebAssembly and Graphviz within 3 MB compressed (gzip -9 of each
 * file the page loads; what a static host serves compressed). */
/* ------------------------------------------------------------ the network's nodes */

/* What the side panel shows: its title and each table's rows. */
function panelShown(page) {
	return page.evaluate(() => {
		const rows = (id) => Array.from(document.querySelectorAll('#panel #' + id + ' tbody tr'))
			.filter((tr) => !tr.classList.contains('empty'))
			.map((tr) => Array.from(tr.cells).map((td) => td.textContent));
		const p = document.getElementById('panel');
		return { hidden: p.hidden, node: p.dataset.node, title: (document.getElementById('panel-title') || {}).textContent,
			operator: rows('p-operator'), tensors: rows('p-tensors'), operations: rows('p-operations'),
			edges: rows('p-edges'), hists: Array.from(p.querySelectorAll('svg.hist')).map((s) => ({
				op: s.dataset.operation, ops: s.dataset.operations, bins: s.querySelectorAll('rect.bin').length,
				sum: Array.from(s.querySelectorAll('rect.bin')).reduce((a, r) => a + Number(r.dataset.count), 0),
				axes: ['x-min', 'x-max', 'y-max', 'x-title'].map((c) => (s.querySelector('text.' + c) || {}).textContent) })) };
	});
}

/* The DOT name of a network layer, as lib/report/dot_commands.c writes it. */
const nodeKey = (l) => (l.layer !== null ? 'L' + l.layer : 'op' + l.first_operation);

/* A node clicked where it is drawn (the real pointer: press and release). */
async function clickNode(page, key) {
	const el = await page.evaluateHandle((k) => Array.from(document.querySelectorAll('#graph g.node'))
		.find((g) => g.querySelector('title').textContent === k), key);
	const shape = await el.$('path, polygon, ellipse');
	await shape.click();
}

/* Each of `keys` clicked: the panel against nbg inspect --json --network
 * --commands (operator, description, stride, each tensor's shape, basis,
 * data type, record; its operations with engine and command) and nbg
 * weights --json (a histogram per decoded stream holding every value of
 * its kernel shape, with axes). */
async function panelMatches(page, file, label, every) {
	const doc = nbgJson('inspect', '--json', '--only', '--network', '--commands', file);
	const weights = nbgJson('weights', '--json', file);
	const wops = weights.weights.operations;
	const layers = doc.network.layers.filter((l, i) => i % every === 0);
	let clicked = 0, findings = 0, channels = 0;
	/* the kernels as nbg weights --out writes them, for the per-channel view */
	const wdir = fs.mkdtempSync(path.join(os.tmpdir(), 'nbg-web-weights-'));
	execFileSync(...argv(nbg, ['weights', file, '--out', path.join(wdir, 'out')]));
	const wfiles = new Map(JSON.parse(fs.readFileSync(path.join(wdir, 'out', 'weights.json'), 'utf8')).weights.operations
		.map((o) => [o.operation, o.files && o.files.weights])); /* a stream shared: the first operation's file */
	for (const l of layers) {
		const key = nodeKey(l);
		await clickNode(page, key);
		const p = await panelShown(page);
		clicked++;
		const what = label + ': node ' + key + ': ';
		check(!p.hidden && p.node === key, what + 'the panel is not shown for it: ' + p.node);
		check(p.title.endsWith(' ' + l.name), what + 'title ' + p.title);
		const op = new Map(p.operator);
		check(op.get('operator') === l.operator && op.get('basis') === l.operator_basis &&
			op.get('description') === l.description, what + 'operator ' + JSON.stringify(p.operator));
		check(op.get('stride') === (l.stride === null ? '—' : l.stride + (l.stride_inferred ? ' (inferred)' : '')),
			what + 'stride ' + op.get('stride'));
		const tensors = new Map(p.tensors.map((r) => [r[0], r.slice(1)]));
		for (const [i, end] of ['input', 'output'].entries()) {
			const t = l[end], col = (f) => (tensors.get(f) || [])[i];
			const shape = t.shape ? t.shape.join('×') : '—';
			check(col('shape') === shape && col('basis') === t.basis && col('data type') === (t.data_type || '—') &&
				col('record') === (t.record === null ? '—' : String(t.record)) &&
				col('zero point (commands)') === (t.zero_point === null || t.zero_point === undefined ? '—' : String(t.zero_point)),
			what + end + ' ' + JSON.stringify(p.tensors) + ', nbg: ' + JSON.stringify(t));
		}
		const mine = (o) => (l.layer !== null ? o.layer_id === l.layer : o.operation === l.first_operation);
		const want = doc.commands.operations.filter(mine).map((o) => [String(o.operation), o.engine, String(o.command)])
			.concat(doc.commands.other_operations.filter(mine).map((o) => [String(o.operation), o.type_name, '—']))
			.sort((a, b) => a[0] - b[0]);
		check(JSON.stringify(p.operations.map((r) => r.slice(0, 3))) === JSON.stringify(want),
			what + 'operations ' + JSON.stringify(p.operations.map((r) => r.slice(0, 3))) + ', nbg: ' + JSON.stringify(want));
		/* the findings naming one of its operations: "operation N (...)" */
		const ids = new Set(want.map((r) => r[0]));
		const fw = doc.commands.findings.filter((f) => ids.has((/^operation ([0-9]+) /.exec(f.text) || [])[1]))
			.map((f) => [f.id, '0x' + f.offset.toString(16).padStart(8, '0'), f.text]);
		const fp = await page.evaluate(() => Array.from(document.querySelectorAll('#panel #p-findings tbody tr'))
			.filter((tr) => !tr.classList.contains('empty')).map((tr) => Array.from(tr.cells).map((td) => td.textContent)));
		check(JSON.stringify(fp) === JSON.stringify(fw), what + 'findings ' + JSON.stringify(fp) + ', nbg: ' + JSON.stringify(fw));
		findings += fw.length;
		const edges = doc.network.edges.filter((e) => (e.from.node === l.node) || (e.to.node === l.node));
		check(p.edges.length === edges.length && edges.every((e) => p.edges.some((r) => r[2] === String(e.bytes) &&
			r[3].startsWith(e.basis))), what + 'edges ' + JSON.stringify(p.edges));
		for (const w of wops.filter((o) => mine(o) && o.status === 'decoded')) {
			/* drawn once for the operations naming its stream */
			const h = p.hists.find((x) => x.ops.split(' ').includes(String(w.operation)));
			const n = w.shape.reduce((a, b) => a * b, 1);
			check(h && h.sum === n && h.axes.every((a) => a !== undefined && a !== ''),
				what + 'weights of operation ' + w.operation + ': ' + JSON.stringify(h) + ', kernel shape ' + w.shape);
			/* per output channel: min, max, mean of code - zero point (an fp16
			 * kernel: its values), computed here from nbg weights --out's file */
			const k = npyValues(fs.readFileSync(path.join(wdir, 'out', wfiles.get(w.operation))));
			const zp = k.descr === '<f2' ? 0 : w.zero_point, per = k.values.length / w.shape[0];
			const ch = await page.evaluate((op) => Array.from(document.querySelectorAll('#panel svg.channels[data-operation="' +
				op + '"] g.ch')).map((g) => [g.dataset.min, g.dataset.max, g.dataset.mean].map(Number)), h ? h.op : '');
			const want = Array.from({ length: w.shape[0] }, (_, c) => {
				const x = k.values.slice(c * per, (c + 1) * per).map((v) => v - zp);
				return [x.reduce((a, b) => Math.min(a, b), Infinity), x.reduce((a, b) => Math.max(a, b), -Infinity),
					x.reduce((a, b) => a + b, 0) / x.length];
			});
			check(ch.length === want.length && want.every((c, i) => c.every((v, j) => Math.abs(v - ch[i][j]) <= 1e-9 * Math.max(1, Math.abs(v)))),
				what + 'per-channel figures of operation ' + w.operation + ': ' + JSON.stringify(ch.slice(0, 3)) + '..., from nbg weights --out: ' +
				JSON.stringify(want.slice(0, 3)));
			channels += ch.length;
		}
	}
	fs.rmSync(wdir, { recursive: true, force: true });
	console.log(label + ': ' + clicked + ' panels, ' + findings + ' findings in them, ' + channels + ' kernel channels');
	return clicked;
}

/* The nodes search should find for q, computed here from nbg's JSON: a
 * layer whose name, operator or description holds q. */
function wantHits(net, q) {
	q = q.toLowerCase();
	return net.layers.filter((l) => [l.name, l.operator, l.description].join('\n').toLowerCase().includes(q)).map(nodeKey);
}

async function search(page, q) {
	await page.evaluate(() => { const s = document.getElementById('graph-search'); s.value = ''; });
	await page.type('#graph-search', q);
	return page.evaluate(() => ({ hits: window.nbgState.hits, selected: window.nbgState.selected,
		marked: Array.from(document.querySelectorAll('#graph g.node.hit')).map((g) => g.querySelector('title').textContent),
		shown: document.getElementById('graph-hits').textContent }));
}

/* Search by a layer's name, by an operator, by a byte offset inside a
 * LAYER record (nbg inspect --layers gives where each record is). */
async function searchMatches(page, file, label) {
	const net = nbgJson('inspect', '--json', '--only', '--network', file).network;
	const recs = nbgJson('inspect', '--json', '--only', '--layers', file);
	const l = net.layers.find((x) => x.layer !== null && net.layers.filter((y) => y.name === x.name).length === 1);
	if (l) {
		const s = await search(page, l.name);
		check(s.selected === nodeKey(l) && s.hits[0] === nodeKey(l), label + ': search by name ' + l.name + ': ' + JSON.stringify(s));
		const rec = recs.layers[l.layer];
		const t = await search(page, '0x' + (rec.record_offset + recs.graph.records.layer.record_size - 1).toString(16));
		check(t.selected === nodeKey(l), label + ': search by the offset of its LAYER record\'s last byte: ' + JSON.stringify(t));
	} else {
		console.log('check_web.js: ' + label + ': no layer with a name of its own to search for');
	}
	const operator = net.layers[net.layers.length - 1].operator;
	const s = await search(page, operator);
	const want = wantHits(net, operator);
	check(JSON.stringify(s.hits) === JSON.stringify(want) && JSON.stringify(s.marked.sort()) === JSON.stringify(want.slice().sort()) &&
		s.selected === want[0] && s.shown === '1 of ' + want.length,
	label + ': search ' + operator + ': ' + JSON.stringify(s) + ', nbg: ' + JSON.stringify(want));
	await page.keyboard.press('Enter');
	const next = await page.evaluate(() => window.nbgState.selected);
	check(next === want[1 % want.length], label + ': Enter goes to the next match: ' + next);
	const none = await search(page, 'no such layer \u2603');
	check(none.hits.length === 0 && none.shown === 'no node', label + ': search for nothing: ' + JSON.stringify(none));
}

/* The sample's network: every node clicked, its panel against nbg; the
 * kernel codes saved from the panel against the .npy nbg weights --out
 * writes; the search. */
async function graphSample(browser, tmp) {
	const sample = path.join(root, 'samples', 'sample.nb');
	const { page, errors } = await openFile(browser, sample);
	await page.click('button[data-tab=graph]');
	const n = await panelMatches(page, sample, 'sample', 1);
	check(n === nbgJson('inspect', '--json', '--only', '--network', sample).network.layers.length, 'sample: nodes clicked ' + n);
	await captureSaves(page);
	await clickNode(page, 'L0');
	await shot(page, 'graph-panel');
	await page.click('#panel button.npy');
	await page.waitForFunction(() => window.__saved.length, { timeout: 30000 });
	const saved = await page.evaluate(() => window.__saved[0]);
	const out = path.join(tmp, 'weights-out');
	execFileSync(...argv(nbg, ['weights', sample, '--out', out]));
	const want = fs.readFileSync(path.join(out, saved.name === 'op1_weights.npy' ? saved.name : 'op1_weights.npy')).toString('hex');
	check(saved.name === 'op1_weights.npy' && saved.hex === want, 'sample: the panel\'s .npy ' + saved.name +
		' (' + saved.hex.length / 2 + ' bytes) differs from nbg weights --out op1_weights.npy (' + want.length / 2 + ')');
	await searchMatches(page, sample, 'sample');
	check(errors.length === 0, 'sample graph: ' + errors.join('; '));
	await page.close();
}

/* The corpus file with the most network nodes: opened (its time is
 * printed; bench/web.js measures it), drawn at a readable scale with its minimap, the data-flow banner as
 * nbg says, its panel for every seventh node, its search. */
async function largest(browser) {
	const files = ['v1', 'v2'].flatMap((d) => fs.readdirSync(path.join(corpus, d)).filter((f) => f.endsWith('.nb'))
		.map((f) => path.join(corpus, d, f)));
	let best = null;
	for (const f of files) {
		const r = spawnSync(...argv(nbg, ['inspect', '--json', '--only', '--network', f]), { encoding: 'utf8', maxBuffer: 1 << 30 });
		if (r.status !== 0) {
			console.log('check_web.js: ' + f + ': no network view (nbg inspect exits ' + r.status + '): not a candidate');
			continue;
		}
		const net = JSON.parse(r.stdout).network;
		if (!best || net.layers.length > best.net.layers.length)
			best = { file: f, net: net };
	}
	const { page, errors } = await openFile(browser, best.file);
	const s = await shown(page);
	console.log('largest network: ' + path.basename(best.file) + ', ' + best.net.layers.length + ' layers, ' +
		s.nodes + ' nodes drawn; opened in ' + Math.round(s.state.doneMs) + ' ms (everything drawn)');
	/* how fast is the benchmark's (bench/web.js, against nbg graph --dot):
	 * here only that it finishes, within the test's time-out */
	check(s.state.phase === 'done', 'largest: ' + s.state.phase + ' in ' + Math.round(s.state.doneMs) + ' ms');
	await page.click('button[data-tab=graph]');
	const v = await page.evaluate(() => {
		const svg = document.querySelector('#graph svg'), vb = svg.getAttribute('viewBox').split(/[\s,]+/).map(Number);
		const b = document.getElementById('dataflow-banner');
		return { scale: svg.clientWidth / vb[2], mini: document.querySelectorAll('#minimap svg rect.view').length,
			banner: b.hidden ? null : b.textContent, folded: !document.getElementById('verdict-more').open };
	});
	check(v.scale >= 0.8, 'largest: drawn at ' + v.scale.toFixed(2) + ' of its size: its 10-point labels are not readable');
	check(v.mini === 1 && v.folded, 'largest: minimap ' + v.mini + ', verdict folded ' + v.folded);
	const w = best.net.data_flow_warnings;
	check(w.length ? v.banner !== null && w.every((x) => v.banner.includes(x.relation + ' fails ' + x.failed + ' of ' + x.checked))
		: v.banner === null, 'largest: banner ' + v.banner + ', nbg: ' + JSON.stringify(w));
	await shot(page, 'large-network');
	/* the minimap: a click near its bottom shows the network's end */
	const mini = await page.$('#minimap svg');
	const mb = await mini.boundingBox();
	await page.mouse.click(mb.x + mb.width / 2, mb.y + mb.height - 2);
	const end = await page.evaluate(() => { const g = document.getElementById('graph');
		return { top: g.scrollTop, max: g.scrollHeight - g.clientHeight }; });
	check(end.max > 0 && end.top >= end.max * 0.9, 'largest: the minimap\'s bottom shows ' + JSON.stringify(end));
	await panelMatches(page, best.file, 'largest', 7);
	await shot(page, 'large-panel');
	await searchMatches(page, best.file, 'largest');
	check(errors.length === 0, 'largest: ' + errors.join('; '));
	await page.close();
}

/* A synthesized network of 503 nodes (bench_mkfile --records 250: 500
 * layers, 250 of them feeding one output, the rest apart): opened (its
 * time printed, bench/web.js measures it) with every node drawn (against nbg graph --dot), laid out left
 * to right (its one rank of 250 boxes would be 125,000 points wide top to
 * bottom), at a readable scale with its minimap; every 25th node's panel
 * against nbg; a screenshot kept. */
async function synthesizedLarge(browser, tmp) {
	const file = path.join(tmp, 'synth-500.nb');
	execFileSync(mkfile, ['--records', '250', file]);
	const { page, errors } = await openFile(browser, file);
	const s = await shown(page);
	const want = dotNodes(file);
	console.log('synthesized network: ' + s.nodes + ' nodes drawn (nbg graph: ' + want + '); opened in ' +
		Math.round(s.state.doneMs) + ' ms (everything drawn), laid out ' + s.state.rankdir);
	check(s.state.phase === 'done' && s.nodes === want && want > 500,
		'synth-500: ' + s.state.phase + ' in ' + Math.round(s.state.doneMs) + ' ms, ' + s.nodes + ' nodes of ' + want);
	await page.click('button[data-tab=graph]');
	const v = await page.evaluate(() => {
		const svg = document.querySelector('#graph svg'), vb = svg.getAttribute('viewBox').split(/[\s,]+/).map(Number);
		return { scale: svg.clientWidth / vb[2], w: vb[2], h: vb[3], mini: document.querySelectorAll('#minimap svg rect.view').length };
	});
	check(s.state.rankdir === 'LR' && v.w < 4 * v.h && v.scale >= 0.8 && v.mini === 1,
		'synth-500: laid out ' + s.state.rankdir + ', ' + JSON.stringify(v));
	await shot(page, 'synth-500-network');
	await panelMatches(page, file, 'synth-500', 25);
	await shot(page, 'synth-500-panel');
	check(errors.length === 0, 'synth-500: ' + errors.join('; '));
	await page.close();
}

/* The headline nbg verify's line implies (doc/cli.md, "nbg verify"): its
 * bracket after OK, or after FAIL the page's for a checksum that does not
 * hold (the report shown unverified) or for a refused file. */
function verifyHeadline(file) {
	const r = spawnSync(...argv(nbg, ['verify', file]), { encoding: 'utf8' });
	const line = (r.stdout || '').split('\n')[0];
	const ok = / OK .*\((verified|structure only|checksum present, algorithm unknown)/.exec(line);
	const fail = / FAIL ([a-z0-9-]+) /.exec(line);
	if (r.status === 0 && ok)
		return { line: line, want: { 'verified': 'Verified', 'structure only': 'Structure valid; no checksum to verify',
			'checksum present, algorithm unknown': 'Structure valid; its checksum cannot be checked' }[ok[1]] };
	if (r.status === 1 && fail)
		return { line: line, want: /checksum-mismatch|crc-sum-mismatch/.test(fail[1]) ? 'Checksum mismatch: shown unverified' :
			'Not a valid NBG: ' + fail[1] };
	return { line: line + ' (exit ' + r.status + ')', want: null };
}

/* Every corpus file, as listed in v1/ and v2/: the page finishes, its
 * headline is the one nbg verify implies, it draws as many nodes as nbg
 * graph --dot writes, and about five nodes' panels (every n-th) equal
 * nbg's JSON (panelMatches).  One line per file; a file the page cannot
 * open fails, saying why. */
async function everyFile(browser) {
	const files = ['v1', 'v2'].flatMap((d) => fs.readdirSync(path.join(corpus, d)).filter((f) => f.endsWith('.nb')).sort()
		.map((f) => path.join(corpus, d, f)));
	let opened = 0, panels = 0;
	for (const file of files) {
		const name = path.basename(path.dirname(file)) + '/' + path.basename(file);
		const failed = bad.length;
		let page = null;
		try {
			const v = verifyHeadline(file);
			check(v.want !== null, name + ': nbg verify says neither OK nor FAIL: ' + v.line);
			const o = await openFile(browser, file), errors = o.errors;
			page = o.page;
			const s = await shown(page);
			check(s.state.phase === 'done', name + ': the page cannot open it: ended in ' + s.state.phase + ': ' + s.status +
				' (' + s.verdict + ')');
			check(errors.length === 0, name + ': page errors: ' + errors.join('; '));
			check(s.verdict === v.want, name + ': verdict "' + s.verdict + '", nbg verify: ' + v.line);
			const nodes = dotNodes(file);
			check(s.nodes === nodes, name + ': the network shows ' + s.nodes + ' nodes, nbg graph --dot has ' + nodes);
			let n = 0;
			if (s.state.phase === 'done') {
				const layers = nbgJson('inspect', '--json', '--only', '--network', file).network.layers.length;
				await page.click('button[data-tab=graph]');
				n = await panelMatches(page, file, name, Math.max(1, Math.ceil(layers / 5)));
				opened++;
			}
			panels += n;
			console.log(name + ': ' + (bad.length === failed ? 'ok' : 'FAILED') + ', ' + s.state.phase + ' in ' +
				Math.round(s.state.doneMs) + ' ms, "' + s.verdict + '", ' + s.nodes + ' nodes (nbg graph: ' + nodes + '), ' +
				n + ' panels against nbg');
		} catch (e) {
			check(false, name + ': ' + (e.message || e));
			console.log(name + ': FAILED: ' + (e.message || e));
		}
		if (page)
			await page.close();
	}
	check(files.length > 0, 'no .nb file in ' + corpus + '/v1 or v2');
	console.log('every file: ' + opened + ' of ' + files.length + ' opened, ' + panels + ' panels against nbg');
}

function budget() {
	const zlib = require('zlib');
	let gz = 0;
	for (const f of fs.readdirSync(site))
		gz += zlib.gzipSync(fs.readFileSync(path.join(site, f)), { level: 9 }).length;
	check(gz <= 3000000, 'the page is ' + gz + ' bytes compressed, over the 3 MB budget');
	console.log('page: ' + gz + ' bytes compressed (gzip -9)');
}

/* The v1 file of one input that runs whole, has a layer of two or more
 * executed NN operations (tiles), with the least work; null when none. */
function tiledRun() {
	let best = null;
	for (const f of fs.readdirSync(path.join(corpus, 'v1')).filter((x) => x.endsWith('.nb')).map((x) => path.join(corpus, 'v1', x))) {
		const r = spawnSync(...argv(nbg, ['run', '--backend', 'cpu', '--check', '--json', f]), { encoding: 'utf8', maxBuffer: 1 << 30 });
		let p = null;
		try {
			p = JSON.parse(r.stdout);
		} catch (e) {
			continue; /* tiledPlan says so */
		}
		const nn = new Map();
		for (const st of p.steps.filter((x) => x.type === 'NN' && x.verdict === 'execute'))
			nn.set(st.layer_id, (nn.get(st.layer_id) || 0) + 1);
		if (p.runs_whole && Math.max(0, ...nn.values()) > 1 && nbgJson('inspect', '--json', f).inputs.length === 1 &&
			(!best || p.totals.work < best.work))
			best = { file: f, work: p.totals.work };
	}
	return best && best.file;
}

/* The corpus file of at most 5 MB whose CPU plan has the most operations
 * per layer, among those with over 80 operations (a tiled model). */
function tiledPlan() {
	let best = null;
	for (const d of ['v1', 'v2'])
		for (const f of fs.readdirSync(path.join(corpus, d)).filter((x) => x.endsWith('.nb')).map((x) => path.join(corpus, d, x))) {
			if (fs.statSync(f).size > 5e6)
				continue;
			const r = spawnSync(...argv(nbg, ['run', '--backend', 'cpu', '--check', '--json', f]), { encoding: 'utf8', maxBuffer: 1 << 30 });
			let st = null;
			try {
				st = JSON.parse(r.stdout).steps;
			} catch (e) {
				console.log('check_web.js: ' + f + ': no CPU plan (nbg run --check exits ' + r.status + '): not a candidate');
				continue;
			}
			const per = st.length / new Set(st.map((x) => x.layer_id)).size;
			if (st.length > 80 && (!best || per > best.per))
				best = { file: f, per: per };
		}
	return best.file;
}

/* The corpus files: the largest v2, the smallest v2, the first v1. */
function corpusFiles() {
	const list = (d) => fs.readdirSync(path.join(corpus, d)).filter((f) => f.endsWith('.nb'))
		.map((f) => path.join(corpus, d, f)).sort();
	const v2 = list('v2').sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
	return [v2[0], v2[v2.length - 1], list('v1')[0]];
}

(async () => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nbg-web-'));
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
	try {
		if (part === '--every') {
			await everyFile(browser);
		} else if (part === '--graph') {
			await largest(browser);
			await synthesizedLarge(browser, tmp);
		} else if (part === '--corpus') {
			const files = corpusFiles();
			for (let i = 0; i < files.length; i++)
				await valid(browser, files[i], 'corpus' + i);
			/* a model the CPU backend runs whole, and one it refuses */
			await cpuTab(browser, path.join(corpus, 'v1', '10014_ee_network_binary.nb'), tmp, 'corpus-ee');
			await cpuTab(browser, path.join(corpus, 'v1', '1000f_7d_face_age_7d.nb'), tmp, 'corpus-face-age');
			/* the corpus file whose plan has the most operations per layer
			 * within 5 MB, for the plan folded into its layers */
			await cpuTab(browser, tiledPlan(), tmp, 'corpus-tiled', true);
			/* a run's per-operation outputs and comparisons: LeNet with the
			 * input a V853 board ran and the golden vpm_run compared it with */
			const lenet1 = path.join(corpus, 'v1', '1000f_ee_lenet_model.nb'), gd = path.join(corpus, '..', 'goldens', 'v853-lenet');
			if (fs.existsSync(lenet1) && fs.existsSync(path.join(gd, 'output0_10_1.dat'))) {
				/* the golden: raw fp16 values */
				const decode = (raw) => Array.from({ length: raw.length / 2 }, (_, i) => half(raw.readUInt16LE(2 * i)));
				const raw = fs.readFileSync(path.join(gd, 'output0_10_1.dat'));
				await runOutputs(browser, lenet1, path.join(gd, 'input_0.dat'), { file: path.join(gd, 'output0_10_1.dat'),
					bytes: raw, values: decode(raw), decode: decode }, tmp, 'lenet');
			} else {
				console.log('check_web.js: the run\'s outputs in the panels not checked: ' + lenet1 + ' or ' + gd +
					'/output0_10_1.dat does not exist');
			}
			/* the same on the v1 file of one input with a tiled layer that runs
			 * whole with the least work: tiles and whole-layer tensors */
			const t = tiledRun();
			if (t) {
				const io = nbgJson('inspect', '--json', t).inputs[0], input = path.join(tmp, 'tiled-in.bin');
				fs.writeFileSync(input, Buffer.from(Array.from({ length: io.byte_size }, (_, j) => (j * 31 + 3) % 251)));
				await runOutputs(browser, t, input, null, tmp, 'tiled');
			} else {
				console.log('check_web.js: no v1 file of one input with a tiled layer runs whole: tiles in the panels not checked');
			}
			/* a file whose version has no sample: the caveat, and a run */
			const lenet = path.join(process.env.NBG_MODELS_DIR || '', 'lenet-caffe', 'lenet_v2_0x10016.nb');
			if (fs.existsSync(lenet))
				await cpuTab(browser, lenet, tmp, 'lenet-v2');
			else
				console.log('check_web.js: the caveat check skipped: ' + lenet + ' does not exist ' +
					'(meson option models_dir)');
		} else {
			budget();
			await valid(browser, path.join(root, 'samples', 'sample.nb'), 'sample');
			await truncated(browser, tmp);
			await hostile(browser, tmp);
			await graphSample(browser, tmp);
			await timeLimit(browser);
			await histograms(browser, tmp);
			await mapHover(browser);
			await exportsMatch(browser);
			await cpuTab(browser, path.join(root, 'samples', 'sample.nb'), tmp, 'sample');
			/* 32 records naming one convolution (tests/cpu_hostile.c): every
			 * operation executable, the whole over the work limit, which the
			 * page holds as nbg does (doc/cpu-backend.md, "Limits") */
			const work = path.join(tmp, 'shared-conv.nb');
			execFileSync(...argv(mkhostile, ['shared-conv', work]));
			check(nbgJson('run', '--backend', 'cpu', '--check', '--json', work).refusal.limit === 'max_work',
				'shared-conv: nbg does not refuse it for its work');
			await cpuTab(browser, work, tmp, 'cpu-work-limit');
		}
	} finally {
		await browser.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
	for (const b of bad)
		console.log('FAIL ' + b);
	console.log('screenshots in ' + artifacts);
	console.log(checks - bad.length + ' passed, ' + bad.length + ' failed');
	process.exit(bad.length ? 1 : 0);
})().catch((e) => {
	console.log('check_web.js: ' + (e.stack || e));
	process.exit(1);
});

// bench/web.js - the page's first report beside the native command, side by
// side in one run:
//
//   the page (headless Chromium, file://): from the file handed to the page
//     to the verdict and report tables drawn (window.nbgState.firstReportMs:
//     reading the file, the copy into the worker, the parse with every CRC
//     and SHA-256 in WebAssembly, the JSON report, the DOM tables)
//   vs  nbg inspect --json FILE >/dev/null (the same work natively, process
//     start included)
//
// on a synthesized 5 MiB v2 file (bench/mkfile.c) and on the largest file of
// a corpus directory when one is given, in interleaved rounds; the median of
// each, their ratio, and the page's compressed size (gzip -9 of every file
// of the built page: the budget is 3 MB).  Then the corpus file whose
// network has the most nodes: the page's time until everything is drawn
// (window.nbgState.doneMs: the report, the byte map, the network laid out
// by Graphviz with its histograms and minimap) beside nbg graph --dot, and
// the same on a synthesized network of 503 nodes (bench/mkfile.c --records
// 250: 500 layers, 250 of them feeding one output).
//
//   node bench/web.js NBG BENCH_MKFILE SOURCE_ROOT [CORPUS_DIR]
// Environment: BENCH_RUNS (7), NBG_WEB_SITE (default SOURCE_ROOT/build-web/site).
// Exits 77 when the page, Chromium or puppeteer-core is absent.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { execFileSync, spawnSync } = require('child_process');

const [nbg, mkfile, rootArg, corpus] = process.argv.slice(2);
const root = path.resolve(rootArg);
const runs = Number(process.env.BENCH_RUNS) || 7;
const site = process.env.NBG_WEB_SITE || path.join(root, 'build-web', 'site');
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
let puppeteer = null;
try {
	puppeteer = require(path.join(root, 'web', 'node_modules', 'puppeteer-core'));
} catch (e) { /* below */ }
if (!fs.existsSync(path.join(site, 'index.html')) || !chromium || !puppeteer) {
	console.log('bench/web.js: skipped: needs the built page (sh web/build.sh), Chromium and ' +
		'the npm packages in web/ (sh scripts/setup.sh --web)');
	process.exit(77);
}

const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];

function native(file) {
	const t0 = process.hrtime.bigint();
	const r = spawnSync(nbg, ['inspect', '--json', file], { stdio: ['ignore', 'ignore', 'ignore'] });
	if (r.status !== 0)
		throw new Error('nbg inspect --json ' + file + ' exited ' + r.status);
	return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function pageRound(browser, file, whole) {
	const page = await browser.newPage();
	await page.goto('file://' + path.join(site, 'index.html'));
	/* the workers have started and compiled their WebAssembly (the page
	 * does that when it opens, before a person picks a file) */
	await page.waitForFunction(() => window.nbgState && window.nbgState.ready);
	await new Promise((r) => setTimeout(r, 300));
	await (await page.$('#pick')).uploadFile(file);
	await page.waitForFunction((w) => (w ? ['done', 'error'] : ['report', 'done', 'error'])
		.includes(window.nbgState.phase), { timeout: 120000 }, whole);
	const s = await page.evaluate(() => window.nbgState);
	await page.close();
	if (s.phase === 'error')
		throw new Error(file + ': the page failed: ' + JSON.stringify(s.error));
	return whole ? s.doneMs : s.firstReportMs;
}

/* The corpus file whose network view has the most nodes. */
function largestNetwork() {
	const layers = (f) => { const r = spawnSync(nbg, ['inspect', '--json', '--only', '--network', f], { encoding: 'utf8', maxBuffer: 1 << 30 });
		return r.status === 0 ? JSON.parse(r.stdout).network.layers.length : -1; };
	const all = ['v1', 'v2'].flatMap((d) => fs.readdirSync(path.join(corpus, d)).filter((f) => f.endsWith('.nb')).map((f) => path.join(corpus, d, f)));
	return all.map((f) => [layers(f), f]).sort((a, b) => b[0] - a[0])[0];
}

function nativeDot(file) {
	const t0 = process.hrtime.bigint();
	spawnSync(nbg, ['graph', file, '--dot', '-'], { stdio: ['ignore', 'ignore', 'ignore'] });
	return Number(process.hrtime.bigint() - t0) / 1e6;
}

function siteSize() {
	let raw = 0, gz = 0;
	for (const f of fs.readdirSync(site)) {
		const b = fs.readFileSync(path.join(site, f));
		raw += b.length;
		gz += zlib.gzipSync(b, { level: 9 }).length;
	}
	return { raw, gz };
}

(async () => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nbg-web-bench-'));
	const files = [path.join(tmp, 'synth-5.nb')];
	execFileSync(mkfile, ['5', files[0]]);
	if (corpus && fs.existsSync(path.join(corpus, 'v2'))) {
		const v2 = fs.readdirSync(path.join(corpus, 'v2')).filter((f) => f.endsWith('.nb'))
			.map((f) => path.join(corpus, 'v2', f));
		v2.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
		files.push(v2[0]);
	}
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
	const rows = [];
	let net = null, synth = null;
	try {
		if (corpus && fs.existsSync(path.join(corpus, 'v2'))) {
			const [layers, file] = largestNetwork();
			const page = [], nat = [];
			await pageRound(browser, file, true);
			for (let i = 0; i < runs; i++) {
				page.push(await pageRound(browser, file, true));
				nat.push(nativeDot(file));
			}
			net = { file: path.basename(file), layers, page_everything_ms: median(page), native_graph_dot_ms: median(nat),
				budget_ms: 4000 };
		}
		{
			/* a synthesized network of 503 nodes (bench_mkfile --records 250) */
			const file = path.join(tmp, 'synth-500.nb');
			execFileSync(mkfile, ['--records', '250', file]);
			const page = [], nat = [];
			await pageRound(browser, file, true);
			for (let i = 0; i < runs; i++) {
				page.push(await pageRound(browser, file, true));
				nat.push(nativeDot(file));
			}
			synth = { file: 'synth-500.nb (bench_mkfile --records 250)', layers: 500, page_everything_ms: median(page),
				native_graph_dot_ms: median(nat), budget_ms: 6000 };
		}
		for (const file of files) {
			const page = [], nat = [];
			await pageRound(browser, file); /* warm-up, not counted */
			for (let i = 0; i < runs; i++) {
				page.push(await pageRound(browser, file));
				nat.push(native(file));
			}
			rows.push({ file: path.basename(file), bytes: fs.statSync(file).size,
				page_first_report_ms: median(page), native_inspect_json_ms: median(nat),
				ratio: median(page) / median(nat), budget_ms: 300 });
		}
	} finally {
		await browser.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
	const size = siteSize();
	console.log('file                                   bytes   page first report   nbg inspect --json   ratio');
	for (const r of rows)
		console.log(r.file.padEnd(36) + String(r.bytes).padStart(9) +
			(r.page_first_report_ms.toFixed(1) + ' ms').padStart(20) +
			(r.native_inspect_json_ms.toFixed(1) + ' ms').padStart(21) + r.ratio.toFixed(1).padStart(8));
	if (net)
		console.log('largest network: ' + net.file + ', ' + net.layers + ' layers: the page draws everything in ' +
			net.page_everything_ms.toFixed(0) + ' ms (budget 4000), nbg graph --dot ' + net.native_graph_dot_ms.toFixed(1) + ' ms');
	console.log('synthesized network: ' + synth.file + ', ' + synth.layers + ' layers: the page draws everything in ' +
		synth.page_everything_ms.toFixed(0) + ' ms (budget 6000), nbg graph --dot ' + synth.native_graph_dot_ms.toFixed(1) + ' ms');
	console.log('page size: ' + size.raw + ' bytes, ' + size.gz + ' gzip -9 (budget 3000000)');
	console.log(JSON.stringify({ runs, rows, largest_network: net, synthesized_network: synth, page_bytes: size.raw, page_gzip_bytes: size.gz }));
	const over = rows.some((r) => r.file.startsWith('synth-5') && r.page_first_report_ms > 300) ||
		size.gz > 3000000 || (net && net.page_everything_ms > net.budget_ms) || synth.page_everything_ms > synth.budget_ms;
	process.exit(over ? 1 : 0);
})().catch((e) => {
	console.log('bench/web.js: ' + (e.stack || e));
	process.exit(1);
});

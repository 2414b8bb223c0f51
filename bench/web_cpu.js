// bench/web_cpu.js - a model run by the CPU backend in the page beside the
// native command, side by side in one run:
//
//   the page (headless Chromium, file://): the Run (CPU) tab's run, from the
//     click to the outputs shown (window.nbgState.cpu.ms: the input files'
//     copy into the worker, the plan, the run and the outputs' .npy files,
//     in WebAssembly), in the build with SIMD and in the one without
//     (?simd=0)
//   vs  nbg run --backend cpu MODEL --input ... --output-dir DIR (the same
//     work natively, process start and the written files included)
//
// on the corpus models below that the CPU backend runs whole, each on one
// synthesized input, in interleaved rounds; the median of each, the model's
// multiply-accumulates (`nbg run --backend cpu --check --json`) per second
// of each, and their ratios: SIMD over scalar, native over SIMD.
//
//   node bench/web_cpu.js NBG SOURCE_ROOT CORPUS_DIR
// Environment: BENCH_RUNS (5), NBG_WEB_SITE (default SOURCE_ROOT/build-web/site).
// Exits 77 when the page, Chromium, puppeteer-core or the corpus is absent.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

const [nbg, rootArg, corpus] = process.argv.slice(2);
const root = path.resolve(rootArg);
const runs = Number(process.env.BENCH_RUNS) || 5;
const site = process.env.NBG_WEB_SITE || path.join(root, 'build-web', 'site');
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
const MODELS = ['v1/10014_ee_network_binary.nb', 'v1/1000f_ee_lenet_model.nb',
	'v1/1000e_be_emotion_be_C305X.nb', 'v1/10014_be_image_classify_be_C305X.nb'];
let puppeteer = null;
try {
	puppeteer = require(path.join(root, 'web', 'node_modules', 'puppeteer-core'));
} catch (e) { /* below */ }
if (!fs.existsSync(path.join(site, 'index.html')) || !chromium || !puppeteer) {
	console.log('bench/web_cpu.js: skipped: needs the built page (sh web/build.sh), Chromium and ' +
		'the npm packages in web/ (sh scripts/setup.sh --web)');
	process.exit(77);
}
if (!corpus || !fs.existsSync(path.join(corpus, MODELS[0]))) {
	console.log('bench/web_cpu.js: skipped: ' + corpus + ' does not hold the corpus (meson option corpus_dir)');
	process.exit(77);
}

const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const json = (args) => JSON.parse(execFileSync(nbg, args, { encoding: 'utf8', maxBuffer: 1 << 30 }));

/* One synthesized raw file per input: byte j of input k is (j * 31 + k * 7 + 3) mod 251. */
function inputs(model, tmp) {
	return json(['inspect', '--json', model]).inputs.map((io, k) => {
		const f = path.join(tmp, path.basename(model) + '.in' + k + '.bin');
		fs.writeFileSync(f, Buffer.from(Array.from({ length: io.byte_size }, (_, j) => (j * 31 + k * 7 + 3) % 251)));
		return f;
	});
}

function native(model, ins, tmp) {
	const t0 = process.hrtime.bigint();
	const r = spawnSync(nbg, ['run', '--backend', 'cpu', model, ...ins.flatMap((f) => ['--input', f]),
		'--output-dir', path.join(tmp, 'out')], { stdio: ['ignore', 'ignore', 'ignore'] });
	if (r.status !== 0)
		throw new Error('nbg run --backend cpu ' + model + ' exited ' + r.status);
	return Number(process.hrtime.bigint() - t0) / 1e6;
}

/* The page with the model open in its Run (CPU) tab; query: '' or '&simd=0'. */
async function open(browser, model, query) {
	const page = await browser.newPage();
	await page.goto('file://' + path.join(site, 'index.html') + '?limit=600000' + query);
	await page.waitForFunction(() => window.nbgState && window.nbgState.ready);
	await (await page.$('#pick')).uploadFile(model);
	await page.waitForFunction(() => ['done', 'error'].includes(window.nbgState.phase), { timeout: 120000 });
	await page.click('button[data-tab=cpu]');
	await page.waitForFunction(() => document.getElementById('cpu-run'), { timeout: 120000 });
	return page;
}

async function pageRound(page, ins) {
	await page.bringToFront(); /* two pages are open: the one in front is not throttled */
	for (let k = 0; k < ins.length; k++)
		await (await page.$('#cpu-input-' + k)).uploadFile(ins[k]);
	await page.evaluate(() => { window.nbgState.cpu = null; });
	await page.click('#cpu-run');
	await page.waitForFunction(() => window.nbgState.cpu && window.nbgState.cpu.phase !== 'running',
		{ timeout: 600000 });
	const c = await page.evaluate(() => window.nbgState.cpu);
	if (c.phase !== 'done')
		throw new Error('the page did not run: ' + c.error);
	return c.ms;
}

(async () => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nbg-web-cpu-bench-'));
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-timer-throttling',
			'--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'] });
	const rows = [];
	try {
		for (const rel of MODELS) {
			const model = path.join(corpus, rel);
			const macs = json(['run', '--backend', 'cpu', '--check', '--json', model]).steps
				.reduce((a, s) => a + s.macs, 0);
			const ins = inputs(model, tmp);
			const simd = await open(browser, model, ''), scalar = await open(browser, model, '&simd=0');
			const builds = await Promise.all([simd, scalar].map((pg) => pg.evaluate(() => window.nbgState.build)));
			if (builds[0] !== 'simd' || builds[1] !== 'scalar')
				throw new Error('the page runs the builds ' + builds.join(', ') + ', not simd and scalar');
			await pageRound(simd, ins); /* warm-up, not counted */
			await pageRound(scalar, ins);
			const p = [], q = [], n = [];
			for (let i = 0; i < runs; i++) {
				p.push(await pageRound(simd, ins));
				q.push(await pageRound(scalar, ins));
				n.push(native(model, ins, tmp));
			}
			await simd.close();
			await scalar.close();
			rows.push({ model: rel, macs, simd_ms: median(p), scalar_ms: median(q), native_ms: median(n) });
		}
	} finally {
		await browser.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
	const g = (macs, ms) => (macs / ms / 1e6).toFixed(2) + ' G';
	console.log('model'.padEnd(40) + 'MACs'.padStart(11) + 'page SIMD'.padStart(20) + 'page scalar'.padStart(20) +
		'nbg run --backend cpu'.padStart(24) + 'SIMD/scalar'.padStart(13) + 'native/SIMD'.padStart(13));
	for (const r of rows)
		console.log(r.model.padEnd(40) + String(r.macs).padStart(11) +
			(r.simd_ms.toFixed(1) + ' ms ' + g(r.macs, r.simd_ms)).padStart(20) +
			(r.scalar_ms.toFixed(1) + ' ms ' + g(r.macs, r.scalar_ms)).padStart(20) +
			(r.native_ms.toFixed(1) + ' ms ' + g(r.macs, r.native_ms)).padStart(24) +
			(r.scalar_ms / r.simd_ms).toFixed(2).padStart(13) + (r.simd_ms / r.native_ms).toFixed(2).padStart(13));
	console.log(JSON.stringify({ runs, rows }));
})().catch((e) => {
	console.log('bench/web_cpu.js: ' + (e.stack || e));
	process.exit(1);
});

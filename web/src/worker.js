/*
 * worker.js - runs in a Web Worker after the emscripten glue (nbg.js, the
 * wasm inside it): every request of the page becomes one call into libnbg.
 * The page bounds each request's time and ends this worker when it is
 * exceeded, so a file that made libnbg work too long cannot hang the page.
 *
 * Request:  {id, op, slot, bytes, name, what, inputs, index, goldens,
 *           entries, tolerance}
 * Answer:   {id, text} (the library's text; a CPU run adds npy, each
 *           output's float32 .npy file), or {id, fault} (a JS exception:
 *           the wasm ran out of memory, ...).
 */
'use strict';
/* global NbgModule */
const ready = NbgModule();

function cString(M, s) {
	const n = M.lengthBytesUTF8(s) + 1;
	const p = M._malloc(n);
	M.stringToUTF8(s, p, n);
	return p;
}

function take(M, p) {
	if (!p)
		return '{"ok":false,"error":{"code":"out-of-memory","offset":0,"field":"","message":"the page ran out of memory"}}';
	const s = M.UTF8ToString(p);
	M._nbg_web_free(p);
	return s;
}

/* A run of the CPU backend: each input file handed over under its name
 * (its extension says how it is read), then the run; on success the
 * outputs' .npy files are copied out of the WebAssembly memory into
 * req.npy, which the answer carries. */
function cpuRun(M, req, arg) {
	if (!M._nbg_web_loaded(0))
		return JSON.stringify({ ok: false, error: { code: 'invalid-argument', field: '',
			message: 'no file is loaded in the page\'s worker (it was restarted after a time limit): open the file again' } });
	for (let k = 0; k < req.inputs.length; k++) {
		const bytes = new Uint8Array(req.inputs[k].bytes);
		const p = M._nbg_web_cpu_input(k, arg(req.inputs[k].name), bytes.length);
		if (!p)
			return take(M, 0);
		M.HEAPU8.set(bytes, p);
	}
	const text = take(M, M._nbg_web_cpu_run(req.keep === undefined ? -1 : req.keep));
	const doc = JSON.parse(text);
	req.npy = [];
	if (doc.ok) {
		const sizep = M._malloc(8);
		try {
			for (let i = 0, n = M._nbg_web_cpu_output_count(); i < n; i++) {
				const p = M._nbg_web_cpu_output(i, sizep);
				const n = M.HEAPU32[sizep >> 2];
				req.npy.push(p ? M.HEAPU8.slice(p, p + n).buffer : null);
			}
		} finally {
			M._free(sizep);
		}
	}
	return text;
}

/* A .npy the library made (fn(sizep): its malloc'd bytes) into req.npy. */
function npyOf(M, req, fn) {
	const sizep = M._malloc(8);
	try {
		const p = fn(sizep);
		const n = M.HEAPU32[sizep >> 2];
		req.npy = p ? [M.HEAPU8.slice(p, p + n).buffer] : [];
		if (p)
			M._nbg_web_free(p);
		return JSON.stringify({ ok: !!p });
	} finally {
		M._free(sizep);
	}
}

/* Bytes copied into a buffer the library gave (0: out of memory). */
function hand(M, p, bytes) {
	if (p)
		M.HEAPU8.set(new Uint8Array(bytes), p);
	return p;
}

/* The last run's outputs against golden files: each {index, name, bytes}
 * handed over, then compared with req.tolerance. */
function cpuGolden(M, req, arg) {
	for (const g of req.goldens)
		if (!hand(M, M._nbg_web_cpu_golden(g.index, arg(g.name), g.bytes.byteLength), g.bytes))
			return take(M, 0);
	return take(M, M._nbg_web_cpu_compare(req.tolerance));
}

/* The last run's dump against a dump of nbg run --dump: each of
 * req.entries ({entry: its dump.json text, bytes: its .npy}) in order;
 * the answer lists each one's figures or failure, up to the first failure. */
function cpuDumpCompare(M, req, arg) {
	const out = [];
	for (let k = 0; k < req.entries.length; k++) {
		const e = req.entries[k], n = e.bytes.byteLength;
		const p = M._malloc(n || 1);
		if (!p)
			return take(M, 0);
		try {
			hand(M, p, e.bytes);
			const r = JSON.parse(take(M, M._nbg_web_cpu_compare_entry(k, arg(e.entry), p, n, req.tolerance)));
			out.push(r.ok ? JSON.parse(r.text) : { error: r.error });
			if (!r.ok)
				break;
		} finally {
			M._free(p);
		}
	}
	return JSON.stringify({ ok: true, text: JSON.stringify({ tensors: out }) });
}

function run(M, req) {
	const str = [];
	const arg = (s) => { const p = cString(M, s || ''); str.push(p); return p; };
	try {
		switch (req.op) {
		case 'ping': M._nbg_web_warm(); return '{"ok":true}';
		case 'load': {
			const bytes = new Uint8Array(req.bytes);
			const p = M._nbg_web_buffer(req.slot, bytes.length);
			if (!p)
				return take(M, 0);
			M.HEAPU8.set(bytes, p);
			return take(M, M._nbg_web_parse(req.slot));
		}
		case 'report': return take(M, M._nbg_web_report(req.slot, arg(req.name), req.what >>> 0));
		case 'dot': return take(M, M._nbg_web_dot(req.slot, arg(req.name)));
		case 'map': return take(M, M._nbg_web_map(req.slot, arg(req.name)));
		case 'meta': return take(M, M._nbg_web_meta(req.slot));
		case 'diff': return take(M, M._nbg_web_diff(arg(req.name), arg(req.name2)));
		case 'weights': return take(M, M._nbg_web_weights(req.slot));
		case 'weights-npy': return npyOf(M, req, (sp) => M._nbg_web_weights_npy(req.slot, req.index, sp));
		case 'cpu-tensor-npy': return npyOf(M, req, (sp) => M._nbg_web_cpu_tensor_npy(req.index, sp));
		case 'cpu-golden': return cpuGolden(M, req, arg);
		case 'cpu-dump-compare': return cpuDumpCompare(M, req, arg);
		case 'cpu-plan': return take(M, M._nbg_web_cpu_plan());
		case 'cpu-run': return cpuRun(M, req, arg);
		default: throw new Error('unknown request ' + req.op);
		}
	} finally {
		str.forEach((p) => M._free(p));
	}
}

self.onmessage = (e) => {
	ready.then((M) => {
		const t0 = performance.now();
		let answer;
		try {
			answer = { id: e.data.id, text: run(M, e.data) };
			if (e.data.npy)
				answer.npy = e.data.npy;
		} catch (err) {
			answer = { id: e.data.id, fault: String(err && err.message || err) };
		}
		answer.ms = performance.now() - t0;
		self.postMessage(answer, (answer.npy || []).filter((b) => b));
	}, (err) => self.postMessage({ id: e.data.id, fault: 'the WebAssembly module did not start: ' + err }));
};

/*
 * viz-worker.js - runs in a Web Worker after Graphviz for the browser
 * (@viz-js/viz, its wasm inside it): lays out a DOT document as SVG.  The
 * page bounds the time and ends this worker when it is exceeded.
 * Request {id, dot}; answer {id, svg} or {id, fault}.
 */
'use strict';
/* global Viz */
const viz = Viz.instance();
self.onmessage = (e) => {
	viz.then((v) => {
		const t0 = performance.now();
		try {
			const r = v.render(e.data.dot, { format: 'svg' });
			if (r.status === 'success')
				self.postMessage({ id: e.data.id, svg: r.output, ms: performance.now() - t0 });
			else
				self.postMessage({ id: e.data.id, fault: 'Graphviz: ' +
					r.errors.map((x) => x.message).join('; ') });
		} catch (err) {
			self.postMessage({ id: e.data.id, fault: 'Graphviz: ' + String(err && err.message || err) });
		}
	}, (err) => self.postMessage({ id: e.data.id, fault: 'Graphviz did not start: ' + err }));
};

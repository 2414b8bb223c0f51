/*
 * render.js - the page's DOM helpers.  Text from a file (names, messages,
 * anything in a report) only ever reaches the page as textContent or an
 * attribute value set through the DOM; no markup is built from strings.
 * The two SVG pictures (the byte map libnbg draws, the network Graphviz
 * lays out) are parsed as XML, then copied element by element through an
 * allow-list: no script, no event handler, no link out of the picture.
 */
'use strict';

const R = {};

/* el('td', {class: 'x'}, 'text', child...) */
R.el = function (tag, attrs, ...children) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === undefined || v === null)
			continue;
		if (k === 'class')
			e.className = v;
		else
			e.setAttribute(k, String(v));
	}
	for (const c of children) {
		if (c === undefined || c === null)
			continue;
		e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
	}
	return e;
};

R.clear = function (e) {
	while (e.firstChild)
		e.removeChild(e.firstChild);
	return e;
};

R.hex = (v, w) => (typeof v === 'number' ? '0x' + v.toString(16).padStart(w || 8, '0') : '');

R.bytes = function (n) {
	if (typeof n !== 'number')
		return n === null || n === undefined ? '—' : String(n);
	return n.toLocaleString('en-US') + (n >= 1024 ? '\u00a0(' + (n >= 1048576 ? (n / 1048576).toFixed(2) + '\u00a0MiB' : (n / 1024).toFixed(1) + '\u00a0KiB') + ')' : '');
};

R.text = function (v) {
	if (v === null || v === undefined)
		return '—';
	if (typeof v === 'boolean')
		return v ? 'yes' : 'no';
	if (Array.isArray(v))
		return v.map(R.text).join(v.every((x) => typeof x === 'number') ? '×' : ', ');
	if (typeof v === 'object')
		return JSON.stringify(v);
	return String(v);
};

/* A table: columns [{key, title, fmt}], rows: objects. */
R.table = function (id, caption, columns, rows, note) {
	const t = R.el('table', { class: 'data', id: id });
	t.appendChild(R.el('caption', {}, caption, note ? R.el('span', { class: 'note' }, ' ' + note) : null));
	const head = R.el('tr');
	for (const c of columns)
		head.appendChild(R.el('th', { scope: 'col' }, c.title));
	t.appendChild(R.el('thead', {}, head));
	const body = R.el('tbody');
	for (const r of rows) {
		const tr = R.el('tr');
		for (const c of columns) {
			const v = c.fmt ? c.fmt(r) : R.text(r[c.key]);
			const td = R.el('td', { 'data-key': c.key }, v);
			if (c.cls)
				td.className = c.cls(r) || '';
			tr.appendChild(td);
		}
		body.appendChild(tr);
	}
	if (!rows.length)
		body.appendChild(R.el('tr', { class: 'empty' }, R.el('td', { colspan: columns.length }, 'none')));
	t.appendChild(body);
	return t;
};

/* A two-column table of [label, value] pairs. */
R.pairs = function (id, caption, pairs) {
	return R.table(id, caption, [{ key: 'k', title: 'field' }, { key: 'v', title: 'value' }],
		pairs.filter((p) => p).map(([k, v]) => ({ k: k, v: v })));
};

/* The SVG elements and attributes a picture may keep. */
const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'path', 'rect', 'circle', 'ellipse', 'line', 'polyline',
	'polygon', 'text', 'tspan', 'title', 'desc', 'defs', 'lineargradient', 'stop', 'style']);
const SVG_ATTRS = /^(id|class|x|y|x1|x2|y1|y2|cx|cy|r|rx|ry|width|height|d|points|fill|stroke|stroke-width|stroke-dasharray|stroke-linejoin|stroke-linecap|opacity|fill-opacity|stroke-opacity|transform|viewbox|font-family|font-size|font-weight|font-style|text-anchor|dominant-baseline|preserveaspectratio|offset|stop-color|data-[a-z0-9-]+|xml:space)$/i;

function copySvg(node) {
	if (node.nodeType === Node.TEXT_NODE)
		return document.createTextNode(node.nodeValue);
	if (node.nodeType !== Node.ELEMENT_NODE || node.namespaceURI !== SVG_NS ||
	    !SVG_TAGS.has(node.localName.toLowerCase()))
		return null;
	const e = document.createElementNS(SVG_NS, node.localName);
	for (const a of Array.from(node.attributes)) {
		if (SVG_ATTRS.test(a.name) && !/url\s*\(|javascript:|expression\s*\(/i.test(a.value))
			e.setAttribute(a.name, a.value);
	}
	/* a <style> keeps only its text: it cannot reach a script, and the page's
	 * policy (connect-src, img-src) stops anything it could load */
	for (const c of Array.from(node.childNodes)) {
		const k = copySvg(c);
		if (k)
			e.appendChild(k);
	}
	return e;
}

/* The SVG element of a picture, or throws with what was wrong. */
R.svg = function (text) {
	const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
	const root = doc.documentElement;
	if (!root || root.localName !== 'svg' || doc.getElementsByTagName('parsererror').length)
		throw new Error('the picture is not an SVG document');
	return copySvg(root);
};

/* An SVG element made here (text as a text node). */
R.svgEl = function (tag, attrs, text) {
	const e = document.createElementNS(SVG_NS, tag);
	for (const [k, v] of Object.entries(attrs || {}))
		e.setAttribute(k, String(v));
	if (text !== undefined)
		e.appendChild(document.createTextNode(String(text)));
	return e;
};

/* A file download of `text` (a string or an ArrayBuffer; no network: a
 * blob: URL of this page). */
R.download = function (name, type, text) {
	const url = URL.createObjectURL(new Blob([text], { type: type }));
	const a = R.el('a', { href: url, download: name });
	document.body.appendChild(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(url), 10000);
};

self.R = R;

/*
 * ledger_map.c - the picture of a file: an SVG drawn from a ledger alone
 * (doc/ledger.md, "The map").
 *
 * Two bands: one to scale, where a 48-byte header next to a megabyte of
 * coefficients is invisible, and one where each range's width grows with
 * log2 of its size, so every structure stays visible and labeled.  Light
 * connectors join a range's place in one band to its place in the other.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "common/grow.h"
#include "nbg/ledger.h"

typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->n;
		va_start(ap, fmt);
		k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)k < room) {
			b->n += (size_t)k;
			return;
		}
		char *p = nbg_grow(b->p, &b->cap, b->n + (size_t)k + 1, 1, 8192);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
	}
}

/* Text for XML: markup characters escaped, anything outside printable
 * ASCII replaced, so a file name can never make the document invalid. */
static void sb_text(sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		switch (ch) {
		case '&': sb_printf(b, "&amp;"); break;
		case '<': sb_printf(b, "&lt;"); break;
		case '>': sb_printf(b, "&gt;"); break;
		case '"': sb_printf(b, "&quot;"); break;
		case '\'': sb_printf(b, "&apos;"); break;
		default: sb_printf(b, "%c", ch >= 0x20 && ch < 0x7f ? ch : '?');
		}
	}
}

/* log2(x) for x >= 1, to within 0.09: exponent plus the mantissa's linear
 * approximation.  Plenty for band widths, and keeps libnbg off libm. */
static double lg2(double x)
{
	double e = 0;
	while (x >= 2) {
		x /= 2;
		e += 1;
	}
	return e + (x - 1);
}

/* 1234567 -> "1,234,567" */
static const char *commas(uint64_t v, char out[32])
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), o = 0;
	for (int i = 0; i < n; i++) {
		out[o++] = tmp[i];
		if ((n - i - 1) % 3 == 0 && i != n - 1)
			out[o++] = ',';
	}
	out[o] = '\0';
	return out;
}

static const char *const class_color[NBG_LEDGER_CLASS_COUNT] = {
	"#4e79a7", /* decoded-record: blue */
	"#f28e2b", /* alignment: orange */
	"#c9c3bf", /* padding: light grey */
	"#59a14f", /* preserved-opaque: green */
	"#e15759", /* connection-tail: red */
	"#b07aa1", /* opaque-fixed-extension: purple */
	"#76b7b2", /* decoded-coefficients: teal */
};

#define TAIL_COLOR "#d62728"
#define MARGIN 24.0
#define LIN_Y 84.0
#define LIN_H 26.0
#define LOG_Y 182.0
#define LOG_H 34.0
#define MIN_W 9.0  /* narrowest band in the log view */
#define LABEL_STEP 13.0
#define CHAR_W 6.0   /* average advance of a 10 px label character */
#define LABEL_ANGLE 60 /* degrees below the horizontal */
#define COS_A 0.5
#define SIN_A 0.866

/* Short label for a range in the log band. */
static void range_label(const nbg_ledger_range *r, char *out, size_t n)
{
	char num[32];
	if (r->cls == NBG_LEDGER_ALIGNMENT || r->cls == NBG_LEDGER_PADDING)
		snprintf(out, n, "%s %s B", nbg_ledger_class_name(r->cls), commas(r->size, num));
	else
		snprintf(out, n, "%s  %s B", r->owner, commas(r->size, num));
}

/* x in the log band of file offset `off`: linear inside the range holding it. */
static double log_x(const nbg_ledger *l, const double *x0, const double *w, uint64_t off)
{
	size_t n = nbg_ledger_range_count(l);
	const nbg_ledger_range *r;
	size_t lo = 0, hi = n;

	if (off >= nbg_ledger_file_size(l))
		return x0[n - 1] + w[n - 1];
	while (lo < hi) { /* last range with offset <= off */
		size_t mid = lo + (hi - lo) / 2;
		if (nbg_ledger_range_at(l, mid)->offset <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo ? lo - 1 : 0;
	r = nbg_ledger_range_at(l, i);
	return x0[i] + w[i] * (double)(off - r->offset) / (double)r->size;
}

/* What every part of the picture needs: the ledger, the printable width
 * and the log band's x position and width of each range. */
typedef struct picture {
	sbuf *b;
	const nbg_ledger *l;
	double pw, *x0, *w;
	size_t n, nv;
	uint64_t size;
} picture;

static void draw_linear(const picture *p, const char *title)
{
	sbuf *b = p->b;
	const nbg_ledger *l = p->l;
	size_t n = p->n, nv = p->nv;
	uint64_t size = p->size;
	double pw = p->pw, *x0 = p->x0, *w = p->w;
	char num[32], num2[32];
	char hex[65];

	/* title */
	nbg_hex32(nbg_ledger_file_sha256(l), hex);
	sb_printf(b, "<text x=\"%.0f\" y=\"30\" class=\"title\">", MARGIN);
	sb_text(b, title ? title : "NBG file");
	sb_printf(b, "</text>\n<text x=\"%.0f\" y=\"50\" class=\"sub\">NBG v%u, version "
		     "0x%08x, %s bytes, SHA-256 %.16s..., %zu owner ranges, %zu views</text>\n",
		  MARGIN, nbg_ledger_family(l), nbg_ledger_version(l), commas(size, num), hex, n,
		  nv);

	/* band 1: to scale */
	sb_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"band\">to scale: 1 px = %.1f bytes"
		     "</text>\n", MARGIN, LIN_Y - 8, (double)size / pw);
	sb_printf(b, "<g id=\"linear\">\n");
	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		double a = MARGIN + pw * (double)r->offset / (double)size;
		double c = pw * (double)r->size / (double)size;
		sb_printf(b, "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" "
			     "fill=\"%s\"><title>", a, LIN_Y, c, LIN_H, class_color[r->cls]);
		sb_text(b, r->owner);
		sb_printf(b, ": offset %s, %s bytes, %s</title></rect>\n",
			  commas(r->offset, num), commas(r->size, num2),
			  nbg_ledger_class_name(r->cls));
	}
	sb_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
		     "stroke=\"#333\" stroke-width=\"0.6\"/>\n</g>\n", MARGIN, LIN_Y, pw, LIN_H);

	/* connectors */
	sb_printf(b, "<g id=\"connectors\" opacity=\"0.22\">\n");
	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		double a = MARGIN + pw * (double)r->offset / (double)size;
		double c = MARGIN + pw * (double)(r->offset + r->size) / (double)size;
		sb_printf(b, "<polygon points=\"%.3f,%.0f %.3f,%.0f %.3f,%.0f %.3f,%.0f\" "
			     "fill=\"%s\"/>\n", a, LIN_Y + LIN_H, c, LIN_Y + LIN_H, x0[i] + w[i],
			  LOG_Y - 30, x0[i], LOG_Y - 30, class_color[r->cls]);
	}
	sb_printf(b, "</g>\n");
}

static void draw_log(const picture *p)
{
	sbuf *b = p->b;
	const nbg_ledger *l = p->l;
	size_t n = p->n, nv = p->nv;
	double *x0 = p->x0, *w = p->w;
	char num[32], num2[32];

	/* band 2: log-scaled */
	sb_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"band\">log-scaled: width grows "
		     "with log2(size), so every range stays visible</text>\n", MARGIN, LOG_Y - 12);
	sb_printf(b, "<g id=\"log\">\n");
	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		sb_printf(b, "<rect class=\"owner\" x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" "
			     "height=\"%.0f\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\">"
			     "<title>", x0[i],
			  LOG_Y, w[i], LOG_H, class_color[r->cls]);
		sb_text(b, r->owner);
		sb_printf(b, ": offset %s, %s bytes, %s</title></rect>\n",
			  commas(r->offset, num), commas(r->size, num2),
			  nbg_ledger_class_name(r->cls));
	}
	/* dynamic-I/O entries and nested entries: ticks inside their owner */
	for (size_t i = 0; i < nv; i++) {
		const nbg_ledger_view *v = nbg_ledger_view_at(l, i);
		if (v->kind != NBG_VIEW_DYNAIO_ENTRY && v->kind != NBG_VIEW_NESTED_ENTRY)
			continue;
		double a = log_x(l, x0, w, v->offset), c = log_x(l, x0, w, v->offset + v->size);
		sb_printf(b, "<rect class=\"view\" x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" "
			     "height=\"6\" fill=\"#222\" opacity=\"0.7\"><title>", a,
			  LOG_Y + LOG_H - 6,
			  c - a > 0.6 ? c - a : 0.6);
		sb_text(b, v->name);
		sb_printf(b, " (%s): offset %s, %s bytes</title></rect>\n",
			  nbg_ledger_view_kind_name(v->kind), commas(v->offset, num),
			  commas(v->size, num2));
	}
	sb_printf(b, "</g>\n");
}

static void draw_tail(const picture *p)
{
	sbuf *b = p->b;
	const nbg_ledger *l = p->l;
	size_t nv = p->nv;
	uint64_t size = p->size;
	double pw = p->pw, *x0 = p->x0, *w = p->w;
	char num[32];

	/* the final-512 view, in both bands */
	for (size_t i = 0; i < nv; i++) {
		const nbg_ledger_view *v = nbg_ledger_view_at(l, i);
		if (v->kind > NBG_VIEW_CONNECTION_TAIL)
			continue;
		double a = MARGIN + pw * (double)v->offset / (double)size, c = MARGIN + pw;
		double la = log_x(l, x0, w, v->offset), lc = log_x(l, x0, w, size);
		sb_printf(b, "<g id=\"tail-view\" stroke=\"%s\" fill=\"none\" "
			     "stroke-width=\"1.6\">\n", TAIL_COLOR);
		sb_printf(b, "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" "
			     "stroke-dasharray=\"3,2\"/>\n", a - 1.5, LIN_Y - 3, c - a + 3,
			  LIN_H + 6);
		sb_printf(b, "<path d=\"M%.3f,%.0f v-8 H%.3f v8\"/>\n", la, LOG_Y - 2, lc);
		sb_printf(b, "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" "
			     "stroke-dasharray=\"3,2\"/>\n</g>\n", la, LOG_Y, lc - la, LOG_H);
		sb_printf(b, "<text x=\"%.3f\" y=\"%.0f\" class=\"tail\" text-anchor=\"end\">"
			     "final 512 bytes: %s (%s of 512 owned by other ranges)</text>\n",
			  lc, LOG_Y - 12, nbg_ledger_view_kind_name(v->kind),
			  commas(v->covered_bytes, num));
	}
}

static double draw_labels(const picture *p)
{
	sbuf *b = p->b;
	const nbg_ledger *l = p->l;
	size_t n = p->n;
	double *x0 = p->x0, *w = p->w;
	char label[160];
	double y;

	/* labels under the log band, slanted */
	y = LOG_Y + LOG_H + 10;
	double longest = 0;
	sb_printf(b, "<g id=\"labels\" class=\"label\">\n");
	for (size_t i = 0; i < n; i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		double cx = x0[i] + w[i] / 2;
		range_label(r, label, sizeof(label));
		if ((double)strlen(label) > longest)
			longest = (double)strlen(label);
		sb_printf(b, "<text x=\"%.2f\" y=\"%.0f\" transform=\"rotate(%d %.2f %.0f)\">",
			  cx, y, LABEL_ANGLE, cx, y);
		sb_text(b, label);
		sb_printf(b, "</text>\n");
	}
	sb_printf(b, "</g>\n");
	y += longest * CHAR_W * SIN_A + 30;

	return y;
}

static double draw_legend(const picture *p, double y)
{
	sbuf *b = p->b;
	const nbg_ledger *l = p->l;
	uint64_t size = p->size;
	char num[32];

	/* legend: classes with totals */
	sb_printf(b, "<g id=\"legend\">\n<text x=\"%.0f\" y=\"%.0f\" class=\"head\">byte classes"
		     " (owner ranges tile the file: no gap, no overlap)</text>\n", MARGIN, y);
	y += 8;
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++) {
		uint64_t bytes = nbg_ledger_class_bytes(l, (nbg_ledger_class)c);
		size_t cnt = nbg_ledger_class_ranges(l, (nbg_ledger_class)c);
		if (c == NBG_LEDGER_OPAQUE_FIXED_EXTENSION && nbg_ledger_family(l) != 1)
			continue;
		y += 18;
		sb_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" fill=\"%s\"/>"
			     "<text x=\"%.0f\" y=\"%.0f\">%s: %s bytes in %zu ranges (%.3f%%)"
			     "</text>\n", MARGIN, y - 10, class_color[c], MARGIN + 22, y,
			  nbg_ledger_class_name((nbg_ledger_class)c), commas(bytes, num), cnt,
			  size ? 100.0 * (double)bytes / (double)size : 0.0);
	}
	y += 18;
	sb_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" fill=\"none\" "
		     "stroke=\"%s\" stroke-width=\"1.6\" stroke-dasharray=\"3,2\"/><text x=\"%.0f\" "
		     "y=\"%.0f\">view of the final 512 bytes (the connection region): owns bytes only "
		     "as connection-tail</text>\n", MARGIN, y - 10, TAIL_COLOR, MARGIN + 22, y);
	y += 18;
	sb_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"6\" fill=\"#222\" "
		     "opacity=\"0.7\"/><text x=\"%.0f\" y=\"%.0f\">view inside an owner (dynamic-I/O "
		     "entry, nested v1 entry): never owns bytes</text>\n", MARGIN, y - 6,
		  MARGIN + 22, y);
	sb_printf(b, "</g>\n");

	return y;
}

static double draw_views(const picture *p, double y)
{
	sbuf *b = p->b;
	const nbg_ledger *l = p->l;
	size_t nv = p->nv;
	char num[32], num2[32];

	/* views, listed */
	y += 30;
	sb_printf(b, "<g id=\"views\">\n<text x=\"%.0f\" y=\"%.0f\" class=\"head\">views "
		     "(never own bytes)</text>\n", MARGIN, y);
	size_t shown = 0, dyn_hidden = 0;
	for (size_t i = 0; i < nv; i++) {
		const nbg_ledger_view *v = nbg_ledger_view_at(l, i);
		if (v->kind == NBG_VIEW_DYNAIO_ENTRY && shown >= 24) {
			dyn_hidden++;
			continue;
		}
		shown++;
		y += 15;
		sb_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"mono\" xml:space=\"preserve\">%-20s %10s %10s  ",
			  MARGIN, y, nbg_ledger_view_kind_name(v->kind), commas(v->offset, num),
			  commas(v->size, num2));
		sb_text(b, v->name);
		sb_printf(b, "</text>\n");
	}
	if (dyn_hidden) {
		y += 15;
		sb_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"mono\">... and %zu more "
			     "dynaio-entry-view (nbg ledger lists them all)</text>\n", MARGIN, y,
			  dyn_hidden);
	}
	sb_printf(b, "</g>\n");
	return y;
}

static void draw(sbuf *b, const nbg_ledger *l, const char *title, double pw, double *x0,
		 double *w, double *height_out)
{
	picture p = { b, l, pw, x0, w, nbg_ledger_range_count(l), nbg_ledger_view_count(l),
		      nbg_ledger_file_size(l) };
	double y;

	draw_linear(&p, title);
	draw_log(&p);
	draw_tail(&p);
	y = draw_labels(&p);
	y = draw_legend(&p, y);
	y = draw_views(&p, y);
	*height_out = y + 24;
}

char *nbg_ledger_svg(const nbg_ledger *l, const char *title)
{
	size_t n = nbg_ledger_range_count(l);
	double width = 1280, pw, total_log = 0, *x0, *w, height = 0, right = 0;
	char label[160];
	sbuf body = { 0 }, doc = { 0 };

	if (n == 0)
		return NULL;
	/* wide enough for one label step per range */
	if (2 * MARGIN + LABEL_STEP * (double)n > width)
		width = 2 * MARGIN + LABEL_STEP * (double)n;
	pw = width - 2 * MARGIN;
	x0 = calloc(n, sizeof(double));
	w = calloc(n, sizeof(double));
	if (!x0 || !w) {
		free(x0);
		free(w);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		total_log += lg2(1.0 + (double)nbg_ledger_range_at(l, i)->size);
	double spare = pw - MIN_W * (double)n, x = MARGIN;
	for (size_t i = 0; i < n; i++) {
		double lg = lg2(1.0 + (double)nbg_ledger_range_at(l, i)->size);
		x0[i] = x;
		w[i] = MIN_W + (spare > 0 && total_log > 0 ? spare * lg / total_log : 0);
		x += w[i];
		/* slanted labels reach right of their band: make room for them */
		range_label(nbg_ledger_range_at(l, i), label, sizeof(label));
		double reach = x0[i] + w[i] / 2 + (double)strlen(label) * CHAR_W * COS_A;
		right = reach > right ? reach : right;
	}
	if (right + MARGIN > width)
		width = right + MARGIN;

	draw(&body, l, title, pw, x0, w, &height);
	free(x0);
	free(w);
	if (body.oom) {
		free(body.p);
		return NULL;
	}
	sb_printf(&doc,
		  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		  "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, "
		  "sans-serif\" font-size=\"11\">\n"
		  "<title>nbgkit byte-ownership map</title>\n"
		  "<style>.title{font-size:16px;font-weight:bold}.sub{fill:#444}"
		  ".band{font-size:11px;fill:#555;font-style:italic}"
		  ".head{font-weight:bold;font-size:12px}.label{font-size:10px}"
		  ".tail{fill:" TAIL_COLOR ";font-size:11px}"
		  ".mono{font-family:DejaVu Sans Mono,monospace;font-size:10.5px;"
		  "}</style>\n"
		  "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		  width, height, width, height);
	sb_printf(&doc, "%s</svg>\n", body.p);
	free(body.p);
	if (doc.oom) {
		free(doc.p);
		return NULL;
	}
	return doc.p;
}

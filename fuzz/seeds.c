/*
 * seeds.c - synthesized NBG seeds and the shrinker of real files (seeds.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fixture.h"
#include "seeds.h"

/* ------------------------------------------------------------ helpers */

typedef struct growbuf {
	uint8_t *p;
	size_t n, cap;
} growbuf;

static size_t gb_reserve(growbuf *b, size_t add)
{
	size_t at = b->n;
	if (b->n + add > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + add)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			abort();
		memset(p + b->cap, 0, cap - b->cap);
		b->p = p;
		b->cap = cap;
	}
	b->n += add;
	return at;
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

uint8_t *seed_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* ------------------------------------------------------------------ v1 */

#define V1_HEADER 92u
#define V1_FDB 256u

uint32_t seed_v1_entries_offset(uint32_t v)
{
	return V1_HEADER + (v >= 0x10003u ? V1_FDB : 0) + 20 + (v >= 0x10008u ? 8 : 0);
}

uint32_t seed_v1_measured_entries(uint32_t v)
{
	if (v >= 0x10003u && v < 0x1000Cu)
		return 12;
	switch (v) {
	case 0x1000Cu: return 15;
	case 0x1000Eu: return 16;
	case 0x1000Fu: return 17;
	case 0x10014u: return 18;
	case 0x1001Eu: return 27;
	default: return 0;
	}
}

void seed_v1_strides_of(uint32_t v, seed_v1_strides *st)
{
	if (v > 0x1001Fu)
		v = 0x1001Fu;
	st->io = v < 0x10004u ? 44 : v < 0x1000Bu ? 108 : 116;
	st->layer = v < 0x10008u ? 72 : 76;
	st->operation = v < 0x10011u ? 24 : v < 0x10017u ? 28 : 32;
	st->patch = v < 0x10006u ? 24 : v < 0x10010u ? 28 : v < 0x10014u ? 0 : 40;
	st->sh = v < 0x1000Eu ? 4 : 8;
	st->sw = v < 0x10009u ? 4 : 68;
}

static void v1_io(uint8_t *r, uint32_t stride, uint32_t dim_count, const uint32_t *dims,
		  uint32_t fmt, uint32_t quant, const char *name)
{
	uint32_t maxd = stride == 116 ? 6 : 4, w = 1 + maxd;
	float one = 1.0f;
	uint32_t onebits;

	memcpy(&onebits, &one, 4);
	memset(r, 0, stride);
	fx_put32(r, dim_count);
	for (uint32_t d = 0; d < maxd; d++)
		fx_put32(r + 4 + 4 * d, d < dim_count ? dims[d] : 1);
	fx_put32(r + 4 * w, fmt);        /* data_format */
	fx_put32(r + 4 * (w + 1), 0);    /* data_type */
	fx_put32(r + 4 * (w + 2), quant);/* quant_format */
	fx_put32(r + 4 * (w + 3), 7);    /* fixed_point_pos */
	fx_put32(r + 4 * (w + 4), onebits);
	fx_put32(r + 4 * (w + 5), 3);    /* zero_point */
	if (stride > 4 * (w + 6))
		snprintf((char *)r + 4 * (w + 6), 64, "%s", name);
}

void seed_v1_crc_sum(uint8_t *b, size_t n, uint32_t version)
{
	uint32_t es = seed_v1_entries_offset(version), end = fx_get32(b + es), first = (uint32_t)n;

	fx_put32(b + V1_HEADER + 16, 0);
	if (version != 0x10020u) {
		fx_put32(b + V1_HEADER + 16, (uint32_t)crc32(0, b, (uInt)n));
		return;
	}
	for (uint32_t at = es; at + 8 <= end && at + 8 <= n; at += 8)
		if (fx_get32(b + at + 4) && fx_get32(b + at) < first)
			first = fx_get32(b + at);
	fx_put32(b + V1_HEADER + 16, (uint32_t)crc32(0, b + first, (uInt)(n - first)));
}

uint8_t *seed_v1_build(uint32_t version, int variant, size_t *size)
{
	seed_v1_strides st;
	uint32_t measured = seed_v1_measured_entries(version);
	uint32_t n = measured ? measured : version < 0x10003u ? 12 : 20;
	uint32_t es = seed_v1_entries_offset(version);
	uint32_t patch_stride;
	int empty = variant == 1;
	uint32_t counts[4] = { empty ? 0 : 2, empty ? 0 : 3, empty ? 0 : 1, empty ? 0 : 2 };
	growbuf b = { 0 };
	uint64_t *ent = calloc(n, 2 * sizeof(uint64_t));

	seed_v1_strides_of(version, &st);
	patch_stride = st.patch ? st.patch : 40;
	gb_reserve(&b, es + 8 * n);
	memcpy(b.p, "VPMN", 4);
	fx_put32(b.p + 4, version);
	fx_put32(b.p + 8, 0x88);
	snprintf((char *)b.p + 12, 64, "seed_v1_%05x_%d", version, variant);
	for (int i = 0; i < 4; i++)
		fx_put32(b.p + 76 + 4 * i, counts[i]); /* layers, operations, inputs, outputs */
	if (version >= 0x10003u) {
		uint8_t *f = b.p + V1_HEADER;
		fx_put32(f, 1u << 2); /* NN command size code 1: 192 bytes */
		f[8] = 1;
		f[10] = 2;
		f[12] = 1;
		f[13] = 1;
	}
	{
		uint8_t *mp = b.p + V1_HEADER + (version >= 0x10003u ? V1_FDB : 0);
		fx_put32(mp, 4096);
		fx_put32(mp + 4, 64);
		fx_put32(mp + 16, variant == 2 ? 8192 : 0);
		if (version >= 0x10008u)
			fx_put32(mp + 24, variant == 2 ? 16384 : 0);
	}

	for (uint32_t i = 0; i < n; i++) {
		size_t sz = 0;
		size_t at;
		switch (i) {
		case 0: sz = (size_t)counts[2] * st.io; break;
		case 1: sz = (size_t)counts[3] * st.io; break;
		case 2: sz = (size_t)counts[0] * st.layer; break;
		case 3: sz = (size_t)counts[1] * st.operation; break;
		case 8: sz = empty ? 0 : 2 * st.sh; break;
		case 9: sz = empty ? 0 : 2 * (size_t)patch_stride; break;
		case 11: sz = empty ? 0 : st.sw; break;
		case 6: case 7: sz = empty ? 0 : 192; break;
		default: sz = (empty || i % 3 == 2) ? 0 : 32 + 8 * (i % 5); break;
		}
		at = gb_reserve(&b, sz);
		ent[2 * i] = at;
		ent[2 * i + 1] = sz;
		uint8_t *p = b.p + at;
		if (i == 0 && counts[2]) {
			uint32_t d[6] = { 3, 32, 32, 1, 1, 1 };
			v1_io(p, st.io, 4, d, 2, 1, "input_0");
		} else if (i == 1 && counts[3]) {
			uint32_t d0[6] = { 10, 1 }, d1[6] = { 4, 5, 6, 1, 1, 1 };
			v1_io(p, st.io, 2, d0, 1, 0, "output_0");
			v1_io(p + st.io, st.io, st.io == 116 ? 6 : 4, d1, 2, 2, "output_1");
		} else if (i == 9 && sz) {
			for (size_t k = 0; k + patch_stride <= sz; k += patch_stride) {
				fx_put32(p + k, 1);          /* type */
				fx_put32(p + k + 4, 0x40);   /* offset */
				fx_put32(p + k + 8, 3);      /* source_type */
				fx_put32(p + k + 12, 0x100); /* index */
			}
		} else {
			pattern(p, sz, version * 31u + i);
		}
	}
	if (variant == 2) {
		/* Entry 4 nested inside entry 6, entry 5 zero-size at its end, then a
		 * gap of zeros and a trailer no entry references. */
		ent[4 * 2] = ent[6 * 2] + 32;
		ent[4 * 2 + 1] = 64;
		ent[5 * 2] = ent[6 * 2] + 96;
		ent[5 * 2 + 1] = 0;
		size_t g = gb_reserve(&b, 64);
		memset(b.p + g, 0, 64);
		size_t t = gb_reserve(&b, 100);
		pattern(b.p + t, 100, 77);
		ent[10 * 2] = g + 64;
		ent[10 * 2 + 1] = 16;
	}
	for (uint32_t i = 0; i < n; i++) {
		fx_put32(b.p + es + 8 * i, (uint32_t)ent[2 * i]);
		fx_put32(b.p + es + 8 * i + 4, (uint32_t)ent[2 * i + 1]);
	}
	if (version >= 0x10016u && version >= 0x10003u && variant != 1)
		seed_v1_crc_sum(b.p, b.n, version);
	free(ent);
	*size = b.n;
	return b.p;
}

/* ---------------------------------------------------------- v2 seeds */

static uint8_t *v2_build_free(fx_spec *s, size_t *size)
{
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

static void set_counts(fx_spec *s, uint32_t in, uint32_t out)
{
	fx_section *ni = fx_find(s, 35);
	if (ni) {
		fx_put32(ni->data + 0x40, in);
		fx_put32(ni->data + 0x44, out);
	}
}

static uint8_t *v2_variant(int v, size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t buf[8192];

	switch (v) {
	case 0: /* the default: 19 sections, dynamic I/O */
		break;
	case 1: /* no dynamic I/O, trailing bytes after the last section */
		fx_remove(s, 20);
		fx_remove(s, 26);
		s->trailing = 600;
		s->trailing_byte = 0xab;
		break;
	case 2: { /* the smallest shape: no CRC-required section, no CHECKSUM */
		fx_spec *t = calloc(1, sizeof(*t));
		fx_set(t, 35, fx_find(s, 35)->data, 220, 0, 220);
		fx_set(t, 1, fx_find(s, 1)->data, 112, 0, 112);
		fx_set(t, 2, fx_find(s, 2)->data, 224, 0, 112);
		fx_free(s);
		s = t;
		break;
	}
	case 3: { /* many dynamic-I/O entries with gaps */
		uint32_t n = 48, region = 0;
		memset(buf, 0, sizeof(buf));
		for (uint32_t i = 0; i < n; i++) {
			uint32_t sz = 1 + (i * 37) % 120;
			fx_put32(buf + 8 * i, region);
			fx_put32(buf + 8 * i + 4, sz);
			region += (sz + 63) / 64 * 64 + (i % 3 ? 64 : 0);
		}
		fx_set(s, 26, buf, 8 * n, 0, 8);
		uint8_t *r = calloc(1, region);
		for (uint32_t i = 0; i < n; i++)
			pattern(r + fx_get32(buf + 8 * i), fx_get32(buf + 8 * i + 4), i);
		fx_set(s, 20, r, region, 64, 1);
		free(r);
		break;
	}
	case 4: /* AXI_SRAM, TP, no MEMORY_POOL, no NETWORK_INFO, gaps, 256 alignment */
		fx_remove(s, 37);
		fx_remove(s, 35);
		memset(buf, 0, 4);
		fx_put32(buf, 1u << 20);
		fx_set(s, 39, buf, 4, 0, 4);
		pattern(buf, 320, 8);
		fx_set(s, 8, buf, 320, 256, 64);
		fx_set(s, 40, NULL, 40, 0, 8);
		fx_find(s, 3)->gap = 24;
		fx_find(s, 21)->align = 256;
		break;
	case 5: { /* six inputs: every dimension count, several formats and quantizers */
		static const uint32_t fmts[6] = { 0, 1, 2, 3, 13, 99 };
		static const uint32_t quants[6] = { 0, 1, 2, 2, 7, 1 };
		uint32_t d[6] = { 2, 3, 4, 5, 6, 7 };
		float sc = 0.0039f;
		uint32_t scb;
		memcpy(&scb, &sc, 4);
		for (uint32_t i = 0; i < 6; i++)
			fx_io_record(buf + 112 * i, i + 1, d, fmts[i], quants[i],
				     quants[i] == 2 ? scb : 5, quants[i] == 2 ? 128 : 0,
				     i == 3 ? "in\x01\x7f\xff\"\\name" : "input");
		fx_set(s, 1, buf, 6 * 112, 0, 112);
		set_counts(s, 6, 2);
		break;
	}
	case 6: /* zero-size and unseen section types, non-zero reserved words */
		fx_set(s, 0, NULL, 0, 0, 0);
		pattern(buf, 48, 36);
		fx_set(s, 36, buf, 48, 0, 1);
		fx_set(s, 17, NULL, 0, 0, 0);
		pattern(buf, 40, 11);
		fx_set(s, 11, buf, 40, 8, 4);
		fx_find(s, 35)->data[0x60] = 1; /* vsi_reserved word */
		break;
	case 7: /* the final 512 bytes all covered by one section */
		pattern(buf, 4000, 24);
		fx_set(s, 24, buf, 4000, 64, 1);
		break;
	default:
		fx_free(s);
		return NULL;
	}
	return v2_build_free(s, size);
}

static void add_seed(seed_file **v, size_t *n, const char *name, uint8_t *data, size_t size)
{
	seed_file *p = realloc(*v, (*n + 1) * sizeof(**v));
	if (!p)
		abort();
	*v = p;
	snprintf(p[*n].name, sizeof(p[*n].name), "%s", name);
	p[*n].data = data;
	p[*n].size = size;
	(*n)++;
}

seed_file *seed_synth_all(size_t *count)
{
	static const uint32_t v1_versions[] = {
		0x10002, 0x10003, 0x10005, 0x10008, 0x10009, 0x1000b, 0x1000c, 0x1000d,
		0x1000e, 0x1000f, 0x10011, 0x10012, 0x10014, 0x10016, 0x10017, 0x1001e,
		0x1001f, 0x10020,
	};
	seed_file *v = NULL;
	size_t n = 0, size;
	char name[64];
	uint8_t *b;

	for (int i = 0; (b = v2_variant(i, &size)) != NULL; i++) {
		snprintf(name, sizeof(name), "synth-v2-%d", i);
		add_seed(&v, &n, name, b, size);
	}
	for (size_t i = 0; i < sizeof(v1_versions) / sizeof(v1_versions[0]); i++)
		for (int var = 0; var < 3; var++) {
			if (var && i % 3 != (size_t)var - 1 && v1_versions[i] != 0x1001e)
				continue;
			b = seed_v1_build(v1_versions[i], var, &size);
			snprintf(name, sizeof(name), "synth-v1-%05x-%d", v1_versions[i], var);
			add_seed(&v, &n, name, b, size);
		}
	*count = n;
	return v;
}

void seed_free_all(seed_file *s, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(s[i].data);
	free(s);
}

/* ------------------------------------------------------------ shrinker */

static int decoded_v2(uint32_t t)
{
	return t == 1 || t == 2 || t == 20 || t == 26 || t == 35 || t == 37 || t == 38 ||
	       t == 39 || t == 40;
}

static uint8_t *shrink_v2(const uint8_t *d, size_t size, size_t cap, size_t *out_size)
{
	uint32_t sub, dir, count;
	struct { uint32_t type, align, ent; uint64_t off, len; } r[48], tmp;
	fx_spec *s;
	uint8_t *b;

	if (size < 60)
		return NULL;
	sub = fx_get32(d + 0x18);
	if (sub > size - 12)
		return NULL;
	dir = fx_get32(d + sub);
	count = fx_get32(d + sub + 8);
	if (count > 48 || dir > size || (uint64_t)count * 44 > size - dir)
		return NULL;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = d + dir + 44 * i;
		r[i].type = fx_get32(e);
		r[i].off = fx_get32(e + 4) | (uint64_t)fx_get32(e + 8) << 32;
		r[i].len = fx_get32(e + 12) | (uint64_t)fx_get32(e + 16) << 32;
		r[i].align = fx_get32(e + 0x1c);
		r[i].ent = fx_get32(e + 0x20);
		/* a fuzzed input may ask for anything: only layouts the builder
		 * can reproduce in about the same number of bytes */
		if (r[i].off > size || r[i].len > size - r[i].off || r[i].type > 47 ||
		    r[i].align > 4096)
			return NULL;
	}
	for (uint32_t i = 1; i < count; i++) /* insertion sort by offset */
		for (uint32_t j = i; j > 0 && r[j - 1].off > r[j].off; j--) {
			tmp = r[j];
			r[j] = r[j - 1];
			r[j - 1] = tmp;
		}
	s = calloc(1, sizeof(*s));
	s->no_checksums = 1; /* keep the real record order; values are refreshed */
	for (uint32_t i = 0; i < count; i++) {
		uint64_t keep = r[i].len;
		if (!decoded_v2(r[i].type) && keep > cap) {
			keep = cap;
			if (r[i].ent > 1 && r[i].ent <= cap)
				keep -= keep % r[i].ent;
		}
		if (fx_find(s, r[i].type)) {
			fx_free(s);
			return NULL;
		}
		fx_set(s, r[i].type, d + r[i].off, (size_t)keep, r[i].align, r[i].ent);
	}
	b = fx_build(s, out_size);
	fx_free(s);
	/* target and header words the builder does not set (outside every CRC) */
	memcpy(b + 8, d + 8, 4);
	memcpy(b + 0x24, d + 0x24, 12);
	return b;
}

static uint64_t map_offset(const uint64_t (*iv)[2], size_t n, uint64_t x)
{
	uint64_t acc = 0;
	for (size_t i = 0; i < n; i++) {
		if (x >= iv[i][1])
			acc += iv[i][1] - iv[i][0];
		else {
			if (x > iv[i][0])
				acc += x - iv[i][0];
			break;
		}
	}
	return acc;
}

static int cmp_iv(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static uint8_t *shrink_v1(const uint8_t *d, size_t size, size_t cap, size_t *out_size)
{
	uint32_t v = fx_get32(d + 4), es = seed_v1_entries_offset(v), n;
	uint32_t measured = seed_v1_measured_entries(v);
	uint64_t off[34], len[34], keep[34], prefix_end, maxend, first;
	uint64_t (*iv)[2];
	uint32_t counts[2];
	seed_v1_strides st;
	size_t niv = 0;
	uint8_t *b;

	if (size < (uint64_t)es + 8) /* es > 0x58: the header counts are inside */
		return NULL;
	counts[0] = fx_get32(d + 0x4c);
	counts[1] = fx_get32(d + 0x50);
	if (measured)
		n = measured;
	else {
		uint32_t in = fx_get32(d + es);
		if (in < es + 12 * 8 || (in - es) % 8)
			return NULL;
		n = (in - es) / 8 > 34 ? 34 : (in - es) / 8;
	}
	prefix_end = es + 8ull * n;
	if (prefix_end > size)
		return NULL;
	seed_v1_strides_of(v, &st);
	maxend = prefix_end;
	first = size;
	for (uint32_t i = 0; i < n; i++) {
		off[i] = fx_get32(d + es + 8 * i);
		len[i] = fx_get32(d + es + 8 * i + 4);
		if (off[i] + len[i] > size)
			return NULL;
		if (off[i] + len[i] > maxend)
			maxend = off[i] + len[i];
		if (len[i] && off[i] < first)
			first = off[i];
		uint32_t stride = 0;
		keep[i] = len[i] < cap ? len[i] : cap;
		switch (i) {
		case 0: case 1: keep[i] = len[i]; break;
		case 2: case 3: {
			uint32_t str = i == 2 ? st.layer : st.operation, c = counts[i - 2];
			if ((uint64_t)c * str == len[i]) {
				if (c > 8)
					c = 8;
				keep[i] = (uint64_t)c * str;
				counts[i - 2] = c;
			}
			break;
		}
		case 8: stride = st.sh; break;
		case 9: stride = st.patch ? st.patch : 280; break;
		case 11: stride = st.sw; break;
		default: break;
		}
		if (stride && keep[i] % stride) {
			keep[i] -= keep[i] % stride;
			if (keep[i] == 0)
				keep[i] = len[i] < stride ? len[i] : stride;
			if (keep[i] % stride) /* a table that is no whole record: keep as is */
				keep[i] = len[i] < cap ? len[i] : cap;
		}
	}
	iv = calloc(n + 3, sizeof(*iv));
	iv[niv][0] = 0;
	iv[niv++][1] = prefix_end;
	if (first > prefix_end && first != size) {
		uint64_t l = first - prefix_end;
		iv[niv][0] = prefix_end;
		iv[niv++][1] = prefix_end + (l < cap ? l : cap);
	}
	for (uint32_t i = 0; i < n; i++)
		if (keep[i]) {
			iv[niv][0] = off[i];
			iv[niv++][1] = off[i] + keep[i];
		}
	if (size > maxend) {
		uint64_t l = size - maxend;
		iv[niv][0] = maxend;
		iv[niv++][1] = maxend + (l < 64 ? l : 64);
	}
	qsort(iv, niv, sizeof(*iv), cmp_iv);
	size_t m = 0; /* merge */
	for (size_t i = 0; i < niv; i++) {
		if (m && iv[i][0] <= iv[m - 1][1]) {
			if (iv[i][1] > iv[m - 1][1])
				iv[m - 1][1] = iv[i][1];
		} else {
			iv[m][0] = iv[i][0];
			iv[m][1] = iv[i][1];
			m++;
		}
	}
	uint64_t total = map_offset((const uint64_t (*)[2])iv, m, UINT64_MAX);
	b = malloc(total ? total : 1);
	for (size_t i = 0, o = 0; i < m; i++) {
		memcpy(b + o, d + iv[i][0], iv[i][1] - iv[i][0]);
		o += iv[i][1] - iv[i][0];
	}
	for (uint32_t i = 0; i < n; i++) {
		fx_put32(b + es + 8 * i, (uint32_t)map_offset((const uint64_t (*)[2])iv, m, off[i]));
		fx_put32(b + es + 8 * i + 4, (uint32_t)keep[i]);
	}
	fx_put32(b + 0x4c, counts[0]);
	fx_put32(b + 0x50, counts[1]);
	if (v >= 0x10016u && fx_get32(d + V1_HEADER + 16))
		seed_v1_crc_sum(b, total, v);
	free(iv);
	*out_size = total;
	return b;
}

uint8_t *seed_shrink(const uint8_t *data, size_t size, size_t cap, size_t *out_size)
{
	if (size < 12 || memcmp(data, "VPMN", 4) != 0)
		return NULL;
	if (fx_get32(data + 4) == 0x00020000u)
		return shrink_v2(data, size, cap, out_size);
	if ((fx_get32(data + 4) >> 16) == 1)
		return shrink_v1(data, size, cap, out_size);
	return NULL;
}

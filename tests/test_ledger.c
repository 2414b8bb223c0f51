/*
 * test_ledger.c - the byte-ownership ledger through the library API: the
 * tiling invariant and byte-identical re-emission on every real file and on
 * synthesized shapes (alignment, extra gaps, trailing bytes, the final 512
 * bytes covered / partly covered / uncovered), per-class totals checked
 * against numbers computed here from the raw bytes, the refusal of every
 * one-byte change, ledger documents, and failures that must leave nothing
 * behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/sha.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/nbg.h"
#include "nbg/ledger.h"
#include "common/model.h" /* a tampered model: the library refuses it */

static char tmpdir[] = "/tmp/nbgledger-XXXXXX";

static int count_views(const nbg_ledger *l, nbg_ledger_view_kind k);
static const nbg_ledger_range *find_owner(const nbg_ledger *l, const char *owner);

static nbg_model *parse_ok(const uint8_t *buf, size_t size)
{
	nbg_model *m = NULL;
	nbg_error err;
	nbg_code rc = nbg_parse(buf, size, NULL, &m, &err);
	if (rc != NBG_OK)
		fail_msg("parse failed: %s at %llu: %s", nbg_code_name(rc),
			 (unsigned long long)err.offset, err.message);
	return m;
}

static nbg_ledger *ledger_ok(const nbg_model *m)
{
	nbg_ledger *l = NULL;
	nbg_error err;
	nbg_code rc = nbg_ledger_build(m, &l, &err);
	if (rc != NBG_OK)
		fail_msg("ledger failed: %s at %llu: %s", nbg_code_name(rc),
			 (unsigned long long)err.offset, err.message);
	return l;
}

/* The invariant, checked here without the library's own checker: ranges in
 * order, no gap, no overlap, none empty, sizes summing to the file size,
 * every SHA-256 right, class totals adding up; views inside the file. */
static void check_invariant(const nbg_ledger *l, const uint8_t *buf, size_t size)
{
	uint64_t cur = 0, sum = 0, by_class[NBG_LEDGER_CLASS_COUNT] = { 0 };
	uint8_t d[32];

	assert_int_equal(nbg_ledger_file_size(l), size);
	SHA256(buf, size, d);
	assert_memory_equal(d, nbg_ledger_file_sha256(l), 32);
	for (size_t i = 0; i < nbg_ledger_range_count(l); i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(l, i);
		assert_int_equal(r->offset, cur);
		assert_true(r->size > 0);
		assert_non_null(nbg_ledger_class_name(r->cls));
		assert_true(r->owner[0] != '\0');
		SHA256(buf + r->offset, (size_t)r->size, d);
		assert_memory_equal(d, r->sha256, 32);
		assert_ptr_equal(nbg_ledger_owner_of(l, r->offset), r);
		assert_ptr_equal(nbg_ledger_owner_of(l, r->offset + r->size - 1), r);
		cur += r->size;
		sum += r->size;
		by_class[r->cls] += r->size;
	}
	assert_int_equal(cur, size);
	assert_int_equal(sum, size);
	assert_null(nbg_ledger_owner_of(l, size));
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++)
		assert_int_equal(by_class[c], nbg_ledger_class_bytes(l, (nbg_ledger_class)c));
	for (size_t i = 0; i < nbg_ledger_view_count(l); i++) {
		const nbg_ledger_view *v = nbg_ledger_view_at(l, i);
		assert_true(v->offset <= size && v->size <= size - v->offset);
		if (v->size) {
			SHA256(buf + v->offset, (size_t)v->size, d);
			assert_memory_equal(d, v->sha256, 32);
		}
	}
	assert_int_equal(nbg_ledger_check_tiling(nbg_ledger_range_at(l, 0),
						 nbg_ledger_range_count(l), size, NULL),
			 NBG_OK);
}

static char *tmp_path(const char *name)
{
	static char p[4][512];
	static int k;
	char *s = p[k++ % 4];
	snprintf(s, sizeof(p[0]), "%s/%s", tmpdir, name);
	return s;
}

/* Entries of the scratch directory (to prove nothing was left behind). */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Re-emits through nbg_reemit_write with and without the read-back; both
 * must give the source's bytes exactly. */
static void check_reemit(const nbg_ledger *l, const uint8_t *buf, size_t size)
{
	const char *out = tmp_path("reemit.nb");
	uint8_t *back, d1[32], d2[32];
	size_t n;
	nbg_error err;
	int fd;

	assert_int_equal(nbg_reemit_check(l, buf, size, &err), NBG_OK);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(nbg_reemit_write(l, buf, size, fd, NBG_REEMIT_READBACK, &err), NBG_OK);
	close(fd);
	back = fx_read_file(out, &n);
	assert_non_null(back);
	assert_int_equal(n, size);
	assert_memory_equal(back, buf, size);
	SHA256(buf, size, d1);
	SHA256(back, n, d2);
	assert_memory_equal(d1, d2, 32);
	free(back);
	assert_int_equal(unlink(out), 0);

	fd = open(tmp_path("fd.nb"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(nbg_reemit_write(l, buf, size, fd, 0, &err), NBG_OK);
	close(fd);
	back = fx_read_file(tmp_path("fd.nb"), &n);
	assert_int_equal(n, size);
	assert_memory_equal(back, buf, size);
	free(back);
	unlink(tmp_path("fd.nb"));
	assert_int_equal(dir_entries(tmpdir), 0);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int corpus_dir(const char *sub, int family)
{
	char dir[1024], path[2048];
	struct dirent *e;
	int files = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", NBG_CORPUS_DIR, sub);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!ends_with(e->d_name, ".nb"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t size;
		uint8_t *buf = fx_read_file(path, &size);
		assert_non_null(buf);
		nbg_model *m = parse_ok(buf, size);
		assert_int_equal(nbg_model_family(m), family);
		nbg_ledger *l = ledger_ok(m);
		check_invariant(l, buf, size);
		check_reemit(l, buf, size);
		/* the tail view is always there on files this size */
		int tail_views = 0;
		for (size_t i = 0; i < nbg_ledger_view_count(l); i++)
			tail_views += nbg_ledger_view_at(l, i)->kind <= NBG_VIEW_CONNECTION_TAIL;
		assert_int_equal(tail_views, 1);
		nbg_ledger_free(l);
		nbg_model_free(m);
		free(buf);
		files++;
	}
	closedir(d);
	return files;
}

static void test_corpus_v2(void **state)
{
	int n = corpus_dir("v2", 2);
	print_message("v2: %d real files: ledger tiles each, re-emitted byte-identical\n", n);
	assert_true(n >= 5);
}

static void test_corpus_v1(void **state)
{
	int n = corpus_dir("v1", 1);
	print_message("v1: %d real files: ledger tiles each, re-emitted byte-identical\n", n);
	assert_true(n >= 40);
}

/* 1 when `size` is a record size of a public layout of section type t (the
 * field map: layer 72/76, operation 24/28/32, patch 24/28/40, SH 4/8, SW
 * 4/68, hardware init 12, PPU parameters 48, (offset, size) tables 8). */
static int record_layout(uint32_t t, uint32_t size)
{
	switch (t) {
	case 3: return size == 72 || size == 76;
	case 4: return size == 24 || size == 28 || size == 32;
	case 10: return size == 24 || size == 28 || size == 40;
	case 9: return size == 4 || size == 8;
	case 12: return size == 4 || size == 68;
	case 13: return size == 12;
	case 16: return size == 48;
	default: return size == 8;
	}
}

/* Per-class totals of one real file, computed here from the raw bytes. */
static void test_totals_real_file(void **state)
{
	size_t size;
	uint8_t *b = fx_read_file(NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb", &size);
	uint32_t dir = fx_get32(b + 48), count = fx_get32(b + 56);
	uint64_t decoded = 48 + 12 + 44ull * count, opaque = 0, align = 0, padding = 0;
	uint64_t off[64], len[64], al[64], end_fixed = dir + 44ull * count;
	uint32_t type[64];

	assert_non_null(b);
	assert_true(count < 64);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *r = b + dir + 44 * i;
		type[i] = fx_get32(r);
		off[i] = fx_get32(r + 4);
		len[i] = fx_get32(r + 12);
		al[i] = fx_get32(r + 28);
		/* decoded by the parser: I/O, network info, memory, checksum, dynaio
		 * table; and the record sections the graph layer decodes field by
		 * field, whole records of a size the field map's layouts have */
		uint32_t es = fx_get32(r + 32);
		switch (type[i]) {
		case 1: case 2: case 26: case 35: case 37: case 38: case 39: case 40:
			decoded += len[i];
			break;
		case 3: case 4: case 9: case 10: case 12: case 13: case 16:
		case 5: case 14: case 23: case 25: case 27:
			if (len[i] && es && len[i] % es == 0 && record_layout(type[i], es))
				decoded += len[i];
			else
				opaque += len[i];
			break;
		default:
			opaque += len[i];
		}
	}
	/* file order: the minimum alignment before each aligned section */
	for (uint32_t k = 0; k < count; k++)
		for (uint32_t j = k + 1; j < count; j++)
			if (off[j] < off[k]) {
				uint64_t t;
				t = off[j], off[j] = off[k], off[k] = t;
				t = len[j], len[j] = len[k], len[k] = t;
				t = al[j], al[j] = al[k], al[k] = t;
			}
	uint64_t prev = end_fixed;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t gap = off[i] - prev, need = al[i] > 1 ? (al[i] - prev % al[i]) % al[i] : 0;
		align += need;
		padding += gap - need;
		prev = off[i] + len[i];
	}
	padding += size - prev;

	nbg_model *m = parse_ok(b, size);
	nbg_ledger *l = ledger_ok(m);
	print_message("face_detector_nbg_int16.nb (%zu bytes): decoded-record %llu, alignment "
		      "%llu, padding %llu, preserved-opaque %llu, connection-tail %llu\n",
		      size, (unsigned long long)nbg_ledger_class_bytes(l, NBG_LEDGER_DECODED_RECORD),
		      (unsigned long long)nbg_ledger_class_bytes(l, NBG_LEDGER_ALIGNMENT),
		      (unsigned long long)nbg_ledger_class_bytes(l, NBG_LEDGER_PADDING),
		      (unsigned long long)nbg_ledger_class_bytes(l, NBG_LEDGER_PRESERVED_OPAQUE),
		      (unsigned long long)nbg_ledger_class_bytes(l, NBG_LEDGER_CONNECTION_TAIL));
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_DECODED_RECORD), decoded);
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_ALIGNMENT), align);
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_PADDING), padding);
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_PRESERVED_OPAQUE), opaque);
	assert_int_equal(nbg_ledger_class_bytes(l, NBG_LEDGER_CONNECTION_TAIL), 0);
	assert_int_equal(decoded + align + padding + opaque, size);
	/* the numbers doc/ledger.md shows */
	assert_int_equal(decoded, 17160);
	assert_int_equal(align, 248);
	assert_int_equal(padding, 0);
	assert_int_equal(opaque, 220432);
	/* a section reaches EOF: the tail is a section-covered view, not an owner */
	const nbg_ledger_view *v = NULL;
	for (size_t i = 0; i < nbg_ledger_view_count(l); i++)
		if (nbg_ledger_view_at(l, i)->kind == NBG_VIEW_SECTION_COVERED)
			v = nbg_ledger_view_at(l, i);
	assert_non_null(v);
	assert_int_equal(v->offset, size - 512);
	assert_int_equal(v->covered_bytes, 512);
	nbg_ledger_free(l);
	nbg_model_free(m);
	free(b);
}

/* v1 entries may nest or overlap (none does in the corpus): a real v1 file
 * with one entry pointed inside another and one straddling two sections. */
static void test_v1_nested_entries(void **state)
{
	size_t size;
	uint8_t *buf = fx_read_file(NBG_CORPUS_DIR "/v1/1000f_7d_face_age_7d.nb", &size);
	nbg_model *m = parse_ok(buf, size);
	const nbg_section *layer = nbg_model_section_at(m, 2), *ops = nbg_model_section_at(m, 3);
	uint64_t e10 = nbg_model_section_at(m, 10)->record_offset, e15 = nbg_model_section_at(m, 15)->record_offset;
	uint64_t e16 = nbg_model_section_at(m, 16)->record_offset;
	uint64_t lay_off = layer->offset, lay_end = layer->offset + layer->size;
	uint64_t ops_end = ops->offset + ops->size;

	/* LAYER and OPERATIONS adjoin; a gap follows OPERATIONS */
	assert_int_equal(ops->offset, lay_end);
	assert_int_equal(nbg_model_section_at(m, 10)->size, 0);
	assert_int_equal(nbg_model_section_at(m, 15)->size, 0);
	assert_int_equal(nbg_model_section_at(m, 16)->size, 0);
	nbg_model_free(m);
	fx_put32(buf + e10, (uint32_t)(lay_off + 4)); /* LAYER_PARAM inside LAYER */
	fx_put32(buf + e10 + 4, 8);
	fx_put32(buf + e15, (uint32_t)(ops_end - 4)); /* PPU_PARAM from OPERATIONS into the gap */
	fx_put32(buf + e15 + 4, 16);
	fx_put32(buf + e16, (uint32_t)(lay_end - 4)); /* OPSYNC across LAYER | OPERATIONS */
	fx_put32(buf + e16 + 4, 16);
	m = parse_ok(buf, size);
	nbg_ledger *l = ledger_ok(m);
	check_invariant(l, buf, size);
	check_reemit(l, buf, size);
	assert_int_equal(count_views(l, NBG_VIEW_NESTED_ENTRY), 3);
	/* the structure starting first keeps shared bytes */
	assert_string_equal(nbg_ledger_owner_of(l, lay_off + 4)->owner, "section 3 LAYER");
	assert_string_equal(nbg_ledger_owner_of(l, lay_end - 1)->owner, "section 3 LAYER");
	/* an entry reaching into the next structure owns none of it */
	const nbg_ledger_range *r = nbg_ledger_owner_of(l, lay_end);
	assert_string_equal(r->owner, "section 4 OPERATIONS");
	assert_int_equal(r->offset, lay_end);
	assert_null(find_owner(l, "section 17 OPSYNC beyond overlap"));
	/* one reaching into a gap owns what lies beyond its container */
	r = nbg_ledger_owner_of(l, ops_end);
	assert_string_equal(r->owner, "section 16 PPU_PARAM beyond overlap");
	assert_int_equal(r->offset, ops_end);
	assert_int_equal(r->size, 12);
	assert_int_equal(r->cls, NBG_LEDGER_PRESERVED_OPAQUE);
	nbg_ledger_free(l);
	nbg_model_free(m);
	free(buf);
}

/* ---------------------------------------------------------- synthesized */

typedef struct built {
	uint8_t *buf;
	size_t size;
	nbg_model *m;
	nbg_ledger *l;
} built;

static built build_spec(fx_spec *s)
{
	built b;
	b.buf = fx_build(s, &b.size);
	b.m = parse_ok(b.buf, b.size);
	b.l = ledger_ok(b.m);
	check_invariant(b.l, b.buf, b.size);
	check_reemit(b.l, b.buf, b.size);
	return b;
}

static void free_built(built *b)
{
	nbg_ledger_free(b->l);
	nbg_model_free(b->m);
	free(b->buf);
}

static const nbg_ledger_range *find_owner(const nbg_ledger *l, const char *owner)
{
	for (size_t i = 0; i < nbg_ledger_range_count(l); i++)
		if (!strcmp(nbg_ledger_range_at(l, i)->owner, owner))
			return nbg_ledger_range_at(l, i);
	return NULL;
}

static const nbg_ledger_view *find_view(const nbg_ledger *l, nbg_ledger_view_kind k)
{
	for (size_t i = 0; i < nbg_ledger_view_count(l); i++)
		if (nbg_ledger_view_at(l, i)->kind == k)
			return nbg_ledger_view_at(l, i);
	return NULL;
}

static int count_views(const nbg_ledger *l, nbg_ledger_view_kind k)
{
	int n = 0;
	for (size_t i = 0; i < nbg_ledger_view_count(l); i++)
		n += nbg_ledger_view_at(l, i)->kind == k;
	return n;
}

static void test_default_fixture(void **state)
{
	fx_spec *s = fx_default();
	built b = build_spec(s);
	const nbg_section *coef = nbg_model_section(b.m, 24), *ppu = nbg_model_section(b.m, 19);
	const nbg_ledger_range *r;

	/* fixed structures */
	r = nbg_ledger_range_at(b.l, 0);
	assert_string_equal(r->owner, "header");
	assert_int_equal(r->size, 48);
	assert_int_equal(r->cls, NBG_LEDGER_DECODED_RECORD);
	assert_non_null(r = find_owner(b.l, "sub-header"));
	assert_int_equal(r->offset, 48);
	assert_non_null(r = find_owner(b.l, "directory entry 5"));
	assert_int_equal(r->offset, 60 + 5 * 44);
	assert_int_equal(r->size, 44);
	/* decoded sections, opaque sections, the DYNAIO region */
	assert_int_equal(find_owner(b.l, "section 35 NETWORK_INFO")->cls, NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 40 CHECKSUM")->cls, NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 26 DYNAIO_TABLE")->cls, NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 1 INPUT")->cls, NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 24 COEF_DATA")->cls, NBG_LEDGER_PRESERVED_OPAQUE);
	assert_int_equal(find_owner(b.l, "section 3 LAYER")->cls, NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 10 PATCH")->cls, NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 23 COEF_DATA_TABLE")->cls,
			 NBG_LEDGER_DECODED_RECORD);
	assert_int_equal(find_owner(b.l, "section 7 NN")->cls, NBG_LEDGER_PRESERVED_OPAQUE);
	r = find_owner(b.l, "section 20 DYNAIO");
	assert_int_equal(r->cls, NBG_LEDGER_PRESERVED_OPAQUE);
	assert_int_equal(r->size, 192);
	/* dynamic-I/O entries are views inside the region, never owners */
	assert_int_equal(count_views(b.l, NBG_VIEW_DYNAIO_ENTRY), 2);
	const nbg_ledger_view *v = find_view(b.l, NBG_VIEW_DYNAIO_ENTRY);
	assert_int_equal(v->offset, r->offset);
	assert_int_equal(v->size, 4);
	assert_ptr_equal(nbg_ledger_owner_of(b.l, v->offset), r);
	/* alignment: exactly the minimum before COEF_DATA (64) and PPU_INSTR (256) */
	const nbg_ledger_range *a = find_owner(b.l, "alignment of section 24 COEF_DATA");
	assert_non_null(a);
	assert_int_equal(a->cls, NBG_LEDGER_ALIGNMENT);
	assert_int_equal(a->offset + a->size, coef->offset);
	assert_true(a->size < 64);
	assert_int_equal(a->offset % 64 != 0, 1);
	const nbg_ledger_range *a2 = find_owner(b.l, "alignment of section 19 PPU_INSTR");
	assert_non_null(a2);
	assert_int_equal(a2->offset + a2->size, ppu->offset);
	assert_int_equal(a2->offset, coef->offset + coef->size);
	assert_int_equal(nbg_ledger_class_bytes(b.l, NBG_LEDGER_ALIGNMENT), a->size + a2->size);
	assert_int_equal(nbg_ledger_class_bytes(b.l, NBG_LEDGER_PADDING), 0);
	/* the last section reaches EOF: the tail is a section-covered view */
	v = find_view(b.l, NBG_VIEW_SECTION_COVERED);
	assert_non_null(v);
	assert_int_equal(v->offset, b.size - 512);
	assert_int_equal(v->covered_bytes, 512);
	assert_int_equal(nbg_ledger_class_bytes(b.l, NBG_LEDGER_CONNECTION_TAIL), 0);
	free_built(&b);
	fx_free(s);
}

/* Extra bytes before an aligned section: the minimum is alignment, directly
 * before the section; the rest is padding. */
static void test_gap_padding(void **state)
{
	fx_spec *s = fx_default();
	fx_find(s, 24)->gap = 200;  /* COEF_DATA, align 64 */
	fx_find(s, 9)->gap = 7;     /* SH, unaligned */
	built b = build_spec(s);
	const nbg_section *coef = nbg_model_section(b.m, 24);
	const nbg_section *prev = nbg_model_section(b.m, 26); /* DYNAIO_TABLE, before it */
	uint64_t prev_end = prev->offset + prev->size;
	uint64_t need = (64 - prev_end % 64) % 64;

	const nbg_ledger_range *a = find_owner(b.l, "alignment of section 24 COEF_DATA");
	const nbg_ledger_range *p = find_owner(b.l, "gap before section 24 COEF_DATA");
	assert_non_null(a);
	assert_non_null(p);
	assert_int_equal(a->size, need);
	assert_int_equal(a->offset + a->size, coef->offset);
	assert_int_equal(p->cls, NBG_LEDGER_PADDING);
	assert_int_equal(p->offset, prev_end);
	assert_int_equal(p->size + a->size, coef->offset - prev_end);
	assert_int_equal(p->offset + p->size, a->offset);
	p = find_owner(b.l, "gap before section 9 SH");
	assert_non_null(p);
	assert_int_equal(p->size, 7);
	assert_null(find_owner(b.l, "alignment of section 9 SH"));
	assert_int_equal(nbg_ledger_class_bytes(b.l, NBG_LEDGER_PADDING),
			 7 + (coef->offset - prev_end - need));
	free_built(&b);
	fx_free(s);
}

/* Trailing bytes: >= 512 uncovered -> connection-tail owns the final 512. */
static void test_tail_uncovered(void **state)
{
	size_t trail[] = { 512, 700, 5000 };
	for (size_t k = 0; k < 3; k++) {
		fx_spec *s = fx_default();
		s->trailing = trail[k];
		s->trailing_byte = 0xa5;
		built b = build_spec(s);
		const nbg_ledger_range *t = find_owner(b.l, "connection tail");
		assert_non_null(t);
		assert_int_equal(t->cls, NBG_LEDGER_CONNECTION_TAIL);
		assert_int_equal(t->offset, b.size - 512);
		assert_int_equal(t->size, 512);
		assert_ptr_equal(t, nbg_ledger_range_at(b.l, nbg_ledger_range_count(b.l) - 1));
		const nbg_ledger_view *v = find_view(b.l, NBG_VIEW_CONNECTION_TAIL);
		assert_non_null(v);
		assert_int_equal(v->covered_bytes, 0);
		assert_memory_equal(v->sha256, t->sha256, 32);
		assert_null(find_view(b.l, NBG_VIEW_SECTION_COVERED));
		/* whatever lies between the last section and the tail is padding */
		const nbg_ledger_range *p = find_owner(b.l, "gap before connection tail");
		if (trail[k] == 512)
			assert_null(p);
		else {
			assert_non_null(p);
			assert_int_equal(p->size, trail[k] - 512);
		}
		assert_int_equal(nbg_ledger_class_bytes(b.l, NBG_LEDGER_PADDING), trail[k] - 512);
		free_built(&b);
		fx_free(s);
	}
}

/* Fewer than 512 trailing bytes: the tail is partly covered, the uncovered
 * bytes are padding and the tail stays a view. */
static void test_tail_partly_covered(void **state)
{
	fx_spec *s = fx_default();
	s->trailing = 100;
	s->trailing_byte = 0x5a;
	built b = build_spec(s);
	const nbg_ledger_range *p = find_owner(b.l, "end of file");
	assert_non_null(p);
	assert_int_equal(p->cls, NBG_LEDGER_PADDING);
	assert_int_equal(p->size, 100);
	assert_int_equal(p->offset + p->size, b.size);
	assert_null(find_owner(b.l, "connection tail"));
	const nbg_ledger_view *v = find_view(b.l, NBG_VIEW_PARTLY_COVERED);
	assert_non_null(v);
	assert_int_equal(v->covered_bytes, 412);
	assert_int_equal(v->offset, b.size - 512);
	assert_int_equal(nbg_ledger_class_bytes(b.l, NBG_LEDGER_CONNECTION_TAIL), 0);
	free_built(&b);
	fx_free(s);
}

/* A small file: under 512 bytes there is no tail view at all; just over,
 * the header and directory (not only sections) count as owners of the tail. */
static void test_small_files(void **state)
{
	fx_spec *s = calloc(1, sizeof(*s));
	uint8_t ni[220] = { 0 };
	memcpy(ni, "tiny", 4);
	fx_put32(ni + 0x58, 32);
	fx_put32(ni + 0x5c, 0x0a);
	fx_set(s, 35, ni, 220, 0, 220);
	built b = build_spec(s); /* 60 + 44 + 220 = 324 bytes */
	assert_int_equal(b.size, 324);
	assert_int_equal(nbg_ledger_view_count(b.l), 0);
	assert_int_equal(nbg_ledger_range_count(b.l), 4);
	free_built(&b);

	s->trailing = 300; /* 624 bytes: the tail starts inside NETWORK_INFO */
	b = build_spec(s);
	const nbg_ledger_view *v = find_view(b.l, NBG_VIEW_PARTLY_COVERED);
	assert_non_null(v);
	assert_int_equal(v->offset, 112);
	assert_int_equal(v->covered_bytes, 512 - 300);
	assert_null(find_owner(b.l, "connection tail"));
	assert_int_equal(find_owner(b.l, "end of file")->size, 300);
	free_built(&b);

	/* no section at all: only the header and sub-header reach into the
	 * tail, and they are owners too, so the tail does not own bytes */
	fx_remove(s, 35);
	s->trailing = 460; /* 520 bytes, the tail starts at 8 */
	b = build_spec(s);
	assert_int_equal(b.size, 520);
	/* the parser's tail view counts the same owners as the ledger */
	assert_int_equal(nbg_model_tail(b.m)->cover, NBG_TAIL_PARTIAL);
	assert_int_equal(nbg_model_tail(b.m)->covered_bytes, 52);
	v = find_view(b.l, NBG_VIEW_PARTLY_COVERED);
	assert_non_null(v);
	assert_int_equal(v->offset, 8);
	assert_int_equal(v->covered_bytes, 52);
	assert_null(find_owner(b.l, "connection tail"));
	assert_int_equal(find_owner(b.l, "end of file")->size, 460);
	free_built(&b);

	s->trailing = 1000; /* now the final 512 bytes are nobody's: the tail owns them */
	b = build_spec(s);
	assert_int_equal(find_owner(b.l, "connection tail")->size, 512);
	assert_int_equal(find_owner(b.l, "gap before connection tail")->size, 488);
	free_built(&b);
	fx_free(s);
}

/* ---------------------------------------------------------- refusal */

static void test_refuse_every_range(void **state)
{
	fx_spec *s = fx_default();
	s->trailing = 600;
	fx_find(s, 24)->gap = 70;
	built b = build_spec(s);
	uint8_t *copy = malloc(b.size);
	nbg_error err;
	int refused = 0;

	/* One byte changed in any range, anywhere in it, is refused with the
	 * offset of that range and its owner. */
	for (size_t i = 0; i < nbg_ledger_range_count(b.l); i++) {
		const nbg_ledger_range *r = nbg_ledger_range_at(b.l, i);
		uint64_t at = r->offset + (r->size - 1) * (i % 3) / 2;
		memcpy(copy, b.buf, b.size);
		copy[at] ^= 0x01;
		assert_int_equal(nbg_reemit_check(b.l, copy, b.size, &err),
				 NBG_E_SEMANTIC_CHANGE_REFUSED);
		assert_int_equal(err.code, NBG_E_SEMANTIC_CHANGE_REFUSED);
		assert_int_equal(err.offset, r->offset);
		assert_string_equal(err.field, r->owner);
		assert_non_null(strstr(err.message, "refuses"));
		refused++;
	}
	assert_true(refused > 40);
	assert_string_equal(nbg_code_name(NBG_E_SEMANTIC_CHANGE_REFUSED), "semantic-change-refused");

	/* through the descriptor writer: refused before a byte is written */
	memcpy(copy, b.buf, b.size);
	copy[nbg_model_section(b.m, 24)->offset + 10] ^= 0x80;
	int fd = open(tmp_path("fd.nb"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(nbg_reemit_write(b.l, copy, b.size, fd, NBG_REEMIT_READBACK, &err),
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
	assert_int_equal(err.offset, nbg_model_section(b.m, 24)->offset);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	close(fd);
	unlink(tmp_path("fd.nb"));

	/* a size change is refused too */
	assert_int_equal(nbg_reemit_check(b.l, b.buf, b.size - 1, &err),
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
	assert_int_equal(err.offset, b.size - 1);
	free(copy);
	free_built(&b);
	fx_free(s);
}

/* The refusal on a real file: the ledger of the parsed original, one byte of
 * coefficients changed in a copy. */
static void test_refuse_real_file(void **state)
{
	size_t size;
	uint8_t *buf = fx_read_file(NBG_CORPUS_DIR "/v2/face_blendshapes_nbg_fp16.nb", &size);
	nbg_model *m = parse_ok(buf, size);
	nbg_ledger *l = ledger_ok(m);
	const nbg_section *coef = nbg_model_section(m, 24);
	uint8_t *copy = malloc(size);
	nbg_error err;

	memcpy(copy, buf, size);
	copy[coef->offset + coef->size / 2] += 1;
	assert_int_equal(nbg_reemit_check(l, copy, size, &err), NBG_E_SEMANTIC_CHANGE_REFUSED);
	assert_int_equal(err.offset, coef->offset);
	assert_string_equal(err.field, "section 24 COEF_DATA");
	int fd = open(tmp_path("x.nb"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(nbg_reemit_write(l, copy, size, fd, NBG_REEMIT_READBACK, &err),
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0); /* nothing written */
	close(fd);
	unlink(tmp_path("x.nb"));
	assert_int_equal(nbg_reemit_check(l, buf, size, &err), NBG_OK);
	free(copy);
	nbg_ledger_free(l);
	nbg_model_free(m);
	free(buf);
}

/* ---------------------------------------------------------- invariant */

static void test_invariant_checker(void **state)
{
	nbg_ledger_range r[3];
	nbg_error err;

	memset(r, 0, sizeof(r));
	for (int i = 0; i < 3; i++) {
		r[i].offset = (uint64_t)i * 10;
		r[i].size = 10;
		snprintf(r[i].owner, sizeof(r[i].owner), "range %d", i);
	}
	assert_int_equal(nbg_ledger_check_tiling(r, 3, 30, &err), NBG_OK);
	/* sum short of the file */
	assert_int_equal(nbg_ledger_check_tiling(r, 3, 31, &err), NBG_E_LEDGER_INVARIANT);
	assert_int_equal(err.offset, 30);
	/* gap */
	r[2].offset = 21;
	r[2].size = 9;
	assert_int_equal(nbg_ledger_check_tiling(r, 3, 30, &err), NBG_E_LEDGER_INVARIANT);
	assert_int_equal(err.offset, 20);
	assert_non_null(strstr(err.message, "gap"));
	/* overlap */
	r[2].offset = 19;
	r[2].size = 11;
	assert_int_equal(nbg_ledger_check_tiling(r, 3, 30, &err), NBG_E_LEDGER_INVARIANT);
	assert_int_equal(err.offset, 19);
	assert_non_null(strstr(err.message, "overlap"));
	/* past the end */
	r[2].offset = 20;
	r[2].size = 11;
	assert_int_equal(nbg_ledger_check_tiling(r, 3, 30, &err), NBG_E_LEDGER_INVARIANT);
	/* empty range */
	r[2].size = 0;
	assert_int_equal(nbg_ledger_check_tiling(r, 3, 20, &err), NBG_E_LEDGER_INVARIANT);
	/* a code of the one list, with its own name and exit code (1: a check failed) */
	assert_true((int)NBG_E_LEDGER_INVARIANT > 0 && (int)NBG_E_LEDGER_INVARIANT < (int)NBG_E__COUNT);
	assert_int_equal(nbg_code_exit(NBG_E_LEDGER_INVARIANT), NBG_EXIT_INVALID);
	assert_string_equal(nbg_code_name(NBG_E_LEDGER_INVARIANT),
			    "ledger-invariant-broken");
	assert_string_equal(nbg_code_name(NBG_E_SEMANTIC_CHANGE_REFUSED),
			    "semantic-change-refused");

	/* a model whose buffer disagrees with it is refused loudly */
	size_t size;
	fx_spec *s = fx_default();
	uint8_t *buf = fx_build(s, &size);
	nbg_model *m = parse_ok(buf, size);
	nbg_ledger *l = (nbg_ledger *)1;
	m->file_size = 100; /* as if the model described a shorter file */
	assert_int_equal(nbg_ledger_build(m, &l, &err), NBG_E_LEDGER_INVARIANT);
	assert_null(l);
	m->file_size = size;
	m->sections[3].offset = m->sections[2].offset; /* two owners of the same bytes */
	assert_int_equal(nbg_ledger_build(m, &l, &err), NBG_E_LEDGER_INVARIANT);
	assert_null(l);
	assert_non_null(strstr(err.message, "overlaps"));
	nbg_model_free(m);
	free(buf);
	fx_free(s);
}

/* ---------------------------------------------------------- documents */

static void test_json_round_trip(void **state)
{
	fx_spec *s = fx_default();
	s->trailing = 900;
	built b = build_spec(s);
	char *doc = nbg_ledger_json(b.l, "x.nb");
	nbg_ledger *l2 = NULL;
	nbg_error err;

	assert_non_null(doc);
	assert_int_equal(nbg_ledger_from_json(doc, strlen(doc), &l2, &err), NBG_OK);
	assert_int_equal(nbg_ledger_range_count(l2), nbg_ledger_range_count(b.l));
	assert_int_equal(nbg_ledger_view_count(l2), nbg_ledger_view_count(b.l));
	for (size_t i = 0; i < nbg_ledger_range_count(l2); i++) {
		const nbg_ledger_range *x = nbg_ledger_range_at(b.l, i),
				       *y = nbg_ledger_range_at(l2, i);
		assert_int_equal(x->offset, y->offset);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->cls, y->cls);
		assert_string_equal(x->owner, y->owner);
		assert_memory_equal(x->sha256, y->sha256, 32);
	}
	for (int c = 0; c < NBG_LEDGER_CLASS_COUNT; c++)
		assert_int_equal(nbg_ledger_class_bytes(l2, (nbg_ledger_class)c),
				 nbg_ledger_class_bytes(b.l, (nbg_ledger_class)c));
	check_reemit(l2, b.buf, b.size);
	nbg_ledger_free(l2);

	/* a tampered document: a range one byte longer no longer tiles */
	char *p = strstr(doc, "\"size\": 48");
	assert_non_null(p);
	memcpy(p, "\"size\": 49", 10);
	assert_int_equal(nbg_ledger_from_json(doc, strlen(doc), &l2, &err),
			 NBG_E_LEDGER_INVARIANT);
	assert_null(l2);
	/* not a ledger at all */
	assert_int_equal(nbg_ledger_from_json("{\"family\": 2}", 13, &l2, &err),
			 NBG_E_RESOURCE);
	assert_int_equal(nbg_ledger_from_json("not json", 8, &l2, &err), NBG_E_RESOURCE);
	free(doc);
	free_built(&b);
	fx_free(s);
}

static void test_io_failures(void **state)
{
	fx_spec *s = fx_default();
	built b = build_spec(s);
	nbg_error err;

	/* a device that is always full: the write fails and says so */
	int fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		assert_int_equal(nbg_reemit_write(b.l, b.buf, b.size, fd, 0, &err), NBG_E_IO);
		close(fd);
	}
	/* no descriptor */
	assert_int_equal(nbg_reemit_write(b.l, b.buf, b.size, -1, 0, &err), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(dir_entries(tmpdir), 0);
	free_built(&b);
	fx_free(s);
}

static void test_svg(void **state)
{
	fx_spec *s = fx_default();
	s->trailing = 520;
	built b = build_spec(s);
	char *svg = nbg_ledger_svg(b.l, "a <title> & more");

	assert_non_null(svg);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "a &lt;title&gt; &amp; more"));
	for (size_t i = 0; i < nbg_model_section_count(b.m); i++)
		assert_non_null(strstr(svg, nbg_section_type_name(nbg_model_section_at(b.m, i)->type)));
	assert_non_null(strstr(svg, "connection-tail"));
	assert_non_null(strstr(svg, "final 512 bytes"));
	free(svg);
	free_built(&b);
	fx_free(s);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	return rmdir(tmpdir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_v2),
		cmocka_unit_test(test_corpus_v1),
		cmocka_unit_test(test_totals_real_file),
		cmocka_unit_test(test_v1_nested_entries),
		cmocka_unit_test(test_refuse_real_file),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_fixture),
		cmocka_unit_test(test_gap_padding),
		cmocka_unit_test(test_tail_uncovered),
		cmocka_unit_test(test_tail_partly_covered),
		cmocka_unit_test(test_small_files),
		cmocka_unit_test(test_refuse_every_range),
		cmocka_unit_test(test_invariant_checker),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_io_failures),
		cmocka_unit_test(test_svg),
	};
	return tc_main(argc, argv, "test_ledger", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), setup, teardown);
}

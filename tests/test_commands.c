/*
 * test_commands.c - NN and TP command decoding (nbg_commands_decode).
 *
 * Expected values come from three places, never from nbgkit's output:
 * - the raw command words, cut into fields here with shifts and masks
 *   written in this file from the open driver's published layout;
 * - the shapes stated for two corpus networks (the emotion network's first
 *   convolutions, BlazeFace's first blocks), measured independently of
 *   nbgkit, which the raw words must reproduce;
 * - a second implementation, in this file, of every relation, whose counts
 *   over the corpus must equal the library's file by file.
 * Synthesized files set each field of the table alone and read it back.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/commands.h"
#include "nbg/graph.h"
#include "nbg/nbg.h"

#define V1_DIR NBG_CORPUS_DIR "/v1"
#define V2_DIR NBG_CORPUS_DIR "/v2"

typedef struct loaded {
	uint8_t *buf;
	size_t size;
	nbg_model *m;
	nbg_graph *g;
	nbg_commands *c;
} loaded;

static void load_buf(loaded *l)
{
	nbg_error err;
	nbg_code rc = nbg_parse(l->buf, l->size, NULL, &l->m, &err);
	if (rc != NBG_OK)
		fail_msg("parse failed: %s: %s", nbg_code_name(rc), err.message);
	assert_int_equal(nbg_graph_decode(l->m, &l->g, &err), NBG_OK);
	rc = nbg_commands_decode(l->m, l->g, &l->c, &err);
	if (rc != NBG_OK)
		fail_msg("command decode failed: %s", err.message);
	assert_non_null(l->c);
}

static int load_file(const char *path, loaded *l)
{
	memset(l, 0, sizeof(*l));
	l->buf = fx_read_file(path, &l->size);
	if (!l->buf)
		return 0;
	load_buf(l);
	return 1;
}

static void unload(loaded *l)
{
	nbg_commands_free(l->c);
	nbg_graph_free(l->g);
	nbg_model_free(l->m);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

static int have_corpus(void)
{
	struct stat st;
	return stat(V1_DIR, &st) == 0 && stat(V2_DIR, &st) == 0;
}

/* The cases that use this run only when the corpus directory exists
 * (tests/corpus.h): without v1/ and v2/ in it the corpus is incomplete. */
#define NEED_CORPUS()                                                              \
	do {                                                                       \
		if (!have_corpus())                                                \
			fail_msg("%s lacks v1/ or v2/: the corpus is incomplete",  \
				 NBG_CORPUS_DIR);                                  \
	} while (0)

static uint32_t le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t bits(uint32_t w, unsigned lo, unsigned n)
{
	return n >= 32 ? w : (w >> lo) & ((1u << n) - 1u);
}

static const nbg_section *sec(const nbg_model *m, uint32_t type)
{
	for (size_t i = 0; i < nbg_model_section_count(m); i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (s->type == type && (nbg_model_family(m) == 2 || s->size))
			return s;
	}
	return NULL;
}

/* Command sizes as the file gives them (the v1 TP rule is the measured one
 * doc/commands.md states). */
static uint32_t nn_size(const nbg_model *m)
{
	const nbg_section *s = sec(m, 7);
	if (nbg_model_family(m) == 2)
		return s && s->entry_size > 1 ? s->entry_size : nbg_model_network_info(m)->nn_command_bytes;
	return nbg_model_v1(m)->nn_command_bytes;
}

static uint32_t tp_size(const nbg_model *m)
{
	const nbg_section *s = sec(m, 8);
	uint32_t a, b;
	if (nbg_model_family(m) == 2)
		return s && s->entry_size > 1 ? s->entry_size : nbg_model_network_info(m)->tp_command_bytes;
	a = nbg_model_version(m) >= 0x10014 ? 192 : 128;
	b = 320 - a;
	return s && s->size % a && s->size % b == 0 ? b : a;
}

/* Word w of command i of section `type` with commands of `size` bytes, read
 * from the file bytes. */
static uint32_t word(const loaded *l, uint32_t type, uint32_t size, uint32_t i, uint32_t w)
{
	const nbg_section *s = sec(l->m, type);
	return le(l->buf + s->offset + (uint64_t)i * size + 4u * w);
}

static const nbg_cmd_op *op_of_command(const nbg_commands *c, unsigned engine, uint32_t idx)
{
	for (size_t i = 0; i < nbg_commands_op_count(c); i++) {
		const nbg_cmd_op *op = nbg_commands_op_at(c, i);
		if (op->engine == engine && op->command == idx)
			return op;
	}
	return NULL;
}

static uint32_t field(const nbg_commands *c, unsigned engine, uint32_t idx, const char *key)
{
	const nbg_cmd *cmd = nbg_commands_at(c, engine, idx);
	int f = nbg_command_field_index(engine, key);
	assert_non_null(cmd);
	assert_true(f >= 0);
	return cmd->values[f];
}

/* ------------------------------------------------- two corpus networks */

typedef struct nn_expect {
	uint32_t kxy, kz, in_x, in_y, out_x, out_y, out_z, relu;
} nn_expect;

/* NN command i, cut from the raw words here, equals e; the library agrees. */
static void check_nn(const loaded *l, uint32_t i, const nn_expect *e)
{
	uint32_t sz = nn_size(l->m);
	uint32_t w0 = word(l, 7, sz, i, 0), w1 = word(l, 7, sz, i, 1), w2 = word(l, 7, sz, i, 2),
		 w3 = word(l, 7, sz, i, 3), w4 = word(l, 7, sz, i, 4), w16 = word(l, 7, sz, i, 16);
	const nbg_cmd_op *op = op_of_command(l->c, NBG_CMD_NN, i);

	assert_int_equal(bits(w0, 2, 4), e->kxy);
	assert_int_equal(bits(w0, 6, 14), e->kz);
	assert_int_equal(bits(w1, 6, 13), e->in_x);
	assert_int_equal(bits(w1, 19, 13), e->in_y);
	assert_int_equal(bits(w3, 6, 13), e->out_x);
	assert_int_equal(bits(w3, 19, 13), e->out_y);
	assert_int_equal(bits(w4, 0, 14), e->out_z);
	assert_int_equal(bits(w2, 24, 1), e->relu);
	assert_non_null(op);
	assert_int_equal(op->kernel[0], e->kxy);
	assert_int_equal(op->kernel[2], e->kz);
	assert_int_equal(op->in[0], e->in_x);
	assert_int_equal(op->in[1], e->in_y);
	assert_int_equal(op->out_conv[0], e->out_x);
	assert_int_equal(op->out_conv[1], e->out_y);
	assert_int_equal(op->out_conv[2], e->out_z);
	assert_int_equal(op->out[2], e->out_z);
	assert_int_equal(op->relu, (int)e->relu);
	assert_int_equal(field(l->c, NBG_CMD_NN, i, "kernel_xy_size"), e->kxy);
	assert_int_equal(field(l->c, NBG_CMD_NN, i, "in_image_x_stride"), bits(w16, 0, 16));
	assert_int_equal(field(l->c, NBG_CMD_NN, i, "in_image_y_stride"), bits(w16, 16, 16));
}

static void test_emotion(void **state)
{
	/* The emotion network (input 64x64x1 UINT8): 3x3 kernel z 1, 64x64 ->
	 * 62x62x8, ReLU; 3x3x8, 62x62 -> 60x60x8, ReLU; 1x1x8, 30x30 -> 30x30x16. */
	static const nn_expect e[3] = {
		{ 3, 1, 64, 64, 62, 62, 8, 1 },
		{ 3, 8, 62, 62, 60, 60, 8, 1 },
		{ 1, 8, 30, 30, 30, 30, 16, 0 },
	};
	loaded l;
	char d[160];

	NEED_CORPUS();
	assert_true(load_file(V1_DIR "/1000e_88_emotion_88_A311D.nb", &l));
	assert_int_equal(nn_size(l.m), 128);
	assert_int_equal(nbg_commands_section(l.c, NBG_CMD_NN)->command_size, 128);
	assert_int_equal(nbg_commands_count(l.c, NBG_CMD_NN), sec(l.m, 7)->size / 128);
	for (uint32_t i = 0; i < 3; i++) {
		check_nn(&l, i, &e[i]);
		/* strides equal widths in these 128-byte commands */
		assert_int_equal(field(l.c, NBG_CMD_NN, i, "in_image_x_stride"), e[i].in_x);
		assert_int_equal(field(l.c, NBG_CMD_NN, i, "out_image_x_stride"), e[i].out_x);
		/* UINT8 is hardware code 0 (getHWDataFormat) */
		assert_int_equal(bits(word(&l, 7, 128, i, 1), 2, 2), 0);
		assert_int_equal(op_of_command(l.c, NBG_CMD_NN, i)->in_type, 0);
	}
	assert_string_equal(nbg_command_describe(op_of_command(l.c, NBG_CMD_NN, 1), d, sizeof(d)),
			    "conv 3x3x8 -> 8, 62x62 -> 60x60, relu, uint8");
	/* NN 0 reads input 0 through an INPUT patch; NN 1 reads what NN 0 wrote. */
	assert_int_equal(op_of_command(l.c, NBG_CMD_NN, 0)->input_record, 0);
	{
		const nbg_cmd_op *o1 = op_of_command(l.c, NBG_CMD_NN, 1);
		assert_true(o1->producer >= 0);
		assert_ptr_equal(nbg_commands_op_of(l.c, (size_t)o1->producer),
				 op_of_command(l.c, NBG_CMD_NN, 0));
		/* no pooling: it writes the size its command states */
		assert_int_equal(o1->out[0], 60);
		assert_int_equal(o1->out_subsample, 1);
	}
	unload(&l);
}

static void test_face_detector(void **state)
{
	/* BlazeFace (input 128x128x3 INT16): 5x5x3, 128x128 -> 128x128x24 with
	 * data-type code 4 on kernel, input and output; then a depthwise 3x3
	 * (kernel z 1) and a pointwise 1x1x24 at 64x64. */
	static const nn_expect e[3] = {
		{ 5, 3, 128, 128, 128, 128, 24, 1 },
		{ 3, 1, 64, 64, 64, 64, 24, 0 },
		{ 1, 24, 64, 64, 64, 64, 24, 0 },
	};
	loaded l;

	NEED_CORPUS();
	assert_true(load_file(V2_DIR "/face_detector_nbg_int16.nb", &l));
	assert_int_equal(nn_size(l.m), 192);
	for (uint32_t i = 0; i < 3; i++)
		check_nn(&l, i, &e[i]);
	{
		uint32_t w1 = word(&l, 7, 192, 0, 1), w15 = word(&l, 7, 192, 0, 15);
		const nbg_cmd_op *op = op_of_command(l.c, NBG_CMD_NN, 0);
		assert_int_equal(bits(w1, 0, 2) | bits(w15, 19, 1) << 2, 4);
		assert_int_equal(bits(w1, 2, 2) | bits(w15, 20, 1) << 2, 4);
		assert_int_equal(bits(w1, 4, 2) | bits(w15, 21, 1) << 2, 4);
		assert_int_equal(op->kernel_type, 4);
		assert_int_equal(op->in_type, 4);
		assert_int_equal(op->out_type, 4);
		assert_string_equal(nbg_command_data_type_name(op->in_type), "int16");
	}
	{
		/* The first layer is a strided convolution: its command states a
		 * 128x128 output, but its output row stride (word 17 bits 0-15) is
		 * 128 bytes, 64 int16 elements: the image written is 64x64, and the
		 * next operation reads 64x64 (check_nn above). */
		const nbg_cmd_op *op = op_of_command(l.c, NBG_CMD_NN, 0);
		assert_int_equal(bits(word(&l, 7, 192, 0, 17), 0, 16), 128);
		assert_int_equal(bits(word(&l, 7, 192, 0, 0), 27, 2), 0); /* no pooling */
		assert_int_equal(op->out[0], 64);
		assert_int_equal(op->out[1], 64);
		assert_int_equal(op->out_subsample, 2);
		assert_true(op->out_subsample_inferred);
	}
	assert_int_equal(bits(word(&l, 7, 192, 1, 22), 17, 1), 1); /* depthwise */
	assert_string_equal(op_of_command(l.c, NBG_CMD_NN, 1)->kind, "depthwise conv");
	assert_int_equal(op_of_command(l.c, NBG_CMD_NN, 1)->in[2], 24);
	unload(&l);
}

/* ---------------------------------------------- relations, recomputed */

/* The relations of the data flow (PROD to DEAD) are not recomputed here:
 * tests/check_dataflow.py checks the data flow against the networks the
 * files are known to hold. */
enum { P_FIELD, K_ADDR, K_ENTRY, FIRST_IN, IN_DIMS, IN_TYPE, OUT_DIMS, OUT_TYPE, PROD,
       CH_TYPE, CH_SHAPE, DEAD, NREL, NREL_RECOMPUTED = PROD };
static const char *const rel_ids[NREL] = {
	"command-patch-not-address-field", "kernel-address-differs", "kernel-entry-missing",
	"first-nn-input-differs", "nn-input-dims-differ", "input-data-type-differs",
	"nn-output-dims-differ", "output-data-type-differs", "image-producer-missing",
	"chain-data-type-differs", "chain-shape-differs", "output-never-read",
};

/* An operation as this test reads it from the raw words. */
typedef struct rop {
	int engine;               /* 0 NN, 1 TP */
	uint32_t type;            /* OPERATIONS type */
	uint32_t in[3], out[3], in_t, out_t;
	int in_p, out_p;          /* patched */
	int from_input;           /* patched from an existing INPUT record */
	uint32_t in_st, out_st;   /* source types (~0u unpatched) */
	int32_t in_ix, out_ix;
	uint64_t in_off, out_off, in_b, out_b;
} rop;

typedef struct counts {
	uint64_t checked[NREL], held[NREL];
	/* the first NN operation: 1 when it reads input 0 through an INPUT patch;
	 * then 1 when it reads that image's width and channels, all its rows or
	 * a band of them (first_image_read) */
	int first_from_input, first_reads;
	uint32_t first_in[3];
} counts;

static void count(counts *k, int r, int ok)
{
	k->checked[r]++;
	k->held[r] += ok != 0;
}

/* Address words: NN kernel 5 (>> 6), in 6, out 7, circular ends 19, 21 (>> 6);
 * TP tile list 7, in 10, LUT 11, out 13, circular ends 26, 28 (>> 6). */
static int address_word(int engine, uint32_t w, int *shift6)
{
	static const uint32_t nn[][2] = { { 5, 1 }, { 6, 0 }, { 7, 0 }, { 19, 1 }, { 21, 1 } };
	static const uint32_t tp[][2] = { { 7, 0 }, { 10, 0 }, { 11, 0 }, { 13, 0 }, { 26, 1 },
					  { 28, 1 } };
	const uint32_t(*t)[2] = engine ? tp : nn;
	size_t n = engine ? 6 : 5;
	for (size_t i = 0; i < n; i++)
		if (t[i][0] == w) {
			*shift6 = (int)t[i][1];
			return 1;
		}
	return 0;
}

static unsigned eb(uint32_t code)
{
	return code == 1 || code == 4 || code == 7 ? 2 : 1;
}

static int fmt_code(uint32_t f)
{
	return f == 1 ? 1 : f == 2 ? 0 : f == 3 ? 2 : f == 5 ? 4 : f == 7 ? 7 : -1;
}

static int dims_ok(const nbg_io *io, const uint32_t v[3])
{
	uint32_t d0 = io->dim_count > 0 ? io->dims[0] : 1, d1 = io->dim_count > 1 ? io->dims[1] : 1,
		 d2 = io->dim_count > 2 ? io->dims[2] : 1;
	return (v[0] == d1 && v[1] == d2 && v[2] == d0) || (v[0] == d0 && v[1] == d1 && v[2] == d2);
}

/* The first NN command fed by an input reads its image: in_image_x the
 * width and the kernel's z the channels, in_image_y all the rows or a band
 * of them (the compiler splits a large first layer into bands of rows), in
 * either of the two dimension orders of the files (NHWC: dims c, w, h
 * innermost first; NCHW: w, h, c). */
static int first_image_read(const nbg_io *io, const uint32_t v[3])
{
	uint32_t d0 = io->dim_count > 0 ? io->dims[0] : 1, d1 = io->dim_count > 1 ? io->dims[1] : 1,
		 d2 = io->dim_count > 2 ? io->dims[2] : 1;
	return v[1] >= 1 && ((v[0] == d1 && v[2] == d0 && v[1] <= d2) ||
			     (v[0] == d0 && v[2] == d2 && v[1] <= d1));
}

static void read_nn(rop *r, const uint32_t *w)
{
	uint32_t kz = bits(w[0], 6, 14) | bits(w[5], 26, 6) << 14;
	r->in[0] = bits(w[1], 6, 13);
	r->in[1] = bits(w[1], 19, 13);
	r->out[0] = bits(w[3], 6, 13);
	r->out[1] = bits(w[3], 19, 13);
	r->out[2] = bits(w[4], 0, 14);
	r->in[2] = bits(w[22], 17, 1) ? r->out[2] : kz;
	r->in_t = bits(w[1], 2, 2) | bits(w[15], 20, 1) << 2;
	r->out_t = bits(w[1], 4, 2) | bits(w[15], 21, 1) << 2;
	r->in_b = (uint64_t)r->in[0] * r->in[1] * r->in[2] * eb(r->in_t);
	r->out_b = (uint64_t)r->out[0] * r->out[1] * r->out[2] * eb(r->out_t);
}

static void read_tp(rop *r, const uint32_t *w)
{
	/* loop counts (word, bit) and increments (word) of loops 0-5 */
	static const uint32_t cw[6] = { 16, 16, 19, 19, 22, 22 }, cb[6] = { 0, 16, 0, 16, 0, 16 },
			      iw[6] = { 14, 15, 17, 18, 20, 21 };
	uint64_t ext = 1;
	r->in[0] = bits(w[0], 0, 16);
	r->in[1] = bits(w[1], 0, 16);
	r->in[2] = bits(w[1], 16, 16);
	r->in_t = bits(w[12], 18, 3);
	r->out_t = bits(w[12], 21, 3);
	for (int i = 0; i < 6; i++) {
		uint32_t n = bits(w[cw[i]], cb[i], 16);
		if (n > 1)
			ext += (uint64_t)(n - 1) * w[iw[i]];
	}
	r->in_b = (uint64_t)r->in[0] * r->in[1] * r->in[2] * eb(r->in_t);
	r->out_b = ext * eb(r->out_t);
}

static int coef(const nbg_graph *g)
{
	const nbg_graph_table *t = nbg_graph_table_at(g, NBG_GRAPH_TABLE_COEF_DATA);
	if (t->present && t->decoded)
		return NBG_GRAPH_TABLE_COEF_DATA;
	t = nbg_graph_table_at(g, NBG_GRAPH_TABLE_LCD);
	return t->present && t->decoded ? NBG_GRAPH_TABLE_LCD : -1;
}

/* The patch of operation o onto byte `dest`, or NULL. */
static const nbg_graph_patch *patch_at(const nbg_graph *g, const nbg_graph_operation *o,
				       uint32_t dest)
{
	for (uint64_t i = o->patch_index; i < (uint64_t)o->patch_index + o->patch_count &&
	     i < nbg_graph_summary_of(g)->patch_count; i++)
		if (nbg_graph_patch_at(g, i)->type == 1 && nbg_graph_patch_at(g, i)->dest_offset == dest)
			return nbg_graph_patch_at(g, i);
	return NULL;
}

static void ref(const nbg_graph_patch *p, uint32_t stored, int *pat, uint32_t *st, int32_t *ix,
		uint64_t *off)
{
	*pat = p != NULL;
	*st = p ? p->source_type : ~0u;
	*ix = p ? p->index : -1;
	*off = (p ? p->src_offset : 0) + (uint64_t)stored;
}

/* Patch and kernel relations of one operation; fills r. */
static void one_op(const loaded *l, const nbg_graph_operation *o, const uint32_t *w,
		   uint32_t wc, int e, rop *r, counts *k)
{
	const nbg_graph *g = l->g;
	const nbg_graph_patch *kp;

	for (uint64_t i = o->patch_index; i < (uint64_t)o->patch_index + o->patch_count &&
	     i < nbg_graph_summary_of(g)->patch_count; i++) {
		const nbg_graph_patch *p = nbg_graph_patch_at(g, i);
		int s6 = 0;
		if (p->type != 1)
			continue;
		count(k, P_FIELD, p->dest_offset % 4 == 0 && p->dest_offset / 4 < wc &&
				   address_word(e, p->dest_offset / 4, &s6) &&
				   (p->transformed != 0) == (s6 != 0));
	}
	e ? read_tp(r, w) : read_nn(r, w);
	r->engine = e;
	ref(patch_at(g, o, e ? 40 : 24), e ? w[10] : w[6], &r->in_p, &r->in_st, &r->in_ix,
	    &r->in_off);
	ref(patch_at(g, o, e ? 52 : 28), e ? w[13] : w[7], &r->out_p, &r->out_st, &r->out_ix,
	    &r->out_off);
	if (e || !(kp = patch_at(g, o, 20)))
		return;
	count(k, K_ADDR, ((uint64_t)bits(w[5], 0, 26) << 6) == kp->src_offset);
	if (kp->source_type == 5) {
		int t = coef(g);
		const nbg_graph_table_entry *en =
			t >= 0 && kp->index >= 0 ? nbg_graph_table_entry_at(g, t, kp->index) : NULL;
		count(k, K_ENTRY, en && kp->src_offset < en->size);
	}
}

static void io_relations(const loaded *l, const rop *r, counts *k)
{
	const nbg_model *m = l->m;
	if (r->in_p && r->in_st == 1 && r->in_ix >= 0 && (size_t)r->in_ix < nbg_model_input_count(m)) {
		const nbg_io *io = nbg_model_input_at(m, r->in_ix);
		if (r->type == 2)
			count(k, IN_DIMS, dims_ok(io, r->in));
		if (fmt_code(io->data_format) >= 0 && r->type != 8)
			count(k, IN_TYPE, (int)r->in_t == fmt_code(io->data_format));
	}
	if (r->out_p && r->out_st == 2 && r->out_ix >= 0 && (size_t)r->out_ix < nbg_model_output_count(m)) {
		const nbg_io *io = nbg_model_output_at(m, r->out_ix);
		if (r->type == 2)
			count(k, OUT_DIMS, dims_ok(io, r->out));
		if (fmt_code(io->data_format) >= 0 && r->type != 8)
			count(k, OUT_TYPE, (int)r->out_t == fmt_code(io->data_format));
	}
}

static void recompute(const loaded *l, counts *k)
{
	const nbg_graph *g = l->g;
	const nbg_model *m = l->m;
	uint32_t sz[2] = { nn_size(m), tp_size(m) }, words[64];
	rop *ops = calloc(nbg_graph_summary_of(g)->operation_count + 1, sizeof(rop));
	size_t n = 0;
	int first = 1;

	assert_non_null(ops);
	for (size_t i = 0; i < nbg_graph_summary_of(g)->operation_count; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
		/* NN, SP, NN_LUT, NT run NN commands; TP runs TP commands */
		int e = o->type == 2 || o->type == 6 || o->type == 7 || o->type == 8 ? 0
		      : o->type == 3 ? 1 : -1;
		const nbg_section *s;
		if (e < 0 || !(s = sec(m, e ? 8 : 7)) || !sz[e] || o->index >= s->size / sz[e])
			continue;
		for (uint32_t w = 0; w < sz[e] / 4; w++)
			words[w] = word(l, e ? 8 : 7, sz[e], o->index, w);
		ops[n].type = o->type;
		one_op(l, o, words, sz[e] / 4, e, &ops[n], k);
		ops[n].from_input = ops[n].in_p && ops[n].in_st == 1 && ops[n].in_ix >= 0 &&
				    (size_t)ops[n].in_ix < nbg_model_input_count(m);
		if (o->type == 2 && first && nbg_model_input_count(m)) {
			const nbg_io *io = nbg_model_input_at(m, 0);
			first = 0;
			count(k, FIRST_IN, dims_ok(io, ops[n].in));
			k->first_from_input = ops[n].from_input && ops[n].in_ix == 0;
			k->first_reads = first_image_read(io, ops[n].in);
			memcpy(k->first_in, ops[n].in, sizeof(k->first_in));
		}
		io_relations(l, &ops[n], k);
		n++;
	}
	free(ops);
}

typedef struct walk {
	counts lib, mine;
	size_t files, first_judged, first_held;
} walk;

static void walk_file(const char *path, walk *w)
{
	loaded l;
	counts k = { 0 };

	assert_true(load_file(path, &l));
	recompute(&l, &k);
	if (!k.first_from_input) {
		print_message("  %s: first NN command not judged: %s\n", path,
			      !sec(l.m, 7) ? "the file has no NN command"
					   : "it reads no INPUT record (its input comes from another "
					     "operation)");
	} else {
		const nbg_io *io = nbg_model_input_at(l.m, 0);
		w->first_judged++;
		w->first_held += k.first_reads != 0;
		if (!k.first_reads)
			print_error("%s: the first NN command reads x %u, y %u, z %u of input 0, "
				    "whose dims (innermost first) are %u, %u, %u\n", path,
				    k.first_in[0], k.first_in[1], k.first_in[2], io->dims[0],
				    io->dim_count > 1 ? io->dims[1] : 1,
				    io->dim_count > 2 ? io->dims[2] : 1);
	}
	for (int r = 0; r < NREL; r++) {
		const nbg_graph_relation *rel = nbg_commands_relation_at(l.c, (size_t)r);
		assert_non_null(rel);
		assert_string_equal(rel->id, rel_ids[r]);
		if (r < NREL_RECOMPUTED && (rel->checked != k.checked[r] || rel->held != k.held[r]))
			fail_msg("%s: %s: library %llu/%llu, recomputed %llu/%llu", path, rel->id,
				 (unsigned long long)rel->held, (unsigned long long)rel->checked,
				 (unsigned long long)k.held[r], (unsigned long long)k.checked[r]);
		w->lib.checked[r] += rel->checked;
		w->lib.held[r] += rel->held;
		w->mine.checked[r] += k.checked[r];
		w->mine.held[r] += k.held[r];
		/* every relation that does not hold has findings of its id */
		if (rel->held < rel->checked && !nbg_commands_findings_dropped(l.c)) {
			size_t f = 0;
			for (size_t i = 0; i < nbg_commands_finding_count(l.c); i++)
				f += !strcmp(nbg_commands_finding_at(l.c, i)->id, rel->id);
			assert_int_equal(f, rel->checked - rel->held);
		}
	}
	w->files++;
	unload(&l);
}

static void walk_dir(const char *dir, walk *w)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[1024];
		size_t n = strlen(e->d_name);
		if (n < 3 || strcmp(e->d_name + n - 3, ".nb"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		walk_file(path, w);
	}
	closedir(d);
}

static void test_corpus_relations(void **state)
{
	walk w = { 0 };

	NEED_CORPUS();
	walk_dir(V1_DIR, &w);
	walk_dir(V2_DIR, &w);
	assert_int_equal(w.files, tc_manifest_files("v1") + tc_manifest_files("v2"));
	for (int r = 0; r < NREL; r++)
		print_message("  %-34s %llu/%llu\n", rel_ids[r], (unsigned long long)w.lib.held[r],
			      (unsigned long long)w.lib.checked[r]);
	/* Every first NN command fed by input 0 reads that image (its words
	 * cut here, its dims from the I/O record) */
	print_message("  first NN command reads input 0's image: %zu of %zu files judged\n",
		      w.first_held, w.first_judged);
	assert_true(w.first_judged > 0);
	assert_int_equal(w.first_held, w.first_judged);
	/* Relations that hold everywhere on the corpus (doc/commands.md's C). */
	assert_true(w.lib.checked[K_ADDR] > 0 && w.lib.held[K_ADDR] == w.lib.checked[K_ADDR]);
	assert_true(w.lib.checked[IN_TYPE] > 0 && w.lib.held[IN_TYPE] == w.lib.checked[IN_TYPE]);
}

/* ------------------------------------------------------- synthesized */

/* A v2 file from the fixture with one NN and one TP command of 192 bytes. */
static uint8_t *synth(const uint8_t nn[192], const uint8_t tp[192], size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *b;
	fx_set(s, 7, nn, 192, 0, 192);
	fx_set(s, 8, tp, 192, 0, 192);
	fx_resize(fx_find(s, 40), 40); /* a fifth checksum record, for TP */
	b = fx_build(s, size);
	fx_free(s);
	return b;
}

static void put_bits(uint8_t *cmd, unsigned w, unsigned lo, unsigned n, uint32_t v)
{
	uint32_t x = le(cmd + 4 * w), mask = n >= 32 ? 0xFFFFFFFFu : ((1u << n) - 1u) << lo;
	x = (x & ~mask) | ((n >= 32 ? v : v << lo) & mask);
	cmd[4 * w] = (uint8_t)x;
	cmd[4 * w + 1] = (uint8_t)(x >> 8);
	cmd[4 * w + 2] = (uint8_t)(x >> 16);
	cmd[4 * w + 3] = (uint8_t)(x >> 24);
}

/* Each field of each table set alone (all ones, then a value with its top
 * and bottom bits): it reads back, every other field reads 0, and the word
 * holds exactly the field's bits. */
static void test_each_field_alone(void **state)
{
	for (unsigned e = 0; e < NBG_CMD_ENGINE_COUNT; e++) {
		size_t nf;
		const nbg_cmd_field *t = nbg_command_fields(e, &nf);
		assert_true(nf > 0);
		for (size_t f = 0; f < nf; f++) {
			for (int pass = 0; pass < 2; pass++) {
				uint8_t nn[192] = { 0 }, tp[192] = { 0 }, *cmd = e ? tp : nn;
				uint32_t all = t[f].bit_count >= 32 ? 0xFFFFFFFFu
								    : (1u << t[f].bit_count) - 1u;
				uint32_t v = pass ? (all & (1u | 1u << (t[f].bit_count - 1))) : all;
				loaded l = { 0 };

				put_bits(cmd, t[f].word, t[f].bit_lo, t[f].bit_count, v);
				l.buf = synth(nn, tp, &l.size);
				load_buf(&l);
				{
					const nbg_cmd *c = nbg_commands_at(l.c, e, 0);
					assert_non_null(c);
					assert_int_equal(c->words[t[f].word],
							 t[f].bit_count >= 32 ? v : v << t[f].bit_lo);
					for (size_t g = 0; g < nf; g++)
						assert_int_equal(c->values[g], g == f ? v : 0);
					assert_int_equal(c->unnamed_nonzero, 0);
				}
				unload(&l);
			}
		}
	}
}

/* Spot checks of the table against the layout, transcribed here. */
static void test_table_positions(void **state)
{
	static const struct {
		unsigned e;
		const char *key;
		unsigned w, lo, n, shift;
	} want[] = {
		{ 0, "kernel_xy_size", 0, 2, 4, 0 },       { 0, "kernel_z_size", 0, 6, 14, 0 },
		{ 0, "in_image_x_size", 1, 6, 13, 0 },     { 0, "in_image_y_size", 1, 19, 13, 0 },
		{ 0, "relu", 2, 24, 1, 0 },                { 0, "out_image_x_size", 3, 6, 13, 0 },
		{ 0, "out_image_z_size", 4, 0, 14, 0 },    { 0, "kernel_address", 5, 0, 26, 6 },
		{ 0, "in_image_address", 6, 0, 32, 0 },    { 0, "out_image_address", 7, 0, 32, 0 },
		{ 0, "kernel_y_size", 8, 12, 4, 0 },       { 0, "in_image_data_type_bit_2", 15, 20, 1, 0 },
		{ 0, "in_image_x_stride", 16, 0, 16, 0 },  { 0, "coef_zero_point", 22, 0, 8, 0 },
		{ 0, "depthwise", 22, 17, 1, 0 },          { 1, "in_image_z_size", 1, 16, 16, 0 },
		{ 1, "in_image_base_address", 10, 0, 32, 0 }, { 1, "in_image_data_type", 12, 18, 3, 0 },
		{ 1, "out_image_base_address", 13, 0, 32, 0 }, { 1, "out_loop_3_count", 19, 16, 16, 0 },
		{ 1, "out_image_circular_buf_end_address_plus_1", 28, 0, 32, 6 },
		{ 1, "alu_output_post_multiplier", 30, 8, 15, 0 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int f = nbg_command_field_index(want[i].e, want[i].key);
		const nbg_cmd_field *t = nbg_command_fields(want[i].e, NULL);
		if (f < 0)
			fail_msg("no field %s", want[i].key);
		assert_int_equal(t[f].word, want[i].w);
		assert_int_equal(t[f].bit_lo, want[i].lo);
		assert_int_equal(t[f].bit_count, want[i].n);
		assert_int_equal(t[f].shift, want[i].shift);
		assert_true(t[f].evidence && t[f].evidence[0] == 'O');
	}
	assert_int_equal(nbg_command_field_index(0, "no_such_field"), -1);
	assert_null(nbg_command_fields(7, NULL));
	assert_string_equal(nbg_command_data_type_name(0), "uint8");
	assert_string_equal(nbg_command_data_type_name(1), "fp16");
	assert_string_equal(nbg_command_data_type_name(2), "int8");
	assert_null(nbg_command_data_type_name(3));
}

/* doc/commands.md's field tables are the library's tables, row by row. */
static void test_doc_tables(void **state)
{
	size_t n = 0, nf[2];
	char *doc = (char *)fx_read_file(NBG_SOURCE_DIR "/doc/commands.md", &n), *p, *end;
	const nbg_cmd_field *t[2] = { nbg_command_fields(0, &nf[0]), nbg_command_fields(1, &nf[1]) };
	size_t row[2] = { 0, 0 };
	int e = -1;

	assert_non_null(doc);
	doc = realloc(doc, n + 1);
	doc[n] = '\0';
	p = strstr(doc, "<!-- BEGIN command fields -->");
	end = strstr(doc, "<!-- END command fields -->");
	assert_true(p && end && p < end);
	while ((p = strchr(p, '\n')) && p < end) {
		char key[96], stored[16], ev[16];
		unsigned w, lo, hi, width;
		p++;
		if (!strncmp(p, "### NN", 6))
			e = 0;
		else if (!strncmp(p, "### TP", 6))
			e = 1;
		if (strncmp(p, "| `", 3) || e < 0)
			continue;
		if (sscanf(p, "| `%95[^`]` | %u | %u-%u | %u | %15[^|]| %*[^|]| %15[^ |]", key, &w, &lo,
			   &hi, &width, stored, ev) != 7) {
			if (sscanf(p, "| `%95[^`]` | %u | %u | %u | %15[^|]| %*[^|]| %15[^ |]", key, &w,
				   &lo, &width, stored, ev) != 6)
				fail_msg("unreadable row: %.80s", p);
			hi = lo;
		}
		if (row[e] >= nf[e])
			fail_msg("doc has more %s rows than the table", e ? "TP" : "NN");
		{
			const nbg_cmd_field *f = &t[e][row[e]++];
			assert_string_equal(key, f->key);
			assert_int_equal(w, f->word);
			assert_int_equal(lo, f->bit_lo);
			assert_int_equal(hi, f->bit_lo + f->bit_count - 1u);
			assert_int_equal(width, f->bit_count);
			assert_int_equal(!strncmp(stored, ">> 6", 4), f->shift == 6);
			assert_string_equal(ev, f->evidence);
		}
	}
	assert_int_equal(row[0], nf[0]);
	assert_int_equal(row[1], nf[1]);
	free(doc);
}

/* A synthesized NN operation: its patches resolve, its shapes summarize. */
static void test_synth_operation(void **state)
{
	uint8_t nn[192] = { 0 }, tp[192] = { 0 };
	loaded l = { 0 };
	const nbg_cmd_op *op;

	put_bits(nn, 0, 2, 4, 3);      /* 3x3 */
	put_bits(nn, 0, 6, 14, 3);     /* kernel z 3 */
	put_bits(nn, 1, 6, 13, 128);   /* in 128 x 128 */
	put_bits(nn, 1, 19, 13, 128);
	put_bits(nn, 3, 6, 13, 126);   /* out 126 x 126 x 16 */
	put_bits(nn, 3, 19, 13, 126);
	put_bits(nn, 4, 0, 14, 16);
	put_bits(nn, 2, 24, 1, 1);     /* relu */
	put_bits(nn, 1, 2, 2, 0);      /* int16: code 4 = bit 2 */
	put_bits(nn, 15, 20, 1, 1);
	l.buf = synth(nn, tp, &l.size);
	load_buf(&l);
	/* The fixture's NN operation (record 1) names command 0; its patch 2 is
	 * a COMMAND patch at byte 24 (in_image_address) from INPUT 0. */
	assert_int_equal(nbg_commands_op_count(l.c), 1);
	op = nbg_commands_op_at(l.c, 0);
	assert_int_equal(op->operation, 1);
	assert_int_equal(op->command, 0);
	assert_int_equal(op->input_record, 0);
	assert_true(op->in_ref.patched);
	assert_int_equal(op->in_ref.source_type, NBG_GRAPH_SRC_INPUT);
	assert_int_equal(op->in[2], 3);
	assert_int_equal(op->in_type, 4);
	assert_int_equal(op->out[2], 16);
	{
		char d[160];
		assert_string_equal(nbg_command_describe(op, d, sizeof(d)),
				    "conv 3x3x3 -> 16, 128x128 -> 126x126, relu, int16 -> uint8");
	}
	/* input 0 is [1,128,128,3] INT16: dims and data type hold */
	{
		const nbg_graph_relation *d = nbg_commands_relation_at(l.c, IN_DIMS);
		const nbg_graph_relation *t = nbg_commands_relation_at(l.c, IN_TYPE);
		assert_int_equal(d->checked, 1);
		assert_int_equal(d->held, 1);
		assert_int_equal(t->checked, 1);
		assert_int_equal(t->held, 1);
	}
	unload(&l);
}

/* Command sizes the layout cannot hold are findings, never failures. */
static void test_synth_bad_sizes(void **state)
{
	fx_spec *s = fx_default();
	uint8_t buf[200] = { 0 };
	loaded l = { 0 };

	fx_set(s, 7, buf, 200, 0, 100); /* 100-byte commands: below 104 */
	l.buf = fx_build(s, &l.size);
	load_buf(&l);
	assert_false(nbg_commands_section(l.c, NBG_CMD_NN)->decoded);
	assert_int_equal(nbg_commands_count(l.c, NBG_CMD_NN), 0);
	assert_int_equal(nbg_commands_op_count(l.c), 0);
	assert_string_equal(nbg_commands_finding_at(l.c, 0)->id, "command-size-unusable");
	unload(&l);
	fx_set(s, 7, buf, 200, 0, 192); /* 192 + 8 trailing bytes */
	l.buf = fx_build(s, &l.size);
	load_buf(&l);
	assert_int_equal(nbg_commands_count(l.c, NBG_CMD_NN), 1);
	assert_int_equal(nbg_commands_section(l.c, NBG_CMD_NN)->trailing_bytes, 8);
	assert_string_equal(nbg_commands_finding_at(l.c, 0)->id,
			    "command-section-size-not-multiple");
	unload(&l);
	fx_free(s);
	{
		nbg_commands *c = (nbg_commands *)1;
		nbg_error err;
		assert_int_equal(nbg_commands_decode(NULL, NULL, &c, &err), NBG_E_INVALID_ARGUMENT);
		assert_null(c);
		assert_null(nbg_commands_op_at(NULL, 0));
		assert_int_equal(nbg_commands_count(NULL, 0), 0);
	}
}

/* ------------------------------------------------------------- CLI */

static void test_cli(void **state)
{
	fx_run_result r;

	NEED_CORPUS();
	r = fx_run_nbg("", "inspect --commands '%s'", V1_DIR "/1000e_88_emotion_88_A311D.nb");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "  NN 0: conv 3x3x1 -> 8, 64x64 -> 62x62, relu, uint8  [op 1"));
	assert_non_null(strstr(r.out, "  NN 1: conv 3x3x8 -> 8, 62x62 -> 60x60, relu, uint8  [op 2"));
	assert_non_null(strstr(r.out, "] <- input 0\n"));
	assert_non_null(strstr(r.out, "kernel-address-differs"));
	fx_run_free(&r);

	r = fx_run_nbg("", "inspect --json --commands '%s'", V2_DIR "/face_detector_nbg_int16.nb");
	assert_int_equal(r.status, 0);
	{
		json_error_t je;
		json_t *doc = json_loads(r.out, 0, &je), *c, *ops, *op0;
		assert_non_null(doc);
		c = json_object_get(doc, "commands");
		ops = json_object_get(c, "operations");
		assert_true(json_array_size(ops) > 3);
		op0 = json_array_get(ops, 0);
		assert_string_equal(json_string_value(json_object_get(op0, "input_data_type")),
				    "int16");
		assert_int_equal(json_integer_value(json_array_get(json_object_get(op0, "kernel"), 0)),
				 5);
		assert_int_equal(json_integer_value(json_object_get(
					 json_object_get(json_array_get(json_object_get(
						 json_object_get(c, "nn"), "commands"), 0), "fields"),
					 "kernel_xy_size")), 5);
		assert_int_equal(json_array_size(json_object_get(c, "relations")), NREL);
		json_decref(doc);
	}
	fx_run_free(&r);

	/* The default report ends with the network's layers: the first is the
	 * TFLite source's first convolution (../shared/models: 5x5, 3 -> 24
	 * channels, 128x128 -> 64x64, ReLU), named from its command and shown
	 * with its whole tensors. */
	r = fx_run_nbg("", "inspect '%s'", V2_DIR "/face_detector_nbg_int16.nb");
	assert_int_equal(r.status, 0);
	const char *l0 = strstr(r.out, "\n  [   0] ");
	assert_non_null(l0);
	assert_non_null(strstr(l0, "Conv2D 5x5"));
	assert_true(strstr(l0, "128x128x3 -> 64x64x24 ") < strchr(l0 + 1, '\n'));
	assert_true(strstr(l0, "relu") < strchr(l0 + 1, '\n'));
	fx_run_free(&r);

	r = fx_run_nbg("", "graph '%s'", V1_DIR "/1000e_88_emotion_88_A311D.nb");
	assert_int_equal(r.status, 0);
	assert_true(!strncmp(r.out, "digraph nbg {\n", 14));
	/* 64x64x1 uint8 in; NN 0 writes 62x62x8 (30752 bytes) for NN 1 */
	assert_non_null(strstr(r.out, "  in0 -> L0 [label=\"4096 B\"];\n"));
	assert_non_null(strstr(r.out, "  L0 -> L1 [label=\"30 KiB\"];\n"));
	fx_run_free(&r);

}

static void test_cli_usage(void **state)
{
	fx_run_result r = fx_run_nbg("", "graph");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = fx_run_nbg("", "graph /nonexistent.nb --dot /tmp/x.dot");
	assert_int_equal(r.status, 3);
	fx_run_free(&r);
}

/* ------------------------------------------------- data flow, synthesized */

/* One NN operation of a synthesized network: a uint8 convolution reading
 * `in` bytes per row... written as the v2 command fields (strides in bytes,
 * y stride the slice's bytes), its input and output memories. */
typedef struct net_op {
	uint32_t in_x, in_y, kz, out_x, out_y, out_z, pool; /* pool: 1 max 2x2 */
	uint32_t in_src;            /* patch sources (enum nbg_graph_source) and indices */
	int32_t in_ix;
	uint32_t out_src;
	int32_t out_ix;
	uint32_t in_at, out_at;     /* byte offsets in those memories */
	uint32_t out_row, out_slice;/* output strides (0: out_x, out_x * out_y) */
	uint32_t ring_at, ring_size;/* output ring buffer [at, at + size) (size 0: none) */
} net_op;

/* A v2 file from the fixture whose graph is these NN operations, one per
 * layer, after the INIT operation; each has its input, output (and ring
 * end) patched as given. */
static uint8_t *synth_net(const net_op *ops, size_t n, size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *lay = calloc(n, 76), *opr = calloc(n + 1, 32), *pat = calloc(3 * n + 1, 28);
	uint8_t *nn = calloc(n, 192), *b;
	uint32_t np = 1;

	assert_true(lay && opr && pat && nn);
	fx_put32(opr, 0xFFFF);                 /* INIT: one patch (VIP SRAM) */
	fx_put32(opr + 4, 0xFFFF);
	fx_put32(opr + 8, 0xFFFFFFFF);
	fx_put32(opr + 20, 1);
	fx_put32(pat, 1);
	fx_put32(pat + 4, 20);
	fx_put32(pat + 8, 8);
	fx_put32(pat + 12, (uint32_t)-1);
	for (size_t i = 0; i < n; i++) {
		const net_op *o = &ops[i];
		uint8_t *c = nn + 192 * i, *r = opr + 32 * (i + 1);
		uint32_t row = o->out_row ? o->out_row : o->out_x;
		uint32_t slice = o->out_slice ? o->out_slice : row * o->out_y;
		uint32_t first = np;
		snprintf((char *)lay + 76 * i, 64, "layer_%zu", i);
		fx_put32(lay + 76 * i + 68, 1);
		put_bits(c, 0, 2, 4, 1);           /* 1x1 kernel */
		put_bits(c, 0, 6, 14, o->kz);
		put_bits(c, 0, 27, 2, o->pool);
		put_bits(c, 1, 6, 13, o->in_x);
		put_bits(c, 1, 19, 13, o->in_y);
		put_bits(c, 3, 6, 13, o->out_x);
		put_bits(c, 3, 19, 13, o->out_y);
		put_bits(c, 4, 0, 14, o->out_z);
		put_bits(c, 16, 0, 16, o->in_x);   /* input row and slice strides */
		put_bits(c, 16, 16, 16, o->in_x * o->in_y);
		put_bits(c, 17, 0, 16, row);
		put_bits(c, 8, 16, 16, slice);
		if (o->ring_size) {
			put_bits(c, 18, 0, 26, o->ring_size >> 6);
			put_bits(c, 19, 0, 26, o->ring_at + o->ring_size);
		}
		/* COMMAND patches: in_image_address (byte 24), out (28), ring end (76) */
		uint8_t *p = pat + 28 * np;
		fx_put32(p, 1), fx_put32(p + 4, 24), fx_put32(p + 8, o->in_src);
		fx_put32(p + 12, (uint32_t)o->in_ix), fx_put32(p + 16, o->in_at);
		p += 28, np++;
		fx_put32(p, 1), fx_put32(p + 4, 28), fx_put32(p + 8, o->out_src);
		fx_put32(p + 12, (uint32_t)o->out_ix), fx_put32(p + 16, o->out_at);
		np++;
		if (o->ring_size) {
			p += 28;
			fx_put32(p, 1), fx_put32(p + 4, 76), fx_put32(p + 8, o->out_src);
			fx_put32(p + 12, (uint32_t)-1), fx_put32(p + 20, 1);
			np++;
		}
		fx_put32(r, 2);                    /* NN, command i, layer i */
		fx_put32(r + 4, (uint32_t)i);
		fx_put32(r + 8, (uint32_t)i);
		fx_put32(r + 16, first);
		fx_put32(r + 20, np - first);
		fx_put32(r + 28, (uint32_t)i);
	}
	fx_set(s, 3, lay, 76 * n, 0, 76);
	fx_set(s, 4, opr, 32 * (n + 1), 0, 32);
	fx_set(s, 10, pat, 28 * np, 0, 28);
	fx_set(s, 7, nn, 192 * n, 0, 192);
	fx_remove(s, 9);                         /* no SH operation */
	/* NETWORK_INFO: layer and operation counts */
	fx_put32(fx_find(s, 35)->data + 0x48, (uint32_t)n);
	fx_put32(fx_find(s, 35)->data + 0x4c, (uint32_t)n);
	fx_put32(fx_find(s, 35)->data + 0x50, (uint32_t)(n + 1 + 3));
	b = fx_build(s, size);
	fx_free(s);
	free(lay), free(opr), free(pat), free(nn);
	return b;
}

/* The bytes operation `from` passes to `to` (0: no edge). */
static uint64_t flow(const nbg_commands *c, size_t from, size_t to)
{
	for (size_t i = 0; i < nbg_commands_edge_count(c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(c, i);
		if (e->kind == NBG_CMD_EDGE_OP && e->from == from && e->to == to)
			return e->bytes;
	}
	return 0;
}

/* A reused buffer: the producer of a byte is the last operation that wrote
 * it, not the first one that wrote the address.  Operation records: 1..5. */
static void test_dataflow_last_writer(void **state)
{
	enum { VIP = NBG_GRAPH_SRC_VIP_SRAM, IN = NBG_GRAPH_SRC_INPUT, OUT = NBG_GRAPH_SRC_OUTPUT };
	const net_op ops[] = {
		/* 1: input 0 (128x128, 3 int16 planes, read as 96 bytes x 128 rows)
		 * -> VIP+0, 64x64x8 uint8 = 32768 bytes */
		{ 96, 128, 3, 64, 64, 8, 0, IN, 0, VIP, -1, 0, 0, 0, 0, 0, 0 },
		/* 2: VIP+0 (64x64x8) -> VIP+0x10000, 32x32x8 = 8192 */
		{ 64, 64, 8, 32, 32, 8, 0, VIP, -1, VIP, -1, 0, 0x10000, 0, 0, 0, 0 },
		/* 3: VIP+0x10000 -> VIP+0 again, 32x32x8: overwrites [0, 8192) */
		{ 32, 32, 8, 32, 32, 8, 0, VIP, -1, VIP, -1, 0x10000, 0, 0, 0, 0, 0 },
		/* 4: reads VIP+0 64x64x8: [0, 8192) from 3, [8192, 32768) from 1 */
		{ 64, 64, 8, 16, 16, 1, 0, VIP, -1, OUT, 1, 0, 0, 0, 0, 0, 0 },
	};
	loaded l = { 0 };

	l.buf = synth_net(ops, 4, &l.size);
	load_buf(&l);
	assert_int_equal(flow(l.c, 1, 2), 32768);
	assert_int_equal(flow(l.c, 2, 3), 8192);
	assert_int_equal(flow(l.c, 3, 4), 8192);
	assert_int_equal(flow(l.c, 1, 4), 32768 - 8192);
	assert_int_equal(flow(l.c, 2, 4), 0);     /* 2 wrote elsewhere */
	assert_int_equal(nbg_commands_op_of(l.c, 4)->producer, 3); /* its first byte */
	assert_int_equal(nbg_commands_op_of(l.c, 4)->unexplained_bytes, 0);
	/* every output read: the relation holds */
	assert_int_equal(nbg_commands_relation_at(l.c, DEAD)->held,
			 nbg_commands_relation_at(l.c, DEAD)->checked);
	unload(&l);
}

/* A pooled output is the smaller image the next operation reads; an output
 * row stride too narrow for the stated width is a strided output; a ring
 * buffer folds what runs past its end back to its start. */
static void test_dataflow_shapes(void **state)
{
	enum { VIP = NBG_GRAPH_SRC_VIP_SRAM, IN = NBG_GRAPH_SRC_INPUT, OUT = NBG_GRAPH_SRC_OUTPUT };
	const net_op ops[] = {
		/* 1: 64x64 conv with a 2x2 max pool: writes 32x32x4 (row 32) */
		{ 96, 128, 3, 64, 64, 4, 1, IN, 0, VIP, -1, 0, 0, 32, 1024, 0, 0 },
		/* 2: reads 32x32x4 from VIP+0; states 32x32 out with row stride 16:
		 * strided, writes 16x16x4 = 1024 bytes into a 512-byte ring at
		 * 0x20000: both halves fold onto [0x20000, 0x20200) */
		{ 32, 32, 4, 32, 32, 4, 0, VIP, -1, VIP, -1, 0, 0x20000, 16, 256, 0x20000, 512 },
		/* 3: reads the ring's 512 bytes */
		{ 16, 8, 4, 8, 8, 1, 0, VIP, -1, OUT, 1, 0x20000, 0, 0, 0, 0, 0 },
	};
	loaded l = { 0 };
	const nbg_cmd_op *o1, *o2;

	l.buf = synth_net(ops, 3, &l.size);
	load_buf(&l);
	o1 = nbg_commands_op_of(l.c, 1);
	assert_int_equal(o1->out_conv[0], 64);
	assert_int_equal(o1->out[0], 32);
	assert_int_equal(o1->out[1], 32);
	assert_int_equal(o1->out_subsample, 2);
	assert_false(o1->out_subsample_inferred);
	assert_int_equal(o1->write_bytes, 32 * 32 * 4);
	assert_int_equal(flow(l.c, 1, 2), 32 * 32 * 4);
	assert_int_equal(nbg_commands_op_of(l.c, 2)->unexplained_bytes, 0);
	o2 = nbg_commands_op_of(l.c, 2);
	assert_int_equal(o2->out[0], 16);
	assert_int_equal(o2->out_subsample, 2);
	assert_true(o2->out_subsample_inferred);
	assert_int_equal(o2->write_bytes, 512); /* 1024 bytes folded into 512 */
	assert_int_equal(flow(l.c, 2, 3), 512);
	assert_int_equal(nbg_commands_op_of(l.c, 3)->unexplained_bytes, 0);
	unload(&l);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataflow_last_writer),
		cmocka_unit_test(test_dataflow_shapes),
		cmocka_unit_test(test_table_positions),
		cmocka_unit_test(test_doc_tables),
		cmocka_unit_test(test_each_field_alone),
		cmocka_unit_test(test_synth_operation),
		cmocka_unit_test(test_synth_bad_sizes),
		cmocka_unit_test(test_cli_usage),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_emotion),
		cmocka_unit_test(test_face_detector),
		cmocka_unit_test(test_corpus_relations),
		cmocka_unit_test(test_cli),
	};
	return tc_main(argc, argv, "test_commands", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}

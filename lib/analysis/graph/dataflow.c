/*
 * dataflow.c - which operation's bytes each operation reads: every
 * operation of the file, in execution order, reads and writes byte ranges
 * of the memories its patches name (INPUT and OUTPUT records, the memory
 * pool, AXI and VIP SRAM), and the producer of a byte read is the last
 * operation that wrote it before.  On-chip buffers are reused all the time,
 * so only this rule, applied byte for byte, gives the real data flow.
 *
 * The ranges (footprints) come from the decoded commands: an NN command's
 * image sizes, row and slice strides, pooling; a TP command's image, window
 * and output loops.  An SH or SW operation is not decoded: what its patches
 * reference is known, not how much it reads or writes, so its reads extend
 * over the tensor the last writer's layer left there and its write over
 * what the next reader of that address reads (or the output record).
 * doc/commands.md ("Data flow") gives every rule and its evidence.
 *
 * Work and memory are bounded: a footprint holds at most DF_MAX_IV ranges
 * (past that, its bounding range, marked approximate), all footprints at
 * most DF_BUDGET_IV, and the interval maps stop being updated once
 * DF_WORK entries have been moved (the rest is reported, not guessed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_check.h"
#include "analysis/graph/graph_internal.h"
#include "analysis/graph/uniforms.h"
#include "common/grow.h"

#define DF_MAX_IV 65536u         /* ranges in one footprint */
#define DF_BUDGET_IV (1u << 22)  /* ranges in all footprints together */
#define DF_WORK ((uint64_t)1 << 31) /* interval-map entries moved, in all */
#define DF_MAX_READS 3u          /* footprints an operation reads */
#define DF_SPACES 4096u          /* memories tracked */

/* A byte range [lo, hi). */
typedef struct iv {
	uint64_t lo, hi;
} iv;

/* What one operation reads or writes in one memory. */
typedef struct fp {
	uint32_t space;          /* index into df.spaces */
	unsigned basis;          /* enum nbg_cmd_edge_basis, for reads */
	size_t n;
	iv *v;                   /* sorted, disjoint */
	int approx;
} fp;

typedef struct df_op {
	int by_reference;        /* a decoded command whose sizes are 0: its reads and
				  * write come from its addresses, as for SH / SW */
	int64_t ref_space[2];    /* then: the memories of its input and output */
	size_t reads;
	fp read[DF_MAX_READS];
	int has_write;
	fp write;
} df_op;

/* A memory: who wrote each byte last (sorted, disjoint entries). */
typedef struct space {
	uint64_t key;            /* source type << 32 | index (0 for the shared ones) */
	size_t n, cap;
	iv *v;
	int64_t *w;              /* writer: operation index, or -1 - input record */
} space;

typedef struct df {
	nbg_commands *c;
	const nbg_model *m;
	const nbg_graph *g;
	int rows;                /* NN strides as row counts (v1 before 0x10020) */
	size_t spaces_n;
	space *spaces;
	df_op *ops;              /* one per OPERATIONS record */
	uint64_t budget;         /* footprint ranges left */
	uint64_t work;           /* map entries moved so far */
	int stopped;             /* DF_WORK reached */
	uint64_t *consumed;      /* per operation: bytes of its writes later read */
	uint64_t *flow;          /* scratch: bytes per writer for one reader */
	size_t *touched, touched_n;
	uint64_t input_flow[64]; /* per input record (the first 64) */
	uint64_t *in_at, *out_at; /* per decoded operation: where its images are read
				   * and written (its addresses, or as place_tile puts them) */
} df;

/* ------------------------------------------------------------ memories */

static int shared_space(uint32_t st)
{
	return st == NBG_GRAPH_SRC_MEMORY_POOL || st == NBG_GRAPH_SRC_AXI_SRAM ||
	       st == NBG_GRAPH_SRC_VIP_SRAM;
}

/* Memories data flows through; -1 for what is not one (commands, coefficients). */
static int tracked(uint32_t st)
{
	return shared_space(st) || st == NBG_GRAPH_SRC_INPUT || st == NBG_GRAPH_SRC_OUTPUT ||
	       st == NBG_GRAPH_SRC_MISC_DYNA_INPUT || st == NBG_GRAPH_SRC_MISC_DYNA_OUTPUT;
}

/* Constant data of the file: read, never written by an operation. */
static int file_backed(const space *s)
{
	return (uint32_t)(s->key >> 32) == NBG_GRAPH_SRC_MISC_DYNA_INPUT;
}

static int64_t space_of(df *d, uint32_t st, int32_t index)
{
	uint64_t key = (uint64_t)st << 32 | (shared_space(st) ? 0u : (uint32_t)index);

	if (!tracked(st))
		return -1;
	for (size_t i = 0; i < d->spaces_n; i++)
		if (d->spaces[i].key == key)
			return (int64_t)i;
	if (d->spaces_n == DF_SPACES)
		return -1;
	d->spaces[d->spaces_n].key = key;
	return (int64_t)d->spaces_n++;
}

/* ---------------------------------------------------------- footprints */

static int cmp_iv(const void *a, const void *b)
{
	const iv *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges f's ranges. */
static void normalize(fp *f)
{
	size_t o = 0;

	size_t sorted = 1;
	while (sorted < f->n && f->v[sorted - 1].lo <= f->v[sorted].lo)
		sorted++;
	if (sorted < f->n) /* the loops' ranges often come in order already */
		qsort(f->v, f->n, sizeof(*f->v), cmp_iv);
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].lo >= f->v[i].hi)
			continue;
		if (o && f->v[i].lo <= f->v[o - 1].hi) {
			if (f->v[i].hi > f->v[o - 1].hi)
				f->v[o - 1].hi = f->v[i].hi;
		} else {
			f->v[o++] = f->v[i];
		}
	}
	f->n = o;
}

/* Room for `want` ranges in f, within the budgets; 0 when it would not fit
 * (the caller then keeps the bounding range). */
static int reserve(df *d, fp *f, uint64_t want)
{
	if (want > DF_MAX_IV || want > d->budget)
		return 0;
	f->v = calloc((size_t)(want ? want : 1), sizeof(iv));
	if (!f->v) {
		d->c->oom = 1;
		return 0;
	}
	d->budget -= want;
	return 1;
}

static void bounding(df *d, fp *f, uint64_t lo, uint64_t hi)
{
	free(f->v);
	f->v = calloc(1, sizeof(iv));
	if (!f->v) {
		d->c->oom = 1;
		f->n = 0;
		return;
	}
	f->v[0].lo = lo;
	f->v[0].hi = hi > lo ? hi : lo + 1;
	f->n = 1;
	f->approx = 1;
}

static void free_fp(fp *f)
{
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

/* A block of `rows` rows of `rowbytes` bytes `rp` apart, in `slices`
 * slices `sp` apart, from `base`: its ranges, rows or slices that touch
 * merged into one.  Sizes come from 13- to 32-bit fields: nothing overflows
 * 64 bits, but the extent is capped at 2^48 (far past any memory). */
static void rect(df *d, fp *f, uint64_t base, uint64_t rows, uint64_t rowbytes, uint64_t rp,
		 uint64_t slices, uint64_t sp)
{
	uint64_t per, pieces, ext;

	f->n = 0;
	if (!rows || !rowbytes || !slices)
		return;
	if (rp < rowbytes)
		rp = rowbytes; /* rows never overlap themselves */
	per = rowbytes == rp ? 1 : rows;          /* ranges per slice */
	ext = (rows - 1) * rp + rowbytes;         /* bytes one slice spans */
	if (slices > 1 && sp < ext)
		sp = ext;
	pieces = per == 1 && sp == ext ? 1 : per * slices;
	if (ext > ((uint64_t)1 << 48) || (slices - 1) > ((uint64_t)1 << 48) / (sp ? sp : 1)) {
		bounding(d, f, base, base + ((uint64_t)1 << 48));
		return;
	}
	if (!reserve(d, f, pieces)) {
		bounding(d, f, base, base + (slices - 1) * sp + ext);
		return;
	}
	if (pieces == 1) {
		f->v[0].lo = base;
		f->v[0].hi = base + (slices - 1) * sp + ext;
		f->n = 1;
		return;
	}
	for (uint64_t z = 0; z < slices; z++)
		for (uint64_t y = 0; y < per; y++) {
			uint64_t lo = base + z * sp + y * rp;
			f->v[f->n].lo = lo;
			f->v[f->n].hi = lo + (per == 1 ? ext : rowbytes);
			f->n++;
		}
	normalize(f);
}

/* -------------------------------------------------------- ring buffers */

/* A circular buffer an image is read or written through: its byte range
 * [end - size, end) in the image's memory, by the rule the CPU backend
 * reads too (nbg_command_ring, commands_lib.h).  On every file the image's
 * start lies in the range so computed (doc/commands.md).  0 when the
 * command sets no buffer. */
static int ring_of(const df *d, const nbg_cmd_op *op, int size_fi, int end_fi,
		   uint64_t *lo, uint64_t *hi)
{
	const nbg_cmd *cmd = &d->c->cmds[op->engine][op->command];
	uint64_t size;
	nbg_cmd_ref end;

	if (!nbg_command_ring(d->g, op->operation, cmd->values[size_fi],
			      nbg_command_fields(op->engine, NULL)[end_fi].word, cmd->values[end_fi], &size,
			      &end) ||
	    end.offset < size)
		return 0;
	*lo = end.offset - size;
	*hi = end.offset;
	return 1;
}

/* Folds f's ranges that run past a ring buffer's end back to its start. */
static void wrap(df *d, fp *f, uint64_t lo, uint64_t hi)
{
	uint64_t size = hi - lo, extra = 0;
	iv *v;
	size_t n = 0;

	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].hi > hi)
			extra += (f->v[i].hi - f->v[i].lo) / size + 2;
	if (!extra)
		return;
	if (!f->n || extra > DF_MAX_IV || extra > d->budget ||
	    !(v = calloc(f->n + extra, sizeof(*v)))) {
		if (f->n)
			bounding(d, f, lo, hi); /* the whole buffer */
		return;
	}
	d->budget -= extra;
	for (size_t i = 0; i < f->n; i++) {
		uint64_t a = f->v[i].lo, b = f->v[i].hi;
		if (b - a >= size) {
			v[n].lo = lo;
			v[n++].hi = hi;
			continue;
		}
		if (a >= hi) {
			uint64_t k = (a - lo) / size;
			a -= k * size;
			b -= k * size;
		}
		if (b > hi) {
			v[n].lo = a;
			v[n++].hi = hi;
			v[n].lo = lo;
			v[n++].hi = lo + (b - hi);
		} else {
			v[n].lo = a;
			v[n++].hi = b;
		}
	}
	free(f->v);
	f->v = v;
	f->n = n;
	normalize(f);
}

/* ---------------------------------------------------------- NN commands */

static uint64_t nn_value(const nbg_commands *c, const nbg_cmd_op *op, enum nbg_nn_fid f)
{
	return nbg_cmd_nn(&c->cmds[op->engine][op->command], f);
}

static uint64_t tp_value(const nbg_commands *c, const nbg_cmd_op *op, enum nbg_tp_fid f)
{
	return nbg_cmd_tp(&c->cmds[op->engine][op->command], f);
}

/* Bytes per element of an NT command (the data-type bits of NT commands
 * are left 0): word 5 (the kernel_address field, which no patch relocates
 * in an NT command) where the input row stride is the width times it (in
 * every NT command of the corpus: 2, and 192, 194 or 104 where whole rows
 * move, doc/cpu-backend.md "int16 data"); else the input row stride over
 * the width where that is 1, 2 or 4; else the data type's. */
static uint64_t nt_element(const nbg_commands *c, const nbg_cmd_op *op)
{
	uint64_t x = nn_value(c, op, NBG_NNF_IN_IMAGE_X_SIZE), s = nn_value(c, op, NBG_NNF_IN_IMAGE_X_STRIDE);
	uint64_t w5 = nn_value(c, op, NBG_NNF_KERNEL_ADDRESS);
	if (x && w5 && s == x * w5)
		return w5;
	if (x && s % x == 0 && (s / x == 1 || s / x == 2 || s / x == 4))
		return s / x;
	return nbg_command_type_bytes(op->in_type);
}

/* The slice stride of an image: rows x row stride (v1 before 0x10020,
 * whose y stride counts rows), or the y stride itself (bytes). */
static uint64_t slice_stride(const df *d, uint64_t xs, uint64_t ys)
{
	return d->rows ? xs * ys : ys;
}

static void nn_footprints(df *d, nbg_cmd_op *op, df_op *o, int64_t in_sp, int64_t out_sp)
{
	nbg_commands *c = d->c;
	uint64_t kz = op->kernel[2], ein, eout, rp, sp;
	uint64_t ox = op->out_conv[0], oy = op->out_conv[1], oz = op->out_conv[2];

	if (op->type == NBG_GRAPH_OP_NT) {
		ein = eout = nt_element(c, op);
		kz = 1;
	} else {
		ein = nbg_command_type_bytes(op->in_type);
		eout = nbg_command_type_bytes(op->out_type);
	}
	if (in_sp >= 0) {
		fp *f = &o->read[o->reads++];
		uint64_t xs = nn_value(c, op, NBG_NNF_IN_IMAGE_X_STRIDE), ys = nn_value(c, op, NBG_NNF_IN_IMAGE_Y_STRIDE);
		uint64_t z = op->type == NBG_GRAPH_OP_NT ? (oz ? oz : 1) /* a slice per output slice */
			   : nn_value(c, op, NBG_NNF_DEPTHWISE) ? oz : (kz ? kz : 1);
		uint64_t lo, hi;
		f->space = (uint32_t)in_sp;
		rect(d, f, d->in_at[op - c->ops], op->in[1], op->in[0] * ein, xs, z,
		     slice_stride(d, xs, ys));
		if (ring_of(d, op, NBG_NNF_IN_IMAGE_CIRCULAR_BUF_SIZE,
			    NBG_NNF_IN_IMAGE_CIRCULAR_BUF_END_ADDR_PLUS_1, &lo, &hi))
			wrap(d, f, lo, hi);
	}
	op->in_row_stride = nn_value(c, op, NBG_NNF_IN_IMAGE_X_STRIDE);
	op->in_slice_stride = slice_stride(d, op->in_row_stride, nn_value(c, op, NBG_NNF_IN_IMAGE_Y_STRIDE));
	op->in_element_bytes = (uint32_t)ein;
	rp = nn_value(c, op, NBG_NNF_OUT_IMAGE_X_STRIDE);
	sp = slice_stride(d, rp, nn_value(c, op, NBG_NNF_OUT_IMAGE_Y_STRIDE));
	/* Pooling (2x2 or 3x3, stride 2) makes a smaller image; where no field
	 * says so but a row of the stated width cannot fit the output row
	 * stride, the output is subsampled by the smallest power of two that
	 * fits (a strided convolution). */
	uint64_t s = 1, wx = ox, hy = oy;
	if (op->pooling && op->type == NBG_GRAPH_OP_NN) {
		uint64_t k = op->pooling_size;
		s = 2;
		wx = ox >= k ? (ox - k) / 2 + 1 : 1;
		hy = oy >= k ? (oy - k) / 2 + 1 : 1;
	}
	while (op->type != NBG_GRAPH_OP_NT && rp && wx * eout > rp && s < 16) {
		s *= 2;
		wx = (ox + s - 1) / s;
		hy = (oy + s - 1) / s;
		op->out_subsample_inferred = 1;
	}
	op->out_subsample = (uint32_t)s;
	op->out_row_stride = rp;
	op->out_slice_stride = sp;
	op->out_element_bytes = (uint32_t)eout;
	op->out[0] = (uint32_t)wx;
	op->out[1] = (uint32_t)hy;
	op->out[2] = (uint32_t)oz;
	if (out_sp >= 0) {
		uint64_t lo, hi;
		o->has_write = 1;
		o->write.space = (uint32_t)out_sp;
		rect(d, &o->write, d->out_at[op - c->ops], hy, wx * eout, rp, oz ? oz : 1, sp);
		if (ring_of(d, op, NBG_NNF_OUT_IMAGE_CIRCULAR_BUF_SIZE,
			    NBG_NNF_OUT_IMAGE_CIRCULAR_BUF_END_ADDR_PLUS_1, &lo, &hi))
			wrap(d, &o->write, lo, hi);
	}
}

/* ----------------------------------------------------------- row tiles */

/* The signed 4-bit in_image_y_offset of an NN command. */
static int64_t nn_y_offset(const nbg_commands *c, const nbg_cmd_op *op)
{
	uint64_t yo = nn_value(c, op, NBG_NNF_IN_IMAGE_Y_OFFSET) | nn_value(c, op, NBG_NNF_IN_IMAGE_Y_OFFSET_BIT_3) << 3;
	return yo >= 8 ? (int64_t)yo - 16 : (int64_t)yo;
}

/* The previous tile of NN operation k's layer: the last NN operation of
 * the same layer before it (at most 64 records back) with the same kind,
 * memories and row strides, both of whose addresses lie before k's; -1
 * when there is none. */
static int64_t previous_tile(const df *d, size_t k)
{
	const nbg_commands *c = d->c;
	const nbg_cmd_op *op = &c->ops[k];

	for (size_t j = op->operation, seen = 0; j-- > 0 && seen < 64; seen++) {
		int64_t qk = j < c->op_of_count ? c->op_of[j] : -1;
		const nbg_cmd_op *q = qk >= 0 ? &c->ops[qk] : NULL;
		if (!q || q->engine != NBG_CMD_NN || q->layer_id != op->layer_id)
			continue;
		if (strcmp(q->kind, op->kind) || q->in_ref.source_type != op->in_ref.source_type ||
		    q->in_ref.index != op->in_ref.index || q->out_ref.source_type != op->out_ref.source_type ||
		    q->out_ref.index != op->out_ref.index || !q->in_ref.patched || !q->out_ref.patched ||
		    nn_value(c, q, NBG_NNF_IN_IMAGE_X_STRIDE) != nn_value(c, op, NBG_NNF_IN_IMAGE_X_STRIDE) ||
		    nn_value(c, q, NBG_NNF_OUT_IMAGE_X_STRIDE) != nn_value(c, op, NBG_NNF_OUT_IMAGE_X_STRIDE) ||
		    op->in_ref.offset <= q->in_ref.offset || op->out_ref.offset <= q->out_ref.offset)
			return -1;
		return qk;
	}
	return -1;
}

static uint32_t scale32(uint64_t k)
{
	return k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
}

/*
 * Row tiles: an NN operation computing rows of a layer after its previous
 * tile (previous_tile) reads as many input rows further on (its address
 * step over the row stride, plus the change of in_image_y_offset) as it
 * writes output rows further on (likewise), times the subsampling (the
 * previous tile's: pooling or stride).  Where one image's address step is
 * exactly k > 1 times what the other image's step implies, and that image
 * lies in a shared memory (not an I/O record, which may be interleaved),
 * it is placed by the other image's step from the previous tile's placed
 * address (doc/commands.md, "Data flow").  Every other tile keeps its
 * steps.  Called in operation order, after the previous tiles' footprints.
 */
static void place_tile(df *d, size_t k)
{
	nbg_commands *c = d->c;
	nbg_cmd_op *op = &c->ops[k];
	int64_t qk = op->engine == NBG_CMD_NN && op->in_ref.patched && op->out_ref.patched
			     ? previous_tile(d, k) : -1;

	if (qk < 0)
		return;
	const nbg_cmd_op *q = &c->ops[qk];
	uint64_t ir = nn_value(c, op, NBG_NNF_IN_IMAGE_X_STRIDE), orow = nn_value(c, op, NBG_NNF_OUT_IMAGE_X_STRIDE);
	uint64_t din = op->in_ref.offset - q->in_ref.offset, dout = op->out_ref.offset - q->out_ref.offset;
	int64_t sub = q->out_subsample ? q->out_subsample : 1, dy = nn_y_offset(c, q) - nn_y_offset(c, op);
	d->in_at[k] = d->in_at[qk] + din;
	d->out_at[k] = d->out_at[qk] + dout;
	if (!ir || !orow || din % ir || dout % orow || din >> 40 || dout >> 40)
		return;
	int64_t in_rows = (int64_t)(dout / orow) * sub + dy; /* the input step the output implies */
	int64_t out_rows = (int64_t)(din / ir) - dy;           /* sub times the output step the input implies */
	if (in_rows > 0 && (uint64_t)in_rows * ir != din && din % ((uint64_t)in_rows * ir) == 0 &&
	    shared_space(op->in_ref.source_type)) {
		op->tile_placed = 1;
		op->tile_scale = scale32(din / ((uint64_t)in_rows * ir));
		d->in_at[k] = d->in_at[qk] + (uint64_t)in_rows * ir;
		op->tile_offset = d->in_at[k];
	} else if (out_rows > 0 && out_rows % sub == 0 && (uint64_t)(out_rows / sub) * orow != dout &&
		   dout % ((uint64_t)(out_rows / sub) * orow) == 0 && shared_space(op->out_ref.source_type)) {
		op->tile_placed = 2;
		op->tile_scale = scale32(dout / ((uint64_t)(out_rows / sub) * orow));
		d->out_at[k] = d->out_at[qk] + (uint64_t)(out_rows / sub) * orow;
		op->tile_offset = d->out_at[k];
	}
}

/* ---------------------------------------------------------- TP commands */

static int64_t signed16(uint64_t v)
{
	return v >= 0x8000 ? (int64_t)v - 0x10000 : (int64_t)v;
}

/* The addresses (in elements) of explicit output loops: every sum of
 * count_i values of inc_i, as ranges of whole elements. */
static int loop_ranges(df *d, fp *f, const uint64_t cnt[6], const uint64_t inc[6],
		       uint64_t base, uint64_t e, uint64_t slices, uint64_t zinc)
{
	uint64_t total = slices, run = 1;
	int runner = -1;

	for (int i = 0; i < 6; i++) {
		if (!cnt[i])
			return 0;
		total *= cnt[i];
		if (total > DF_MAX_IV * (uint64_t)64)
			return 0;
	}
	/* a loop of increment 1 makes runs of elements */
	for (int i = 0; i < 6; i++)
		if (inc[i] == 1 && cnt[i] > run) {
			run = cnt[i];
			runner = i;
		}
	if (!reserve(d, f, total / run))
		return 0;
	for (uint64_t j = 0; j < total / run; j++) {
		uint64_t rest = j, a = 0;
		for (int i = 0; i < 6; i++) {
			if (i == runner)
				continue;
			a += (rest % cnt[i]) * inc[i];
			rest /= cnt[i];
		}
		a += (rest % slices) * zinc;
		f->v[f->n].lo = base + a * e;
		f->v[f->n].hi = base + (a + run) * e;
		f->n++;
	}
	normalize(f);
	return 1;
}

static void tp_footprints(df *d, nbg_cmd_op *op, df_op *o, int64_t in_sp, int64_t out_sp)
{
	nbg_commands *c = d->c;
	uint64_t ein = nbg_command_type_bytes(op->in_type), eout = nbg_command_type_bytes(op->out_type);
	uint64_t ix = op->in[0], iy = op->in[1], iz = op->in[2] ? op->in[2] : 1;
	uint64_t cnt[6], inc[6], zinc = tp_value(c, op, NBG_TPF_OUT_LOOP_6_INC);
	int image = 0;

	if (in_sp >= 0) {
		fp *f = &o->read[o->reads++];
		f->space = (uint32_t)in_sp;
		uint64_t lo, hi;
		rect(d, f, op->in_ref.offset, iy, ix * ein, tp_value(c, op, NBG_TPF_IN_IMAGE_STRIDE) * ein, iz,
		     tp_value(c, op, NBG_TPF_IN_IMAGE_SLICE) * ein);
		if (ring_of(d, op, NBG_TPF_IN_IMAGE_CIRCULAR_BUF_SIZE,
			    NBG_TPF_IN_IMAGE_CIRCULAR_BUF_END_ADDRESS_PLUS_1, &lo, &hi))
			wrap(d, f, lo, hi);
	}
	op->in_row_stride = tp_value(c, op, NBG_TPF_IN_IMAGE_STRIDE) * ein;
	op->in_slice_stride = tp_value(c, op, NBG_TPF_IN_IMAGE_SLICE) * ein;
	op->in_element_bytes = (uint32_t)ein;
	op->out_element_bytes = (uint32_t)eout;
	for (int i = 0; i < 6; i++) {
		cnt[i] = tp_value(c, op, nbg_tp_loop_counts[i]);
		inc[i] = tp_value(c, op, nbg_tp_loop_incs[i]);
		image |= cnt[i] == 0;
	}
	if (out_sp < 0)
		return;
	o->has_write = 1;
	o->write.space = (uint32_t)out_sp;
	if (image) {
		/* Loops 1 and 2 follow the image inside each input tile: the output
		 * is an image of the window's size (halved by pooling), rows loop 2's
		 * increment apart, slices loop 6's. */
		int64_t ww = signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_X_END)) -
			     signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_X_START)) + 1;
		int64_t wh = signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_Y_END)) -
			     signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_Y_START)) + 1;
		uint64_t rp = inc[2], w, h;
		if (ww < 1)
			ww = 1;
		if (wh < 1)
			wh = 1;
		w = (uint64_t)ww;
		h = (uint64_t)wh;
		if (!strcmp(op->kind, "pool")) {
			w = w / 2 ? w / 2 : 1;
			h = h / 2 ? h / 2 : 1;
		}
		if (rp && w > rp)
			w = rp;
		if (rp && zinc && h > zinc / rp)
			h = zinc / rp ? zinc / rp : 1;
		op->out[0] = (uint32_t)w;
		op->out[1] = (uint32_t)h;
		op->out[2] = (uint32_t)iz;
		op->out_row_stride = rp * eout;
		op->out_slice_stride = zinc * eout;
		rect(d, &o->write, op->out_ref.offset, h, w * eout, rp * eout, iz, zinc * eout);
		return;
	}
	/* Explicit loops: one output element per input element of the window
	 * (padding included), per input slice unless they cover the slices too. */
	int64_t ww = signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_X_END)) -
		     signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_X_START)) + 1;
	int64_t wh = signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_Y_END)) -
		     signed16(tp_value(c, op, NBG_TPF_IN_WINDOW_Y_START)) + 1;
	uint64_t n = 1;
	for (int i = 0; i < 6; i++)
		n *= cnt[i];
	uint64_t slices = iz > 1 && (n == ix * iy || (ww > 0 && wh > 0 &&
						     n == (uint64_t)ww * (uint64_t)wh)) ? iz : 1;
	if (!loop_ranges(d, &o->write, cnt, inc, op->out_ref.offset, eout, slices, zinc)) {
		uint64_t ext = 1;
		for (int i = 0; i < 6; i++)
			if (cnt[i] > 1)
				ext += (cnt[i] - 1) * inc[i];
		ext += (slices - 1) * zinc;
		bounding(d, &o->write, op->out_ref.offset, op->out_ref.offset + ext * eout);
	}
}

/* ------------------------------------------------------------ references */

/* The word a STATE patch of operation o targets, in its state buffer (the
 * state table's entry state_id); 0 when it cannot be read. */
static uint32_t state_word(const df *d, const nbg_graph_operation *o, const nbg_graph_patch *p)
{
	const nbg_graph_table *t = d->g->sum.state_table >= 0
					   ? nbg_graph_table_at(d->g, (size_t)d->g->sum.state_table) : NULL;
	const nbg_graph_table_entry *e;
	uint64_t at;

	if (!t || o->state_id >= t->entry_count)
		return 0;
	e = nbg_graph_table_entry_at(d->g, (size_t)d->g->sum.state_table, o->state_id);
	if (!e->in_bounds || (uint64_t)p->dest_offset + 4 > e->size)
		return 0;
	at = t->data_offset + e->offset + p->dest_offset;
	return at + 4 <= d->m->file_size ? le32(d->m->data + at) : 0;
}

/* The memory references of an operation that is not a decoded NN / TP one:
 * its STATE patches (the value at the patched state word) and COMMAND
 * patches, in patch order. */
static void other_refs(df *d, size_t i, nbg_cmd_other *x)
{
	const nbg_graph_operation *o = nbg_graph_operation_at(d->g, i);
	uint64_t end = (uint64_t)o->patch_index + o->patch_count;

	x->operation = i;
	x->type = o->type;
	x->layer_id = o->layer_id;
	if (end > d->g->sum.patch_count)
		end = d->g->sum.patch_count;
	for (uint64_t k = o->patch_index; k < end && x->ref_count < NBG_CMD_MAX_REFS; k++) {
		const nbg_graph_patch *p = nbg_graph_patch_at(d->g, (size_t)k);
		uint64_t v;
		if (!tracked(p->source_type) || p->transformed || p->type > 1)
			continue;
		v = p->type == 0 ? state_word(d, o, p) : 0;
		x->refs[x->ref_count].source_type = p->source_type;
		x->refs[x->ref_count].index = p->index;
		x->refs[x->ref_count].offset = nbg_command_patched_offset(d->m->version,
									p->src_offset, v);
		x->refs[x->ref_count].patch = (size_t)k;
		x->ref_count++;
	}
	/* The last reference into memory an operation can write (not constant
	 * data, MISC_DYNA_INPUT) is what the operation writes (on every file
	 * where an INPUT record is referenced it comes first, an OUTPUT record
	 * last; a shader's scalar constants follow its images); an operation
	 * whose last such reference is an input only reads. */
	size_t w = x->ref_count;
	while (w > 0 && x->refs[w - 1].source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT)
		w--;
	x->writes = w > 0 && x->refs[w - 1].source_type != NBG_GRAPH_SRC_INPUT;
	x->written = x->writes ? w - 1 : 0;
}

/* 192-byte NN-engine commands: the second operand's address word, and the
 * word holding its row stride (bits 15..0) and y stride (bits 31..16), as
 * word 16 holds the input's (doc/commands.md, "Data flow"). */
#define DF_OPERAND_WORD 34u
#define DF_OPERAND_STRIDES 32u
#define DF_WIDE_COMMAND_WORDS 48u

/* The second operand at `a` of a 192-byte NN-engine command that states its
 * strides: the output's rows and slices at those strides; 0 otherwise. */
static int operand_image(df *d, const nbg_cmd_op *op, const nbg_cmd *cmd, uint32_t w, uint64_t a, fp *f)
{
	uint32_t s;

	if (op->engine != NBG_CMD_NN || cmd->word_count != DF_WIDE_COMMAND_WORDS || w != DF_OPERAND_WORD ||
	    !(s = cmd->words[DF_OPERAND_STRIDES]))
		return 0;
	rect(d, f, a, op->out[1], (uint64_t)op->out[0] * op->out_element_bytes, s & 0xffff,
	     op->out[2] ? op->out[2] : 1, slice_stride(d, s & 0xffff, s >> 16));
	return f->n > 0;
}

/* A decoded operation's second operands: non-transformed COMMAND patches on
 * words the layout names no address field for (v8 commands add an
 * elementwise operand there, "...AddLayer"), read in the shape of what the
 * operation writes: at the operand's own strides where the command states
 * them (operand_image), else at the output's. */
static void operand_refs(df *d, const nbg_cmd_op *op, df_op *o)
{
	const nbg_graph_operation *go = nbg_graph_operation_at(d->g, op->operation);
	const nbg_cmd *cmd = &d->c->cmds[op->engine][op->command];
	size_t nf;
	const nbg_cmd_field *t = nbg_command_fields(op->engine, &nf);
	uint64_t end = (uint64_t)go->patch_index + go->patch_count;

	if (end > d->g->sum.patch_count)
		end = d->g->sum.patch_count;
	for (uint64_t k = go->patch_index; k < end && o->reads < DF_MAX_READS; k++) {
		const nbg_graph_patch *p = nbg_graph_patch_at(d->g, (size_t)k);
		uint32_t w = p->dest_offset / 4;
		int named = 0;
		int64_t sp;
		if (p->type != 1 || p->transformed || p->dest_offset % 4 || w >= cmd->word_count ||
		    !o->has_write)
			continue;
		for (size_t j = 0; j < nf; j++)
			named |= t[j].word == w && t[j].role == NBG_CMDF_ADDRESS;
		if (named || (sp = space_of(d, p->source_type, p->index)) < 0)
			continue;
		uint64_t a = nbg_command_patched_offset(d->m->version, p->src_offset, cmd->words[w]);
		fp *f = &o->read[o->reads];
		f->space = (uint32_t)sp;
		f->basis = NBG_CMD_EDGE_OPERAND;
		if (operand_image(d, op, cmd, w, a, f)) {
			o->reads++;
			continue;
		}
		free_fp(f);
		if (!reserve(d, f, o->write.n))
			continue;
		f->approx = o->write.approx;
		for (size_t j = 0; j < o->write.n; j++) {
			f->v[j].lo = o->write.v[j].lo - d->out_at[op - d->c->ops] + a;
			f->v[j].hi = o->write.v[j].hi - d->out_at[op - d->c->ops] + a;
		}
		f->n = o->write.n;
		o->reads++;
	}
}

/* --------------------------------------------------------- interval maps */

/* The first entry of s that ends after `at`. */
static size_t first_after(const space *s, uint64_t at)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->v[mid].hi <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Makes `w` the writer of every byte of f in its memory (one merge pass). */
static void assign(df *d, const fp *f, int64_t w)
{
	space *s = &d->spaces[f->space];
	size_t cap = s->n + 2 * f->n + 1, n = 0, i = 0;
	iv *v;
	int64_t *ww;

	if (d->stopped || !f->n)
		return;
	d->work += s->n + f->n;
	if (d->work > DF_WORK) {
		d->stopped = 1;
		return;
	}
	v = malloc(cap * sizeof(*v));
	ww = malloc(cap * sizeof(*ww));
	if (!v || !ww) {
		free(v);
		free(ww);
		d->c->oom = 1;
		return;
	}
	for (size_t j = 0; j <= f->n; j++) {
		uint64_t lo = j < f->n ? f->v[j].lo : UINT64_MAX;
		uint64_t hi = j < f->n ? f->v[j].hi : UINT64_MAX;
		/* entries before lo, the part of one across lo cut */
		while (i < s->n && s->v[i].lo < lo) {
			v[n].lo = s->v[i].lo;
			v[n].hi = s->v[i].hi < lo ? s->v[i].hi : lo;
			ww[n++] = s->w[i];
			if (s->v[i].hi > lo)
				break;
			i++;
		}
		if (j == f->n)
			break;
		v[n].lo = lo;
		v[n].hi = hi;
		ww[n++] = w;
		/* entries inside [lo, hi) vanish; one across hi keeps its tail */
		while (i < s->n && s->v[i].hi <= hi)
			i++;
		if (i < s->n && s->v[i].lo < hi) {
			s->v[i].lo = hi; /* its head is overwritten */
		}
	}
	free(s->v);
	free(s->w);
	s->v = v;
	s->w = ww;
	s->n = n;
	s->cap = cap;
}

/* ---------------------------------------------------------- the flow */

static void flow_add(df *d, int64_t w, uint64_t bytes)
{
	if (w < 0) {
		if ((uint64_t)(-1 - w) < 64)
			d->input_flow[-1 - w] += bytes;
		return;
	}
	if (!d->flow[w])
		d->touched[d->touched_n++] = (size_t)w;
	d->flow[w] += bytes;
}

/* Reads f: who wrote each byte last.  Returns the bytes no one wrote; the
 * writer of the first byte into *first (-2: none). */
static uint64_t read_fp(df *d, const fp *f, int64_t *first)
{
	const space *s = &d->spaces[f->space];
	uint64_t missing = 0;

	for (size_t j = 0; j < f->n; j++) {
		uint64_t lo = f->v[j].lo, hi = f->v[j].hi, at = lo;
		for (size_t i = first_after(s, lo); i < s->n && s->v[i].lo < hi; i++) {
			uint64_t a = s->v[i].lo > lo ? s->v[i].lo : lo;
			uint64_t b = s->v[i].hi < hi ? s->v[i].hi : hi;
			if (a > at)
				missing += a - at;
			if (*first == -2)
				*first = s->w[i];
			flow_add(d, s->w[i], b - a);
			at = b;
		}
		if (hi > at)
			missing += hi - at;
	}
	return file_backed(s) ? 0 : missing;
}

static uint32_t layer_of(const df *d, int64_t w)
{
	return w >= 0 ? nbg_graph_operation_at(d->g, (size_t)w)->layer_id : UINT32_MAX;
}

/* An SH / SW read at `a`: the tensor the last writer's layer left there
 * (the adjoining ranges of writers of that layer), else the byte alone. */
static void reference_read(df *d, uint32_t sp, uint64_t a, fp *f)
{
	const space *s = &d->spaces[sp];
	size_t i = first_after(s, a);
	uint64_t hi = a + 1;

	if (i < s->n && s->v[i].lo <= a) {
		uint32_t layer = layer_of(d, s->w[i]);
		hi = s->v[i].hi;
		while (i + 1 < s->n && s->v[i + 1].lo == s->v[i].hi && layer != UINT32_MAX &&
		       layer_of(d, s->w[i + 1]) == layer)
			hi = s->v[++i].hi;
	}
	f->space = sp;
	f->basis = NBG_CMD_EDGE_REFERENCE;
	if (reserve(d, f, 1)) {
		f->v[0].lo = a;
		f->v[0].hi = hi;
		f->n = 1;
	}
}

/* An SH / SW write at `a`: as far as the first later decoded operation
 * that reads `a` reads on from it; 0 when none does before another writes
 * it. */
static uint64_t reference_extent(const df *d, size_t from, uint32_t sp, uint64_t a)
{
	for (size_t k = from + 1; k < d->g->sum.operation_count; k++) {
		const df_op *o = &d->ops[k];
		for (size_t r = 0; r < o->reads; r++) {
			const fp *f = &o->read[r];
			size_t lo = 0, hi = f->n;
			if (f->space != sp)
				continue;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (f->v[mid].hi <= a)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < f->n && f->v[lo].lo <= a) {
				uint64_t end = f->v[lo].hi;
				while (lo + 1 < f->n && f->v[lo + 1].lo == end)
					end = f->v[++lo].hi;
				return end - a;
			}
		}
		if (o->has_write && o->write.space == sp)
			for (size_t j = 0; j < o->write.n; j++)
				if (o->write.v[j].lo <= a && a < o->write.v[j].hi)
					return 0;
	}
	return 0;
}

static nbg_code add_edge(nbg_commands *c, unsigned kind, size_t from, size_t to,
			 uint64_t bytes, unsigned basis)
{
	void *p = nbg_grow(c->edges, &c->edge_cap, c->edge_count + 1, sizeof(*c->edges), 64);

	if (!p)
		return NBG_E_OUT_OF_MEMORY;
	c->edges = p;
	c->edges[c->edge_count].kind = kind;
	c->edges[c->edge_count].from = from;
	c->edges[c->edge_count].to = to;
	c->edges[c->edge_count].bytes = bytes;
	c->edges[c->edge_count].basis = basis;
	c->edge_count++;
	return NBG_OK;
}

/* The reads of operation i, then its edges; the unexplained bytes and the
 * first byte's writer. */
static nbg_code flow_in(df *d, size_t i, const df_op *o, int other, uint64_t *read,
			uint64_t *missing, int64_t *first)
{
	unsigned basis = other ? NBG_CMD_EDGE_REFERENCE : NBG_CMD_EDGE_FOOTPRINT;

	*first = -2;
	for (size_t r = 0; r < o->reads; r++) {
		const fp *f = &o->read[r];
		for (size_t j = 0; j < f->n; j++)
			*read += f->v[j].hi - f->v[j].lo;
		if (f->basis > basis)
			basis = f->basis;
		*missing += read_fp(d, f, first);
	}
	for (size_t t = 0; t < d->touched_n; t++) {
		size_t w = d->touched[t];
		unsigned b = basis;
		if (d->c->op_of[w] < 0)
			b = NBG_CMD_EDGE_REFERENCE;
		if (add_edge(d->c, NBG_CMD_EDGE_OP, w, i, d->flow[w], b) != NBG_OK)
			return NBG_E_OUT_OF_MEMORY;
		d->consumed[w] += d->flow[w];
		d->flow[w] = 0;
	}
	d->touched_n = 0;
	for (size_t k = 0; k < 64 && k < d->m->input_count; k++)
		if (d->input_flow[k]) {
			if (add_edge(d->c, NBG_CMD_EDGE_INPUT, k, i, d->input_flow[k], basis) != NBG_OK)
				return NBG_E_OUT_OF_MEMORY;
			d->input_flow[k] = 0;
		}
	return NBG_OK;
}

/* The write of operation i; an edge to the output record it writes. */
static nbg_code flow_out(df *d, size_t i, const fp *f, unsigned basis, uint64_t *written)
{
	const space *s = &d->spaces[f->space];
	uint64_t bytes = 0;

	for (size_t j = 0; j < f->n; j++)
		bytes += f->v[j].hi - f->v[j].lo;
	*written = bytes;
	d->c->written[i] = bytes;
	assign(d, f, (int64_t)i);
	if ((uint32_t)(s->key >> 32) == NBG_GRAPH_SRC_OUTPUT && bytes &&
	    (uint32_t)s->key < d->m->output_count)
		return add_edge(d->c, NBG_CMD_EDGE_OUTPUT, i, (uint32_t)s->key, bytes, basis);
	return NBG_OK;
}

/* ------------------------------------------------------------ the run */

static void df_free(df *d, size_t n)
{
	if (d->ops)
		for (size_t i = 0; i < n; i++) {
			for (size_t r = 0; r < d->ops[i].reads; r++)
				free_fp(&d->ops[i].read[r]);
			free_fp(&d->ops[i].write);
		}
	if (d->spaces)
		for (size_t i = 0; i < d->spaces_n; i++) {
			free(d->spaces[i].v);
			free(d->spaces[i].w);
		}
	free(d->spaces);
	free(d->ops);
	free(d->consumed);
	free(d->flow);
	free(d->touched);
	free(d->in_at);
	free(d->out_at);
}

/* Every input record's bytes, written by the record itself (-1 - k). */
static void seed_inputs(df *d)
{
	for (size_t k = 0; k < d->m->input_count && k < 64; k++) {
		const nbg_io *io = nbg_model_input_at(d->m, k);
		int64_t sp = space_of(d, NBG_GRAPH_SRC_INPUT, (int32_t)k);
		fp f = { 0 };
		iv v = { 0, io->byte_size_known && io->byte_size ? io->byte_size
							     : (uint64_t)1 << 62 };
		if (sp < 0)
			continue;
		f.space = (uint32_t)sp;
		f.n = 1;
		f.v = &v;
		assign(d, &f, -1 - (int64_t)k);
	}
}

static void decoded_footprints(df *d)
{
	for (size_t k = 0; k < d->c->op_count; k++) {
		nbg_cmd_op *op = &d->c->ops[k];
		df_op *o = &d->ops[op->operation];
		int64_t in_sp = op->in_ref.patched
					? space_of(d, op->in_ref.source_type, op->in_ref.index) : -1;
		int64_t out_sp = op->out_ref.patched
					 ? space_of(d, op->out_ref.source_type, op->out_ref.index) : -1;
		uint64_t lo, hi;
		place_tile(d, k);
		if (op->engine == NBG_CMD_NN) {
			nn_footprints(d, op, o, in_sp, out_sp);
		} else {
			tp_footprints(d, op, o, in_sp, out_sp);
			if (o->has_write && ring_of(d, op, NBG_TPF_OUT_IMAGE_CIRCULAR_BUF_SIZE,
						    NBG_TPF_OUT_IMAGE_CIRCULAR_BUF_END_ADDRESS_PLUS_1,
						    &lo, &hi))
				wrap(d, &o->write, lo, hi);
		}
		operand_refs(d, op, o);
		for (size_t r = 0; r < o->reads; r++)
			op->footprint_approximate |= o->read[r].approx;
		op->footprint_approximate |= o->write.approx;
		/* A size the layout's field cannot hold reads as 0 (an NT command of
		 * 65536 rows in a 13-bit field): no footprint, so the addresses
		 * alone, as for an operation that is not decoded. */
		if ((in_sp >= 0 && (!o->reads || !o->read[0].n)) ||
		    (out_sp >= 0 && !o->write.n)) {
			for (size_t r = 0; r < o->reads; r++)
				free_fp(&o->read[r]);
			free_fp(&o->write);
			o->reads = 0;
			o->has_write = 0;
			o->by_reference = 1;
			o->ref_space[0] = in_sp;
			o->ref_space[1] = out_sp;
			op->footprint_approximate = 1;
		}
	}
}

/* An SH operation's reference as the image its uniforms describe there: the
 * descriptor whose address word the reference's STATE patch relocates
 * (uniforms.h), as rows of width x element bytes, row stride apart, in
 * depth slices slice stride apart; 0 when there is none. */
static int ref_image(df *d, const nbg_sh_uniforms *u, nbg_cmd_other *x, size_t r, uint32_t sp, fp *f)
{
	const nbg_graph_patch *p = nbg_graph_patch_at(d->g, x->refs[r].patch);
	nbg_sh_image im;

	if (!u || p->type != 0 || !nbg_sh_image_at(u, nbg_sh_uniform_at(u, p->dest_offset), &im))
		return 0;
	f->space = sp;
	f->basis = NBG_CMD_EDGE_REFERENCE;
	rect(d, f, x->refs[r].offset, im.height, (uint64_t)im.width * im.element, im.row, im.depth, im.slice);
	x->image_bytes[r] = 0;
	for (size_t j = 0; j < f->n; j++)
		x->image_bytes[r] += f->v[j].hi - f->v[j].lo;
	return f->n > 0;
}

/* The write of operation i at reference w: its image (ref_image), else
 * the output record's size, else what the next reader of that address
 * reads (reference_extent). */
static nbg_code other_write(df *d, size_t i, df_op *o, const nbg_sh_uniforms *u, nbg_cmd_other *x)
{
	const nbg_cmd_mem_ref *w = &x->refs[x->written];
	int64_t sp = space_of(d, w->source_type, w->index);
	uint64_t ext = 0, written = 0;

	if (sp < 0)
		return NBG_OK;
	if (ref_image(d, u, x, x->written, (uint32_t)sp, &o->write)) {
		o->has_write = 1;
		x->write_bytes = x->image_bytes[x->written];
		return flow_out(d, i, &o->write, NBG_CMD_EDGE_REFERENCE, &written);
	}
	free_fp(&o->write);
	if (w->source_type == NBG_GRAPH_SRC_OUTPUT && w->index >= 0 && (size_t)w->index < d->m->output_count)
		ext = nbg_model_output_at(d->m, (size_t)w->index)->byte_size;
	else
		ext = reference_extent(d, i, (uint32_t)sp, w->offset);
	x->write_bytes = ext;
	if (!reserve(d, &o->write, 1))
		return NBG_OK;
	o->has_write = 1;
	o->write.space = (uint32_t)sp;
	o->write.v[0].lo = w->offset;
	o->write.v[0].hi = w->offset + (ext ? ext : 1);
	o->write.n = 1;
	return flow_out(d, i, &o->write, NBG_CMD_EDGE_REFERENCE, &written);
}

/* Operation i, not a decoded NN / TP one: its references as reads and a
 * write; kept in c->others when it references memory.  An SH operation's
 * reference reads or writes the image its uniforms describe there; other
 * references are extended as reference_read and other_write say. */
static nbg_code other_op(df *d, size_t i, df_op *o)
{
	nbg_commands *c = d->c;
	nbg_cmd_other x = { 0 };
	nbg_sh_uniforms uniforms, *u = NULL;
	uint64_t read = 0, missing = 0;
	int64_t first;
	nbg_code rc;

	other_refs(d, i, &x);
	if (!x.ref_count)
		return NBG_OK;
	if (x.type == NBG_GRAPH_OP_SH &&
	    nbg_sh_uniforms_load(d->m, d->g, i, &uniforms, NULL) == NBG_SHU_OK)
		u = &uniforms;
	for (size_t r = 0; r < x.ref_count && o->reads < DF_MAX_READS; r++) {
		if (x.writes && r == x.written)
			continue;
		int64_t sp = space_of(d, x.refs[r].source_type, x.refs[r].index);
		if (sp < 0)
			continue;
		fp *f = &o->read[o->reads++];
		if (!ref_image(d, u, &x, r, (uint32_t)sp, f)) {
			free_fp(f);
			reference_read(d, (uint32_t)sp, x.refs[r].offset, f);
		}
	}
	if ((rc = flow_in(d, i, o, 1, &read, &missing, &first)) != NBG_OK)
		return rc;
	if (x.writes && (rc = other_write(d, i, o, u, &x)) != NBG_OK)
		return rc;
	void *p = nbg_grow(c->others, &c->other_cap, c->other_count + 1, sizeof(*c->others), 16);
	if (!p)
		return NBG_E_OUT_OF_MEMORY;
	c->others = p;
	c->others[c->other_count++] = x;
	return NBG_OK;
}

/* Operations whose written bytes no later operation reads and no output
 * record holds, for the relation of commands_check.c. */
static nbg_code dead_ends(df *d)
{
	nbg_commands *c = d->c;

	for (size_t i = 0; i < d->g->sum.operation_count; i++) {
		const df_op *o = &d->ops[i];
		const space *s;
		if (!o->has_write || !o->write.n)
			continue;
		s = &d->spaces[o->write.space];
		if ((uint32_t)(s->key >> 32) == NBG_GRAPH_SRC_OUTPUT ||
		    (uint32_t)(s->key >> 32) == NBG_GRAPH_SRC_MISC_DYNA_OUTPUT)
			continue;
		void *p = nbg_grow(c->writers, &c->writer_cap, c->writer_count + 1,
				   sizeof(*c->writers), 64);
		if (!p)
			return NBG_E_OUT_OF_MEMORY;
		c->writers = p;
		c->writers[c->writer_count].operation = i;
		c->writers[c->writer_count].bytes = o->write.v[o->write.n - 1].hi - o->write.v[0].lo;
		c->writers[c->writer_count].consumed = d->consumed[i];
		c->writer_count++;
	}
	return NBG_OK;
}

nbg_code nbg_command_dataflow(nbg_commands *c, const nbg_model *m, const nbg_graph *g)
{
	size_t n = g->sum.operation_count;
	df d = { 0 };
	nbg_code rc = NBG_OK;

	d.c = c;
	d.m = m;
	d.g = g;
	d.rows = m->family == 1 && m->version < 0x10020u;
	d.budget = DF_BUDGET_IV;
	if (!n)
		return NBG_OK;
	d.spaces = calloc(DF_SPACES, sizeof(*d.spaces));
	d.ops = calloc(n, sizeof(*d.ops));
	d.consumed = calloc(n, sizeof(*d.consumed));
	d.flow = calloc(n, sizeof(*d.flow));
	d.touched = calloc(n, sizeof(*d.touched));
	c->op_of = malloc(n * sizeof(*c->op_of));
	c->written = calloc(n, sizeof(*c->written));
	d.in_at = calloc(c->op_count ? c->op_count : 1, sizeof(*d.in_at));
	d.out_at = calloc(c->op_count ? c->op_count : 1, sizeof(*d.out_at));
	if (!d.spaces || !d.ops || !d.consumed || !d.flow || !d.touched || !c->op_of ||
	    !c->written || !d.in_at || !d.out_at) {
		df_free(&d, n);
		return NBG_E_OUT_OF_MEMORY;
	}
	c->op_of_count = n;
	for (size_t i = 0; i < n; i++)
		c->op_of[i] = -1;
	for (size_t k = 0; k < c->op_count; k++) {
		if (c->ops[k].operation < n)
			c->op_of[c->ops[k].operation] = (int64_t)k;
		d.in_at[k] = c->ops[k].in_ref.offset;
		d.out_at[k] = c->ops[k].out_ref.offset;
	}
	seed_inputs(&d);
	decoded_footprints(&d);
	for (size_t i = 0; i < n && rc == NBG_OK; i++) {
		df_op *o = &d.ops[i];
		if (c->op_of[i] < 0) {
			uint32_t t = nbg_graph_operation_at(g, i)->type;
			if (t != NBG_GRAPH_OP_INIT && t != NBG_GRAPH_OP_END && t != NBG_GRAPH_OP_NONE)
				rc = other_op(&d, i, o);
			continue;
		}
		nbg_cmd_op *op = &c->ops[c->op_of[i]];
		int64_t first;
		unsigned basis = NBG_CMD_EDGE_FOOTPRINT;
		if (o->by_reference) {
			basis = NBG_CMD_EDGE_REFERENCE;
			if (o->ref_space[0] >= 0)
				reference_read(&d, (uint32_t)o->ref_space[0], op->in_ref.offset,
					       &o->read[o->reads++]);
		}
		rc = flow_in(&d, i, o, o->by_reference, &op->read_bytes, &op->unexplained_bytes,
			     &first);
		op->producer = first >= 0 ? first : -1;
		if (rc == NBG_OK && o->by_reference && o->ref_space[1] >= 0 &&
		    reserve(&d, &o->write, 1)) {
			uint64_t ext = reference_extent(&d, i, (uint32_t)o->ref_space[1],
							op->out_ref.offset);
			o->has_write = 1;
			o->write.space = (uint32_t)o->ref_space[1];
			o->write.v[0].lo = op->out_ref.offset;
			o->write.v[0].hi = op->out_ref.offset + (ext ? ext : 1);
			o->write.n = 1;
		}
		if (rc == NBG_OK && o->has_write)
			rc = flow_out(&d, i, &o->write, basis, &op->write_bytes);
	}
	if (rc == NBG_OK)
		rc = dead_ends(&d);
	c->dataflow_stopped = d.stopped;
	df_free(&d, n);
	if (c->oom)
		rc = NBG_E_OUT_OF_MEMORY;
	return rc;
}

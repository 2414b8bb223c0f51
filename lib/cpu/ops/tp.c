/*
 * ops/tp.c - the CPU backend's TP (tensor processor) operations: which
 * ones it executes, with every field they read, and their run.
 *
 * A TP command walks its input window in tiles (doc/cpu-backend.md, "TP
 * operations", names each rule's evidence):
 *   for z in 0..in_image_z_size-1, for each tile row, for each tile, for
 *   each output row of the tile, for each output of that row: one element,
 *   a pixel (a copy; a lookup-table activation writes the value its table
 *   gives the pixel, ops/lut.c) or the maximum of a pooling window (max
 *   pooling);
 * tiles start at the window's start and advance by in_tile_x/y_inc; a
 * pixel outside the image [0, in_image_x/y_size) is the border.  Each
 * element is written at out_image_base_address + sum d[i] * out_loop_i_inc,
 * where d[0..5] is a mixed-radix counter with out_loop_i_count digits (0:
 * 65536) and d[6] counts the carries out of d[5].  After an element the
 * counter advances by one, except: at the end of a tile with
 * out_loop_3_reset (out_loop_2_reset) set, d[0..3] (d[0..2]) return to 0
 * and d[4] (d[3]) advances; else at the end of an output row with
 * out_loop_1_reset set, d[0..1] return to 0 and d[2] advances.
 * The planner runs the counter once without data to find the extreme
 * addresses, so every byte the run touches is checked before it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/conv_fast.h"
#include "cpu/ops/tp.h"
#include "cpu/ring.h"

/* Work above this (the walk's loop turns and the pixels its elements read)
 * is refused: the planner walks the loops once, so this bounds the plan as
 * well as the run (the corpus's largest TP operation reads under 2^23). */
#define TP_MAX_WORK (1ull << 24)

/* From this much work a walk whose slices write distinct elements cuts
 * them across the plan's threads (some 15 microseconds of a core on the
 * runs of tp_span: a worker watching for the next operation takes it at
 * once; a model's operations follow one another within microseconds). */
#define TP_THREAD_WORK (1ull << 15)

/* The output loop counter (the offset from out_base it points to). */
typedef struct tp_counter {
	uint32_t d[6];
	uint64_t off;
} tp_counter;

static void tp_carry(const cpu_tp *t, tp_counter *c, int from)
{
	for (int i = from; i < 6; i++) {
		uint64_t n = t->count[i] ? t->count[i] : 65536;
		c->off += t->inc[i];
		if (++c->d[i] < n)
			return;
		c->off -= n * t->inc[i];
		c->d[i] = 0;
	}
	c->off += t->inc[6];
}

static void tp_reset(const cpu_tp *t, tp_counter *c, int upto)
{
	for (int i = 0; i <= upto; i++) {
		c->off -= (uint64_t)c->d[i] * t->inc[i];
		c->d[i] = 0;
	}
}

/* The counter's step after an element. */
static void tp_advance(const cpu_tp *t, tp_counter *c, int row_end, int tile_end)
{
	if (tile_end && t->reset3) {
		tp_reset(t, c, 3);
		tp_carry(t, c, 4);
	} else if (tile_end && t->reset2) {
		tp_reset(t, c, 2);
		tp_carry(t, c, 3);
	} else if (row_end && t->reset1) {
		tp_reset(t, c, 1);
		tp_carry(t, c, 2);
	} else {
		tp_carry(t, c, 0);
	}
}

/* Outputs of a tile of w input pixels along an axis (0: none). */
static uint32_t tp_outputs(uint32_t w, uint32_t win, uint32_t stride)
{
	return w < win ? 0 : (w - win) / stride + 1;
}

/* Tiles along an axis of a window [w0, w1]: those with at least one output. */
static uint64_t tp_tiles(int32_t w0, int32_t w1, uint32_t inc, uint32_t win)
{
	int64_t width = (int64_t)w1 - w0 + 1;
	return width < win ? 0 : (uint64_t)((width - win) / inc) + 1;
}

/* The tile's pixel count along an axis: min(tile, window end - start + 1). */
static uint32_t tp_tile_width(int32_t start, int32_t w1, uint32_t tile)
{
	int64_t left = (int64_t)w1 - start + 1;
	return left < (int64_t)tile ? (uint32_t)left : tile;
}

static uint8_t tp_element(const cpu_tp *t, const uint8_t *in, int64_t x0, int64_t y0, uint64_t zoff)
{
	if (!t->pool) {
		if (x0 < 0 || y0 < 0 || x0 >= t->x_size || y0 >= t->y_size)
			return t->border;
		uint8_t v = in[zoff + (uint64_t)y0 * t->stride + (uint64_t)x0];
		return (t->lut || t->scaled) && !t->f16_out ? t->map[v] : v;
	}
	/* max over the window's pixels inside the image (int8: by value, the
	 * bytes with their sign bit flipped) */
	uint8_t m = 0;
	for (int64_t y = y0; y < y0 + t->ph; y++) {
		if (y < 0 || y >= t->y_size)
			continue;
		for (int64_t x = x0; x < x0 + t->pw; x++)
			if (x >= 0 && x < t->x_size) {
				uint8_t v = in[zoff + (uint64_t)y * t->stride + (uint64_t)x] ^ t->flip;
				m = v > m ? v : m;
			}
	}
	return m ^ t->flip;
}

/* Writes element v at the counter's offset off through the output's ring:
 * a byte, or the half of pixel v (a copy or table into fp16), low byte
 * first. */
static void tp_store(const cpu_tp *t, uint8_t *out, uint64_t off, uint8_t v)
{
	if (!t->f16_out) {
		out[nbg_cpu_ring_at(t->out_base + off, t->out_ring_lo, t->out_ring_size)] = v;
		return;
	}
	uint16_t h = t->half[v];
	uint64_t a = t->out_base + 2 * off;
	out[nbg_cpu_ring_at(a, t->out_ring_lo, t->out_ring_size)] = (uint8_t)h;
	out[nbg_cpu_ring_at(a + 1, t->out_ring_lo, t->out_ring_size)] = (uint8_t)(h >> 8);
}

/* The counter's first digit whose count is not 1 (a digit counting to 1
 * carries at every step and stays 0), 6 when there is none. */
static int tp_first_digit(const cpu_tp *t)
{
	int f = 0;
	while (f < 6 && t->count[f] == 1)
		f++;
	return f;
}

/* From output ox of a tile row, the counter steps that advance digit f
 * alone (no row end, no carry out of d[f]; f: tp_first_digit, 6: none). */
static uint64_t tp_steps(const cpu_tp *t, const tp_counter *c, int f, uint32_t ox, uint32_t nx)
{
	if (f == 6)
		return 0;
	uint64_t nf = t->count[f] ? t->count[f] : 65536, r = nx - 1 - ox, room = nf - 1 - c->d[f];
	return r < room ? r : room;
}

/* A run of a copy's (or a table's) elements from output ox of a tile row,
 * each followed by such a step, whose pixels all lie in the image, at x,
 * y: its length, 0 when under 2. */
static uint32_t tp_run_length(const cpu_tp *t, const tp_counter *c, int f, uint32_t ox, uint32_t nx, int64_t x,
			      int64_t y)
{
	if (t->pool || y < 0 || y >= t->y_size || x < 0 || x >= t->x_size)
		return 0;
	uint64_t r = tp_steps(t, c, f, ox, nx), in = (uint64_t)(t->x_size - x);
	r = r < in ? r : in;
	return r > 1 ? (uint32_t)r : 0;
}

/* r elements of a run from the pixels at src, the first at the counter's
 * offset off, each `inc` after the one before: consecutive bytes through
 * the output's ring where inc is 1, else one at a time. */
static void tp_span(const cpu_tp *t, const uint8_t *src, uint8_t *out, uint64_t off, uint32_t r, uint64_t inc)
{
	int mapped = (t->lut || t->scaled) && !t->f16_out; /* into fp16: tp_store's half[v] */
	if (t->f16_out || inc != 1) {
		for (uint32_t i = 0; i < r; i++)
			tp_store(t, out, off + i * inc, mapped ? t->map[src[i]] : src[i]);
		return;
	}
	if (!mapped) {
		nbg_cpu_ring_write(out, src, t->out_base + off, r, t->out_ring_lo, t->out_ring_size);
		return;
	}
	uint8_t v[256];
	for (uint32_t at = 0, n; at < r; at += n) {
		n = r - at < sizeof(v) ? r - at : (uint32_t)sizeof(v);
		for (uint32_t i = 0; i < n; i++)
			v[i] = t->map[src[at + i]];
		nbg_cpu_ring_write(out, v, t->out_base + off + at, n, t->out_ring_lo, t->out_ring_size);
	}
}

/* What a walk does: with in and out, computes and writes every element of
 * slices [z0, z1) (in points at in_base, out at the output region, written
 * at out_base + the counter's offset through the output's ring; z0 > 0
 * only where the plan found the slices even, the counter then starting at
 * z0 x t->slice_step); without, over every slice, the largest output
 * offset (hi), whether each slice's offsets all lie above every earlier
 * slice's (apart: the slices write distinct elements) and whether the
 * counter's digits are all 0 again after the first slice (even: each
 * slice then starts step further than the one before), or, with mark, a
 * 1 at mark[offset] for every element's counter offset (mark holds the
 * largest + 1). */
typedef struct tp_pass {
	const uint8_t *in;
	uint8_t *out;
	uint32_t z0, z1;
	uint64_t hi;
	int apart, even;
	uint64_t step;
	uint8_t *mark;
} tp_pass;

/* The counter's steps over one tile row of nx elements, the pixels from
 * (x0, y) of the slice at zoff: w->out written where z is one of its
 * slices, the offsets' extremes where it has no out nor mark. */
static void tp_row(const cpu_tp *t, tp_pass *w, tp_counter *c, int f, int write, int64_t x0, int64_t y,
		   uint64_t zoff, uint32_t nx, int tile_end, uint64_t *lo, uint64_t *top)
{
	for (uint32_t ox = 0; ox < nx; ox++) {
		uint64_t r = write ? tp_run_length(t, c, f, ox, nx, x0 + ox, y) : w->mark ? 0 : tp_steps(t, c, f, ox, nx);
		if (r > 1) {
			if (write)
				tp_span(t, w->in + zoff + (uint64_t)y * t->stride + (uint64_t)(x0 + ox), w->out, c->off,
					(uint32_t)r, t->inc[f]);
			else if (!w->out) {
				*lo = c->off < *lo ? c->off : *lo;
				*top = c->off + (r - 1) * t->inc[f] > *top ? c->off + (r - 1) * t->inc[f] : *top;
			}
			c->off += r * t->inc[f];
			c->d[f] += (uint32_t)r;
			ox += (uint32_t)r - 1;
			continue;
		}
		if (write)
			tp_store(t, w->out, c->off, tp_element(t, w->in, x0 + (int64_t)ox * t->ps, y, zoff));
		else if (w->mark)
			w->mark[c->off] = 1;
		else if (!w->out) {
			*lo = c->off < *lo ? c->off : *lo;
			*top = c->off > *top ? c->off : *top;
		}
		tp_advance(t, c, ox + 1 == nx, ox + 1 == nx && tile_end);
	}
}

static void tp_walk_pass(const cpu_tp *t, tp_pass *w)
{
	uint64_t ntx = tp_tiles(t->wx0, t->wx1, t->tile_xinc, t->pw);
	uint64_t nty = tp_tiles(t->wy0, t->wy1, t->tile_yinc, t->ph);
	tp_counter c;
	memset(&c, 0, sizeof(c));
	c.off = w->z0 * t->slice_step;
	uint64_t top = 0, below = 0; /* the largest offset, and the earlier slices' */
	int f = tp_first_digit(t), write = w->out != NULL;
	w->apart = 1;
	for (uint32_t z = w->z0; z < w->z1; z++) {
		uint64_t zoff = (uint64_t)z * t->slice, lo = UINT64_MAX;
		if (z == 1 && !write) {
			w->even = !c.d[0] && !c.d[1] && !c.d[2] && !c.d[3] && !c.d[4] && !c.d[5];
			w->step = c.off;
		}
		for (uint64_t ty = 0; ty < nty; ty++) {
			int64_t y0 = t->wy0 + (int64_t)(ty * t->tile_yinc);
			uint32_t ny = tp_outputs(tp_tile_width((int32_t)y0, t->wy1, t->tile_y), t->ph, t->ps);
			for (uint64_t tx = 0; tx < ntx; tx++) {
				int64_t x0 = t->wx0 + (int64_t)(tx * t->tile_xinc);
				uint32_t nx = tp_outputs(tp_tile_width((int32_t)x0, t->wx1, t->tile_x), t->pw,
							 t->ps);
				for (uint32_t oy = 0; oy < ny; oy++)
					tp_row(t, w, &c, f, write, x0, y0 + (int64_t)oy * t->ps, zoff, nx, oy + 1 == ny,
					       &lo, &top);
			}
		}
		if (z && lo != UINT64_MAX && lo <= below)
			w->apart = 0;
		below = top;
	}
	w->hi = top;
}

uint8_t *nbg_cpu_tp_written(const cpu_tp *t, uint64_t *n)
{
	tp_pass w = { NULL, NULL, 0, t->z_size, 0, 1, 0, 0, NULL };
	tp_walk_pass(t, &w);
	uint64_t hi = w.hi;
	uint8_t *mark = w.mark = hi < SIZE_MAX ? calloc((size_t)hi + 1, 1) : NULL;
	if (mark)
		tp_walk_pass(t, &w);
	*n = mark ? hi + 1 : 0;
	return mark;
}

/*
 * What the walk over ntx x nty tiles costs: its loop turns (per slice, per
 * tile row, per tile: tp_walk_pass's loops, which turn even where a tile has no
 * output) into *turns, its elements into *elements, and the run's work,
 * those turns and every pixel the elements' windows read (saturating).
 */
static uint64_t tp_work(const cpu_tp *t, uint64_t ntx, uint64_t nty, uint64_t *turns, uint64_t *elements)
{
	uint64_t sx = 0, sy = 0;
	for (uint64_t i = 0; i < ntx; i++)
		sx += tp_outputs(tp_tile_width(t->wx0 + (int32_t)(i * t->tile_xinc), t->wx1, t->tile_x), t->pw, t->ps);
	for (uint64_t i = 0; i < nty; i++)
		sy += tp_outputs(tp_tile_width(t->wy0 + (int32_t)(i * t->tile_yinc), t->wy1, t->tile_y), t->ph, t->ps);
	*turns = nbg_cpu_mul_sat(t->z_size, nbg_cpu_add_sat(1, nbg_cpu_mul_sat(nty, nbg_cpu_add_sat(1, ntx))));
	*elements = nbg_cpu_mul_sat(nbg_cpu_mul_sat(sx, sy), t->z_size);
	return nbg_cpu_add_sat(*turns, nbg_cpu_mul_sat(*elements, (uint64_t)t->pw * t->ph));
}

/* The circular buffer of the image at `base` whose size field is size_f
 * and end field end_f, the whole command word (nbg_cpu_ring). */
static int tp_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, const char *what,
		   enum nbg_tp_fid size_f, enum nbg_tp_fid end_f, size_t region, uint64_t base, uint64_t *lo,
		   uint64_t *size)
{
	unsigned word = nbg_command_fields(NBG_CMD_TP, NULL)[end_f].word;
	return nbg_cpu_ring(p, s, what, nbg_cmd_tp(cmd, size_f), word, cmd->words[word], region, base,
			    lo, size);
}

/* The refusal of an image that passes its circular buffer's end twice
 * (hi: its last byte, unwrapped), or of an input window too large to copy
 * through the buffer (hi == lo). */
static void tp_refuse_lap(nbg_cpu_step *s, const char *what, uint64_t lo, uint64_t hi, uint64_t ring_lo,
			  uint64_t ring_size)
{
	if (hi == lo) {
		nbg_cpu_refuse(s, "circular-buffer-wrap", "its %s window through its circular buffer "
			       "0x%llx..0x%llx has a size or stride past the bounds a copy through the buffer "
			       "takes (at most %llu pixels)", what, (unsigned long long)ring_lo,
			       (unsigned long long)(ring_lo + ring_size - 1), (unsigned long long)CPU_MAX_SCRATCH);
		return;
	}
	nbg_cpu_refuse(s, "circular-buffer-wrap", "its %s bytes 0x%llx..0x%llx pass the end of its circular "
		       "buffer 0x%llx..0x%llx more than once: a second lap is not established", what,
		       (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)ring_lo,
		       (unsigned long long)(ring_lo + ring_size - 1));
}

static const enum nbg_tp_fid tp_zero_fields[] = {
	NBG_TPF_IN_TILE_SEQUENCE, NBG_TPF_IN_TILE_GLOBAL_MEM, NBG_TPF_ALU_SQUARE_ENABLE, NBG_TPF_ALU_NMS_ENABLE,
	NBG_TPF_ALU_PWL_ENABLE, NBG_TPF_ALU_MULT_ENABLE, NBG_TPF_ALU_LOAD_PWL_LUT, NBG_TPF_OUT_TILE_SKIP_AT_BORDER,
	NBG_TPF_OUT_BRICK_MODE, NBG_TPF_ALU_Z_FILTER_MODE, NBG_TPF_IN_WINDOW_Z_START_OVERFETCH,
	NBG_TPF_IN_WINDOW_Z_END_OVERFETCH, NBG_TPF_ALU_RELU_ENABLE, NBG_TPF_ALU_FILTER_PWL_SWAP,
	NBG_TPF_ALU_INPUT_PRESHIFT, NBG_TPF_ALU_OUTPUT_POSTSHIFT, NBG_TPF_ALU_OUTPUT_POSTSHIFT_5_6,
	NBG_TPF_ALU_OUTPUT_POST_MULTIPLIER, NBG_TPF_ALU_REORDER_LOOP_2_MODE,
};

/* The pooling fields: a copy (1x1), or a max pool whose window and stride
 * the fields imply; 0 with the step refused otherwise. */
static int tp_pooling(nbg_cpu_step *s, const nbg_cmd *cmd, cpu_tp *t)
{
	uint32_t hm = nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROCESSING), vm = nbg_cmd_tp(cmd, NBG_TPF_ALU_VERT_PROCESSING);
	uint32_t hc = nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROC_COUNT), vc = nbg_cmd_tp(cmd, NBG_TPF_ALU_VERT_PROC_COUNT);
	uint32_t hs = nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROC_STRIDE), vs = nbg_cmd_tp(cmd, NBG_TPF_ALU_VERT_PROC_STRIDE);
	uint32_t border = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_BORDER_MODE);
	t->pw = t->ph = t->ps = 1;
	if (!hm && !vm && !hc && !vc && !hs && !vs) {
		if (border != 0) {
			nbg_cpu_refuse(s, "border-mode-unsupported", "in_image_border_mode is %u: a copy is executed "
				       "with 0 (a constant border)", border);
			return 0;
		}
		return 1;
	}
	/* (mode, count, stride bit): 2x2 stride 2, 3x3 stride 2, 2x2 stride 1 */
	int ok = hm == vm && hc == vc && hs == vs &&
		 ((hm == 3 && hc == 1 && hs == 0) || (hm == 3 && hc == 2 && hs == 1) ||
		  (hm == 1 && hc == 1 && hs == 0));
	if (!ok) {
		nbg_cpu_refuse(s, "pooling-unsupported", "alu_horz/vert_processing %u/%u, proc_count %u/%u, "
			       "proc_stride %u/%u: executed are (3, 1, 0) 2x2 stride 2, (3, 2, 1) 3x3 stride 2 "
			       "and (1, 1, 0) 2x2 stride 1 max pooling", hm, vm, hc, vc, hs, vs);
		return 0;
	}
	if (border != 1) {
		nbg_cpu_refuse(s, "border-mode-unsupported", "in_image_border_mode is %u: max pooling is "
			       "executed with 1 (pixels outside the image take no part)", border);
		return 0;
	}
	t->pool = 1;
	t->pw = t->ph = hc + 1;
	t->ps = hm == 3 ? 2 : 1;
	return 1;
}

/* The fields a table activation sets (nbg_cpu_plan_lut reads them), or
 * the scale of a copy into fp16. */
static int tp_scale_field(enum nbg_tp_fid f)
{
	switch (f) {
	case NBG_TPF_ALU_PWL_ENABLE: case NBG_TPF_ALU_LOAD_PWL_LUT:
		return 1;
	case NBG_TPF_ALU_OUTPUT_POSTSHIFT: case NBG_TPF_ALU_OUTPUT_POSTSHIFT_5_6:
	case NBG_TPF_ALU_OUTPUT_POST_MULTIPLIER:
		return 2;
	default:
		return 0;
	}
}

/* The data types and their conversions: uint8 in; uint8 out with
 * alu_i2f_enable equal to alu_f2i_enable (a round trip through float, or
 * none; a table's are checked by ops/lut.c), or, for a layout copy or a
 * table, fp16 out with both rounding modes 1 and out_zp 0 (those of the
 * corpus's), a copy with i2f and not f2i, its halves then computed into
 * t; 0 with the step refused. */
static int tp_types_ok(nbg_cpu_step *s, const nbg_cmd *cmd, cpu_tp *t, int layout)
{
	uint32_t ti = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_DATA_TYPE), to = nbg_cmd_tp(cmd, NBG_TPF_OUT_IMAGE_DATA_TYPE);
	uint32_t i2f = nbg_cmd_tp(cmd, NBG_TPF_ALU_I2F_ENABLE), f2i = nbg_cmd_tp(cmd, NBG_TPF_ALU_F2I_ENABLE);
	t->f16_out = (layout || t->lut) && ti == 0 && to == 1;
	t->flip = ti == 2 && to == 2 ? 0x80 : 0;
	if ((ti != 0 && !t->flip) || (to != 0 && !t->f16_out && !t->flip)) {
		enum nbg_tp_fid f = ti != 0 && !t->flip ? NBG_TPF_IN_IMAGE_DATA_TYPE : NBG_TPF_OUT_IMAGE_DATA_TYPE;
		const char *n = nbg_command_data_type_name(nbg_cmd_tp(cmd, f));
		nbg_cpu_refuse(s, "data-type-unsupported", "%s is %u (%s): executed are uint8 or int8 in and "
			       "out, and a layout copy or lookup table from uint8 into fp16",
			       nbg_command_fields(NBG_CMD_TP, NULL)[f].key, nbg_cmd_tp(cmd, f), n ? n : "unknown");
		return 0;
	}
	if (t->flip && (nbg_cmd_tp(cmd, NBG_TPF_IN_ZP) || nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP))) {
		nbg_cpu_refuse(s, "tp-requantization-unsupported", "an int8 operation with in_zp %u and out_zp "
			       "%u: executed are both 0, those of every int8 TP command of the corpus",
			       nbg_cmd_tp(cmd, NBG_TPF_IN_ZP), nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP));
		return 0;
	}
	if (!t->lut && (t->f16_out ? !(i2f == 1 && f2i == 0) : i2f != f2i)) {
		nbg_cpu_refuse(s, "tp-field-unsupported", "alu_i2f_enable %u and alu_f2i_enable %u into %s: "
			       "executed are both 0 or both 1 into uint8, 1 and 0 into fp16", i2f, f2i,
			       t->f16_out ? "fp16" : "uint8");
		return 0;
	}
	if (!t->f16_out)
		return 1;
	if (nbg_cmd_tp(cmd, NBG_TPF_FLAT_ROUNDING_MODE) != 1 || nbg_cmd_tp(cmd, NBG_TPF_INTEGER_ROUNDING_MODE) != 1) {
		nbg_cpu_refuse(s, "tp-field-unsupported", "a %s into fp16 with flat_rounding_mode %u and "
			       "integer_rounding_mode %u: executed are both 1, those of every such corpus operation",
			       t->lut ? "lookup table" : "copy",
			       nbg_cmd_tp(cmd, NBG_TPF_FLAT_ROUNDING_MODE), nbg_cmd_tp(cmd, NBG_TPF_INTEGER_ROUNDING_MODE));
		return 0;
	}
	if (nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP) != 0) {
		nbg_cpu_refuse(s, "tp-requantization-unsupported", "a %s into fp16 with out_zp %u: executed "
			       "is out_zp 0", t->lut ? "lookup table" : "copy", nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP));
		return 0;
	}
	if (t->lut)
		return 1; /* its halves: ops/lut.c */
	/* pixel v: the float32 product (v - in_zp) x scale, to the nearest half */
	int32_t zp = (int32_t)nbg_cmd_tp(cmd, NBG_TPF_IN_ZP);
	float scale = (float)nbg_cpu_tp_multiplier(cmd);
	for (int v = 0; v < 256; v++)
		t->half[v] = nbg_fp16_from_float((float)(v - zp) * scale);
	return 1;
}

/* The data types, the fields that must be 0 (but those a table activation
 * or a copy into fp16 sets) and the zero points of a copy or pool; 0 with
 * the step refused. */
static int tp_fields_ok(nbg_cpu_step *s, const nbg_cmd *cmd, cpu_tp *t, int layout)
{
	if (!tp_types_ok(s, cmd, t, layout))
		return 0;
	for (size_t i = 0; i < sizeof(tp_zero_fields) / sizeof(tp_zero_fields[0]); i++) {
		enum nbg_tp_fid f = tp_zero_fields[i];
		int own = tp_scale_field(f);
		int pre = f == NBG_TPF_ALU_INPUT_PRESHIFT && t->lut && t->flip; /* ops/lut.c reads it */
		if (nbg_cmd_tp(cmd, f) && own == 2 && layout && !t->lut && !t->f16_out)
			t->scaled = 1; /* tp_scaled_map: int8, or uint8 with its zero points */
		else if (nbg_cmd_tp(cmd, f) && !(t->lut && own) && !(t->f16_out && own == 2) && !pre) {
			nbg_cpu_refuse(s, "tp-field-unsupported", "%s is %u: a TP operation is executed only with "
				       "it 0", nbg_command_fields(NBG_CMD_TP, NULL)[f].key, nbg_cmd_tp(cmd, f));
			return 0;
		}
	}
	if (!t->lut && !t->f16_out && !t->scaled && nbg_cmd_tp(cmd, NBG_TPF_IN_ZP) != nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP)) {
		nbg_cpu_refuse(s, "tp-requantization-unsupported", "in_zp %u and out_zp %u differ: only copies "
			       "that keep the zero point are executed", nbg_cmd_tp(cmd, NBG_TPF_IN_ZP), nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP));
		return 0;
	}
	return 1;
}

/*
 * A layout copy whose command sets a scale: each int8 code q (retinaface's
 * concatenations, alu_output_postshift -1, zero points 0) or uint8 code q
 * (the face detectors' concatenations, in_zp 120, 147, 131, out_zp 0)
 * becomes out_zp + (q - in_zp) x (1 + post_multiplier / 2^15) x 2^-s
 * (nbg_cpu_tp_multiplier), rounded per flat_rounding_mode (0 half
 * away from zero, 1 half to even, quant.h), saturated to the type's
 * range: the lookup tables' output rule (ops/lut.c) with the code,
 * less its zero point, in place of the table's value; with the fields 0
 * and equal zero points it is the copy itself (inferred: doc/cpu-backend.md,
 * "int8 data" and "Scaled uint8 concatenations").  0 with the step refused:
 * flat_rounding_mode 2 or 3.
 */
static int tp_scaled_map(nbg_cpu_step *s, const nbg_cmd *cmd, const cpu_tp *t, uint8_t map[256])
{
	int even = 0;
	if (!nbg_cpu_rounding(s, "tp-field-unsupported", "a TP scaled copy", "flat_rounding_mode",
			      nbg_cmd_tp(cmd, NBG_TPF_FLAT_ROUNDING_MODE), &even))
		return 0;
	double mult = nbg_cpu_tp_multiplier(cmd);
	int iz = (int)nbg_cmd_tp(cmd, NBG_TPF_IN_ZP), oz = (int)nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP);
	int lo = t->flip ? -128 : 0, hi = t->flip ? 127 : 255;
	for (int b = 0; b < 256; b++) {
		int q = t->flip ? (int8_t)(uint8_t)b : b;
		double r = oz + nbg_cpu_round_mode((double)(q - iz) * mult, even);
		r = r < lo ? lo : r > hi ? hi : r;
		map[b] = (uint8_t)((int)r & 0xff);
	}
	return 1;
}

/* What a TP operation whose pixels go through a map or a conversion is
 * called in a refusal. */
static const char *tp_mapped_name(const cpu_tp *t)
{
	return t->lut ? "lookup-table activation" : t->f16_out ? "copy into fp16" :
	       t->flip ? "scaled int8 copy" : "scaled uint8 copy";
}

/* The output loops, and what the walk costs: t->work, the run's steps,
 * within TP_MAX_WORK, and *steps, the plan's walk (its loop turns and
 * elements); 0 with the step refused.  The tiles' outputs are counted one
 * tile at a time, at most 2^16 per axis (16-bit windows): charged to the
 * plan first. */
static int tp_loops(nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, cpu_tp *t, uint64_t *steps)
{
	for (int i = 0; i < 6; i++)
		t->count[i] = nbg_cmd_tp(cmd, nbg_tp_loop_counts[i]);
	for (int i = 0; i < 6; i++)
		t->inc[i] = nbg_cmd_tp(cmd, nbg_tp_loop_incs[i]);
	t->inc[6] = nbg_cmd_tp(cmd, NBG_TPF_OUT_LOOP_6_INC);
	t->reset1 = nbg_cmd_tp(cmd, NBG_TPF_OUT_LOOP_1_RESET) != 0;
	t->reset2 = nbg_cmd_tp(cmd, NBG_TPF_OUT_LOOP_2_RESET) != 0;
	t->reset3 = nbg_cmd_tp(cmd, NBG_TPF_OUT_LOOP_3_RESET) != 0;
	uint64_t ntx = tp_tiles(t->wx0, t->wx1, t->tile_xinc, t->pw), nty = tp_tiles(t->wy0, t->wy1, t->tile_yinc, t->ph);
	uint64_t turns, elements;
	if (!nbg_cpu_plan_spend(p, s, ntx + nty, "counting its tiles' outputs"))
		return 0;
	t->work = tp_work(t, ntx, nty, &turns, &elements);
	if (t->work > TP_MAX_WORK) {
		nbg_cpu_refuse(s, "work-limit", "its walk takes %llu steps (%llu loop turns over %llu slices of "
			       "%llux%llu tiles, %llu elements reading %ux%u pixels each), above the limit of %llu",
			       (unsigned long long)t->work, (unsigned long long)turns, (unsigned long long)t->z_size,
			       (unsigned long long)ntx, (unsigned long long)nty, (unsigned long long)elements,
			       t->pw, t->ph, (unsigned long long)TP_MAX_WORK);
		return 0;
	}
	*steps = nbg_cpu_add_sat(turns, elements);
	return 1;
}

static void tp_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	const nbg_cmd_op *cop = m->cop;
	const nbg_cmd *cmd = cop ? nbg_commands_at(p->c, NBG_CMD_TP, cop->command) : NULL;
	if (!cmd) {
		nbg_cpu_refuse(s, "command-not-decoded", "its TP command is not decoded");
		return;
	}
	if (nbg_cmd_tp(cmd, NBG_TPF_IN_TILE_SEQUENCE) == 3) {
		/* every TP fully connected layer of the corpus, and only they */
		nbg_cpu_refuse(s, "tp-not-executed", "a TP fully connected layer (in_tile_sequence 3): its "
			       "coefficients at alu_load_pwl_lut_address are not decoded");
		return;
	}
	cpu_tp *t = &op->u.tp;
	memset(t, 0, sizeof(*t));
	t->lut = m->cmd_kind == CPU_CMD_LUT;
	if (!tp_fields_ok(s, cmd, t, m->cmd_kind == CPU_CMD_LAYOUT) ||
	    (t->lut && !nbg_cpu_plan_lut(p, s, cmd, t->map, t->f16_out ? t->half : NULL)))
		return;
	if (!tp_pooling(s, cmd, t))
		return;
	if ((t->lut || t->f16_out || t->scaled) && t->pool) {
		nbg_cpu_refuse(s, t->lut ? "tp-lut-unsupported" : "data-type-unsupported", "a TP %s with "
			       "pooling fields set: executed is a copy", tp_mapped_name(t));
		return;
	}
	if (t->scaled && !tp_scaled_map(s, cmd, t, t->map))
		return;
	t->x_size = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_X_SIZE);
	t->y_size = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Y_SIZE);
	t->z_size = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Z_SIZE);
	t->stride = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_STRIDE);
	t->slice = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_SLICE);
	/* starts signed (Mesa writes 0 - padding), ends unsigned: the one end
	 * of the corpus with bit 15 set is its image's last row, 50175
	 * (doc/cpu-backend.md, "TP operations") */
	t->wx0 = (int16_t)nbg_cmd_tp(cmd, NBG_TPF_IN_WINDOW_X_START);
	t->wy0 = (int16_t)nbg_cmd_tp(cmd, NBG_TPF_IN_WINDOW_Y_START);
	t->wx1 = (int32_t)(uint16_t)nbg_cmd_tp(cmd, NBG_TPF_IN_WINDOW_X_END);
	t->wy1 = (int32_t)(uint16_t)nbg_cmd_tp(cmd, NBG_TPF_IN_WINDOW_Y_END);
	t->tile_x = nbg_cmd_tp(cmd, NBG_TPF_IN_TILE_X_SIZE);
	t->tile_y = nbg_cmd_tp(cmd, NBG_TPF_IN_TILE_Y_SIZE);
	t->tile_xinc = nbg_cmd_tp(cmd, NBG_TPF_IN_TILE_X_INC);
	t->tile_yinc = nbg_cmd_tp(cmd, NBG_TPF_IN_TILE_Y_INC);
	uint32_t bc = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_BORDER_CONST);
	if (!t->x_size || !t->y_size || !t->z_size || !t->tile_x || !t->tile_y || !t->tile_xinc ||
	    !t->tile_yinc || t->tile_x < t->pw || t->tile_y < t->ph || t->wx1 < t->wx0 || t->wy1 < t->wy0 ||
	    bc > 255) {
		nbg_cpu_refuse(s, "shape-invalid", "input %ux%ux%u, window x %d..%d y %d..%d, tile %ux%u step "
			       "%ux%u, border %u: a size is 0, a window empty or the border outside uint8",
			       t->x_size, t->y_size, t->z_size, t->wx0, t->wx1, t->wy0, t->wy1, t->tile_x,
			       t->tile_y, t->tile_xinc, t->tile_yinc, bc);
		return;
	}
	t->border = (uint8_t)bc;
	if ((t->lut || t->f16_out || t->scaled) &&
	    (t->wx0 < 0 || t->wy0 < 0 || t->wx1 >= (int64_t)t->x_size || t->wy1 >= (int64_t)t->y_size)) {
		nbg_cpu_refuse(s, t->lut ? "tp-lut-unsupported" : "data-type-unsupported", "a TP %s whose window "
			       "x %d..%d y %d..%d passes its %ux%u image: how a border pixel goes through the %s is "
			       "not established", tp_mapped_name(t), t->wx0,
			       t->wx1, t->wy0, t->wy1, t->x_size, t->y_size, t->lut ? "table" : "conversion");
		return;
	}
	uint64_t steps;
	if (!tp_loops(p, s, cmd, t, &steps))
		return;
	if (!nbg_cpu_find_io(p, s, cop, &t->in_region, &t->out_region))
		return;
	t->in_base = cop->in_ref.offset;
	t->out_base = cop->out_ref.offset;
	/* the input bytes: the window inside the image, every slice */
	int64_t x0 = t->wx0 > 0 ? t->wx0 : 0, y0 = t->wy0 > 0 ? t->wy0 : 0;
	int64_t x1 = t->wx1 < (int64_t)t->x_size - 1 ? t->wx1 : (int64_t)t->x_size - 1;
	int64_t y1 = t->wy1 < (int64_t)t->y_size - 1 ? t->wy1 : (int64_t)t->y_size - 1;
	uint64_t last = 0;
	int reads = x0 <= x1 && y0 <= y1;
	if (reads) {
		t->in_lo = (uint64_t)y0 * t->stride + (uint64_t)x0;
		if (!tp_ring(p, s, cmd, "input", NBG_TPF_IN_IMAGE_CIRCULAR_BUF_SIZE,
			     NBG_TPF_IN_IMAGE_CIRCULAR_BUF_END_ADDRESS_PLUS_1, t->in_region, t->in_base,
			     &t->in_ring_lo, &t->in_ring_size))
			return;
		if (!nbg_cpu_image_in(p, t->in_region, t->in_base + t->in_lo, (uint64_t)(x1 - x0 + 1),
				      (uint64_t)(y1 - y0 + 1), t->z_size, t->stride, t->slice, t->in_ring_lo,
				      t->in_ring_size, &last)) {
			if (t->in_ring_size) {
				tp_refuse_lap(s, "input", t->in_base + t->in_lo, last, t->in_ring_lo, t->in_ring_size);
				return;
			}
			nbg_cpu_refuse(s, "address-outside-memory", "its input window %lldx%lldx%u at %s+0x%llx "
				       "(row %llu, slice %llu bytes) does not lie inside that memory's %llu bytes",
				       (long long)(x1 - x0 + 1), (long long)(y1 - y0 + 1), t->z_size,
				       nbg_graph_source_type_name(cop->in_ref.source_type),
				       (unsigned long long)(t->in_base + t->in_lo), (unsigned long long)t->stride,
				       (unsigned long long)t->slice,
				       (unsigned long long)p->regions[t->in_region].size);
			return;
		}
		t->in_hi = last - t->in_base;
	}
	if (!nbg_cpu_plan_spend(p, s, steps, "the walk of its output counter"))
		return;
	tp_pass w = { NULL, NULL, 0, t->z_size, 0, 1, 0, 0, NULL };
	tp_walk_pass(t, &w);
	uint64_t hi = w.hi;
	if (t->f16_out)
		hi = 2 * hi + 1; /* the last byte of the last half */
	if (!tp_ring(p, s, cmd, "output", NBG_TPF_OUT_IMAGE_CIRCULAR_BUF_SIZE,
		     NBG_TPF_OUT_IMAGE_CIRCULAR_BUF_END_ADDRESS_PLUS_1, t->out_region, t->out_base,
		     &t->out_ring_lo, &t->out_ring_size))
		return;
	if (t->f16_out && ((t->out_base | t->out_ring_lo) & 1)) {
		nbg_cpu_refuse(s, "data-type-unsupported", "a copy into fp16 whose output at 0x%llx or circular "
			       "buffer at 0x%llx is at an odd address: where a half split there goes is not "
			       "established", (unsigned long long)t->out_base, (unsigned long long)t->out_ring_lo);
		return;
	}
	uint64_t osize = p->regions[t->out_region].size;
	if (t->out_ring_size) {
		/* hi < 2^57 (the walk's digits and steps), the base inside the region */
		if (t->out_base + hi - t->out_ring_lo >= 2 * t->out_ring_size) {
			tp_refuse_lap(s, "output", t->out_base, t->out_base + hi, t->out_ring_lo, t->out_ring_size);
			return;
		}
	} else if (t->out_base >= osize || hi >= osize - t->out_base) {
		nbg_cpu_refuse(s, "address-outside-memory", "its output loops reach %s+0x%llx, outside that "
			       "memory's %llu bytes", nbg_graph_source_type_name(cop->out_ref.source_type),
			       (unsigned long long)(t->out_base + hi), (unsigned long long)osize);
		return;
	}
	/* the walk reads the input as it was before the operation: a copy when
	 * the two may share bytes (through a ring, whatever the addresses) */
	t->overlap = reads && t->in_region == t->out_region &&
		     (t->in_ring_size || t->out_ring_size ||
		      (t->in_base + t->in_lo <= t->out_base + hi && t->out_base <= t->in_base + t->in_hi));
	/* its slices on the threads where they write distinct elements, at
	 * distinct bytes of the ring (the output's span within it), and each
	 * slice's counter starts slice_step after the one before */
	int apart = w.apart && (!t->out_ring_size || hi < t->out_ring_size);
	t->slice_step = w.even ? w.step : 0;
	t->threads = apart && w.even && t->z_size > 1 && t->work >= TP_THREAD_WORK ?
			     (uint32_t)p->totals.limits.threads : 1;
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
	op->kind = CPU_OP_TP;
}

static uint64_t tp_scratch(const cpu_tp *t)
{
	/* the input's bytes in order, read through its ring */
	return t->overlap || t->in_ring_size ? t->in_hi + 1 : 0;
}

/* The walk's slices [lo, hi) (ctx: the run's tp_pass, t after it). */
typedef struct tp_job {
	const cpu_tp *t;
	const uint8_t *in;
	uint8_t *out;
} tp_job;

static void tp_slices(void *ctx, uint64_t lo, uint64_t hi)
{
	const tp_job *j = ctx;
	tp_pass w = { j->in, j->out, (uint32_t)lo, (uint32_t)hi, 0, 1, 0, 0, NULL };
	tp_walk_pass(j->t, &w);
}

static int tp_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_tp *t = &op->u.tp;
	const uint8_t *in = buf[t->in_region] + t->in_base;
	uint8_t *copy = NULL;
	if (tp_scratch(t)) {
		size_t n = (size_t)tp_scratch(t);
		copy = malloc(n);
		if (!copy)
			return -1;
		nbg_cpu_ring_read(copy, buf[t->in_region], t->in_base, n, 1, t->in_ring_lo, t->in_ring_size);
		in = copy;
	}
	tp_job j = { t, in, buf[t->out_region] };
	nbg_cpu_parallel(t->threads, t->z_size, 1, tp_slices, &j);
	free(copy);
	return 0;
}

static int tp_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_TP;
}

/* The walk's steps (the plan counted them); the input copied when it is
 * read through a ring or overlaps the output. */
static void tp_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = op->u.tp.work;
	*scratch = tp_scratch(&op->u.tp);
}

const cpu_op_def nbg_cpu_op_tp = { "tp", tp_match, tp_plan, tp_run, tp_cost };

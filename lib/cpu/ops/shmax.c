/*
 * ops/shmax.c - the max pooling shader of a PoolingLayer2 SH operation
 * whose images are uint8 in the 0x444051f0 format (or int8 in 0x44405130,
 * yolov8n's 0x99 build, with its own lane words: shmax_pinned_s8): computed by reference
 * semantics from its uniforms and I/O, not from the shader's code
 * (nbg_cpu_step.reference).  In the corpus it is YOLOv8's SPPF block in
 * v1/1000f_88_yolov8n.nb: three chained 5x5 max poolings, stride 1,
 * padding 2, each written after the previous one so that the four images
 * form the 512 channels the next convolution reads; doc/cpu-backend.md
 * ("The max pooling shader") gives each rule below with its evidence.
 *
 * Its state buffer loads (uniform 0x36000 + 4 i, read as the softmax's):
 *   0x36000..0x3601c  input image: address (patched), row stride, height << 16
 *                     | width, format 0x444051f0, slice bytes, depth, 0x10da10b0, 0
 *   0x36020..0x36028  input width, height, depth
 *   0x3602c, 0x36030  output width, height
 *   0x36034..0x3603c  stride 1, window side 5, padding 2
 *   0x36040..0x3605c  output image likewise
 *   0x36060, 0x36064  padding 2, 2 (x, y)
 *   0x36068..0x3613c  the shader's lane tables and constants, 0x360f0 the
 *                     float 1.0 (no requantization), 0x36120..0x3613c 0
 * out[c][y][x] = the largest input byte of the window at (x - 2, y - 2),
 * clipped to the image (pixels outside take no part).  Every word but the
 * images' addresses and geometry must hold the corpus operations' value;
 * anything else is refused with a shmax-* id.
 *
 * The 0x7d face-age file (v1/1000f_7d_face_age_7d.nb) holds the same
 * geometry words with windows of side 8 and 4 at a stride of their side and
 * no padding (31x31 -> 3x3, 14x14 -> 3x3), and its own lane words from
 * 0x36068 on, which repeat the side (shmax_pinned_win, shmax_win_side):
 * out[c][y][x] = the largest byte of the window at (x s, y s).  The 0x10003
 * compilations of that network (0x88, 0x99, 0xa1) load another layout
 * (stride 11 or 5 beside a window of 8 or 4, where the 0x7d file holds the
 * side): refused, naming the words.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

/* The words whose values are pinned, with the one value the corpus's three
 * operations hold (a different value would be another variant of the
 * shader, whose meaning is not established). */
typedef struct {
	unsigned index;
	uint32_t value;
} shmax_pin;

static const shmax_pin shmax_pinned[] = {
	{ 3, 0x444051f0 },  { 6, 0x10da10b0 },  { 7, 0 },           { 13, 1 },          { 14, 5 },
	{ 15, 2 },          { 19, 0x444051f0 }, { 22, 0x10da10b0 }, { 23, 0 },          { 24, 2 },
	{ 25, 2 },          { 26, 0x98765432 }, { 27, 0x10fedcba }, { 28, 0x01010101 }, { 29, 0 },
	{ 30, 0x00010000 }, { 31, 0x00030002 }, { 32, 0x02020202 }, { 33, 0 },          { 34, 0 },
	{ 35, 0x100 },      { 36, 0x3c00 },     { 37, 0 },          { 38, 0x3c00 },     { 39, 0 },
	{ 40, 0x3c00 },     { 41, 0 },          { 42, 0x3c00 },     { 43, 0 },          { 44, 0x01010101 },
	{ 45, 0 },          { 46, 0x00050004 }, { 47, 0x00070006 }, { 48, 0x02020202 }, { 49, 0 },
	{ 50, 0 },          { 51, 0x100 },      { 52, 0x3c00 },     { 53, 0 },          { 54, 0x3c00 },
	{ 55, 0 },          { 56, 0x3c00 },     { 57, 0 },          { 58, 0x3c00 },     { 59, 0 },
	{ 60, 0x3f800000 }, { 61, 0 },          { 64, 0x33333333 }, { 65, 0x11110000 }, { 66, 0x03020100 },
	{ 67, 0x03020100 }, { 68, 0 },          { 69, 0 },          { 70, 0 },          { 71, 0x2400 },
	{ 72, 0 },          { 73, 0 },          { 74, 0 },          { 75, 0 },          { 76, 0 },
	{ 77, 0 },          { 78, 0 },          { 79, 0 },
};

/* The int8 variant (yolov8n's 0x99 build, images in the 0x44405130
 * format): the same geometry words, another lane layout from 0x36068 on,
 * held by all three of its operations (words past 0x3613c, which the
 * uniform reader does not keep, are not compared). */
static const shmax_pin shmax_pinned_s8[] = {
	{ 3, 0x44405130 },  { 6, 0x10da10b0 },  { 7, 0 },           { 13, 1 },          { 14, 5 },
	{ 15, 2 },          { 19, 0x44405130 }, { 22, 0x10da10b0 }, { 23, 0 },          { 24, 2 },
	{ 25, 2 },          { 26, 1 },          { 27, 1 },          { 28, 0 },          { 29, 5 },
	{ 30, 5 },          { 31, 5 },          { 32, 0x33333333 }, { 33, 0x11100000 }, { 34, 0x03020100 },
	{ 35, 0x07060504 }, { 36, 0 },          { 37, 0 },          { 38, 0 },          { 39, 0x7400 },
	{ 40, 0 },          { 41, 0 },          { 42, 0 },          { 43, 0 },          { 44, 0 },
	{ 45, 0 },          { 46, 0 },          { 47, 0 },          { 48, 1 },          { 49, 0 },
	{ 50, 0 },          { 51, 0 },          { 52, 2 },          { 53, 0 },          { 54, 0 },
	{ 55, 0x400 },      { 56, 1 },          { 57, 0 },          { 58, 0 },          { 59, 0 },
	{ 60, 0 },          { 61, 0 },          { 62, 0 },          { 63, 0 },          { 64, 0x33333333 },
	{ 65, 0x11110000 }, { 66, 0x03020100 }, { 67, 0x03020100 }, { 68, 0 },          { 69, 0 },
	{ 70, 0 },          { 71, 0x2400 },     { 72, 0 },          { 73, 0 },          { 74, 0 },
	{ 75, 0 },          { 76, 0 },          { 77, 0 },          { 78, 0 },          { 79, 0 },
};

/* The windowed variant (the 0x7d face-age file's two poolings): padding 0,
 * lane words from 0x36080 on; the words that depend on the window side are
 * in shmax_win_side. */
static const shmax_pin shmax_pinned_win[] = {
	{ 3, 0x444051f0 },  { 6, 0x10da10b0 },  { 7, 0 },           { 15, 0 },          { 19, 0x444051f0 },
	{ 22, 0x10da10b0 }, { 23, 0 },          { 24, 0 },          { 25, 0 },          { 32, 0x18100800 },
	{ 33, 0x38302820 }, { 34, 0x08080808 }, { 35, 0x08080808 }, { 36, 0x20181008 }, { 37, 0x00383028 },
	{ 38, 0x08080808 }, { 39, 0x08080808 }, { 40, 0x33333333 }, { 42, 0x03020100 }, { 43, 0x07060504 },
	{ 44, 0 },          { 45, 0 },          { 46, 0 },          { 47, 0x7400 },     { 48, 0 },
	{ 49, 0 },          { 50, 0 },          { 51, 0 },          { 52, 0 },          { 53, 0 },
	{ 54, 0 },          { 55, 0 },          { 56, 3 },          { 57, 0 },          { 58, 0 },
	{ 59, 0 },          { 60, 0 },          { 61, 0 },          { 62, 0 },          { 63, 0x7400 },
	{ 64, 0 },          { 65, 0 },          { 66, 0 },          { 67, 0 },          { 68, 0 },
	{ 69, 0 },          { 70, 0 },          { 71, 0 },          { 72, 0x3f800000 }, { 73, 0 },
	{ 76, 0x33333333 }, { 77, 0x11110000 }, { 78, 0x03020100 }, { 79, 0x03020100 },
};

/* Its words that follow the window side: 0x36034 (stride), 0x36038
 * (side), 0x36068, 0x3606c, 0x36074, 0x36078 hold the side; 0x36070,
 * 0x3607c and 0x360a4 the values below, the only two sides the corpus holds. */
static const struct {
	uint32_t side, w28, w31, w41;
} shmax_win_side[] = { { 8, 1, 0, 0x11111111 }, { 4, 0, 4, 0x11110000 } };

/* The geometry words, read once each. */
static const unsigned shmax_geometry[] = { 0, 1, 2, 4, 5, 8, 9, 10, 11, 12, 16, 17, 18, 20, 21 };

#define SHMAX_MAX_SIDE 0xffffu
#define SHMAX_WIN_LANE 0x18100800u /* the windowed variant's word 0x36080 */

enum { SHMAX_U8, SHMAX_S8, SHMAX_WIN };

int nbg_cpu_shmax_is(const cpu_uniforms *u)
{
	return u->value[3] == shmax_pinned[0].value || u->value[3] == shmax_pinned_s8[0].value;
}

/* The variant whose words the uniforms hold: the int8 format word, the
 * windowed variant's first lane word, else yolov8n's uint8 SPPF layout
 * (against which any other layout is refused). */
static int shmax_variant(const cpu_uniforms *u)
{
	if (u->value[3] == shmax_pinned_s8[0].value)
		return SHMAX_S8;
	if (u->loaded[32] == 1 && u->value[32] == SHMAX_WIN_LANE)
		return SHMAX_WIN;
	return SHMAX_U8;
}

static void shmax_refuse_word(nbg_cpu_step *s, const cpu_uniforms *u, unsigned i, uint32_t want, const char *what)
{
	nbg_cpu_refuse(s, "shmax-uniforms-unknown", "a pooling shader (layer %s) with images in the 0x%08x format "
		       "whose uniform 0x%05x is 0x%08x (loaded %d time%s): executed is %s, which loads 0x%08x "
		       "there once", s->layer, u->value[3], CPU_UNIFORM_BASE + 4 * i, u->value[i], u->loaded[i],
		       u->loaded[i] == 1 ? "" : "s", what, want);
}

/* 1 when every pinned word of the variant holds its value (and, for the
 * windowed one, the words that follow its side); else the step refused. */
static int shmax_words_hold(nbg_cpu_step *s, const cpu_uniforms *u, int variant)
{
	static const char *const what[] = { "the corpus's 5x5 max pooling (stride 1, padding 2)",
					    "the corpus's int8 5x5 max pooling (stride 1, padding 2)",
					    "the corpus's max pooling by windows of side 8 or 4 (stride the side)" };
	const shmax_pin *pin = variant == SHMAX_S8 ? shmax_pinned_s8 : variant == SHMAX_WIN ? shmax_pinned_win
											     : shmax_pinned;
	size_t npin = variant == SHMAX_S8    ? sizeof(shmax_pinned_s8) / sizeof(shmax_pinned_s8[0])
		      : variant == SHMAX_WIN ? sizeof(shmax_pinned_win) / sizeof(shmax_pinned_win[0])
					     : sizeof(shmax_pinned) / sizeof(shmax_pinned[0]);
	for (size_t k = 0; k < npin; k++) {
		unsigned i = pin[k].index;
		if (u->loaded[i] != 1 || u->value[i] != pin[k].value) {
			shmax_refuse_word(s, u, i, pin[k].value, what[variant]);
			return 0;
		}
	}
	if (variant != SHMAX_WIN)
		return 1;
	for (size_t k = 0; k < sizeof(shmax_win_side) / sizeof(shmax_win_side[0]); k++) {
		uint32_t side = shmax_win_side[k].side;
		if (u->value[14] != side)
			continue;
		const unsigned idx[] = { 13, 14, 26, 27, 29, 30, 28, 31, 41 };
		const uint32_t want[] = { side, side, side, side, side, side, shmax_win_side[k].w28,
					  shmax_win_side[k].w31, shmax_win_side[k].w41 };
		for (size_t j = 0; j < sizeof(idx) / sizeof(idx[0]); j++)
			if (u->loaded[idx[j]] != 1 || u->value[idx[j]] != want[j]) {
				shmax_refuse_word(s, u, idx[j], want[j], what[variant]);
				return 0;
			}
		return 1;
	}
	nbg_cpu_refuse(s, "shmax-uniforms-unknown", "a max pooling shader (layer %s) whose window side "
		       "(uniform 0x36038) is %u: executed are sides 8 and 4, whose lane words the corpus shows",
		       s->layer, u->value[14]);
	return 0;
}

/* The 0x10003 compilations' layout (lane words from 0x360a0 on, the words
 * 0x36034, 0x36060 and 0x36064 equal, apart from the window side):
 * refused with what is not known. */
static int shmax_is_stepped(const cpu_uniforms *u)
{
	const uint32_t *v = u->value;
	return u->loaded[40] == 1 && v[40] == SHMAX_WIN_LANE && u->loaded[13] == 1 && u->loaded[14] == 1 &&
	       u->loaded[24] == 1 && u->loaded[25] == 1 && v[24] == v[13] && v[25] == v[13] && v[13] != v[14];
}

/* 1 when the output is the input pooled by side, stride and padding, and
 * rows and slices hold the images; else the step refused. */
static int shmax_shape_ok(nbg_cpu_step *s, const uint32_t *v)
{
	uint64_t w = v[2] & 0xffff, h = v[2] >> 16, depth = v[5], side = v[14], st = v[13], pad = v[15];
	uint64_t ow = v[18] & 0xffff, oh = v[18] >> 16;
	if (w && h && depth && depth <= SHMAX_MAX_SIDE && side && st && pad < side && side <= w + 2 * pad &&
	    side <= h + 2 * pad && ow == (w + 2 * pad - side) / st + 1 && oh == (h + 2 * pad - side) / st + 1 &&
	    v[8] == w && v[9] == h && v[10] == depth && v[11] == ow && v[12] == oh && v[21] == depth &&
	    v[1] >= w && v[17] >= ow && v[4] >= v[1] * h && v[20] >= v[17] * oh)
		return 1;
	nbg_cpu_refuse(s, "shmax-shape-unsupported", "a max pooling shader (layer %s) over input 0x%08x "
		       "(height << 16 | width) depth %u (row %u, slice %u bytes), sizes %u x %u x %u, window %u "
		       "stride %u padding %u, to output %u x %u, 0x%08x depth %u (row %u, slice %u bytes): "
		       "executed is an output of (size + 2 padding - window) / stride + 1 pixels each way, rows "
		       "and slices that hold the images", s->layer, v[2], v[5], v[1], v[4], v[8], v[9], v[10],
		       v[14], v[13], v[15], v[11], v[12], v[18], v[21], v[17], v[20]);
	return 0;
}

/* A windowed pooling's geometry: input w x h x depth (rows in_row, slices
 * in_slice bytes apart), window side, stride, padding, output ow x oh
 * (out_row, out_slice). */
typedef struct shmax_geom {
	uint32_t w, h, depth, side, stride, pad, ow, oh, in_row, in_slice, out_row, out_slice;
} shmax_geom;

/* Locates the images (the output's words from out_word on) and fills the
 * step's cpu_ref; 0 with the step refused. */
static int shmax_commit(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, const cpu_uniforms *u,
			unsigned out_word, const shmax_geom *g)
{
	nbg_cmd_ref in, out;
	long ri, ro;
	if (!nbg_cpu_locate_io(p, s, operation, u, out_word, "pooling shader", &in, &out, &ri, &ro))
		return 0;
	uint64_t last;
	if ((uint64_t)g->ow * g->oh * g->depth > CPU_MAX_SCRATCH ||
	    !nbg_cpu_image_fits(p, (size_t)ri, in.offset, g->w, g->h, g->depth, g->in_row, g->in_slice, &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, g->ow, g->oh, g->depth, g->out_row, g->out_slice, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a pooling shader (layer %s) whose input "
			       "(%ux%ux%u at %s+0x%llx) or output (%ux%u at %s+0x%llx) does not lie inside its "
			       "memory, or holds more than %llu pixels", s->layer, g->w, g->h, g->depth,
			       nbg_graph_source_type_name(in.source_type), (unsigned long long)in.offset, g->ow, g->oh,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset,
			       (unsigned long long)CPU_MAX_SCRATCH);
		return 0;
	}
	cpu_ref *r = &op->u.ref;
	r->width = g->w;
	r->rows = g->h;
	r->kx = g->depth;
	r->mp.side = g->side;
	r->mp.stride = g->stride;
	r->mp.pad = g->pad;
	r->mp.out_w = g->ow;
	r->mp.out_h = g->oh;
	r->mp.mean_scale = 0;
	r->in_stride = g->in_row;
	r->in_slice = g->in_slice;
	r->out_stride = g->out_row;
	r->out_slice = g->out_slice;
	r->in_region = (size_t)ri;
	r->out_region = (size_t)ro;
	r->in_base = in.offset;
	r->out_base = out.offset;
	return 1;
}

void nbg_cpu_plan_shmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, const cpu_uniforms *u)
{
	for (size_t k = 0; k < sizeof(shmax_geometry) / sizeof(shmax_geometry[0]); k++)
		if (u->loaded[shmax_geometry[k]] != 1) {
			nbg_cpu_refuse(s, "shmax-uniforms-unknown", "a pooling shader (layer %s) with images in "
				       "the 0x444051f0 format whose state buffer loads uniform 0x%05x %d times: "
				       "once is the layout of the corpus's max pooling", s->layer,
				       CPU_UNIFORM_BASE + 4 * shmax_geometry[k], u->loaded[shmax_geometry[k]]);
			return;
		}
	const uint32_t *v = u->value;
	if (shmax_is_stepped(u)) {
		nbg_cpu_refuse(s, "shmax-uniforms-unknown", "a pooling shader (layer %s) with window side %u "
			       "(uniform 0x36038) and %u in 0x36034, 0x36060 and 0x36064, lane words from 0x360a0 on: "
			       "where the network's target-0x7d compilation pools the same layer it holds the side "
			       "in all three (a stride of the side); whether this shader steps %u pixels is not "
			       "established (a board's output of this layer would settle it)",
			       s->layer, v[14], v[13], v[13]);
		return;
	}
	if (u->loaded[15] == 1 && v[15] == v[3]) {
		nbg_cpu_refuse(s, "shmax-uniforms-unknown", "a pooling shader (layer %s) with images in the "
			       "0x%08x format whose output image lies at 0x36030 (its format word in 0x3603c, as the "
			       "average pooling shader's layout has it), float 0x%08x in 0x36024 where a scale "
			       "would go: not the max pooling's layout, and this layout's meaning is not "
			       "established (a board's output of this layer would settle it)",
			       s->layer, v[3], v[9]);
		return;
	}
	int variant = shmax_variant(u);
	if (!shmax_words_hold(s, u, variant) || !shmax_shape_ok(s, v))
		return;
	const shmax_geom g = { v[2] & 0xffff, v[2] >> 16, v[5], v[14], v[13], v[15], v[18] & 0xffff, v[18] >> 16,
			       v[1], v[4], v[17], v[20] };
	if (!shmax_commit(p, s, op, operation, u, 16, &g))
		return;
	op->u.ref.in_flip = variant == SHMAX_S8 ? 0x80 : 0;
	snprintf(s->what, sizeof(s->what), "SH max pool %ux%u stride %u pad %u, %ux%ux%u -> %ux%u %s", v[14] % 100000,
		 v[14] % 100000, v[13] % 100000, v[15] % 100000, g.w, g.h, g.depth, g.ow, g.oh,
		 variant == SHMAX_S8 ? "int8" : "uint8");
	nbg_cpu_ref_executed(s, op, CPU_OP_SHMAX, CPU_REF_MAXPOOL);
}

/* The average pooling shader by windows (the 0x7d and 0xe8 face-age files'
 * ops 52, 70 and 27, 41; doc/cpu-backend.md, "The average pooling by
 * windows"): the images as the average shader's layout has them (input
 * 0x36000.., output 0x36030..), depth > 1, 0x36050 and 0x36054 the window
 * side and the stride (equal), 0x36020 the covered side (out x side), the
 * float32 0x36028 the scale s_in / (side^2 s_out), 0x36024 and 0x3602c 0
 * (the zero points' terms, both zero points 0), padding words 0x36058,
 * 0x3605c 0: out = round(sum of the window x scale), saturated. */
void nbg_cpu_plan_shavg(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, const cpu_uniforms *u)
{
	static const unsigned used[] = { 0, 1, 2, 4, 5, 8, 9, 10, 11, 12, 13, 14, 16, 17, 20, 21, 22, 23 };
	const uint32_t *v = u->value;
	if (v[20] == 0 && v[21] && v[22] == v[21] && v[23] && v[23] != v[21]) {
		nbg_cpu_refuse(s, "pool-shape-unsupported", "a pooling shader (layer %s) averaging by windows in "
			       "the 0x10003 compilations' layout: window side %u (uniform 0x3605c) and %u in 0x36054, "
			       "0x36058, %u pixels covered (0x36020), float 0x%08x in 0x36024: where the network's "
			       "target-0x7d compilation pools the same layer it holds the side as the stride; "
			       "whether this shader steps %u pixels is not established (a board's output of this "
			       "layer would settle it)", s->layer, v[23], v[21], v[8], v[9], v[21]);
		return;
	}
	const shmax_geom g = { v[2] & 0xffff, v[2] >> 16, v[5], v[20], v[21], 0, v[14] & 0xffff, v[14] >> 16,
			       v[1], v[4], v[13], v[16] };
	int ok = g.side && g.side == g.stride && g.side <= g.w && g.side <= g.h && g.depth <= SHMAX_MAX_SIDE &&
		 g.ow == (g.w - g.side) / g.stride + 1 && g.oh == (g.h - g.side) / g.stride + 1 && g.ow == g.oh &&
		 v[8] == g.ow * g.side && v[9] == 0 && v[11] == 0 && v[22] == 0 && v[23] == 0 &&
		 v[17] == g.depth && v[1] >= g.w && v[13] >= g.ow && v[4] >= (uint64_t)v[1] * g.h &&
		 v[16] >= (uint64_t)v[13] * g.oh;
	for (size_t k = 0; k < sizeof(used) / sizeof(used[0]); k++)
		ok = ok && u->loaded[used[k]] == 1;
	float scale = nbg_cpu_f32_of(v[10]);
	if (!ok || !isfinite(scale) || !(scale > 0) || scale > 1.0f) {
		nbg_cpu_refuse(s, "pool-shape-unsupported", "a pooling shader (layer %s) averaging by windows: "
			       "input 0x%08x (height << 16 | width) depth %u, %u pixels covered (uniform 0x36020), "
			       "0x%x and 0x%x in 0x36050, 0x36054 (window side and stride), 0x%x and 0x%x in "
			       "0x36058, 0x3605c, 0x%x and 0x%x in 0x36024, 0x3602c, float 0x%08x in 0x36028, "
			       "output 0x%08x depth %u: executed are a window side equal to the stride that "
			       "tiles out x side pixels, zero words 0x36024, 0x3602c, 0x36058, 0x3605c (zero "
			       "points 0, no padding) and a scale in (0, 1], each word loaded once (the 0x7d and "
			       "0xe8 face-age files' layout)", s->layer, v[2], v[5], v[8], v[20], v[21], v[22],
			       v[23], v[9], v[11], v[10], v[14], v[17]);
		return;
	}
	if (!shmax_commit(p, s, op, operation, u, 12, &g))
		return;
	op->u.ref.in_flip = 0;
	op->u.ref.mp.mean_scale = scale;
	snprintf(s->what, sizeof(s->what), "SH average pool %ux%u stride %u, %ux%ux%u -> %ux%u uint8",
		 g.side % 100000, g.side % 100000, g.stride % 100000, g.w, g.h, g.depth, g.ow, g.oh);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHMAX, CPU_REF_MAXPOOL);
}

/* Its steps (every output pixel's window, then the copy out) and the image
 * it allocates. */
static void shmax_cost_ref(const cpu_ref *r, uint64_t *work, uint64_t *scratch)
{
	*scratch = nbg_cpu_mul_sat((uint64_t)r->mp.out_w * r->mp.out_h, r->kx);
	*work = nbg_cpu_mul_sat(*scratch, nbg_cpu_add_sat((uint64_t)r->mp.side * r->mp.side, 1));
}

/* The first and last pixel of the window that starts at o x stride - pad,
 * clipped to n pixels (the shape check keeps it non-empty). */
static void shmax_span(const cpu_ref *r, uint32_t o, uint32_t n, uint32_t *lo, uint32_t *hi)
{
	uint64_t a = (uint64_t)o * r->mp.stride, b = a + r->mp.side - 1;
	*lo = a < r->mp.pad ? 0 : (uint32_t)(a - r->mp.pad);
	*hi = b - r->mp.pad >= n ? n - 1 : (uint32_t)(b - r->mp.pad);
}

/* The average's output: the window's sum times the scale (float32, the
 * product in double), rounded half to even, saturated to 0..255. */
static uint8_t shavg_value(uint64_t sum, float scale)
{
	double v = nbg_cpu_round_half_even((double)sum * (double)scale);
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* The pooled image is computed whole before it is written: the output may
 * overlap the input.  -1 when out of memory. */
static int shmax_run_ref(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	uint32_t ow = r->mp.out_w, oh = r->mp.out_h, depth = r->kx;
	uint8_t *img = malloc((size_t)ow * oh * depth);
	if (!img)
		return -1;
	uint8_t *d = img;
	for (uint32_t c = 0; c < depth; c++) {
		const uint8_t *plane = in + (uint64_t)c * r->in_slice;
		for (uint32_t y = 0; y < oh; y++) {
			uint32_t y0, y1;
			shmax_span(r, y, r->rows, &y0, &y1);
			for (uint32_t x = 0; x < ow; x++) {
				uint32_t x0, x1;
				shmax_span(r, x, r->width, &x0, &x1);
				uint8_t m = 0; /* int8: compared by value, the bytes ^ 0x80 */
				uint64_t sum = 0;
				for (uint32_t yy = y0; yy <= y1; yy++)
					for (uint32_t xx = x0; xx <= x1; xx++) {
						uint8_t px = plane[(uint64_t)yy * r->in_stride + xx] ^ r->in_flip;
						m = px > m ? px : m;
						sum += px;
					}
				*d++ = r->mp.mean_scale > 0 ? shavg_value(sum, r->mp.mean_scale) : (uint8_t)(m ^ r->in_flip);
			}
		}
	}
	d = img;
	for (uint32_t c = 0; c < depth; c++)
		for (uint32_t y = 0; y < oh; y++, d += ow)
			memcpy(out + (uint64_t)c * r->out_slice + (uint64_t)y * r->out_stride, d, ow);
	free(img);
	return 0;
}

static int shmax_run(const cpu_op *op, uint8_t *const *buf)
{
	return shmax_run_ref(&op->u.ref, buf);
}

static void shmax_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	shmax_cost_ref(&op->u.ref, work, scratch);
}

/* No match: a PoolingLayer2's plan (ops/shpool.c) tells this pool from the
 * average by its uniforms and hands it to nbg_cpu_plan_shmax. */
const cpu_op_def nbg_cpu_op_shmax = { "sh-maxpool", NULL, NULL, shmax_run, shmax_cost };

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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"

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

/* The geometry words, read once each. */
static const unsigned shmax_geometry[] = { 0, 1, 2, 4, 5, 8, 9, 10, 11, 12, 16, 17, 18, 20, 21 };

#define SHMAX_SIDE 5
#define SHMAX_PAD 2
#define SHMAX_MAX_SIDE 0xffffu

int nbg_cpu_shmax_is(const cpu_uniforms *u)
{
	return u->value[3] == shmax_pinned[0].value || u->value[3] == shmax_pinned_s8[0].value;
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
	int s8 = u->value[3] == shmax_pinned_s8[0].value;
	const shmax_pin *pin = s8 ? shmax_pinned_s8 : shmax_pinned;
	size_t npin = s8 ? sizeof(shmax_pinned_s8) / sizeof(shmax_pinned_s8[0])
			 : sizeof(shmax_pinned) / sizeof(shmax_pinned[0]);
	for (size_t k = 0; k < npin; k++) {
		unsigned i = pin[k].index;
		if (u->loaded[i] != 1 || u->value[i] != pin[k].value) {
			nbg_cpu_refuse(s, "shmax-uniforms-unknown", "a pooling shader (layer %s) with images in "
				       "the 0x%08x format whose uniform 0x%05x is 0x%08x (loaded %d time%s): "
				       "executed is the corpus's max pooling, which loads 0x%08x there once (5x5 "
				       "windows, stride 1, padding 2, no requantization)", s->layer, pin[0].value,
				       CPU_UNIFORM_BASE + 4 * i, u->value[i], u->loaded[i], u->loaded[i] == 1 ? "" : "s",
				       pin[k].value);
			return;
		}
	}
	const uint32_t *v = u->value;
	uint32_t w = v[2] & 0xffff, h = v[2] >> 16, depth = v[5];
	/* the output as large as the input: stride 1 and padding 2 on each side
	 * of a 5-pixel window */
	if (w == 0 || h == 0 || depth == 0 || depth > SHMAX_MAX_SIDE || v[8] != w || v[9] != h || v[10] != depth ||
	    v[11] != w || v[12] != h || v[18] != v[2] || v[21] != depth || v[1] < w || v[17] < w ||
	    v[4] < (uint64_t)v[1] * h || v[20] < (uint64_t)v[17] * h) {
		nbg_cpu_refuse(s, "shmax-shape-unsupported", "a max pooling shader (layer %s) over input 0x%08x "
			       "(height << 16 | width) depth %u (row %u, slice %u bytes), sizes %u x %u x %u, to "
			       "output %u x %u, 0x%08x depth %u (row %u, slice %u bytes): executed is an output "
			       "the input's size, rows and slices that hold them", s->layer, v[2], depth, v[1],
			       v[4], v[8], v[9], v[10], v[11], v[12], v[18], v[21], v[17], v[20]);
		return;
	}
	nbg_cmd_ref in, out;
	long ri, ro;
	if (!nbg_cpu_locate_io(p, s, operation, u, 16, "max pooling shader", &in, &out, &ri, &ro))
		return;
	uint64_t last;
	if ((uint64_t)w * h * depth > CPU_MAX_SCRATCH ||
	    !nbg_cpu_image_fits(p, (size_t)ri, in.offset, w, h, depth, v[1], v[4], &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, w, h, depth, v[17], v[20], &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a max pooling shader (layer %s) whose input "
			       "(%ux%ux%u at %s+0x%llx) or output (at %s+0x%llx) does not lie inside its memory, "
			       "or holds more than %llu pixels", s->layer, w, h, depth,
			       nbg_graph_source_type_name(in.source_type), (unsigned long long)in.offset,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset,
			       (unsigned long long)CPU_MAX_SCRATCH);
		return;
	}
	cpu_ref *r = &op->u.ref;
	r->width = w;
	r->rows = h;
	r->kx = depth;
	r->in_stride = v[1];
	r->in_slice = v[4];
	r->out_stride = v[17];
	r->out_slice = v[20];
	r->in_region = (size_t)ri;
	r->out_region = (size_t)ro;
	r->in_base = in.offset;
	r->out_base = out.offset;
	r->in_flip = s8 ? 0x80 : 0;
	snprintf(s->what, sizeof(s->what), "SH max pool %ux%u stride 1 pad %u, %ux%ux%u %s", SHMAX_SIDE,
		 SHMAX_SIDE, SHMAX_PAD, w, h, depth, s8 ? "int8" : "uint8");
	nbg_cpu_ref_executed(s, op, CPU_OP_SHMAX, CPU_REF_MAXPOOL);
}

/* Its steps (every pixel's window, then the copy out) and the image it
 * allocates. */
static void shmax_cost_ref(const cpu_ref *r, uint64_t *work, uint64_t *scratch)
{
	*scratch = nbg_cpu_mul_sat((uint64_t)r->width * r->rows, r->kx);
	*work = nbg_cpu_mul_sat(*scratch, SHMAX_SIDE * SHMAX_SIDE + 1);
}

/* The pooled image is computed whole before it is written: the output may
 * overlap the input.  -1 when out of memory. */
static int shmax_run_ref(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	uint32_t w = r->width, h = r->rows, depth = r->kx;
	uint8_t *img = malloc((size_t)w * h * depth);
	if (!img)
		return -1;
	uint8_t *d = img;
	for (uint32_t c = 0; c < depth; c++) {
		const uint8_t *plane = in + (uint64_t)c * r->in_slice;
		for (uint32_t y = 0; y < h; y++) {
			uint32_t y0 = y < SHMAX_PAD ? 0 : y - SHMAX_PAD;
			uint32_t y1 = y + SHMAX_PAD >= h ? h - 1 : y + SHMAX_PAD;
			for (uint32_t x = 0; x < w; x++) {
				uint32_t x0 = x < SHMAX_PAD ? 0 : x - SHMAX_PAD;
				uint32_t x1 = x + SHMAX_PAD >= w ? w - 1 : x + SHMAX_PAD;
				uint8_t m = 0; /* int8: compared by value, the bytes ^ 0x80 */
				for (uint32_t yy = y0; yy <= y1; yy++)
					for (uint32_t xx = x0; xx <= x1; xx++) {
						uint8_t px = plane[(uint64_t)yy * r->in_stride + xx] ^ r->in_flip;
						m = px > m ? px : m;
					}
				*d++ = m ^ r->in_flip;
			}
		}
	}
	d = img;
	for (uint32_t c = 0; c < depth; c++)
		for (uint32_t y = 0; y < h; y++, d += w)
			memcpy(out + (uint64_t)c * r->out_slice + (uint64_t)y * r->out_stride, d, w);
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

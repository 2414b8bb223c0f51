/*
 * ops/softmax.c - the softmax of a Softmax2Layer, an SH (shader)
 * operation: shader code is not decoded, so none is executed from it; this
 * kind is identified by its layer and the I/O its state buffer loads, and
 * runs a reference implementation labelled as such
 * (nbg_cpu_step.reference).  doc/cpu-backend.md ("SH and SW operations")
 * gives each rule below with its evidence.
 *
 * A Softmax2Layer's state buffer (the LOAD_STATE stream its state_id
 * names) loads the shader's uniforms at 0x36000 on:
 *   0x36000..0x3600c  input image: address (patched), row stride in bytes,
 *                     height << 16 | width, format word 0x444041f0 (uint8)
 *   0x36010, 0x36014  input slice bytes, depth
 *   0x36020..0x3602c  output image likewise, format word 0x44404071 (fp16)
 *   0x36030, 0x36034  output slice bytes, depth
 *   0x36040           width (int)
 *   0x36044           width rounded down to a multiple of 4 (int)
 *   0x36048           float32: the input scale times log2(e)
 * That is the row softmax.  The pair softmax (two classes per anchor or
 * per image: the gender and face detection files) loads instead
 *   0x36040           float32: the input scale times log2(e)
 *   0x36044           float32 1.0
 *   0x36048           0
 * and selects the even and the odd values of each 8 (0x36058, 0x3605c:
 * halfwords 0, 2, 4, 6; 0x36098, 0x3609c: 1, 3, 5, 7) where the row softmax
 * reads them in order; it normalises each pair of adjacent values.
 * The pair softmax of the 0x10003 files (layer SoftMax2: the 0xa1 face
 * detector) is another shader: its images are two values wide, one pair
 * a row (0x36004 2 bytes, 0x36008 pairs << 16 | 2; the output's rows 4
 * bytes), in the formats 0x444051f0 (uint8) and 0x44405071 (fp16), its
 * scale times log2(e) at 0x36114; every other word from 0x36040 to
 * 0x3613c holds the one value the corpus's three hold (softmax_column).
 * The softmax needs no zero point: exp((x - max) * scale) cancels it.
 */
#include <math.h>
#include <stdio.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

/* Uniform words the softmax reads (0x36000 + 4 * i; loaded more than once:
 * refused). */
#define REF_SOFTMAX_UNIFORMS 19
#define REF_FMT_UINT8 0x444041f0u
#define REF_FMT_INT8 0x44404130u /* retinaface's pair softmax: its producer's output is int8 */
#define REF_FMT_FP16 0x44404071u
#define REF_FMT_UINT8_B 0x444051f0u /* the column pair softmax's images (0x10003) */
#define REF_FMT_FP16_B 0x44405071u
/* The column pair softmax's scale uniform (0x36114), and the values of
 * words 16.. (0x36040..0x3613c) but that one: the 0xa1 face detector's
 * three SoftMax2 shaders load these (lane and selection tables). */
#define REF_COLUMN_SCALE 69
#define REF_COLUMN_FIRST 16
static const uint32_t column_pinned[CPU_UNIFORMS - REF_COLUMN_FIRST] = {
	0x00333333, 0x00000000, 0x09060300, 0x00000d0c, 0x00000000, 0x00000000,
	0x00000000, 0x00004400, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
	0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000002, 0x00000000,
	0x00000002, 0x0000000f, 0x01010101, 0x00000000, 0x00020000, 0x00060004,
	0x02020202, 0x00000000, 0x00000000, 0x00000400, 0x00000001, 0x00000000,
	0x00000001, 0x00000000, 0x00000001, 0x00000000, 0x00000001, 0x00000000,
	0x33333333, 0x11110000, 0x03020100, 0x03020100, 0x00000000, 0x00000000,
	0x00000000, 0x00002400, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
	0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x0000000f, 0x00000000,
	0x00000003, 0x3f800000, 0x0b0b0b0b, 0x04040404, 0x00010000, 0x00030002,
	0x08080808, 0x00000000, 0x00000000, 0x00007400,
};
/* Widths above this are refused (work-limit); the corpus's: 7 and 10. */
#define REF_MAX_WIDTH (1u << 20)
/* An output record's format, FP16 (nbg_data_format_name). */
#define REF_FORMAT_FP16 1u

/* The softmax's form from its uniforms (the header above): the values per
 * softmax (0: the whole row; 2: each pair) and the word holding the scale
 * times log2(e) (its index in u); -1 when neither layout fits. */
/* The column pair softmax (the header above): 1 when u is its layout, 0
 * when its images are in other format words, -1 when they are in its
 * words but uniform *bad holds another value than *want (or is loaded
 * other than once). */
static int softmax_column(const cpu_uniforms *u, size_t *bad, uint32_t *want)
{
	if (u->value[3] != REF_FMT_UINT8_B || u->value[11] != REF_FMT_FP16_B)
		return 0;
	static const size_t geo[] = { 1, 9 };
	static const uint32_t geo_want[] = { 2, 4 };
	for (size_t k = 0; k < 2; k++)
		if (u->value[geo[k]] != geo_want[k]) {
			*bad = geo[k];
			*want = geo_want[k];
			return -1;
		}
	if ((u->value[2] & 0xffff) != 2) {
		*bad = 2;
		*want = (u->value[2] & 0xffff0000u) | 2;
		return -1;
	}
	for (size_t i = REF_COLUMN_FIRST; i < CPU_UNIFORMS; i++)
		if (i != REF_COLUMN_SCALE && (u->loaded[i] != 1 || u->value[i] != column_pinned[i - REF_COLUMN_FIRST])) {
			*bad = i;
			*want = column_pinned[i - REF_COLUMN_FIRST];
			return -1;
		}
	*bad = REF_COLUMN_SCALE;
	*want = u->value[REF_COLUMN_SCALE];
	return u->loaded[REF_COLUMN_SCALE] == 1 ? 1 : -1;
}

static int softmax_form(const cpu_uniforms *u, uint32_t w, size_t *scale_at)
{
	size_t bad;
	uint32_t want;
	if (softmax_column(u, &bad, &want) == 1) {
		*scale_at = REF_COLUMN_SCALE;
		return 2;
	}
	if (u->value[16] == w && u->value[17] == (w & ~3u)) {
		*scale_at = 18;
		return 0;
	}
	static const size_t sel[] = { 22, 23, 38, 39 };
	static const uint32_t pairs[] = { 0x20000u, 0x60004u, 0x30001u, 0x70005u };
	for (size_t k = 0; k < 4; k++)
		if (u->loaded[sel[k]] != 1 || u->value[sel[k]] != pairs[k])
			return -1;
	if (u->value[17] != 0x3f800000u || u->value[18] != 0 || w % 2)
		return -1;
	*scale_at = 16;
	return 2;
}

static void plan_softmax(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, operation, "softmax", &u))
		return;
	for (size_t j = 0; j < REF_SOFTMAX_UNIFORMS; j++)
		if (u.loaded[j] > 1 || (!u.loaded[j] && j != 7 && j != 15 && j != 6 && j != 14)) {
			nbg_cpu_refuse(s, "softmax-uniforms-unknown", "a softmax (layer %s) whose state buffer "
				       "loads uniform 0x%05zx %d times (once is the layout of every softmax "
				       "in the corpus)", s->layer, CPU_UNIFORM_BASE + 4 * j, u.loaded[j]);
			return;
		}
	uint32_t w = u.value[2] & 0xffff, h = u.value[2] >> 16;
	size_t bad = 0;
	uint32_t want = 0;
	int column = softmax_column(&u, &bad, &want);
	if (column < 0) {
		nbg_cpu_refuse(s, "softmax-uniforms-unknown", "a softmax (layer %s) with images in the formats "
			       "0x%08x and 0x%08x whose uniform 0x%05zx is 0x%08x (loaded %d time%s): executed is the "
			       "column pair softmax, which loads 0x%08x there once", s->layer, REF_FMT_UINT8_B,
			       REF_FMT_FP16_B, CPU_UNIFORM_BASE + 4 * bad, u.value[bad], u.loaded[bad],
			       u.loaded[bad] == 1 ? "" : "s", want);
		return;
	}
	if (column) {
		/* one pair a row, rows 2 and 4 bytes apart: the pairs side by side */
		w = 2 * h;
		h = 1;
	}
	if (!column && ((u.value[3] != REF_FMT_UINT8 && u.value[3] != REF_FMT_INT8) || u.value[11] != REF_FMT_FP16)) {
		nbg_cpu_refuse(s, "softmax-format-unsupported", "a softmax (layer %s) with image format words "
			       "0x%08x (input) and 0x%08x (output): executed are 0x%08x (uint8) and 0x%08x (int8) "
			       "to 0x%08x (fp16)", s->layer, u.value[3], u.value[11], REF_FMT_UINT8, REF_FMT_INT8,
			       REF_FMT_FP16);
		return;
	}
	const char *tn = u.value[3] == REF_FMT_INT8 ? "int8" : "uint8";
	size_t at = 0;
	int group = softmax_form(&u, w, &at);
	if (h != 1 || u.value[5] != 1 || u.value[10] != u.value[2] || u.value[13] != 1 || w == 0 ||
	    group < 0 || (!column && (u.value[1] < w || u.value[9] < 2ull * w))) {
		nbg_cpu_refuse(s, "softmax-shape-unsupported", "a softmax (layer %s) over %ux%u depth %u to "
			       "0x%08x depth %u, uniforms 0x36040-8 0x%x 0x%x 0x%x: executed is one row of "
			       "width w, with w, w & ~3, the scale (row) or the scale, 1.0, 0 and an even/odd "
			       "selection (pair), or rows of one pair (SoftMax2)", s->layer, w, h, u.value[5], u.value[10], u.value[13],
			       u.value[16], u.value[17], u.value[18]);
		return;
	}
	if (w > REF_MAX_WIDTH) {
		nbg_cpu_refuse(s, "work-limit", "a softmax (layer %s) over %u values, above the limit of %u",
			       s->layer, w, REF_MAX_WIDTH);
		return;
	}
	float scale = nbg_cpu_f32_of(u.value[at]);
	if (!isfinite(scale) || !(scale > 0)) {
		nbg_cpu_refuse(s, "softmax-scale-invalid", "a softmax (layer %s) whose scale uniform 0x%05zx "
			       "is 0x%08x, not a finite positive float32", s->layer, CPU_UNIFORM_BASE + 4 * at,
			       u.value[at]);
		return;
	}
	nbg_cmd_ref in, out;
	long ri, ro;
	if (!nbg_cpu_locate_io(p, s, operation, &u, 8, "softmax", &in, &out, &ri, &ro))
		return;
	if (out.source_type == NBG_GRAPH_SRC_OUTPUT) {
		const nbg_io *io = nbg_model_output_at(p->m, (size_t)out.index);
		const char *fn = io ? nbg_data_format_name(io->data_format) : NULL;
		if (!io || io->data_format != REF_FORMAT_FP16) {
			nbg_cpu_refuse(s, "softmax-format-unsupported", "a softmax (layer %s) writing output %d "
				       "whose record's format is %s, not the FP16 its image format word says",
				       s->layer, out.index, fn ? fn : "unknown");
			return;
		}
	}
	uint64_t last;
	if (!nbg_cpu_image_fits(p, (size_t)ri, in.offset, w, 1, 1, u.value[1], u.value[4], &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, 2ull * w, 1, 1, u.value[9], u.value[12], &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a softmax (layer %s) whose input (%u bytes at "
			       "%s+0x%llx) or output (%u bytes at %s+0x%llx) does not lie inside its memory",
			       s->layer, w, nbg_graph_source_type_name(in.source_type),
			       (unsigned long long)in.offset, 2 * w,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset);
		return;
	}
	r->width = w;
	r->group = (uint32_t)group;
	r->scale_log2e = scale;
	r->in_region = (size_t)ri;
	r->out_region = (size_t)ro;
	r->in_base = in.offset;
	r->out_base = out.offset;
	r->in_flip = u.value[3] == REF_FMT_INT8 ? 0x80 : 0;
	if (group)
		snprintf(s->what, sizeof(s->what), "SH softmax over %u pairs %s -> fp16, scale*log2(e) "
			 "%.9g", w / 2, tn, (double)scale);
	else
		snprintf(s->what, sizeof(s->what), "SH softmax %u %s -> fp16, scale*log2(e) %.9g", w, tn,
			 (double)scale);
	nbg_cpu_ref_executed(s, op, CPU_OP_SOFTMAX, CPU_REF_SOFTMAX);
}


/* One softmax over n uint8 values (int8 ones: their bytes ^ flip) into n
 * fp16 values; with flush, results below the normal range are written as
 * zero. */
static void softmax_one(const uint8_t *in, uint8_t *out, uint32_t n, double scale_log2e, int flush,
			uint8_t flip)
{
	uint8_t mx = 0;
	for (uint32_t x = 0; x < n; x++)
		mx = (in[x] ^ flip) > mx ? in[x] ^ flip : mx;
	double sum = 0;
	for (uint32_t x = 0; x < n; x++)
		sum += exp2(((double)(in[x] ^ flip) - mx) * scale_log2e);
	for (uint32_t x = 0; x < n; x++) {
		double v = exp2(((double)(in[x] ^ flip) - mx) * scale_log2e) / sum; /* in [0, 1] */
		uint16_t hv = v > 0 ? nbg_fp16_from_double(v) : 0;
		if (flush && !(hv & 0x7c00))
			hv = 0;
		out[2 * x] = (uint8_t)hv;
		out[2 * x + 1] = (uint8_t)(hv >> 8);
	}
}


void nbg_cpu_softmax_run(const cpu_ref *r, uint8_t *const *buf, int flush)
{
	const uint8_t *in = buf[r->in_region] + r->in_base;
	uint8_t *out = buf[r->out_region] + r->out_base;
	uint32_t g = r->group ? r->group : r->width;
	for (uint32_t x = 0; x + g <= r->width; x += g)
		softmax_one(in + x, out + 2ull * x, g, r->scale_log2e, flush, r->in_flip);
}

static int softmax_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_SOFTMAX2;
}

static void softmax_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_softmax(p, s, op, m->operation);
}

static int softmax_run(const cpu_op *op, uint8_t *const *buf)
{
	/* the SH softmax writes results below fp16's normal range as zero:
	 * what the V853 board wrote for LeNet's eight smallest outputs
	 * (1e-5 .. 6e-5; ../shared/goldens, test board-goldens) */
	nbg_cpu_softmax_run(&op->u.ref, buf, 1);
	return 0;
}

/* The maximum, the sum, the quotients: a step per value each. */
static void softmax_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = nbg_cpu_mul_sat(3, op->u.ref.width);
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_softmax = { "softmax", softmax_match, softmax_plan, softmax_run, softmax_cost };

/*
 * ops/shf32.c - the ReLU of an ActivationLayer SH operation and the 2x2
 * max pooling of a Max Pooling SH operation on float32 images (the TIM-VX
 * fp32 file, v1/1001e_ba_conv2d_relu_maxpool2d_fp32.nb), computed by
 * reference semantics from their uniforms and I/O (nbg_cpu_step.reference).
 *
 * Neither function is in the uniforms: they hold the two images and, for
 * the pooling, two plane heights.  What each computes is the program's, so
 * a step is this kind's only where its program (the PPU_INSTR_TABLE entry
 * its SH record names) is, byte for byte by size and CRC-32, one of the
 * two read by hand (shf32_programs); any other program stays the generic
 * shader refusal (ops/shader.c).  doc/cpu-backend.md ("The fp32 shaders")
 * gives each rule below with its evidence.
 *
 * ReLU: 0x36000..0x3601c input, 0x36020..0x3603c output: address
 * (patched), row stride, height << 16 | width, 0x44404032 (one float32 an
 * element), slice, depth 1, 0, 0, both of one shape; out = x > 0 ? x : +0.
 * Max pooling: the same two images in 0x32101034 (four float32 an
 * element), 0x36040 the input's plane height, 0x36044 the output's (half
 * of it), rows of every plane one after the other; out[y][x] = the largest
 * of in[2y + j][2x + i], i, j < 2.  Anything else is refused with an
 * shf32-* id.
 */
#include <stdio.h>
#include <string.h>

#include "common/hash.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"

#define SHF32_PLANE 0x44404032u /* one float32 an element */
#define SHF32_X4 0x32101034u    /* four float32 an element */

/* The programs read by hand (doc/cpu-backend.md, "The fp32 shaders"). */
static const struct {
	int layer;                      /* enum cpu_layer */
	uint32_t size, crc;
	int ref_kind;                   /* CPU_REF_RELU or CPU_REF_MAXPOOL */
} shf32_programs[] = {
	{ CPU_LAYER_ACTIVATION, 48, 0x2c3e84e5u, CPU_REF_RELU },
	{ CPU_LAYER_MAX_POOLING, 272, 0x8222e8f3u, CPU_REF_MAXPOOL },
};

/* The shf32_programs row whose program SH operation `operation` runs, or
 * -1. */
static int shf32_program(const nbg_cpu_plan *p, size_t operation, int layer)
{
	const nbg_graph_operation *op = nbg_graph_operation_at(p->g, operation);
	const nbg_graph_sh_operation *sh = op ? nbg_graph_sh_operation_at(p->g, op->index) : NULL;
	int t = nbg_graph_summary_of(p->g)->instr_table;
	const nbg_graph_table *tab = t >= 0 ? nbg_graph_table_at(p->g, (size_t)t) : NULL;
	const nbg_graph_table_entry *e = sh && tab ? nbg_graph_table_entry_at(p->g, (size_t)t, sh->instr_index)
					   : NULL;
	if (!e || !e->in_bounds)
		return -1;
	const uint8_t *code = nbg_model_data(p->m) + tab->data_offset + e->offset;
	for (size_t i = 0; i < sizeof(shf32_programs) / sizeof(shf32_programs[0]); i++)
		if (shf32_programs[i].layer == layer && shf32_programs[i].size == e->size &&
		    nbg_crc32(0, code, e->size) == shf32_programs[i].crc)
			return (int)i;
	return -1;
}

static int shf32_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	return m->type == NBG_GRAPH_OP_SH &&
	       (m->layer == CPU_LAYER_ACTIVATION || m->layer == CPU_LAYER_MAX_POOLING) &&
	       shf32_program(p, m->operation, m->layer) >= 0;
}

/* Whether the uniforms are two images at 0x36000 and 0x36020 in format
 * fmt, depth 1, last two words 0, and `extra` words after them, each word
 * up to there loaded once and every other 0 where loaded. */
static int shf32_layout(const cpu_uniforms *u, uint32_t fmt, unsigned extra)
{
	const uint32_t *v = u->value;
	for (unsigned j = 0; j < CPU_UNIFORMS; j++)
		if (j < 16 + extra ? u->loaded[j] != 1 : u->loaded[j] > 1 || (u->loaded[j] && v[j]))
			return 0;
	for (unsigned j = 0; j < 16; j += 8)
		if (v[j + 3] != fmt || v[j + 5] != 1 || v[j + 6] || v[j + 7] || !(v[j + 2] & 0xffff) || !(v[j + 2] >> 16))
			return 0;
	return 1;
}

/* The images' sizes into r (elt.x values wide, elt.y rows: the output's),
 * 0 with the step refused. */
static int shf32_shape(nbg_cpu_step *s, const cpu_uniforms *u, int kind, cpu_ref *r)
{
	const uint32_t *v = u->value;
	uint32_t iw = v[2] & 0xffff, ih = v[2] >> 16, ow = v[10] & 0xffff, oh = v[10] >> 16;
	if (kind == CPU_REF_RELU) {
		r->elt.x = ow;
		r->elt.y = oh;
		if (iw == ow && ih == oh && 4ull * iw <= v[1] && 4ull * ow <= v[9])
			return 1;
	} else {
		/* widths count four values; every plane of v[16] rows pooled into v[17] */
		r->elt.x = 4 * ow;
		r->elt.y = oh;
		if (iw == 2 * ow && ih == 2 * oh && v[16] == 2 * v[17] && v[17] && oh % v[17] == 0 &&
		    16ull * iw <= v[1] && 16ull * ow <= v[9])
			return 1;
	}
	nbg_cpu_refuse(s, "shf32-shape-unsupported", "an fp32 %s shader (layer %s): input %u x %u, output %u x "
		       "%u, row strides %u, %u%s: executed is %s", kind == CPU_REF_RELU ? "ReLU" : "max pooling",
		       s->layer, iw, ih, ow, oh, v[1], v[9], kind == CPU_REF_RELU ? "" : " (widths in four values)",
		       kind == CPU_REF_RELU ? "one shape, rows of at least width values"
					    : "the output half the input each way, uniform 0x36040 twice 0x36044, "
					      "the output's rows a whole number of its planes");
	return 0;
}

static void shf32_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	cpu_ref *r = &op->u.ref;
	int kind = shf32_programs[shf32_program(p, m->operation, m->layer)].ref_kind;
	const char *what = kind == CPU_REF_RELU ? "fp32 ReLU shader" : "fp32 max pooling shader";
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, m->operation, what, &u))
		return;
	if (!shf32_layout(&u, kind == CPU_REF_RELU ? SHF32_PLANE : SHF32_X4, kind == CPU_REF_RELU ? 0 : 2)) {
		nbg_cpu_refuse(s, "shf32-uniforms-unknown", "an %s (layer %s) whose program is the one read, but "
			       "whose uniforms are not its layout (0x36000..0x%05x loaded once, two images in "
			       "format 0x%08x of depth 1 whose last two words are 0, the rest 0 where loaded): "
			       "format words 0x%08x, 0x%08x", what, s->layer,
			       CPU_UNIFORM_BASE + (kind == CPU_REF_RELU ? 0x3c : 0x44),
			       kind == CPU_REF_RELU ? SHF32_PLANE : SHF32_X4, u.value[3], u.value[11]);
		return;
	}
	if (!shf32_shape(s, &u, kind, r))
		return;
	nbg_cmd_ref in, out;
	long ri, ro;
	uint64_t last, w = r->elt.x, h = r->elt.y, f = kind == CPU_REF_RELU ? 1 : 2;
	if (!nbg_cpu_locate_io(p, s, m->operation, &u, 8, what, &in, &out, &ri, &ro))
		return;
	r->elt.row[0] = u.value[1];
	r->elt.row[2] = u.value[9];
	if (!nbg_cpu_image_fits(p, (size_t)ri, in.offset, 4 * w * f, h * f, 1, r->elt.row[0], 0, &last) ||
	    !nbg_cpu_image_fits(p, (size_t)ro, out.offset, 4 * w, h, 1, r->elt.row[2], 0, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "an %s (layer %s) whose input at %s+0x%llx or output "
			       "at %s+0x%llx does not lie inside its memory", what, s->layer,
			       nbg_graph_source_type_name(in.source_type), (unsigned long long)in.offset,
			       nbg_graph_source_type_name(out.source_type), (unsigned long long)out.offset);
		return;
	}
	r->elt.region[0] = (size_t)ri;
	r->elt.region[2] = (size_t)ro;
	r->elt.base[0] = in.offset;
	r->elt.base[2] = out.offset;
	if (kind == CPU_REF_RELU)
		snprintf(s->what, sizeof(s->what), "SH ReLU %u x %u, fp32", r->elt.x, r->elt.y);
	else
		snprintf(s->what, sizeof(s->what), "SH max pooling 2x2 stride 2, %u x %u -> %u x %u, fp32",
			 2 * r->elt.x, 2 * r->elt.y, r->elt.x, r->elt.y);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHF32, kind);
}

static float shf32_ld(const uint8_t *b)
{
	float v;
	memcpy(&v, b, sizeof(v));
	return v;
}

static int shf32_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	const uint8_t *in = buf[r->elt.region[0]] + r->elt.base[0];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	for (uint32_t y = 0; y < r->elt.y; y++)
		for (uint32_t x = 0; x < r->elt.x; x++) {
			float v;
			if (r->kind == CPU_REF_RELU) {
				v = shf32_ld(in + y * r->elt.row[0] + 4ull * x);
				v = v > 0 ? v : 0;
			} else {
				const uint8_t *a = in + 2ull * y * r->elt.row[0] + 8ull * x;
				v = shf32_ld(a);
				for (int k = 1; k < 4; k++) {
					float b = shf32_ld(a + (k >> 1) * r->elt.row[0] + 4 * (k & 1));
					v = b > v ? b : v;
				}
			}
			memcpy(out + y * r->elt.row[2] + 4ull * x, &v, sizeof(v));
		}
	return 0;
}

/* One step per value read. */
static void shf32_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	*work = nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->elt.x, r->elt.y), r->kind == CPU_REF_RELU ? 1 : 4);
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_shf32 = { "sh-f32", shf32_match, shf32_plan, shf32_run, shf32_cost };

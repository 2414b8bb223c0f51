/*
 * ops/shpad.c - the TensorPadOperation2 shader computed by reference
 * semantics from its uniforms and I/O, not from the shader's code
 * (nbg_cpu_step.reference): the channel padding of the MediaPipe face
 * detectors' residual blocks (TFLite PAD with paddings [[0,0], [0,0],
 * [0,0], [0, n]] before an ADD), doc/cpu-backend.md "int16 data".
 *
 * Its state buffer loads two images of eight words (read as the softmax's):
 * the input at 0x36000 and the output at 0x36020, each address (patched),
 * row stride, height << 16 | width, format word, slice bytes, depth,
 * 0x10d810b0, 0.  The image is the tensor seen as one row of x*y elements
 * per channel; the output has the input's width, depth and format and more
 * rows.  out[d][r] = in[d][r] for r below the input's height, 0 (the
 * value 0 of dynamic fixed point) after it.  The uniforms 0x36040-0x3606c
 * must be loaded once and 0 (every such shader of the corpus): a non-zero
 * one may be a pad before the image or a constant, neither established.
 */
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"

#define SHPAD_IN 0      /* uniform index of the input image */
#define SHPAD_OUT 8     /* of the output image */
#define SHPAD_ZERO_FIRST 16
#define SHPAD_ZERO_LAST 27
#define SHPAD_FMT_I16 0x444050c1u /* the int16 face detectors' image word */
#define SHPAD_FMT_F16 0x44405041u /* the fp16 face detector's */

/* Image k (0 input, 2 output) of an int16 image shader (this one, the
 * bilinear resize of ops/shresize.c) at uniform j: located through its
 * patch, inside its memory; *last its last byte. */
int nbg_cpu_sh_image(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u, unsigned j,
		     cpu_ref *r, int k, const nbg_sh_image *im, uint64_t *last)
{
	nbg_cmd_ref ref;
	const char *what = k ? "output" : "input";
	if (!nbg_cpu_patched_ref(p, operation, u->at[j], u->value[j], &ref)) {
		nbg_cpu_refuse(s, "address-not-relocated", "a %s shader whose %s address (uniform 0x%05x) is "
			       "relocated by no patch of the operation", s->layer, what, CPU_UNIFORM_BASE + 4 * j);
		return 0;
	}
	long g = nbg_cpu_find_region(p, s, what, &ref);
	if (g < 0)
		return 0;
	uint64_t width = (uint64_t)im->width * im->element;
	if (im->row < width || (im->depth > 1 && im->slice < im->row * im->height) || !im->height ||
	    !nbg_cpu_image_fits(p, (size_t)g, ref.offset, width, im->height, im->depth ? im->depth : 1, im->row,
				im->slice, last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a %s shader whose %s %ux%ux%u of %u-byte elements at "
			       "%s+0x%llx (row %llu, slice %llu) does not lie inside its memory with strides of at "
			       "least a row and a slice", s->layer, what, im->width, im->height, im->depth,
			       im->element, nbg_graph_source_type_name(ref.source_type),
			       (unsigned long long)ref.offset, (unsigned long long)im->row,
			       (unsigned long long)im->slice);
		return 0;
	}
	r->elt.region[k] = (size_t)g;
	r->elt.base[k] = ref.offset;
	r->elt.row[k] = im->row;
	r->elt.slice[k] = im->slice;
	return 1;
}

static void shpad_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	cpu_uniforms u;
	nbg_sh_image in, out;
	cpu_ref *r = &op->u.ref;
	memset(r, 0, sizeof(*r));
	if (!nbg_cpu_load_uniforms(p, s, m->operation, "TensorPadOperation2", &u))
		return;
	int ok = nbg_sh_image_at(&u, SHPAD_IN, &in) && nbg_sh_image_at(&u, SHPAD_OUT, &out) &&
		 u.value[SHPAD_IN + 3] == u.value[SHPAD_OUT + 3] && in.width == out.width && in.depth == out.depth &&
		 in.element == out.element && in.height <= out.height && in.depth <= 1;
	for (unsigned i = SHPAD_ZERO_FIRST; ok && i <= SHPAD_ZERO_LAST; i++)
		ok = (i == 18 || i == 19 || u.loaded[i] == 1) && u.value[i] == 0;
	if (!ok) {
		nbg_cpu_refuse(s, "shpad-uniforms-unknown", "a TensorPadOperation2 shader whose images (uniforms "
			       "0x36000, 0x36020) are not one width, depth 1, format (0x%08x, 0x%08x) and element size "
			       "with the output at least as high, or whose uniforms 0x36040-0x3606c are not all 0: "
			       "executed is the padding of rows at the end with 0, every such shader of the corpus",
			       u.value[SHPAD_IN + 3], u.value[SHPAD_OUT + 3]);
		return;
	}
	uint64_t last[3] = { 0, 0, 0 };
	if (!nbg_cpu_sh_image(p, s, m->operation, &u, SHPAD_IN, r, 0, &in, &last[0]) ||
	    !nbg_cpu_sh_image(p, s, m->operation, &u, SHPAD_OUT, r, 2, &out, &last[2]))
		return;
	if (r->elt.region[0] == r->elt.region[2] && last[0] >= r->elt.base[2] && last[2] >= r->elt.base[0]) {
		nbg_cpu_refuse(s, "shpad-uniforms-unknown", "a TensorPadOperation2 shader whose output overlaps its "
			       "input: executed is an output apart from its input");
		return;
	}
	r->width = in.width * in.element;
	r->elt.y = in.height;
	r->rows = out.height;
	/* for a dump of its output: the element size and the NBG data format of
	 * the corpus's two words (int16 0x444050c1, fp16 0x44405041), else bytes */
	r->kx = in.element;
	r->group = u.value[SHPAD_IN + 3] == SHPAD_FMT_I16 ? 5u : u.value[SHPAD_IN + 3] == SHPAD_FMT_F16 ? 1u : 2u;
	if (r->group == 2u)
		r->kx = 1;
	nbg_cpu_ref_executed(s, op, CPU_OP_SHPAD, CPU_REF_PAD);
}

static int shpad_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	const uint8_t *in = buf[r->elt.region[0]];
	uint8_t *out = buf[r->elt.region[2]];
	for (uint32_t y = 0; y < r->rows; y++) {
		uint8_t *d = out + r->elt.base[2] + y * r->elt.row[2];
		if (y < r->elt.y)
			memcpy(d, in + r->elt.base[0] + y * r->elt.row[0], r->width);
		else
			memset(d, 0, r->width);
	}
	return 0;
}

static void shpad_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = (uint64_t)op->u.ref.width * op->u.ref.rows;
	*scratch = 0;
}

static int shpad_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_TENSOR_PAD2;
}

const cpu_op_def nbg_cpu_op_shpad = { "sh-pad", shpad_match, shpad_plan, shpad_run, shpad_cost };

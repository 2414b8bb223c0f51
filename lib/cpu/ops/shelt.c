/*
 * ops/shelt.c - two elementwise shaders computed by reference semantics
 * from their uniforms and I/O, not from the shader's code
 * (nbg_cpu_step.reference): the quantized addition of a TensorAdd SH
 * operation and the 2x nearest-neighbour upsampling of a TensorScale SH
 * operation (the yolov8n and hand-tiny networks).  doc/cpu-backend.md
 * ("The elementwise shaders") gives each rule below with its evidence.
 *
 * Their state buffers load (uniform 0x36000 + 4 i, read as the softmax's)
 * images of eight words each: address (patched), row stride, height << 16
 * | width, format word, slice bytes, depth, 0x10da10b0, 0.
 *
 * TensorAdd: input 0 at 0x36000, input 1 at 0x36020, output at 0x36040,
 * all of one shape, then
 *   0x36060  float32: the output zero point zpo
 *   0x36064  float32 a = s0 / s_out
 *   0x36068  float32 b = s1 / s_out
 *   0x36070  int: input 0's zero point zp0
 *   0x36100  int: input 1's zero point zp1
 * out = round((in0 - zp0) x a + (in1 - zp1) x b + zpo), saturated.
 *
 * TensorScale: input at 0x36000, output at 0x36020 twice as wide and high,
 * the same depth and format, 0x36040..0x3604c the byte table 0x00, 0x11,
 * ..., 0xff (lane i from lane i / 2), 0x36050 16, 0x36054 0xffffffff; no
 * quantization uniform: out[z][2y + j][2x + i] = in[z][y][x].
 * Anything else is refused with an shelt-* id.
 *
 * TensorMul and TensorDiv of the A733 fp16 files (target 0x1000003b): the
 * same three images, of fp16 values (format words 0x44404071, 0x44405071),
 * each input broadcast along its axes of size 1, an input in the model's
 * constants (COEF_DATA_TABLE) read there; out = in0 x in1 or in0 / in1 in
 * fp16, the other uniforms as every such shader of the corpus loads them
 * (shf16-* ids otherwise).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/half.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/shader.h"
#include "cpu/quant.h"

/* The two words the corpus's uint8 images of these shaders hold (their
 * producers and consumers are uint8 TP and NN operations). */
#define SHELT_FMT_A 0x444051f0u
#define SHELT_FMT_B 0x444041f0u
/* The word of the hand-tiny additions' input 1 that a TP copy from uint8
 * into fp16 writes (0x1000e and 0x1000f; 0x1000c adds uint8 there). */
#define SHELT_FMT_F16 0x44405071u
/* The word of yolov8n's and retinaface's int8 upsamplings (0x99, 0x88):
 * the uint8 compilation's uniforms but this word; an upsampling copies
 * bytes, whatever they hold.  No TensorAdd with this word has the uint8
 * layout (yolov8n's int8 ones load another). */
#define SHELT_FMT_S8 0x44405130u
#define SHELT_FMT_S8B 0x44404130u /* the int8 word of 0x444041f0's place (yolov8n 0x99's op 464) */
#define SHELT_MAX_SCALE 65536.0f
#define SHF16_TARGET 0x1000003bu /* the A733 files, whose shaders compute in fp16 */

/* Uniform words idx[0..n) each loaded exactly once, else refused
 * (cpu_internal.h). */
int nbg_cpu_loaded_once(nbg_cpu_step *s, const cpu_uniforms *u, const char *what, const unsigned *idx,
		       size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (u->loaded[idx[k]] != 1) {
			nbg_cpu_refuse(s, "shelt-uniforms-unknown", "a %s shader (layer %s) whose state buffer "
				       "loads uniform 0x%05x %d times (once is the layout of every such shader in "
				       "the corpus)", what, s->layer, CPU_UNIFORM_BASE + 4 * idx[k],
				       u->loaded[idx[k]]);
			return 0;
		}
	return 1;
}

/* Uniform words first..first + n - 1 each loaded once and equal to
 * words[0..n), else refused naming the first that is not (cpu_internal.h). */
int nbg_cpu_pinned(nbg_cpu_step *s, const cpu_uniforms *u, const char *what, unsigned first, const uint32_t *words,
		   size_t n)
{
	for (size_t k = 0; k < n; k++) {
		size_t j = first + k;
		if (u->loaded[j] == 1 && u->value[j] == words[k])
			continue;
		nbg_cpu_refuse(s, "shader-uniforms-unknown", "a %s shader (layer %s) whose uniform 0x%05x is "
			       "0x%08x (loaded %d times): its meaning is not established, and executed is 0x%08x "
			       "loaded once, the value of every such shader in the corpus", what, s->layer,
			       (unsigned)(CPU_UNIFORM_BASE + 4 * j), u->value[j], u->loaded[j], words[k]);
		return 0;
	}
	return 1;
}

/* Calls row(r, in, out, y) for every row y of every slice of images 0 and
 * 2 of r->elt (cpu_internal.h). */
void nbg_cpu_elt_rows(const cpu_ref *r, uint8_t *const *buf, cpu_elt_row_fn row)
{
	const uint8_t *in = buf[r->elt.region[0]] + r->elt.base[0];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	for (uint32_t z = 0; z < r->elt.z; z++)
		for (uint32_t y = 0; y < r->elt.y; y++)
			row(r, in + z * r->elt.slice[0] + y * r->elt.row[0],
			    out + z * r->elt.slice[2] + y * r->elt.row[2], y);
}

/* Image k of the reference from the eight words at uniform index j:
 * located through its patch, x x y x z elements of esize bytes with its
 * strides inside its memory, the strides at least the row and slice it
 * holds (cpu_internal.h). */
int nbg_cpu_elt_image(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
		       unsigned j, const char *what, cpu_ref *r, int k, uint32_t esize, uint32_t x, uint32_t y,
		       uint32_t z, uint64_t *last_out)
{
	nbg_cmd_ref ref;
	const uint32_t *v = u->value;
	if (!nbg_cpu_patched_ref(p, operation, u->at[j], v[j], &ref)) {
		nbg_cpu_refuse(s, "address-not-relocated", "a %s shader (layer %s) whose image address "
			       "(uniform 0x%05x) is relocated by no patch of the operation", what, s->layer,
			       CPU_UNIFORM_BASE + 4 * j);
		return 0;
	}
	long g = nbg_cpu_find_region(p, s, what, &ref);
	if (g < 0)
		return 0;
	uint64_t row = v[j + 1], slice = v[j + 4], last, width = (uint64_t)x * esize;
	if (row < width || (z > 1 && slice < row * y)) {
		nbg_cpu_refuse(s, "shelt-shape-unsupported", "a %s shader (layer %s) whose image at uniform "
			       "0x%05x (%ux%ux%u) has row stride %llu and slice stride %llu: executed are "
			       "strides of at least a row and a slice", what, s->layer, CPU_UNIFORM_BASE + 4 * j,
			       x, y, z, (unsigned long long)row, (unsigned long long)slice);
		return 0;
	}
	if (!nbg_cpu_image_fits(p, (size_t)g, ref.offset, width, y, z, row, slice, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "a %s shader (layer %s) whose image at uniform "
			       "0x%05x (%ux%ux%u at %s+0x%llx, row %llu, slice %llu) does not lie inside its "
			       "memory", what, s->layer, CPU_UNIFORM_BASE + 4 * j, x, y, z,
			       nbg_graph_source_type_name(ref.source_type), (unsigned long long)ref.offset,
			       (unsigned long long)row, (unsigned long long)slice);
		return 0;
	}
	r->elt.region[k] = (size_t)g;
	r->elt.base[k] = ref.offset;
	r->elt.row[k] = row;
	r->elt.slice[k] = slice;
	*last_out = last;
	return 1;
}

/* The output (image 2, bytes up to last[2]) shares no byte with input k
 * (bytes up to last[k]), or, with same_ok, is that very image (each
 * element is then read before it is written): the run writes as it reads.
 * 0 with the step refused (cpu_internal.h). */
int nbg_cpu_elt_apart(nbg_cpu_step *s, const cpu_ref *r, const char *what, int k, const uint64_t *last,
		       int same_ok)
{
	if (r->elt.region[k] != r->elt.region[2] || last[k] < r->elt.base[2] || last[2] < r->elt.base[k])
		return 1;
	if (same_ok && r->elt.base[k] == r->elt.base[2] && r->elt.row[k] == r->elt.row[2] &&
	    r->elt.slice[k] == r->elt.slice[2])
		return 1;
	nbg_cpu_refuse(s, "shelt-shape-unsupported", "a %s shader (layer %s) whose output overlaps its "
		       "input %d: executed are an output apart from its inputs%s", what, s->layer, k,
		       same_ok ? " or the same image as one" : "");
	return 0;
}

/* The images' format words: one of the corpus's uint8 words for all n
 * (with s8_ok, the upsampling: or its int8 word), but, when f16_ok, input 1
 * (0x3602c) may hold SHELT_FMT_F16 (*f16 set); 0 with the step refused. */
static int shelt_format(nbg_cpu_step *s, const cpu_uniforms *u, const char *what, unsigned n, int f16_ok,
			int s8_ok, int *f16)
{
	uint32_t f0 = u->value[3];
	int ok = f0 == SHELT_FMT_A || f0 == SHELT_FMT_B || (s8_ok && (f0 == SHELT_FMT_S8 || f0 == SHELT_FMT_S8B));
	*f16 = f16_ok && u->value[11] == SHELT_FMT_F16;
	for (unsigned i = 1; i < n; i++)
		ok &= u->value[8 * i + 3] == f0 || (i == 1 && *f16);
	if (!ok) {
		nbg_cpu_refuse(s, "shelt-format-unsupported", "a %s shader (layer %s) with image format words "
			       "0x%08x (uniform 0x3600c), 0x%08x (0x3602c)%s: executed is one of the corpus's "
			       "uint8 words 0x%08x and 0x%08x%s for all %u images%s", what, s->layer, f0, u->value[11],
			       n > 2 && u->value[19] != f0 ? " and another at 0x3604c" : "", SHELT_FMT_A,
			       SHELT_FMT_B, s8_ok ? " (or the int8 words 0x44405130 and 0x44404130)" : "", n,
			       f16_ok ? " (input 1 may be the fp16 word 0x44405071)" : "");
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		if (u->value[8 * i + 7] != 0) {
			nbg_cpu_refuse(s, "shelt-uniforms-unknown", "a %s shader (layer %s) whose uniform 0x%05x is "
				       "0x%08x: its meaning is not established, and executed is 0, the value of "
				       "every such shader in the corpus", what, s->layer,
				       CPU_UNIFORM_BASE + 4 * (8 * i + 7), u->value[8 * i + 7]);
			return 0;
		}
	return 1;
}

/*
 * The int8 TensorAdd of yolov8n's 0x99 build (images in SHELT_FMT_S8): no
 * scale or zero point uniforms, but two banks (0x36060-0x3609c,
 * 0x360a0-0x360dc) of the shader's lane words: the byte tables 0x33221100,
 * 0x77665544 (0xbbaa9988, 0xffeeddcc), 0x55555555, 0x44444444, 0xaaaaaaaa,
 * 0, 0, then 0x600 | n and eight words w0 | w1 << 16.  Read as a dot
 * product of each pair (in0, in1) with (w0, w1) shifted right by n: out =
 * (w0 in0 + w1 in1) / 2^n, rounded half to even as the uint8 addition,
 * saturated to -128..127 (inferred: doc/cpu-backend.md, "int8 data").
 * Returns 0 with the step refused, 1 with a, b set.
 */
static int shadd_s8_words(nbg_cpu_step *s, const cpu_uniforms *u, float *a, float *b)
{
	static const uint32_t bank[2][7] = {
		{ 0x55555555, 0x44444444, 0x33221100, 0x77665544, 0xaaaaaaaa, 0, 0 },
		{ 0x55555555, 0x44444444, 0xbbaa9988, 0xffeeddcc, 0xaaaaaaaa, 0, 0 },
	};
	const uint32_t *v = u->value;
	uint32_t sh = v[31], w = v[32];
	int ok = (sh & ~0xffu) == 0x600 && (sh & 0xff) <= 15 && (w & 0xffff) && (w >> 16) &&
		 (w & 0xffff) <= 0x7fff && (w >> 16) <= 0x7fff;
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned i = 0; i < 7; i++)
			ok &= u->loaded[24 + 16 * k + i] == 1 && v[24 + 16 * k + i] == bank[k][i];
		ok &= u->loaded[31 + 16 * k] == 1 && v[31 + 16 * k] == sh;
		for (unsigned i = 0; i < 8; i++)
			ok &= u->loaded[32 + 16 * k + i] == 1 && v[32 + 16 * k + i] == w;
	}
	if (!ok) {
		nbg_cpu_refuse(s, "shelt-uniforms-unknown", "an int8 TensorAdd shader (layer %s) whose lane "
			       "words 0x36060-0x360dc are not the corpus's layout (byte tables, 0x600 | shift at "
			       "0x3607c and 0x360bc, sixteen equal weight pairs; here 0x%08x, 0x%08x)", s->layer,
			       sh, w);
		return 0;
	}
	*a = ldexpf((float)(w & 0xffff), -(int)(sh & 0xff));
	*b = ldexpf((float)(w >> 16), -(int)(sh & 0xff));
	return 1;
}

static void plan_shadd(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	static const unsigned used[] = { 0,  1,  2,  3,  4,  5,  7,  8,  9,  10, 11, 12, 13, 15,
					 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 28, 64 };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	int f16;
	if (!nbg_cpu_load_uniforms(p, s, operation, "TensorAdd shader", &u))
		return;
	int s8 = u.value[3] == SHELT_FMT_S8 || u.value[3] == SHELT_FMT_S8B;
	/* the int8 layout: the images' words (the first 21), then shadd_s8_words */
	if (!nbg_cpu_loaded_once(s, &u, "TensorAdd", used, s8 ? 21 : sizeof(used) / sizeof(used[0])) ||
	    !shelt_format(s, &u, "TensorAdd", 3, 1, s8, &f16))
		return;
	const uint32_t *v = u.value;
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	if (x == 0 || y == 0 || z == 0 || z > (1u << 20) || v[10] != v[2] || v[18] != v[2] || v[13] != z ||
	    v[21] != z) {
		nbg_cpu_refuse(s, "shelt-shape-unsupported", "a TensorAdd shader (layer %s) over images "
			       "0x%08x x %u, 0x%08x x %u into 0x%08x x %u (height << 16 | width, depth): "
			       "executed are three images of one non-empty shape", s->layer, v[2], v[5],
			       v[10], v[13], v[18], v[21]);
		return;
	}
	float zpo = 0, a = 0, b = 0;
	if (s8 && !shadd_s8_words(s, &u, &a, &b))
		return;
	if (!s8) {
		zpo = nbg_cpu_f32_of(v[24]);
		a = nbg_cpu_f32_of(v[25]);
		b = nbg_cpu_f32_of(v[26]);
	}
	if (!s8 && (!(a > 0 && a < SHELT_MAX_SCALE) || !(b > 0 && b < SHELT_MAX_SCALE) || !(zpo >= 0 && zpo <= 255) ||
		    zpo != floorf(zpo) || v[28] > 255 || v[64] > (f16 ? 0u : 255u))) {
		nbg_cpu_refuse(s, "shelt-quantization-invalid", "a TensorAdd shader (layer %s) whose uniforms "
			       "0x36064, 0x36068 (scale ratios) are %g, %g, 0x36060 (output zero point) %g, "
			       "0x36070 and 0x36100 (input zero points) %u and %u: executed are ratios in "
			       "(0, 65536) and zero points that are integers 0 to 255 (0 for an fp16 input)",
			       s->layer, (double)a, (double)b, (double)zpo, v[28], v[64]);
		return;
	}
	uint64_t last[3];
	for (int k = 0; k < 3; k++)
		if (!nbg_cpu_elt_image(p, s, operation, &u, 8u * (unsigned)k, "TensorAdd", r, k, k == 1 && f16 ? 2 : 1,
				 x, y, z, &last[k]))
			return;
	if (!nbg_cpu_elt_apart(s, r, "TensorAdd", 0, last, 1) || !nbg_cpu_elt_apart(s, r, "TensorAdd", 1, last, !f16))
		return;
	r->elt.x = x;
	r->elt.y = y;
	r->elt.z = z;
	r->elt.a = a;
	r->elt.b = b;
	r->elt.zp0 = s8 ? 0 : v[28];
	r->elt.zp1 = s8 ? 0 : v[64];
	r->elt.zpo = (uint32_t)zpo;
	r->elt.in1_f16 = f16;
	r->elt.s8 = s8;
	if (s8)
		snprintf(s->what, sizeof(s->what), "SH add %ux%ux%u int8, x0 x %.9g + x1 x %.9g", x, y,
			 z % 10000000, (double)a, (double)b);
	else if (f16)
		snprintf(s->what, sizeof(s->what), "SH add %ux%ux%u uint8 + fp16, (x0 - %u) x %.9g + x1 x %.9g + %u",
			 x, y, z % 10000000, v[28], (double)a, (double)b, (uint32_t)zpo);
	else
		snprintf(s->what, sizeof(s->what), "SH add %ux%ux%u uint8, (x0 - %u) x %.9g + (x1 - %u) x %.9g + %u",
			 x, y, z % 10000000, v[28], (double)a, v[64], (double)b, (uint32_t)zpo);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHADD, CPU_REF_ADD);
}

static void plan_shscale(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21 };
	static const uint32_t table[] = { 0x33221100u, 0x77665544u, 0xbbaa9988u, 0xffeeddccu, 16u, 0xffffffffu };
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	int f16;
	if (!nbg_cpu_load_uniforms(p, s, operation, "TensorScale shader", &u) ||
	    !nbg_cpu_loaded_once(s, &u, "TensorScale", used, sizeof(used) / sizeof(used[0])) ||
	    !shelt_format(s, &u, "TensorScale", 2, 0, 1, &f16))
		return;
	const uint32_t *v = u.value;
	for (unsigned k = 0; k < sizeof(table) / sizeof(table[0]); k++)
		if (v[16 + k] != table[k]) {
			nbg_cpu_refuse(s, "shelt-uniforms-unknown", "a TensorScale shader (layer %s) whose uniform "
				       "0x%05x is 0x%08x: executed is 0x%08x, the value of every such shader in "
				       "the corpus (the table of lane i from lane i / 2, 16, all ones)", s->layer,
				       CPU_UNIFORM_BASE + 4 * (16 + k), v[16 + k], table[k]);
			return;
		}
	uint32_t x = v[2] & 0xffff, y = v[2] >> 16, z = v[5];
	if (x == 0 || y == 0 || z == 0 || z > (1u << 20) || x > 0x7fff || y > 0x7fff ||
	    v[10] != ((2 * y) << 16 | 2 * x) || v[13] != z) {
		nbg_cpu_refuse(s, "shelt-shape-unsupported", "a TensorScale shader (layer %s) from 0x%08x x %u "
			       "to 0x%08x x %u (height << 16 | width, depth): executed is an output twice as "
			       "wide and high as the input, of its depth", s->layer, v[2], v[5], v[10], v[13]);
		return;
	}
	uint64_t last[3];
	if (!nbg_cpu_elt_image(p, s, operation, &u, 0, "TensorScale", r, 0, 1, x, y, z, &last[0]) ||
	    !nbg_cpu_elt_image(p, s, operation, &u, 8, "TensorScale", r, 2, 1, 2 * x, 2 * y, z, &last[2]) ||
	    !nbg_cpu_elt_apart(s, r, "TensorScale", 0, last, 0))
		return;
	r->elt.x = x;
	r->elt.y = y;
	r->elt.z = z;
	r->elt.s8 = u.value[3] != SHELT_FMT_A && u.value[3] != SHELT_FMT_B;
	snprintf(s->what, sizeof(s->what), "SH upsample 2x nearest %ux%ux%u -> %ux%ux%u, %s", x, y,
		 z % 10000000, 2 * x, 2 * y, z % 10000000, r->elt.s8 ? "int8" : "uint8");
	nbg_cpu_ref_executed(s, op, CPU_OP_SHSCALE, CPU_REF_UPSAMPLE);
}

static void shelt_run_ref(const cpu_ref *r, uint8_t *const *buf)
{
	const uint8_t *in0 = buf[r->elt.region[0]] + r->elt.base[0];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	if (r->kind == CPU_REF_UPSAMPLE) {
		for (uint32_t z = 0; z < r->elt.z; z++)
			for (uint32_t y = 0; y < 2 * r->elt.y; y++) {
				const uint8_t *src = in0 + z * r->elt.slice[0] + (y / 2) * r->elt.row[0];
				uint8_t *dst = out + z * r->elt.slice[2] + y * r->elt.row[2];
				for (uint32_t x = 0; x < 2 * r->elt.x; x++)
					dst[x] = src[x / 2];
			}
		return;
	}
	const uint8_t *in1 = buf[r->elt.region[1]] + r->elt.base[1];
	double a = r->elt.a, b = r->elt.b;
	for (uint32_t z = 0; z < r->elt.z; z++)
		for (uint32_t y = 0; y < r->elt.y; y++) {
			const uint8_t *p0 = in0 + z * r->elt.slice[0] + y * r->elt.row[0];
			const uint8_t *p1 = in1 + z * r->elt.slice[1] + y * r->elt.row[1];
			uint8_t *dst = out + z * r->elt.slice[2] + y * r->elt.row[2];
			for (uint32_t x = 0; x < r->elt.x; x++) {
				if (r->elt.s8) {
					double q = nbg_cpu_round_half_even((int8_t)p0[x] * a + (int8_t)p1[x] * b);
					dst[x] = (uint8_t)((int)(q < -128 ? -128 : q > 127 ? 127 : q) & 0xff);
					continue;
				}
				double x1 = r->elt.in1_f16 ? (double)nbg_fp16_to_float((uint16_t)(p1[2 * x] |
										       p1[2 * x + 1] << 8))
							   : (double)((int)p1[x] - (int)r->elt.zp1);
				double q = nbg_cpu_round_half_even(((int)p0[x] - (int)r->elt.zp0) * a + x1 * b + r->elt.zpo);
				/* a NaN half (no sample shows its result) gives 0 */
				dst[x] = (uint8_t)(!(q >= 0) ? 0 : q > 255 ? 255 : q);
			}
		}
}

static int shadd_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_TENSOR_ADD;
}

static int shscale_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH && m->layer == CPU_LAYER_TENSOR_SCALE;
}

static void shadd_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_shadd(p, s, op, m->operation);
}

static void shscale_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_shscale(p, s, op, m->operation);
}

static int shelt_run(const cpu_op *op, uint8_t *const *buf)
{
	shelt_run_ref(&op->u.ref, buf);
	return 0;
}

/* The one-input shaders' images (cpu_internal.h). */
int nbg_cpu_elt_io(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u, unsigned jo,
		   const char *what, cpu_ref *r, const uint32_t *esize, uint32_t x, uint32_t y, uint32_t z, int same_ok)
{
	uint64_t last[3];
	if (!nbg_cpu_elt_image(p, s, operation, u, 0, what, r, 0, esize[0], x, y, z, &last[0]) ||
	    !nbg_cpu_elt_image(p, s, operation, u, jo, what, r, 2, esize[1], x, y, z, &last[2]) ||
	    !nbg_cpu_elt_apart(s, r, what, 0, last, same_ok))
		return 0;
	r->elt.x = x;
	r->elt.y = y;
	r->elt.z = z;
	return 1;
}

/* One step per output value: the addition's and the one-input shaders'
 * (x x y x z of images 0 and 2, cpu_internal.h), four per input value for
 * the upsampling. */
void nbg_cpu_elt_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	const cpu_ref *r = &op->u.ref;
	uint64_t n = nbg_cpu_mul_sat(nbg_cpu_mul_sat(r->elt.x, r->elt.y), r->elt.z);
	*work = r->kind == CPU_REF_UPSAMPLE ? nbg_cpu_mul_sat(4, n) : n;
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_shadd = { "sh-add", shadd_match, shadd_plan, shelt_run, nbg_cpu_elt_cost };
const cpu_op_def nbg_cpu_op_shscale = { "sh-scale", shscale_match, shscale_plan, shelt_run, nbg_cpu_elt_cost };

/* ----------------------------------------------- fp16 TensorMul, TensorDiv */

/* The fp16 image words of the A733 shaders (bit 12: more than one row) */
#define SHF16_FMT 0x44404071u
#define SHF16_FMT_ROWS 0x44405071u
/* the int16 blendshapes file's int16 images (dynamic fixed point) */
#define SHI16_FMT 0x444040f1u
#define SHI16_FMT_ROWS 0x444050f1u
/* elt.zpo's bits: image k (0, 1, 2) holds int16 codes */
#define SHI16_IMG(k) (1u << (k))

/* The uniforms after the three images, as every such shader of the
 * corpus loads them (index, value): the lane tables of the shader and,
 * read as TensorAdd's, zpo 0 and the scales 1.0 (TensorDiv 0x36060-0x36068;
 * TensorMul 0x360e0, 0x360e4). */
static const uint32_t shdiv_words[][2] = {
	{ 24, 0x00000000u }, { 25, 0x3f800000u }, { 26, 0x3f800000u }, { 27, 0x00000000u },
	{ 28, 0x00000000u }, { 32, 0x09090909u }, { 33, 0x04040404u }, { 34, 0x00010000u },
	{ 35, 0x00030002u }, { 36, 0x0a0a0a0au }, { 37, 0x00000000u }, { 38, 0x00000000u },
	{ 39, 0x00000100u }, { 40, 0x3c003c00u }, { 41, 0x00000000u }, { 42, 0x3c003c00u },
	{ 43, 0x00000000u }, { 44, 0x3c003c00u }, { 45, 0x00000000u }, { 46, 0x3c003c00u },
	{ 47, 0x00000000u }, { 48, 0x09090909u }, { 49, 0x04040404u }, { 50, 0x00050004u },
	{ 51, 0x00070006u }, { 52, 0x0a0a0a0au }, { 53, 0x00000000u }, { 54, 0x00000000u },
	{ 55, 0x00000100u }, { 56, 0x3c003c00u }, { 57, 0x00000000u }, { 58, 0x3c003c00u },
	{ 59, 0x00000000u }, { 60, 0x3c003c00u }, { 61, 0x00000000u }, { 62, 0x3c003c00u },
	{ 63, 0x00000000u }, { 64, 0x00000000u }, { 68, 0x11111111u }, { 69, 0x11110000u },
	{ 70, 0x06040200u }, { 71, 0x06040200u }, { 72, 0x22222222u }, { 73, 0x00000000u },
	{ 74, 0x00000000u }, { 75, 0x00000100u }, { 76, 0x00003c00u }, { 77, 0x00003c00u },
	{ 78, 0x00003c00u }, { 79, 0x00003c00u },
};

static const uint32_t shmul_words[][2] = {
	{ 24, 0x29292929u }, { 25, 0x10101010u }, { 26, 0x01110000u }, { 27, 0x03330222u },
	{ 28, 0x29292929u }, { 29, 0x00010000u }, { 30, 0x00030002u }, { 31, 0x00000300u },
	{ 32, 0x00000000u }, { 33, 0x00000000u }, { 34, 0x00000000u }, { 35, 0x00000000u },
	{ 36, 0x00000000u }, { 37, 0x00000000u }, { 38, 0x00000000u }, { 39, 0x00000000u },
	{ 40, 0x29292929u }, { 41, 0x10101010u }, { 42, 0x05550444u }, { 43, 0x07770666u },
	{ 44, 0x29292929u }, { 45, 0x00050004u }, { 46, 0x00070006u }, { 47, 0x00000300u },
	{ 48, 0x00000000u }, { 49, 0x00000000u }, { 50, 0x00000000u }, { 51, 0x00000000u },
	{ 52, 0x00000000u }, { 53, 0x00000000u }, { 54, 0x00000000u }, { 55, 0x00000000u },
	{ 56, 0x3f800000u }, { 57, 0x00000000u }, { 60, 0x11111111u }, { 61, 0x11110000u },
	{ 62, 0x06040200u }, { 63, 0x06040200u }, { 64, 0x22222222u }, { 65, 0x00000000u },
	{ 66, 0x00000000u }, { 67, 0x00000100u }, { 68, 0x00003c00u }, { 69, 0x00003c00u },
	{ 70, 0x00003c00u }, { 71, 0x00003c00u }, { 72, 0x00003c00u }, { 73, 0x00003c00u },
	{ 74, 0x00003c00u }, { 75, 0x00003c00u },
};

/* The int16 shaders' last lane table where the fp16 ones (shmul_words,
 * shdiv_words) hold another: TensorMul's words 60-75 (0x360f0-0x3612c),
 * TensorDiv's 68-79 (0x36110-0x3613c); 0x360e0 (56) is TensorMul's scale,
 * 0x36064 and 0x36068 (25, 26) TensorDiv's. */
static const uint32_t shi16_lanes[] = {
	0x33333333u, 0x11110000u, 0x03020100u, 0x03020100u, 0, 0, 0, 0x00002400u, 0, 0, 0, 0, 0, 0, 0, 0,
};


/* Whether float32 bits v are a power of two (mantissa 0, a normal exponent). */
static int shi16_pow2(uint32_t v)
{
	return !(v & 0x807fffffu) && (v >> 23) && (v >> 23) < 255;
}

/* Input k's strides into the output's walk: 0 along an axis it holds once
 * (broadcast), its own otherwise; its x step in zp0 / zp1. */
static void shf16_broadcast(cpu_ref *r, int k, uint32_t x, uint32_t y, uint32_t z)
{
	if (y == 1)
		r->elt.row[k] = 0;
	if (z == 1)
		r->elt.slice[k] = 0;
	*(k ? &r->elt.zp1 : &r->elt.zp0) = x == 1 ? 0 : 2;
}

/* Input k when its address is relocated into the COEF_DATA_TABLE (a
 * constant of the model, as TensorMul's gamma): its bytes in r->codes, its
 * strides as an image's; 0 when it is not such an input. */
static int shf16_const(const nbg_cpu_plan *p, size_t operation, const cpu_uniforms *u, cpu_ref *r, int k,
		       const uint32_t *dim)
{
	const uint32_t *v = u->value + 8 * k;
	uint64_t row = v[1], slice = v[4], width = 2ull * dim[0];
	if (r->group || row < width || (dim[2] > 1 && slice < row * dim[1]))
		return 0;
	uint64_t need = (dim[2] - 1) * slice + (dim[1] - 1) * row + width;
	const uint8_t *b = nbg_cpu_table_bytes(p, operation, u->at[8 * k], v[0], NBG_GRAPH_SRC_MISC_DYNA_GENERIC, need);
	if (!b)
		return 0;
	r->codes = b;
	r->group = 1u + (uint32_t)k;
	r->elt.base[k] = 0, r->elt.row[k] = row, r->elt.slice[k] = slice;
	return 1;
}

/* The three images (0x36000, 0x36020, 0x36040) of fp16 values; each
 * input of the output's size or 1 along each axis.  0 with the step
 * refused. */
static int shf16_images(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u,
			const char *what, cpu_ref *r)
{
	static const unsigned used[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23 };
	if (!nbg_cpu_loaded_once(s, u, what, used, sizeof(used) / sizeof(used[0])))
		return 0;
	const uint32_t *v = u->value;
	uint32_t dim[3][3];
	int ok = 1;
	for (int k = 0; k < 3; k++)
		dim[k][0] = v[8 * k + 2] & 0xffff, dim[k][1] = v[8 * k + 2] >> 16, dim[k][2] = v[8 * k + 5];
	r->elt.zpo = 0;
	for (int k = 0; k < 3; k++) {
		int i16 = v[8 * k + 3] == SHI16_FMT || v[8 * k + 3] == SHI16_FMT_ROWS;
		r->elt.zpo |= i16 ? SHI16_IMG(k) : 0u;
		ok &= (i16 || v[8 * k + 3] == SHF16_FMT || v[8 * k + 3] == SHF16_FMT_ROWS) && v[8 * k + 7] == 0;
		for (int d = 0; d < 3; d++)
			ok &= dim[k][d] && dim[k][d] <= (1u << 20) && (dim[k][d] == dim[2][d] || dim[k][d] == 1);
	}
	if (!ok) {
		nbg_cpu_refuse(s, "shf16-shape-unsupported", "a %s shader (layer %s) over images 0x%08x x %u "
			       "(format 0x%08x), 0x%08x x %u (0x%08x) into 0x%08x x %u (0x%08x) (height << 16 | "
			       "width, depth): executed are fp16 images (0x%08x, 0x%08x), each input of the "
			       "output's size or 1 along each axis", what, s->layer, v[2], v[5], v[3], v[10], v[13],
			       v[11], v[18], v[21], v[19], SHF16_FMT, SHF16_FMT_ROWS);
		return 0;
	}
	uint64_t last[3];
	r->group = 0;
	for (int k = 2; k >= 0; k--) {
		if (k < 2 && shf16_const(p, operation, u, r, k, dim[k])) {
			last[k] = 0, r->elt.region[k] = r->elt.region[2] + 1; /* apart from the output */
			continue;
		}
		if (!nbg_cpu_elt_image(p, s, operation, u, 8u * (unsigned)k, what, r, k, 2, dim[k][0], dim[k][1], dim[k][2],
				 &last[k]))
			return 0;
	}
	for (int k = 0; k < 2; k++) {
		int same = dim[k][0] == dim[2][0] && dim[k][1] == dim[2][1] && dim[k][2] == dim[2][2];
		if (!nbg_cpu_elt_apart(s, r, what, k, last, same))
			return 0;
		shf16_broadcast(r, k, dim[k][0], dim[k][1], dim[k][2]);
	}
	r->elt.x = dim[2][0], r->elt.y = dim[2][1], r->elt.z = dim[2][2];
	return 1;
}

/* TensorMul (div 0) or TensorDiv (div 1) of the A733 fp16 files. */
static void plan_shf16(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation, int div)
{
	const char *what = div ? "TensorDiv" : "TensorMul";
	const uint32_t(*w)[2] = div ? shdiv_words : shmul_words;
	size_t n = div ? sizeof(shdiv_words) / sizeof(shdiv_words[0]) : sizeof(shmul_words) / sizeof(shmul_words[0]);
	cpu_ref *r = &op->u.ref;
	cpu_uniforms u;
	if (!nbg_cpu_load_uniforms(p, s, operation, div ? "TensorDiv shader" : "TensorMul shader", &u))
		return;
	/* the int16 file's: its scales (TensorDiv 0x36064, 0x36068; TensorMul
	 * 0x360e0) powers of two, TensorMul's lane tables its own */
	int i16 = u.value[3] == SHI16_FMT || u.value[3] == SHI16_FMT_ROWS;
	for (size_t i = 0; i < n; i++) {
		uint32_t lanes = div ? 68 : 60, at = w[i][0];
		int scale = div ? at == 25 || at == 26 : at == 56;
		if (i16 && u.loaded[at] == 1 &&
		    ((scale && shi16_pow2(u.value[at])) || (at >= lanes && u.value[at] == shi16_lanes[at - lanes])))
			continue;
		if (u.loaded[w[i][0]] != 1 || u.value[w[i][0]] != w[i][1]) {
			nbg_cpu_refuse(s, "shf16-uniforms-unknown", "a %s shader (layer %s) whose uniform 0x%05x is "
				       "0x%08x (loaded %d times): executed is 0x%08x loaded once, the value of every "
				       "such fp16 shader in the corpus", what, s->layer, CPU_UNIFORM_BASE + 4 * w[i][0],
				       u.value[w[i][0]], u.loaded[w[i][0]], w[i][1]);
			return;
		}
	}
	if (!shf16_images(p, s, operation, &u, what, r))
		return;
	/* int16: TensorDiv's input 0 and output, TensorMul's three images */
	if (i16 != !!(r->elt.zpo & SHI16_IMG(0)) || (i16 && (div ? r->elt.zpo != (SHI16_IMG(0) | SHI16_IMG(2))
							       : r->elt.zpo != 7u))) {
		nbg_cpu_refuse(s, "shf16-shape-unsupported", "a %s shader (layer %s) with int16 images 0x%x (bit k: "
			       "image k): executed are %s or none", what, s->layer, r->elt.zpo,
			       div ? "input 0 and the output (0x5)" : "all three (0x7)");
		return;
	}
	r->elt.a = i16 ? nbg_cpu_f32_of(u.value[div ? 25 : 56]) : 1.0f;
	r->elt.b = i16 && div ? nbg_cpu_f32_of(u.value[26]) : 1.0f;
	snprintf(s->what, sizeof(s->what), "SH %s %ux%ux%u %s, inputs %ux%ux%u and %ux%ux%u broadcast",
		 div ? "div" : "mul", r->elt.x, r->elt.y, r->elt.z, i16 ? "int16" : "fp16", u.value[2] & 0xffff, u.value[2] >> 16, u.value[5],
		 u.value[10] & 0xffff, u.value[10] >> 16, u.value[13]);
	nbg_cpu_ref_executed(s, op, CPU_OP_SHF16, div ? CPU_REF_F16DIV : CPU_REF_F16MUL);
}

/* out = fp16(in0 x in1) or fp16(in0 / in1), each input broadcast along
 * its axes of size 1: the product of two halves is exact in float32, the
 * quotient rounded to float32 then to fp16 as if rounded once (24 >= 2 x
 * 11 + 2 bits); below the normal range +0. */
/* One output row of the int16 file's shaders (doc/cpu-backend.md, "int16
 * data"): TensorDiv's code0 x a / h1 x b, TensorMul's code0 x code1 x a,
 * in double (exact but for the quotient's one rounding), rounded half
 * away from zero, saturated to int16. */
static void shi16_row(const cpu_ref *r, const uint8_t *p0, const uint8_t *p1, uint8_t *dst)
{
	for (uint32_t x = 0; x < r->elt.x; x++) {
		const uint8_t *q0 = p0 + (size_t)x * r->elt.zp0, *q1 = p1 + (size_t)x * r->elt.zp1;
		double a = (double)(int16_t)(q0[0] | q0[1] << 8), b;
		if (r->kind == CPU_REF_F16DIV)
			b = (double)nbg_fp16_to_float(nbg_cpu_f16_ld(q1)), a = a * (double)r->elt.a / b * (double)r->elt.b;
		else
			a = a * (double)(int16_t)(q1[0] | q1[1] << 8) * (double)r->elt.a;
		a = a != a ? 0.0 : nbg_cpu_round_half_away(a);
		int16_t c = (int16_t)(a > 32767.0 ? 32767.0 : a < -32768.0 ? -32768.0 : a);
		dst[2ull * x] = (uint8_t)c, dst[2ull * x + 1] = (uint8_t)((uint16_t)c >> 8);
	}
}

static int shf16_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_ref *r = &op->u.ref;
	const uint8_t *in0 = (r->group == 1 ? r->codes : buf[r->elt.region[0]]) + r->elt.base[0];
	const uint8_t *in1 = (r->group == 2 ? r->codes : buf[r->elt.region[1]]) + r->elt.base[1];
	uint8_t *out = buf[r->elt.region[2]] + r->elt.base[2];
	for (uint32_t z = 0; z < r->elt.z; z++)
		for (uint32_t y = 0; y < r->elt.y; y++) {
			const uint8_t *p0 = in0 + z * r->elt.slice[0] + y * r->elt.row[0];
			const uint8_t *p1 = in1 + z * r->elt.slice[1] + y * r->elt.row[1];
			uint8_t *dst = out + z * r->elt.slice[2] + y * r->elt.row[2];
			if (r->elt.zpo) {
				shi16_row(r, p0, p1, dst);
				continue;
			}
			for (uint32_t x = 0; x < r->elt.x; x++) {
				float a = nbg_fp16_to_float(nbg_cpu_f16_ld(p0 + (size_t)x * r->elt.zp0));
				float b = nbg_fp16_to_float(nbg_cpu_f16_ld(p1 + (size_t)x * r->elt.zp1));
				nbg_cpu_f16_store(dst + 2ull * x, r->kind == CPU_REF_F16DIV ? a / b : a * b);
			}
		}
	return 0;
}

static int shf16_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	return m->type == NBG_GRAPH_OP_SH && p->m->target == SHF16_TARGET &&
	       (m->layer == CPU_LAYER_TENSOR_MUL || m->layer == CPU_LAYER_TENSOR_DIV);
}

static void shf16_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	plan_shf16(p, s, op, m->operation, m->layer == CPU_LAYER_TENSOR_DIV);
}

const cpu_op_def nbg_cpu_op_shf16 = { "sh-f16-elt", shf16_match, shf16_plan, shf16_run, nbg_cpu_elt_cost };

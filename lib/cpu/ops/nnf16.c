/*
 * ops/nnf16.c - the NN-engine operations of the A733 fp16 files (target
 * 0x1000003b, fp16 input and output) that carry no kernels: the 2x2 max
 * pooling the compiler writes as a 1x1 depthwise command with no kernel
 * stream, the SP addition of two images (a MultiStreamProcessor_SP layer,
 * then a ReLU; the SP operations of other layers are refused), the NN_LUT
 * activation whose table holds the ReLU, the NN_LUT tables of the square,
 * square root and reciprocal square root (the entry the input's bits
 * select, interpolated linearly on its remaining bits), and the PReLU written as a 1x1
 * depthwise command whose kernel stream holds a weight 1.0 and the negative
 * slope per channel.
 * Planned through the int16 entry (ops/nn16.c, whose struct and addressing
 * they share), computed by the rules of doc/cpu-backend.md ("fp16 NN-engine
 * operations"); anything else is refused with an nnf16-* id.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "common/half.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/conv.h"
#include "cpu/ops/nn16.h"
#include "cpu/ops/shader.h"
#include "cpu/ring.h"

#define NNF16_TYPE 1u                /* the fp16 data-type code */
#define NNF16_I16 4u                 /* the int16 data-type code */
#define NNF16_TARGET 0x1000003bu
#define NNF16_ONE 0x3f800000u        /* float32 1.0 */
#define NNF16_INF 0x7f800000u
#define NNF16_NINF 0xff800000u
#define NNF16_F16_MAX 0x477fe000u   /* float32 65504, the largest half */
#define NNF16_F16_NMAX 0xc77fe000u

/* The words of an SP command that carry its second image (as the int16
 * fused addition's, ops/nn16.c). */
enum { SPF_W_SCALE = 23, SPF_W_SCALE_HI = 27, SPF_W_MAX = 29, SPF_W_MIN = 30, SPF_W_STRIDES = 32,
       SPF_W_BYTES = 33, SPF_W_ADDRESS = 34, SPF_W_END = 35, SPF_WORDS = 36 };

static int nnf16_data(uint32_t t)
{
	return t == NNF16_TYPE || t == NNF16_I16;
}

static int nnf16_layer_is(const nbg_cpu_plan *p, const nbg_cmd_op *op, const char *name)
{
	const nbg_graph_layer *l = nbg_graph_layer_at(p->g, op->layer_id);
	return l && !strcmp(l->name, name);
}

int nbg_cpu_nnf16_is(const nbg_cpu_plan *p, const nbg_cmd_op *op, uint32_t type)
{
	if (p->m->target != NNF16_TARGET)
		return 0;
	if (op->in_type == NNF16_TYPE && op->out_type == NNF16_TYPE)
		return type == NBG_GRAPH_OP_NN || type == NBG_GRAPH_OP_SP || type == NBG_GRAPH_OP_NN_LUT;
	/* the int16 blendshapes file's tables and SP scalings (fp16 or int16
	 * on either side) and its TensorMul products (int16, no kernel) */
	return nnf16_data(op->in_type) && nnf16_data(op->out_type) &&
	       (type == NBG_GRAPH_OP_SP || type == NBG_GRAPH_OP_NN_LUT ||
		(type == NBG_GRAPH_OP_NN && op->in_type == NNF16_I16 && op->out_type == NNF16_I16 &&
		 !op->kernel_ref.patched && op->kind && !strcmp(op->kind, "depthwise conv") && nnf16_layer_is(p, op, "TensorMul")));
}

static uint16_t rdh(const uint8_t *buf, uint64_t a, uint64_t lo, uint64_t size)
{
	return (uint16_t)(buf[nbg_cpu_ring_at(a, lo, size)] | buf[nbg_cpu_ring_at(a + 1, lo, size)] << 8);
}

/* ------------------------------------------------------------------- run */

/* Entry i of an NN_LUT table (checked by the plan: every word a value). */
static double lut_entry(const uint8_t *tab, uint32_t i)
{
	double v = 0;
	(void)nbg_command_lut_entry(nbg_command_lut_word(tab, 1, i), 1, &v);
	return v;
}

/* The entry of an NN_LUT table for an input's magnitude bits b (a
 * multiple of the entry's step): the inverse of nbg_command_nnlut_input. */
static uint32_t lut_index(uint32_t b, int sign, int negative)
{
	return sign ? ((b ^ 0x4000u) >> 6 | (negative ? 512u : 0u)) : ((b ^ 0x4000u) >> 5 & 1023u);
}

/* An NN_LUT table applied to fp16 bits h (doc/cpu-backend.md, "fp16
 * NN-engine operations"): the entry of the input's top bits (sign, exponent
 * and 4 mantissa bits with the tail's bit 28 set; exponent and 5 mantissa
 * bits without it), then linearly towards the next entry's value (the
 * entry of the next larger magnitude) by the remaining bits; the largest
 * magnitudes, with no next entry, take their entry.  A table without sign
 * bit holds the non-negative inputs: a negative one gives the value of its
 * magnitude negated, as the TP tables without sign support. */
static uint16_t nnf16_lut(const cpu_nn16 *n, uint16_t h)
{
	uint32_t step = n->lut_sign ? 64u : 32u, mag = h & 0x7fffu, base = mag & ~(step - 1u);
	int negative = (h & 0x8000) != 0;
	double v = lut_entry(n->lut, lut_index(base, n->lut_sign, negative));
	if (mag != base && base + step <= 0x7fffu) {
		double next = lut_entry(n->lut, lut_index(base + step, n->lut_sign, negative));
		v += (next - v) * (double)(mag - base) / (double)step;
	}
	return nbg_fp16_from_float((float)(!n->lut_sign && negative ? -v : v));
}

/* An NN_LUT table applied to an int16 code c (doc/cpu-backend.md, "int16
 * data"): the table read at the value c as at a half's, the entry of its
 * top bits (sign, exponent and 4 mantissa bits, or exponent and 5), then
 * linearly towards the next by the bits below them, all of them (a code
 * above 2,048 has more than a half holds). */
static double nni16_lut(const cpu_nn16 *n, int32_t c)
{
	uint32_t m = (uint32_t)(c < 0 ? -c : c), keep = n->lut_sign ? 4u : 5u, e = 0;
	while (m >> (e + 1))
		e++;
	uint32_t step = m && e > keep ? 1u << (e - keep) : 1u, base = m & ~(step - 1u);
	int negative = c < 0;
	uint16_t hb = nbg_fp16_from_float((float)base); /* exact: at most 6 significant bits, below 2^15 */
	double v = lut_entry(n->lut, lut_index(hb & 0x7fffu, n->lut_sign, negative));
	if (m != base) {
		uint16_t hn = nbg_fp16_from_float((float)(base + step)); /* exact: base + step has as few bits */
		double next = lut_entry(n->lut, lut_index(hn & 0x7fffu, n->lut_sign, negative));
		v += (next - v) * (double)(m - base) / (double)step;
	}
	return !n->lut_sign && negative ? -v : v;
}

/* The value at (x, y, z) when either side is int16 (a table or a
 * scaling), as the output's bits: an int16 code rounded half away from
 * zero and saturated, or an fp16 value rounded once. */
static uint16_t nni16_value(const cpu_nn16 *n, uint8_t *const *buf, uint32_t z, uint32_t y, uint32_t x)
{
	uint16_t a = rdh(buf[n->in_region], n->in_base + z * n->in_slice + y * n->in_row + 2ull * x, n->in_ring_lo,
			 n->in_ring_size);
	double v;
	if (n->kind == CPU_NN16_F16_LUT) {
		v = nni16_lut(n, (int16_t)a); /* planned: int16 in, int16 out, scale 1 */
	} else if (n->kind == CPU_NN16_F16_MUL) {
		/* two codes' product times the scale: exact in double */
		const cpu_add *ad = &n->add;
		uint16_t b = rdh(buf[ad->region], ad->base + z * ad->slice + y * ad->row + 2ull * x, 0, 0);
		v = (double)(int16_t)a * (double)(int16_t)b *
		    ldexp(1.0 + ldexp((double)n->mantissa, -23), (int)n->exponent - 127);
	} else {
		double k = ldexp(1.0 + ldexp((double)n->mantissa, -23), (int)(n->exponent & 0xffu) - 127);
		/* a 24-bit scale times a half or an int16 code: exact in double */
		v = (n->in_i16 ? (double)(int16_t)a : (double)nbg_fp16_to_float(a)) * (n->exponent >> 8 ? -k : k);
	}
	if (!n->out_i16)
		return nbg_fp16_from_double(v);
	if (v != v) /* a NaN input: 0, as the SP subtraction's */
		return 0;
	v = nbg_cpu_round_half_away(v);
	return (uint16_t)(int16_t)(v > 32767.0 ? 32767.0 : v < -32768.0 ? -32768.0 : v);
}

static uint16_t nnf16_value(const cpu_nn16 *n, uint8_t *const *buf, uint32_t z, uint32_t y, uint32_t x)
{
	const uint8_t *in = buf[n->in_region];
	if (n->kind != CPU_NN16_F16_MAXPOOL) {
		uint16_t a = rdh(in, n->in_base + z * n->in_slice + y * n->in_row + 2ull * x, n->in_ring_lo,
				 n->in_ring_size);
		float v = nbg_fp16_to_float(a);
		/* both halves: their product is exact in float32, rounded once */
		if (n->kind == CPU_NN16_F16_PRELU && (a & 0x8000))
			return nbg_fp16_from_float(v * n->slope[z]);
		if (n->kind == CPU_NN16_F16_SIGMOID)
			return nbg_fp16_from_float((float)(1.0 / (1.0 + exp(-n->lut_p * v))));
		if (n->kind == CPU_NN16_F16_LUT)
			return nnf16_lut(n, a);
		if (n->kind == CPU_NN16_F16_SCALE) {
			/* a power of two times a half: exact in double, rounded once */
			double k = ldexp(1.0 + ldexp((double)n->mantissa, -23), (int)(n->exponent & 0xffu) - 127);
			return nbg_fp16_from_double((double)v * (n->exponent >> 8 ? -k : k));
		}
		if (n->kind == CPU_NN16_F16_ADD || n->kind == CPU_NN16_F16_MUL) {
			const cpu_add *ad = &n->add;
			float b = nbg_fp16_to_float(rdh(buf[ad->region], ad->base + z * ad->slice + y * ad->row + 2ull * x,
							0, 0));
			if (n->kind == CPU_NN16_F16_ADD)
				return nbg_fp16_from_float(v + b);
			/* the product of two halves is exact in float32; the bounds +-65504 */
			uint16_t h = nbg_fp16_from_float(v * b);
			return (h & 0x7fff) == 0x7c00 ? (uint16_t)((h & 0x8000) | 0x7bff) : h;
		}
		return a;
	}
	uint16_t best = 0;
	int any = 0;
	for (uint32_t dy = 0; dy < 2; dy++)
		for (uint32_t dx = 0; dx < 2; dx++) {
			uint32_t yy = 2 * y + dy, xx = 2 * x + dx;
			if (yy >= n->in_y || xx >= n->in_x)
				continue;
			uint16_t h = rdh(in, n->in_base + z * n->in_slice + yy * n->in_row + 2ull * xx, n->in_ring_lo,
					 n->in_ring_size);
			if (!any || nbg_fp16_to_float(h) > nbg_fp16_to_float(best))
				best = h;
			any = 1;
		}
	return best;
}

void nbg_cpu_nnf16_run(const cpu_nn16 *n, uint8_t *const *buf)
{
	uint8_t *out = buf[n->out_region];
	for (uint32_t z = 0; z < n->out_z; z++)
		for (uint32_t y = 0; y < n->pool_y; y++)
			for (uint32_t x = 0; x < n->pool_x; x++) {
				uint16_t h = n->in_i16 || n->out_i16 ? nni16_value(n, buf, z, y, x)
								       : nnf16_value(n, buf, z, y, x);
				if (n->relu && (h & 0x8000))
					h = 0;
				if (!n->out_i16 && !(h & 0x7c00)) /* below the normal range: 0, as every fp16 result here */
					h = 0;
				uint64_t a = n->out_base + z * n->out_slice + y * n->out_row + 2ull * x;
				out[nbg_cpu_ring_at(a, n->out_ring_lo, n->out_ring_size)] = (uint8_t)h;
				out[nbg_cpu_ring_at(a + 1, n->out_ring_lo, n->out_ring_size)] = (uint8_t)(h >> 8);
			}
}

/* ------------------------------------------------------------------ plan */

static int nnf16_image(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd *cmd);
static int nni16_bounds(const cpu_nn16 *n, const uint32_t *w, uint32_t mant, uint32_t exp);

/* The SP addition's second image: words 32 (row, slice strides), 34 (its
 * address), 35 and 33 (where the buffer that holds it ends, its size / 32,
 * the image inside it so that no address wraps; or word 35 unrelocated
 * with bits 0-25 set: no buffer), its scale 1.0 (words 23, 27) and no bounds (words 29, 30: +-inf). */
static int nnf16_second(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd *cmd)
{
	const uint32_t *w = cmd->words;
	if (cmd->word_count < SPF_WORDS ||
	    ((w[SPF_W_SCALE] >> 2) | (w[SPF_W_SCALE_HI] >> 31) << 30) != NNF16_ONE || w[SPF_W_MAX] != NNF16_INF ||
	    w[SPF_W_MIN] != NNF16_NINF) {
		nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 SP addition whose words 23/27 (the second "
			       "image's scale), 29 and 30 (bounds) are not 1.0, +inf and -inf: executed is the plain "
			       "sum");
		return 0;
	}
	return nnf16_image(p, s, n, cmd);
}

/* The second image of words 32-35 (nnf16_second); 0 with the step refused. */
static int nnf16_image(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd *cmd)
{
	const uint32_t *w = cmd->words;
	cpu_add *a = &n->add;
	nbg_cmd_ref r, end;
	if (!nbg_cpu_add_second16(p, s, a, n->pool_x, n->pool_y, n->out_z, w, SPF_W_ADDRESS, SPF_W_STRIDES, "fp16", NULL, &r))
		return 0;
	/* the image's bytes from its first: the last row's end in the last slice */
	uint64_t bytes = a->slice * (n->out_z - 1) + a->row * (n->pool_y - 1) + 2ull * n->pool_x;
	uint64_t size = 32ull * w[SPF_W_BYTES], stop;
	/* no buffer: word 35 relocated by no patch, its bits 0-25 all set (the
	 * value the commands hold where no circular buffer is, as word 28) */
	int none = !nbg_command_word_ref(p->g, s->operation, SPF_W_END, w[SPF_W_END], &end) && !end.patched &&
		   (w[SPF_W_END] & 0x3ffffffu) == 0x3ffffffu;
	stop = end.offset & 0x3ffffffu;
	if (!none && (!end.patched || end.source_type != r.source_type || end.index != r.index || stop < size ||
		      a->base < stop - size || a->base + bytes > stop)) {
		nbg_cpu_refuse(s, "nnf16-field-unsupported", "its command words %d (0x%08x) and %d (0x%x) are not "
			       "the end and the size / 32 of a buffer that holds its second image: a circular "
			       "buffer there is not established", SPF_W_END, w[SPF_W_END], SPF_W_BYTES,
			       w[SPF_W_BYTES]);
		return 0;
	}
	a->on = 1;
	return 1;
}

/* The PReLU: a 1x1 depthwise command whose kernel stream decodes as
 * f32-pairs (doc/weights.md), every weight 1.0, every second value a finite
 * float16 (the negative slope); 0 with the step refused. */
static int nnf16_prelu(nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const nbg_weights_op *wo)
{
	size_t count = 0;
	const uint8_t *codes = wo ? nbg_weights_op_codes(wo, &count) : NULL;
	const float *slope = wo ? nbg_weights_op_prelu_slope(wo) : NULL;
	const uint32_t *shape = wo ? nbg_weights_op_shape(wo) : NULL;
	if (!codes || !slope || nbg_weights_op_format(wo) != NBG_WEIGHTS_FORMAT_F32 || count != op->out_conv[2] ||
	    shape[0] != op->out_conv[2]) {
		nbg_cpu_refuse(s, "nnf16-operation-unsupported", "an fp16 1x1 depthwise NN command with a kernel "
			       "stream %s: executed is the PReLU of a stream decoded as f32-pairs, one pair per "
			       "output channel (%u)", wo ? nbg_weights_op_reason(wo) : "not decoded",
			       op->out_conv[2]);
		return 0;
	}
	for (size_t c = 0; c < count; c++) {
		uint16_t w = (uint16_t)(codes[2 * c] | codes[2 * c + 1] << 8), h = nbg_fp16_from_float(slope[c]);
		if (w != 0x3c00 || !(h & 0x7c00) || (h & 0x7c00) == 0x7c00 || nbg_fp16_to_float(h) != slope[c]) {
			nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 PReLU whose channel %zu has weight "
				       "0x%04x (fp16) and slope %g: executed are weight 1.0 and a normal float16 "
				       "slope", c, w, (double)slope[c]);
			return 0;
		}
	}
	n->kind = CPU_NN16_F16_PRELU;
	n->slope = slope;
	return 1;
}

/* An NN_LUT table on int16 codes in and out (doc/cpu-backend.md, "int16
 * data"): its 4,108 bytes every word a value of the layout, its tail's
 * bits 28 and 24 both set or bit 28 clear (the two mappings interpolated
 * on fp16 data); read at the code's value.  0 with the step refused. */
static int nni16_table(nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const uint8_t *tab, uint64_t size)
{
	int full = tab && size >= NBG_NNLUT_BYTES && !nbg_nnlut_convolution(op, size);
	int mode = full ? nbg_command_nnlut_mode(nbg_command_lut_word(tab, 1, NBG_LUT_ENTRIES)) : 2;
	int ok = n->in_i16 && n->out_i16 && mode != 2;
	for (uint32_t i = 0; ok && i < NBG_LUT_ENTRIES; i++) {
		double v;
		ok = nbg_command_lut_entry(nbg_command_lut_word(tab, 1, i), 1, &v);
	}
	if (!ok) {
		nbg_cpu_refuse(s, "nnf16-lut-unsupported", "an NN_LUT on int16 data (input type %s, output %s) whose "
			       "table (%llu bytes, input mapping %u) is not one of 4,108 bytes, every entry a value, "
			       "read with the tail's bits 28 and 24 both set or bit 28 clear: executed is such a table "
			       "from int16 codes to int16 codes", n->in_i16 ? "int16" : "fp16",
			       n->out_i16 ? "int16" : "fp16", (unsigned long long)size, (unsigned)mode);
		return 0;
	}
	n->kind = CPU_NN16_F16_LUT;
	n->lut = tab;
	n->lut_sign = (nbg_command_lut_word(tab, 1, NBG_LUT_ENTRIES) & NBG_NNLUT_SIGN) != 0;
	n->lut_name = "int16 table";
	return 1;
}

/* An NN_LUT operation: the ReLU, the sigmoid (executed as the function), or
 * a table of the square, square root or
 * reciprocal square root, the functions at whose entries the tail's input
 * mapping is established (doc/weights.md); 0 with the step refused. */
static int nnf16_table(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op)
{
	uint64_t size = 0;
	const uint8_t *tab = nbg_command_coef_bytes(p->m, p->g, &op->kernel_ref, &size);
	double param = 0;
	if (n->in_i16 || n->out_i16)
		return nni16_table(s, n, op, tab, size);
	const char *fn = nbg_nnlut_table_function(tab, size, &param);
	if (fn && !strcmp(fn, "sigmoid")) {
		/* the logistic tables: executed as the function, its parameter
		 * solved from the entries (doc/cpu-backend.md) */
		n->kind = CPU_NN16_F16_SIGMOID;
		n->lut_p = param;
		return 1;
	}
	static const char *const known[] = { "relu", "square", "sqrt", "rsqrt" };
	size_t k = 0;
	while (fn && k < sizeof(known) / sizeof(*known) && strcmp(fn, known[k]))
		k++;
	if (fn && k && nbg_command_nnlut_mode(nbg_command_lut_word(tab, 1, NBG_LUT_ENTRIES)) == 2) {
		nbg_cpu_refuse(s, "nnf16-lut-unsupported", "an fp16 NN_LUT table (%s) whose tail word 0x%08x has "
			       "bit 28 set and bit 24 clear: interpolated are the tables of the other two input "
			       "mappings (doc/weights.md)", fn, nbg_command_lut_word(tab, 1, NBG_LUT_ENTRIES));
		return 0;
	}
	if (!fn || k == sizeof(known) / sizeof(*known)) {
		nbg_cpu_refuse(s, "nnf16-lut-unsupported", "an fp16 NN_LUT whose table (%llu bytes) holds %s: "
			       "executed are the tables of the ReLU, the square, the square root and the "
			       "reciprocal square root, at whose entries the tail's input mapping is established",
			       (unsigned long long)size, fn ? fn : "no function of the list at the tail's mapping");
		return 0;
	}
	if (k == 0) {
		n->kind = CPU_NN16_F16_RELU;
		n->relu = 1;
		return 1;
	}
	for (uint32_t i = 0; i < NBG_LUT_ENTRIES; i++) {
		double v;
		if (!nbg_command_lut_entry(nbg_command_lut_word(tab, 1, i), 1, &v)) {
			nbg_cpu_refuse(s, "nnf16-lut-unsupported", "an fp16 NN_LUT table (%s) whose entry %u "
				       "(0x%08x) is no value of the layout", fn, i, nbg_command_lut_word(tab, 1, i));
			return 0;
		}
	}
	n->kind = CPU_NN16_F16_LUT;
	n->lut = tab;
	n->lut_sign = (nbg_command_lut_word(tab, 1, NBG_LUT_ENTRIES) & NBG_NNLUT_SIGN) != 0;
	n->lut_name = fn;
	return 1;
}

/* The product of a TensorMul layer's NN depthwise command (no kernel
 * reference) with the second image of its words 32-35, words 29 and 30
 * the bounds +-65504, words 23 and 27 bit 31 0 (no scale of the second
 * image); 0 with the step refused. */
static int nnf16_mul(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const nbg_cmd *cmd)
{
	const uint32_t *w = cmd->words;
	uint32_t mant = nbg_cpu_nn_multiplier(cmd);
	uint32_t exp = nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT) | nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT_BIT_5_6) << 5;
	/* int16: its scale (exponent 1-254), bounds the int16 range times it;
	 * fp16: scale 1 (checked by the caller), bounds +-65504 */
	int bounds = cmd->word_count >= SPF_WORDS &&
		     (n->in_i16 ? exp && exp < 255 && !(w[SPF_W_MAX] == NNF16_INF) && nni16_bounds(n, w, mant, exp)
				: w[SPF_W_MAX] == NNF16_F16_MAX && w[SPF_W_MIN] == NNF16_F16_NMAX);
	if (op->kernel[0] != 1 || op->kernel[1] != 1 || op->kernel_ref.patched || op->pooling || op->relu ||
	    !bounds || w[SPF_W_SCALE] || w[SPF_W_SCALE_HI] >> 31) {
		nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 NN depthwise command of a TensorMul layer "
			       "(kernel %ux%u, kernel reference %s, pooling %u, relu %d, words 29, 30: 0x%08x, "
			       "0x%08x): executed is the 1x1 command with no kernel reference, pooling or ReLU, "
			       "bounds +-65504 (0x477fe000, 0xc77fe000) and words 23, 27 bit 31 clear, times its "
			       "second image", op->kernel[0], op->kernel[1], op->kernel_ref.patched ? "patched" : "none",
			       op->pooling, op->relu, cmd->word_count >= SPF_WORDS ? w[SPF_W_MAX] : 0,
			       cmd->word_count >= SPF_WORDS ? w[SPF_W_MIN] : 0);
		return 0;
	}
	n->kind = CPU_NN16_F16_MUL;
	n->mantissa = mant;
	n->exponent = exp;
	return nnf16_image(p, s, n, cmd);
}

/* Words 29 and 30 (the bounds) of a scaling: +-inf, or, writing int16
 * codes, float32(32767 k) and float32(-32768 k), k the command's scale (the
 * int16 range: the code's saturation). */
static uint32_t nni16_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static int nni16_bounds(const cpu_nn16 *n, const uint32_t *w, uint32_t mant, uint32_t exp)
{
	if (w[SPF_W_MAX] == NNF16_INF && w[SPF_W_MIN] == NNF16_NINF)
		return 1;
	if (!n->out_i16 || exp == 0 || exp >= 255)
		return 0;
	double k = ldexp(1.0 + ldexp((double)mant, -23), (int)exp - 127);
	return w[SPF_W_MAX] == nni16_f32_bits((float)(32767.0 * k)) &&
	       w[SPF_W_MIN] == nni16_f32_bits((float)(-32768.0 * k));
}

/* A TensorMul_SP layer's (or ActivationLayer_SP's) one SP operation: its
 * input times its command's scale (a power of two: the SP scale of
 * "The SP mean"), negated where word 27 bit 28 is set (ActivationLayer_SP:
 * there only); no second image (word 34 0, word 35 unrelocated with bits
 * 0-25 set), bounds +-inf, words 23 and 27 bit 31 clear.  A TensorAdd_SP
 * of that form (scale 1) is a copy: its second image's scale 0, none
 * given.  0 with the step refused. */
static int nnf16_scale(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd *cmd)
{
	const uint32_t *w = cmd->words;
	const nbg_graph_layer *l = nbg_graph_layer_at(p->g, nbg_graph_operation_at(p->g, s->operation)->layer_id);
	int neg = !strcmp(s->layer, "ActivationLayer_SP"), add = !strcmp(s->layer, "TensorAdd_SP");
	uint32_t mant = nbg_cpu_nn_multiplier(cmd);
	uint32_t exp = nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT) | nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT_BIT_5_6) << 5 |
		       (cmd->word_count < SPF_WORDS ? 0u : (w[SPF_W_SCALE_HI] >> 30 & 1u) << 7);
	nbg_cmd_ref end;
	if (!l || l->operation_records != 1 || cmd->word_count < SPF_WORDS || w[SPF_W_ADDRESS] ||
	    nbg_command_word_ref(p->g, s->operation, SPF_W_END, w[SPF_W_END], &end) ||
	    (w[SPF_W_END] & 0x3ffffffu) != 0x3ffffffu || !nni16_bounds(n, w, mant, exp) ||
	    w[SPF_W_SCALE] || (w[SPF_W_SCALE_HI] & 0xb0000000u) != (neg ? 0x10000000u : 0u)) {
		nbg_cpu_refuse(s, "nnf16-operation-unsupported", "an fp16 SP operation of layer %s (%u operations "
			       "in the layer) outside the executed scaling: one operation, no second image (words "
			       "34, 35), bounds +-inf (words 29, 30), words 23 and 27 bit 31 clear, word 27 bit 28 "
			       "(the negation) set in an ActivationLayer_SP only", s->layer,
			       l ? l->operation_records : 0);
		return 0;
	}
	/* on int16 data: the scale of the fraction lengths (a power of two to
	 * or from fp16, any between two int16 images) */
	int i16 = n->in_i16 || n->out_i16;
	if ((mant && !(n->in_i16 && n->out_i16)) || exp == 0 || exp == 255 || (!i16 && (neg || add) && exp != 127)) {
		nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 SP operation of layer %s whose scale "
			       "(mantissa 0x%06x, exponent %u) is not a power of two%s", s->layer, mant, exp,
			       i16 ? " (any scale between two int16 images)" : neg ? " 1 (the negation's)"
			       : add ? " 1 (an addition without second image)" : "");
		return 0;
	}
	n->kind = CPU_NN16_F16_SCALE;
	n->mantissa = mant;
	n->exponent = exp | (uint32_t)neg << 8;
	return 1;
}

/* Which operation it is; 0 with the step refused. */
static int nnf16_kind(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const nbg_cmd *cmd,
		      uint32_t type, int cmd_kind, int layer)
{
	const nbg_weights_op *wo = p->wop[s->operation];
	if (type == NBG_GRAPH_OP_NN) {
		if (cmd_kind == CPU_CMD_DEPTHWISE_CONV && op->kernel[0] == 1 && op->kernel[1] == 1 &&
		    op->kernel_ref.patched && !op->pooling && !op->relu)
			return nnf16_prelu(s, n, op, wo);
		if (cmd_kind == CPU_CMD_DEPTHWISE_CONV && !strcmp(s->layer, "TensorMul"))
			return nnf16_mul(p, s, n, op, cmd);
		if (cmd_kind != CPU_CMD_DEPTHWISE_CONV || op->kernel[0] != 1 || op->kernel[1] != 1 ||
		    op->kernel_ref.patched || op->pooling != 1 || op->pooling_size != 2 || op->relu ||
		    (wo && nbg_weights_op_status(wo) == NBG_WEIGHTS_DECODED)) {
			nbg_cpu_refuse(s, "nnf16-operation-unsupported", "an fp16 NN %s (kernel %ux%u, pooling %u "
				       "of %u, relu %d): executed is the max pooling written as a 1x1 depthwise "
				       "command with 2x2 max pooling, no kernel reference and no ReLU", op->kind,
				       op->kernel[0], op->kernel[1], op->pooling, op->pooling_size, op->relu);
			return 0;
		}
		n->kind = CPU_NN16_F16_MAXPOOL;
		return 1;
	}
	if (op->pooling || op->relu || op->kernel[0] != 1 || op->kernel[1] != 1) {
		nbg_cpu_refuse(s, "nnf16-operation-unsupported", "an fp16 %s operation with pooling %u, relu %d, "
			       "kernel %ux%u: executed are none, 0, 1x1", nbg_graph_op_type_name(type), op->pooling,
			       op->relu, op->kernel[0], op->kernel[1]);
		return 0;
	}
	if (type == NBG_GRAPH_OP_SP && (!strcmp(s->layer, "TensorMul_SP") || !strcmp(s->layer, "ActivationLayer_SP")))
		return nnf16_scale(p, s, n, cmd);
	/* an addition with no second image and its scale 0: the source's ADD of
	 * a constant the command does not hold (doc/cpu-backend.md) */
	if (type == NBG_GRAPH_OP_SP && layer == CPU_LAYER_TENSOR_ADD_SP && cmd->word_count >= SPF_WORDS &&
	    !cmd->words[SPF_W_SCALE] && !(cmd->words[SPF_W_SCALE_HI] >> 31) && !cmd->words[SPF_W_ADDRESS])
		return nnf16_scale(p, s, n, cmd);
	if (type == NBG_GRAPH_OP_SP && layer != CPU_LAYER_MULTISTREAM_SP && layer != CPU_LAYER_TENSOR_ADD_SP) {
		/* TensorSub_SP, TensorMul_SP, ActivationLayer_SP of the other
		 * fp16 files */
		nbg_cpu_refuse(s, "nnf16-operation-unsupported", "an fp16 SP operation of layer %s: executed are "
			       "the addition then ReLU of a MultiStreamProcessor_SP layer and the addition of a "
			       "TensorAdd_SP layer", s->layer);
		return 0;
	}
	if (type == NBG_GRAPH_OP_SP) {
		/* word 27 bits 23-25 and word 28 bits 2-4: 0 in every
		 * MultiStreamProcessor_SP command, (7, 7) in the TensorAdd_SP
		 * ones whose sum feeds a PReLU; the sum is the same either way
		 * (doc/cpu-backend.md, fp16 NN-engine operations), other values
		 * are not established */
		uint32_t w27 = cmd->word_count > SPF_W_SCALE_HI ? cmd->words[SPF_W_SCALE_HI] >> 23 & 7u : 0;
		uint32_t w28 = cmd->word_count > SPF_W_SCALE_HI + 1 ? cmd->words[SPF_W_SCALE_HI + 1] >> 2 & 7u : 0;
		if ((w27 || w28) && (w27 != 7 || w28 != 7)) {
			nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 SP addition whose word 27 bits 23-25 "
				       "(%u) and word 28 bits 2-4 (%u) are neither both 0 nor both 7: their meaning is "
				       "not established", w27, w28);
			return 0;
		}
		n->kind = CPU_NN16_F16_ADD;
		n->relu = layer == CPU_LAYER_MULTISTREAM_SP;
		return nnf16_second(p, s, n, cmd);
	}
	return nnf16_table(p, s, n, op);
}

void nbg_cpu_nnf16_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op, const nbg_cmd *cmd,
			uint32_t type, int cmd_kind, int layer)
{
	/* the scale: 1 (post_multiplier 0, post_shift 31 | 3 << 5: the float32 exponent of 1.0) */
	uint32_t mant = nbg_cpu_nn_multiplier(cmd);
	uint32_t exp = nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT) | nbg_cmd_nn(cmd, NBG_NNF_POST_SHIFT_BIT_5_6) << 5;
	n->in_i16 = op->in_type == NNF16_I16;
	n->out_i16 = op->out_type == NNF16_I16;
	/* its own scale: a TensorMul_SP's, or an SP operation's on int16 data */
	int scaled = (type == NBG_GRAPH_OP_SP && (!strcmp(s->layer, "TensorMul_SP") || n->in_i16 || n->out_i16)) ||
		     (type == NBG_GRAPH_OP_NN && n->in_i16);
	if ((!scaled && (mant || exp != 127)) ||
	    (op->kernel_type != NNF16_TYPE && !(op->kernel_type == NNF16_I16 && (n->in_i16 || n->out_i16))) ||
	    nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_OFFSET) ||
	    nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET) || op->in_element_bytes != 2 || op->out_element_bytes != 2) {
		nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 NN-engine operation with scale fields "
			       "0x%x / %u, kernel data type %u, input offsets %u, %u, elements of %u and %u bytes: "
			       "executed are scale 1 (0 / 127), fp16, 0, 0, 2 bytes", mant, exp, op->kernel_type,
			       nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_OFFSET), nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_OFFSET),
			       op->in_element_bytes, op->out_element_bytes);
		return;
	}
	n->in_x = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_SIZE);
	n->in_y = nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_SIZE);
	n->out_x = op->out_conv[0];
	n->out_y = op->out_conv[1];
	n->out_z = n->in_z = op->out_conv[2];
	n->pool_x = op->out[0];
	n->pool_y = op->out[1];
	n->k = 1;
	n->depthwise = 1;
	if (!nnf16_kind(p, s, n, op, cmd, type, cmd_kind, layer))
		return;
	int pooled = n->kind == CPU_NN16_F16_MAXPOOL;
	if (!n->in_x || !n->in_y || !n->out_z || n->in_x > (1u << 16) || n->in_y > (1u << 16) ||
	    n->out_x != n->in_x || n->out_y != n->in_y || op->out[2] != n->out_z ||
	    n->pool_x != (pooled ? (n->in_x + 1) / 2 : n->in_x) || n->pool_y != (pooled ? (n->in_y + 1) / 2 : n->in_y)) {
		nbg_cpu_refuse(s, "shape-inconsistent", "an fp16 operation of input %ux%u, output %ux%ux%u written "
			       "as %ux%ux%u: executed is the input's size (halved by the max pooling)", n->in_x,
			       n->in_y, n->out_x, n->out_y, n->out_z, op->out[0], op->out[1], op->out[2]);
		return;
	}
	n->in_base = op->in_ref.offset;
	n->in_row = op->in_row_stride;
	n->in_slice = op->in_slice_stride;
	n->in_xstep = 2;
	n->out_base = op->out_ref.offset;
	n->out_row = op->out_row_stride;
	n->out_slice = op->out_slice_stride;
	if (op->tile_placed || !nbg_cpu_nn16_addressing(p, s, n, op, cmd, 2ull * n->in_x, n->in_y, n->in_z,
							 2ull * n->pool_x, n->pool_y, n->out_z)) {
		if (op->tile_placed)
			nbg_cpu_refuse(s, "nnf16-field-unsupported", "an fp16 operation of a row tile: not established");
		return;
	}
	snprintf(s->what, sizeof(s->what), "NN %s%s %ux%ux%u -> %ux%ux%u, %s",
		 n->kind == CPU_NN16_F16_LUT ? "lut " : "",
		 n->kind == CPU_NN16_F16_MAXPOOL ? "max pool 2x2"
		 : n->kind == CPU_NN16_F16_ADD	 ? (n->relu ? "SP add + relu" : "SP add")
		 : n->kind == CPU_NN16_F16_PRELU ? "prelu"
		 : n->kind == CPU_NN16_F16_LUT	 ? n->lut_name
		 : n->kind == CPU_NN16_F16_SCALE ? (n->exponent >> 8 ? "SP negate"
						    : layer == CPU_LAYER_TENSOR_ADD_SP ? "SP add 0" : "SP scale")
		 : n->kind == CPU_NN16_F16_MUL	 ? "mul"
		 : n->kind == CPU_NN16_F16_SIGMOID ? "lut sigmoid"
						 : "lut relu",
		 n->in_x, n->in_y, n->in_z, n->pool_x, n->pool_y, n->out_z,
		 n->in_i16 == n->out_i16 ? (n->in_i16 ? "int16" : "fp16") : n->in_i16 ? "int16 -> fp16" : "fp16 -> int16");
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
	s->macs = 0;
	/* an SP addition is known by its layer and its source, not from its SP
	 * program (word 27's low bits), as the other SP operations */
	s->reference = n->kind == CPU_NN16_F16_ADD || n->kind == CPU_NN16_F16_SCALE || n->kind == CPU_NN16_F16_MUL;
}

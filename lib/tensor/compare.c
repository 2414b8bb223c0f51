/*
 * compare.c - two tensors measured against each other (nbg compare, nbg
 * run --golden, doc/debugging.md): the difference of their stored values
 * and of their dequantized values, the cosine similarity of their values
 * less their zero points (a scale does not change it, so it is known where
 * the scale is not), and the agreement of their k largest values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/tensor.h"

/* |x - y|: 0 for two NaNs, +inf for a NaN against a number. */
static double abs_diff(double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y) ? 0 : INFINITY;
	return x == y ? 0 : fabs(x - y);
}

/* The tolerance in stored units: relative, of b's range. */
static double resolved(const float *b, uint64_t n, double tolerance, int relative)
{
	if (!relative)
		return tolerance;
	double lo = INFINITY, hi = -INFINITY;
	for (uint64_t i = 0; i < n; i++)
		if (isfinite(b[i])) {
			lo = b[i] < lo ? b[i] : lo;
			hi = b[i] > hi ? b[i] : hi;
		}
	return hi >= lo ? tolerance * (hi - lo) : 0;
}

/* The values less their zero points, times the scale where it is known. */
static float *centred(const nbg_tensor_side *s, uint64_t n)
{
	float *v = malloc(n ? (size_t)n * sizeof(float) : 1);
	for (uint64_t i = 0; v && i < n; i++)
		v[i] = (float)(((double)s->stored[i] - s->zero_point) * (s->scale > 0 ? s->scale : 1));
	return v;
}

/* Top-k agreement of the centred values; -1 when out of memory. */
static int top_agreement(const float *ca, const float *cb, uint64_t n, uint32_t k, nbg_tensor_stats *out)
{
	out->top_k = (uint32_t)(n < k ? n : k);
	nbg_tensor_top_entry *ta = calloc(out->top_k + 1u, sizeof(*ta)), *tb = calloc(out->top_k + 1u, sizeof(*tb));
	if (!ta || !tb) {
		free(ta);
		free(tb);
		return -1;
	}
	size_t na = nbg_tensor_top(ca, n, out->top_k, ta), nb = nbg_tensor_top(cb, n, out->top_k, tb);
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			out->top_common += ta[i].index == tb[j].index;
	out->top1_equal = na && nb && ta[0].index == tb[0].index;
	free(ta);
	free(tb);
	return 0;
}

static void cosine_of(const float *ca, const float *cb, uint64_t n, nbg_tensor_stats *out)
{
	double ab = 0, aa = 0, bb = 0;
	for (uint64_t i = 0; i < n; i++) {
		ab += (double)ca[i] * cb[i];
		aa += (double)ca[i] * ca[i];
		bb += (double)cb[i] * cb[i];
	}
	out->cosine = aa > 0 && bb > 0 && isfinite(ab) ? ab / (sqrt(aa) * sqrt(bb)) : NAN;
}

nbg_code nbg_tensor_measure(const nbg_tensor_side *a, const nbg_tensor_side *b, uint64_t n, double tolerance,
			    int relative, uint32_t top_k, nbg_tensor_stats *out, nbg_error *err)
{
	if (!a || !b || !out || (n && (!a->stored || !b->stored)))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "measure: NULL pointer");
	memset(out, 0, sizeof(*out));
	if (!(tolerance >= 0))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "",
				     "measure: the tolerance must be a number >= 0");
	out->elements = n;
	out->tolerance = resolved(b->stored, n, tolerance, relative);
	int deq = a->scale > 0 && b->scale > 0;
	double sum_s = 0, sum_d = 0;
	for (uint64_t i = 0; i < n; i++) {
		double d = abs_diff(a->stored[i], b->stored[i]);
		double q = deq ? abs_diff((a->stored[i] - a->zero_point) * a->scale,
					  (b->stored[i] - b->zero_point) * b->scale) : 0;
		out->max_abs_stored = d > out->max_abs_stored ? d : out->max_abs_stored;
		out->max_abs = q > out->max_abs ? q : out->max_abs;
		sum_s += d;
		sum_d += q;
		if (d > out->tolerance && !out->beyond++)
			out->first_beyond = i;
	}
	out->mean_abs_stored = n ? sum_s / (double)n : 0;
	out->mean_abs = n ? sum_d / (double)n : 0;
	if (!deq)
		out->max_abs = out->mean_abs = NAN;
	float *ca = centred(a, n), *cb = centred(b, n);
	int bad = !ca || !cb;
	if (!bad) {
		cosine_of(ca, cb, n, out);
		bad = top_agreement(ca, cb, n, top_k ? top_k : 5, out);
	}
	free(ca);
	free(cb);
	return bad ? nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory") : NBG_OK;
}

nbg_code nbg_tensor_stored(uint32_t fmt, const void *raw, size_t size, uint64_t count, float **out,
			   nbg_error *err)
{
	if (!out || (size && !raw))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "stored: NULL pointer");
	*out = NULL;
	unsigned es = nbg_tensor_element_size(fmt);
	if (!es)
		return nbg_error_set(err, NBG_E_TENSOR_FORMAT_UNSUPPORTED, 0, "data_format",
				     "data format %u has no element-wise values", fmt);
	if (count > SIZE_MAX / es || (uint64_t)size != count * es)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "size",
				     "%zu bytes are not %llu elements of %u bytes", size,
				     (unsigned long long)count, es);
	/* quantization none: a code's value is the code (tensor.h) */
	nbg_io io = { .data_format = fmt, .quant_format = NBG_QUANT_NONE, .element_count = count,
		      .byte_size = size, .byte_size_known = 1 };
	float *v = malloc(count ? (size_t)count * sizeof(float) : 1);
	if (!v)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	nbg_code rc = nbg_tensor_dequantize(&io, raw, size, v, count, err);
	if (rc != NBG_OK) {
		free(v);
		return rc;
	}
	*out = v;
	return NBG_OK;
}

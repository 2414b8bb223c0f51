/*
 * quant.c - element conversions between float and an NBG record's data
 * format and quantization (include/nbg/tensor.h states the formulas), the
 * top-N listing and the float comparison.
 */
#include <math.h>
#include <string.h>

#include "common/half.h"
#include "common/internal.h"
#include "nbg/tensor.h"

unsigned nbg_tensor_element_size(uint32_t fmt)
{
	switch (fmt) {
	case 0: case 8: case 9: return 4;           /* FP32, INT32, UINT32 */
	case 1: case 4: case 5: case 7: return 2;   /* FP16, UINT16, INT16, BFP16 */
	case 2: case 3: case 6: case 16: return 1;  /* UINT8, INT8, CHAR, BOOL8 */
	case 10: case 11: case 12: return 8;        /* INT64, UINT64, FP64 */
	default: return 0;                          /* INT4, UINT4, unknown */
	}
}

static int is_float_format(uint32_t fmt)
{
	return fmt == 0 || fmt == 1 || fmt == 7 || fmt == 12;
}

static int is_signed_format(uint32_t fmt)
{
	return fmt == 3 || fmt == 5 || fmt == 6 || fmt == 8 || fmt == 10;
}

static void range_of(uint32_t fmt, double *lo, double *hi)
{
	switch (fmt) {
	case 2: *lo = 0; *hi = 255; return;
	case 3: case 6: *lo = -128; *hi = 127; return;
	case 4: *lo = 0; *hi = 65535; return;
	case 5: *lo = -32768; *hi = 32767; return;
	case 8: *lo = -2147483648.0; *hi = 2147483647.0; return;
	case 9: *lo = 0; *hi = 4294967295.0; return;
	case 10: *lo = -9223372036854775808.0; *hi = 9223372036854774784.0; return;
	case 11: *lo = 0; *hi = 18446744073709549568.0; return;
	default: *lo = 0; *hi = 1; return; /* BOOL8 */
	}
}

static void store_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Checks the record and returns the element size, or fails. */
static nbg_code check_record(const nbg_io *io, uint64_t count, size_t raw_size, unsigned *esz,
			     nbg_error *err)
{
	*esz = nbg_tensor_element_size(io->data_format);
	if (*esz == 0)
		return nbg_error_set(err, NBG_E_TENSOR_FORMAT_UNSUPPORTED, 0, "data_format",
				     "data format %u (%s) has no element-wise float conversion",
				     io->data_format,
				     nbg_data_format_name(io->data_format)
					     ? nbg_data_format_name(io->data_format) : "unknown");
	if (!is_float_format(io->data_format) && io->quant_format == NBG_QUANT_AFFINE &&
	    (!isfinite(io->scale) || io->scale == 0.0f))
		return nbg_error_set(err, NBG_E_TENSOR_FORMAT_UNSUPPORTED, 0, "scale",
				     "the record's affine scale is %g; values cannot be quantized",
				     (double)io->scale);
	/* 2^fl for |fl| past 127 leaves float32's range: no element value would
	 * mean anything (and -fl overflows for INT32_MIN). */
	if (!is_float_format(io->data_format) && io->quant_format == NBG_QUANT_DFP &&
	    (io->fixed_point_pos < NBG_DFP_POS_MIN || io->fixed_point_pos > NBG_DFP_POS_MAX))
		return nbg_error_set(err, NBG_E_TENSOR_FORMAT_UNSUPPORTED, 0, "fixed_point_pos",
				     "the record's dynamic fixed-point position is %d, outside "
				     "%d..%d: 2^%d is outside float32's range, so no value can be "
				     "converted", io->fixed_point_pos, NBG_DFP_POS_MIN,
				     NBG_DFP_POS_MAX, io->fixed_point_pos);
	if (count != io->element_count || (uint64_t)raw_size != count * *esz)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "",
				     "%llu values in %zu bytes given; the record has %llu elements "
				     "of %u bytes",
				     (unsigned long long)count, raw_size,
				     (unsigned long long)io->element_count, *esz);
	return NBG_OK;
}

static double real_to_quantized(const nbg_io *io, double f)
{
	/* ldexp: f x 2^fl, exact, and 0 stays 0 (0 x 2^fl as a product of
	 * doubles is NaN once 2^fl overflows); check_record bounds fl */
	if (io->quant_format == NBG_QUANT_DFP)
		return nearbyint(ldexp(f, io->fixed_point_pos));
	if (io->quant_format == NBG_QUANT_AFFINE)
		return nearbyint(f / (double)io->scale) + (double)io->zero_point;
	return nearbyint(f);
}

static double quantized_to_real(const nbg_io *io, double q)
{
	if (io->quant_format == NBG_QUANT_DFP)
		return ldexp(q, -io->fixed_point_pos);
	if (io->quant_format == NBG_QUANT_AFFINE)
		return (q - (double)io->zero_point) * (double)io->scale;
	return q;
}

static void put_float(uint8_t *p, uint32_t fmt, float f)
{
	uint32_t u;
	uint16_t h;
	double d;
	switch (fmt) {
	case 0: memcpy(&u, &f, 4); store_le(p, u, 4); break;
	case 1: h = nbg_fp16_from_float(f); store_le(p, h, 2); break;
	case 7: h = nbg_bf16_from_float(f); store_le(p, h, 2); break;
	default: d = f; { uint64_t b; memcpy(&b, &d, 8); store_le(p, b, 8); } break;
	}
}

static float get_float(const uint8_t *p, uint32_t fmt)
{
	uint32_t u;
	float f;
	double d;
	uint64_t b;
	switch (fmt) {
	case 0: u = (uint32_t)load_le(p, 4); memcpy(&f, &u, 4); return f;
	case 1: return nbg_fp16_to_float((uint16_t)load_le(p, 2));
	case 7: return nbg_bf16_to_float((uint16_t)load_le(p, 2));
	default: b = load_le(p, 8); memcpy(&d, &b, 8); return (float)d;
	}
}

nbg_code nbg_tensor_quantize(const nbg_io *io, const float *values, uint64_t count, void *out,
			     size_t out_size, nbg_error *err)
{
	unsigned esz;
	if (!io || (count && (!values || !out)))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "quantize: NULL pointer");
	nbg_code rc = check_record(io, count, out_size, &esz, err);
	if (rc != NBG_OK)
		return rc;
	uint8_t *o = out;
	uint32_t fmt = io->data_format;
	double lo, hi;
	range_of(fmt, &lo, &hi);
	for (uint64_t i = 0; i < count; i++, o += esz) {
		if (is_float_format(fmt)) {
			put_float(o, fmt, values[i]);
			continue;
		}
		double q = isnan(values[i]) ? (io->quant_format == NBG_QUANT_AFFINE
						       ? (double)io->zero_point : 0.0)
					    : real_to_quantized(io, values[i]);
		if (fmt == 16)
			q = q != 0.0;
		if (isnan(q)) /* never cast: NaN maps to the zero point */
			q = io->quant_format == NBG_QUANT_AFFINE ? (double)io->zero_point : 0.0;
		q = q < lo ? lo : q > hi ? hi : q;
		uint64_t bits = is_signed_format(fmt) ? (uint64_t)(int64_t)q : (uint64_t)q;
		store_le(o, bits, esz);
	}
	return NBG_OK;
}

nbg_code nbg_tensor_dequantize(const nbg_io *io, const void *raw, size_t raw_size, float *out,
			       uint64_t count, nbg_error *err)
{
	unsigned esz;
	if (!io || (count && (!raw || !out)))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "dequantize: NULL pointer");
	nbg_code rc = check_record(io, count, raw_size, &esz, err);
	if (rc != NBG_OK)
		return rc;
	const uint8_t *p = raw;
	uint32_t fmt = io->data_format;
	for (uint64_t i = 0; i < count; i++, p += esz) {
		if (is_float_format(fmt)) {
			out[i] = get_float(p, fmt);
			continue;
		}
		uint64_t bits = load_le(p, esz);
		double q;
		if (is_signed_format(fmt)) {
			uint64_t m = esz == 8 ? 0 : (uint64_t)1 << (esz * 8 - 1);
			q = esz == 8 ? (double)(int64_t)bits : (double)(int64_t)((bits ^ m) - m);
		} else {
			q = (double)bits;
		}
		out[i] = (float)quantized_to_real(io, q);
	}
	return NBG_OK;
}

/* ------------------------------------------------------------ results */

static int ranks_before(float a, uint64_t ia, float b, uint64_t ib)
{
	return a > b || (a == b && ia < ib);
}

size_t nbg_tensor_top(const float *v, uint64_t n, size_t k, nbg_tensor_top_entry *out)
{
	size_t have = 0;
	if (!v || !out)
		return 0;
	for (uint64_t i = 0; i < n && k; i++) {
		if (isnan(v[i]))
			continue;
		if (have == k && !ranks_before(v[i], i, out[k - 1].value, out[k - 1].index))
			continue;
		size_t pos = have < k ? have++ : k - 1;
		while (pos > 0 && ranks_before(v[i], i, out[pos - 1].value, out[pos - 1].index)) {
			out[pos] = out[pos - 1];
			pos--;
		}
		out[pos].index = i;
		out[pos].value = v[i];
	}
	return have;
}

nbg_code nbg_tensor_compare(const float *a, const float *b, uint64_t n, double tolerance,
			    nbg_tensor_diff *out, nbg_error *err)
{
	if (!out || (n && (!a || !b)))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "compare: NULL pointer");
	memset(out, 0, sizeof(*out));
	if (!(tolerance >= 0))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "",
				     "compare: the tolerance must be a number >= 0");
	out->elements = n;
	for (uint64_t i = 0; i < n; i++) {
		double x = a[i], y = b[i], d;
		if (isnan(x) && isnan(y))
			d = 0;
		else if (isnan(x) || isnan(y))
			d = INFINITY;
		else if (x == y)
			d = 0;
		else
			d = fabs(x - y);
		if (d > out->max_abs_diff)
			out->max_abs_diff = d;
		if (d > tolerance) {
			if (!out->mismatches)
				out->first_mismatch = i;
			out->mismatches++;
		}
	}
	return NBG_OK;
}

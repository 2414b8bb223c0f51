/*
 * compare.c - element-wise comparison of an output with a golden, in the
 * output's own format (integers, FP16, BF16, FP32), with a tolerance.
 */
#include <math.h> /* isnan, INFINITY: macros, no libm needed */
#include <stdint.h>
#include <string.h>

#include "common/half.h"
#include "nbg/runtime.h"
#include "runtime/runtime_internal.h"

enum elem_kind { K_FLOAT, K_SIGNED, K_UNSIGNED };

static int format_layout(uint32_t fmt, unsigned *bytes, enum elem_kind *kind)
{
	switch (fmt) {
	case 0: *bytes = 4; *kind = K_FLOAT; return 0;    /* FP32 */
	case 1: *bytes = 2; *kind = K_FLOAT; return 0;    /* FP16 */
	case 2: *bytes = 1; *kind = K_UNSIGNED; return 0; /* UINT8 */
	case 3: *bytes = 1; *kind = K_SIGNED; return 0;   /* INT8 */
	case 4: *bytes = 2; *kind = K_UNSIGNED; return 0; /* UINT16 */
	case 5: *bytes = 2; *kind = K_SIGNED; return 0;   /* INT16 */
	case 6: *bytes = 1; *kind = K_SIGNED; return 0;   /* CHAR */
	case 7: *bytes = 2; *kind = K_FLOAT; return 0;    /* BFP16 */
	case 8: *bytes = 4; *kind = K_SIGNED; return 0;   /* INT32 */
	case 9: *bytes = 4; *kind = K_UNSIGNED; return 0; /* UINT32 */
	case 10: *bytes = 8; *kind = K_SIGNED; return 0;  /* INT64 */
	case 11: *bytes = 8; *kind = K_UNSIGNED; return 0;/* UINT64 */
	case 12: *bytes = 8; *kind = K_FLOAT; return 0;   /* FP64 */
	case 16: *bytes = 1; *kind = K_UNSIGNED; return 0;/* BOOL8 */
	default: return -1;                               /* INT4, UINT4, unknown */
	}
}

static uint64_t load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int64_t sign_extend(uint64_t v, unsigned bytes)
{
	if (bytes == 8)
		return (int64_t)v;
	uint64_t m = (uint64_t)1 << (bytes * 8 - 1);
	return (int64_t)((v ^ m) - m);
}

static double load_float(const uint8_t *p, uint32_t fmt)
{
	uint64_t v = load_le(p, fmt == 0 ? 4 : fmt == 12 ? 8 : 2);
	if (fmt == 0) {
		uint32_t b = (uint32_t)v;
		float f;
		memcpy(&f, &b, sizeof(f));
		return f;
	}
	if (fmt == 12) {
		double d;
		memcpy(&d, &v, sizeof(d));
		return d;
	}
	return fmt == 1 ? nbg_fp16_to_float((uint16_t)v) : nbg_bf16_to_float((uint16_t)v);
}

nbg_code nbg_rt_compare(const void *a, const void *b, size_t size, uint32_t fmt,
			   double tolerance, nbg_rt_compare_result *out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out || (size && (!a || !b)))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "compare: NULL pointer");
	memset(out, 0, sizeof(*out));
	if (!(tolerance >= 0)) /* also refuses NaN */
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "compare: the tolerance must be a number >= 0");
	unsigned esz;
	enum elem_kind kind;
	if (format_layout(fmt, &esz, &kind) != 0)
		return nbg_rt_fail(err, NBG_E_GOLDEN_FORMAT, -1,
				   "data format %u (%s) has no element-wise comparison", fmt,
				   nbg_data_format_name(fmt) ? nbg_data_format_name(fmt) : "unknown");
	if (size % esz)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "compare: %zu bytes is not a whole number of %u-byte elements",
				   size, esz);

	const uint8_t *pa = a, *pb = b;
	uint64_t n = size / esz;
	out->elements = n;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *ea = pa + i * esz, *eb = pb + i * esz;
		double diff;
		if (kind == K_FLOAT) {
			double x = load_float(ea, fmt), y = load_float(eb, fmt);
			if (isnan(x) && isnan(y))
				diff = 0;
			else if (isnan(x) || isnan(y))
				diff = INFINITY;
			else if (x == y) /* also equal infinities */
				diff = 0;
			else
				diff = x > y ? x - y : y - x;
		} else {
			uint64_t ux = load_le(ea, esz), uy = load_le(eb, esz);
			uint64_t mag;
			if (kind == K_SIGNED) {
				int64_t x = sign_extend(ux, esz), y = sign_extend(uy, esz);
				/* exact |x - y| in unsigned arithmetic, no signed overflow */
				mag = x >= y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
			} else {
				mag = ux >= uy ? ux - uy : uy - ux;
			}
			diff = (double)mag;
		}
		if (diff > out->max_abs_diff)
			out->max_abs_diff = diff;
		if (diff > tolerance) {
			if (out->mismatches == 0)
				out->first_mismatch = i;
			out->mismatches++;
		}
	}
	return NBG_OK;
}

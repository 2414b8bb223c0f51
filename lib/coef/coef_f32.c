/*
 * coef_f32.c - the kernel stream of a 1x1 depthwise NN command with fp16
 * kernels (target 0x1000003b): per output channel two float32 values, the
 * kernel's weight and a second value; zero bytes to the entry's end.  No open
 * driver writes it; established from the data (doc/weights.md, "fp16
 * streams"): every such stream of the corpus is exactly that, in layers
 * named PReluLayer, the weights 1.0 and the second values the float16
 * alphas (negative slopes) of the TensorFlow Lite PRELU operators the file
 * was compiled from.  The weights are returned as float16 (each must be one
 * exactly), the second values as float32 ("slopes").
 */
#include <stdlib.h>

#include "coef/coef_internal.h"

/* The float16 of float32 bits f, when f is one exactly (false otherwise). */
static bool half_of(uint32_t f, uint16_t *h)
{
	uint32_t sign = f >> 16 & 0x8000, e = f >> 23 & 0xff, m = f & 0x7fffff;

	if (e == 0 && m == 0) {
		*h = (uint16_t)sign;
		return true;
	}
	if (e == 0xff || (m & 0x1fff))
		return false; /* not finite, or more mantissa bits than fp16's 10 */
	int32_t x = (int32_t)e - 127 + 15;
	if (x >= 31)
		return false;
	if (x >= 1) {
		*h = (uint16_t)(sign | (uint32_t)x << 10 | m >> 13);
		return true;
	}
	/* a subnormal fp16: the implicit 1 and the mantissa shifted out exactly */
	uint32_t full = (m | 0x800000) >> 13, shift = (uint32_t)(1 - x);
	if (shift > 11 || (full & ((1u << shift) - 1)))
		return false;
	*h = (uint16_t)(sign | full >> shift);
	return true;
}

int nbg_coef_decode_f32(const uint8_t *p, size_t n, const nbg_coef_shape *s, nbg_coef_out *o)
{
	if (!s->fp16 || !s->depthwise || s->kx != 1 || s->ky != 1 || s->kz != 1)
		return nbg_coef_reject(o, "unsupported-data-type", UINT64_MAX,
				       "unsupported (fp16 kernels other than 1x1 depthwise ones: no "
				       "sample)");
	if ((uint64_t)s->out * 8 > n)
		return nbg_coef_reject(o, "stream-too-short", (uint64_t)n * 8,
				       "%u channels of two float32 pass the %zu-byte entry", s->out,
				       n);
	for (size_t i = (size_t)s->out * 8; i < n; i++)
		if (p[i])
			return nbg_coef_reject(o, "nonzero-tail", (uint64_t)i * 8,
					       "byte %zu after the channels' floats is not zero", i);
	o->codes = malloc((size_t)s->out * 2);
	o->slope = malloc((size_t)s->out * sizeof(float));
	if (!o->codes || !o->slope) {
		nbg_coef_out_free(o);
		return NBG_COEF_NO_MEMORY;
	}
	for (uint32_t c = 0; c < s->out; c++) {
		uint32_t w = le32(p + 8 * (size_t)c), a = le32(p + 8 * (size_t)c + 4);
		uint16_t h;
		if (!half_of(w, &h)) {
			nbg_coef_out_free(o);
			return nbg_coef_reject(o, "value-not-fp16", 64ull * c,
					       "channel %u's weight (float32 0x%08x) is no float16", c,
					       w);
		}
		o->codes[2 * c] = (uint8_t)h;
		o->codes[2 * c + 1] = (uint8_t)(h >> 8);
		memcpy(&o->slope[c], &a, 4);
	}
	o->format = NBG_WEIGHTS_FORMAT_F32;
	o->order = NBG_COEF_ORDER_CHANNELS;
	o->cores = 1;
	return NBG_COEF_DECODED;
}

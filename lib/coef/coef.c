/*
 * coef.c - one kernel stream, one format: the checks every format shares
 * (the descriptor's counts against the stream's size, before anything is
 * allocated), then the format's decoder (coef_v7.c, coef_v8.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "coef/coef_internal.h"

/*
 * The most values a stream of n bytes can carry, so that a descriptor's
 * counts are checked before anything is allocated: v7 tokens take at least
 * 8 + zrl_bits bits for at most 2^zrl_bits values (zrl_bits <= 8: 16 values
 * a bit), each kernel at least 64 bits of bias and offset; a v8 code takes
 * at least 3 bits for at most 256 zero values (86 a bit).
 */
static bool counts_fit(const nbg_coef_shape *s, size_t n, nbg_weights_format fmt)
{
	uint64_t values = (uint64_t)s->out * nbg_coef_ksize(s), bits = (uint64_t)n * 8;

	if (fmt == NBG_WEIGHTS_FORMAT_V7)
		return (uint64_t)s->out * 64 <= bits && values <= 16 * bits;
	return values <= 86 * bits;
}

int nbg_coef_decode(const uint8_t *p, size_t n, const nbg_coef_shape *s, nbg_weights_format fmt,
		    nbg_coef_out *o)
{
	memset(o, 0, sizeof(*o));
	o->bit = UINT64_MAX;
	if (!s->out || !s->kz || !s->ky || !s->kx || !s->superblock)
		return nbg_coef_reject(o, "descriptor-invalid", UINT64_MAX,
				       "the command gives %u kernels of %ux%ux%u, %u per core and "
				       "pass: a zero size", s->out, s->kx, s->ky, s->kz,
				       s->superblock);
	if (s->kx > 15 || s->ky > 15 || s->kz >= (1u << 20) || s->out >= (1u << 14))
		return nbg_coef_reject(o, "descriptor-invalid", UINT64_MAX,
				       "kernel %ux%ux%u, %u kernels: beyond the command's fields",
				       s->kx, s->ky, s->kz, s->out);
	if (fmt == NBG_WEIGHTS_FORMAT_F32 || s->fp16) {
		if (fmt != NBG_WEIGHTS_FORMAT_F32 || !s->fp16)
			return nbg_coef_reject(o, "unsupported-data-type", UINT64_MAX,
					       "unsupported (%s kernels in a %s stream: no sample)",
					       s->fp16 ? "fp16" : "integer",
					       nbg_weights_format_name(fmt));
		return nbg_coef_decode_f32(p, n, s, o);
	}
	if ((s->kx > 3 || s->ky > 3) && fmt != NBG_WEIGHTS_FORMAT_V8A && fmt != NBG_WEIGHTS_FORMAT_TPFC &&
	    (s->wide == NBG_COEF_WIDE_NONE || s->kz == 1))
		return nbg_coef_reject(o, "unsupported-kernel-shape", UINT64_MAX,
				       "unsupported (a %ux%u%s kernel in a %s stream: the order of "
				       "its values beyond 3x3 is not established %s)", s->kx, s->ky,
				       s->kz == 1 ? " single-channel" : "", nbg_weights_format_name(fmt),
				       s->wide == NBG_COEF_WIDE_NONE ? "for this target"
								     : "for single-channel kernels");
	if (s->depthwise && fmt != NBG_WEIGHTS_FORMAT_V8A)
		return nbg_coef_reject(o, "unsupported-kernel-shape", UINT64_MAX,
				       "unsupported (a depthwise kernel in a %s stream: no sample)",
				       nbg_weights_format_name(fmt));
	if (s->bit16 && fmt != NBG_WEIGHTS_FORMAT_V8A && fmt != NBG_WEIGHTS_FORMAT_V8B)
		return nbg_coef_reject(o, "unsupported-data-type", UINT64_MAX,
				       "unsupported (16-bit kernels in a %s stream: no sample)",
				       nbg_weights_format_name(fmt));
	if (!counts_fit(s, n, fmt))
		return nbg_coef_reject(o, "counts-exceed-entry", UINT64_MAX,
				       "%u kernels of %u values cannot fit in a %zu-byte %s stream",
				       s->out, nbg_coef_ksize(s), n, nbg_weights_format_name(fmt));
	switch (fmt) {
	case NBG_WEIGHTS_FORMAT_V7:
		return nbg_coef_decode_v7(p, n, s, o);
	case NBG_WEIGHTS_FORMAT_V8A:
		return nbg_coef_decode_v8(p, n, s, 0, o);
	case NBG_WEIGHTS_FORMAT_V8B:
		return nbg_coef_decode_v8(p, n, s, 1, o);
	case NBG_WEIGHTS_FORMAT_TPFC:
		return nbg_coef_decode_tpfc(p, n, s, o);
	default:
		return nbg_coef_reject(o, "format-unknown", UINT64_MAX, "no such stream format");
	}
}

/*
 * ops/add.c - the plan of an NN convolution fused with the addition of a
 * second image (target 0xe8's ConvolutionReluPoolingAddLayer commands,
 * doc/cpu-backend.md "Fused additions").  The open layout names none of
 * the words read here; what each holds was measured on the corpus and
 * against the same network compiled for other targets, and every byte of
 * the second image is checked against its buffer here, before any run.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/conv.h"
#include "cpu/ops/nn16.h"
#include "cpu/quant.h"

/* The words of a 192-byte NN command of target 0xe8 that carry the addition. */
enum {
	ADD_W_SCALE = 23,       /* bits 2-31 (and word 24 bits 0-1): the second image's scale, float32 */
	ADD_W_ADDRESS = 26,     /* the second image's address, relocated by a COMMAND patch */
	ADD_W_RING_SIZE = 27,   /* bits 0-25: its circular buffer's size >> 6 */
	ADD_W_RING_END = 28,    /* its circular buffer's end + 1, relocated */
	ADD_W_MAX = 29,         /* float32: the upper bound of the convolution's term (+inf: none) */
	ADD_W_MIN = 30,         /* float32: the lower bound (-inf: none) */
	ADD_W_STRIDES = 32,     /* bits 0-15: its row stride; 16-31: its y stride */
	ADD_WORDS = 33
};

/* A float32 as m x 2^(e - 150) with its sign: 1 finite (m 0 for a zero),
 * 2 +inf, 3 -inf, 0 a NaN or a denormal (refused). */
static int f32_parts(uint32_t v, uint32_t *m, uint32_t *e, int *neg)
{
	*neg = (int)(v >> 31);
	*e = (v >> 23) & 0xffu;
	*m = v & 0x7fffffu;
	if (*e == 0xffu)
		return *m ? 0 : *neg ? 3 : 2;
	if (*e == 0)
		return *m ? 0 : 1;
	*m |= 1u << 23;
	return 1;
}

/* The zero point of the second image: the output zero point of the one
 * operation, other than the first input's producer, whose bytes this
 * operation reads, all of the image (doc/cpu-backend.md: no field of the
 * command holds it). */
static int add_zero_point(nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd_op *op, uint64_t bytes,
			  uint32_t *zp)
{
	int64_t from = -1;
	if (!nbg_cpu_plan_spend(p, s, nbg_commands_edge_count(p->c), "looking for its second image's writer"))
		return 0;
	for (size_t i = 0; i < nbg_commands_edge_count(p->c); i++) {
		const nbg_cmd_edge *e = nbg_commands_edge_at(p->c, i);
		if (e->kind != NBG_CMD_EDGE_OP || e->to != s->operation || (int64_t)e->from == op->producer)
			continue;
		if (from >= 0 || e->bytes != bytes) {
			from = -2;
			break;
		}
		from = (int64_t)e->from;
	}
	const nbg_cmd_op *w = from >= 0 ? nbg_commands_op_of(p->c, (size_t)from) : NULL;
	const nbg_cmd *wc = w ? nbg_commands_at(p->c, w->engine, w->command) : NULL;
	int fi = !w ? -1 : w->engine == NBG_CMD_NN ? (int)NBG_NNF_OUT_ZERO_POINT
			 : w->engine == NBG_CMD_TP ? (int)NBG_TPF_OUT_ZP : -1;
	if (!wc || fi < 0 || (w->engine != NBG_CMD_NN && w->engine != NBG_CMD_TP) || wc->values[fi] > 255) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "the %llu bytes of its second image are not all written "
			       "by one earlier NN or TP operation, whose output zero point would be theirs",
			       (unsigned long long)bytes);
		return 0;
	}
	*zp = wc->values[fi];
	return 1;
}

long nbg_cpu_add_image_at(nbg_cpu_plan *p, nbg_cpu_step *s, unsigned word, uint32_t value, nbg_cmd_ref *r)
{
	if (!nbg_command_word_ref(p->g, s->operation, word, value, r)) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "its command word %u (the second image's address) is "
			       "relocated by no patch", word);
		return -1;
	}
	return nbg_cpu_find_region(p, s, "second image", r);
}

/* The second image: its buffer, strides and circular buffer. */
static int add_image(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const uint32_t *w)
{
	cpu_add *a = &cv->add;
	nbg_cmd_ref r;
	long ri = nbg_cpu_add_image_at(p, s, ADD_W_ADDRESS, w[ADD_W_ADDRESS], &r);
	if (ri < 0)
		return 0;
	uint64_t xs = w[ADD_W_STRIDES] & 0xffffu, ys = w[ADD_W_STRIDES] >> 16, last = 0;
	a->region = (size_t)ri;
	a->base = r.offset;
	a->row = xs;
	/* v1 before 0x10020 counts the y stride in rows, as the NN images do */
	a->slice = p->m->family == 1 && p->m->version < 0x10020u ? xs * ys : ys;
	if (xs < cv->pool_x || a->slice < xs * cv->pool_y ||
	    !nbg_cpu_image_fits(p, a->region, a->base, cv->pool_x, cv->pool_y, cv->out_z, a->row, a->slice, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its second image %ux%ux%u at %s+0x%llx (row %llu, "
			       "slice %llu bytes) does not lie inside that memory's %llu bytes", cv->pool_x, cv->pool_y,
			       cv->out_z, nbg_graph_source_type_name(r.source_type), (unsigned long long)a->base,
			       (unsigned long long)a->row, (unsigned long long)a->slice,
			       (unsigned long long)p->regions[a->region].size);
		return 0;
	}
	/* its circular buffer, which it must not pass: how the wrap reads the
	 * second image is not established */
	uint64_t lo, size;
	if (!nbg_cpu_ring(p, s, "second input", w[ADD_W_RING_SIZE] & 0x3ffffffu, ADD_W_RING_END,
			  w[ADD_W_RING_END], a->region, a->base, &lo, &size))
		return 0;
	if (size && last >= lo + size) {
		nbg_cpu_refuse(s, "circular-buffer-wrap", "its second image's bytes 0x%llx..0x%llx pass the end of "
			       "its circular buffer of %llu bytes (command words %d, %d): how the wrap reads is not "
			       "established", (unsigned long long)a->base, (unsigned long long)last,
			       (unsigned long long)size, ADD_W_RING_SIZE, ADD_W_RING_END);
		return 0;
	}
	return 1;
}

int nbg_cpu_add_fixed(nbg_cpu_step *s, cpu_add *a, uint32_t mantissa, uint32_t exponent, const uint32_t *v,
		      uint32_t conv_max, uint32_t b_max, const char *words)
{
	uint32_t m[3], e[3], frac = 150 > exponent ? 150 - exponent : 1;
	int neg[3], k[3];
	for (int i = 0; i < 3; i++) {
		k[i] = f32_parts(v[i], &m[i], &e[i], &neg[i]);
		if (k[i] == 1 && m[i] && 150 - (int)e[i] > (int)frac)
			frac = 150 - e[i];
	}
	/* the scale finite, the bounds finite or +inf above and -inf below */
	int ok = k[0] == 1 && (k[1] == 1 || k[1] == 2) && (k[2] == 1 || k[2] == 3) && exponent &&
		 frac <= 120 && exponent + frac >= 150 && exponent + frac - 150 <= conv_max;
	for (int i = 0; ok && i < 3; i++)
		ok = k[i] != 1 || !m[i] || e[i] + frac - 150 <= (i ? 100u : b_max);
	if (!ok) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "the second image's scale 0x%08x and the bounds 0x%08x, "
			       "0x%08x (%s) are not finite float32 values in the range the exact arithmetic covers",
			       v[0], v[1], v[2], words);
		return 0;
	}
	a->frac = frac;
	a->conv_m = (1u << 23) | (mantissa & 0x7fffffu);
	a->conv_shift = exponent + frac - 150;
	a->b_m = m[0] ? (neg[0] ? -(int32_t)m[0] : (int32_t)m[0]) : 0;
	a->b_shift = m[0] ? e[0] + frac - 150 : 0;
	cpu_wide bound[2];
	for (int i = 1; i < 3; i++) {
		bound[i - 1] = m[i] ? cpu_wide_shl(cpu_wide_of_u64(m[i]), e[i] + frac - 150) : cpu_wide_of(0);
		if (neg[i])
			bound[i - 1] = cpu_wide_neg(bound[i - 1]);
	}
	a->has_hi = k[1] == 1, a->hi = bound[0];
	a->has_lo = k[2] == 1, a->lo = bound[1];
	if (a->has_hi && a->has_lo && cpu_wide_lt(a->hi, a->lo)) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "the lower bound 0x%08x lies above the upper bound 0x%08x "
			       "(%s)", v[2], v[1], words);
		return 0;
	}
	return 1;
}

/* The uint8 terms: |acc| < 2^31 and |b - zp| < 2^8 (conv shift at most 69,
 * the second image's at most 90); the scale at word 23 bits 2-31 and word
 * 24 bits 0-1. */
static int add_fixed(nbg_cpu_step *s, cpu_conv *cv, const uint32_t *w)
{
	uint32_t v[3] = { (w[ADD_W_SCALE] >> 2) | (w[ADD_W_SCALE + 1] & 3u) << 30, w[ADD_W_MAX], w[ADD_W_MIN] };
	return nbg_cpu_add_fixed(s, &cv->add, cv->mantissa, cv->exponent, v, 69, 90,
				 "words 23 bits 2-31 and 24 bits 0-1, 29, 30");
}

int nbg_cpu_plan_add(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_conv *cv, const nbg_cmd_op *op)
{
	const nbg_cmd *cmd = nbg_commands_at(p->c, NBG_CMD_NN, op->command);
	if (!cmd || cmd->word_count < ADD_WORDS + 1) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "layer %s adds a second image to the convolution's "
			       "result, and its NN command has %u words, fewer than the %d that locate that image",
			       s->layer, cmd ? cmd->word_count : 0, ADD_WORDS + 1);
		return 0;
	}
	if (cv->relu || (cv->pooling != 0 && cv->pooling != 3) || !cv->acc32) {
		nbg_cpu_refuse(s, "fused-add-unsupported", "an addition fused with %s%s%s: the order of the "
			       "addition and these is not established", cv->relu ? "ReLU " : "",
			       cv->pooling != 0 && cv->pooling != 3 ? "max pooling " : "",
			       cv->acc32 ? "" : "sums that may leave int32");
		return 0;
	}
	memset(&cv->add, 0, sizeof(cv->add));
	if (!add_image(p, s, cv, cmd->words) ||
	    !add_zero_point(p, s, op, (uint64_t)cv->pool_x * cv->pool_y * cv->out_z, &cv->add.zp) ||
	    !add_fixed(s, cv, cmd->words))
		return 0;
	cv->add.on = 1;
	return 1;
}

/* The second image of a 16-bit addition (the int16 fused addition, the
 * fp16 SP addition): word `at` its relocated address, word `strides` its
 * row and slice strides (low, high 16 bits), x x y x z 2-byte elements;
 * into *a and *r, 0 with the step refused when it does not lie inside its
 * memory.  `type` names the data in the refusal. */
int nbg_cpu_add_second16(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_add *a, uint32_t x, uint32_t y, uint32_t z,
			 const uint32_t *w, unsigned at, unsigned strides, const char *type, int *grouped,
			 nbg_cmd_ref *r)
{
	long ri = nbg_cpu_add_image_at(p, s, at, w[at], r);
	if (ri < 0)
		return 0;
	a->region = (size_t)ri;
	a->base = r->offset;
	a->row = w[strides] & 0xffffu;
	a->slice = w[strides] >> 16;
	uint64_t last = 0, xb = 2ull * x;
	uint32_t slices = z;
	if (grouped && nbg_cpu_nn16_grouped(a->slice, a->row, y) && z % 16 == 0) {
		/* 16 channels a pixel, rows of 16 of the command's, groups of 16 planes */
		*grouped = 1;
		a->slice = 16 * a->row * y;
		a->row *= 16;
		xb *= 16;
		slices = z / 16;
	} else if (grouped) {
		*grouped = 0;
	}
	if (a->row < xb || a->slice < a->row * y ||
	    !nbg_cpu_image_fits(p, a->region, a->base, xb, y, slices, a->row, a->slice, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its second image %ux%ux%u %s at %s+0x%llx (row %llu, "
			       "slice %llu bytes, word %u) does not lie inside that memory's %llu bytes", x,
			       y, z, type, nbg_graph_source_type_name(r->source_type),
			       (unsigned long long)a->base, (unsigned long long)a->row, (unsigned long long)a->slice,
			       strides, (unsigned long long)p->regions[a->region].size);
		return 0;
	}
	return 1;
}

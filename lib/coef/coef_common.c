/*
 * coef_common.c - what every part of the kernel-stream decoder shares: the
 * names of formats, statuses and value orders, the rejection of a stream
 * with its reason, the growable buffer.  Depends on nothing else in coef/.
 */
#include <stdio.h>
#include <stdlib.h>

#include "coef/coef_internal.h"

static const char *const status_names[NBG_WEIGHTS_STATUS_COUNT] = {
	"decoded", "not-decoded", "unsupported", "no-stream",
};
static const char *const format_names[NBG_WEIGHTS_FORMAT_COUNT] = {
	"none", "v7", "v8a", "v8b", "tp-fc", "f32-pairs", "lut",
};

const char *nbg_weights_status_name(nbg_weights_status s)
{
	return (unsigned)s < NBG_WEIGHTS_STATUS_COUNT ? status_names[s] : NULL;
}

const char *nbg_weights_format_name(nbg_weights_format f)
{
	return (unsigned)f < NBG_WEIGHTS_FORMAT_COUNT ? format_names[f] : NULL;
}

static const char *const order_names[NBG_COEF_ORDER_COUNT] = {
	"none", "blocks of 9", "interleaved", "sequential", "six", "a chunk per input",
	"a raw chunk per input", "a float pair per channel",
};

const char *nbg_coef_order_name(unsigned order)
{
	return order < NBG_COEF_ORDER_COUNT ? order_names[order] : NULL;
}

int nbg_coef_reject(nbg_coef_out *o, const char *id, uint64_t bit, const char *fmt, ...)
{
	va_list ap;

	o->reason_id = id;
	o->bit = bit;
	va_start(ap, fmt);
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
	return NBG_COEF_REJECTED;
}

void nbg_coef_out_free(nbg_coef_out *o)
{
	free(o->codes);
	free(o->bias_stored);
	free(o->bias);
	free(o->scale);
	free(o->bias64);
	free(o->slope);
	o->bias64 = NULL;
	o->slope = NULL;
	o->codes = NULL;
	o->bias_stored = o->bias = NULL;
	o->scale = NULL;
}

bool nbg_coef_buf_reserve(nbg_coef_buf *b, uint64_t more)
{
	uint64_t need = b->len + more, cap = b->cap ? b->cap : 4096;
	uint8_t *q;

	if (need <= b->cap)
		return true;
	while (cap < need)
		cap *= 2;
	if (cap != (size_t)cap || !(q = realloc(b->p, (size_t)cap)))
		return false;
	b->p = q;
	b->cap = cap;
	return true;
}


/*
 * run.c - the CPU backend's run: the buffers of the machine, filled with
 * the inputs, and the plan's executed operations run in order, each
 * through its kind's entry of the table (ops/table.c).  The arithmetic is
 * the operations' own (ops/), its rules in quant.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/ops/conv_fast.h"
#include "runtime/errors.h"

struct nbg_cpu_state {
	size_t count;
	cpu_region regions[sizeof(((nbg_cpu_plan *)0)->regions) / sizeof(cpu_region)];
	uint8_t *buf[sizeof(((nbg_cpu_plan *)0)->regions) / sizeof(cpu_region)];
};

void nbg_cpu_state_free(nbg_cpu_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		free(s->buf[i]);
	free(s);
}

const uint8_t *nbg_cpu_state_buffer(const nbg_cpu_state *s, uint32_t source_type, int32_t index,
				    size_t *size)
{
	if (size)
		*size = 0;
	for (size_t i = 0; s && i < s->count; i++) {
		const cpu_region *r = &s->regions[i];
		if (r->source_type != source_type ||
		    ((source_type == NBG_GRAPH_SRC_INPUT || source_type == NBG_GRAPH_SRC_OUTPUT ||
		      source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT) &&
		     r->index != index))
			continue;
		if (size)
			*size = (size_t)r->size;
		return s->buf[i];
	}
	return NULL;
}

int nbg_cpu_op_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_op_def *d = op->kind > CPU_OP_NONE && op->kind < CPU_OP__COUNT ? nbg_cpu_ops[op->kind] : NULL;
	return d && d->run ? d->run(op, buf) : 0;
}

/* UNSUPPORTED_OPERATION naming the first refused step in [from, to), else NBG_OK. */
static nbg_code refused_in(const nbg_cpu_plan *p, size_t from, size_t to, nbg_error *err)
{
	for (size_t i = from; i < to; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		if (s->verdict == NBG_CPU_REFUSED)
			return nbg_rt_fail(err, NBG_E_UNSUPPORTED_OPERATION, -1,
					   "operation %zu (layer %u %s, %s) cannot run on the CPU backend: "
					   "%s: %s", i, s->layer_id, s->layer, s->what, s->reason_id,
					   s->reason);
	}
	return NBG_OK;
}

nbg_code nbg_cpu_run_range(const nbg_cpu_plan *p, nbg_cpu_state *st, size_t from, size_t to,
			   nbg_error *err)
{
	size_t end = to < p->count ? to : p->count;
	nbg_code rc = refused_in(p, from, end, err);
	if (rc != NBG_OK)
		return rc;
	for (size_t i = from; i < end; i++) {
		if (p->steps[i].verdict == NBG_CPU_EXECUTE && nbg_cpu_op_run(&p->ops[i], st->buf))
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	return NBG_OK;
}

nbg_code nbg_cpu_run_hooked(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
			    size_t stop_before, cpu_after_fn after, void *ctx, nbg_cpu_state **out,
			    nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!p || !out || (count && !inputs))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu run: NULL argument");
	*out = NULL;
	/* the one verdict (budget.c): refused operations, I/O records the
	 * machine cannot hold, work and memory over the plan's limits */
	nbg_code rc = nbg_cpu_plan_check(p, stop_before, err);
	if (rc != NBG_OK)
		return rc;
	size_t end = stop_before < p->count ? stop_before : p->count;
	if (count != p->m->input_count)
		return nbg_rt_fail(err, NBG_E_INPUT_COUNT_MISMATCH, -1,
				   "%zu inputs given; the NBG declares %zu", count, p->m->input_count);
	for (size_t i = 0; i < count; i++)
		if (inputs[i].size != nbg_model_input_at(p->m, i)->byte_size || (!inputs[i].data && inputs[i].size))
			return nbg_rt_fail(err, NBG_E_INPUT_SIZE_MISMATCH, (int32_t)i,
					   "input %zu has %zu bytes; its record needs %llu", i,
					   inputs[i].size,
					   (unsigned long long)nbg_model_input_at(p->m, i)->byte_size);
	nbg_cpu_state *st = calloc(1, sizeof(*st));
	if (!st)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	st->count = p->region_count;
	memcpy(st->regions, p->regions, sizeof(st->regions));
	for (size_t i = 0; i < st->count; i++) {
		uint64_t n = st->regions[i].size; /* below SIZE_MAX: nbg_cpu_plan_check */
		st->buf[i] = calloc((size_t)n + 1, 1);
		if (!st->buf[i]) {
			nbg_cpu_state_free(st);
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
		}
		if (st->regions[i].source_type == NBG_GRAPH_SRC_INPUT && st->regions[i].index >= 0 &&
		    (size_t)st->regions[i].index < count && n)
			memcpy(st->buf[i], inputs[st->regions[i].index].data, (size_t)n);
		else if (st->regions[i].init && n)
			memcpy(st->buf[i], st->regions[i].init, (size_t)n);
	}
	/* without a hook, the range at once; with one, step by step; the
	 * thread pool and scratch cache live across the operations and are
	 * gone when the run returns */
	nbg_cpu_pool_hold();
	for (size_t i = 0; i < end && rc == NBG_OK; i = after ? i + 1 : end) {
		rc = nbg_cpu_run_range(p, st, i, after ? i + 1 : end, err);
		if (rc == NBG_OK && after && p->steps[i].verdict == NBG_CPU_EXECUTE)
			rc = after(ctx, i, st->buf, err);
	}
	nbg_cpu_pool_release();
	if (rc != NBG_OK) {
		nbg_cpu_state_free(st);
		return rc;
	}
	*out = st;
	return NBG_OK;
}

nbg_code nbg_cpu_run(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count,
		     size_t stop_before, nbg_cpu_state **out, nbg_error *err)
{
	return nbg_cpu_run_hooked(p, inputs, count, stop_before, NULL, NULL, out, err);
}

/*
 * budget.c - what a whole plan costs, and the one verdict on it
 * (doc/cpu-backend.md, "Limits"): the limits, the planners' own walks
 * charged to the plan before they are taken, the totals of the executed
 * steps (their work and scratch: each kind's cost, ops/table.c), and
 * nbg_cpu_plan_check, which nbg_cpu_run asks before it allocates anything
 * and which `nbg run --backend cpu --check`, the plan's JSON, `nbg probe`
 * and the page answer from, so that none of them can call a model whole
 * that a run refuses.  It calls into no other planner or run.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "runtime/errors.h"

/* The buffers one direction of I/O records may have (plan.c makes one
 * per record, at most this many). */
#define CPU_MAX_IO_RECORDS 64

static uint64_t limit_or(uint64_t v, uint64_t def)
{
	return v ? v : def;
}

void nbg_cpu_limits_resolve(nbg_cpu_options *lim, const nbg_cpu_options *opts)
{
	nbg_cpu_options o = { 0 };
	/* a caller built before a member existed passes a smaller size: the
	 * members past it take their defaults */
	if (opts)
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	o.size = sizeof(o);
	o.max_work = limit_or(o.max_work, NBG_CPU_DEFAULT_MAX_WORK);
	o.max_memory = limit_or(o.max_memory, NBG_CPU_DEFAULT_MAX_MEMORY);
	o.max_plan_steps = limit_or(o.max_plan_steps, NBG_CPU_DEFAULT_MAX_PLAN_STEPS);
	o.threads = o.threads ? (o.threads < 64 ? o.threads : 64) : 1;
	o.kernels = o.kernels == NBG_CPU_KERNELS_PORTABLE ? NBG_CPU_KERNELS_PORTABLE : NBG_CPU_KERNELS_AUTO;
	*lim = o;
}

int nbg_cpu_plan_afford(nbg_cpu_plan *p, uint64_t steps)
{
	uint64_t lim = p->totals.limits.max_plan_steps, used = p->totals.plan_steps;
	if (steps > lim - used) /* used never passes lim */
		return 0;
	p->totals.plan_steps = used + steps;
	return 1;
}

int nbg_cpu_plan_spend(nbg_cpu_plan *p, nbg_cpu_step *s, uint64_t steps, const char *what)
{
	uint64_t lim = p->totals.limits.max_plan_steps, used = p->totals.plan_steps;
	if (nbg_cpu_plan_afford(p, steps))
		return 1;
	nbg_cpu_refuse(s, "work-limit", "planning it would take %llu steps (%s), past the limit of %llu "
		       "planning steps, %llu of them taken by the operations before it (max_plan_steps: nbg "
		       "run --max-plan-steps, NBG_MAX_CPU_PLAN_STEPS; none lifts it)", (unsigned long long)steps,
		       what, (unsigned long long)lim, (unsigned long long)used);
	return 0;
}

void nbg_cpu_plan_add_up(nbg_cpu_plan *p)
{
	p->totals.buffers = 0;
	for (size_t i = 0; i < p->region_count; i++) /* each allocated a byte larger (run.c) */
		p->totals.buffers = nbg_cpu_add_sat(p->totals.buffers, nbg_cpu_add_sat(p->regions[i].size, 1));
	for (size_t i = 0; i < p->count; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		if (s->verdict != NBG_CPU_EXECUTE)
			continue;
		p->totals.work = nbg_cpu_add_sat(p->totals.work, s->work);
		if (s->scratch > p->totals.scratch)
			p->totals.scratch = s->scratch;
	}
}

const nbg_cpu_totals *nbg_cpu_plan_totals(const nbg_cpu_plan *p)
{
	return p ? &p->totals : NULL;
}

static nbg_code over(nbg_error *err, const char *limit, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A work-limit refusal whose err->field names the limit. */
static nbg_code over(nbg_error *err, const char *limit, const char *fmt, ...)
{
	char msg[sizeof(err->message)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nbg_rt_fail(err, NBG_E_WORK_LIMIT, -1, "%s", msg);
	if (err)
		snprintf(err->field, sizeof(err->field), "%s", limit);
	return NBG_E_WORK_LIMIT;
}

/* The operations below end: the first refused one (or NULL), their work
 * added up, the largest scratch and the operation holding it. */
static const nbg_cpu_step *span(const nbg_cpu_plan *p, size_t end, uint64_t *work, uint64_t *scratch,
				size_t *widest)
{
	*work = *scratch = 0;
	*widest = 0;
	for (size_t i = 0; i < end; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		if (s->verdict == NBG_CPU_REFUSED)
			return s;
		if (s->verdict != NBG_CPU_EXECUTE)
			continue;
		*work = nbg_cpu_add_sat(*work, s->work);
		if (s->scratch > *scratch) {
			*scratch = s->scratch;
			*widest = i;
		}
	}
	return NULL;
}

nbg_code nbg_cpu_plan_check(const nbg_cpu_plan *p, size_t stop_before, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!p)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu plan check: NULL plan");
	size_t end = stop_before < p->count ? stop_before : p->count, widest;
	uint64_t work, scratch;
	const nbg_cpu_step *s = span(p, end, &work, &scratch, &widest);
	if (s)
		return nbg_rt_fail(err, NBG_E_UNSUPPORTED_OPERATION, -1, "operation %zu (layer %u %s, %s) cannot "
				   "run on the CPU backend: %s: %s", s->operation, s->layer_id, s->layer, s->what,
				   s->reason_id, s->reason);
	size_t ins = nbg_model_input_count(p->m), outs = nbg_model_output_count(p->m);
	if (ins > CPU_MAX_IO_RECORDS || outs > CPU_MAX_IO_RECORDS)
		return nbg_rt_fail(err, NBG_E_RUNTIME_IO_MISMATCH, -1, "the model has %zu input and %zu output "
				   "records; the CPU backend's machine holds a buffer for at most %d of each, so a "
				   "run could not take or hand over the others: refused before anything runs", ins,
				   outs, CPU_MAX_IO_RECORDS);
	const nbg_cpu_options *lim = &p->totals.limits;
	uint64_t memory = nbg_cpu_add_sat(p->totals.buffers, scratch);
	if (memory > lim->max_memory)
		return over(err, "max_memory", "a run would hold %llu bytes: %llu of buffers (the input and "
			    "output records, VIP SRAM, AXI SRAM and memory pool the file declares) and %llu of "
			    "scratch (op %zu's, the largest), over the limit of %llu (max_memory: nbg run "
			    "--max-memory, NBG_MAX_CPU_MEMORY; none lifts it): refused before anything is "
			    "allocated", (unsigned long long)memory, (unsigned long long)p->totals.buffers,
			    (unsigned long long)scratch, widest, (unsigned long long)lim->max_memory);
	if (work > lim->max_work)
		return over(err, "max_work", "a run of %s%zu would take %llu steps of work (the "
			    "multiply-accumulates and element steps the plan counts), over the limit of %llu "
			    "(max_work: nbg run --max-work, NBG_MAX_CPU_WORK; none lifts it): refused before "
			    "anything runs", end == p->count ? "the model's operations 0 to " : "operations 0 to ",
			    end - 1, (unsigned long long)work, (unsigned long long)lim->max_work);
	for (size_t i = 0; i < p->region_count; i++)
		if (p->regions[i].size >= SIZE_MAX) {
			const char *what = nbg_graph_source_type_name(p->regions[i].source_type);
			return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "the model declares %s of %llu bytes, "
					   "more than this machine can address", what ? what : "a memory",
					   (unsigned long long)p->regions[i].size);
		}
	return NBG_OK;
}

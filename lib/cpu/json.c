/*
 * json.c - the CPU backend's plan as one JSON document: the counts,
 * whether a run would run it whole and, if not, why (nbg_cpu_plan_check),
 * the totals against their limits, the caveat, the first refused
 * operation and, when asked, every step.
 * `nbg probe --json` writes the summary per model, `nbg run --backend cpu
 * --check --json` and the Python binding's Model.cpu_plan() the whole plan.
 */
#include <stdlib.h>

#include <jansson.h>

#include "common/json.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "nbg/graph.h"

/* A count or limit: a number, or null for UINT64_MAX (no limit, or a
 * figure past every limit); JSON integers stop at 2^63 - 1. */
static json_t *count_json(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? json_null() : json_integer((json_int_t)v);
}

static json_t *step_json(const nbg_cpu_step *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "operation", json_integer((json_int_t)s->operation));
	json_object_set_new(o, "type", nbg_json_str(nbg_graph_op_type_name(s->type)));
	json_object_set_new(o, "layer_id", json_integer((json_int_t)s->layer_id));
	json_object_set_new(o, "layer", nbg_json_str(s->layer));
	json_object_set_new(o, "what", nbg_json_str(s->what));
	json_object_set_new(o, "verdict", nbg_json_str(nbg_cpu_verdict_name(s->verdict)));
	json_object_set_new(o, "reference_semantics",
			    json_boolean(s->verdict == NBG_CPU_EXECUTE && s->reference));
	json_object_set_new(o, "macs", json_integer((json_int_t)s->macs));
	json_object_set_new(o, "work", count_json(s->work));
	json_object_set_new(o, "scratch", count_json(s->scratch));
	json_object_set_new(o, "reason_id", s->verdict == NBG_CPU_REFUSED ? nbg_json_str(s->reason_id)
									    : json_null());
	json_object_set_new(o, "reason", s->verdict == NBG_CPU_REFUSED ? nbg_json_str(s->reason)
									 : json_null());
	return o;
}

char *nbg_cpu_plan_json(const nbg_cpu_plan *p, unsigned flags)
{
	if (!p)
		return NULL;
	size_t by_ref = 0;
	for (size_t i = 0; i < p->count; i++)
		by_ref += p->steps[i].verdict == NBG_CPU_EXECUTE && p->steps[i].reference;
	const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
	json_t *o = json_object();
	json_object_set_new(o, "operations", json_integer((json_int_t)p->count));
	json_object_set_new(o, "executed",
			    json_integer((json_int_t)nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE)));
	json_object_set_new(o, "executed_by_reference_semantics", json_integer((json_int_t)by_ref));
	json_object_set_new(o, "nothing",
			    json_integer((json_int_t)nbg_cpu_plan_verdict_count(p, NBG_CPU_NOTHING)));
	json_object_set_new(o, "refused",
			    json_integer((json_int_t)nbg_cpu_plan_verdict_count(p, NBG_CPU_REFUSED)));
	nbg_error e;
	nbg_code rc = nbg_cpu_plan_check(p, SIZE_MAX, &e);
	json_object_set_new(o, "runs_whole", json_boolean(rc == NBG_OK));
	json_object_set_new(o, "refusal", rc == NBG_OK ? json_null()
			    : json_pack("{s:s, s:o, s:o}", "code", nbg_code_name(rc), "limit",
					rc == NBG_E_WORK_LIMIT ? json_string(e.field) : json_null(), "message",
					nbg_json_str(e.message)));
	const nbg_cpu_totals *t = &p->totals;
	json_object_set_new(o, "totals", json_pack("{s:o, s:o, s:o, s:o}", "work", count_json(t->work),
						   "buffers", count_json(t->buffers), "scratch",
						   count_json(t->scratch), "plan_steps", count_json(t->plan_steps)));
	json_object_set_new(o, "limits", json_pack("{s:o, s:o, s:o}", "max_work", count_json(t->limits.max_work),
						   "max_memory", count_json(t->limits.max_memory), "max_plan_steps",
						   count_json(t->limits.max_plan_steps)));
	json_object_set_new(o, "caveat", nbg_json_str(nbg_cpu_plan_caveat(p)));
	json_object_set_new(o, "first_refused", r ? step_json(r) : json_null());
	if (flags & NBG_CPU_JSON_STEPS) {
		json_t *a = json_array();
		for (size_t i = 0; i < p->count; i++)
			json_array_append_new(a, step_json(&p->steps[i]));
		json_object_set_new(o, "steps", a);
	}
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

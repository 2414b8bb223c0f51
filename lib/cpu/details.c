/*
 * cpu_details.c - nbg_cpu_run_details_json(): what a run of the CPU
 * backend says beside its outputs, from its plan: the operations computed
 * by reference semantics and the caveat.  The one document `nbg run`'s
 * summary.json, the page and the Python binding take them from.
 */
#include <stdlib.h>

#include <jansson.h>

#include "common/json.h"
#include "nbg/cpu.h"

#define REFERENCE_NOTE "computed by reference semantics, not from the operation's code"

char *nbg_cpu_run_details_json(const nbg_cpu_plan *p)
{
	json_t *refs, *o;
	char *s;

	if (!p)
		return NULL;
	refs = json_array();
	for (size_t i = 0; refs && i < nbg_cpu_plan_count(p); i++) {
		const nbg_cpu_step *st = nbg_cpu_plan_at(p, i);
		if (st->verdict == NBG_CPU_EXECUTE && st->reference &&
		    json_array_append_new(refs, json_pack("{s:I, s:o, s:o, s:s}", "operation",
							  (json_int_t)st->operation, "layer",
							  nbg_json_str(st->layer), "what",
							  nbg_json_str(st->what), "note",
							  REFERENCE_NOTE)) != 0) {
			json_decref(refs);
			refs = NULL;
		}
	}
	o = json_pack("{s:o*, s:o}", "reference_semantics", refs, "caveat",
		      nbg_json_str(nbg_cpu_plan_caveat(p)));
	s = o && refs ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	return s;
}

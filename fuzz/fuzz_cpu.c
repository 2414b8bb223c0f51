/*
 * fuzz_cpu.c - libFuzzer harness: the CPU backend.
 *
 * An NBG file is planned (nbg_cpu_plan_build_opts: graph, commands,
 * weights, every operation's verdict), the plan must keep its promises (a
 * known verdict per operation, a reason id and a printable sentence for
 * every refused one, none for the others, the counts adding up, its
 * planning within its budget), then the operations before the first
 * refused one run on zero inputs: every read and write stays inside the
 * buffers the plan checked (ASan), and the work is bounded by the plan's
 * limits, lowered here to 2^25 steps of work and 64 MiB of memory so that
 * each input stays fast (what is over them is planned, and its run
 * refused).  A run must refuse exactly what nbg_cpu_plan_check refuses,
 * and a full run be refused with unsupported-operation when a step is
 * refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "nbg/cpu.h"
#include "nbg/graph.h"

static void check_plan(const nbg_cpu_plan *p)
{
	size_t n[3] = { 0, 0, 0 };
	for (size_t i = 0; i < nbg_cpu_plan_count(p); i++) {
		const nbg_cpu_step *s = nbg_cpu_plan_at(p, i);
		FZ_CHECK(s && s->operation == i);
		FZ_CHECK(nbg_cpu_verdict_name(s->verdict) != NULL);
		n[s->verdict]++;
		FZ_CHECK(s->reason_id != NULL && fz_terminated(s->reason, sizeof(s->reason)));
		FZ_CHECK(fz_terminated(s->layer, sizeof(s->layer)) &&
			 fz_terminated(s->what, sizeof(s->what)));
		if (s->verdict == NBG_CPU_REFUSED)
			FZ_CHECK(s->reason_id[0] && s->reason[0]);
		else
			FZ_CHECK(!s->reason_id[0] && !s->reason[0]);
		if (s->verdict == NBG_CPU_EXECUTE)
			FZ_CHECK(s->macs <= NBG_CPU_MAX_MACS && s->work >= s->macs);
		else
			FZ_CHECK(!s->work && !s->scratch);
	}
	const nbg_cpu_totals *tot = nbg_cpu_plan_totals(p);
	FZ_CHECK(tot && tot->plan_steps <= tot->limits.max_plan_steps);
	for (int v = 0; v < 3; v++)
		FZ_CHECK(n[v] == nbg_cpu_plan_verdict_count(p, v));
	FZ_CHECK(!nbg_cpu_plan_first_refused(p) == !n[NBG_CPU_REFUSED]);
	fz_text t;
	nbg_cpu_plan_print(fz_text_open(&t), p);
	fz_text_check(&t);
	/* the JSON document: valid, one step per operation, the same counts */
	char *s = nbg_cpu_plan_json(p, NBG_CPU_JSON_STEPS);
	FZ_CHECK(s != NULL);
	json_t *doc = json_loads(s, 0, NULL);
	FZ_CHECK(doc != NULL);
	FZ_CHECK(json_array_size(json_object_get(doc, "steps")) == nbg_cpu_plan_count(p));
	FZ_CHECK(json_integer_value(json_object_get(doc, "refused")) == (json_int_t)n[NBG_CPU_REFUSED]);
	FZ_CHECK(json_is_null(json_object_get(doc, "first_refused")) == !n[NBG_CPU_REFUSED]);
	nbg_code verdict = nbg_cpu_plan_check(p, SIZE_MAX, NULL);
	FZ_CHECK(json_is_true(json_object_get(doc, "runs_whole")) == (verdict == NBG_OK));
	FZ_CHECK(json_is_null(json_object_get(doc, "refusal")) == (verdict == NBG_OK));
	json_decref(doc);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_error err;
	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	nbg_cpu_plan *p = NULL;
	nbg_cpu_options lim = { .size = sizeof(lim), .max_work = 1u << 25, .max_memory = 64u << 20 };
	nbg_code rc = nbg_cpu_plan_build_opts(data, size, &lim, &p, &err);
	FZ_CHECK(rc == NBG_OK || rc == NBG_E_OUT_OF_MEMORY);
	if (rc != NBG_OK) {
		nbg_model_free(m);
		return 0;
	}
	check_plan(p);
	const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
	size_t stop = r ? r->operation : SIZE_MAX;
	nbg_rt_buffer *in = calloc(nbg_model_input_count(m) + 1, sizeof(*in));
	uint8_t *zeros = NULL;
	uint64_t largest = 0;
	for (size_t i = 0; i < nbg_model_input_count(m); i++) {
		uint64_t b = nbg_model_input_at(m, i)->byte_size;
		largest = b > largest ? b : largest;
	}
	/* the inputs as large as the plan's memory allows */
	if (in && largest <= lim.max_memory)
		zeros = calloc((size_t)largest + 1, 1);
	if (zeros) {
		for (size_t i = 0; i < nbg_model_input_count(m); i++)
			in[i] = (nbg_rt_buffer){ zeros, (size_t)nbg_model_input_at(m, i)->byte_size };
		nbg_cpu_state *st = NULL;
		nbg_code verdict = nbg_cpu_plan_check(p, stop, NULL);
		rc = nbg_cpu_run(p, in, nbg_model_input_count(m), stop, &st, &err);
		/* the run refuses what the one verdict refuses, and nothing else */
		FZ_CHECK(verdict == NBG_OK ? rc == NBG_OK || rc == NBG_E_OUT_OF_MEMORY : rc == verdict && !st);
		for (size_t i = 0; rc == NBG_OK && i < nbg_model_output_count(m); i++) {
			size_t n = 0;
			const uint8_t *o = nbg_cpu_state_buffer(st, NBG_GRAPH_SRC_OUTPUT, (int32_t)i, &n);
			FZ_CHECK(i >= 64 || (o && n == nbg_model_output_at(m, i)->byte_size));
		}
		nbg_cpu_state_free(st);
		if (r) {
			rc = nbg_cpu_run(p, in, nbg_model_input_count(m), SIZE_MAX, &st, &err);
			FZ_CHECK(rc == NBG_E_UNSUPPORTED_OPERATION && !st);
		}
	}
	free(zeros);
	free(in);
	nbg_cpu_plan_free(p);
	nbg_model_free(m);
	return 0;
}

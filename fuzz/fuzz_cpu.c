/*
 * fuzz_cpu.c - libFuzzer harness: the CPU backend.
 *
 * An NBG file is planned (nbg_cpu_plan_build: graph, commands, weights,
 * every operation's verdict), the plan must keep its promises (a known
 * verdict per operation, a reason id and a printable sentence for every
 * refused one, none for the others, the counts adding up), then the
 * operations before the first refused one run on zero inputs: every read
 * and write stays inside the buffers the plan checked (ASan), and the work
 * is bounded by the descriptor sizes the plan checked first (inputs whose
 * plan adds up to more than 2^24 multiply-accumulates or 64 MiB of
 * buffers are planned, not run, to keep each input fast).  A full run must
 * be refused with unsupported-operation exactly when a step is refused.
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
			FZ_CHECK(s->macs <= NBG_CPU_MAX_MACS);
	}
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
	nbg_code rc = nbg_cpu_plan_build(data, size, &p, &err);
	FZ_CHECK(rc == NBG_OK || rc == NBG_E_OUT_OF_MEMORY);
	if (rc != NBG_OK) {
		nbg_model_free(m);
		return 0;
	}
	check_plan(p);
	const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
	size_t stop = r ? r->operation : SIZE_MAX;
	uint64_t macs = 0, bytes = (uint64_t)nbg_model_memory(m)->vip_sram_bytes + nbg_model_memory(m)->axi_sram_bytes +
				   nbg_model_memory(m)->memory_pool_bytes;
	for (size_t i = 0; i < nbg_cpu_plan_count(p); i++)
		macs += nbg_cpu_plan_at(p, i)->macs;
	nbg_rt_buffer *in = calloc(nbg_model_input_count(m) + 1, sizeof(*in));
	uint8_t *zeros = NULL;
	uint64_t largest = 0;
	for (size_t i = 0; i < nbg_model_input_count(m); i++) {
		uint64_t b = nbg_model_input_at(m, i)->byte_size;
		bytes += b;
		largest = b > largest ? b : largest;
	}
	for (size_t i = 0; i < nbg_model_output_count(m); i++)
		bytes += nbg_model_output_at(m, i)->byte_size;
	if (in && macs <= (1u << 24) && bytes <= (64u << 20))
		zeros = calloc((size_t)largest + 1, 1);
	if (zeros) {
		for (size_t i = 0; i < nbg_model_input_count(m); i++)
			in[i] = (nbg_rt_buffer){ zeros, (size_t)nbg_model_input_at(m, i)->byte_size };
		nbg_cpu_state *st = NULL;
		rc = nbg_cpu_run(p, in, nbg_model_input_count(m), stop, &st, &err);
		FZ_CHECK(rc == NBG_OK || rc == NBG_E_OUT_OF_MEMORY);
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

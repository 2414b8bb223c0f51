/*
 * test_cpu_ops.c - each operation the CPU backend executes (doc/cpu-backend.md)
 * on small tensors, in-process, against expected bytes derived
 * independently, as an inference library tests its reference kernels.
 *
 * The cases and their expected output bytes are in tests/cpu_vectors.h,
 * written by tests/gen_cpu_vectors.py, which computes them with numpy and
 * exact Python integers and fractions from the rules doc/cpu-backend.md
 * states (the test `cpu-vectors` checks that the committed file is what the
 * script writes).  Each case is a model of one to three operations; this
 * program synthesizes it as an NBG file (tests/cpu_model.c, kernel streams
 * by tests/coef_encode.c), plans it and runs it through the public API
 * (nbg_cpu_plan_build_model on the model parsed once, whose plan must be
 * nbg_cpu_plan_build's step for step, as must nbg_cpu_plan_build_decoded's; nbg_cpu_run, nbg_cpu_state_buffer), checks that
 * every operation is executed, compares every output record byte for
 * byte and checks that no input record changed.  Where a model cannot be synthesized as a v2 file (the depthwise
 * convolution shader reads its kernels from an LCDT entry, which only v1
 * files have) or a choice of the plan is internal (the 32-bit or 64-bit
 * accumulation path), the adapter section below reaches into the
 * backend's internals: the one place to change when they are restructured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "nbg/cpu.h"
#include "nbg/graph.h"

#include "coef_encode.h"
#include "cpu_model.h"
#include "cpu_vectors.h"

/* ----------------------------------------------------------------- adapter */

#include "cpu/cpu_internal.h"

/* 1 when the plan runs NN operation `operation` with the 32-bit kernels, 0
 * with the 64-bit loop, -1 when it is no convolution. */
static int adapter_conv_acc32(const nbg_cpu_plan *p, size_t operation)
{
	if (operation >= p->count || p->ops[operation].kind != CPU_OP_CONV)
		return -1;
	return p->ops[operation].u.conv.acc32;
}

/* The depthwise convolution shader's run (ops/shdw.c) on one input buffer
 * and one output buffer: channels of kx x ky pixels (rows in_row, channels
 * in_slice apart), one row of kx x ky kernel codes per channel (w_row
 * apart), the scale as a float32's mantissa and exponent, one output per
 * channel (out_slice apart). */
static void adapter_shdw_run(const cv_dwshader *d, uint8_t *in, uint8_t *out)
{
	cpu_op op;
	memset(&op, 0, sizeof(op));
	op.kind = CPU_OP_SHDW;
	cpu_ref *r = &op.u.ref;
	r->kind = CPU_REF_DWCONV;
	r->rows = d->channels;
	r->kx = d->kx;
	r->ky = d->ky;
	r->in_stride = d->in_row;
	r->in_slice = d->in_slice;
	r->w_row = d->w_row;
	r->out_slice = d->out_slice;
	r->mantissa = d->scale_bits & 0x7fffffu;
	r->exponent = d->scale_bits >> 23 & 0xffu;
	r->codes = d->codes;
	r->in_region = 0;
	r->out_region = 1;
	uint8_t *buf[2] = { in, out };
	assert_int_equal(nbg_cpu_op_run(&op, buf), 0);
}

/* ------------------------------------------------------------ the models */

/* The case's model as an NBG file; *streams holds the encoded kernel
 * streams the model points at (freed by the caller). */
static uint8_t *case_model(const cv_case *c, uint8_t **streams, size_t *size)
{
	cm_model m;
	memset(&m, 0, sizeof(m));
	m.target = c->target;
	m.vip_sram = c->vip_sram;
	assert_true(c->ins <= CM_MAX_IO && c->outs <= CM_MAX_IO);
	m.ins = c->ins;
	m.outs = c->outs;
	for (int dir = 0; dir < 2; dir++)
		for (size_t i = 0; i < (dir ? c->outs : c->ins); i++) {
			const cv_io *io = dir ? &c->out[i] : &c->in[i];
			cm_io *r = dir ? &m.out[i] : &m.in[i];
			memcpy(r->dims, io->dims, sizeof(r->dims));
			r->dim_count = io->dim_count;
			r->format = io->format;
		}
	for (size_t i = 0; i < c->ns; i++) {
		size_t n = 0;
		streams[i] = ce_encode(&c->s[i].layer, &c->s[i].opts, &n);
		assert_non_null(streams[i]);
		cm_coef(&m, streams[i], n);
	}
	for (size_t i = 0; i < c->nraw; i++)
		cm_coef(&m, c->raw[i].data, c->raw[i].size);
	for (size_t j = 0; j < c->ops; j++) {
		const cv_op *o = &c->op[j];
		cm_op *op = cm_add_op(&m, o->type, o->layer);
		for (size_t k = 0; k < o->nf; k++)
			cm_field(op, o->f[k].key, o->f[k].value);
		for (size_t k = 0; k < o->nw; k++)
			cm_word(op, o->w[k].word, o->w[k].value);
		if (o->nu)
			cm_uniforms(op, o->u, o->nu);
		for (size_t k = 0; k < o->na; k++) {
			const cv_addr *a = &o->a[k];
			if (a->kind == 0)
				cm_field_address(op, a->key, a->source, a->index, a->offset);
			else if (a->kind == 1)
				cm_patch_add(op, 1, 4 * a->at, a->source, a->index, a->offset, a->transformed);
			else
				cm_uniform_address(op, a->at, a->source, a->index, a->offset);
		}
	}
	return cm_build(&m, size);
}

/* The first byte where got and want differ, or -1. */
static long first_difference(const uint8_t *got, const uint8_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			return (long)i;
	return -1;
}

/* Every operation executed (or refused as the case says), the NN paths as
 * the case says; returns whether the model runs. */
static int check_plan(const cv_case *c, const nbg_cpu_plan *p)
{
	const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
	if (c->refused[0]) {
		if (!r || strcmp(r->reason_id, c->refused))
			fail_msg("%s: the plan refuses %s, the case expects %s", c->name,
				 r ? r->reason_id : "nothing", c->refused);
		return 0;
	}
	if (r)
		fail_msg("%s: op %zu (%s) is refused: %s: %s", c->name, r->operation, r->what, r->reason_id,
			 r->reason);
	assert_int_equal(nbg_cpu_plan_count(p), c->ops);
	for (size_t j = 0; j < c->ops; j++) {
		const nbg_cpu_step *s = nbg_cpu_plan_at(p, j);
		assert_int_equal(s->verdict, NBG_CPU_EXECUTE);
		if (c->op[j].acc32 >= 0 && adapter_conv_acc32(p, j) != c->op[j].acc32)
			fail_msg("%s: op %zu (%s) runs the %d-bit path; the bound of doc/cpu-backend.md gives "
				 "the %d-bit one", c->name, j, s->what, adapter_conv_acc32(p, j) ? 32 : 64,
				 c->op[j].acc32 ? 32 : 64);
	}
	return 1;
}

/* The details of a run (nbg_cpu_run_details_json): the case's SH and SP
 * operations, the ones include/nbg/cpu.h says run by reference semantics,
 * in order, each under its layer; no caveat (nothing of a synthesized
 * model's layout is inferred). */
static void check_details(const cv_case *c, const nbg_cpu_plan *p)
{
	char *text = nbg_cpu_run_details_json(p);
	json_t *d = text ? json_loads(text, 0, NULL) : NULL;
	const json_t *refs = json_object_get(d, "reference_semantics");
	size_t k = 0;

	if (!json_is_array(refs) || !json_is_null(json_object_get(d, "caveat")))
		fail_msg("%s: the run's details are not {reference_semantics: [...], caveat: null}: %s",
			 c->name, text ? text : "(none)");
	for (size_t j = 0; j < c->ops; j++) {
		/* SH and SP operations, and the NN product of a TensorMul layer (known by its layer) */
		if (c->op[j].type != NBG_GRAPH_OP_SH && c->op[j].type != NBG_GRAPH_OP_SP &&
		    strcmp(c->op[j].layer, "TensorMul"))
			continue;
		const json_t *r = json_array_get(refs, k++);
		const char *layer = json_string_value(json_object_get(r, "layer"));
		if (!r || json_integer_value(json_object_get(r, "operation")) !=
				  (json_int_t)nbg_cpu_plan_at(p, j)->operation ||
		    !layer || strcmp(layer, c->op[j].layer))
			fail_msg("%s: op %zu (layer %s) is not the details' reference step %zu: %s", c->name,
				 j, c->op[j].layer, k - 1, text);
	}
	if (json_array_size(refs) != k)
		fail_msg("%s: the details list %zu reference steps, the case has %zu: %s", c->name,
			 json_array_size(refs), k, text);
	json_decref(d);
	free(text);
}

/* Every output record holds the expected bytes (the bytes no operation
 * writes: 0), every input record its own. */
static void check_buffers(const cv_case *c, const nbg_cpu_state *st)
{
	for (int dir = 0; dir < 2; dir++)
		for (size_t i = 0; i < (dir ? c->outs : c->ins); i++) {
			const cv_io *io = dir ? &c->out[i] : &c->in[i];
			size_t n = 0;
			const uint8_t *got = nbg_cpu_state_buffer(st, dir ? NBG_GRAPH_SRC_OUTPUT : NBG_GRAPH_SRC_INPUT,
								  (int32_t)i, &n);
			assert_non_null(got);
			assert_int_equal(n, io->size);
			long at = first_difference(got, io->data, n);
			if (at >= 0 && dir)
				fail_msg("%s: output %zu byte %ld is %u, the expected value (%s) is %u", c->name, i, at,
					 got[at], c->source, io->data[at]);
			if (at >= 0)
				fail_msg("%s: input %zu byte %ld changed from %u to %u", c->name, i, at, io->data[at],
					 got[at]);
		}
}

static void run_case(void **state)
{
	const cv_case *c = *state;
	uint8_t *streams[CM_MAX_COEF] = { NULL };
	size_t size = 0;
	assert_true(c->ns + c->nraw <= CM_MAX_COEF);
	uint8_t *model = case_model(c, streams, &size);
	nbg_cpu_plan *p = NULL, *q = NULL;
	nbg_error err;
	if (nbg_cpu_plan_build(model, size, &q, &err) != NBG_OK)
		fail_msg("%s: the synthesized model does not plan: %s", c->name, err.message);
	/* the plan of the model parsed once by the caller: the plan the bytes
	 * give, step for step (its JSON document), and the one run below */
	nbg_model *m = NULL;
	if (nbg_parse(model, size, NULL, &m, &err) != NBG_OK ||
	    nbg_cpu_plan_build_model(m, NULL, &p, &err) != NBG_OK)
		fail_msg("%s: the parsed model does not plan: %s", c->name, err.message);
	/* and the plan of a decoded model whose graph a report already decoded */
	nbg_decoded *d = NULL;
	const nbg_graph *g = NULL;
	nbg_cpu_plan *r = NULL;
	if (nbg_decoded_new(m, &d, &err) != NBG_OK || nbg_decoded_graph(d, &g, &err) != NBG_OK ||
	    nbg_cpu_plan_build_decoded(d, NULL, &r, &err) != NBG_OK)
		fail_msg("%s: the decoded model does not plan: %s", c->name, err.message);
	char *jp = nbg_cpu_plan_json(p, NBG_CPU_JSON_STEPS), *jq = nbg_cpu_plan_json(q, NBG_CPU_JSON_STEPS);
	char *jr = nbg_cpu_plan_json(r, NBG_CPU_JSON_STEPS);
	assert_non_null(jp);
	assert_non_null(jq);
	assert_non_null(jr);
	assert_string_equal(jp, jq);
	assert_string_equal(jr, jq);
	free(jp);
	free(jq);
	free(jr);
	nbg_cpu_plan_free(q);
	nbg_cpu_plan_free(r);
	nbg_decoded_free(d);
	if (check_plan(c, p)) {
		check_details(c, p);
		nbg_rt_buffer in[CM_MAX_IO];
		for (size_t i = 0; i < c->ins; i++)
			in[i] = (nbg_rt_buffer){ .data = c->in[i].data, .size = c->in[i].size };
		nbg_cpu_state *st = NULL;
		if (nbg_cpu_run(p, in, c->ins, SIZE_MAX, &st, &err) != NBG_OK)
			fail_msg("%s: the run fails: %s", c->name, err.message);
		check_buffers(c, st);
		nbg_cpu_state_free(st);
	}
	nbg_cpu_plan_free(p);
	nbg_model_free(m);
	free(model);
	for (size_t i = 0; i < c->ns; i++)
		free(streams[i]);
}

/* The depthwise convolution shader's kernel through the adapter. */
static void test_shdw(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cv_dwshaders) / sizeof(cv_dwshaders[0]); i++) {
		const cv_dwshader *d = &cv_dwshaders[i];
		uint8_t *in = malloc(d->in_size), *out = malloc(d->out_size);
		assert_true(in && out);
		memcpy(in, d->in, d->in_size);
		memset(out, 0, d->out_size);
		adapter_shdw_run(d, in, out);
		long at = first_difference(out, d->expect, d->out_size);
		if (at >= 0)
			fail_msg("%s: byte %ld is %u, numpy gives %u", d->name, at, out[at], d->expect[at]);
		assert_int_equal(first_difference(in, d->in, d->in_size), -1);
		free(in);
		free(out);
	}
}

/* nbg_cpu_plan_build_model's bad arguments: INVALID_ARGUMENT, no plan. */
static void test_build_model_arguments(void **state)
{
	(void)state;
	nbg_cpu_plan *p = NULL;
	nbg_error err;
	assert_int_equal(nbg_cpu_plan_build_model(NULL, NULL, &p, &err), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(err.code, NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_cpu_plan_build_model(NULL, NULL, NULL, NULL), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_cpu_plan_build_decoded(NULL, NULL, &p, &err), NBG_E_INVALID_ARGUMENT);
	assert_null(p);
	nbg_model *m = NULL;
	const cv_case *c = &cv_cases[0];
	uint8_t *streams[CM_MAX_COEF] = { NULL };
	size_t size = 0;
	uint8_t *model = case_model(c, streams, &size);
	assert_int_equal(nbg_parse(model, size, NULL, &m, &err), NBG_OK);
	nbg_cpu_options o = { .size = 0 };
	p = NULL;
	assert_int_equal(nbg_cpu_plan_build_model(m, &o, &p, &err), NBG_E_INVALID_ARGUMENT);
	assert_null(p);
	nbg_model_free(m);
	free(model);
	for (size_t i = 0; i < c->ns; i++)
		free(streams[i]);
}

int main(void)
{
	size_t n = sizeof(cv_cases) / sizeof(cv_cases[0]);
	struct CMUnitTest *tests = calloc(n + 2, sizeof(*tests));
	if (!tests)
		return 1;
	for (size_t i = 0; i < n; i++)
		tests[i] = (struct CMUnitTest){ .name = cv_cases[i].id, .test_func = run_case,
						.initial_state = (void *)&cv_cases[i] };
	tests[n] = (struct CMUnitTest){ .name = "sh-depthwise-shader", .test_func = test_shdw };
	tests[n + 1] = (struct CMUnitTest){ .name = "build-model-arguments", .test_func = test_build_model_arguments };
	int rc = _cmocka_run_group_tests("cpu-ops", tests, n + 2, NULL, NULL);
	free(tests);
	return rc;
}

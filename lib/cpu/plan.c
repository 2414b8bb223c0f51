/*
 * plan.c - the CPU backend's plan driver: the model decoded, the machine's
 * buffers, and per OPERATIONS record a step: nothing to do (INIT, END),
 * or planned by the first kind of operation of the table whose match
 * takes it (ops/table.c: executed, with every address range it touches
 * checked against its buffer before any run, or refused with a reason id
 * and a sentence naming the field and value), or refused when no kind
 * takes it.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/conv_fast.h"
#include "runtime/errors.h"

const char *nbg_cpu_verdict_name(int v)
{
	switch (v) {
	case NBG_CPU_EXECUTE: return "execute";
	case NBG_CPU_NOTHING: return "nothing";
	case NBG_CPU_REFUSED: return "refused";
	default: return NULL;
	}
}

static void add_region_from(nbg_cpu_plan *p, uint32_t type, int32_t index, uint64_t size, const uint8_t *init)
{
	if (p->region_count < sizeof(p->regions) / sizeof(p->regions[0]))
		p->regions[p->region_count++] = (cpu_region){ type, index, size, init };
}

static void add_region(nbg_cpu_plan *p, uint32_t type, int32_t index, uint64_t size)
{
	add_region_from(p, type, index, size, NULL);
}

/* Patch i when it is an operation's patch of this (dynamic) source type
 * naming an entry no region holds yet; NULL otherwise. */
static const nbg_graph_patch *new_dynamic_patch(const nbg_cpu_plan *p, size_t i, uint32_t type)
{
	const nbg_graph_patch *pt = nbg_graph_patch_at(p->g, i);
	if (!pt || pt->source_type != type || pt->operation < 0 || pt->index < 0)
		return NULL;
	for (size_t r = 0; r < p->region_count; r++)
		if (p->regions[r].source_type == type && p->regions[r].index == pt->index)
			return NULL;
	return pt;
}

/* The dynamic outputs an operation writes: in the LCD layout a
 * MISC_DYNA_OUTPUT patch names an LCDT entry (doc/memory.md, "Dynamic
 * buffers"), a buffer of that entry's size the runtime supplies; modelled
 * as a buffer of its own, zero at the start (the corpus's one such entry
 * holds zero bytes).  Other layouts: not modelled (memory-unsupported). */
static void add_dynamic_outputs(nbg_cpu_plan *p)
{
	const nbg_graph_table *lcd = nbg_graph_table_at(p->g, NBG_GRAPH_TABLE_LCD);
	const nbg_graph_table *coef = nbg_graph_table_at(p->g, NBG_GRAPH_TABLE_COEF_DATA);
	if (!lcd || !lcd->present || !lcd->decoded || (coef && coef->present))
		return;
	size_t n = nbg_graph_summary_of(p->g)->patch_count, added = 0;
	for (size_t i = 0; i < n && added < CPU_MAX_DYNAMIC_OUTPUTS; i++) {
		const nbg_graph_patch *pt = new_dynamic_patch(p, i, NBG_GRAPH_SRC_MISC_DYNA_OUTPUT);
		const nbg_graph_table_entry *e = pt ? nbg_graph_table_entry_at(p->g, NBG_GRAPH_TABLE_LCD,
									       (size_t)pt->index) : NULL;
		if (!e || !e->in_bounds || !e->size)
			continue;
		add_region(p, pt->source_type, pt->index, e->size);
		added++;
	}
}

/* The dynamic inputs operations read in the sections layout: a
 * MISC_DYNA_INPUT patch names a DYNAIO_TABLE entry (doc/memory.md), a
 * buffer of that entry's size holding, at the start, the bytes the file
 * stores there (doc/cpu-backend.md, "The machine"). */
static void add_dynamic_inputs(nbg_cpu_plan *p)
{
	const nbg_dynaio *d = nbg_model_dynaio(p->m);
	if (!d || !d->present || d->region_offset > p->m->file_size ||
	    d->region_size > p->m->file_size - d->region_offset)
		return;
	size_t n = nbg_graph_summary_of(p->g)->patch_count, added = 0;
	for (size_t i = 0; i < n && added < CPU_MAX_DYNAMIC_INPUTS; i++) {
		const nbg_graph_patch *pt = new_dynamic_patch(p, i, NBG_GRAPH_SRC_MISC_DYNA_INPUT);
		const nbg_dynaio_entry *e = pt ? nbg_model_dynaio_entry_at(p->m, (size_t)pt->index) : NULL;
		if (!e || !e->size || e->offset > d->region_size || e->size > d->region_size - e->offset)
			continue;
		add_region_from(p, pt->source_type, pt->index, e->size, p->m->data + d->region_offset + e->offset);
		added++;
	}
}

/* The VIP SRAM's bytes: the header's, or for a v1 file of a version that
 * has no VIP SRAM record (before 0x10008) and whose commands still place
 * images there, the size every later corpus file of its target declares
 * (doc/cpu-backend.md, "The machine"); 0 for another target. */
static uint32_t vip_sram_bytes(const nbg_model *m)
{
	if (m->version >= 0x10008u || m->memory.has_vip_sram || m->memory.vip_sram_bytes)
		return m->memory.vip_sram_bytes;
	switch (nbg_model_target(m)) {
	case 0x88: case 0x99: return 0x80000;
	case 0xa1: return 0x100000;
	default: return 0;
	}
}

static void build_regions(nbg_cpu_plan *p)
{
	const nbg_model *m = p->m;
	for (size_t i = 0; i < m->input_count && i < 64; i++)
		add_region(p, NBG_GRAPH_SRC_INPUT, (int32_t)i, nbg_model_input_at(m, i)->byte_size);
	for (size_t i = 0; i < m->output_count && i < 64; i++)
		add_region(p, NBG_GRAPH_SRC_OUTPUT, (int32_t)i, nbg_model_output_at(m, i)->byte_size);
	add_region(p, NBG_GRAPH_SRC_VIP_SRAM, -1, vip_sram_bytes(m));
	add_region(p, NBG_GRAPH_SRC_AXI_SRAM, -1, m->memory.axi_sram_bytes);
	add_region(p, NBG_GRAPH_SRC_MEMORY_POOL, -1, m->memory.memory_pool_bytes);
	add_dynamic_outputs(p);
	add_dynamic_inputs(p);
}


/* Step i: nothing to do (INIT, END), or planned by the first kind of
 * operation of the table whose match takes it (ops/table.c), or refused;
 * an executed step's work and scratch from its kind's cost (doc/cpu-backend.md,
 * "Limits"). */
static void plan_step(nbg_cpu_plan *p, size_t i)
{
	const nbg_graph_operation *go = nbg_graph_operation_at(p->g, i);
	nbg_cpu_step *s = &p->steps[i];
	s->operation = i;
	s->type = go->type;
	s->layer_id = go->layer_id;
	const nbg_graph_layer *l = nbg_graph_layer_at(p->g, go->layer_id); /* NULL: none */
	snprintf(s->layer, sizeof(s->layer), "%s", l && l->name_printable ? l->name : "?");
	const char *tn = nbg_graph_op_type_name(go->type);
	snprintf(s->what, sizeof(s->what), "%s", tn ? tn : "?");
	s->reason_id = "";
	if (go->type == NBG_GRAPH_OP_INIT || go->type == NBG_GRAPH_OP_END) {
		s->verdict = NBG_CPU_NOTHING;
		return;
	}
	cpu_match m;
	nbg_cpu_match_of(p, s, &m);
	if (m.cop) {
		char d[160];
		snprintf(s->what, sizeof(s->what), "%s %s", nbg_command_engine_name(m.cop->engine),
			 nbg_command_describe(m.cop, d, sizeof(d)));
	}
	cpu_op *op = &p->ops[i];
	for (int k = 1; k < CPU_OP__COUNT; k++) {
		const cpu_op_def *d = nbg_cpu_ops[k];
		if (!d->match || !d->match(p, &m))
			continue;
		d->plan(p, s, op, &m);
		if (s->verdict == NBG_CPU_EXECUTE && op->kind > CPU_OP_NONE && op->kind < CPU_OP__COUNT &&
		    nbg_cpu_ops[op->kind]->cost)
			nbg_cpu_ops[op->kind]->cost(op, &s->work, &s->scratch);
		return;
	}
	nbg_cpu_refuse(s, "operation-type-unsupported", "an operation of type %s (%u) the CPU backend does "
		       "not execute", tn ? tn : "?", go->type);
}

/* A v1 file whose version has no sample is read with a record layout the
 * parser inferred (doc/format-v1.md, its notes); every verdict and every
 * address the plan reads stands on that reading, so the plan says so. */
static void set_caveat(nbg_cpu_plan *p)
{
	const nbg_v1_info *v1 = nbg_model_v1(p->m);
	if (nbg_model_family(p->m) != 1 || !v1)
		return;
	const char *how[3];
	size_t n = 0;
	if (v1->strides_assumed)
		how[n++] = "its record strides assumed from the newest known layout";
	if (v1->patch_stride_from_data)
		how[n++] = "its patch record stride chosen from the data";
	if (v1->entry_count_derived)
		how[n++] = "its entry count derived from the input table";
	if (n)
		snprintf(p->caveat, sizeof(p->caveat),
			 "version 0x%05x has no sample, so it is read with %s%s%s%s%s (nbg inspect's "
			 "notes): the plan stands on that reading", nbg_model_version(p->m), how[0],
			 n > 2 ? ", " : n > 1 ? " and " : "", n > 1 ? how[1] : "",
			 n > 2 ? " and " : "", n > 2 ? how[2] : "");
}

const char *nbg_cpu_plan_caveat(const nbg_cpu_plan *p)
{
	return p && p->caveat[0] ? p->caveat : NULL;
}

nbg_code nbg_cpu_plan_build(const uint8_t *model, size_t size, nbg_cpu_plan **out, nbg_error *err)
{
	return nbg_cpu_plan_build_opts(model, size, NULL, out, err);
}

/* A new plan with its limits, or NULL with *rc and err set (NULL model or
 * out, options of a wrong size, out of memory). */
static nbg_cpu_plan *plan_new(const void *model, const nbg_cpu_options *opts, nbg_cpu_plan **out,
			      nbg_error *err, nbg_code *rc)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out || !model || (opts && opts->size < sizeof(opts->size))) {
		*rc = nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu plan: NULL argument or options size "
				  "not sizeof(nbg_cpu_options)");
		return NULL;
	}
	*out = NULL;
	nbg_cpu_plan *p = calloc(1, sizeof(*p));
	if (!p) {
		*rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
		return NULL;
	}
	nbg_cpu_limits_resolve(&p->totals.limits, opts);
	return p;
}

/* The plan of the decoded model d (of p->m): its graph, commands and
 * weights, every step planned; p freed on failure. */
static nbg_code plan_model(nbg_cpu_plan *p, nbg_decoded *d, nbg_cpu_plan **out, nbg_error *err)
{
	nbg_error e;
	nbg_code rc = nbg_decoded_weights(d, &p->w, &e);
	if (rc == NBG_OK)
		rc = nbg_decoded_graph(d, &p->g, &e);
	if (rc == NBG_OK)
		rc = nbg_decoded_commands(d, &p->c, &e);
	if (rc != NBG_OK) {
		nbg_cpu_plan_free(p);
		return nbg_rt_fail(err, rc, -1, "decoding the model: %s", e.message);
	}
	p->count = nbg_graph_summary_of(p->g)->operation_count;
	p->steps = calloc(p->count + 1, sizeof(*p->steps));
	p->ops = calloc(p->count + 1, sizeof(*p->ops));
	p->wop = calloc(p->count + 1, sizeof(*p->wop));
	if (!p->steps || !p->ops || !p->wop) {
		nbg_cpu_plan_free(p);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	/* every planner finds an operation's weights here: one pass over them,
	 * not one per operation */
	for (size_t i = 0; i < nbg_weights_count(p->w); i++) {
		const nbg_weights_op *wo = nbg_weights_at(p->w, i);
		size_t o = nbg_weights_op_operation(wo);
		if (o < p->count)
			p->wop[o] = wo;
	}
	build_regions(p);
	set_caveat(p);
	for (size_t i = 0; i < p->count; i++)
		plan_step(p, i);
	nbg_cpu_plan_add_up(p);
	/* the convolutions' weights laid out once, within the memory left */
	for (size_t i = 0; i < p->count; i++)
		if (p->steps[i].verdict == NBG_CPU_EXECUTE && p->ops[i].kind == CPU_OP_CONV)
			nbg_cpu_conv_keep(p, &p->ops[i].u.conv);
	*out = p;
	return NBG_OK;
}

/* The plan of p->m through a decoded model of its own. */
static nbg_code own_decoded(nbg_cpu_plan *p, nbg_cpu_plan **out, nbg_error *err)
{
	nbg_error e;
	nbg_code rc = nbg_decoded_new(p->m, &p->own_d, &e);
	if (rc != NBG_OK) {
		nbg_cpu_plan_free(p);
		return nbg_rt_fail(err, rc, -1, "decoding the model: %s", e.message);
	}
	return plan_model(p, p->own_d, out, err);
}

/* A model whose checksums do not hold (parsed unverified) is refused as
 * the bytes' parse refuses it: NBG_E_MODEL_INVALID with the failure as its
 * cause, so every builder gives the same answer for the same file. */
static nbg_code refuse_invalid(nbg_cpu_plan *p, nbg_code code, const nbg_error *e, nbg_error *err)
{
	nbg_cpu_plan_free(p);
	nbg_rt_fail(err, NBG_E_MODEL_INVALID, -1, "the NBG failed validation: %s", e->message);
	if (err)
		err->cause = code;
	return NBG_E_MODEL_INVALID;
}

/* A plan for the parsed model m, refused as the bytes' parse would refuse
 * it when its checksums do not hold: NULL then, with *rc set. */
static nbg_cpu_plan *plan_for_model(const nbg_model *m, const nbg_cpu_options *opts, nbg_cpu_plan **out,
				    nbg_error *err, nbg_code *rc)
{
	nbg_cpu_plan *p = plan_new(m, opts, out, err, rc);
	if (!p)
		return NULL;
	nbg_error e;
	nbg_code bad = nbg_integrity_failure(m, &e);
	if (bad != NBG_OK) {
		*rc = refuse_invalid(p, bad, &e, err);
		return NULL;
	}
	p->m = m;
	return p;
}

nbg_code nbg_cpu_plan_build_model(const nbg_model *m, const nbg_cpu_options *opts, nbg_cpu_plan **out,
				  nbg_error *err)
{
	nbg_code rc = NBG_OK;
	nbg_cpu_plan *p = plan_for_model(m, opts, out, err, &rc);
	return p ? own_decoded(p, out, err) : rc;
}

nbg_code nbg_cpu_plan_build_decoded(nbg_decoded *d, const nbg_cpu_options *opts, nbg_cpu_plan **out,
				    nbg_error *err)
{
	nbg_code rc = NBG_OK;
	nbg_cpu_plan *p = plan_for_model(d ? nbg_decoded_model(d) : NULL, opts, out, err, &rc);
	return p ? plan_model(p, d, out, err) : rc;
}

nbg_code nbg_cpu_plan_build_opts(const uint8_t *model, size_t size, const nbg_cpu_options *opts,
				 nbg_cpu_plan **out, nbg_error *err)
{
	nbg_code rc = NBG_OK;
	nbg_cpu_plan *p = plan_new(model, opts, out, err, &rc);
	if (!p)
		return rc;
	nbg_error e;
	if (nbg_parse(model, size, NULL, &p->own, &e) != NBG_OK)
		return refuse_invalid(p, e.code, &e, err);
	p->m = p->own;
	return own_decoded(p, out, err);
}

void nbg_cpu_plan_free(nbg_cpu_plan *p)
{
	if (!p)
		return;
	nbg_decoded_free(p->own_d);
	nbg_model_free(p->own);
	free(p->steps);
	free(p->ops);
	free(p->wop);
	free(p->read_outside);
	nbg_cpu_conv_kept_free(p);
	free(p);
}

size_t nbg_cpu_plan_count(const nbg_cpu_plan *p)
{
	return p ? p->count : 0;
}

const nbg_cpu_step *nbg_cpu_plan_at(const nbg_cpu_plan *p, size_t i)
{
	return p && i < p->count ? &p->steps[i] : NULL;
}

size_t nbg_cpu_plan_verdict_count(const nbg_cpu_plan *p, int verdict)
{
	size_t n = 0;
	for (size_t i = 0; p && i < p->count; i++)
		n += p->steps[i].verdict == verdict;
	return n;
}

const nbg_cpu_step *nbg_cpu_plan_first_refused(const nbg_cpu_plan *p)
{
	for (size_t i = 0; p && i < p->count; i++)
		if (p->steps[i].verdict == NBG_CPU_REFUSED)
			return &p->steps[i];
	return NULL;
}

/* A limit as a number, or "none". */
static const char *limit_text(uint64_t v, char *buf, size_t n)
{
	if (v == UINT64_MAX)
		return "none";
	snprintf(buf, n, "%llu", (unsigned long long)v);
	return buf;
}

/* The whole run's figures against the plan's limits (doc/cpu-backend.md,
 * "Limits"). */
static void print_totals(FILE *out, const nbg_cpu_totals *t)
{
	char a[24], b[24], c[24];
	fprintf(out, "limits: work %llu steps (max_work %s), memory %llu bytes: %llu of buffers and %llu of "
		"scratch (max_memory %s), planning %llu steps (max_plan_steps %s)\n",
		(unsigned long long)t->work, limit_text(t->limits.max_work, a, sizeof(a)),
		(unsigned long long)nbg_cpu_add_sat(t->buffers, t->scratch), (unsigned long long)t->buffers,
		(unsigned long long)t->scratch, limit_text(t->limits.max_memory, b, sizeof(b)),
		(unsigned long long)t->plan_steps, limit_text(t->limits.max_plan_steps, c, sizeof(c)));
}

void nbg_cpu_plan_print(FILE *out, const nbg_cpu_plan *p)
{
	if (!out || !p)
		return;
	fprintf(out, "CPU backend plan (doc/cpu-backend.md): %zu operations, %zu executed, %zu with nothing to "
		"compute, %zu refused\n", p->count, nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE),
		nbg_cpu_plan_verdict_count(p, NBG_CPU_NOTHING),
		nbg_cpu_plan_verdict_count(p, NBG_CPU_REFUSED));
	if (p->caveat[0])
		fprintf(out, "caveat: %s\n", p->caveat);
	for (size_t i = 0; i < p->count; i++) {
		const nbg_cpu_step *s = &p->steps[i];
		fprintf(out, "  op %zu [layer %u %s] %s: %s", s->operation, s->layer_id, s->layer, s->what,
			nbg_cpu_verdict_name(s->verdict));
		if (s->verdict == NBG_CPU_EXECUTE && s->reference)
			fprintf(out, " (reference semantics, not from the operation's code)");
		else if (s->verdict == NBG_CPU_EXECUTE)
			fprintf(out, " (%llu MACs)", (unsigned long long)s->macs);
		if (s->verdict == NBG_CPU_REFUSED)
			fprintf(out, " %s: %s", s->reason_id, s->reason);
		fputc('\n', out);
	}
	print_totals(out, &p->totals);
	/* the verdict a run gives (nbg_cpu_plan_check), nothing else's */
	nbg_error e;
	nbg_code rc = nbg_cpu_plan_check(p, SIZE_MAX, &e);
	const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
	if (rc == NBG_OK)
		fprintf(out, "verdict: the CPU backend runs every operation of this model\n");
	else if (rc == NBG_E_UNSUPPORTED_OPERATION && r)
		fprintf(out, "verdict: the CPU backend cannot run this model: op %zu is refused (%s)\n",
			r->operation, r->reason_id);
	else
		fprintf(out, "verdict: the CPU backend cannot run this model: %s: %s\n", nbg_code_name(rc),
			e.message);
}

/*
 * graph_check.c - the cross-references of the decoded graph: counts,
 * operations against their engines' sections and tables, layers against
 * their operations, patches against operations, inputs and tables, SH
 * operations against PPU tables.  Each relation counts how often it was
 * checked and held; a failure is a finding, never an error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/graph/graph_internal.h"

static bool is_marker_op(uint32_t type)
{
	return type == NBG_GRAPH_OP_INIT || type == NBG_GRAPH_OP_END;
}

static bool layer_ok(const nbg_graph *g, uint32_t id)
{
	return id < g->sum.layer_count;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

void nbg_graph_check_counts(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;

	if (g->sum.layer_records.decoded) {
		if (m->family == 2 && m->network_info.present) {
			if (!nbg_graph_check(c, R_LAYER_COUNT, m->network_info.layer_count == g->sum.layer_count))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_LAYER_COUNT].id,
					m->network_info.offset +
						nbg_fid_desc(F_NI_LAYER_COUNT)->offset,
					"NETWORK_INFO declares %u layers but LAYER holds %zu "
					"records", m->network_info.layer_count, g->sum.layer_count);
		} else if (m->family == 1) {
			if (!nbg_graph_check(c, R_LAYER_COUNT, m->v1.layer_count == g->sum.layer_count))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_LAYER_COUNT].id,
					nbg_fid_desc(F_V1_LAYER_COUNT)->offset,
					"the header declares %u layers but LAYER holds %zu "
					"records", m->v1.layer_count, g->sum.layer_count);
		}
	}
	if (g->sum.operation_records.decoded && m->family == 1 &&
	    !nbg_graph_check(c, R_OPERATION_COUNT, m->v1.operation_count == g->sum.operation_count))
		nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OPERATION_COUNT].id, nbg_fid_desc(F_V1_OP_COUNT)->offset,
			"the header declares %u operations but OPERATIONS holds %zu records",
			m->v1.operation_count, g->sum.operation_count);
	for (size_t i = 0; i < g->sum.layer_count; i++)
		if (!nbg_graph_check(c, R_LAYER_NAME, g->layers[i].name_printable))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_LAYER_NAME].id, g->layers[i].record_offset,
				"layer %zu name holds bytes outside printable ASCII", i);
}

/* Records of the section an operation's `index` names, or -1 when unknown. */
static int64_t engine_records(const gctx *c, uint32_t type)
{
	const nbg_model *m = c->m;
	const nbg_graph *g = c->g;
	const nbg_section *s;
	uint32_t unit = 0;

	switch (type) {
	case NBG_GRAPH_OP_SH:
		return !g->sum.sh_records.present ? 0 : g->sum.sh_records.decoded
			? (int64_t)g->sum.sh_records.count : -1;
	case NBG_GRAPH_OP_SW:
		return !g->sum.sw_records.present ? 0 : g->sum.sw_records.decoded
			? (int64_t)g->sum.sw_records.count : -1;
	case NBG_GRAPH_OP_NN:
	case NBG_GRAPH_OP_SP:
	case NBG_GRAPH_OP_NN_LUT:
	case NBG_GRAPH_OP_NT:
		s = nbg_graph_section(c, NBG_SEC_NN);
		if (m->family == 2)
			unit = s && s->entry_size > 1 ? s->entry_size : m->network_info.nn_command_bytes;
		else
			unit = m->v1.nn_command_bytes;
		break;
	case NBG_GRAPH_OP_TP:
		if (m->family != 2)
			return -1; /* v1 gives no TP command size */
		s = nbg_graph_section(c, NBG_SEC_TP);
		unit = s && s->entry_size > 1 ? s->entry_size : m->network_info.tp_command_bytes;
		break;
	default:
		return -1;
	}
	if (!s)
		return 0;
	return unit ? (int64_t)(s->size / unit) : -1;
}

static const nbg_graph_table *state_table(const nbg_graph *g)
{
	return g->sum.state_table >= 0 ? &g->tables[g->sum.state_table] : NULL;
}

void nbg_graph_check_operations(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;
	const nbg_graph_table *st = state_table(g);
	int no_state_reported = 0;

	for (size_t i = 0; i < g->sum.operation_count; i++) {
		const nbg_graph_operation *o = &g->operations[i];
		const char *tn = nbg_graph_op_type_name(o->type);
		bool marker = is_marker_op(o->type);

		if (!nbg_graph_check(c, R_OP_TYPE, tn != NULL))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OP_TYPE].id, o->record_offset,
				"operation %zu type %u (0x%x) is not in the public enum; kept as "
				"a number", i, o->type, o->type);

		if (!(marker && (o->layer_id == NBG_GRAPH_NO_LAYER16 ||
				 o->layer_id == NBG_GRAPH_NO_LAYER32)) &&
		    !nbg_graph_check(c, R_OP_LAYER, layer_ok(g, o->layer_id)))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OP_LAYER].id, o->record_offset + FOFF(F_OP_LAYER_ID),
				"operation %zu (%s) names layer %u; LAYER holds %zu records", i,
				tn ? tn : "?", o->layer_id, g->sum.layer_count);

		if (o->patch_count) {
			bool sw = o->type == NBG_GRAPH_OP_SW;
			const nbg_graph_records *pr = sw ? &g->sum.layer_param_records
							 : &g->sum.patch_records;
			if (!sw || pr->decoded || !pr->present) {
				uint64_t end = (uint64_t)o->patch_index + o->patch_count;
				if (!nbg_graph_check(c, R_OP_PATCH, pr->decoded && end <= pr->count))
					nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OP_PATCH].id, o->record_offset + FOFF(F_OP_PATCH_INDEX),
						"operation %zu patches [%u, +%u) reach past the %zu "
						"records of %s", i, o->patch_index, o->patch_count,
						pr->decoded ? pr->count : 0,
						sw ? "LAYER_PARAM" : "PATCH");
			}
		}

		if (st) {
			if (!nbg_graph_check(c, R_OP_STATE, o->state_id < st->entry_count))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OP_STATE].id, o->record_offset + FOFF(F_OP_STATE_ID),
					"operation %zu state_id %u; %s holds %zu entries", i,
					o->state_id, st->name, st->entry_count);
		} else if (!marker) {
			nbg_graph_check(c, R_OP_STATE, false);
			if (!no_state_reported++)
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OP_STATE].id, o->record_offset + FOFF(F_OP_STATE_ID),
					"operations carry state_id but the file has no load-state "
					"table (LOADSTATE_TABLE%s)", m->family == 1 ? " or LCDT" : "");
		}

		if (!marker) {
			int64_t n = engine_records(c, o->type);
			if (n >= 0 && !nbg_graph_check(c, R_OP_INDEX, o->index < (uint64_t)n))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_OP_INDEX].id, o->record_offset + FOFF(F_OP_INDEX),
					"operation %zu (%s) index %u; its engine's section holds "
					"%lld records", i, tn ? tn : "?", o->index, (long long)n);
		}

		if (o->has_abs_op_id && !marker && m->family == 2 && m->network_info.present &&
		    !nbg_graph_check(c, R_ABS_OP_ID, o->abs_op_id < m->network_info.absolute_operation_count))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_ABS_OP_ID].id, o->record_offset + FOFF(F_OP_ABS_OP_ID),
				"operation %zu abs_op_id %u; NETWORK_INFO abs_op_count is %u", i,
				o->abs_op_id, m->network_info.absolute_operation_count);
	}
}

/* Per layer: operation records and distinct abs_op_id; the abs_op_id total. */
void nbg_graph_check_layer_operations(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;
	size_t n = 0, nall = 0;
	uint64_t *pairs, *all;
	bool have_abs = g->sum.operation_records.decoded && g->sum.operation_count &&
			g->operations[0].has_abs_op_id;

	if (!g->sum.layer_records.decoded || !g->sum.operation_records.decoded)
		return;
	pairs = nbg_graph_alloc(c, g->sum.operation_count, sizeof(uint64_t));
	all = nbg_graph_alloc(c, g->sum.operation_count, sizeof(uint64_t));
	if (!pairs || !all) {
		free(pairs);
		free(all);
		return;
	}
	for (size_t i = 0; i < g->sum.operation_count; i++) {
		const nbg_graph_operation *o = &g->operations[i];
		if (is_marker_op(o->type))
			continue;
		if (have_abs)
			all[nall++] = o->abs_op_id;
		if (!layer_ok(g, o->layer_id))
			continue;
		g->layers[o->layer_id].operation_records++;
		pairs[n++] = (uint64_t)o->layer_id << 32 | (have_abs ? o->abs_op_id : 0);
	}
	if (have_abs) {
		qsort(pairs, n, sizeof(uint64_t), cmp_u64);
		for (size_t i = 0; i < n; i++)
			if (i == 0 || pairs[i] != pairs[i - 1])
				g->layers[pairs[i] >> 32].distinct_abs_ops++;
		qsort(all, nall, sizeof(uint64_t), cmp_u64);
		for (size_t i = 0; i < nall; i++)
			if (i == 0 || all[i] != all[i - 1])
				g->sum.abs_op_ids++;
		if (m->family == 2 && m->network_info.present &&
		    !nbg_graph_check(c, R_ABS_OP_COUNT, g->sum.abs_op_ids == m->network_info.absolute_operation_count))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_ABS_OP_COUNT].id,
				m->network_info.offset + nbg_fid_desc(F_NI_ABS_OP_COUNT)->offset,
				"operations carry %llu distinct abs_op_id values; NETWORK_INFO "
				"abs_op_count is %u", (unsigned long long)g->sum.abs_op_ids,
				m->network_info.absolute_operation_count);
	}
	free(pairs);
	free(all);

	for (size_t i = 0; i < g->sum.layer_count; i++) {
		const nbg_graph_layer *l = &g->layers[i];
		uint32_t have = have_abs ? l->distinct_abs_ops : l->operation_records;
		enum rel r = have_abs ? R_LAYER_OPS : R_LAYER_RECS;
		if (!nbg_graph_check(c, r, have == l->operation_count))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[r].id, l->record_offset + FOFF(F_LAYER_OP_COUNT),
				"layer %zu declares %u operations; %u %s name it", i,
				l->operation_count, have,
				have_abs ? "distinct abs_op_id values of operations"
					 : "operation records");
	}
}

/* Path-compressed "next patch without an owner" for linear owner assignment. */
static size_t next_free(size_t *next, size_t k)
{
	size_t r = k;
	while (next[r] != r)
		r = next[r];
	while (next[k] != r) {
		size_t t = next[k];
		next[k] = r;
		k = t;
	}
	return r;
}

static void assign_range(nbg_graph *g, size_t *next, int64_t *diff, uint64_t start,
			 uint64_t count, int64_t owner, int hw)
{
	uint64_t end = start + count;
	diff[start]++;
	diff[end]--;
	for (size_t k = next_free(next, (size_t)start); k < end; k = next_free(next, k)) {
		g->patches[k].operation = owner;
		g->patches[k].hw_init = hw;
		next[k] = k + 1;
	}
}

void nbg_graph_check_patches(gctx *c)
{
	const nbg_model *m = c->m;
	nbg_graph *g = c->g;
	const nbg_graph_table *st = state_table(g);
	const nbg_graph_table *coef = &g->tables[NBG_GRAPH_TABLE_COEF_DATA];
	const nbg_section *dyn = nbg_graph_section(c, NBG_SEC_DYNAIO_TABLE);
	size_t np = g->sum.patch_count;
	size_t *next;
	int64_t *diff;

	/* Hardware-init operations first: their ranges are checked like operations'. */
	for (size_t i = 0; i < g->sum.hw_init_count; i++) {
		const nbg_graph_hw_init *h = &g->hw_inits[i];
		if (h->patch_count &&
		    !nbg_graph_check(c, R_HWI_PATCH, g->sum.patch_records.decoded &&
						   (uint64_t)h->patch_index + h->patch_count <= np))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_HWI_PATCH].id, h->record_offset + FOFF(F_HWI_PATCH_INDEX),
				"hardware-init operation %zu patches [%u, +%u) reach past the %zu "
				"PATCH records", i, h->patch_index, h->patch_count, np);
		if (!nbg_graph_check(c, R_HWI_STATE, st && h->state_id < st->entry_count))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_HWI_STATE].id, h->record_offset,
				"hardware-init operation %zu state_id %u; the load-state table "
				"holds %zu entries", i, h->state_id, st ? st->entry_count : 0);
	}
	if (!g->sum.patch_records.decoded)
		return;

	next = nbg_graph_alloc(c, np + 1, sizeof(size_t));
	diff = nbg_graph_alloc(c, np + 1, sizeof(int64_t));
	if (!next || !diff) {
		free(next);
		free(diff);
		return;
	}
	for (size_t k = 0; k <= np; k++)
		next[k] = k;
	for (size_t i = 0; i < g->sum.operation_count; i++) {
		const nbg_graph_operation *o = &g->operations[i];
		if (o->type != NBG_GRAPH_OP_SW && o->patch_count &&
		    (uint64_t)o->patch_index + o->patch_count <= np)
			assign_range(g, next, diff, o->patch_index, o->patch_count, (int64_t)i, 0);
	}
	for (size_t i = 0; i < g->sum.hw_init_count; i++) {
		const nbg_graph_hw_init *h = &g->hw_inits[i];
		if (h->patch_count && (uint64_t)h->patch_index + h->patch_count <= np)
			assign_range(g, next, diff, h->patch_index, h->patch_count, -1, 1);
	}
	int64_t refs = 0;
	for (size_t k = 0; k < np; k++) {
		nbg_graph_patch *x = &g->patches[k];
		refs += diff[k];
		x->references = (uint32_t)refs;
		g->sum.patches_unreferenced += refs == 0;
		g->sum.patches_shared += refs > 1;

		if (!nbg_graph_check(c, R_PATCH_TYPE, nbg_graph_patch_type_name(x->type) != NULL))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_PATCH_TYPE].id, x->record_offset,
				"patch %zu type %u is not in the public enum; kept as a number", k,
				x->type);
		if (!nbg_graph_check(c, R_PATCH_SOURCE, nbg_graph_source_type_name(x->source_type) != NULL))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_PATCH_SOURCE].id, x->record_offset + FOFF(F_PATCH_SOURCE_TYPE),
				"patch %zu source_type %u is not in the public enum; kept as a "
				"number", k, x->source_type);
		if (x->source_type == NBG_GRAPH_SRC_INPUT || x->source_type == NBG_GRAPH_SRC_OUTPUT) {
			bool in = x->source_type == NBG_GRAPH_SRC_INPUT;
			size_t n = in ? m->input_count : m->output_count;
			if (!nbg_graph_check(c, R_PATCH_IO_INDEX, x->index >= 0 && (size_t)x->index < n))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_PATCH_IO_INDEX].id, x->record_offset + FOFF(F_PATCH_INDEX),
					"patch %zu names %s %d; the file has %zu", k,
					in ? "input" : "output", x->index, n);
		} else if (x->source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC && coef->decoded) {
			if (!nbg_graph_check(c, R_PATCH_DYNA_INDEX,
				   x->index >= 0 && (size_t)x->index < coef->entry_count))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_PATCH_DYNA_INDEX].id, x->record_offset + FOFF(F_PATCH_INDEX),
					"patch %zu (MISC_DYNA_GENERIC) index %d; COEF_DATA_TABLE "
					"holds %zu entries", k, x->index, coef->entry_count);
		} else if ((x->source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT ||
			    x->source_type == NBG_GRAPH_SRC_MISC_DYNA_OUTPUT) && dyn) {
			uint64_t n = dyn->size / 8;
			if (!nbg_graph_check(c, R_PATCH_DYNA_INDEX, x->index >= 0 && (uint64_t)x->index < n))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_PATCH_DYNA_INDEX].id, x->record_offset + FOFF(F_PATCH_INDEX),
					"patch %zu (%s) index %d; DYNAIO_TABLE holds %llu entries",
					k, nbg_graph_source_type_name(x->source_type), x->index,
					(unsigned long long)n);
		}
		/* A state patch writes a 32-bit address into its operation's states. */
		if (x->type == 0 && x->operation >= 0 && st) {
			const nbg_graph_operation *o = &g->operations[x->operation];
			if (o->state_id < st->entry_count &&
			    !nbg_graph_check(c, R_PATCH_DEST,
				   (uint64_t)x->dest_offset + 4 <= st->entries[o->state_id].size))
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_PATCH_DEST].id, x->record_offset + FOFF(F_PATCH_DEST_OFFSET),
					"patch %zu dest_offset %u lies outside the %llu-byte "
					"load-state entry %u of operation %lld", k, x->dest_offset,
					(unsigned long long)st->entries[o->state_id].size,
					o->state_id, (long long)x->operation);
		}
	}
	free(next);
	free(diff);
}

void nbg_graph_check_sh(gctx *c)
{
	nbg_graph *g = c->g;
	const nbg_graph_table *it = g->sum.instr_table >= 0 ? &g->tables[g->sum.instr_table] : NULL;
	const nbg_graph_records *pp = &g->sum.ppu_param_records;
	int no_table_reported = 0;

	for (size_t i = 0; i < g->sum.sh_count; i++) {
		const nbg_graph_sh_operation *s = &g->sh_operations[i];
		if (!nbg_graph_check(c, R_SH_INSTR, it && s->instr_index < it->entry_count)) {
			if (it)
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_SH_INSTR].id, s->record_offset,
					"SH record %zu instr_index %u; %s holds %zu entries", i,
					s->instr_index, it->name, it->entry_count);
			else if (!no_table_reported++)
				nbg_graph_finding_add(c, nbg_graph_rel_defs[R_SH_INSTR].id, s->record_offset,
					"SH records carry instr_index but the file has no "
					"PPU_INSTR_TABLE%s", c->m->family == 1 ? " or LCDT" : "");
		}
		if (s->has_ppu_param_index && pp->present && pp->decoded &&
		    !nbg_graph_check(c, R_SH_PPU_PARAM, s->ppu_param_index < pp->count))
			nbg_graph_finding_add(c, nbg_graph_rel_defs[R_SH_PPU_PARAM].id, s->record_offset + FOFF(F_SH_PPU_PARAM_INDEX),
				"SH record %zu ppu_param_index %u; PPU_PARAM holds %zu records", i,
				s->ppu_param_index, pp->count);
	}
}

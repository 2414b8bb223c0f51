/*
 * memory.c - nbg_mem_analyze(): the video and system memory a runtime needs
 * for a model, the sizes of every operation and layer, and whether inputs and
 * outputs can share the memory pool.  The rules are in memory_rules.c and
 * doc/memory.md; this file applies them to the decoded graph.
 *
 * Nothing here can fail on file contents: every index a record holds is
 * checked against the table it names (a missing entry counts 0 bytes), patch
 * ranges are clamped to the PATCH records, and sums saturate.  Work is linear
 * in the number of records: per-operation counts over patch ranges come from
 * prefix sums, never from walking each range.
 */
#include <stdlib.h>

#include "analysis/memory/memory_internal.h"
#include "common/internal.h"
#include "nbg/memory.h"

struct nbg_mem_report {
	nbg_mem_layout layout;
	nbg_mem_value v[NBG_MEM__COUNT];
	int io_incomplete;
	size_t op_count;
	nbg_mem_operation *ops;
	size_t layer_count;
	nbg_mem_layer *layers;
	size_t *rank;
	nbg_mem_layer outside;
	nbg_mem_sharing sharing;
	size_t conflict_count;
	nbg_mem_conflict *conflicts;
	size_t buffer_count;
	nbg_mem_share_buffer *buffers;
};

/* Prefix sums over the PATCH records: pre[k] = count (or bytes) in [0, k).
 * cinput: INPUT patches of type COMMAND. */
typedef struct prefix {
	size_t *input, *cinput, *output, *pool, *generic;
	uint64_t *generic_bytes;
	size_t *next_input, *next_output, *next_pool, *next_generic; /* first at or after k */
} prefix;

typedef struct mctx {
	const nbg_model *m;
	const nbg_graph *g;
	nbg_mem_report *r;
	int state, instr, coef; /* enum nbg_graph_table_id, -1: none */
	uint64_t *dyn;       /* dynamic-buffer entry sizes (DYNAIO_TABLE, or the LCDT) */
	size_t dyn_count;
	uint32_t nn_bytes, tp_bytes;
	prefix p;
	int oom;
} mctx;

/* ------------------------------------------------------------ arithmetic */

static uint64_t sadd(uint64_t a, uint64_t b)
{
	uint64_t s;
	return add_overflow_u64(a, b, &s) ? UINT64_MAX : s;
}

static uint64_t smul(uint64_t a, uint64_t b)
{
	uint64_t s;
	return mul_overflow_u64(a, b, &s) ? UINT64_MAX : s;
}

static uint64_t ssub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	uint64_t s = sadd(x, a - 1);
	return s == UINT64_MAX ? UINT64_MAX : s / a * a;
}

uint64_t nbg_mem_aligned_buffer(uint64_t bytes)
{
	return align_up(bytes, NBG_MEM_BUFFER_ALIGN);
}

static void *cnew(mctx *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		c->oom = 1;
	return p;
}

/* ------------------------------------------------------------- sources */

static uint64_t sec_size(const nbg_model *m, uint32_t type)
{
	const nbg_section *s = nbg_model_section(m, type);
	return s ? s->size : 0;
}

static size_t entry_count(const nbg_graph *g, int t)
{
	const nbg_graph_table *x = t >= 0 ? nbg_graph_table_at(g, (size_t)t) : NULL;
	return x && x->decoded ? x->entry_count : 0;
}

/* Size of entry i of table t; 0 when the table or the entry is missing. */
static uint64_t entry_size(const nbg_graph *g, int t, uint64_t i)
{
	if (i >= entry_count(g, t))
		return 0;
	return nbg_graph_table_entry_at(g, (size_t)t, (size_t)i)->size;
}

/* The operation's patch range clamped to the PATCH records. */
static void op_range(const nbg_graph *g, const nbg_graph_operation *o, size_t *a, size_t *b)
{
	size_t n = nbg_graph_summary_of(g)->patch_count;
	uint64_t end = (uint64_t)o->patch_index + o->patch_count;
	*a = o->patch_index < n ? o->patch_index : n;
	*b = end < n ? (size_t)end : n;
}

static int is_generic(const mctx *c, const nbg_graph_patch *p)
{
	return p->source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC && p->index >= 0 &&
	       (uint64_t)p->index < entry_count(c->g, c->coef);
}

static void pick_sources(mctx *c)
{
	const nbg_model *m = c->m;
	const nbg_graph *g = c->g;

	c->r->layout = m->family == 1 && !sec_size(m, NBG_SEC_COEF_DATA) &&
				       !sec_size(m, NBG_SEC_LOADSTATE)
			       ? NBG_MEM_LAYOUT_LCD
			       : NBG_MEM_LAYOUT_SECTIONS;
	c->state = nbg_graph_summary_of(g)->state_table;
	c->instr = nbg_graph_summary_of(g)->instr_table;
	c->coef = nbg_graph_table_at(g, NBG_GRAPH_TABLE_COEF_DATA)->decoded ? NBG_GRAPH_TABLE_COEF_DATA
		: nbg_graph_table_at(g, NBG_GRAPH_TABLE_LCD)->decoded	    ? NBG_GRAPH_TABLE_LCD
									    : -1;
	if (m->family == 1) {
		c->nn_bytes = m->v1.nn_command_bytes;
		c->tp_bytes = m->v1.tp_command_bytes;
	} else {
		c->nn_bytes = m->network_info.nn_command_bytes;
		c->tp_bytes = m->network_info.tp_command_bytes;
	}
}

/* Dynamic-buffer entries: DYNAIO_TABLE pairs (sections layout) or the LCDT. */
static void dynamic_entries(mctx *c)
{
	const nbg_section *t = nbg_model_section(c->m, NBG_SEC_DYNAIO_TABLE);

	if (c->r->layout == NBG_MEM_LAYOUT_LCD) {
		c->dyn_count = entry_count(c->g, NBG_GRAPH_TABLE_LCD);
		if (!(c->dyn = cnew(c, c->dyn_count, sizeof(uint64_t))))
			return;
		for (size_t i = 0; i < c->dyn_count; i++)
			c->dyn[i] = entry_size(c->g, NBG_GRAPH_TABLE_LCD, i);
		return;
	}
	c->dyn_count = t ? (size_t)(t->size / 8) : 0;
	if (!(c->dyn = cnew(c, c->dyn_count, sizeof(uint64_t))))
		return;
	for (size_t i = 0; i < c->dyn_count; i++)
		c->dyn[i] = nbg_fid_u32(c->m->data + t->offset + 8 * (uint64_t)i, F_DYN_SIZE);
}

/* ------------------------------------------------------------- prefixes */

static size_t *next_of(mctx *c, const size_t *pre, size_t n)
{
	size_t *nx = cnew(c, n + 1, sizeof(size_t));
	if (!nx)
		return NULL;
	nx[n] = n;
	for (size_t k = n; k-- > 0;)
		nx[k] = pre[k + 1] != pre[k] ? k : nx[k + 1];
	return nx;
}

static void build_prefix(mctx *c)
{
	const nbg_graph *g = c->g;
	size_t n = nbg_graph_summary_of(g)->patch_count;
	prefix *p = &c->p;

	p->input = cnew(c, n + 1, sizeof(size_t));
	p->cinput = cnew(c, n + 1, sizeof(size_t));
	p->output = cnew(c, n + 1, sizeof(size_t));
	p->pool = cnew(c, n + 1, sizeof(size_t));
	p->generic = cnew(c, n + 1, sizeof(size_t));
	p->generic_bytes = cnew(c, n + 1, sizeof(uint64_t));
	if (c->oom)
		return;
	for (size_t k = 0; k < n; k++) {
		const nbg_graph_patch *q = nbg_graph_patch_at(g, k);
		int gen = is_generic(c, q);
		p->input[k + 1] = p->input[k] + (q->source_type == NBG_GRAPH_SRC_INPUT);
		p->cinput[k + 1] = p->cinput[k] + (q->source_type == NBG_GRAPH_SRC_INPUT &&
						   q->type == NBG_MEM_PATCH_COMMAND);
		p->output[k + 1] = p->output[k] + (q->source_type == NBG_GRAPH_SRC_OUTPUT);
		p->pool[k + 1] = p->pool[k] + (q->source_type == NBG_GRAPH_SRC_MEMORY_POOL);
		p->generic[k + 1] = p->generic[k] + (size_t)gen;
		p->generic_bytes[k + 1] =
			sadd(p->generic_bytes[k], gen ? entry_size(g, c->coef, (uint64_t)q->index) : 0);
	}
	p->next_input = next_of(c, p->input, n);
	p->next_output = next_of(c, p->output, n);
	p->next_pool = next_of(c, p->pool, n);
	p->next_generic = next_of(c, p->generic, n);
}

static void free_prefix(prefix *p)
{
	free(p->input);
	free(p->cinput);
	free(p->output);
	free(p->pool);
	free(p->generic);
	free(p->generic_bytes);
	free(p->next_input);
	free(p->next_output);
	free(p->next_pool);
	free(p->next_generic);
}

/* -------------------------------------------------------- per operation */

static uint64_t instruction_bytes(const mctx *c, const nbg_graph_operation *o)
{
	const nbg_graph *g = c->g;

	switch (o->type) {
	case NBG_GRAPH_OP_NN:
	case NBG_GRAPH_OP_NT:
	case NBG_GRAPH_OP_NN_LUT:
	case NBG_GRAPH_OP_SP:
		return c->nn_bytes;
	case NBG_GRAPH_OP_TP:
		return c->tp_bytes;
	case NBG_GRAPH_OP_SH:
		if (o->index < nbg_graph_summary_of(g)->sh_count)
			return entry_size(g, c->instr,
					  nbg_graph_sh_operation_at(g, o->index)->instr_index);
		return 0;
	default:
		return 0;
	}
}

static void operation_sizes(mctx *c)
{
	const nbg_graph *g = c->g;
	nbg_mem_report *r = c->r;
	size_t ne = entry_count(g, c->coef);
	size_t *owner = cnew(c, ne, sizeof(size_t));

	r->op_count = nbg_graph_summary_of(g)->operation_count;
	r->ops = cnew(c, r->op_count, sizeof(nbg_mem_operation));
	if (c->oom) {
		free(owner);
		return;
	}
	/* The first operation naming each coefficient entry owns it. */
	for (size_t e = 0; e < ne; e++)
		owner[e] = SIZE_MAX;
	for (size_t k = 0; k < nbg_graph_summary_of(g)->patch_count; k++) {
		const nbg_graph_patch *q = nbg_graph_patch_at(g, k);
		if (is_generic(c, q) && q->operation >= 0 &&
		    (size_t)q->operation < owner[q->index])
			owner[q->index] = (size_t)q->operation;
	}
	for (size_t i = 0; i < r->op_count; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
		nbg_mem_operation *x = &r->ops[i];
		size_t a, b;

		x->record = i;
		x->type = o->type;
		x->layer_id = o->layer_id;
		x->command_known = o->state_id < entry_count(g, c->state);
		x->command_bytes = entry_size(g, c->state, o->state_id);
		x->instruction_bytes = instruction_bytes(c, o);
		x->instruction_bytes_vendor =
			o->type == NBG_GRAPH_OP_NT || o->type == NBG_GRAPH_OP_NN_LUT
				? 0 : x->instruction_bytes;
		op_range(g, o, &a, &b);
		x->coefficient_patches = (uint32_t)(c->p.generic[b] - c->p.generic[a]);
		x->coefficient_bytes = c->p.generic_bytes[b] - c->p.generic_bytes[a];
		if (x->coefficient_patches)
			x->coefficient_bytes_vendor = entry_size(
				g, c->coef, (uint64_t)nbg_graph_patch_at(g, c->p.next_generic[a])->index);
	}
	for (size_t e = 0; e < ne; e++)
		if (owner[e] < r->op_count)
			r->ops[owner[e]].coefficient_bytes_owned =
				sadd(r->ops[owner[e]].coefficient_bytes_owned, entry_size(g, c->coef, e));
	free(owner);
}

/* ------------------------------------------------------------ per layer */

/* Records ordered by key, largest first; ties: lower index first. */
typedef struct rank_key {
	uint64_t key;
	size_t index;
} rank_key;

static int cmp_rank(const void *x, const void *y)
{
	const rank_key *a = x, *b = y;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

static void layer_sizes(mctx *c)
{
	nbg_mem_report *r = c->r;

	r->layer_count = nbg_graph_summary_of(c->g)->layer_count;
	r->layers = cnew(c, r->layer_count, sizeof(nbg_mem_layer));
	r->rank = cnew(c, r->layer_count, sizeof(size_t));
	if (c->oom)
		return;
	r->outside.layer = (size_t)-1;
	for (size_t i = 0; i < r->layer_count; i++)
		r->layers[i].layer = i;
	for (size_t i = 0; i < r->op_count; i++) {
		const nbg_mem_operation *x = &r->ops[i];
		nbg_mem_layer *l = x->layer_id < r->layer_count ? &r->layers[x->layer_id]
								: &r->outside;
		l->operations++;
		l->coefficient_bytes = sadd(l->coefficient_bytes, x->coefficient_bytes_owned);
		l->command_bytes = sadd(l->command_bytes, x->command_bytes);
		l->instruction_bytes = sadd(l->instruction_bytes, x->instruction_bytes);
	}
	for (size_t i = 0; i <= r->layer_count; i++) {
		nbg_mem_layer *l = i < r->layer_count ? &r->layers[i] : &r->outside;
		l->total_bytes = sadd(sadd(l->coefficient_bytes, l->command_bytes),
				      l->instruction_bytes);
	}
	rank_key *k = cnew(c, r->layer_count, sizeof(rank_key));
	if (!k)
		return;
	for (size_t i = 0; i < r->layer_count; i++)
		k[i] = (rank_key){ r->layers[i].total_bytes, i };
	qsort(k, r->layer_count, sizeof(rank_key), cmp_rank);
	for (size_t i = 0; i < r->layer_count; i++)
		r->rank[i] = k[i].index;
	free(k);
}

/* -------------------------------------------------------------- figures */

static void set(nbg_mem_report *r, nbg_mem_figure f, uint64_t vendor, uint64_t exact,
		int from_file)
{
	r->v[f] = (nbg_mem_value){ vendor, exact, from_file };
}

static void io_figures(mctx *c)
{
	const nbg_model *m = c->m;
	uint64_t v[2] = { 0, 0 }, x[2] = { 0, 0 };

	for (int out = 0; out < 2; out++) {
		size_t n = out ? m->output_count : m->input_count;
		for (size_t i = 0; i < n; i++) {
			const nbg_io *io = out ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
			if (!io->byte_size_known) {
				c->r->io_incomplete = 1;
				continue;
			}
			x[out] = sadd(x[out], io->byte_size);
			v[out] = sadd(v[out], nbg_mem_aligned_buffer(io->byte_size));
		}
	}
	set(c->r, NBG_MEM_INPUTS, v[0], x[0], 1);
	set(c->r, NBG_MEM_OUTPUTS, v[1], x[1], 1);
}

/* Dynamic buffers named by patches inside operation ranges (a hardware-init
 * operation's are not counted), of the patch types memory_rules.c lists for
 * the layout (doc/memory.md, "Dynamic buffers"). */
static void dynamic_figures(mctx *c)
{
	const nbg_graph *g = c->g;
	uint8_t *mark = cnew(c, c->dyn_count, 1); /* bit 0 input, bit 1 output */
	uint64_t iv = 0, ix = 0, ov = 0, ox = 0;

	if (!mark)
		return;
	for (size_t k = 0; k < nbg_graph_summary_of(g)->patch_count; k++) {
		const nbg_graph_patch *q = nbg_graph_patch_at(g, k);
		if (q->operation < 0 || !nbg_mem_dynamic_patch_counted(c->r->layout, q->type) ||
		    q->index < 0 || (uint64_t)q->index >= c->dyn_count)
			continue;
		if (q->source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT)
			mark[q->index] |= 1;
		else if (q->source_type == NBG_GRAPH_SRC_MISC_DYNA_OUTPUT)
			mark[q->index] |= 2;
	}
	for (size_t e = 0; e < c->dyn_count; e++) {
		if (mark[e] & 1) {
			iv = sadd(iv, nbg_mem_aligned_buffer(c->dyn[e]));
			ix = sadd(ix, c->dyn[e]);
		} else if (c->r->layout == NBG_MEM_LAYOUT_SECTIONS || (mark[e] & 2)) {
			ox = sadd(ox, c->dyn[e]);
			ov = sadd(ov, nbg_mem_aligned_buffer(c->dyn[e]));
		}
	}
	if (c->r->layout == NBG_MEM_LAYOUT_SECTIONS)
		ov = ssub(nbg_mem_aligned_buffer(sec_size(c->m, NBG_SEC_DYNAIO)), iv);
	free(mark);
	set(c->r, NBG_MEM_DYNAMIC_INPUTS, iv, ix, 1);
	set(c->r, NBG_MEM_DYNAMIC_OUTPUTS, ov, ox, 1);
	set(c->r, NBG_MEM_DYNAMIC, sadd(iv, ov), sadd(ix, ox), 1);
}

/* Coefficients, command buffer and its parts, operation memory. */
static void operation_figures(mctx *c)
{
	const nbg_model *m = c->m;
	nbg_mem_report *r = c->r;
	uint64_t cmd = 0, sh64 = 0, ppu_v = 0, ppu_x = 0, owned = 0, states;
	uint64_t icd = sec_size(m, NBG_SEC_ICD), nn = sec_size(m, NBG_SEC_NN),
		 tp = sec_size(m, NBG_SEC_TP);
	nbg_mem_value cf, ls, ins, dyn = r->v[NBG_MEM_DYNAMIC];

	for (size_t i = 0; i < r->op_count; i++) {
		const nbg_mem_operation *x = &r->ops[i];
		cmd = sadd(cmd, x->command_bytes);
		owned = sadd(owned, x->coefficient_bytes_owned);
		if (x->type != NBG_GRAPH_OP_SH)
			continue;
		sh64 = sadd(sh64, nbg_mem_aligned_buffer(x->instruction_bytes));
		ppu_v = sadd(ppu_v, align_up(x->instruction_bytes, NBG_MEM_PPU_ALIGN));
		ppu_x = sadd(ppu_x, x->instruction_bytes);
	}
	if (r->layout == NBG_MEM_LAYOUT_LCD) {
		uint64_t lcd = sec_size(m, NBG_SEC_COEF_HEADER);
		cf.vendor = ssub(ssub(ssub(nbg_mem_aligned_buffer(lcd), nbg_mem_aligned_buffer(cmd)),
				      sh64), dyn.vendor);
		cf.exact = owned;
		states = cmd;
	} else {
		cf.exact = sec_size(m, NBG_SEC_COEF_DATA);
		cf.vendor = nbg_mem_aligned_buffer(cf.exact);
		states = sec_size(m, NBG_SEC_LOADSTATE);
	}
	ls.vendor = sadd(nbg_mem_aligned_buffer(states), nbg_mem_aligned_buffer(icd));
	ls.exact = sadd(states, icd);
	ins.vendor = sadd(nbg_mem_aligned_buffer(nn), nbg_mem_aligned_buffer(tp));
	ins.exact = sadd(nn, tp);
	set(r, NBG_MEM_COEFFICIENTS, cf.vendor, cf.exact, 1);
	set(r, NBG_MEM_LOAD_STATES, ls.vendor, ls.exact, 1);
	set(r, NBG_MEM_NN_TP_INSTRUCTIONS, ins.vendor, ins.exact, 1);
	set(r, NBG_MEM_PPU_INSTRUCTIONS, ppu_v, ppu_x, 1);
	set(r, NBG_MEM_COMMAND_BUFFER, sadd(sadd(ls.vendor, ins.vendor), ppu_v),
	    sadd(sadd(ls.exact, ins.exact), ppu_x), 1);
	set(r, NBG_MEM_OPERATIONS,
	    sadd(ssub(sadd(cf.vendor, r->v[NBG_MEM_COMMAND_BUFFER].vendor),
		      nbg_mem_aligned_buffer(icd)), dyn.vendor),
	    sadd(ssub(sadd(cf.exact, r->v[NBG_MEM_COMMAND_BUFFER].exact), icd), dyn.exact), 1);
}

static uint64_t io_patches(const nbg_graph *g)
{
	uint64_t n = 0;
	for (size_t k = 0; k < nbg_graph_summary_of(g)->patch_count; k++)
		n += nbg_graph_patch_at(g, k)->source_type == NBG_GRAPH_SRC_INPUT ||
		     nbg_graph_patch_at(g, k)->source_type == NBG_GRAPH_SRC_OUTPUT;
	return n;
}

static void total_figures(mctx *c)
{
	const nbg_model *m = c->m;
	const nbg_graph *g = c->g;
	nbg_mem_report *r = c->r;
	const nbg_mem_value *v = r->v;
	static const uint32_t tables[] = { NBG_SEC_COEF_HEADER_TABLE, NBG_SEC_ICDT,
					   NBG_SEC_COEF_DATA_TABLE, NBG_SEC_PPU_INSTR_TABLE,
					   NBG_SEC_DYNAIO_TABLE, NBG_SEC_LOADSTATE_TABLE,
					   NBG_SEC_SW, NBG_SEC_PPU_PARAM, NBG_SEC_LAYER_PARAM };
	uint64_t pool = m->memory.memory_pool_bytes, nio = m->input_count + m->output_count;
	uint64_t base[2], head, alloc;

	set(r, NBG_MEM_POOL, pool, pool, 1);
	set(r, NBG_MEM_HEAP_RESERVE, NBG_MEM_HEAP_RESERVE_BYTES, NBG_MEM_HEAP_RESERVE_BYTES, 0);
	/* [0] vendor-equivalent, [1] exact */
	base[0] = sadd(sadd(sadd(pool, v[NBG_MEM_INPUTS].vendor), v[NBG_MEM_OUTPUTS].vendor),
		       sadd(v[NBG_MEM_OPERATIONS].vendor, NBG_MEM_HEAP_RESERVE_BYTES));
	base[1] = sadd(sadd(sadd(pool, v[NBG_MEM_INPUTS].exact), v[NBG_MEM_OUTPUTS].exact),
		       sadd(v[NBG_MEM_OPERATIONS].exact, NBG_MEM_HEAP_RESERVE_BYTES));
	set(r, NBG_MEM_VIDEO_TOTAL, align_up(base[0], NBG_MEM_TOTAL_ALIGN), base[1], 0);
	set(r, NBG_MEM_FLASH_VIDEO_TOTAL,
	    align_up(ssub(base[0], v[NBG_MEM_COEFFICIENTS].vendor), NBG_MEM_TOTAL_ALIGN),
	    ssub(base[1], v[NBG_MEM_COEFFICIENTS].exact), 0);

	head = sadd(smul(NBG_MEM_LAYER_RECORD, nbg_graph_summary_of(g)->layer_count),
		    smul(NBG_MEM_OPERATION_RECORD, nbg_graph_summary_of(g)->operation_count));
	head = sadd(head, smul(NBG_MEM_PATCH_RECORD, nbg_graph_summary_of(g)->patch_count));
	head = sadd(head, smul(NBG_MEM_IO_RECORD, nio));
	head = sadd(head, smul(NBG_MEM_SH_RECORD, nbg_graph_summary_of(g)->sh_count));
	head = sadd(head, smul(NBG_MEM_HW_INIT_RECORD, nbg_graph_summary_of(g)->hw_init_count));
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		head = sadd(head, sec_size(m, tables[i]));
	alloc = sadd(NBG_MEM_ALLOC_BASE, smul(NBG_MEM_ALLOC_PER_IO, nio));
	alloc = sadd(alloc, smul(NBG_MEM_ALLOC_PER_IO_PATCH, io_patches(g)));
	alloc = sadd(alloc, sec_size(m, NBG_SEC_LOADSTATE));
	set(r, NBG_MEM_NBG_HEADER, head, head, 0);
	set(r, NBG_MEM_ALLOCATED, alloc, alloc, 0);
	set(r, NBG_MEM_SYSTEM_TOTAL, sadd(head, alloc), sadd(head, alloc), 0);
	set(r, NBG_MEM_FLASH_SYSTEM_TOTAL, alloc, alloc, 0);
}

/* ---------------------------------------------- inputs, outputs, the pool */

static void add_conflict(mctx *c, int output, const nbg_graph_operation *o, size_t op,
			 size_t patch, size_t pool_patch)
{
	nbg_mem_report *r = c->r;
	const nbg_graph_patch *q = nbg_graph_patch_at(c->g, patch);

	if (r->conflict_count >= NBG_MEM_MAX_CONFLICTS)
		return;
	r->conflicts[r->conflict_count++] = (nbg_mem_conflict){
		output, q->type == NBG_MEM_PATCH_COMMAND, (uint32_t)q->index, op, o->layer_id,
		patch, pool_patch
	};
}

/* Operations whose range names the pool and an input (or output): list the
 * pairs (up to the cap) and mark, through a difference array, every patch
 * record such an operation covers. */
static void find_conflicts(mctx *c, int64_t *cover)
{
	const nbg_graph *g = c->g;
	const prefix *p = &c->p;
	nbg_mem_sharing *s = &c->r->sharing;

	for (size_t i = 0; i < nbg_graph_summary_of(g)->operation_count; i++) {
		const nbg_graph_operation *o = nbg_graph_operation_at(g, i);
		size_t a, b;
		op_range(g, o, &a, &b);
		if (p->pool[b] == p->pool[a])
			continue;
		cover[a]++;
		cover[b]--;
		s->conflicts_total += p->cinput[b] - p->cinput[a];
		s->input_other_conflicts +=
			(p->input[b] - p->input[a]) - (p->cinput[b] - p->cinput[a]);
		s->output_conflicts += p->output[b] - p->output[a];
		for (int out = 0; out < 2; out++) {
			const size_t *nx = out ? p->next_output : p->next_input;
			for (size_t k = nx[a]; k < b && c->r->conflict_count < NBG_MEM_MAX_CONFLICTS;
			     k = nx[k + 1])
				add_conflict(c, out, o, i, k, p->next_pool[a]);
		}
	}
}

/* The first position at or after k not painted yet (nx: union-find with
 * path halving; nx[n] == n). */
static size_t unpainted(size_t *nx, size_t k)
{
	while (nx[k] != k) {
		nx[k] = nx[nx[k]];
		k = nx[k];
	}
	return k;
}

/* Gives every PATCH record the layer_id of the first operation, in the
 * order of keys (operations by layer_id, largest first; reversed when
 * `lowest`), whose range holds it: the highest layer holding it, or the
 * lowest.  Each record is painted once, so the work stays linear however the
 * ranges overlap. */
static void paint_layers(const nbg_graph *g, const rank_key *keys, int lowest, size_t *nx,
			 uint32_t *layer, uint8_t *covered)
{
	size_t n = nbg_graph_summary_of(g)->patch_count, m = nbg_graph_summary_of(g)->operation_count;

	for (size_t k = 0; k <= n; k++)
		nx[k] = k;
	for (size_t j = 0; j < m; j++) {
		const rank_key *e = &keys[lowest ? m - 1 - j : j];
		size_t a, b;
		op_range(g, nbg_graph_operation_at(g, e->index), &a, &b);
		for (size_t k = unpainted(nx, a); k < b; k = unpainted(nx, k)) {
			layer[k] = (uint32_t)e->key;
			covered[k] = 1;
			nx[k] = k + 1;
		}
	}
}

/* The readers of each input: the operations whose range holds an INPUT
 * patch naming it; their lowest and highest layer_id. */
static void input_readers(mctx *c)
{
	const nbg_graph *g = c->g;
	size_t n = nbg_graph_summary_of(g)->patch_count, m = nbg_graph_summary_of(g)->operation_count;
	rank_key *keys = cnew(c, m, sizeof(rank_key));
	size_t *nx = cnew(c, n + 1, sizeof(size_t));
	uint32_t *lo = cnew(c, n, sizeof(uint32_t)), *hi = cnew(c, n, sizeof(uint32_t));
	uint8_t *covered = cnew(c, n, 1);

	if (!c->oom) {
		for (size_t i = 0; i < m; i++)
			keys[i] = (rank_key){ nbg_graph_operation_at(g, i)->layer_id, i };
		qsort(keys, m, sizeof(rank_key), cmp_rank);
		paint_layers(g, keys, 1, nx, lo, covered);
		paint_layers(g, keys, 0, nx, hi, covered);
		for (size_t k = 0; k < n; k++) {
			const nbg_graph_patch *q = nbg_graph_patch_at(g, k);
			nbg_mem_share_buffer *b;
			if (!covered[k] || q->source_type != NBG_GRAPH_SRC_INPUT || q->index < 0 ||
			    (uint64_t)q->index >= c->m->input_count)
				continue;
			b = &c->r->buffers[q->index];
			if (!b->reads++ || lo[k] < b->layer_low)
				b->layer_low = lo[k];
			if (b->reads == 1 || hi[k] > b->layer_high)
				b->layer_high = hi[k];
		}
	}
	free(keys);
	free(nx);
	free(lo);
	free(hi);
	free(covered);
}

static void sharing(mctx *c)
{
	const nbg_model *m = c->m;
	const nbg_graph *g = c->g;
	nbg_mem_report *r = c->r;
	nbg_mem_sharing *s = &r->sharing;
	int64_t *cover = cnew(c, nbg_graph_summary_of(g)->patch_count + 1, sizeof(int64_t));
	int64_t depth = 0;

	r->buffer_count = m->input_count + m->output_count;
	r->buffers = cnew(c, r->buffer_count, sizeof(nbg_mem_share_buffer));
	r->conflicts = cnew(c, NBG_MEM_MAX_CONFLICTS, sizeof(nbg_mem_conflict));
	if (c->oom) {
		free(cover);
		return;
	}
	s->pool_bytes = m->memory.memory_pool_bytes;
	s->operations_checked = nbg_graph_summary_of(g)->operation_count;
	s->evidence = "C+I";
	find_conflicts(c, cover);
	for (size_t i = 0; i < r->buffer_count; i++) {
		nbg_mem_share_buffer *b = &r->buffers[i];
		const nbg_io *io = i < m->input_count ? nbg_model_input_at(m, i)
						      : nbg_model_output_at(m, i - m->input_count);
		b->output = i >= m->input_count;
		b->index = (uint32_t)(b->output ? i - m->input_count : i);
		b->bytes = io->byte_size_known ? io->byte_size : 0;
		b->aligned_bytes = nbg_mem_aligned_buffer(b->bytes);
	}
	input_readers(c);
	for (size_t k = 0; k < nbg_graph_summary_of(g)->patch_count; k++) {
		const nbg_graph_patch *q = nbg_graph_patch_at(g, k);
		int out = q->source_type == NBG_GRAPH_SRC_OUTPUT;
		size_t n = out ? m->output_count : m->input_count;
		depth += cover[k];
		if (q->operation >= 0) {
			s->input_patches += q->source_type == NBG_GRAPH_SRC_INPUT;
			s->output_patches += q->source_type == NBG_GRAPH_SRC_OUTPUT;
			s->pool_patches += q->source_type == NBG_GRAPH_SRC_MEMORY_POOL;
		}
		if (depth > 0 && (out || q->source_type == NBG_GRAPH_SRC_INPUT) && q->index >= 0 &&
		    (uint64_t)q->index < n)
			r->buffers[(out ? m->input_count : 0) + (size_t)q->index].conflicts++;
	}
	free(cover);
	s->inputs_clear = 1;
	for (size_t i = 0; i < r->buffer_count; i++) {
		nbg_mem_share_buffer *b = &r->buffers[i];
		b->clear = !b->output && b->reads && b->layer_low == b->layer_high &&
			   !b->conflicts;
		b->can_share = s->pool_bytes && !b->conflicts && (b->output || b->clear);
		if (b->can_share)
			b->allocation = b->aligned_bytes > s->pool_bytes ? b->aligned_bytes
									 : s->pool_bytes;
		if (!b->output && !b->clear)
			s->inputs_clear = 0;
		if (!b->output && b->can_share && b->allocation > s->allocation)
			s->allocation = b->allocation;
	}
	if (!s->pool_bytes)
		s->verdict = NBG_MEM_SHARE_POOL_EMPTY;
	else if (s->inputs_clear)
		s->verdict = NBG_MEM_SHARE_POSSIBLE;
	else if (s->conflicts_total)
		s->verdict = NBG_MEM_SHARE_CONFLICT;
	else
		s->verdict = NBG_MEM_SHARE_NOT_SUPPORTED;
	if (s->verdict != NBG_MEM_SHARE_POSSIBLE)
		s->allocation = 0;
}

/* ------------------------------------------------------------- the API */

nbg_code nbg_mem_analyze(const nbg_model *m, const nbg_graph *g, nbg_mem_report **out,
			 nbg_error *err)
{
	mctx c = { 0 };

	if (out)
		*out = NULL;
	if (!m || !g || !out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no model, graph or result pointer was given");
	c.m = m;
	c.g = g;
	c.r = cnew(&c, 1, sizeof(nbg_mem_report));
	if (c.r) {
		pick_sources(&c);
		dynamic_entries(&c);
		build_prefix(&c);
	}
	if (!c.oom)
		operation_sizes(&c);
	if (!c.oom)
		layer_sizes(&c);
	if (!c.oom) {
		io_figures(&c);
		dynamic_figures(&c);
	}
	if (!c.oom) {
		operation_figures(&c);
		total_figures(&c);
		sharing(&c);
	}
	free_prefix(&c.p);
	free(c.dyn);
	if (c.oom) {
		nbg_mem_free(c.r);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
				     "out of memory while analysing the model's memory");
	}
	*out = c.r;
	return NBG_OK;
}

void nbg_mem_free(nbg_mem_report *r)
{
	if (!r)
		return;
	free(r->ops);
	free(r->layers);
	free(r->rank);
	free(r->conflicts);
	free(r->buffers);
	free(r);
}

nbg_mem_layout nbg_mem_layout_of(const nbg_mem_report *r)
{
	return r ? r->layout : NBG_MEM_LAYOUT_SECTIONS;
}

nbg_mem_value nbg_mem_value_of(const nbg_mem_report *r, nbg_mem_figure f)
{
	nbg_mem_value zero = { 0, 0, 0 };
	return r && (unsigned)f < NBG_MEM__COUNT ? r->v[f] : zero;
}

int nbg_mem_io_incomplete(const nbg_mem_report *r)
{
	return r ? r->io_incomplete : 0;
}

size_t nbg_mem_operation_count(const nbg_mem_report *r)
{
	return r ? r->op_count : 0;
}

const nbg_mem_operation *nbg_mem_operation_at(const nbg_mem_report *r, size_t i)
{
	return r && i < r->op_count ? &r->ops[i] : NULL;
}

size_t nbg_mem_layer_count(const nbg_mem_report *r)
{
	return r ? r->layer_count : 0;
}

const nbg_mem_layer *nbg_mem_layer_at(const nbg_mem_report *r, size_t i)
{
	return r && i < r->layer_count ? &r->layers[i] : NULL;
}

const nbg_mem_layer *nbg_mem_layer_ranked(const nbg_mem_report *r, size_t k)
{
	return r && k < r->layer_count ? &r->layers[r->rank[k]] : NULL;
}

const nbg_mem_layer *nbg_mem_layer_outside(const nbg_mem_report *r)
{
	return r ? &r->outside : NULL;
}

const nbg_mem_sharing *nbg_mem_sharing_of(const nbg_mem_report *r)
{
	return r ? &r->sharing : NULL;
}

size_t nbg_mem_conflict_count(const nbg_mem_report *r)
{
	return r ? r->conflict_count : 0;
}

const nbg_mem_conflict *nbg_mem_conflict_at(const nbg_mem_report *r, size_t i)
{
	return r && i < r->conflict_count ? &r->conflicts[i] : NULL;
}

size_t nbg_mem_share_buffer_count(const nbg_mem_report *r)
{
	return r ? r->buffer_count : 0;
}

const nbg_mem_share_buffer *nbg_mem_share_buffer_at(const nbg_mem_report *r, size_t i)
{
	return r && i < r->buffer_count ? &r->buffers[i] : NULL;
}

/*
 * uniforms.c - an SH operation's shader uniforms and image descriptors
 * (uniforms.h).
 */
#include <string.h>

#include "analysis/graph/uniforms.h"

static uint32_t word_at(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Walks the LOAD_STATE stream of b[0..n) and keeps the uniform words. */
static enum nbg_sh_uniforms_status read_uniforms(const uint8_t *b, uint64_t n, nbg_sh_uniforms *u,
						 nbg_sh_uniforms_cut *cut)
{
	uint64_t words = n / 4, i = 0;

	while (i < words) {
		uint32_t w = word_at(b + 4 * i);
		if (w >> 27 != 1) {
			i += 2;
			continue;
		}
		uint32_t count = (w >> 16) & 0x3ff, reg = w & 0xffff;
		if (!count)
			count = 1024;
		if (i + 1 + count > words) {
			if (cut)
				*cut = (nbg_sh_uniforms_cut){ w, 4 * i, count, n };
			return NBG_SHU_TRUNCATED;
		}
		for (uint32_t k = 0; k < count; k++) {
			uint64_t addr = 4ull * ((uint64_t)reg + k);
			if (addr < NBG_SH_UNIFORM_BASE || addr >= NBG_SH_UNIFORM_BASE + 4 * NBG_SH_UNIFORMS)
				continue;
			size_t j = (size_t)(addr - NBG_SH_UNIFORM_BASE) / 4;
			u->value[j] = word_at(b + 4 * (i + 1 + k));
			u->at[j] = (uint32_t)(4 * (i + 1 + k));
			u->loaded[j]++;
		}
		i += 1 + count;
		i += i & 1;
	}
	return NBG_SHU_OK;
}

enum nbg_sh_uniforms_status nbg_sh_uniforms_load(const nbg_model *m, const nbg_graph *g, size_t operation,
						 nbg_sh_uniforms *u, nbg_sh_uniforms_cut *cut)
{
	const nbg_graph_summary *sum = nbg_graph_summary_of(g);
	const nbg_graph_operation *go = nbg_graph_operation_at(g, operation);
	const nbg_graph_table *t = sum->state_table < 0 ? NULL : nbg_graph_table_at(g, (size_t)sum->state_table);
	const nbg_graph_table_entry *e = t && go ? nbg_graph_table_entry_at(g, (size_t)sum->state_table, go->state_id)
						 : NULL;

	memset(u, 0, sizeof(*u));
	if (!t || !e || !e->in_bounds || !t->data_present || e->size == 0 || e->size > NBG_SH_MAX_STATE_BYTES ||
	    t->data_offset > m->file_size || e->offset > m->file_size - t->data_offset ||
	    e->size > m->file_size - t->data_offset - e->offset)
		return NBG_SHU_NO_BUFFER;
	return read_uniforms(m->data + t->data_offset + e->offset, e->size, u, cut);
}

int nbg_sh_uniform_at(const nbg_sh_uniforms *u, uint32_t at)
{
	for (int j = 0; j < NBG_SH_UNIFORMS; j++)
		if (u->loaded[j] && u->at[j] == at)
			return j;
	return -1;
}

int nbg_sh_image_at(const nbg_sh_uniforms *u, int j, nbg_sh_image *im)
{
	if (j < 0 || j + 5 >= NBG_SH_UNIFORMS)
		return 0;
	for (int k = j; k <= j + 5; k++)
		if (u->loaded[k] != 1)
			return 0;
	uint32_t format = u->value[j + 3];
	if (format >> 20 != 0x444)
		return 0;
	im->row = u->value[j + 1];
	im->width = u->value[j + 2] & 0xffff;
	im->height = u->value[j + 2] >> 16;
	im->element = 1u << (format & 3);
	im->slice = u->value[j + 4];
	im->depth = u->value[j + 5];
	return 1;
}

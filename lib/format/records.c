/*
 * records.c - the record sections the graph layer decodes, and their
 * layouts' sizes (records.h).
 */
#include "format/records.h"

static const uint32_t layer[] = { 72, 76, 0 }, operation[] = { 24, 28, 32, 0 },
		      patch[] = { 24, 28, 40, 0 }, sh[] = { 4, 8, 0 }, sw[] = { 4, 68, 0 },
		      hw_init[] = { 12, 0 }, ppu_param[] = { 48, 0 }, table[] = { 8, 0 };

static int is_table(uint32_t type)
{
	switch (type) {
	case NBG_SEC_COEF_HEADER_TABLE:
	case NBG_SEC_ICDT:
	case NBG_SEC_COEF_DATA_TABLE:
	case NBG_SEC_PPU_INSTR_TABLE:
	case NBG_SEC_LOADSTATE_TABLE:
		return 1;
	default:
		return 0;
	}
}

const uint32_t *nbg_record_layouts(uint32_t type)
{
	switch (type) {
	case NBG_SEC_LAYER: return layer;
	case NBG_SEC_OPERATIONS: return operation;
	case NBG_SEC_PATCH: return patch;
	case NBG_SEC_SH: return sh;
	case NBG_SEC_SW: return sw;
	case NBG_SEC_HWINITOPERATIONS: return hw_init;
	case NBG_SEC_PPU_PARAM: return ppu_param;
	default: return is_table(type) ? table : NULL;
	}
}

/* The record size the graph layer reads section s with (graph_decode.c's
 * setup_records and decode_tables). */
static uint32_t record_size(const nbg_model *m, const nbg_section *s)
{
	if (m->family == 2)
		return s->entry_size;
	if (is_table(s->type))
		return 8;
	switch (s->type) {
	case NBG_SEC_HWINITOPERATIONS: return 12;
	case NBG_SEC_PPU_PARAM: return 48;
	default: return s->entry_size; /* the stride the v1 parser checked */
	}
}

void nbg_class_record_sections(nbg_model *m)
{
	for (size_t i = 0; i < m->section_count; i++) {
		nbg_section *s = &m->sections[i];
		const uint32_t *k = nbg_record_layouts(s->type);
		uint32_t size = record_size(m, s);
		if (!k || !s->size || !size || s->size % size || s->cls != NBG_CLASS_OPAQUE)
			continue;
		for (; *k; k++)
			if (*k == size)
				s->cls = NBG_CLASS_DECODED;
	}
}

/*
 * model.c - a parsed model: freeing it and reaching its records.
 */
#include <stdlib.h>

#include "common/internal.h"

void nbg_model_free(nbg_model *m)
{
	if (!m)
		return;
	free(m->sections);
	free(m->inputs);
	free(m->outputs);
	free(m->checksum_records);
	free(m->dynaio.entries);
	free(m->notes);
	free(m);
}

const nbg_section *nbg_model_section(const nbg_model *m, uint32_t type)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->section_count; i++)
		if (m->sections[i].type == type)
			return &m->sections[i];
	return NULL;
}

const nbg_section *nbg_model_section_at(const nbg_model *m, size_t i)
{
	return m && i < m->section_count ? &m->sections[i] : NULL;
}

const nbg_io *nbg_model_input_at(const nbg_model *m, size_t i)
{
	return m && i < m->input_count ? &m->inputs[i] : NULL;
}

const nbg_io *nbg_model_output_at(const nbg_model *m, size_t i)
{
	return m && i < m->output_count ? &m->outputs[i] : NULL;
}

const nbg_note *nbg_model_note_at(const nbg_model *m, size_t i)
{
	return m && i < m->note_count ? &m->notes[i] : NULL;
}

const nbg_checksum_record *nbg_model_checksum_record_at(const nbg_model *m, size_t i)
{
	return m && i < m->checksum_record_count ? &m->checksum_records[i] : NULL;
}

const nbg_dynaio_entry *nbg_model_dynaio_entry_at(const nbg_model *m, size_t i)
{
	return m && i < m->dynaio.entry_count ? &m->dynaio.entries[i] : NULL;
}

nbg_integrity nbg_model_integrity(const nbg_model *m)
{
	return m ? m->integrity : NBG_INTEGRITY_FAILED; /* nothing proved */
}

/* The scalars and records of an opaque model; 0 or NULL for a NULL model. */
#define NBG_MODEL_VALUE(type, name, expr)                                      \
	type nbg_model_##name(const nbg_model *m)                             \
	{                                                                      \
		return m ? (expr) : (type)0;                                   \
	}
NBG_MODEL_VALUE(uint32_t, family, m->family)
NBG_MODEL_VALUE(uint32_t, magic, m->magic)
NBG_MODEL_VALUE(uint32_t, version, m->version)
NBG_MODEL_VALUE(uint32_t, target, m->target)
NBG_MODEL_VALUE(uint64_t, file_size, m->file_size)
NBG_MODEL_VALUE(const uint8_t *, data, m->data)
NBG_MODEL_VALUE(const uint8_t *, file_sha256, m->file_sha256)
NBG_MODEL_VALUE(unsigned, sha256_skipped, m->sha256_skipped)
NBG_MODEL_VALUE(size_t, section_count, m->section_count)
NBG_MODEL_VALUE(size_t, input_count, m->input_count)
NBG_MODEL_VALUE(size_t, output_count, m->output_count)
NBG_MODEL_VALUE(size_t, note_count, m->note_count)
NBG_MODEL_VALUE(size_t, checksum_record_count, m->checksum_record_count)
NBG_MODEL_VALUE(const nbg_v2_header *, v2_header, &m->header)
NBG_MODEL_VALUE(const nbg_network_info *, network_info, &m->network_info)
NBG_MODEL_VALUE(const nbg_memory *, memory, &m->memory)
NBG_MODEL_VALUE(const nbg_file_checksum *, file_checksum,
		m->has_file_checksum ? &m->file_checksum : NULL)
NBG_MODEL_VALUE(const nbg_dynaio *, dynaio, &m->dynaio)
NBG_MODEL_VALUE(const nbg_tail *, tail, &m->tail)
NBG_MODEL_VALUE(const nbg_v1_info *, v1, &m->v1)
#undef NBG_MODEL_VALUE

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

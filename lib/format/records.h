/*
 * records.h - the record sections the graph layer decodes (layers,
 * operations, patches, SH / SW / hardware-init / PPU-parameter records, the
 * (offset, size) tables) and the record sizes of their public layouts.
 * Private to libnbg.
 */
#ifndef NBG_FORMAT_RECORDS_H
#define NBG_FORMAT_RECORDS_H

#include <stdint.h>

#include "common/internal.h"

/* The record sizes of the public layouts of section `type`, 0-terminated;
 * NULL when the graph layer decodes no records of that type.  Every byte of
 * a record of one of these sizes lies in a field the field map names. */
NBG_INTERNAL const uint32_t *nbg_record_layouts(uint32_t type);

/* Marks NBG_CLASS_DECODED every non-empty record section of m whose record
 * size (v2 sd_entsize; v1 the version's stride, 8 for a table) is one of its
 * layouts and whose size is a whole number of records: the graph layer
 * decodes each of its fields (nbg_graph_decode). */
NBG_INTERNAL void nbg_class_record_sections(nbg_model *m);

#endif

/*
 * v2.c - NBG v2 (version 0x00020000): header, sub-header, section
 * directory, I/O records, network info, memory requirements, section
 * checksums, the header file checksum and the dynamic-I/O table.
 *
 * Order of work: sizes before fields (header, sub-header, directory extents
 * are checked against the file before any field inside them is used), then
 * structure rules, then record decoding, then integrity (CRCs) last, so a
 * file that breaks one rule reports that rule.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/internal.h"
#include "format/checksum.h"
#include "format/records.h"
#include "format/regions.h"

/* Section types whose payloads are integrity-checked by CHECKSUM records. */
static bool crc_required(uint32_t type)
{
	return type == NBG_SEC_NN || type == NBG_SEC_TP || type == NBG_SEC_PPU_INSTR ||
	       type == NBG_SEC_LOADSTATE || type == NBG_SEC_COEF_DATA;
}

/* Types present in the 138-file reference corpus of the field map
 * (doc/reference-corpus.md); others are notes, not failures. */
static bool seen_in_seed_corpus(uint32_t type)
{
	static const uint8_t seen[] = { 1, 2, 3, 4, 7, 8, 9, 10, 19, 20, 21, 23, 24, 25, 26, 27,
					35, 37, 38, 40 };
	for (size_t i = 0; i < sizeof(seen); i++)
		if (seen[i] == type)
			return true;
	return false;
}

static uint64_t compose(const uint8_t *base, enum nbg_fid lo, enum nbg_fid hi)
{
	return (uint64_t)nbg_fid_u32(base, lo) | ((uint64_t)nbg_fid_u32(base, hi) << 32);
}

static nbg_code parse_header(nbg_ctx *c)
{
	nbg_model *m = c->m;
	const uint8_t *h = c->data;

	if (c->size < NBG_V2_HEADER_SIZE)
		return nbg_fail(c, NBG_E_TRUNCATED, c->size, "header",
				"the file is %llu bytes; the v2 header needs %u",
				(unsigned long long)c->size, NBG_V2_HEADER_SIZE);
	for (int i = 0; i < 12; i++)
		m->header.words[i] = le32(h + 4 * i);
	m->header.crc_sum = nbg_fid_u32(h, F_HDR_CRC_SUM);
	m->header.declared_file_size = compose(h, F_HDR_SIZE_LOW, F_HDR_SIZE_HIGH);
	m->header.sub_header_offset = nbg_fid_u32(h, F_HDR_SUB_OFFSET);
	m->header.sub_header_size = nbg_fid_u32(h, F_HDR_SUB_SIZE);
	m->header.sub_header_count = nbg_fid_u32(h, F_HDR_SUB_COUNT);

	if (m->header.declared_file_size != c->size)
		return nbg_fail(c, NBG_E_FILE_SIZE_MISMATCH, nbg_fid_desc(F_HDR_SIZE_LOW)->offset,
				"declared_file_size",
				"the header declares %llu bytes but the file has %llu: it was "
				"truncated or extended after it was written",
				(unsigned long long)m->header.declared_file_size,
				(unsigned long long)c->size);
	if (m->header.sub_header_count != 1)
		return nbg_fail(c, NBG_E_SUB_HEADER_COUNT, nbg_fid_desc(F_HDR_SUB_COUNT)->offset,
				"sub_header_count",
				"the header declares %u sub-headers; nbgkit reads files with "
				"exactly one graph", m->header.sub_header_count);
	if (m->header.sub_header_size != NBG_V2_SUB_HEADER_SIZE)
		return nbg_fail(c, NBG_E_SUB_HEADER_SIZE, nbg_fid_desc(F_HDR_SUB_SIZE)->offset,
				"sub_header_size",
				"the header declares a %u-byte sub-header; the format's is 12",
				m->header.sub_header_size);
	if (m->header.sub_header_offset < NBG_V2_HEADER_SIZE)
		return nbg_fail(c, NBG_E_DIRECTORY_OVERLAP, nbg_fid_desc(F_HDR_SUB_OFFSET)->offset,
				"sub_header_offset",
				"the sub-header offset %u lies inside the 48-byte header",
				m->header.sub_header_offset);
	if (!range_ok(m->header.sub_header_offset, NBG_V2_SUB_HEADER_SIZE, c->size))
		return nbg_fail(c, NBG_E_TRUNCATED, m->header.sub_header_offset, "sub_header_offset",
				"the sub-header at %u needs 12 bytes; the file has %llu",
				m->header.sub_header_offset, (unsigned long long)c->size);

	if (nbg_fid_u32(h, F_HDR_CLASS) != 0)
		nbg_note_add(c, "header-class-nonzero", 0x24, "class bit is 1 (0 in every corpus)");
	if (nbg_fid_u32(h, F_HDR_CLASS_RESERVED) || nbg_fid_u32(h, F_HDR_RESERVED2) ||
	    nbg_fid_u32(h, F_HDR_RESERVED3))
		nbg_note_add(c, "header-reserved-nonzero", 0x24,
			     "header reserved words are not zero");
	if (m->header.sub_header_offset != NBG_V2_HEADER_SIZE)
		nbg_note_add(c, "sub-header-offset", nbg_fid_desc(F_HDR_SUB_OFFSET)->offset,
			     "sub-header at %u, not directly after the header (48)",
			     m->header.sub_header_offset);
	return NBG_OK;
}

/* A directory record's type: inside the public enum, and not seen before. */
static nbg_code check_type(nbg_ctx *c, uint32_t i, uint64_t ro, uint32_t type, uint64_t *seen)
{
	if (type >= NBG_SECTION_TYPE_COUNT)
		return nbg_fail(c, NBG_E_UNKNOWN_SECTION_TYPE, ro, "type",
				"directory entry %u names section type %u; v2 0x00020000 defines "
				"types 0-40 only", i, type);
	if (*seen & ((uint64_t)1 << type))
		return nbg_fail(c, NBG_E_DUPLICATE_SECTION, ro, "type",
				"directory entry %u repeats section type %u (%s); a file holds "
				"at most one of each", i, type, nbg_section_type_name(type));
	*seen |= (uint64_t)1 << type;
	return NBG_OK;
}

static nbg_code parse_directory(nbg_ctx *c)
{
	nbg_model *m = c->m;
	nbg_code rc;
	const uint8_t *sh = c->data + m->header.sub_header_offset;
	uint64_t dir_bytes, dir_end;

	m->header.section_headers_offset = nbg_fid_u32(sh, F_SUB_SH_OFFSET);
	m->header.section_header_size = nbg_fid_u32(sh, F_SUB_SH_SIZE);
	m->header.section_header_count = nbg_fid_u32(sh, F_SUB_SH_COUNT);

	if (m->header.section_header_size != NBG_V2_SECTION_HEADER_SIZE)
		return nbg_fail(c, NBG_E_SECTION_HEADER_SIZE,
				m->header.sub_header_offset + nbg_fid_desc(F_SUB_SH_SIZE)->offset,
				"section_header_size",
				"the sub-header declares %u-byte directory records; the format's "
				"are 44", m->header.section_header_size);
	dir_bytes = (uint64_t)m->header.section_header_count * NBG_V2_SECTION_HEADER_SIZE;
	if (!range_ok(m->header.section_headers_offset, dir_bytes, c->size))
		return nbg_fail(c, NBG_E_TRUNCATED, m->header.section_headers_offset,
				"section_headers_offset",
				"the directory of %u records at %u needs %llu bytes; the file "
				"has %llu",
				m->header.section_header_count, m->header.section_headers_offset,
				(unsigned long long)dir_bytes, (unsigned long long)c->size);
	dir_end = m->header.section_headers_offset + dir_bytes;
	if (dir_bytes &&
	    (m->header.section_headers_offset < NBG_V2_HEADER_SIZE ||
	     (m->header.section_headers_offset < m->header.sub_header_offset + NBG_V2_SUB_HEADER_SIZE &&
	      dir_end > m->header.sub_header_offset)))
		return nbg_fail(c, NBG_E_DIRECTORY_OVERLAP,
				m->header.sub_header_offset + nbg_fid_desc(F_SUB_SH_OFFSET)->offset,
				"section_headers_offset",
				"the directory [%u, %llu) overlaps the header or the sub-header",
				m->header.section_headers_offset, (unsigned long long)dir_end);

	/* More records than there are types: one repeats or is unknown.  Find it
	 * before allocating anything sized by the file's count. */
	if (m->header.section_header_count > NBG_SECTION_TYPE_COUNT) {
		uint64_t seen = 0;
		for (uint32_t i = 0; i < m->header.section_header_count; i++) {
			uint64_t ro = m->header.section_headers_offset +
				      (uint64_t)i * NBG_V2_SECTION_HEADER_SIZE;
			rc = check_type(c, i, ro, nbg_fid_u32(c->data + ro, F_SEC_TYPE), &seen);
			if (rc != NBG_OK)
				return rc;
		}
	}
	m->section_count = m->header.section_header_count;
	m->sections = calloc(m->section_count ? m->section_count : 1, sizeof(nbg_section));
	if (!m->sections)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");

	uint64_t seen_types = 0;
	for (uint32_t i = 0; i < m->header.section_header_count; i++) {
		uint64_t ro = m->header.section_headers_offset + (uint64_t)i * NBG_V2_SECTION_HEADER_SIZE;
		const uint8_t *r = c->data + ro;
		nbg_section *s = &m->sections[i];

		s->index = i;
		s->record_offset = ro;
		for (int w = 0; w < 11; w++)
			s->raw[w] = le32(r + 4 * w);
		s->type = nbg_fid_u32(r, F_SEC_TYPE);
		s->offset = compose(r, F_SEC_OFFSET_LOW, F_SEC_OFFSET_HIGH);
		s->size = compose(r, F_SEC_SIZE_LOW, F_SEC_SIZE_HIGH);
		s->load_address = compose(r, F_SEC_ADDR_LOW, F_SEC_ADDR_HIGH);
		s->alignment = nbg_fid_u32(r, F_SEC_ALIGN);
		s->entry_size = nbg_fid_u32(r, F_SEC_ENTSIZE);
		s->reserved[0] = nbg_fid_u32(r, F_SEC_RESERVED1);
		s->reserved[1] = nbg_fid_u32(r, F_SEC_RESERVED2);
		s->cls = NBG_CLASS_OPAQUE;

		if ((rc = check_type(c, i, ro, s->type, &seen_types)) != NBG_OK)
			return rc;
		if (!range_ok(s->offset, s->size, c->size))
			return nbg_fail(c, NBG_E_SECTION_OUT_OF_BOUNDS, ro + 4, "offset",
					"section %s [offset %llu, size %llu] reaches past the "
					"end of the %llu-byte file",
					nbg_section_type_name(s->type),
					(unsigned long long)s->offset, (unsigned long long)s->size,
					(unsigned long long)c->size);
		if (s->alignment && s->offset % s->alignment)
			return nbg_fail(c, NBG_E_SECTION_MISALIGNED, ro + 0x1c, "alignment",
					"section %s starts at %llu, not a multiple of its "
					"alignment %u", nbg_section_type_name(s->type),
					(unsigned long long)s->offset, s->alignment);

		if (s->load_address)
			nbg_note_add(c, "load-address-nonzero", ro + 0x14,
				     "section %s has load address 0x%llx (zero in every corpus)",
				     nbg_section_type_name(s->type),
				     (unsigned long long)s->load_address);
		if (s->alignment != 0 && s->alignment != 64 && s->alignment != 256)
			nbg_note_add(c, "alignment-unusual", ro + 0x1c,
				     "section %s alignment %u (0, 64 or 256 in every corpus)",
				     nbg_section_type_name(s->type), s->alignment);
		if (s->reserved[0] || s->reserved[1])
			nbg_note_add(c, "section-reserved-nonzero", ro + 0x24,
				     "section %s reserved words are not zero",
				     nbg_section_type_name(s->type));
		if (!seen_in_seed_corpus(s->type))
			nbg_note_add(c, "section-type-unseen", ro,
				     "section type %u (%s) never seen in the reference corpus",
				     s->type, nbg_section_type_name(s->type));
	}
	return NBG_OK;
}

static int cmp_by_offset(const void *a, const void *b)
{
	const nbg_section *x = *(const nbg_section *const *)a;
	const nbg_section *y = *(const nbg_section *const *)b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Sections must not overlap each other or the header, sub-header, directory. */
static nbg_code check_overlaps(nbg_ctx *c, const nbg_section **sorted)
{
	nbg_model *m = c->m;
	nbg_region fixed[NBG_FIXED_REGIONS_MAX];
	size_t nf = nbg_fixed_regions(m, fixed);
	const nbg_section *prev = NULL;

	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = sorted[i];
		if (s->size == 0)
			continue;
		for (size_t f = 0; f < nf; f++)
			if (s->offset < fixed[f].offset + fixed[f].size &&
			    s->offset + s->size > fixed[f].offset)
				return nbg_fail(c, NBG_E_SECTION_OVERLAP, s->record_offset + 4,
						"offset",
						"section %s [%llu, %llu) overlaps the %s [%llu, %llu)",
						nbg_section_type_name(s->type),
						(unsigned long long)s->offset,
						(unsigned long long)(s->offset + s->size),
						fixed[f].owner, (unsigned long long)fixed[f].offset,
						(unsigned long long)(fixed[f].offset + fixed[f].size));
		if (prev && s->offset < prev->offset + prev->size)
			return nbg_fail(c, NBG_E_SECTION_OVERLAP, s->record_offset + 4, "offset",
					"section %s [%llu, %llu) overlaps section %s [%llu, %llu)",
					nbg_section_type_name(s->type),
					(unsigned long long)s->offset,
					(unsigned long long)(s->offset + s->size),
					nbg_section_type_name(prev->type),
					(unsigned long long)prev->offset,
					(unsigned long long)(prev->offset + prev->size));
		prev = s;
	}
	return NBG_OK;
}

static nbg_code parse_io(nbg_ctx *c, const nbg_section *s, nbg_io **out, size_t *count)
{
	const char *what = s->type == NBG_SEC_INPUT ? "input" : "output";
	size_t n;

	if (s->size % NBG_V2_IO_RECORD_SIZE)
		return nbg_fail(c, NBG_E_IO_RECORD_SIZE, s->record_offset + 0x0c, "size",
				"the %s section is %llu bytes, not a multiple of the 112-byte "
				"record", nbg_section_type_name(s->type),
				(unsigned long long)s->size);
	if (s->entry_size != NBG_V2_IO_RECORD_SIZE)
		nbg_note_add(c, "entry-size-unexpected", s->record_offset + 0x20,
			     "%s section entry size %u (112 expected)",
			     nbg_section_type_name(s->type), s->entry_size);
	n = (size_t)(s->size / NBG_V2_IO_RECORD_SIZE);
	*out = calloc(n ? n : 1, sizeof(nbg_io));
	if (!*out)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	*count = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t ro = s->offset + i * NBG_V2_IO_RECORD_SIZE;
		const uint8_t *r = c->data + ro;
		nbg_io *io = &(*out)[i];
		const nbg_field *fd = nbg_fid_desc(F_IO_DIMS);
		const nbg_field *fq = nbg_fid_desc(F_IO_QUANT_DATA);
		const nbg_field *fn = nbg_fid_desc(F_IO_NAME);

		io->index = (uint32_t)i;
		io->offset = ro;
		io->record_size = NBG_V2_IO_RECORD_SIZE;
		io->max_dims = 6;
		io->dim_count = nbg_fid_u32(r, F_IO_DIM_COUNT);
		if (io->dim_count < 1 || io->dim_count > 6)
			return nbg_fail(c, NBG_E_IO_DIMENSION_COUNT, ro, "dimension_count",
					"%s %zu declares %u dimensions; records hold 1 to 6",
					what, i, io->dim_count);
		for (uint32_t d = 0; d < 6; d++)
			io->dims[d] = le32(r + fd->offset + 4 * d);
		for (uint32_t d = 0; d < io->dim_count; d++)
			if (io->dims[d] == 0)
				return nbg_fail(c, NBG_E_IO_DIMENSION_ZERO,
						ro + fd->offset + 4 * d, "dimensions",
						"%s %zu dimension %u (file order) is zero", what,
						i, d);
		io->data_format = nbg_fid_u32(r, F_IO_FORMAT);
		io->data_type = nbg_fid_u32(r, F_IO_TYPE);
		io->quant_format = nbg_fid_u32(r, F_IO_QUANT_FORMAT);
		io->quant_raw[0] = le32(r + fq->offset);
		io->quant_raw[1] = le32(r + fq->offset + 4);
		io->quant_raw_count = 2;
		io->has_name = 1;
		memcpy(io->name, r + fn->offset, 64);
		io->name[64] = '\0';
		nbg_io_derive(io);
		if (!nbg_data_format_name(io->data_format))
			nbg_note_add(c, "io-format-unknown", ro + 0x1c,
				     "%s %zu data format %u is not public; size left unknown",
				     what, i, io->data_format);
		if (!nbg_quant_format_name(io->quant_format))
			nbg_note_add(c, "io-quant-unknown", ro + 0x24,
				     "%s %zu quantization format %u is not public; raw words "
				     "kept", what, i, io->quant_format);
		nbg_note_scale(c, io, ro + fq->offset, what, i);
	}
	return NBG_OK;
}

static nbg_code parse_network_info(nbg_ctx *c, const nbg_section *s)
{
	nbg_network_info *ni = &c->m->network_info;
	const uint8_t *p = c->data + s->offset;
	const nbg_field *fv = nbg_fid_desc(F_NI_VSI_RESERVED);

	if (s->size != NBG_V2_NETWORK_INFO_SIZE)
		return nbg_fail(c, NBG_E_NETWORK_INFO_SIZE, s->record_offset + 0x0c, "size",
				"NETWORK_INFO is %llu bytes; the structure is 220",
				(unsigned long long)s->size);
	ni->present = 1;
	ni->offset = s->offset;
	memcpy(ni->name, p, 64);
	ni->name[64] = '\0';
	ni->input_count = nbg_fid_u32(p, F_NI_INPUT_COUNT);
	ni->output_count = nbg_fid_u32(p, F_NI_OUTPUT_COUNT);
	ni->layer_count = nbg_fid_u32(p, F_NI_LAYER_COUNT);
	ni->absolute_operation_count = nbg_fid_u32(p, F_NI_ABS_OP_COUNT);
	ni->operation_count = nbg_fid_u32(p, F_NI_OP_COUNT);
	ni->core_count = nbg_fid_u32(p, F_NI_CORE_COUNT);
	ni->address_width = nbg_fid_u32(p, F_NI_ADDRESS_WIDTH);
	ni->attribute = nbg_fid_u32(p, F_NI_ATTRIBUTE);
	ni->change_ppu_param = nbg_fid_u32(p, F_NI_ATTR_PPU);
	ni->nn_command_size_code = nbg_fid_u32(p, F_NI_ATTR_NN_CMD);
	ni->tp_command_size_code = nbg_fid_u32(p, F_NI_ATTR_TP_CMD);
	ni->dma_support_code = nbg_fid_u32(p, F_NI_ATTR_DMA);
	ni->attribute_reserved = nbg_fid_u32(p, F_NI_ATTR_RESERVED);
	ni->nn_command_bytes = ni->nn_command_size_code == 0 ? 128
			     : ni->nn_command_size_code == 1 ? 192 : 0;
	ni->tp_command_bytes = ni->tp_command_size_code == 0 ? 128
			     : ni->tp_command_size_code == 1 ? 192 : 0;
	for (uint32_t w = 0; w < fv->width / 4; w++)
		ni->vsi_reserved_nonzero += le32(p + fv->offset + 4 * w) != 0;
	nbg_region_sha256(c->m, p + fv->offset, fv->width, ni->vsi_reserved_sha256);
	return NBG_OK;
}

static nbg_code parse_memory(nbg_ctx *c, const nbg_section *s)
{
	nbg_memory *mem = &c->m->memory;
	const uint8_t *p = c->data + s->offset;
	uint64_t want = s->type == NBG_SEC_MEMORY_POOL ? 8 : 4;

	if (s->size != want)
		return nbg_fail(c, NBG_E_MEMORY_SECTION_SIZE, s->record_offset + 0x0c, "size",
				"%s is %llu bytes; it holds a %llu-byte size",
				nbg_section_type_name(s->type), (unsigned long long)s->size,
				(unsigned long long)want);
	if (s->type == NBG_SEC_MEMORY_POOL) {
		mem->has_memory_pool = 1;
		mem->memory_pool_bytes = compose(p, F_MEM_POOL_LOW, F_MEM_POOL_HIGH);
	} else if (s->type == NBG_SEC_VIP_SRAM) {
		mem->has_vip_sram = 1;
		mem->vip_sram_bytes = nbg_fid_u32(p, F_VIP_SRAM_SIZE);
	} else {
		mem->has_axi_sram = 1;
		mem->axi_sram_bytes = nbg_fid_u32(p, F_AXI_SRAM_SIZE);
	}
	return NBG_OK;
}

static nbg_code check_counts(nbg_ctx *c)
{
	nbg_model *m = c->m;
	const nbg_network_info *ni = &m->network_info;
	const nbg_section *ops = nbg_model_section(m, NBG_SEC_OPERATIONS);

	if (!ni->present) {
		nbg_note_add(c, "network-info-absent", 0,
			     "no NETWORK_INFO section: input/output counts not cross-checked");
		return NBG_OK;
	}
	if (ni->input_count != m->input_count)
		return nbg_fail(c, NBG_E_METADATA_COUNT_MISMATCH,
				ni->offset + nbg_fid_desc(F_NI_INPUT_COUNT)->offset, "input_count",
				"NETWORK_INFO declares %u inputs but the INPUT section holds %zu "
				"records", ni->input_count, m->input_count);
	if (ni->output_count != m->output_count)
		return nbg_fail(c, NBG_E_METADATA_COUNT_MISMATCH,
				ni->offset + nbg_fid_desc(F_NI_OUTPUT_COUNT)->offset,
				"output_count",
				"NETWORK_INFO declares %u outputs but the OUTPUT section holds "
				"%zu records", ni->output_count, m->output_count);
	if (ops && ops->entry_size) {
		uint64_t entries = ops->size / ops->entry_size;
		if ((uint64_t)ni->operation_count == entries + 3)
			nbg_note_add(c, "operation-count-plus-3-holds", ni->offset + 0x50,
				     "operation_count %u = OPERATIONS entries %llu + 3 (the "
				     "three implicit run operations)", ni->operation_count,
				     (unsigned long long)entries);
		else
			nbg_note_add(c, "operation-count-plus-3-differs", ni->offset + 0x50,
				     "operation_count %u != OPERATIONS entries %llu + 3",
				     ni->operation_count, (unsigned long long)entries);
	}
	if (ni->vsi_reserved_nonzero)
		nbg_note_add(c, "vsi-reserved-nonzero", ni->offset + 0x60,
			     "vsi_reserved has %u non-zero words (fingerprinted, not decoded)",
			     ni->vsi_reserved_nonzero);
	return NBG_OK;
}

static nbg_code parse_checksums(nbg_ctx *c, const nbg_section *cs)
{
	nbg_model *m = c->m;
	uint64_t seen = 0;

	if (cs) {
		if (cs->size % 8)
			return nbg_fail(c, NBG_E_CHECKSUM_RECORD_SIZE, cs->record_offset + 0x0c,
					"size",
					"the CHECKSUM section is %llu bytes, not a multiple of "
					"its 8-byte record", (unsigned long long)cs->size);
		m->checksum_record_count = (size_t)(cs->size / 8);
		m->checksum_records = calloc(m->checksum_record_count ? m->checksum_record_count
								      : 1,
					     sizeof(nbg_checksum_record));
		if (!m->checksum_records)
			return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
		for (size_t i = 0; i < m->checksum_record_count; i++) {
			uint64_t ro = cs->offset + i * 8;
			const uint8_t *r = c->data + ro;
			nbg_checksum_record *rec = &m->checksum_records[i];
			nbg_section *target = NULL;

			rec->offset = ro;
			rec->section_type = nbg_fid_u32(r, F_CKS_TYPE);
			rec->stored = nbg_fid_u32(r, F_CKS_VALUE);
			if (rec->section_type < NBG_SECTION_TYPE_COUNT)
				target = (nbg_section *)nbg_model_section(m, rec->section_type);
			if (!target)
				return nbg_fail(c, NBG_E_SECTION_CHECKSUM_TARGET_MISSING, ro,
						"section_type",
						"checksum record %zu names section type %u, which "
						"is not in the directory", i, rec->section_type);
			if (seen & ((uint64_t)1 << rec->section_type))
				return nbg_fail(c, NBG_E_SECTION_CHECKSUM_DUPLICATE, ro,
						"section_type",
						"checksum record %zu repeats section type %u (%s)",
						i, rec->section_type,
						nbg_section_type_name(rec->section_type));
			seen |= (uint64_t)1 << rec->section_type;
			rec->computed = target->crc32;
			target->has_checksum_record = 1;
			target->stored_checksum = rec->stored;
			if (target->cls == NBG_CLASS_OPAQUE)
				target->cls = NBG_CLASS_CRC_VERIFIED;
			if (rec->stored != rec->computed && !(c->flags & NBG_PARSE_NO_CRC_CHECK)) {
				nbg_error e;
				nbg_code rc = nbg_checksum_failed(c, nbg_section_crc_error(&e, rec),
								  &e);
				if (rc)
					return rc;
			}
		}
	}
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		if (crc_required(s->type) && !(seen & ((uint64_t)1 << s->type)))
			return nbg_fail(c, NBG_E_SECTION_CHECKSUM_MISSING,
					cs ? cs->record_offset : s->record_offset, "section_type",
					"section %s has no checksum record%s",
					nbg_section_type_name(s->type),
					cs ? "" : " (the file has no CHECKSUM section)");
	}
	return NBG_OK;
}

/* The file checksum (doc/format-v2.md), computed by format/checksum.c:
 * section CRCs combined in directory order, each CHECKSUM value word taken
 * as zero; gaps, header and directory excluded. */
static nbg_code check_file_checksum(nbg_ctx *c, const nbg_section **sorted)
{
	nbg_model *m = c->m;
	nbg_file_checksum *fc = &m->file_checksum;
	uint32_t crc = 0;

	if (!nbg_v2_file_checksum(c->data, c->size, m, 1, &crc, fc))
		return nbg_fail(c, NBG_E_SECTION_OUT_OF_BOUNDS, 0, "file_checksum",
				"a section reaches past the end of the file");
	for (size_t i = 1; i < m->section_count; i++) {
		uint64_t prev_end = sorted[i - 1]->offset + sorted[i - 1]->size;
		if (sorted[i]->offset > prev_end)
			fc->excluded_alignment_gap_bytes += sorted[i]->offset - prev_end;
	}
	fc->recorded = m->header.crc_sum;
	fc->computed = crc;
	m->has_file_checksum = 1;
	if (fc->recorded != fc->computed && !(c->flags & NBG_PARSE_NO_CRC_CHECK)) {
		nbg_error e;
		return nbg_checksum_failed(c, nbg_file_crc_error(&e, fc,
								 nbg_fid_desc(F_HDR_CRC_SUM)->offset),
					   &e);
	}
	return NBG_OK;
}

static nbg_code parse_dynaio(nbg_ctx *c)
{
	nbg_model *m = c->m;
	const nbg_section *reg = nbg_model_section(m, NBG_SEC_DYNAIO);
	const nbg_section *tab = nbg_model_section(m, NBG_SEC_DYNAIO_TABLE);
	nbg_dynaio *d = &m->dynaio;
	uint64_t pos = 0;

	if (!reg && !tab)
		return NBG_OK;
	if (!reg || !tab) {
		const nbg_section *s = reg ? reg : tab;
		return nbg_fail(c, NBG_E_DYNAIO_UNPAIRED, s->record_offset, "type",
				"the file has %s without %s", nbg_section_type_name(s->type),
				reg ? "DYNAIO_TABLE" : "DYNAIO");
	}
	if (reg->size % 64)
		return nbg_fail(c, NBG_E_DYNAIO_REGION_SIZE, reg->record_offset + 0x0c, "size",
				"the DYNAIO region is %llu bytes, not a multiple of 64",
				(unsigned long long)reg->size);
	if (tab->size % 8)
		return nbg_fail(c, NBG_E_DYNAIO_TABLE_SIZE, tab->record_offset + 0x0c, "size",
				"DYNAIO_TABLE is %llu bytes, not a multiple of its 8-byte record",
				(unsigned long long)tab->size);
	d->present = 1;
	d->region_offset = reg->offset;
	d->region_size = reg->size;
	d->table_offset = tab->offset;
	d->table_size = tab->size;
	d->entry_count = (size_t)(tab->size / 8);
	d->entries = calloc(d->entry_count ? d->entry_count : 1, sizeof(nbg_dynaio_entry));
	if (!d->entries)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");

	const uint8_t *region = c->data + reg->offset;
	for (size_t i = 0; i <= d->entry_count; i++) {
		/* i == entry_count: the trailing padding after the last entry. */
		uint64_t gap_end = reg->size;
		if (i < d->entry_count) {
			uint64_t ro = tab->offset + i * 8;
			nbg_dynaio_entry *e = &d->entries[i];
			e->record_offset = ro;
			e->offset = nbg_fid_u32(c->data + ro, F_DYN_OFFSET);
			e->size = nbg_fid_u32(c->data + ro, F_DYN_SIZE);
			if (e->size == 0)
				return nbg_fail(c, NBG_E_DYNAIO_ENTRY_EMPTY, ro + 4, "size",
						"dynamic-I/O entry %zu has size zero", i);
			if (e->offset % 64)
				return nbg_fail(c, NBG_E_DYNAIO_ENTRY_MISALIGNED, ro, "offset",
						"dynamic-I/O entry %zu offset %u is not a "
						"multiple of 64", i, e->offset);
			if (!range_ok(e->offset, e->size, reg->size))
				return nbg_fail(c, NBG_E_DYNAIO_ENTRY_OUT_OF_BOUNDS, ro, "offset",
						"dynamic-I/O entry %zu [%u, +%u) reaches past the "
						"%llu-byte region", i, e->offset, e->size,
						(unsigned long long)reg->size);
			if (e->offset < pos)
				return nbg_fail(c, NBG_E_DYNAIO_ENTRY_ORDER, ro, "offset",
						"dynamic-I/O entry %zu starts at %u, before the "
						"previous entry ends (%llu)", i, e->offset,
						(unsigned long long)pos);
			gap_end = e->offset;
		}
		for (uint64_t k = pos; k < gap_end; k++)
			if (region[k])
				return nbg_fail(c, NBG_E_DYNAIO_NONZERO_PADDING,
						reg->offset + k, "dynaio",
						"DYNAIO byte at region offset %llu is 0x%02x; "
						"bytes no entry maps must be zero",
						(unsigned long long)k, region[k]);
		d->padding_bytes += gap_end - pos;
		if (i < d->entry_count) {
			d->mapped_bytes += d->entries[i].size;
			pos = (uint64_t)d->entries[i].offset + d->entries[i].size;
		}
	}
	return NBG_OK;
}

nbg_code nbg_parse_v2(nbg_ctx *c)
{
	nbg_model *m = c->m;
	const nbg_section **sorted = NULL;
	nbg_code rc;

	if ((rc = parse_header(c)) || (rc = parse_directory(c)))
		return rc;

	sorted = malloc((m->section_count ? m->section_count : 1) * sizeof(*sorted));
	if (!sorted)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	for (size_t i = 0; i < m->section_count; i++)
		sorted[i] = &m->sections[i];
	qsort(sorted, m->section_count, sizeof(*sorted), cmp_by_offset);
	if ((rc = check_overlaps(c, sorted)) || (rc = nbg_structure_checked(c)))
		goto out;

	/* Every byte of section data is CRC'd (and hashed) exactly once here. */
	nbg_fingerprint_sections(c);

	for (size_t i = 0; i < m->section_count && !rc; i++) {
		nbg_section *s = &m->sections[i];
		switch (s->type) {
		case NBG_SEC_INPUT:
			s->cls = NBG_CLASS_DECODED;
			rc = parse_io(c, s, &m->inputs, &m->input_count);
			break;
		case NBG_SEC_OUTPUT:
			s->cls = NBG_CLASS_DECODED;
			rc = parse_io(c, s, &m->outputs, &m->output_count);
			break;
		case NBG_SEC_NETWORK_INFO:
			s->cls = NBG_CLASS_DECODED;
			rc = parse_network_info(c, s);
			break;
		case NBG_SEC_MEMORY_POOL:
		case NBG_SEC_VIP_SRAM:
		case NBG_SEC_AXI_SRAM:
			s->cls = NBG_CLASS_DECODED;
			rc = parse_memory(c, s);
			break;
		case NBG_SEC_CHECKSUM:
		case NBG_SEC_DYNAIO_TABLE:
			s->cls = NBG_CLASS_DECODED;
			break;
		case NBG_SEC_DYNAIO:
			s->cls = NBG_CLASS_TABLE_BOUNDED;
			break;
		default:
			break;
		}
	}
	if (rc || (rc = check_counts(c)) || (rc = parse_dynaio(c)) ||
	    (rc = parse_checksums(c, nbg_model_section(m, NBG_SEC_CHECKSUM))) ||
	    (rc = check_file_checksum(c, sorted)))
		goto out;

	nbg_class_record_sections(m);
	if (m->section_count != 18 && m->section_count != 20)
		nbg_note_add(c, "section-count-unseen", m->header.sub_header_offset + 8,
			     "%zu sections (18 or 20 in the 138-file reference corpus of the field map)", m->section_count);
out:
	free(sorted);
	return rc;
}

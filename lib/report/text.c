/*
 * report_text.c - the human report of `nbg inspect`, in the spirit of
 * `readelf -h` and the vendor's nbinfo: aligned "Key: value" lines, hex for
 * identifiers and checksums, one line per input/output, a section table.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/commands.h"
#include "nbg/memory.h"
#include "nbg/report.h"
#include "nbg/targets.h"
#include "report/text_internal.h"


static void io_line(FILE *out, const char *what, const nbg_io *io)
{
	const char *fmt = nbg_data_format_name(io->data_format);

	fprintf(out, "  %s %u: dims [", what, io->index);
	for (uint32_t d = 0; d < io->dim_count; d++)
		fprintf(out, "%s%u", d ? "," : "", nbg_io_dim_outer(io, d));
	fprintf(out, "] (file order ");
	for (uint32_t d = 0; d < io->dim_count; d++)
		fprintf(out, "%s%u", d ? "," : "", io->dims[d]);
	fputc(')', out);
	if (fmt)
		fprintf(out, " %s", fmt);
	else
		fprintf(out, " format(%u)", io->data_format);
	switch (io->quant_format) {
	case NBG_QUANT_NONE:
		break;
	case NBG_QUANT_DFP:
		fprintf(out, " dfp fl=%d", io->fixed_point_pos);
		break;
	case NBG_QUANT_AFFINE:
		fprintf(out, " affine scale=%g zp=%d", (double)io->scale, io->zero_point);
		break;
	default:
		fprintf(out, " quant(%u) raw=0x%08x,0x%08x", io->quant_format, io->quant_raw[0],
			io->quant_raw[1]);
	}
	if (io->data_type != 0)
		fprintf(out, " type=%s", nbg_data_type_name(io->data_type)
						 ? nbg_data_type_name(io->data_type) : "?");
	if (io->byte_size_known)
		fprintf(out, " bytes=%" PRIu64 " aligned=%" PRIu64, io->byte_size,
			nbg_mem_aligned_buffer(io->byte_size));
	else
		fprintf(out, " bytes=?");
	if (io->has_name) {
		fprintf(out, " name=");
		nbg_text_put(out, io->name);
	}
	fputc('\n', out);
}

static void v2_header(FILE *out, const nbg_model *m)
{
	const nbg_network_info *ni = &m->network_info;
	const nbg_memory *mem = &m->memory;
	const nbg_file_checksum *fc = &m->file_checksum;

	KV(out, "File checksum", "0x%08x (computed 0x%08x, %s)", fc->recorded, fc->computed,
	   fc->recorded == fc->computed ? "matches" : "MISMATCH");
	KV(out, "Checksum coverage", "%" PRIu64 " section bytes, %" PRIu64
	   " gap bytes excluded, %u value words zeroed",
	   fc->covered_section_bytes, fc->excluded_alignment_gap_bytes,
	   fc->normalized_checksum_value_words);
	KV(out, "Sub-header", "offset %u, size %u, count %u", m->header.sub_header_offset,
	   m->header.sub_header_size, m->header.sub_header_count);
	KV(out, "Section directory", "offset %u, %u records of %u bytes",
	   m->header.section_headers_offset, m->header.section_header_count, m->header.section_header_size);
	if (ni->present) {
		fprintf(out, "  %-26s ", "Network name:");
		nbg_text_put(out, ni->name);
		fputc('\n', out);
		KV(out, "Inputs / outputs", "%u / %u", ni->input_count, ni->output_count);
		KV(out, "Layers", "%u", ni->layer_count);
		const nbg_section *ops = nbg_model_section(m, NBG_SEC_OPERATIONS);
		uint64_t recs = ops && ops->entry_size ? ops->size / ops->entry_size : 0;
		/* the records are the operations the runtime and the vendor's
		 * inspector count; NETWORK_INFO's figure adds three the runtime runs */
		if (ops && ops->entry_size && recs + 3 == ni->operation_count)
			KV(out, "Operations", "%" PRIu64 " (OPERATIONS records; NETWORK_INFO says %u, "
			   "adding the 3 implicit run operations; absolute %u)", recs,
			   ni->operation_count, ni->absolute_operation_count);
		else
			KV(out, "Operations", "%u (absolute %u)", ni->operation_count,
			   ni->absolute_operation_count);
		KV(out, "Cores", "%u", ni->core_count);
		KV(out, "Address width", "%u bits", ni->address_width);
		KV(out, "Attribute", "0x%08x (NN command %u B, TP command %u B, DMA %u, PPU %u)",
		   ni->attribute, ni->nn_command_bytes, ni->tp_command_bytes,
		   ni->dma_support_code, ni->change_ppu_param);
		KV(out, "vsi_reserved", "%u non-zero words", ni->vsi_reserved_nonzero);
	} else {
		KV(out, "Network info", "(no NETWORK_INFO section)");
	}
	if (mem->has_memory_pool)
		KV(out, "Memory pool", "%" PRIu64 " bytes", mem->memory_pool_bytes);
	else
		KV(out, "Memory pool", "(none)");
	if (mem->has_vip_sram)
		KV(out, "VIP SRAM", "%u bytes", mem->vip_sram_bytes);
	else
		KV(out, "VIP SRAM", "(none)");
	if (mem->has_axi_sram)
		KV(out, "AXI SRAM", "%u bytes", mem->axi_sram_bytes);
	else
		KV(out, "AXI SRAM", "(none)");
	if (m->dynaio.present)
		KV(out, "Dynamic I/O", "%zu entries, region %" PRIu64 " bytes at %" PRIu64
		   ", mapped %" PRIu64 ", padding %" PRIu64,
		   m->dynaio.entry_count, m->dynaio.region_size, m->dynaio.region_offset,
		   m->dynaio.mapped_bytes, m->dynaio.padding_bytes);
	else
		KV(out, "Dynamic I/O", "(none)");
}

/* What proved the bytes; for a model parsed without the checksum checks
 * whose checksums failed, the failure, and that nothing below is verified. */
static void integrity_line(FILE *out, const nbg_model *m)
{
	char why[256];
	nbg_error err;

	nbg_integrity_describe(m, why, sizeof(why));
	if (m->integrity == NBG_INTEGRITY_FAILED && nbg_integrity_failure(m, &err) != NBG_OK)
		KV(out, "Integrity", "FAILED, %s at offset %" PRIu64 ": %s; this report is "
		   "unverified", nbg_code_name(err.code), err.offset, why);
	else
		KV(out, "Integrity", "%s%s", m->integrity == NBG_INTEGRITY_VERIFIED
						     ? "verified: " : "", why);
}

/* The report of m, its graph and network parts from d (NULL: they say
 * nothing was decoded). */
static void text_report(FILE *out, const nbg_model *m, nbg_decoded *d, const char *path)
{
	static const char *const cover[] = { "none", "owned by no other structure",
					     "partly covered by other structures",
					     "section-covered-view" };
	char hex[65], *shown = nbg_path_escape(path);

	fprintf(out, "NBG file: %s\n", shown ? shown : "(out of memory)");
	free(shown);
	integrity_line(out, m);
	KV(out, "Magic", "VPMN");
	KV(out, "Version", "0x%08x (v%u)", m->version, m->family);
	char target[256];
	KV(out, "Target (product)", "%s", nbg_target_describe(m->target, target, sizeof(target)));
	KV(out, "File size", "%" PRIu64 " bytes", m->file_size);
	nbg_hex32(m->file_sha256, hex);
	KV(out, "SHA-256", "%s", hex);
	if (m->family == 2)
		v2_header(out, m);
	else
		nbg_text_v1(out, m);
	if (m->tail.cover != NBG_TAIL_NONE) {
		nbg_hex32(m->tail.sha256, hex);
		KV(out, "Connection tail", "offset %" PRIu64 ", 512 bytes, %s", m->tail.offset,
		   cover[m->tail.cover]);
		KV(out, "Tail SHA-256", "%s", hex);
	}

	fprintf(out, "\nInputs (%zu):\n", m->input_count);
	for (size_t i = 0; i < m->input_count; i++)
		io_line(out, "input", &m->inputs[i]);
	fprintf(out, "Outputs (%zu):\n", m->output_count);
	for (size_t i = 0; i < m->output_count; i++)
		io_line(out, "output", &m->outputs[i]);

	fprintf(out, "\nSections (%zu):\n", m->section_count);
	fprintf(out, "  [Nr] %-24s %10s %10s %5s %6s %-13s %-10s %s\n", "Type", "Offset", "Size",
		"Align", "EntSz", "Class", "CRC-32", "SHA-256");
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = &m->sections[i];
		char tname[40];
		const char *n = nbg_section_name(m->family, s->type);
		snprintf(tname, sizeof(tname), "%s(%u)", n ? n : "?", s->type);
		nbg_hex32(s->sha256, hex);
		fprintf(out, "  [%2zu] %-24s %10" PRIu64 " %10" PRIu64 " %5u %6u %-13s 0x%08x %.16s%s\n",
			i, tname, s->offset, s->size, s->alignment, s->entry_size,
			nbg_section_class_name(s->cls), s->crc32, hex,
			!s->has_checksum_record ? ""
			: s->stored_checksum == s->crc32 ? "  crc ok" : "  crc MISMATCH");
	}
	if (m->note_count) {
		fprintf(out, "\nNotes (%zu, not failures):\n", m->note_count);
		for (size_t i = 0; i < m->note_count; i++)
			fprintf(out, "  %-30s @%-8" PRIu64 " %s\n", m->notes[i].id,
				m->notes[i].offset, m->notes[i].text);
	}
	nbg_text_graph_summary_decoded(out, d);
	nbg_text_commands_summary_decoded(out, d);
}

void nbg_text_report(FILE *out, const nbg_model *m, const char *path)
{
	nbg_decoded *d = NULL;

	if (!out || !m)
		return;
	nbg_decoded_new(m, &d, NULL); /* out of memory: the parts say so */
	text_report(out, m, d, path);
	nbg_decoded_free(d);
}

void nbg_text_report_decoded(FILE *out, nbg_decoded *d, const char *path)
{
	if (out && nbg_decoded_model(d))
		text_report(out, nbg_decoded_model(d), d, path);
}

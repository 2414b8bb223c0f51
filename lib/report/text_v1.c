/*
 * report_text_v1.c - the v1 header lines of the human report (`nbg inspect`):
 * the prefix, feature database, memory block, entry table, strides, the
 * nbg_crc_sum finding and the bytes no entry references.  The I/O lines and
 * the section table are printed by report_text.c for both families.
 */
#include <inttypes.h>

#include "report/text_internal.h"
#include "nbg/report.h"


static void put_stride(FILE *out, const char *name, uint32_t stride, int first)
{
	fprintf(out, "%s%s ", first ? "" : ", ", name);
	if (stride)
		fprintf(out, "%u", stride);
	else
		fputc('?', out);
}

void nbg_text_v1(FILE *out, const nbg_model *m)
{
	if (!out || !m)
		return;
	const nbg_v1_info *v1 = &m->v1;
	const nbg_memory *mem = &m->memory;
	char hex[65];

	fprintf(out, "  %-26s ", "Network name:");
	nbg_text_put(out, v1->network_name);
	fputc('\n', out);
	KV(out, "Inputs / outputs", "%u / %u", v1->input_count, v1->output_count);
	KV(out, "Layers", "%u", v1->layer_count);
	KV(out, "Operations", "%u", v1->operation_count);
	if (v1->has_feature_db) {
		KV(out, "Feature database", "offset %" PRIu64 ", 256 bytes, word 0 0x%08x",
		   v1->feature_db_offset, v1->feature_word0);
		if (v1->nn_command_bytes)
			KV(out, "NN command size", "%u B (code %u)", v1->nn_command_bytes,
			   v1->nn_command_size_code);
		else
			KV(out, "NN command size", "code %u (not public)", v1->nn_command_size_code);
		if (v1->tp_command_bytes)
			KV(out, "TP command size", "%u B (code %u)", v1->tp_command_bytes,
			   v1->tp_command_size_code);
		else
			KV(out, "TP command size", "code %u (not public)", v1->tp_command_size_code);
		KV(out, "Change PPU param", "%u", v1->change_ppu_param);
		KV(out, "Cores", "%u%s (NN %u, TP %u), AXI bus width index %u", v1->core_count,
		   v1->core_count ? "" : " as stored (the vendor's inspector prints 1)",
		   v1->nn_core_count, v1->tp_core_count, v1->axi_bus_width_index);
		nbg_hex32(v1->feature_db_sha256, hex);
		KV(out, "Feature DB SHA-256", "%s", hex);
	} else {
		KV(out, "Feature database", "(none before version 0x10003)");
	}
	KV(out, "Memory pool", "%" PRIu64 " bytes (alignment %u, base 0x%08x)",
	   mem->memory_pool_bytes, mem->memory_pool_alignment, mem->memory_pool_base);
	KV(out, "AXI SRAM", "%u bytes (base 0x%08x)", mem->axi_sram_bytes, mem->axi_sram_base);
	if (mem->has_vip_sram)
		KV(out, "VIP SRAM", "%u bytes (base 0x%08x)", mem->vip_sram_bytes,
		   mem->vip_sram_base);
	else
		KV(out, "VIP SRAM", "(none before version 0x10008)");
	KV(out, "Entry table", "offset %" PRIu64 ", %u entries (%s), prefix ends at %" PRIu64,
	   v1->entries_offset, v1->entry_count,
	   v1->entry_count_derived ? "derived from the input table offset"
				   : "measured for this version",
	   v1->prefix_end);

	fprintf(out, "  %-26s ", "Record strides:");
	put_stride(out, "I/O", v1->io_stride, 1);
	put_stride(out, "layer", v1->layer_stride, 0);
	put_stride(out, "operation", v1->operation_stride, 0);
	put_stride(out, "patch", v1->patch_stride, 0);
	put_stride(out, "SH", v1->sh_stride, 0);
	put_stride(out, "SW", v1->sw_stride, 0);
	if (v1->patch_stride_from_data)
		fputs(" (patch stride from the data)", out);
	if (v1->strides_assumed)
		fputs(" (assumed: version newer than every sample)", out);
	fputc('\n', out);

	if (v1->has_crc_sum)
		KV(out, "nbg_crc_sum", "0x%08x (CRC-32 %s 0x%08x: %s; %s)", v1->crc_sum,
		   v1->crc_sum_from ? "from the first section on" : "of the file with the word zeroed",
		   v1->crc_sum_computed, v1->crc_sum_finding ? v1->crc_sum_finding : "zero",
		   v1->crc_sum_enforced ? "this version's rule, enforced"
					: "no rule is established for this version");
	if (v1->opaque_size) {
		nbg_hex32(v1->opaque_sha256, hex);
		KV(out, "Opaque prefix bytes", "%" PRIu64 " at offset %" PRIu64 ", SHA-256 %s",
		   v1->opaque_size, v1->opaque_offset, hex);
	} else {
		KV(out, "Opaque prefix bytes", "none");
	}
	KV(out, "Gaps between sections", "%u, %" PRIu64 " bytes (%" PRIu64 " non-zero)",
	   v1->gap_count, v1->gap_bytes, v1->gap_nonzero_bytes);
	if (v1->trailer_size) {
		nbg_hex32(v1->trailer_sha256, hex);
		KV(out, "Bytes after sections", "%" PRIu64 " at offset %" PRIu64 ", SHA-256 %s",
		   v1->trailer_size, v1->trailer_offset, hex);
	} else {
		KV(out, "Bytes after sections", "none");
	}
}

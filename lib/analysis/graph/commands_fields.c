/*
 * commands_fields.c - the NN and TP command descriptor layouts as data: for
 * every field its name, word, first bit, width, how an address is stored,
 * its role and its evidence.
 *
 * Source of the layout: Mesa's open etnaviv driver for the same VeriSilicon
 * NPU cores (MIT), repository bminor/mesa-mesa,
 * src/gallium/drivers/etnaviv/etnaviv_ml_nn.c at commit
 * 0ef5aa5fb6e32626f03053d0e5f7a2fb7fc08412 (struct etna_nn_params) and
 * src/gallium/drivers/etnaviv/etnaviv_ml_tp.c at commit
 * 104309ede383b8ca328b7405d28e707998fa6dae (struct etna_tp_params).  The
 * tables below are nbgkit's own, written from those layouts (field names
 * kept so a reader can find them there); the driver's padding fields are left
 * out, so bits no field names stay visible as unknown.  Evidence codes:
 * doc/commands.md.
 *
 * The hardware data-type codes are named by VeriSilicon's OpenVX driver
 * (getHWDataFormat in driver/driver/khronos/libOpenVX/driver/src/
 * gc_vx_nn_command.c, repository flycat0101/gpu-viv6-andy, commit
 * 04c7e5004a05ad3af5901d978fe0c7521262f170); the pooling window code by
 * getHwPoolingSze in the same file.
 */
#include <string.h>

#include "analysis/graph/commands_internal.h"
#include "analysis/graph/graph_struct.h"

#define NBG_CMD_FIELD_ROW(id, key, w, lo, n, sh, role, ev, text) \
	{ key, w, lo, n, sh, role, ev, text },
static const nbg_cmd_field nn_fields[] = { NBG_NN_FIELDS(NBG_CMD_FIELD_ROW) };
static const nbg_cmd_field tp_fields[] = { NBG_TP_FIELDS(NBG_CMD_FIELD_ROW) };
#undef NBG_CMD_FIELD_ROW
_Static_assert(sizeof(nn_fields) / sizeof(nn_fields[0]) == NBG_NNF__COUNT, "one id per NN field");
_Static_assert(sizeof(tp_fields) / sizeof(tp_fields[0]) == NBG_TPF__COUNT, "one id per TP field");

const enum nbg_tp_fid nbg_tp_loop_counts[6] = {
	NBG_TPF_OUT_LOOP_0_COUNT, NBG_TPF_OUT_LOOP_1_COUNT, NBG_TPF_OUT_LOOP_2_COUNT,
	NBG_TPF_OUT_LOOP_3_COUNT, NBG_TPF_OUT_LOOP_4_COUNT, NBG_TPF_OUT_LOOP_5_COUNT };
const enum nbg_tp_fid nbg_tp_loop_incs[6] = {
	NBG_TPF_OUT_LOOP_0_INC, NBG_TPF_OUT_LOOP_1_INC, NBG_TPF_OUT_LOOP_2_INC,
	NBG_TPF_OUT_LOOP_3_INC, NBG_TPF_OUT_LOOP_4_INC, NBG_TPF_OUT_LOOP_5_INC };

const char *nbg_command_engine_name(unsigned engine)
{
	return engine == NBG_CMD_NN ? "NN" : engine == NBG_CMD_TP ? "TP" : NULL;
}

const nbg_cmd_field *nbg_command_fields(unsigned engine, size_t *count)
{
	size_t n = 0;
	const nbg_cmd_field *t = NULL;

	if (engine == NBG_CMD_NN) {
		t = nn_fields;
		n = sizeof(nn_fields) / sizeof(nn_fields[0]);
	} else if (engine == NBG_CMD_TP) {
		t = tp_fields;
		n = sizeof(tp_fields) / sizeof(tp_fields[0]);
	}
	if (count)
		*count = n;
	return t;
}

int nbg_command_field_index(unsigned engine, const char *key)
{
	size_t n;
	const nbg_cmd_field *t = nbg_command_fields(engine, &n);

	for (size_t i = 0; key && i < n; i++)
		if (!strcmp(t[i].key, key))
			return (int)i;
	return -1;
}

const char *nbg_command_data_type_name(uint32_t code)
{
	switch (code) {
	case 0: return "uint8";
	case 1: return "fp16";
	case 2: return "int8";
	case 4: return "int16";
	case 7: return "bf16";
	default: return NULL;
	}
}

const char *nbg_command_pooling_name(uint32_t code)
{
	static const char *const names[] = { "none", "max", "avg", "first-pixel" };
	return code < 4 ? names[code] : NULL;
}

/* ------------------------------------------------ helpers of the decoder */

int nbg_command_format_code(uint32_t data_format)
{
	switch (data_format) {
	case 1: return 1; /* FP16 */
	case 2: return 0; /* UINT8 */
	case 3: return 2; /* INT8 */
	case 5: return 4; /* INT16 */
	case 7: return 7; /* BFP16 */
	default: return -1;
	}
}

unsigned nbg_command_type_bytes(uint32_t code)
{
	return code == 1 || code == 4 || code == 7 ? 2u : 1u;
}

/* The address a patch gives: its source offset plus the value stored at
 * the patched word, except in 0x10003 files, where the word holds the
 * compile-time address and the source offset that buffer's compile-time
 * base (so the offset is their difference; every reference of the three
 * 0x10003 files has value >= base, and equality at a buffer's start). */
uint64_t nbg_command_patched_offset(uint32_t version, uint32_t src_offset, uint64_t value)
{
	if (version < 0x10009u && src_offset && value >= src_offset)
		return value - src_offset;
	return (uint64_t)src_offset + value;
}

/* The first COMMAND patch of operation o that targets command word
 * `word`, which holds `value` (an address, as stored). */
static int word_ref(const nbg_graph *g, const nbg_graph_operation *o, unsigned word, uint64_t value,
		    nbg_cmd_ref *r)
{
	uint64_t end = o ? (uint64_t)o->patch_index + o->patch_count : 0;

	memset(r, 0, sizeof(*r));
	r->source_type = UINT32_MAX; /* not patched: the stored value is all there is */
	r->index = -1;
	r->offset = value;
	if (end > g->sum.patch_count)
		end = g->sum.patch_count;
	for (uint64_t i = o ? o->patch_index : 0; i < end; i++) {
		const nbg_graph_patch *p = nbg_graph_patch_at(g, (size_t)i);
		if (p->type != 1 || p->dest_offset != 4u * word)
			continue;
		r->patched = 1;
		r->patch = (size_t)i;
		r->source_type = p->source_type;
		r->index = p->index;
		r->src_offset = p->src_offset;
		r->offset = nbg_command_patched_offset(g->sum.version, p->src_offset, value);
		return 1;
	}
	return 0;
}

int nbg_command_word_ref(const nbg_graph *g, size_t operation, unsigned word, uint64_t value,
			 nbg_cmd_ref *r)
{
	return word_ref(g, nbg_graph_operation_at(g, operation), word, value, r);
}

int nbg_command_ring(const nbg_graph *g, size_t operation, uint32_t size_units, unsigned end_word,
		     uint64_t end_raw, uint64_t *size, nbg_cmd_ref *end)
{
	*size = (uint64_t)size_units << 6;
	if (!*size)
		return 0;
	word_ref(g, nbg_graph_operation_at(g, operation), end_word,
		 g->sum.version < 0x10009u ? end_raw << 6 : end_raw, end);
	return 1;
}

/*
 * memory_rules.c - the rules and constants behind every memory figure, as
 * data: nbg_mem_rule_of() and nbg_mem_constant_at() serve the reports, and
 * doc/memory.md carries the same text (tests/test_memory.c compares them).
 */
#include "common/internal.h"
#include "nbg/memory.h"
#include "analysis/memory/memory_internal.h"

static const nbg_mem_rule rules[NBG_MEM__COUNT] = {
	{ NBG_MEM_VIDEO_TOTAL, "video_total", "Total video memory", 0,
	  "Total Video Memory (bytes)",
	  "memory pool + inputs + outputs + operation memory + heap reserve, the sum rounded "
	  "up to 256; exact: the sum of the exact figures, not rounded",
	  "C" },
	{ NBG_MEM_POOL, "memory_pool", "Memory pool", 1, "Memory Pool (bytes)",
	  "the stored memory-pool size: the MEMORY_POOL section (v2, 0 without the section) "
	  "or the size word of the v1 memory block",
	  "P+C" },
	{ NBG_MEM_INPUTS, "inputs", "Inputs", 1, "Total Input Memory (bytes)",
	  "sum over INPUT records of the tensor bytes (elements x bits of the data format, "
	  "rounded up to whole bytes), each rounded up to 64; exact: not rounded",
	  "P+C" },
	{ NBG_MEM_OUTPUTS, "outputs", "Outputs", 1, "Total Output Memory (bytes)",
	  "sum over OUTPUT records of the tensor bytes, each rounded up to 64; exact: not "
	  "rounded",
	  "P+C" },
	{ NBG_MEM_OPERATIONS, "operations", "Operation memory", 1,
	  "Total Operation Memory (bytes)",
	  "coefficients + command buffer + dynamic inputs and outputs, less the ICD section "
	  "rounded up to 64 (the load states include it, the operations do not)",
	  "C" },
	{ NBG_MEM_COEFFICIENTS, "coefficients", "Read-only coefficients", 2,
	  "Total Read Only(Coeff) Memory (bytes)",
	  "sections layout: the COEF_DATA section rounded up to 64 (exact: its size); LCD "
	  "layout: the LCD rounded up to 64 less the load states of the operations (their LCDT entries summed, "
	  "rounded up to 64), less the PPU-instruction entry of every SH operation rounded up "
	  "to 64, less the dynamic buffers; exact: the distinct LCDT entries the operations' "
	  "MISC_DYNA_GENERIC patches name",
	  "C" },
	{ NBG_MEM_COMMAND_BUFFER, "command_buffer", "Command buffer", 2,
	  "Total Command buffer (bytes)",
	  "load states + NN, TP and SP instructions + PPU instructions", "C" },
	{ NBG_MEM_LOAD_STATES, "load_states", "Load states", 3, "Total Load States (bytes)",
	  "the load states rounded up to 64 plus the ICD section rounded up to 64; load "
	  "states: the LOADSTATE section (sections layout) or the LCDT entries the "
	  "operations' state_id name, summed (LCD layout); exact: not rounded",
	  "C" },
	{ NBG_MEM_NN_TP_INSTRUCTIONS, "nn_tp_sp_instructions", "NN, TP and SP instructions", 3,
	  "Total NN, TP and SP instruction (bytes)",
	  "the NN section plus the TP section, each rounded up to 64 (they hold the NN, NT, "
	  "NN_LUT, SP and TP commands)",
	  "C" },
	{ NBG_MEM_PPU_INSTRUCTIONS, "ppu_instructions", "PPU instructions", 3,
	  "Total PPU instruction (bytes)",
	  "sum over SH operations of the PPU-instruction entry (PPU_INSTR_TABLE, or the LCDT) "
	  "their SH record's instr_index names, each rounded up to 256; exact: not rounded",
	  "P+C" },
	{ NBG_MEM_DYNAMIC, "dynamic_io", "Dynamic inputs and outputs", 2,
	  "Dynamic Input or Output (bytes)", "dynamic inputs + dynamic outputs", "C" },
	{ NBG_MEM_DYNAMIC_INPUTS, "dynamic_inputs", "Dynamic inputs", 3,
	  "Total Dynamic Input (bytes)",
	  "the distinct entries named by MISC_DYNA_INPUT patches inside operation ranges, of "
	  "type STATE (DYNAIO_TABLE entries), in the LCD layout of type STATE or COMMAND (LCDT "
	  "entries), each rounded up to 64; exact: not rounded",
	  "C+I" },
	{ NBG_MEM_DYNAMIC_OUTPUTS, "dynamic_outputs", "Dynamic outputs", 3,
	  "Total Dynamic Output (bytes)",
	  "sections layout: the DYNAIO section rounded up to 64 less the dynamic inputs "
	  "(exact: the DYNAIO_TABLE entries not counted as inputs); LCD layout: as for the "
	  "inputs, with MISC_DYNA_OUTPUT patches",
	  "C+I" },
	{ NBG_MEM_HEAP_RESERVE, "heap_reserve", "Heap node reserve", 1,
	  "Video memory heap node reserved (bytes)",
	  "the runtime's video-memory heap reserve, the constant heap_node_reserve: not in the file",
	  "C" },
	{ NBG_MEM_SYSTEM_TOTAL, "system_total", "Total system memory", 0,
	  "Total System Memory (bytes)", "NBG header + allocated", "C" },
	{ NBG_MEM_NBG_HEADER, "nbg_header", "NBG header (record copies)", 1,
	  "NBG header Size (bytes)",
	  "the runtime's copies of the records: layer_record x layers + operation_record x "
	  "operations + patch_record x patches + io_record x (inputs + outputs) + sh_record x "
	  "SH records + hw_init_record x hardware-init records, plus the stored bytes of the "
	  "LCDT, ICDT, COEF_DATA_TABLE, PPU_INSTR_TABLE, DYNAIO_TABLE and LOADSTATE_TABLE "
	  "sections and of the SW, PPU_PARAM and LAYER_PARAM sections",
	  "C+I" },
	{ NBG_MEM_ALLOCATED, "allocated", "Allocated", 1, "Allocate memory size (bytes)",
	  "allocation_base + io_allocation x (inputs + outputs) + io_patch_allocation x PATCH "
	  "records whose source is INPUT or OUTPUT + the LOADSTATE section (the runtime's "
	  "patched copy of the load states)",
	  "C+I" },
	{ NBG_MEM_FLASH_VIDEO_TOTAL, "flash_video_total", "Total video memory, from flash", 0,
	  NULL,
	  "created from flash the read-only coefficients are used in place: the total video "
	  "memory without the coefficients, rounded up to 256; the reference output has no "
	  "such figure",
	  "I" },
	{ NBG_MEM_FLASH_SYSTEM_TOTAL, "flash_system_total", "Total system memory, from flash", 0,
	  NULL,
	  "created from flash the records are read in place: the allocated figure alone; the "
	  "reference output has no such figure",
	  "I" },
};

static const nbg_mem_constant constants[] = {
	{ "buffer_alignment", NBG_MEM_BUFFER_ALIGN,
	  "unit of the input, output, coefficient, load-state, NN/TP-instruction and dynamic "
	  "buffers",
	  "VeriSilicon's public OpenVX driver (MEMORY_ALIGN_SIZE); reproduces the vendor's "
	  "inspector on the reference corpus" },
	{ "ppu_alignment", NBG_MEM_PPU_ALIGN, "unit of each PPU (shader) instruction buffer",
	  "VeriSilicon's public OpenVX driver and VIPLite sources (SH_COMMAND_ALIGN_SIZE, "
	  "gcdVIP_SH_ALIGN_SIZE); the PPU_INSTR sections of the corpus use it" },
	{ "video_total_alignment", NBG_MEM_TOTAL_ALIGN, "unit of the total video memory",
	  "measured: reproduces the vendor's inspector on the reference corpus" },
	{ "heap_node_reserve", NBG_MEM_HEAP_RESERVE_BYTES,
	  "video memory the runtime keeps for its heap nodes",
	  "a runtime constant, not in the file: the vendor's inspector prints it for every "
	  "reference file" },
	{ "layer_record", NBG_MEM_LAYER_RECORD, "the runtime's copy of one layer record",
	  "measured: reproduces the NBG header size of every reference file" },
	{ "operation_record", NBG_MEM_OPERATION_RECORD,
	  "the runtime's copy of one operation record", "measured, as layer_record" },
	{ "patch_record", NBG_MEM_PATCH_RECORD, "the runtime's copy of one patch record",
	  "measured, as layer_record" },
	{ "io_record", NBG_MEM_IO_RECORD, "the runtime's copy of one input or output record",
	  "measured, as layer_record (the v2 I/O record size)" },
	{ "sh_record", NBG_MEM_SH_RECORD, "the runtime's copy of one SH record",
	  "measured, as layer_record" },
	{ "hw_init_record", NBG_MEM_HW_INIT_RECORD,
	  "the runtime's copy of one hardware-init record", "measured, as layer_record" },
	{ "allocation_base", NBG_MEM_ALLOC_BASE,
	  "the runtime's fixed system-memory allocations for a network",
	  "measured: reproduces the allocated size of every reference file" },
	{ "io_allocation", NBG_MEM_ALLOC_PER_IO, "system memory per input or output",
	  "measured on outputs (1 to 9 per file); every reference file has one input, so the "
	  "input's share is inferred equal (I)" },
	{ "io_patch_allocation", NBG_MEM_ALLOC_PER_IO_PATCH,
	  "system memory per patch of an input or output address",
	  "measured, as allocation_base" },
};

/* The dynamic patches the vendor counts, by layout and patch type: the entry a
 * MISC_DYNA_INPUT patch inside an operation's range names is a dynamic input,
 * a MISC_DYNA_OUTPUT patch's a dynamic output.  A patch of a pair not listed
 * leaves its entry where it is: in the DYNAIO remainder (sections layout, the
 * dynamic outputs) or in the LCD remainder (LCD layout, the coefficients).
 * Hardware-init operations' patches lie in no operation's range: never
 * counted.  Evidence, doc/memory.md "Dynamic buffers": */
static const struct dynamic_patch_rule {
	nbg_mem_layout layout;
	uint32_t patch_type;
} dynamic_counted[] = {
	/* C on inputs (a v2 file's SH operation), outputs are the remainder */
	{ NBG_MEM_LAYOUT_SECTIONS, NBG_MEM_PATCH_STATE },
	/* C on inputs (v1 0x1000E and 0x10014 SH operations); I on outputs */
	{ NBG_MEM_LAYOUT_LCD, NBG_MEM_PATCH_STATE },
	/* C on outputs (a v1 0x1000E NN operation's output address); I on inputs */
	{ NBG_MEM_LAYOUT_LCD, NBG_MEM_PATCH_COMMAND },
	/* not listed, C: (SECTIONS, COMMAND), a v2 NT operation's input address,
	 * whose DYNAIO entry the vendor leaves in the remainder */
};

int nbg_mem_dynamic_patch_counted(nbg_mem_layout layout, uint32_t patch_type)
{
	for (size_t i = 0; i < sizeof(dynamic_counted) / sizeof(dynamic_counted[0]); i++)
		if (dynamic_counted[i].layout == layout &&
		    dynamic_counted[i].patch_type == patch_type)
			return 1;
	return 0;
}

const nbg_mem_rule *nbg_mem_rule_of(nbg_mem_figure f)
{
	return (unsigned)f < NBG_MEM__COUNT ? &rules[f] : NULL;
}

size_t nbg_mem_constant_count(void)
{
	return sizeof(constants) / sizeof(constants[0]);
}

const nbg_mem_constant *nbg_mem_constant_at(size_t i)
{
	return i < nbg_mem_constant_count() ? &constants[i] : NULL;
}

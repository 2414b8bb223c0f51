/*
 * commands_lib.h - library-internal interface: what other folders of libnbg
 * may use of lib/analysis's commands: a field of a decoded command by an id
 * the compiler checks, the loops of a TP command, and where a field that
 * holds an address points.
 * Never installed (doc/architecture.md, "What may include what").
 */
#ifndef NBG_COMMANDS_LIB_H
#define NBG_COMMANDS_LIB_H

#include "analysis/graph/commands_fields.h"
#include "common/internal.h"
#include "nbg/commands.h"

/* Field ids: index of each field in nbg_command_fields(NBG_CMD_NN) and
 * nbg_command_fields(NBG_CMD_TP), from the lists of commands_fields.h. */
#define NBG_CMD_NN_ID(id, ...) NBG_NNF_##id,
#define NBG_CMD_TP_ID(id, ...) NBG_TPF_##id,
enum nbg_nn_fid { NBG_NN_FIELDS(NBG_CMD_NN_ID) NBG_NNF__COUNT };
enum nbg_tp_fid { NBG_TP_FIELDS(NBG_CMD_TP_ID) NBG_TPF__COUNT };
#undef NBG_CMD_NN_ID
#undef NBG_CMD_TP_ID

/* The six output loops of a TP command: counts and increments, loop 0 first. */
NBG_INTERNAL extern const enum nbg_tp_fid nbg_tp_loop_counts[6], nbg_tp_loop_incs[6];
/* The offset a patch of src_offset gives a field holding `value`
 * (doc/commands.md: 0x10003 files subtract, every other version adds). */
NBG_INTERNAL uint64_t nbg_command_patched_offset(uint32_t version, uint32_t src_offset,
						 uint64_t value);
/* Where field fi (an enum nbg_nn_fid or nbg_tp_fid, as cmd's engine) of
 * cmd points: the COMMAND patch of OPERATIONS record `operation` that
 * targets its word (r->patched 0 when none does). */
NBG_INTERNAL void nbg_command_field_ref(const nbg_graph *g, const nbg_cmd *cmd, size_t operation,
					int fi, nbg_cmd_ref *r);
/* The same for command word `word` holding `value` (an address as the
 * patch reads it): 1 when the first COMMAND patch of the operation that
 * targets the word relocates it into *r; else 0, r->offset the value. */
NBG_INTERNAL int nbg_command_word_ref(const nbg_graph *g, size_t operation, unsigned word, uint64_t value,
				      nbg_cmd_ref *r);
/*
 * The circular buffer an image of an operation's command is read or
 * written through, the one rule the data flow (dataflow.c) and the CPU
 * backend (lib/cpu) read (doc/commands.md, doc/cpu-backend.md): its size
 * field holds 64-byte units (*size: bytes); its end word `end_word` holds
 * end_raw, the buffer's end plus one as an address >> 6 in files before
 * 0x10009 and as a byte address from 0x10009 on, relocated as
 * nbg_command_word_ref does (*end; end->patched 0: no patch relocates it).
 * The buffer is [end->offset - *size, end->offset).  0 when the size is 0:
 * no buffer.
 */
NBG_INTERNAL int nbg_command_ring(const nbg_graph *g, size_t operation, uint32_t size_units, unsigned end_word,
				  uint64_t end_raw, uint64_t *size, nbg_cmd_ref *end);
/*
 * The table of a TP lookup-table activation (commands_lut.c): the bytes of
 * the coefficient table entry the patch of alu_load_pwl_lut_address names,
 * from its offset to the entry's end (*size), or NULL when it is not
 * relocated into an in-bounds entry (*r: the field's patch, for messages).
 * Its layout: 1,024 32-bit entries (a sign, 5 exponent and 15 mantissa bits,
 * bias 15) and 8 zero bytes (16 in the 0x10003 files' entries) (*wide 1),
 * or 1,024 IEEE half-precision entries
 * and 4 zero bytes (*wide 0): 1; 0 for another size; -1 with *bad_byte the
 * first non-zero byte after the entries.  An entry's value: 0 when it is not
 * a finite number of the layout (exponent 0 holds only +-0).
 */
#define NBG_LUT_ENTRIES 1024u
#define NBG_LUT_BYTES_32 (NBG_LUT_ENTRIES * 4u + 8u)
#define NBG_LUT_BYTES_32_PADDED (NBG_LUT_ENTRIES * 4u + 16u)
#define NBG_LUT_BYTES_16 (NBG_LUT_ENTRIES * 2u + 4u)
NBG_INTERNAL const uint8_t *nbg_command_lut_table(const nbg_model *m, const nbg_graph *g,
						  const nbg_cmd *cmd, size_t operation, nbg_cmd_ref *r,
						  uint64_t *size);
/* Bytes per element of a hardware data-type code (unknown codes: 1). */
NBG_INTERNAL unsigned nbg_command_type_bytes(uint32_t code);
/* The table coefficient streams and lookup tables lie in: COEF_DATA when
 * present and decoded, else the LCDT; -1 when neither. */
NBG_INTERNAL int nbg_command_coef_table(const nbg_graph *g);
/* Where a reference into a coefficient table entry points: the file offset
 * of its bytes (*offset, from the patch's source offset) and their count to
 * the entry's end (*size), or why not. */
typedef enum nbg_coef_ref {
	NBG_COEF_REF_OK = 0,
	NBG_COEF_REF_UNPATCHED, /* no patch relocates the field */
	NBG_COEF_REF_NOT_TABLE, /* the patch's source is not a table entry */
	NBG_COEF_REF_NO_ENTRY,  /* no such entry, or not inside the file */
} nbg_coef_ref;
NBG_INTERNAL nbg_coef_ref nbg_command_coef_locate(const nbg_model *m, const nbg_graph *g, const nbg_cmd_ref *r,
						  uint64_t *offset, uint64_t *size);
/* The same bytes, or NULL when the reference does not locate them. */
NBG_INTERNAL const uint8_t *nbg_command_coef_bytes(const nbg_model *m, const nbg_graph *g,
						   const nbg_cmd_ref *r, uint64_t *size);
NBG_INTERNAL int nbg_command_lut_layout(const uint8_t *tab, uint64_t size, int *wide, uint64_t *bad_byte);
NBG_INTERNAL uint32_t nbg_command_lut_word(const uint8_t *tab, int wide, uint32_t i);
NBG_INTERNAL int nbg_command_lut_entry(uint32_t w, int wide, double *v);
/*
 * The table of an NN_LUT operation (an NN-engine activation, commands_lut.c;
 * doc/weights.md, "Lookup tables of the NN engine"): the stream its
 * kernel_address names, NBG_NNLUT_BYTES long: 1,024 entries of the wide
 * layout above, then three words, of which bits 28 (NBG_NNLUT_SIGN) and
 * 24 (NBG_NNLUT_FULL) of the first say how an entry's index maps to its
 * input (nbg_command_nnlut_mode): the input whose half-precision bits are
 * ((i & 511) << 6) ^ 0x4000 with the sign bit 9 of i put on (both set:
 * mode 1), the same with ((((i & 511) << 5) + 0x2000) & 0x3fff) + 0x2000,
 * 32 entries a binade from 2^-7 to 2^9 (sign set, bit 24 clear: mode 2),
 * or ((i << 5) & 0xffff) ^ 0x4000, non-negative inputs only (sign clear:
 * mode 0).  nbg_command_nnlut_input gives entry i's input bits.
 */
#define NBG_NNLUT_BYTES (NBG_LUT_ENTRIES * 4u + 12u)
/* the table with its zeros to the next 64-byte boundary, where it follows
 * a convolution's kernels in one stream */
#define NBG_NNLUT_SPAN ((NBG_NNLUT_BYTES + 63u) & ~63u)
/* An NN_LUT operation that is a convolution with its table: a kernel depth
 * and an output depth in its command, and a stream (stream_size bytes)
 * longer than a table (doc/weights.md, "A convolution and its table in one
 * stream"); the weights decoder and the network view read it so. */
static inline int nbg_nnlut_convolution(const nbg_cmd_op *op, uint64_t stream_size)
{
	return op->kernel[2] && op->out[2] && stream_size > NBG_NNLUT_SPAN;
}
#define NBG_NNLUT_SIGN (1u << 28)
#define NBG_NNLUT_FULL (1u << 24)
NBG_INTERNAL int nbg_command_nnlut_mode(uint32_t tail0);
NBG_INTERNAL uint16_t nbg_command_nnlut_input(uint32_t i, int mode);
/* The function such a table of size bytes holds, as the network view
 * names it ("relu", "leaky-relu", "tanh", "sigmoid", "silu", "square", "sqrt",
 * "rsqrt": every finite entry within 4 units in the last place of it), or NULL
 * (analysis/network/network_lut.c); *param (param may be NULL) its
 * parameter p (f(p x); the leaky ReLU's slope). */
NBG_INTERNAL const char *nbg_nnlut_table_function(const uint8_t *tab, uint64_t size, double *param);

/* The value of NN field f of an NN command, of TP field f of a TP command;
 * 0 for a command of the other engine.  Fields are named by id (a typo does
 * not compile), never by key. */
static inline uint32_t nbg_cmd_nn(const nbg_cmd *cmd, enum nbg_nn_fid f)
{
	return cmd->engine == NBG_CMD_NN ? cmd->values[f] : 0;
}
static inline uint32_t nbg_cmd_tp(const nbg_cmd *cmd, enum nbg_tp_fid f)
{
	return cmd->engine == NBG_CMD_TP ? cmd->values[f] : 0;
}

/* The data-flow relations, in report order: nbg_commands_relation_at's
 * index (lib/analysis/network reads the ones its banner names). */
enum nbg_cmd_rel {
	NBG_CMDR_PATCH_FIELD, NBG_CMDR_KERNEL_ADDRESS, NBG_CMDR_KERNEL_ENTRY,
	NBG_CMDR_FIRST_INPUT, NBG_CMDR_INPUT_DIMS, NBG_CMDR_INPUT_TYPE, NBG_CMDR_OUTPUT_DIMS,
	NBG_CMDR_OUTPUT_TYPE, NBG_CMDR_PRODUCER, NBG_CMDR_CHAIN_TYPE, NBG_CMDR_CHAIN_SHAPE,
	NBG_CMDR_DEAD_END,
	NBG_CMDR__COUNT
};

#endif

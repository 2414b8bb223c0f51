/*
 * weights.h - the weights and biases of a compiled model: every NN-engine
 * operation's kernel (coefficient) stream located through its kernel patch
 * and the coefficient table (and every TP fully connected layer's, through
 * its alu_load_pwl_lut_address patch), decoded with the stream format of its target
 * family, and returned per output channel in the network's channel order.
 *
 * The formats are those of Mesa's open etnaviv driver for the same NPU
 * cores (doc/weights.md names the functions and commits), with what the
 * data shows beyond them:
 *   "v7"   per-core zero-run-length bit streams with the bias and the output
 *          offset of each kernel inline (targets 0x88, 0x7d);
 *   "v8a"  per-core Huffman streams of (weight - zero point), the biases in
 *          a block after them (0xb9, 0xbe, 0xe8, 0xee, 0xad, 0x1000000e,
 *          0x10000016, 0x1000003b);
 *   "v8b"  the same Huffman coder carrying the v7 layout as bytes (0x99,
 *          0xa1);
 *   "tp-fc" a TP fully connected layer's stream: one chunk per input
 *          channel holding its weight for every output, Huffman-coded (the
 *          v8a targets) or raw (0x7d, 0x99, 0xa1), a size table and the
 *          biases before them (no open driver writes it: established from
 *          the data, doc/weights.md).
 * Other targets are tried with each format in turn; one exactly consistent
 * decode is kept, none or two are `not-decoded`.
 *
 * A stream is decoded only when every consistency condition of its format
 * holds (doc/weights.md, "Checks"); a stream that fails one is not-decoded
 * with a reason and the bit offset where it failed, and none of its values
 * are returned.  Streams nbgkit does not establish (16-bit and floating
 * point kernels, fully connected layers of target 0x7d, int8 kernels,
 * non-square kernels, the kernels of SP, NN_LUT and NT operations) are
 * not-decoded with a reason that starts with "unsupported".
 *
 * Output per decoded operation: the weights as stored codes, shape [output
 * channel][z][ky][kx] (the kernel data type: uint8); the kernel zero point;
 * per output channel the bias as the stream stores it and the bias with the
 * zero-point correction the compiler folded into it undone; the per-channel
 * float32 the stream carries after each bias where the descriptor's
 * per_channel_post_mul is set (v8a), else none.
 *
 * Bounds: a stream is read only inside its coefficient-table entry; every
 * count from the descriptor is checked against the entry's size before
 * anything is allocated; memory is linear in the decoded output.  Nothing
 * in a file makes decoding fail: only running out of memory does.
 *
 * Memory: the result owns copies of everything it keeps; it stays valid
 * after the model, graph and commands are freed.  It is immutable and may be
 * read from several threads.
 */
#ifndef NBG_WEIGHTS_H
#define NBG_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nbg.h"
#include "graph.h"
#include "commands.h"
#include "ledger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What became of an operation's kernel stream. */
typedef enum nbg_weights_status {
	NBG_WEIGHTS_DECODED = 0,     /* every check held: the arrays are whole */
	NBG_WEIGHTS_NOT_DECODED = 1, /* a check failed: reason and bit offset say which */
	NBG_WEIGHTS_UNSUPPORTED = 2, /* a stream nbgkit does not establish (reason) */
	NBG_WEIGHTS_NO_STREAM = 3,   /* no kernel patch, or it names no coefficient entry */
	NBG_WEIGHTS_STATUS_COUNT = 4
} nbg_weights_status;

/* Stream formats. */
typedef enum nbg_weights_format {
	NBG_WEIGHTS_FORMAT_NONE = 0,
	NBG_WEIGHTS_FORMAT_V7 = 1,
	NBG_WEIGHTS_FORMAT_V8A = 2,
	NBG_WEIGHTS_FORMAT_V8B = 3,
	NBG_WEIGHTS_FORMAT_TPFC = 4, /* a TP fully connected layer's stream */
	NBG_WEIGHTS_FORMAT_F32 = 5,  /* fp16 PReLU layers: float32 (weight, slope) per channel */
	NBG_WEIGHTS_FORMAT_LUT = 6,  /* an NN_LUT operation's table of 1,024 entries */
	NBG_WEIGHTS_FORMAT_COUNT = 7
} nbg_weights_format;

typedef struct nbg_weights nbg_weights;
/* One NN-engine operation's kernel stream and what it decoded to. */
typedef struct nbg_weights_op nbg_weights_op;

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_WEIGHTS_H_STATIC_LINKING_ONLY)
#define NBG_WEIGHTS_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* "decoded", "not-decoded", "unsupported", "no-stream"; NULL otherwise. */
NBG_API const char *nbg_weights_status_name(nbg_weights_status s);

/* "none", "v7", "v8a", "v8b", "tp-fc", "f32-pairs"; NULL otherwise. */
NBG_API const char *nbg_weights_format_name(nbg_weights_format f);
/* The format a target's streams use, NBG_WEIGHTS_FORMAT_NONE for a target
 * whose family is not known (its streams are tried with every format). */
NBG_API nbg_weights_format nbg_weights_target_format(uint32_t target);

/*
 * Decodes the kernel stream of every NN-engine operation of c (decoded from
 * m and g with nbg_commands_decode).  Returns NBG_OK and a new result in
 * *out (free with nbg_weights_free); fails, leaving *out NULL and filling
 * *err (may be NULL), only when memory runs out (NBG_E_OUT_OF_MEMORY) or an
 * argument is NULL (NBG_E_INVALID_ARGUMENT).
 */
NBG_API nbg_code nbg_weights_decode(const nbg_model *m, const nbg_graph *g,
				    const nbg_commands *c, nbg_weights **out, nbg_error *err);
NBG_API void nbg_weights_free(nbg_weights *w);

/* Operations, in the order of nbg_commands_op_at (NN-engine operations and
 * TP fully connected layers, whose shape is [outputs, inputs, 1, 1]); NULL
 * past the end. */
NBG_API size_t nbg_weights_count(const nbg_weights *w);
NBG_API const nbg_weights_op *nbg_weights_at(const nbg_weights *w, size_t i);
/* Operations with a status, and the coefficient bytes the decoded streams
 * explain (each entry's bytes from the stream's start counted once). */
NBG_API size_t nbg_weights_status_count(const nbg_weights *w, nbg_weights_status s);
NBG_API uint64_t nbg_weights_explained_bytes(const nbg_weights *w);

/* The operation: its index among nbg_commands_op_at, its OPERATIONS record,
 * its NN command. */
NBG_API size_t nbg_weights_op_index(const nbg_weights_op *o);
NBG_API size_t nbg_weights_op_operation(const nbg_weights_op *o);
NBG_API uint32_t nbg_weights_op_command(const nbg_weights_op *o);

/* Operations that name one kernel stream share its one decode (a stream is
 * decoded once per file, whatever the number of records naming it): status,
 * reason, format and the very arrays (the same pointers) of the first
 * operation naming it, in this result's order.  The position of that first
 * operation (for nbg_weights_at): o's own when o is the first, or when its
 * stream was not decoded for it. */
NBG_API size_t nbg_weights_op_first(const nbg_weights_op *o);

NBG_API nbg_weights_status nbg_weights_op_status(const nbg_weights_op *o);
/* A stable kebab-case id ("bit-count-mismatch", "unsupported-data-type", ...;
 * doc/weights.md lists them) and a sentence; "" for a decoded stream. */
NBG_API const char *nbg_weights_op_reason_id(const nbg_weights_op *o);
NBG_API const char *nbg_weights_op_reason(const nbg_weights_op *o);
/* Where a check failed: bits from the start of the stream (UINT64_MAX when
 * the failure has no position, such as an unsupported data type). */
NBG_API uint64_t nbg_weights_op_bit_offset(const nbg_weights_op *o);

/* The stream: its file offset and the bytes from there to the end of its
 * coefficient-table entry (0, 0 when none was located). */
NBG_API uint64_t nbg_weights_op_stream_offset(const nbg_weights_op *o);
NBG_API uint64_t nbg_weights_op_stream_size(const nbg_weights_op *o);

/* The format it decoded with (NONE unless decoded), and its value order:
 * "blocks of 9" (v8a), "interleaved", "sequential" or "six" (v7, v8b:
 * Mesa's write_core_interleaved, write_core_sequential, write_core_6). */
NBG_API nbg_weights_format nbg_weights_op_format(const nbg_weights_op *o);
NBG_API const char *nbg_weights_op_order(const nbg_weights_op *o);
/* Cores with a stream. */
NBG_API uint32_t nbg_weights_op_cores(const nbg_weights_op *o);

/* The kernel data type (hardware code, nbg_command_data_type_name) and the
 * descriptor's shape [output channels, z, ky, kx] (z 1 for a depthwise
 * kernel); both known whenever the operation has a command. */
NBG_API uint32_t nbg_weights_op_data_type(const nbg_weights_op *o);
NBG_API const uint32_t *nbg_weights_op_shape(const nbg_weights_op *o);
/* The kernel zero point (coef_zero_point) and the input zero point the bias
 * correction uses (in_image_border_const). */
NBG_API int32_t nbg_weights_op_zero_point(const nbg_weights_op *o);
NBG_API int32_t nbg_weights_op_input_zero_point(const nbg_weights_op *o);

/* Decoded streams only (NULL otherwise): the codes, *count = the product of
 * the shape, [out][z][ky][kx] (bytes: uint8, or int8 in two's complement
 * where nbg_weights_op_data_type is 2); the bias per output channel as stored and
 * corrected (shape[0] values); the per-channel float32 the stream carries
 * (NULL when it carries none). */
NBG_API const uint8_t *nbg_weights_op_codes(const nbg_weights_op *o, size_t *count);
NBG_API const int32_t *nbg_weights_op_bias_stored(const nbg_weights_op *o);
NBG_API const int32_t *nbg_weights_op_bias(const nbg_weights_op *o);
NBG_API const float *nbg_weights_op_scale(const nbg_weights_op *o);
/* Bytes per code of a decoded stream: 1, or 2 for int16 kernels
 * (nbg_weights_op_data_type 4), whose codes are int16 little-endian (2 *
 * count bytes at nbg_weights_op_codes); 0 when not decoded.  int16 kernels
 * carry 48-bit biases: nbg_weights_op_bias_stored64 gives them as stored
 * (their correction is not established), and nbg_weights_op_bias and
 * _bias_stored are NULL for them. */
NBG_API unsigned nbg_weights_op_code_bytes(const nbg_weights_op *o);
/* The .npy type of the codes: "|u1" uint8, "|i1" int8, "<i2" int16,
 * "<f2" fp16 (nbg weights --out and the page write them so). */
NBG_API const char *nbg_weights_op_npy_descr(const nbg_weights_op *o);
/* fp16 kernels (nbg_weights_op_data_type 1; decoded: 1x1 depthwise, format
 * "f32-pairs") are float16 codes (2 bytes each, little-endian); their stream
 * carries a second float32 per channel, given here (NULL for every other
 * stream): in the corpus, PReLU layers' negative slopes.  It carries no
 * bias: nbg_weights_op_bias and _bias_stored are NULL for them. */
NBG_API const float *nbg_weights_op_prelu_slope(const nbg_weights_op *o);
NBG_API const int64_t *nbg_weights_op_bias_stored64(const nbg_weights_op *o);
/* NN_LUT tables (format NBG_WEIGHTS_FORMAT_LUT; doc/weights.md, "Lookup
 * tables of the NN engine"): the codes are the 1,024 entries' values as
 * float32 (4 bytes each, little-endian), shape [1024, 1, 1, 1].  _lut_tail:
 * the three 32-bit words after the entries (NULL for other streams);
 * _lut_inputs: the input each entry holds the function at, as half-precision
 * bits, where established (fp16 data), else NULL. */
NBG_API const uint32_t *nbg_weights_op_lut_tail(const nbg_weights_op *o);
NBG_API const uint16_t *nbg_weights_op_lut_inputs(const nbg_weights_op *o);
/* A convolution's NN_LUT operation (its kernels, then a table, in one
 * stream): the table's 1,024 values as float32 little-endian (the codes of
 * a table alone), *offset its byte offset in the stream; NULL for any other
 * operation.  Its tail: nbg_weights_op_lut_tail. */
NBG_API const uint8_t *nbg_weights_op_lut_table(const nbg_weights_op *o, uint64_t *offset);

/* Of the codes of a decoded stream: smallest, largest, and how many equal
 * the zero point (0s when not decoded).  The codes of int8 and int16 kernels
 * (nbg_weights_op_data_type 2, 4) are two's complement: their min and max
 * are the signed values, as int32_t converted to uint32_t; fp16 codes give
 * their float16 bits, NN_LUT tables (4-byte codes) their float32 bits, and
 * count the zeros (+-0). */
NBG_API void nbg_weights_op_stats(const nbg_weights_op *o, uint32_t *min, uint32_t *max,
				  uint64_t *zero_points);

/* `nbg weights` and `nbg inspect --weights`: one line per operation (shape,
 * status, zero point, code range, zero share), then the totals. */
NBG_API void nbg_text_weights(FILE *out, const nbg_model *m, const nbg_graph *g,
			      const nbg_commands *c, const nbg_weights *w);
/* One operation's line of it (g the graph w was decoded with). */
NBG_API void nbg_text_weights_op(FILE *out, const nbg_graph *g, const nbg_weights_op *o);

/*
 * The ledger of m (as nbg_ledger_build) with the bytes the decoded streams
 * of w explain (header, core streams, bias block, padding: from each
 * stream's start to the end of its coefficient-table entry) in ranges of
 * class NBG_LEDGER_DECODED_COEFFICIENTS, the rest of the coefficient
 * section preserved-opaque as before.  w must have been decoded from m.
 */
NBG_API nbg_code nbg_ledger_build_weights(const nbg_model *m, const nbg_weights *w,
					  nbg_ledger **out, nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif

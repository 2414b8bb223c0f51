/*
 * weights_internal.h - the layout of a decoded weights result
 * (nbg_weights), shared by the decoder (weights.c) and the ledger it
 * refines (weights_ledger.c); the reports read a result through the
 * accessors of nbg/weights.h and coefficients.h.  Private to lib/coef.
 */
#ifndef NBG_WEIGHTS_INTERNAL_H
#define NBG_WEIGHTS_INTERNAL_H

#include "coef/coefficients.h"
#include "common/internal.h"
#include "nbg/weights.h"

struct nbg_weights_op {
	size_t index, operation;
	uint32_t command, layer_id, type;
	nbg_weights_status status;
	const char *reason_id;   /* static; "" when decoded */
	char reason[200];
	uint64_t bit;
	uint64_t stream_offset, stream_size;
	nbg_weights_format format;
	unsigned order;
	uint32_t cores, data_type;
	uint32_t plane;          /* the decode's nbg_coef_out.plane */
	uint32_t shape[4];       /* out, z, ky, kx */
	int32_t zero_point, in_zero_point;
	int int8;                /* decoded int8 codes (two's complement) */
	unsigned code_bytes;     /* bytes per code: 2 for int16 and fp16 kernels, 4 for
				  * NN_LUT tables (float32), else 1 */
	/* the operation whose decode of the same stream this one shares: its
	 * arrays are that one's (it alone frees them); itself when it decoded
	 * its stream or has none */
	struct nbg_weights_op *first;
	size_t at;               /* its position in the result */
	uint8_t *codes;
	int32_t *bias_stored, *bias;
	float *scale;
	int64_t *bias64;         /* int16 kernels: the stored 48-bit biases */
	float *slope;            /* fp16 PReLU layers: the slope per channel */
	/* NN_LUT tables (codes: the entries' values, float32): the three words
	 * after the entries, and each entry's input (half-precision bits)
	 * where established (fp16 data), else NULL */
	uint32_t lut_tail[3];
	uint16_t *lut_inputs;
	/* a convolution's NN_LUT operation: its table after the kernels (float32
	 * values, native order) and the table's byte offset in the stream */
	uint8_t *lut_table;
	uint64_t lut_offset;
	/* nbg_weights_op_stats' figures of the first's codes, computed at the
	 * first call and kept (atomic): bit 63 set once computed, min in bits
	 * 0-7, max in 8-15, zero points from bit 16 */
	uint64_t stats;
};

/* Bytes the decoded streams explain, merged, in file order. */
typedef struct nbg_weights_span {
	uint64_t offset, size;
	size_t operation;        /* the OPERATIONS record of the first stream in it */
} nbg_weights_span;

struct nbg_weights {
	size_t count;
	nbg_weights_op *ops;
	size_t status_counts[NBG_WEIGHTS_STATUS_COUNT];
	size_t span_count;
	nbg_weights_span *spans;
	uint64_t explained;
};

/* A TP operation that is a fully connected layer: its command loads
 * coefficients through alu_load_pwl_lut_address (patched from a
 * coefficient-table entry: *r) with alu_load_pwl_lut and alu_pwl_enable 0,
 * over a 1x1 input image (doc/weights.md). */
NBG_INTERNAL bool nbg_weights_tp_fc(const nbg_graph *g, const nbg_cmd_op *op, const nbg_cmd *cmd,
				    nbg_cmd_ref *r);
/* Its outputs: the product of the six output loop counts (0x10000 when
 * above 0xFFFF). */
NBG_INTERNAL uint32_t nbg_weights_tp_fc_outputs(const nbg_cmd *cmd);

#endif

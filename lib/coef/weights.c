/*
 * weights.c - nbg_weights_decode(): for every NN-engine operation, its
 * kernel stream located through the kernel patch and the coefficient table,
 * the descriptor's view of it, the format of its target family (or every
 * format in turn for a target whose family is not known), and the result's
 * accessors.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/graph/commands_lib.h"
#include "coef/coef_internal.h"
#include "coef/weights_internal.h"
#include "common/half.h"

/* The targets whose family the corpus establishes: every stream of theirs
 * that decodes does so with this format (doc/weights.md). */
static const struct {
	uint32_t target;
	nbg_weights_format format;
	int six_first; /* 1x1 kernels over several channels: write_core_6 first */
	int wide;      /* v7 layout, kernels beyond 3x3: an NBG_COEF_WIDE_ order */
} families[] = {
	{ 0x88, NBG_WEIGHTS_FORMAT_V7, 1, NBG_COEF_WIDE_CHUNKS },
	{ 0x7d, NBG_WEIGHTS_FORMAT_V7, 0, NBG_COEF_WIDE_ROWS },
	{ 0x99, NBG_WEIGHTS_FORMAT_V8B, 1, NBG_COEF_WIDE_CHUNKS },
	{ 0xa1, NBG_WEIGHTS_FORMAT_V8B, 1, NBG_COEF_WIDE_NONE },
	{ 0xb9, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },        { 0xbe, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },
	{ 0xe8, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },        { 0xee, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },
	{ 0xad, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },        { 0x1000000e, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },
	{ 0x10000016, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },  { 0x1000003b, NBG_WEIGHTS_FORMAT_V8A, 0, 0 },
};

nbg_weights_format nbg_weights_target_format(uint32_t target)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (families[i].target == target)
			return families[i].format;
	return NBG_WEIGHTS_FORMAT_NONE;
}

static int six_first(uint32_t target)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (families[i].target == target)
			return families[i].six_first;
	return 1; /* Mesa's choice */
}

/* The order of a kernel beyond 3x3 in the v7 layout: established per
 * target by the networks compiled for several targets (doc/weights.md). */
static int wide_order(uint32_t target)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (families[i].target == target)
			return families[i].wide;
	return NBG_COEF_WIDE_NONE;
}

static void set_reason(nbg_weights_op *w, nbg_weights_status st, const char *id, uint64_t bit,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void set_reason(nbg_weights_op *w, nbg_weights_status st, const char *id, uint64_t bit,
		       const char *fmt, ...)
{
	va_list ap;

	w->status = st;
	w->reason_id = id;
	w->bit = bit;
	va_start(ap, fmt);
	vsnprintf(w->reason, sizeof(w->reason), fmt, ap);
	va_end(ap);
}

/* ----------------------------------------------------------- locating */

/* The coefficient table kernel patches name: COEF_DATA_TABLE, else (v1)
 * the LCDT. */
uint64_t nbg_weights_coefficient_bytes(const nbg_graph *g)
{
	int ti = nbg_command_coef_table(g);
	return ti >= 0 ? nbg_graph_table_at(g, (size_t)ti)->data_size : 0;
}

static bool locate(const nbg_model *m, const nbg_graph *g, const nbg_cmd_ref *r,
		   nbg_weights_op *w)
{
	switch (nbg_command_coef_locate(m, g, r, &w->stream_offset, &w->stream_size)) {
	case NBG_COEF_REF_OK:
		return true;
	case NBG_COEF_REF_UNPATCHED:
		set_reason(w, NBG_WEIGHTS_NO_STREAM, "no-kernel-reference", UINT64_MAX,
			   "no patch relocates the command's kernel_address");
		return false;
	case NBG_COEF_REF_NOT_TABLE: {
		const char *src = nbg_graph_source_type_name(r->source_type);
		set_reason(w, NBG_WEIGHTS_NO_STREAM, "no-coefficient-entry", UINT64_MAX,
			   "the kernel patch's source is %s, not a coefficient table entry",
			   src ? src : "unknown");
		return false;
	}
	case NBG_COEF_REF_NO_ENTRY:
		break;
	}
	int ti = nbg_command_coef_table(g);
	const nbg_graph_table *t = ti >= 0 ? nbg_graph_table_at(g, (size_t)ti) : NULL;
	set_reason(w, NBG_WEIGHTS_NO_STREAM, "no-coefficient-entry", UINT64_MAX,
		   "the kernel patch names entry %d at offset %llu; %s has no such entry "
		   "inside its data", r->index,
		   (unsigned long long)(m->version < 0x10009u ? r->offset : r->src_offset),
		   t ? t->name : "the file has no coefficient table");
	return false;
}

/* ------------------------------------------------------------ shapes */

static void shape_of(const nbg_model *m, const nbg_cmd *cmd, nbg_coef_shape *s, uint32_t *ky_field)
{
	uint32_t kx = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_XY_SIZE);

	memset(s, 0, sizeof(*s));
	*ky_field = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Y_SIZE);
	s->kx = kx;
	s->ky = *ky_field ? *ky_field : kx;
	s->depthwise = nbg_cmd_nn(cmd, NBG_NNF_DEPTHWISE) != 0;
	s->kz = s->depthwise ? 1
			     : nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Z_SIZE) |
				       nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Z_SIZE2) << 14;
	s->out = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_Z_SIZE);
	s->superblock = nbg_cmd_nn(cmd, NBG_NNF_KERNELS_PER_CORE);
	s->zero_point = nbg_cmd_nn(cmd, NBG_NNF_COEF_ZERO_POINT);
	s->in_zero_point = (int32_t)nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_BORDER_CONST);
	s->per_channel = nbg_cmd_nn(cmd, NBG_NNF_PER_CHANNEL_POST_MUL) != 0;
	s->plane[0] = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_X_SIZE) *
		      nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_Y_SIZE);
	s->plane[1] = nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_X_STRIDE) *
		      nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_Y_STRIDE);
	/* the v7 header holds a word per core: 16 fit its 64 bytes */
	s->v7_cores = m->family == 1 && m->v1.nn_core_count > 16 ? m->v1.nn_core_count : 16;
	s->six_first = six_first(m->target);
	s->wide = wide_order(m->target);
}

/* A fully connected command of target 0x7d (doc/weights.md, "Fully connected
 * commands of target 0x7d"): a 1x1 convolution of x*y pixels, its image
 * reshaped to x*y columns of kernel_xy_size rows, kz = channels / rows.  Its
 * stream is a v7 stream of kernels one column wide: kx 1, ky the rows.  True
 * when the command has that shape (in y = ky, out y 1, out x = in x), and
 * the shape is then set so. */
static bool fc_column(const nbg_cmd *cmd, nbg_coef_shape *s)
{
	uint32_t k = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_XY_SIZE), ky = nbg_cmd_nn(cmd, NBG_NNF_KERNEL_Y_SIZE);

	if (s->depthwise || (ky && ky != k) || k < 2 ||
	    nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_Y_SIZE) != k ||
	    nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_Y_SIZE) != 1 ||
	    nbg_cmd_nn(cmd, NBG_NNF_OUT_IMAGE_X_SIZE) != nbg_cmd_nn(cmd, NBG_NNF_IN_IMAGE_X_SIZE))
		return false;
	s->kx = 1;
	s->ky = k;
	return true;
}

/* Streams nbgkit does not establish, by what the command says; false when
 * the operation is one of them. */
static bool supported(const nbg_model *m, const nbg_cmd_op *op, const nbg_cmd *cmd,
		      nbg_coef_shape *s, uint32_t ky_field, int conv_lut, nbg_weights_op *w)
{
	const char *dt = nbg_command_data_type_name(op->kernel_type);

	if (op->type != NBG_GRAPH_OP_NN && !conv_lut) {
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-operation-type", UINT64_MAX,
			   "unsupported (an %s operation: its kernel is not a convolution's)",
			   nbg_graph_op_type_name(op->type));
		return false;
	}
	if (op->kernel_type != NBG_COEF_TYPE_UINT8 && op->kernel_type != NBG_COEF_TYPE_INT8 &&
	    op->kernel_type != NBG_COEF_TYPE_INT16 && op->kernel_type != NBG_COEF_TYPE_FP16) {
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-data-type", UINT64_MAX,
			   "unsupported (%s kernels: their stream is not established)",
			   dt ? dt : "unknown");
		return false;
	}
	/* int8 kernels: every corpus stream has input zero point 0, where the
	 * stored bias is the bias; how another would be corrected is open */
	if (op->kernel_type == NBG_COEF_TYPE_INT8 && s->in_zero_point != 0) {
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-input-zero-point", UINT64_MAX,
			   "unsupported (int8 kernels with in_image_border_const %d: no sample "
			   "shows how their stored bias is corrected)", s->in_zero_point);
		return false;
	}
	s->int8 = op->kernel_type == NBG_COEF_TYPE_INT8;
	s->bit16 = op->kernel_type == NBG_COEF_TYPE_INT16;
	s->fp16 = op->kernel_type == NBG_COEF_TYPE_FP16;
	if (m->target == 0x7d && nbg_cmd_nn(cmd, NBG_NNF_LAYER_TYPE) == 1 && !fc_column(cmd, s)) {
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-fully-connected", UINT64_MAX,
			   "unsupported (a fully connected layer of target 0x7d whose image is not "
			   "one column of kernel_xy_size rows over out_image_x_size pixels: its "
			   "stream is not established)");
		return false;
	}
	/* a kernel one value wide or high has the same value order whichever
	 * axis comes first; others need a sample to fix it */
	if (ky_field && ky_field != nbg_cmd_nn(cmd, NBG_NNF_KERNEL_XY_SIZE) && s->kx != 1 &&
	    s->ky != 1) {
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-kernel-shape", UINT64_MAX,
			   "unsupported (a %ux%u kernel: no non-square sample fixes the axis order)",
			   s->kx, ky_field);
		return false;
	}
	return true;
}

/* ----------------------------------------------------------- decoding */

static void take(nbg_weights_op *w, nbg_coef_out *o, const nbg_coef_shape *s)
{
	uint64_t n = (uint64_t)s->out * nbg_coef_ksize(s);

	w->status = NBG_WEIGHTS_DECODED;
	w->reason_id = "";
	w->reason[0] = '\0';
	w->bit = UINT64_MAX;
	w->format = o->format;
	w->order = o->order;
	w->cores = o->cores;
	w->plane = o->plane;
	w->codes = o->codes;
	w->bias_stored = o->bias_stored;
	w->bias = o->bias;
	w->scale = o->scale;
	w->bias64 = o->bias64;
	w->slope = o->slope;
	w->int8 = s->int8;
	w->code_bytes = s->bit16 || s->fp16 ? 2 : 1;
	(void)n;
}

/* Decodes with the target's format, or every format in turn; false only
 * when memory ran out. */
static bool decode_one(const nbg_model *m, const nbg_coef_shape *s, nbg_weights_op *w)
{
	nbg_weights_format fam = nbg_weights_target_format(m->target), tried[3];
	const uint8_t *p = m->data + w->stream_offset;
	nbg_coef_out got, first;
	size_t nt = 0, ok = 0;

	if (s->fp16)
		tried[nt++] = NBG_WEIGHTS_FORMAT_F32; /* its own layout, whatever the target */
	else if (fam != NBG_WEIGHTS_FORMAT_NONE)
		tried[nt++] = fam;
	else {
		tried[nt++] = NBG_WEIGHTS_FORMAT_V8A;
		tried[nt++] = NBG_WEIGHTS_FORMAT_V8B;
		tried[nt++] = NBG_WEIGHTS_FORMAT_V7;
	}
	memset(&got, 0, sizeof(got));
	for (size_t i = 0; i < nt; i++) {
		nbg_coef_out o;
		int r = nbg_coef_decode(p, (size_t)w->stream_size, s, tried[i], &o);
		if (r == NBG_COEF_NO_MEMORY) {
			nbg_coef_out_free(&o);
			nbg_coef_out_free(&got);
			return false;
		}
		if (r == NBG_COEF_DECODED && ok++ == 0)
			got = o;
		else
			nbg_coef_out_free(&o);
		if (i == 0)
			first = o;
	}
	if (ok == 1) {
		take(w, &got, s);
		return true;
	}
	nbg_coef_out_free(&got);
	if (ok > 1)
		set_reason(w, NBG_WEIGHTS_NOT_DECODED, "ambiguous-format", UINT64_MAX,
			   "%zu formats decode the stream consistently; none is kept", ok);
	else if (!strncmp(first.reason_id, "unsupported", 11))
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, first.reason_id, first.bit, "%s",
			   first.reason);
	else
		set_reason(w, NBG_WEIGHTS_NOT_DECODED, first.reason_id, first.bit, "%s%s",
			   nt > 1 ? "every format fails; v8a: " : "", first.reason);
	return true;
}

/* ------------------------------------------- TP fully connected layers */

bool nbg_weights_tp_fc(const nbg_graph *g, const nbg_cmd_op *op, const nbg_cmd *cmd,
		       nbg_cmd_ref *r)
{
	if (!op || !cmd || op->engine != NBG_CMD_TP || cmd->engine != NBG_CMD_TP ||
	    nbg_cmd_tp(cmd, NBG_TPF_ALU_LOAD_PWL_LUT) || nbg_cmd_tp(cmd, NBG_TPF_ALU_PWL_ENABLE) ||
	    nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_X_SIZE) != 1 || nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Y_SIZE) != 1)
		return false;
	nbg_command_field_ref(g, cmd, op->operation, NBG_TPF_ALU_LOAD_PWL_LUT_ADDRESS, r);
	return r->patched && r->source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC;
}

uint32_t nbg_weights_tp_fc_outputs(const nbg_cmd *cmd)
{
	uint64_t n = 1;

	for (int i = 0; i < 6; i++) {
		n *= nbg_cmd_tp(cmd, nbg_tp_loop_counts[i]);
		if (n > 0xFFFF)
			return 0x10000;
	}
	return (uint32_t)n;
}

/* An operation whose stream is to be decoded, found by the first pass:
 * what the decoder is given besides the stream. */
typedef struct pending {
	uint64_t offset, size; /* the stream's (the operation's stream_offset, _size) */
	size_t at;             /* its position in the result */
	int tp;                /* a TP fully connected layer's stream (tp-fc) */
	int lut;               /* an NN_LUT operation's table */
	int conv_lut;          /* an NN_LUT operation's kernels, then its table */
	nbg_coef_shape s;
} pending;

/* A TP fully connected layer: inputs in_image_z_size (a 1x1 image), outputs
 * the product of the output loop counts, the zero points coef_zp and in_zp.
 * True when its stream is to be decoded (p filled). */
static bool tp_fc_ready(const nbg_model *m, const nbg_graph *g, const nbg_cmd_op *op,
			const nbg_cmd *cmd, const nbg_cmd_ref *r, nbg_weights_op *w, pending *p)
{
	nbg_coef_shape *s = &p->s;

	memset(s, 0, sizeof(*s));
	p->tp = 1;
	s->out = nbg_weights_tp_fc_outputs(cmd);
	s->kz = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Z_SIZE);
	s->kx = s->ky = s->superblock = 1;
	s->zero_point = nbg_cmd_tp(cmd, NBG_TPF_COEF_ZP);
	s->in_zero_point = (int32_t)nbg_cmd_tp(cmd, NBG_TPF_IN_ZP);
	w->shape[0] = s->out;
	w->shape[1] = s->kz;
	w->shape[2] = w->shape[3] = 1;
	w->zero_point = (int32_t)s->zero_point;
	w->in_zero_point = s->in_zero_point;
	w->data_type = op->in_type;
	if (!locate(m, g, r, w))
		return false;
	/* uint8 data, or int8 (its codes two's complement, as int8 NN kernels) */
	s->int8 = op->in_type == NBG_COEF_TYPE_INT8 && op->out_type == NBG_COEF_TYPE_INT8;
	if (!s->int8 && (op->in_type != 0 || op->out_type != 0)) {
		const char *dt = nbg_command_data_type_name(op->in_type ? op->in_type : op->out_type);
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-data-type", UINT64_MAX,
			   "unsupported (a fully connected layer on %s data: its stream is not "
			   "established)",
			   dt ? dt : "unknown");
		return false;
	}
	/* the stored bias is the bias whatever in_zp (doc/weights.md: the
	 * gender network's layer on in_zp 128 against its NN lowering) */
	return true;
}

/* Decodes a TP fully connected layer's stream; false only when memory ran
 * out. */
static bool decode_tp(const nbg_model *m, const nbg_coef_shape *s, nbg_weights_op *w)
{
	nbg_coef_out o;
	int rc = nbg_coef_decode_tpfc(m->data + w->stream_offset, (size_t)w->stream_size, s, &o);

	if (rc == NBG_COEF_NO_MEMORY)
		return false;
	if (rc == NBG_COEF_DECODED) {
		take(w, &o, s);
		return true;
	}
	set_reason(w, !strncmp(o.reason_id, "unsupported", 11) ? NBG_WEIGHTS_UNSUPPORTED
							       : NBG_WEIGHTS_NOT_DECODED,
		   o.reason_id, o.bit, "%s", o.reason);
	return true;
}

/*
 * An NN_LUT table (doc/weights.md, "Lookup tables of the NN engine") at
 * tab: 1,024 entries of the wide layout of TP tables, then three words into
 * tail; *values gets the entries' values as float32 bytes (each exact: 15
 * mantissa bits), *inputs (fp16 data) the inputs the entries hold the
 * function at.  -1 when memory ran out, 0 when an entry is no value of the
 * layout (w's reason set, at bit base + the entry's), 1 when read.
 */
static int read_lut(const uint8_t *tab, int fp16, uint64_t base, nbg_weights_op *w, uint32_t tail[3],
		    uint8_t **values, uint16_t **inputs)
{
	uint8_t *v = malloc(NBG_LUT_ENTRIES * 4);
	uint16_t *in = fp16 ? malloc(NBG_LUT_ENTRIES * sizeof(*in)) : NULL;
	if (!v || (fp16 && !in)) {
		free(v);
		free(in);
		return -1;
	}
	for (uint32_t k = 0; k < 3; k++)
		tail[k] = le32(tab + 4 * (NBG_LUT_ENTRIES + k));
	int mode = nbg_command_nnlut_mode(tail[0]);
	for (uint32_t i = 0; i < NBG_LUT_ENTRIES; i++) {
		uint32_t word = le32(tab + 4 * i);
		double x;
		if (!nbg_command_lut_entry(word, 1, &x)) {
			set_reason(w, NBG_WEIGHTS_NOT_DECODED, "lut-entry-invalid", base + 32ull * i,
				   "entry %u (0x%08x) is no finite value of the table's layout "
				   "(a sign, 5 exponent and 15 mantissa bits in the low 21 bits)",
				   i, word);
			free(v);
			free(in);
			return 0;
		}
		float f = (float)x;
		uint32_t bits;
		memcpy(&bits, &f, sizeof(bits));
		put_le32(v + 4 * i, bits);
		if (in)
			in[i] = nbg_command_nnlut_input(i, mode);
	}
	*values = v;
	*inputs = in;
	return 1;
}

/* An NN_LUT operation's stream that is its table alone: the codes are the
 * table's values.  False only when memory ran out. */
static bool decode_lut(const nbg_model *m, const nbg_coef_shape *s, nbg_weights_op *w)
{
	uint8_t *v;
	uint16_t *in;

	if (w->stream_size != NBG_NNLUT_BYTES) {
		set_reason(w, NBG_WEIGHTS_UNSUPPORTED, "unsupported-lut-size", UINT64_MAX,
			   "unsupported (an NN_LUT stream of %" PRIu64 " bytes and no convolution: "
			   "the tables established are %u bytes, 1,024 entries and 3 words)",
			   w->stream_size, NBG_NNLUT_BYTES);
		return true;
	}
	int rc = read_lut(m->data + w->stream_offset, s->fp16, 0, w, w->lut_tail, &v, &in);
	if (rc <= 0)
		return rc == 0;
	w->status = NBG_WEIGHTS_DECODED;
	w->reason_id = "";
	w->reason[0] = '\0';
	w->bit = UINT64_MAX;
	w->format = NBG_WEIGHTS_FORMAT_LUT;
	w->codes = v;
	w->code_bytes = 4;
	w->lut_inputs = in;
	return true;
}

/*
 * An NN_LUT operation whose command is a convolution and whose stream is
 * longer than a table: the convolution's kernel stream, then the table at
 * the last NBG_NNLUT_SPAN bytes (its 4,108 bytes, zeros to the 64-byte
 * end; doc/weights.md, "A convolution and its table in one stream").  The
 * kernels decode as any convolution's within the bytes before the table;
 * the table is kept beside them (nbg_weights_op_lut_table).  False only
 * when memory ran out.
 */
static bool decode_conv_lut(const nbg_model *m, const nbg_coef_shape *s, nbg_weights_op *w)
{
	uint64_t size = w->stream_size, k = size - NBG_NNLUT_SPAN;
	const uint8_t *p = m->data + w->stream_offset;
	uint8_t *v;
	uint16_t *in;

	for (uint64_t i = k + NBG_NNLUT_BYTES; i < size; i++)
		if (p[i]) {
			set_reason(w, NBG_WEIGHTS_NOT_DECODED, "nonzero-tail", 8 * i,
				   "byte %" PRIu64 " after the table at byte %" PRIu64 " is 0x%02x, "
				   "not the zero padding to the stream's end", i, k, p[i]);
			return true;
		}
	int rc = read_lut(p + k, 0, 8 * k, w, w->lut_tail, &v, &in);
	if (rc <= 0)
		return rc == 0;
	free(in);
	w->stream_size = k;
	bool ok = decode_one(m, s, w);
	w->stream_size = size;
	if (!ok || w->status != NBG_WEIGHTS_DECODED) {
		free(v);
		return ok;
	}
	w->lut_table = v;
	w->lut_offset = k;
	return true;
}

/* The first pass over operation i: what its command says, where its stream
 * is, whether nbgkit decodes such a stream.  True when it is to be decoded
 * (p filled). */
static bool op_ready(const nbg_model *m, const nbg_graph *g, const nbg_commands *c, size_t i,
		     nbg_weights_op *w, pending *p)
{
	const nbg_cmd_op *op = nbg_commands_op_at(c, i);
	const nbg_cmd *cmd = nbg_commands_at(c, op->engine, op->command);
	uint32_t ky_field;

	w->index = i;
	w->operation = op->operation;
	w->command = op->command;
	w->layer_id = op->layer_id;
	w->type = op->type;
	w->bit = UINT64_MAX;
	w->data_type = op->kernel_type;
	w->first = w;
	p->conv_lut = 0;
	if (op->engine == NBG_CMD_TP) {
		nbg_cmd_ref r;
		return nbg_weights_tp_fc(g, op, cmd, &r) && tp_fc_ready(m, g, op, cmd, &r, w, p);
	}
	p->tp = 0;
	p->lut = op->type == NBG_GRAPH_OP_NN_LUT;
	if (p->lut) {
		memset(&p->s, 0, sizeof(p->s));
		w->shape[0] = NBG_LUT_ENTRIES;
		w->shape[1] = w->shape[2] = w->shape[3] = 1;
		p->s.fp16 = op->kernel_type == NBG_COEF_TYPE_FP16;
		if (!locate(m, g, &op->kernel_ref, w))
			return false;
		/* a longer stream under a convolution's command: its kernels, then
		 * the table */
		if (!cmd || cmd->engine != NBG_CMD_NN || !nbg_nnlut_convolution(op, w->stream_size))
			return true;
		p->lut = 0;
		p->conv_lut = 1;
	}
	shape_of(m, cmd, &p->s, &ky_field);
	w->shape[0] = p->s.out;
	w->shape[1] = p->s.kz;
	w->shape[2] = p->s.ky;
	w->shape[3] = p->s.kx;
	w->zero_point = (int32_t)p->s.zero_point;
	w->in_zero_point = p->s.in_zero_point;
	if ((!p->conv_lut && !locate(m, g, &op->kernel_ref, w)) ||
	    !supported(m, op, cmd, &p->s, ky_field, p->conv_lut, w))
		return false;
	w->shape[2] = p->s.ky; /* a 0x7d fully connected command's kernels are one column */
	w->shape[3] = p->s.kx;
	return true;
}

/* ------------------------------------------------- each stream decoded once */

/* By stream (offset, size), then position: the first of a stream's
 * operations comes first. */
static int cmp_pending(const void *a, const void *b)
{
	const pending *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* What the decoder reads from an operation's command, its output planes
 * aside, is the same for a and b. */
static bool same_kernels(const pending *a, const pending *b)
{
	const nbg_coef_shape *x = &a->s, *y = &b->s;

	return a->tp == b->tp && a->lut == b->lut && a->conv_lut == b->conv_lut && x->out == y->out && x->kz == y->kz && x->ky == y->ky &&
	       x->kx == y->kx && x->superblock == y->superblock &&
	       x->zero_point == y->zero_point && x->in_zero_point == y->in_zero_point &&
	       x->depthwise == y->depthwise && x->per_channel == y->per_channel &&
	       x->v7_cores == y->v7_cores && x->six_first == y->six_first && x->wide == y->wide &&
	       x->int8 == y->int8 && x->bit16 == y->bit16 && x->fp16 == y->fp16;
}

/* b's command may share the decode made with a's: the same kernels, and
 * the same output planes, or a decoded stream whose offset words (when it
 * has any) are the channels times one of b's planes.  (Tiles of one layer
 * share a stream and differ in their output images; where the offset words
 * map the channels, they map them one way only, whichever plane fits.) */
static bool shares(const pending *a, const nbg_weights_op *first, const pending *b)
{
	if (!same_kernels(a, b))
		return false;
	if (a->s.plane[0] == b->s.plane[0] && a->s.plane[1] == b->s.plane[1])
		return true;
	return first->status == NBG_WEIGHTS_DECODED &&
	       (!first->plane || first->plane == b->s.plane[0] || first->plane == b->s.plane[1]);
}

/* w names first's stream: first's decode is w's. */
static void share(const nbg_weights_op *first, nbg_weights_op *w)
{
	w->status = first->status;
	w->reason_id = first->reason_id;
	memcpy(w->reason, first->reason, sizeof(w->reason));
	w->bit = first->bit;
	w->format = first->format;
	w->order = first->order;
	w->cores = first->cores;
	w->plane = first->plane;
	w->codes = first->codes;
	w->bias_stored = first->bias_stored;
	w->bias = first->bias;
	w->scale = first->scale;
	w->bias64 = first->bias64;
	w->slope = first->slope;
	w->code_bytes = first->code_bytes;
	memcpy(w->lut_tail, first->lut_tail, sizeof(w->lut_tail));
	w->lut_inputs = first->lut_inputs;
	w->lut_table = first->lut_table;
	w->lut_offset = first->lut_offset;
	w->first = (nbg_weights_op *)first;
}

/* How many of p[0..n) (sorted) name the stream of p[0]. */
static size_t group_end(const pending *p, size_t n)
{
	size_t j = 1;

	while (j < n && p[j].offset == p[0].offset && p[j].size == p[0].size)
		j++;
	return j;
}

/*
 * Each stream decoded once: the operations that name one stream (its file
 * offset and size) share the decode made for the first of them in the
 * result's order; one that names it with another shape is not decoded
 * (shared-stream-conflict), as is every operation whose stream starts
 * inside a stream decoded before it in file order (overlapping-stream).
 * The decoder so reads each byte of the coefficient data at most once (per
 * format tried), whatever the number of records.  False only when memory
 * ran out.
 */
static bool decode_streams(const nbg_model *m, nbg_weights *r, pending *p, size_t n)
{
	const nbg_weights_op *last = NULL; /* the decoded stream that ends last */

	qsort(p, n, sizeof(*p), cmp_pending);
	for (size_t i = 0, j; i < n; i += j) {
		nbg_weights_op *first = &r->ops[p[i].at];
		j = group_end(p + i, n - i);
		if (last && first->stream_offset < last->stream_offset + last->stream_size) {
			for (size_t k = 0; k < j; k++)
				set_reason(&r->ops[p[i + k].at], NBG_WEIGHTS_NOT_DECODED,
					   "overlapping-stream", UINT64_MAX, "its stream (offset %"
					   PRIu64 ") starts inside the stream of operation %zu (offset %"
					   PRIu64 ", %" PRIu64 " bytes): each coefficient byte is "
					   "decoded once", first->stream_offset, last->operation,
					   last->stream_offset, last->stream_size);
			continue;
		}
		if (!(p[i].lut	    ? decode_lut(m, &p[i].s, first)
		      : p[i].conv_lut ? decode_conv_lut(m, &p[i].s, first)
		      : p[i].tp	    ? decode_tp(m, &p[i].s, first)
				    : decode_one(m, &p[i].s, first)))
			return false;
		if (!last || first->stream_offset + first->stream_size >
				     last->stream_offset + last->stream_size)
			last = first;
		for (size_t k = 1; k < j; k++) {
			nbg_weights_op *w = &r->ops[p[i + k].at];
			if (shares(&p[i], first, &p[i + k]))
				share(first, w);
			else
				set_reason(w, NBG_WEIGHTS_NOT_DECODED, "shared-stream-conflict",
					   UINT64_MAX, "it names the stream of operation %zu with "
					   "other kernels or output planes: a stream is decoded once, "
					   "for the first operation naming it", first->operation);
		}
	}
	return true;
}

/* ------------------------------------------------------------- result */

static int cmp_span(const void *a, const void *b)
{
	const nbg_weights_span *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The bytes decoded streams explain, in file order (each stream once: the
 * operations sharing it name it by the first; decoded streams never
 * overlap, the merge below is for safety). */
static bool spans(nbg_weights *r)
{
	size_t n = 0;

	r->spans = malloc((r->count ? r->count : 1) * sizeof(*r->spans));
	if (!r->spans)
		return false;
	for (size_t i = 0; i < r->count; i++)
		if (r->ops[i].status == NBG_WEIGHTS_DECODED && r->ops[i].first == &r->ops[i])
			r->spans[n++] = (nbg_weights_span){ r->ops[i].stream_offset,
							    r->ops[i].stream_size,
							    r->ops[i].operation };
	qsort(r->spans, n, sizeof(*r->spans), cmp_span);
	r->span_count = 0;
	for (size_t i = 0; i < n; i++) {
		nbg_weights_span *last = r->span_count ? &r->spans[r->span_count - 1] : NULL;
		if (last && r->spans[i].offset < last->offset + last->size) {
			uint64_t end = r->spans[i].offset + r->spans[i].size;
			if (end > last->offset + last->size)
				last->size = end - last->offset;
			continue;
		}
		r->spans[r->span_count++] = r->spans[i];
	}
	for (size_t i = 0; i < r->span_count; i++)
		r->explained += r->spans[i].size;
	return true;
}

/* The operations with a kernel stream: every NN-engine one, and the TP
 * fully connected layers. */
static bool is_weights_op(const nbg_graph *g, const nbg_commands *c, const nbg_cmd_op *op)
{
	nbg_cmd_ref r;

	if (op->engine == NBG_CMD_NN)
		return true;
	return nbg_weights_tp_fc(g, op, nbg_commands_at(c, op->engine, op->command), &r);
}

/* Every operation's first pass, then each stream decoded once; false only
 * when memory ran out. */
static bool decode_all(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		       nbg_weights *r, pending *p)
{
	size_t np = 0;

	for (size_t i = 0; i < nbg_commands_op_count(c); i++) {
		nbg_weights_op *w;
		if (!is_weights_op(g, c, nbg_commands_op_at(c, i)))
			continue;
		w = &r->ops[r->count];
		w->at = r->count++;
		if (op_ready(m, g, c, i, w, &p[np])) {
			p[np].offset = w->stream_offset;
			p[np].size = w->stream_size;
			p[np++].at = w->at;
		}
	}
	if (!decode_streams(m, r, p, np))
		return false;
	for (size_t i = 0; i < r->count; i++)
		r->status_counts[r->ops[i].status]++;
	return spans(r);
}

nbg_code nbg_weights_decode(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
			    nbg_weights **out, nbg_error *err)
{
	nbg_weights *r;
	pending *p = NULL;
	size_t n = 0;

	if (out)
		*out = NULL;
	if (!m || !m->data || !g || !c || !out)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "no model, graph, commands or result pointer was given");
	for (size_t i = 0; i < nbg_commands_op_count(c); i++)
		n += is_weights_op(g, c, nbg_commands_op_at(c, i));
	if (!(r = calloc(1, sizeof(*r))) || !(r->ops = calloc(n ? n : 1, sizeof(*r->ops))) ||
	    !(p = calloc(n ? n : 1, sizeof(*p))) || !decode_all(m, g, c, r, p))
		goto oom;
	free(p);
	*out = r;
	return NBG_OK;
oom:
	free(p);
	nbg_weights_free(r);
	return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
			     "out of memory while decoding the kernel streams");
}

void nbg_weights_free(nbg_weights *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->count; i++) {
		if (w->ops[i].first != &w->ops[i])
			continue; /* the first's arrays */
		free(w->ops[i].codes);
		free(w->ops[i].bias_stored);
		free(w->ops[i].bias);
		free(w->ops[i].scale);
		free(w->ops[i].bias64);
		free(w->ops[i].slope);
		free(w->ops[i].lut_inputs);
		free(w->ops[i].lut_table);
	}
	free(w->ops);
	free(w->spans);
	free(w);
}

/* ---------------------------------------------------------- accessors */

size_t nbg_weights_count(const nbg_weights *w) { return w ? w->count : 0; }

const nbg_weights_op *nbg_weights_at(const nbg_weights *w, size_t i)
{
	return w && i < w->count ? &w->ops[i] : NULL;
}

size_t nbg_weights_status_count(const nbg_weights *w, nbg_weights_status s)
{
	return w && (unsigned)s < NBG_WEIGHTS_STATUS_COUNT ? w->status_counts[s] : 0;
}

uint64_t nbg_weights_explained_bytes(const nbg_weights *w) { return w ? w->explained : 0; }
size_t nbg_weights_op_index(const nbg_weights_op *o) { return o ? o->index : 0; }
size_t nbg_weights_op_operation(const nbg_weights_op *o) { return o ? o->operation : 0; }
uint32_t nbg_weights_op_command(const nbg_weights_op *o) { return o ? o->command : 0; }
size_t nbg_weights_op_first(const nbg_weights_op *o)
{
	return o ? (o->first ? o->first->at : o->at) : 0;
}
nbg_weights_status nbg_weights_op_status(const nbg_weights_op *o)
{
	return o ? o->status : NBG_WEIGHTS_STATUS_COUNT;
}
const char *nbg_weights_op_reason_id(const nbg_weights_op *o)
{
	return o && o->reason_id ? o->reason_id : "";
}
const char *nbg_weights_op_reason(const nbg_weights_op *o) { return o ? o->reason : NULL; }
uint64_t nbg_weights_op_bit_offset(const nbg_weights_op *o) { return o ? o->bit : 0; }
uint64_t nbg_weights_op_stream_offset(const nbg_weights_op *o) { return o ? o->stream_offset : 0; }
uint64_t nbg_weights_op_stream_size(const nbg_weights_op *o) { return o ? o->stream_size : 0; }
nbg_weights_format nbg_weights_op_format(const nbg_weights_op *o)
{
	return o ? o->format : NBG_WEIGHTS_FORMAT_NONE;
}
uint32_t nbg_weights_op_cores(const nbg_weights_op *o) { return o ? o->cores : 0; }
uint32_t nbg_weights_op_data_type(const nbg_weights_op *o) { return o ? o->data_type : 0; }
const uint32_t *nbg_weights_op_shape(const nbg_weights_op *o) { return o ? o->shape : NULL; }
int32_t nbg_weights_op_zero_point(const nbg_weights_op *o) { return o ? o->zero_point : 0; }
int32_t nbg_weights_op_input_zero_point(const nbg_weights_op *o)
{
	return o ? o->in_zero_point : 0;
}
const int32_t *nbg_weights_op_bias_stored(const nbg_weights_op *o)
{
	return o ? o->bias_stored : NULL;
}
const int32_t *nbg_weights_op_bias(const nbg_weights_op *o) { return o ? o->bias : NULL; }
const float *nbg_weights_op_scale(const nbg_weights_op *o) { return o ? o->scale : NULL; }
const int64_t *nbg_weights_op_bias_stored64(const nbg_weights_op *o)
{
	return o ? o->bias64 : NULL;
}
const float *nbg_weights_op_prelu_slope(const nbg_weights_op *o)
{
	return o ? o->slope : NULL;
}
const char *nbg_weights_op_npy_descr(const nbg_weights_op *o)
{
	unsigned dt = nbg_weights_op_data_type(o);
	if (nbg_weights_op_code_bytes(o) == 4)
		return "<f4";
	if (nbg_weights_op_code_bytes(o) == 2)
		return dt == 1 ? "<f2" : "<i2";
	return dt == 2 ? "|i1" : "|u1";
}

int nbg_weights_stat_value(const nbg_weights_op *o, uint32_t stat, double *v)
{
	if (nbg_weights_op_code_bytes(o) == 4) {
		float f;
		memcpy(&f, &stat, sizeof(f));
		*v = f;
		return 1;
	}
	if (nbg_weights_op_data_type(o) == 1) {
		*v = nbg_fp16_to_float((uint16_t)stat);
		return 1;
	}
	*v = (int32_t)stat;
	return 0;
}

const uint32_t *nbg_weights_op_lut_tail(const nbg_weights_op *o)
{
	return o && ((o->format == NBG_WEIGHTS_FORMAT_LUT && o->codes) || o->lut_table) ? o->lut_tail
											 : NULL;
}

const uint8_t *nbg_weights_op_lut_table(const nbg_weights_op *o, uint64_t *offset)
{
	if (!o || !o->lut_table)
		return NULL;
	if (offset)
		*offset = o->lut_offset;
	return o->lut_table;
}

const uint16_t *nbg_weights_op_lut_inputs(const nbg_weights_op *o)
{
	return o && o->format == NBG_WEIGHTS_FORMAT_LUT ? o->lut_inputs : NULL;
}

unsigned nbg_weights_op_code_bytes(const nbg_weights_op *o)
{
	return o && o->codes ? o->code_bytes : 0;
}

const char *nbg_weights_op_order(const nbg_weights_op *o)
{
	return o ? nbg_coef_order_name(o->order) : NULL;
}

const uint8_t *nbg_weights_op_codes(const nbg_weights_op *o, size_t *count)
{
	if (count)
		*count = 0;
	if (!o)
		return NULL;
	if (count)
		*count = o->codes ? (size_t)o->shape[0] * o->shape[1] * o->shape[2] * o->shape[3]
				  : 0;
	return o->codes;
}

/* fp16 codes: the smallest and largest value as their bit patterns
 * (float16, in the low 16 bits), zeros counted as equal to 0.0. */
static void stats_fp16(const nbg_weights_op *f, uint32_t *min, uint32_t *max,
		       uint64_t *zero_points)
{
	uint64_t n = (uint64_t)f->shape[0] * f->shape[1] * f->shape[2] * f->shape[3], zeros = 0;
	uint16_t lo = 0x7c00, hi = 0xfc00; /* +inf, -inf */
	for (uint64_t i = 0; i < n; i++) {
		uint16_t h = (uint16_t)(f->codes[2 * i] | f->codes[2 * i + 1] << 8);
		/* order by value: negatives reversed below positives */
		int32_t k = h & 0x8000 ? -(int32_t)(h & 0x7fff) : (int32_t)h;
		int32_t kl = lo & 0x8000 ? -(int32_t)(lo & 0x7fff) : (int32_t)lo;
		int32_t kh = hi & 0x8000 ? -(int32_t)(hi & 0x7fff) : (int32_t)hi;
		lo = k < kl ? h : lo;
		hi = k > kh ? h : hi;
		zeros += (h & 0x7fff) == 0;
	}
	if (min)
		*min = lo;
	if (max)
		*max = hi;
	if (zero_points)
		*zero_points = zeros;
}

/* NN_LUT tables: the float32 values' smallest and largest as their bits,
 * zeros counted (+-0). */
static void stats_f32(const nbg_weights_op *f, uint32_t *min, uint32_t *max, uint64_t *zero_points)
{
	float lo = INFINITY, hi = -INFINITY;
	uint64_t zeros = 0;

	for (uint32_t i = 0; i < f->shape[0]; i++) {
		uint32_t bits = le32(f->codes + 4 * i);
		float v;
		memcpy(&v, &bits, sizeof(v));
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		zeros += v == 0.0f;
	}
	if (min)
		memcpy(min, &lo, sizeof(*min));
	if (max)
		memcpy(max, &hi, sizeof(*max));
	if (zero_points)
		*zero_points = zeros;
}

/* int16 codes: computed at each call (their streams are small). */
static void stats16(const nbg_weights_op *f, uint32_t *min, uint32_t *max, uint64_t *zero_points)
{
	uint64_t n = (uint64_t)f->shape[0] * f->shape[1] * f->shape[2] * f->shape[3], zeros = 0;
	int32_t lo = 32767, hi = -32768;

	for (uint64_t i = 0; i < n; i++) {
		int32_t v = (int16_t)(uint16_t)(f->codes[2 * i] | f->codes[2 * i + 1] << 8);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		zeros += v == f->zero_point;
	}
	if (min)
		*min = (uint32_t)lo;
	if (max)
		*max = (uint32_t)hi;
	if (zero_points)
		*zero_points = zeros;
}

/* Computed when first asked (the reports), not while decoding, once per
 * stream: the operations sharing a decode share the figures. */
void nbg_weights_op_stats(const nbg_weights_op *o, uint32_t *min, uint32_t *max,
			  uint64_t *zero_points)
{
	if (!o)
		return;
	nbg_weights_op *f = o->first ? o->first : (nbg_weights_op *)o;
	if (f->status == NBG_WEIGHTS_DECODED && f->code_bytes == 4) {
		stats_f32(f, min, max, zero_points);
		return;
	}
	if (f->status == NBG_WEIGHTS_DECODED && f->code_bytes == 2 && f->data_type == 1) {
		stats_fp16(f, min, max, zero_points);
		return;
	}
	if (f->status == NBG_WEIGHTS_DECODED && f->code_bytes == 2) {
		stats16(f, min, max, zero_points);
		return;
	}
	uint64_t st = __atomic_load_n(&f->stats, __ATOMIC_ACQUIRE);

	/* int8 codes compare as signed: 0x80 flips the order into uint8's */
	uint8_t flip = f->int8 ? 0x80 : 0;
	if (!(st >> 63)) {
		uint8_t lo = 255, hi = 0, zp = (uint8_t)f->zero_point;
		uint64_t zeros = 0, n = 0;
		if (f->status == NBG_WEIGHTS_DECODED)
			n = (uint64_t)f->shape[0] * f->shape[1] * f->shape[2] * f->shape[3];
		else
			lo = flip;
		for (uint64_t i = 0; i < n; i++) {
			uint8_t c = f->codes[i] ^ flip;
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
			zeros += f->codes[i] == zp;
		}
		lo ^= flip;
		hi ^= flip;
		/* the same figures whichever thread stores them */
		st = 1ull << 63 | zeros << 16 | (uint64_t)hi << 8 | lo;
		__atomic_store_n(&f->stats, st, __ATOMIC_RELEASE);
	}
	if (min)
		*min = flip ? (uint32_t)(int32_t)(int8_t)(st & 0xff) : (uint32_t)(st & 0xff);
	if (max)
		*max = flip ? (uint32_t)(int32_t)(int8_t)(st >> 8 & 0xff) : (uint32_t)(st >> 8 & 0xff);
	if (zero_points)
		*zero_points = st >> 16 & ((1ull << 47) - 1);
}

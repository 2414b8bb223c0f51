/*
 * ops/tpfc.c - TP fully connected layers: a TP command that reads its
 * coefficients through alu_load_pwl_lut_address.  The weights record of
 * the operation says it is one (lib/coef/weights.c decodes the stream of
 * exactly these); every field the arithmetic depends on is checked to hold
 * the value the corpus' layers hold, the rest is refused (doc/cpu-backend.md, "TP
 * fully connected layers").
 */
#include <stdio.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/tp.h"
#include "cpu/quant.h"

/* Fields whose value changes what the TP unit computes, and the one value
 * LeNet's layers and the image classification network's (six targets)
 * hold (C).  alu_relu_enable, alu_horz_processing (the weights' data type),
 * the output count (alu_horz_proc_count, alu_vert_proc_count) and
 * flat_rounding_mode are checked apart (tpfc_relu_ok, tpfc_types_ok,
 * nbg_cpu_rounding). */
static const cpu_tp_field fixed[] = {
	{ NBG_TPF_ALU_I2F_ENABLE, 1 },
	{ NBG_TPF_ALU_F2I_ENABLE, 1 },
	{ NBG_TPF_ALU_SQUARE_ENABLE, 0 },
	{ NBG_TPF_ALU_HORZ_PROC_STRIDE, 0 },
	{ NBG_TPF_ALU_VERT_PROCESSING, 0 },
	{ NBG_TPF_ALU_NMS_ENABLE, 0 },
	{ NBG_TPF_ALU_PWL_ENABLE, 0 },
	{ NBG_TPF_ALU_MULT_ENABLE, 0 },
	{ NBG_TPF_ALU_Z_FILTER_MODE, 0 },
	{ NBG_TPF_ALU_SQUARE_PRESHIFT, 0 },
	{ NBG_TPF_ALU_INPUT_PRESHIFT, 0 },
	{ NBG_TPF_ALU_FILTER_PWL_SWAP, 0 },
	{ NBG_TPF_ALU_REORDER_BITS_USED, 0 },
	{ NBG_TPF_OUT_BRICK_MODE, 0 },
	{ NBG_TPF_IN_IMAGE_BORDER_MODE, 0 },
	{ NBG_TPF_INTEGER_ROUNDING_MODE, 1 },
	{ NBG_TPF_IN_IMAGE_X_SIZE, 1 },
	{ NBG_TPF_IN_IMAGE_Y_SIZE, 1 },
	{ NBG_TPF_OUT_LOOP_0_COUNT, 1 },
	{ NBG_TPF_OUT_LOOP_1_COUNT, 1 },
	{ NBG_TPF_OUT_LOOP_2_COUNT, 1 },
	{ NBG_TPF_OUT_LOOP_3_COUNT, 1 },
	{ NBG_TPF_OUT_LOOP_5_COUNT, 1 },
	{ NBG_TPF_OUT_LOOP_4_INC, 1 },
};

/* ReLU (alu_relu_enable 1, the face-age files' FullyConnectedReluLayer
 * layers) is executed where the output zero point is 0: there the largest
 * of the value and 0 is what the saturation to 0..255 already writes,
 * wherever in the requantization the unit takes it.  With another zero
 * point whether it clips at 0 or at the zero point is not established. */
static int tpfc_relu_ok(nbg_cpu_step *s, const nbg_cmd *cmd)
{
	uint32_t relu = nbg_cmd_tp(cmd, NBG_TPF_ALU_RELU_ENABLE), zp = nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP);
	if (relu == 0 || (relu == 1 && zp == 0))
		return 1;
	nbg_cpu_refuse(s, "tpfc-field-unsupported", "a TP fully connected layer with alu_relu_enable %u and "
		       "out_zp %u: executed is alu_relu_enable 0, or 1 with out_zp 0 (where the ReLU is the "
		       "saturation at 0)", relu, zp);
	return 0;
}

/* The data types: uint8 throughout, or int8 throughout with every zero
 * point 0 and no ReLU (mobilefacenet's layer on 0xad).  In a fully
 * connected command alu_horz_processing holds the weights' data type in
 * the TP's codes (0 uint8, 2 int8), and alu_horz_proc_count |
 * alu_vert_proc_count << 6 the output count minus one (doc/cpu-backend.md,
 * "TP fully connected layers"). */
static int tpfc_types_ok(nbg_cpu_step *s, const nbg_cmd *cmd, const nbg_cmd_op *cop, cpu_tpfc *t)
{
	uint32_t horz = nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROCESSING);
	uint32_t count = nbg_cmd_tp(cmd, NBG_TPF_ALU_HORZ_PROC_COUNT) |
			 nbg_cmd_tp(cmd, NBG_TPF_ALU_VERT_PROC_COUNT) << 6;
	uint32_t zp[3] = { t->in_zp, t->w_zp, t->out_zp };
	t->s8 = cop->in_type == 2;
	if ((cop->in_type != 0 && cop->in_type != 2) || cop->out_type != cop->in_type) {
		const char *n = nbg_command_data_type_name(cop->in_type == 0 || cop->in_type == 2 ? cop->out_type
												 : cop->in_type);
		nbg_cpu_refuse(s, "data-type-unsupported", "in_image_data_type %u, out_image_data_type %u (%s): "
			       "executed are uint8 (0) or int8 (2) throughout", cop->in_type, cop->out_type,
			       n ? n : "unknown");
		return 0;
	}
	if (horz != cop->in_type) {
		nbg_cpu_refuse(s, "tpfc-field-unsupported", "a TP fully connected layer with alu_horz_processing "
			       "%u (the weights' data type) over %s data: executed is %u", horz,
			       t->s8 ? "int8" : "uint8", cop->in_type);
		return 0;
	}
	if (count + 1 != t->nout) {
		nbg_cpu_refuse(s, "tpfc-field-unsupported", "a TP fully connected layer whose output count "
			       "field (alu_horz_proc_count | alu_vert_proc_count << 6) is %u: executed is "
			       "out_loop_4_count %u minus one", count, t->nout);
		return 0;
	}
	if (t->s8 && (zp[0] || zp[1] || zp[2] || nbg_cmd_tp(cmd, NBG_TPF_ALU_RELU_ENABLE))) {
		nbg_cpu_refuse(s, "tpfc-field-unsupported", "an int8 TP fully connected layer with in_zp %u, "
			       "coef_zp %u, out_zp %u, alu_relu_enable %u: executed are all 0", zp[0], zp[1], zp[2],
			       nbg_cmd_tp(cmd, NBG_TPF_ALU_RELU_ENABLE));
		return 0;
	}
	return 1;
}

static void tpfc_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	const nbg_cmd_op *cop = m->cop;
	const nbg_cmd *cmd = nbg_commands_at(p->c, NBG_CMD_TP, cop->command); /* tpfc_match */
	const nbg_weights_op *wo = p->wop[s->operation];
	cpu_tpfc *t = &op->u.tpfc;

	if (nbg_weights_op_status(wo) != NBG_WEIGHTS_DECODED) {
		nbg_cpu_refuse(s, "weights-not-decoded", "a TP fully connected layer whose coefficient "
			       "stream is not decoded (%s: %s)", nbg_weights_op_reason_id(wo),
			       nbg_weights_op_reason(wo));
		return;
	}
	if (!nbg_cpu_tp_fields_ok(s, cmd, fixed, sizeof(fixed) / sizeof(fixed[0]), "tpfc-field-unsupported",
				  "a TP fully connected layer", "the value of the layers checked against a reference") ||
	    !tpfc_relu_ok(s, cmd))
		return;
	/* flat_rounding_mode: 0 (the 0x10003 image classification file's
	 * layers) half away from zero, 1 (every other corpus layer) half to
	 * even, as the vendor's codes name them (doc/cpu-backend.md, "TP
	 * fully connected layers") */
	if (!nbg_cpu_rounding(s, "tpfc-field-unsupported", "a TP fully connected layer", "flat_rounding_mode",
			      nbg_cmd_tp(cmd, NBG_TPF_FLAT_ROUNDING_MODE), &t->even))
		return;
	const uint32_t *shape = nbg_weights_op_shape(wo);
	t->nin = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_Z_SIZE);
	t->nout = nbg_cmd_tp(cmd, NBG_TPF_OUT_LOOP_4_COUNT);
	if (!t->nin || !t->nout || shape[0] != t->nout || shape[1] != t->nin) {
		nbg_cpu_refuse(s, "shape-inconsistent", "the TP fully connected layer reads %u inputs and "
			       "writes %u outputs (in_image_z_size, out_loop_4_count); its weights are %ux%u",
			       t->nin, t->nout, shape[0], shape[1]);
		return;
	}
	/* the scale: a 15-bit mantissa and the signed shift 127 - exponent
	 * (doc/cpu-backend.md); the shift lies in -64..63 */
	t->mantissa = nbg_cmd_tp(cmd, NBG_TPF_ALU_OUTPUT_POST_MULTIPLIER) << 8;
	t->exponent = (uint32_t)(127 - nbg_cpu_tp_post_shift(cmd));
	t->out_zp = nbg_cmd_tp(cmd, NBG_TPF_OUT_ZP);
	t->in_zp = nbg_cmd_tp(cmd, NBG_TPF_IN_ZP);
	t->w_zp = (uint32_t)nbg_weights_op_zero_point(wo);
	if (!tpfc_types_ok(s, cmd, cop, t))
		return;
	uint64_t macs = (uint64_t)t->nin * t->nout;
	if (macs > NBG_CPU_MAX_MACS) {
		nbg_cpu_refuse(s, "work-limit", "%llu multiply-accumulates, above the limit of %llu",
			       (unsigned long long)macs, (unsigned long long)NBG_CPU_MAX_MACS);
		return;
	}
	if (!nbg_cpu_find_io(p, s, cop, &t->in_region, &t->out_region))
		return;
	t->in_base = cop->in_ref.offset;
	t->in_step = nbg_cmd_tp(cmd, NBG_TPF_IN_IMAGE_SLICE);
	t->out_base = cop->out_ref.offset;
	uint64_t last;
	if (!t->in_step || !nbg_cpu_image_fits(p, t->in_region, t->in_base, 1, 1, t->nin, 0, t->in_step, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its input of %u values at %s+0x%llx (%llu bytes "
			       "apart) does not lie inside that memory's %llu bytes", t->nin,
			       nbg_graph_source_type_name(cop->in_ref.source_type),
			       (unsigned long long)t->in_base, (unsigned long long)t->in_step,
			       (unsigned long long)p->regions[t->in_region].size);
		return;
	}
	if (!nbg_cpu_image_fits(p, t->out_region, t->out_base, t->nout, 1, 1, 0, 0, &last)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its output of %u values at %s+0x%llx does not "
			       "lie inside that memory's %llu bytes", t->nout,
			       nbg_graph_source_type_name(cop->out_ref.source_type),
			       (unsigned long long)t->out_base,
			       (unsigned long long)p->regions[t->out_region].size);
		return;
	}
	size_t n = 0;
	t->codes = nbg_weights_op_codes(wo, &n);
	t->bias = nbg_weights_op_bias(wo);
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
	s->macs = macs;
	op->kind = CPU_OP_TPFC;
}

/* The sum is over (w - w_zp) x (in - in_zp): the stored bias carries no
 * correction for in_zp (doc/cpu-backend.md, "TP fully connected layers");
 * the accumulator is 64-bit, the requantization nbg_cpu_requant's with the
 * scale (2^15 + m) / 2^(15 + shift).  int8: the codes and inputs two's
 * complement, zero points 0, saturated to -128..127 (nbg_cpu_requant_s8). */
static int tpfc_run(const cpu_op *op, uint8_t *const *buf)
{
	const cpu_tpfc *t = &op->u.tpfc;
	const uint8_t *in = buf[t->in_region] + t->in_base;
	uint8_t *out = buf[t->out_region] + t->out_base;
	int32_t wz = (int32_t)t->w_zp, iz = (int32_t)t->in_zp;

	if (t->s8) {
		for (uint32_t o = 0; o < t->nout; o++) {
			const uint8_t *w = t->codes + (size_t)o * t->nin;
			int64_t acc = t->bias[o];
			for (uint32_t i = 0; i < t->nin; i++)
				acc += (int64_t)(int8_t)w[i] * (int8_t)in[(uint64_t)i * t->in_step];
			out[o] = nbg_cpu_requant_s8(acc, t->mantissa, t->exponent, 0, 0, t->even);
		}
		return 0;
	}
	for (uint32_t o = 0; o < t->nout; o++) {
		const uint8_t *w = t->codes + (size_t)o * t->nin;
		int64_t acc = t->bias[o];
		for (uint32_t i = 0; i < t->nin; i++)
			acc += (int64_t)((int32_t)w[i] - wz) * ((int32_t)in[(uint64_t)i * t->in_step] - iz);
		out[o] = nbg_cpu_requant(acc, t->mantissa, t->exponent, t->out_zp, 0, t->even);
	}
	return 0;
}

/* A TP operation with a decoded command and a weights record: the weights
 * record of a TP operation exists exactly when it is a fully connected
 * layer (indexed once for the whole plan, plan.c). */
static int tpfc_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	return m->type == NBG_GRAPH_OP_TP && m->cop && m->cop->engine == NBG_CMD_TP &&
	       nbg_commands_at(p->c, NBG_CMD_TP, m->cop->command) && p->wop[m->operation];
}

/* A sum per output over every input, then its requantization. */
static void tpfc_cost(const cpu_op *op, uint64_t *work, uint64_t *scratch)
{
	*work = nbg_cpu_add_sat(nbg_cpu_mul_sat(op->u.tpfc.nin, op->u.tpfc.nout), op->u.tpfc.nout);
	*scratch = 0;
}

const cpu_op_def nbg_cpu_op_tpfc = { "tp-fc", tpfc_match, tpfc_plan, tpfc_run, tpfc_cost };

/*
 * ops/table.c - the CPU backend's kinds of operation, one entry each (its
 * file in ops/ defines it), in the order the plan tries their matches
 * (plan.c): the first whose match takes a step plans it.  The order
 * matters where two matches can take one step: the SH kinds of a named
 * layer before the SH/SW refusal, TP fully connected layers before the
 * other TP operations.  Adding a kind: its file, its value in enum
 * cpu_op_kind (cpu_internal.h) and its row here (doc/adding-an-op.md).
 */
#include "cpu/cpu_internal.h"

const cpu_op_def *const nbg_cpu_ops[CPU_OP__COUNT] = {
	[CPU_OP_SOFTMAX] = &nbg_cpu_op_softmax,
	[CPU_OP_SHPOOL] = &nbg_cpu_op_shpool,
	[CPU_OP_SHMAX] = &nbg_cpu_op_shmax,
	[CPU_OP_SHDW] = &nbg_cpu_op_shdw,
	[CPU_OP_SHADD] = &nbg_cpu_op_shadd,
	[CPU_OP_SHSCALE] = &nbg_cpu_op_shscale,
	[CPU_OP_SHF16] = &nbg_cpu_op_shf16,
	[CPU_OP_SHPAD] = &nbg_cpu_op_shpad,
	[CPU_OP_SHCONV] = &nbg_cpu_op_shconv,
	[CPU_OP_SHDW16] = &nbg_cpu_op_shdw16,
	[CPU_OP_SHF32] = &nbg_cpu_op_shf32,
	[CPU_OP_SHRESIZE] = &nbg_cpu_op_shresize,
	[CPU_OP_SHGRAY] = &nbg_cpu_op_shgray,
	[CPU_OP_SHSUB] = &nbg_cpu_op_shsub,
	[CPU_OP_SHMUL] = &nbg_cpu_op_shmul,
	[CPU_OP_SHPRELU] = &nbg_cpu_op_shprelu,
	[CPU_OP_SHTANH] = &nbg_cpu_op_shtanh,
	[CPU_OP_SHADER] = &nbg_cpu_op_shader,
	[CPU_OP_TPFC] = &nbg_cpu_op_tpfc,
	[CPU_OP_TP] = &nbg_cpu_op_tp,
	[CPU_OP_SPMAX] = &nbg_cpu_op_spmax,
	[CPU_OP_SPMEAN] = &nbg_cpu_op_spmean,
	[CPU_OP_SPSUB] = &nbg_cpu_op_spsub,
	[CPU_OP_SPMUL] = &nbg_cpu_op_spmul,
	[CPU_OP_NN16] = &nbg_cpu_op_nn16,
	[CPU_OP_CONV] = &nbg_cpu_op_conv,
};

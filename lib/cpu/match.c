/*
 * match.c - what the table's matches read of a step, decoded once per step
 * (cpu_internal.h, cpu_match): its OPERATIONS type, its layer's name as one
 * of the names an operation kind is established for, and its command's
 * operation with that operation's kind.  Names are compared here and
 * nowhere else in the backend: every planner and match reads the enums.
 */
#include <string.h>

#include "cpu/cpu_internal.h"

/* The index of name in names[0..n) (names[0] unused), or 0. */
static int name_index(const char *name, const char *const *names, int n)
{
	size_t len = strlen(name) + 1;
	for (int i = 1; i < n; i++)
		if (strlen(names[i]) + 1 == len && !memcmp(name, names[i], len))
			return i;
	return 0;
}

int nbg_cpu_cmd_kind(const nbg_cmd_op *cop)
{
	static const char *const kinds[] = {
		[CPU_CMD_CONV] = "conv", [CPU_CMD_DEPTHWISE_CONV] = "depthwise conv",
		[CPU_CMD_FULLY_CONNECTED] = "fully connected", [CPU_CMD_SP] = "sp",
		[CPU_CMD_NN_LUT] = "lut", [CPU_CMD_TRANSPOSE] = "transpose", [CPU_CMD_POOL] = "pool",
		[CPU_CMD_LUT] = "lut", [CPU_CMD_LAYOUT] = "layout",
	};
	if (!cop || !cop->kind)
		return CPU_CMD_OTHER;
	int k = name_index(cop->kind, kinds, (int)(sizeof(kinds) / sizeof(kinds[0])));
	/* "lut" names both: the engine tells them apart */
	return k == CPU_CMD_NN_LUT && cop->engine == NBG_CMD_TP ? CPU_CMD_LUT : k;
}

void nbg_cpu_match_of(const nbg_cpu_plan *p, const nbg_cpu_step *s, cpu_match *m)
{
	static const char *const layers[] = {
		[CPU_LAYER_SOFTMAX2] = "Softmax2Layer", [CPU_LAYER_POOLING2] = "PoolingLayer2",
		[CPU_LAYER_DEPTHWISE_CONV] = "DepthwiseConvLayer", [CPU_LAYER_TENSOR_ADD] = "TensorAdd",
		[CPU_LAYER_TENSOR_SCALE] = "TensorScale", [CPU_LAYER_SOFTMAX2_SP] = "Softmax2Layer_SP",
		[CPU_LAYER_TENSOR_PAD2] = "TensorPadOperation2", [CPU_LAYER_CONVOLUTION] = "ConvolutionLayer",
		[CPU_LAYER_MULTISTREAM_SP] = "MultiStreamProcessor_SP", [CPU_LAYER_REDUCE_MEAN_SP] = "ReduceMeanLayer_SP",
		[CPU_LAYER_TENSOR_SUB_SP] = "TensorSub_SP", [CPU_LAYER_TENSOR_ADD_SP] = "TensorAdd_SP",
		[CPU_LAYER_ACTIVATION] = "ActivationLayer", [CPU_LAYER_MAX_POOLING] = "Max Pooling",
		[CPU_LAYER_RESIZE_BILINEAR_I16_UP] = "com.vivantecorp.extension.evis.resize_bilinear_I16toI16_UP",
		[CPU_LAYER_GRAY_COPY_U8_F16] = "com.vivantecorp.extension.evis.pre_process_gray_copy_U8toF16",
		[CPU_LAYER_TENSOR_SUB] = "TensorSub", [CPU_LAYER_TENSOR_MUL] = "TensorMul",
		[CPU_LAYER_PRELU] = "PReluLayer",
		[CPU_LAYER_REDUCE_SUM_SP] = "ReduceSumLayer_SP",
		[CPU_LAYER_TENSOR_DIV] = "TensorDiv", [CPU_LAYER_TENSOR_MUL_SP] = "TensorMul_SP",
	};
	m->operation = s->operation;
	m->type = s->type;
	m->layer = name_index(s->layer, layers, (int)(sizeof(layers) / sizeof(layers[0])));
	/* the 0x10003 files' name of the layer (doc/cpu-backend.md, "SH and SW operations") */
	if (!strcmp(s->layer, "SoftMax2"))
		m->layer = CPU_LAYER_SOFTMAX2;
	m->add_layer = strstr(s->layer, "AddLayer") != NULL;
	m->cop = nbg_commands_op_of(p->c, s->operation);
	m->cmd_kind = nbg_cpu_cmd_kind(m->cop);
}

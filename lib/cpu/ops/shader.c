/*
 * ops/shader.c - the SH (shader) and SW (software) operations no other
 * kind of the table takes: refused, naming the layer.  Their code is not
 * decoded (SH) or not known (SW, the vendor runtime's CPU code), so an
 * operation of either is executed only where a reference implementation of
 * its layer is established (ops/softmax.c, ops/shpool.c, ops/shdw.c,
 * ops/shelt.c; doc/cpu-backend.md, "SH and SW operations").
 */
#include "cpu/cpu_internal.h"

static int shader_match(const nbg_cpu_plan *p, const cpu_match *m)
{
	(void)p;
	return m->type == NBG_GRAPH_OP_SH || m->type == NBG_GRAPH_OP_SW;
}

static void shader_plan(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const cpu_match *m)
{
	(void)p, (void)op, (void)m;
	if (s->type == NBG_GRAPH_OP_SW)
		nbg_cpu_refuse(s, "software-not-executed", "an SW (software) operation of layer %s: the "
			       "vendor runtime's CPU code for it is not known and no reference "
			       "implementation is established for that layer", s->layer);
	else
		nbg_cpu_refuse(s, "shader-not-executed", "an SH (shader) operation of layer %s: its code is "
			       "not decoded and no reference implementation is established for that layer",
			       s->layer);
}

const cpu_op_def nbg_cpu_op_shader = { "shader", shader_match, shader_plan, NULL, NULL };

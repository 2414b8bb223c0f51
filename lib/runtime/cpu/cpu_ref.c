/*
 * cpu_ref.c - SH (shader) and SW (software) operations: their code is not
 * decoded, so none is executed from it; the ones identified by their layer
 * and I/O records may run a reference implementation, labelled as such.
 */
#include "runtime/cpu/cpu_internal.h"

void nbg_cpu_plan_ref(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, size_t operation)
{
	(void)p;
	(void)op;
	(void)operation;
	if (s->type == NBG_GRAPH_OP_SW)
		nbg_cpu_refuse(s, "software-not-executed", "an SW (software) operation: the vendor "
			       "runtime's CPU code for it is not known");
	else
		nbg_cpu_refuse(s, "shader-not-executed", "an SH (shader) operation: its code is not "
			       "decoded and no reference implementation is established for it");
}

int nbg_cpu_ref_run(const cpu_ref *r, uint8_t *const *buf)
{
	(void)r;
	(void)buf;
	return 0;
}

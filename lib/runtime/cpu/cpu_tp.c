/*
 * cpu_tp.c - the CPU backend's TP (tensor processor) operations: which
 * ones it executes, with every field they read, and their run.
 */
#include "runtime/cpu/cpu_internal.h"

void nbg_cpu_plan_tp(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const nbg_cmd_op *cop)
{
	if (nbg_cpu_plan_tpfc(p, s, op, cop))
		return;
	nbg_cpu_refuse(s, "tp-not-executed", "a TP operation (%s): no TP kind's arithmetic is established "
		       "against a reference yet", cop ? cop->kind : "command not decoded");
}

int nbg_cpu_tp_run(const cpu_tp *t, uint8_t *const *buf)
{
	(void)t;
	(void)buf;
	return 0;
}

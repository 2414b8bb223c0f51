/*
 * cpu_tpfc.c - TP fully connected layers: a TP command that reads its
 * coefficients through alu_load_pwl_lut_address.
 */
#include "runtime/cpu/cpu_internal.h"

int nbg_cpu_plan_tpfc(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_op *op, const nbg_cmd_op *cop)
{
	(void)p;
	(void)s;
	(void)op;
	(void)cop;
	return 0;
}

int nbg_cpu_tpfc_run(const cpu_tpfc *t, uint8_t *const *buf)
{
	(void)t;
	(void)buf;
	return 0;
}

/*
 * budget.h - the CPU backend's counts and the plan's budget (budget.c,
 * doc/cpu-backend.md "Limits").  Never installed.
 */
#ifndef NBG_CPU_BUDGET_H
#define NBG_CPU_BUDGET_H

#include <stdint.h>

#include "cpu/hidden.h"
#include "nbg/cpu.h"

/* Sums and products of counts from the file, saturating at UINT64_MAX
 * (a figure past every limit). */
static inline uint64_t nbg_cpu_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t nbg_cpu_mul_sat(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/*
 * The limits with their defaults (nbg_cpu_limits_resolve); a planner's walk
 * whose length the file controls charged before it is taken
 * (nbg_cpu_plan_spend: 1, or 0 with the step refused work-limit, `what`
 * naming the walk); the totals once every step is planned and costed
 * (nbg_cpu_plan_add_up; each step's cost comes from its operation's cost
 * function, ops/table.c).
 */
CPU_HIDDEN void nbg_cpu_limits_resolve(nbg_cpu_options *lim, const nbg_cpu_options *opts);
CPU_HIDDEN int nbg_cpu_plan_spend(nbg_cpu_plan *p, nbg_cpu_step *s, uint64_t steps, const char *what);
/* The same for a walk the planner can do without (1 and charged, or 0 and
 * nothing charged nor refused). */
CPU_HIDDEN int nbg_cpu_plan_afford(nbg_cpu_plan *p, uint64_t steps);
CPU_HIDDEN void nbg_cpu_plan_add_up(nbg_cpu_plan *p);

#endif

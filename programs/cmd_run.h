/*
 * cmd_run.h - `nbg probe` and `nbg run`: the NPU side of the nbg tool.
 */
#ifndef NBG_CMD_RUN_H
#define NBG_CMD_RUN_H

#include "cli_opts.h"
#include "nbg/cpu.h"

/* The CPU backend's limits for a plan (doc/cpu-backend.md, "Limits"):
 * each from its option when given (memory, work, steps: --max-memory,
 * --max-work, --max-plan-steps; NULL: none), else from
 * NBG_MAX_CPU_MEMORY, NBG_MAX_CPU_WORK, NBG_MAX_CPU_PLAN_STEPS, else the
 * library's default (run_cpu.c; nbg probe takes the variables only). */
void cli_cpu_options(nbg_cpu_options *o, const cli_size *memory, const cli_size *work,
		     const cli_size *steps);
/* nbg run's default --threads: the online CPUs over the --jobs processes
 * (0 or 1: one), at least 1 and at most 64 (run_cpu.c). */
unsigned long cli_cpu_threads(uint64_t jobs);

/* `nbg probe [--device-root DIR] [--nnsdk PATH] [--viplite PATH]
 * [--no-isolate] [--json]` (cmd_probe.c).  argv[0] is the subcommand name.
 * Returns 0 when an NBG-capable NPU node exists and the runtime `nbg run`
 * would choose for it is usable, 4 otherwise, 2 on usage errors. */
int cli_cmd_probe(int argc, char **argv);

/* `nbg run MODEL --input FILE... --output-dir DIR [--loops N]
 *  [--golden FILE... [--tolerance X]] [--nnsdk PATH] [--device-root DIR]
 *  [--float32-outputs] [--input-kind N]`.  argv[0] is the subcommand name.  Returns 0 ok,
 * 1 invalid model, inputs that do not fit it or golden mismatch, 2 usage,
 * 3 file I/O, 4 device, library or runtime failure. */
int cli_cmd_run(int argc, char **argv);

#endif

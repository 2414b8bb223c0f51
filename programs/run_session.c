/*
 * run_session.c - `nbg run`'s session: the model and its inputs through
 * the backend chosen (libnnsdk, VIPLite, or the CPU backend), and the exit
 * a runtime error gives.
 */
#include <stdio.h>

#include "run_internal.h"

/* Paths (from the command line or a sample.txt) are printed as every
 * command prints them (cli_esc, doc/security.md); messages through
 * cli_esc_msg, which keeps the paths a library message escaped already. */
static void print_rt_error(const char *cmd, const nbg_error *e)
{
	fprintf(stderr, "nbg %s: %s: %s\n", cmd, nbg_code_name(e->code), cli_esc_msg(e->message));
}

int run_rt_exit(const char *cmd, const nbg_error *e)
{
	print_rt_error(cmd, e);
	if (e->code == NBG_E_MODEL_INVALID)
		fprintf(stderr, "nbg %s: parser: %s at offset %llu, field %s\n", cmd,
			nbg_code_name(e->cause), (unsigned long long)e->offset,
			e->field[0] ? e->field : "-");
	return nbg_code_exit(e->code);
}

int run_session(run_state *s)
{
	nbg_rt_session_options o = { .size = sizeof(o), .backend = s->a.backend, .lib_path = s->a.lib,
				     .nnsdk_path = s->a.nnsdk, .device_root = s->a.device_root, .loops = s->a.loops,
				     .input_kind = s->a.input_kind,
				     .timeout_ms = (uint32_t)(s->a.timeout_s * 1000), .cpu = &s->a.cpu };
	o.flags = (s->a.force_target ? NBG_RT_SESSION_FORCE_TARGET : 0) |
		  (s->a.no_isolate ? NBG_RT_SESSION_NO_ISOLATE : 0) |
		  (s->a.float32_outputs ? NBG_RT_SESSION_FLOAT32_OUTPUTS : 0) |
		  (s->a.input_kind_given ? NBG_RT_SESSION_INPUT_KIND : 0);
	/* the model parsed once, and the CPU backend's plan built once
	 * (run_one): the session's, and summary.json's */
	o.parsed = s->m;
	o.cpu_plan = s->plan;
	nbg_code c = nbg_rt_session_run(&o, s->model.map.data, s->model.map.size, s->bufs, s->n_in,
					&s->res, &s->e);
	/* the runtime read the mapping: a model cut meanwhile was zeros to it */
	if (cli_input_shrank(s->a.model, &s->model.map))
		return run_file_changed(s->a.model, "model");
	return c == NBG_OK ? 0 : run_rt_exit("run", &s->e);
}

/*
 * run_one.c - one `nbg run` of a model with its inputs: validate, read,
 * run, stage and compare the outputs, write summary.json, commit, report;
 * and what a run holds, released.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

int run_cleanup(run_state *s, int rc)
{
	for (size_t i = 0; s->staged && i < s->staged_count; i++)
		cli_out_free(&s->staged[i].out); /* a temporary not renamed is removed */
	nbg_rt_session_free(s->res);
	run_dump_free(s);
	if (!s->borrowed)
		nbg_cpu_plan_free(s->plan);
	free(s->line);
	json_decref(s->summary);
	for (size_t i = 0; s->in_raw && i < s->n_in; i++)
		free(s->in_raw[i]);
	for (size_t i = 0; s->out_f && i < s->n_out; i++) {
		free(s->out_f[i]);
		free(s->gold_f[i]);
	}
	free(s->in_raw);
	free(s->bufs);
	free(s->out_io);
	free(s->out_f);
	free(s->gold_f);
	free(s->cmp);
	free(s->stats);
	free(s->staged);
	free(s->raw_staged);
	if (!s->borrowed)
		cli_loaded_free(&s->model);
	return rc;
}

int run_load(run_state *s, const run_args *a)
{
	memset(s, 0, sizeof(*s));
	s->a = *a;
	s->golden_ok = 1;
	int rc = cli_load(s->a.model, NULL, &s->model);
	if (rc != NBG_EXIT_OK) {
		cli_print_error(s->a.model, &s->model);
		if (rc == NBG_EXIT_INVALID)
			fprintf(stderr, "nbg run: model-invalid: refusing to run a file that fails validation\n");
		cli_loaded_free(&s->model);
		return rc;
	}
	s->m = s->model.model;
	s->n_in = nbg_model_input_count(s->m);
	s->n_out = nbg_model_output_count(s->m);
	return 0;
}

int run_loaded(run_state *s, int *mismatch)
{
	int rc;
	*mismatch = 0;
	if (!s->plan)
		run_cpu_plan(s); /* --backend cpu: once, for the session and summary.json */
	/* --dump refused before anything is written (the output dir included) */
	if ((rc = run_dump_check(s)) == 0 && (rc = run_inputs(s)) == 0 && (rc = run_dump(s)) == 0 &&
	    (rc = run_session(s)) == 0 && (rc = run_outputs(s)) == 0) {
		s->summary = run_summary_json(s);
		if ((rc = run_dump_commit(s)) == 0 && (rc = run_commit(s)) == 0) {
			rc = run_report(s, rc);
			*mismatch = rc == NBG_EXIT_INVALID && !s->golden_ok;
		}
	}
	return rc;
}

/* One model with its inputs: validate, convert, run, write, report.
 * *mismatch: 1 when the run completed and only a golden mismatched. */
int run_one(const run_args *a, int *mismatch)
{
	run_state st;
	*mismatch = 0;
	int rc = run_load(&st, a);
	if (rc)
		return rc;
	return run_cleanup(&st, run_loaded(&st, mismatch));
}

/*
 * run_cpu.c - what the CPU backend's plan gives `nbg run`: its limits from
 * the options, the operations it computes by reference semantics and its
 * caveat in summary.json, and `--backend cpu --check` (every operation's
 * verdict, nothing run).  Every nbg_cpu_plan_* call of nbg run is here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "run_internal.h"

void cli_cpu_options(nbg_cpu_options *o, const cli_size *memory, const cli_size *work, const cli_size *steps)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->max_memory = memory && memory->set ? memory->value : cli_env_limit("NBG_MAX_CPU_MEMORY");
	o->max_work = work && work->set ? work->value : cli_env_limit("NBG_MAX_CPU_WORK");
	o->max_plan_steps = steps && steps->set ? steps->value : cli_env_limit("NBG_MAX_CPU_PLAN_STEPS");
}

unsigned long cli_cpu_threads(uint64_t jobs)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t per = n > 0 ? (uint64_t)n / (jobs > 1 ? jobs : 1) : 1;
	return per < 1 ? 1 : per > 64 ? 64 : (unsigned long)per;
}

void run_cpu_plan(run_state *s)
{
	if (s->a.backend == NBG_RT_SELECT_CPU &&
	    nbg_cpu_plan_build_model(s->model.model, &s->a.cpu, &s->plan, NULL) != NBG_OK)
		s->plan = NULL;
}

/* What the CPU backend's plan adds to the summary: the run's details
 * (nbg_cpu_run_details_json: the operations it computed by reference
 * semantics, SH / SW operations identified by their layer and I/O,
 * doc/cpu-backend.md, each with its note, and the caveat when the plan
 * stands on an inferred record layout).  Nothing for another backend. */
void run_cpu_json(const run_state *s, json_t *jr)
{
	if (nbg_rt_session_info_of(s->res)->backend != NBG_RT_SELECT_CPU || !s->plan)
		return;
	char *text = nbg_cpu_run_details_json(s->plan);
	json_t *d = text ? json_loads(text, 0, NULL) : NULL;
	if (d)
		json_object_update(jr, d);
	json_decref(d);
	free(text);
}

static void print_error_json(const nbg_error *e, const char *path)
{
	char *s = nbg_error_json(e, path);
	if (s)
		puts(s);
	free(s);
}

/* --check --json: {"model": {path, target}, ...nbg_cpu_plan_json's document
 * with every step}; nonzero when out of memory. */
static int print_plan_json(const char *path, uint32_t target, const nbg_cpu_plan *p)
{
	char *doc = nbg_cpu_plan_json(p, NBG_CPU_JSON_STEPS), t[16];
	json_t *plan = doc ? json_loads(doc, 0, NULL) : NULL, *o = json_object();
	free(doc);
	snprintf(t, sizeof(t), "0x%08x", target);
	json_object_set_new(o, "model", json_pack("{s:o, s:s}", "path", cli_json_path(path), "target", t));
	char *s = json_is_object(plan) && !json_object_update(o, plan)
			  ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
			  : NULL;
	json_decref(plan);
	json_decref(o);
	if (!s) {
		fprintf(stderr, "nbg run: out of memory writing the plan\n");
		return -1;
	}
	puts(s);
	free(s);
	return 0;
}

/* --check on a model that could not be read, parsed or planned (model->err,
 * printed): exit code rc. */
static int check_failed(const run_args *a, cli_loaded *model, nbg_cpu_plan *p, int rc)
{
	if (a->json) /* the document nbg inspect --json writes for it */
		print_error_json(&model->err, a->model);
	cli_print_error(a->model, model);
	nbg_cpu_plan_free(p);
	cli_loaded_free(model);
	return rc;
}

/* --backend cpu --check: every operation's verdict; the exit code is the
 * one a run of the model would give for what the model decides
 * (nbg_cpu_plan_check: 4 for a refused operation or I/O records the
 * machine cannot hold, 1 over a limit), 0 when it runs whole. */
int run_check(const run_args *a)
{
	cli_loaded model;
	int rc = cli_load(a->model, NULL, &model);
	if (rc != NBG_EXIT_OK)
		return check_failed(a, &model, NULL, rc);
	nbg_cpu_plan *p = NULL;
	nbg_error e;
	nbg_code built = nbg_cpu_plan_build_model(model.model, &a->cpu, &p, &e);
	/* the plan read the file after the parse: a shrink since was zeros to
	 * it, whatever it concluded */
	if ((rc = cli_loaded_changed(a->model, &model, NULL)) != NBG_EXIT_OK)
		return check_failed(a, &model, p, rc);
	if (built != NBG_OK) {
		if (a->json)
			print_error_json(&e, a->model);
		cli_loaded_free(&model);
		return run_rt_exit("check", &e);
	}
	nbg_code verdict = nbg_cpu_plan_check(p, SIZE_MAX, &e);
	rc = verdict == NBG_OK ? NBG_EXIT_OK : nbg_code_exit(verdict);
	if (a->json) {
		rc = print_plan_json(a->model, nbg_model_target(model.model), p) ? NBG_EXIT_IO : rc;
	} else {
		printf("model: %s (target 0x%08x)\n", cli_esc(a->model), nbg_model_target(model.model));
		nbg_cpu_plan_print(stdout, p);
	}
	nbg_cpu_plan_free(p);
	cli_loaded_free(&model);
	return rc;
}

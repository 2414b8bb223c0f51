/*
 * cmd_run.c - `nbg run`: drive a compiled NBG through a backend -- the
 * vendor's libnnsdk or VIPLite on a board, or the CPU backend (see
 * doc/runtime.md).  This file reads the options and picks the job: one
 * model (run_one.c, which gives each step its file: run_inputs.c,
 * run_session.c, run_outputs.c, run_golden.c, run_summary.c,
 * run_report.c), the networks of vpm_run's sample.txt (run_sample.c), or
 * the CPU backend's plan alone (run_cpu.c: every nbg_cpu_plan_* call of
 * nbg run, the plan summary.json reports among them).  Outputs are written
 * under temporary names and renamed only when the whole run succeeded, so
 * a failed run never leaves partial files behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "run_internal.h"

/* What a run may write and hold unless --max-output / --max-memory say
 * otherwise (doc/runtime.md, "nbg run"): far above any model seen, far
 * below what a declared size can claim (an output record may declare 4 GiB). */
#define RUN_MAX_OUTPUT ((uint64_t)1 << 30)
#define RUN_MAX_MEMORY ((uint64_t)2 << 30)

/* --mean, --scale and --channel-order only where an image can be read;
 * --batch instead of --input and --golden. */
static int check_image_args(const run_args *a)
{
	int image = a->batch != NULL;
	for (size_t i = 0; i < a->input_count; i++)
		image |= run_image_kind(a->inputs[i]) != RUN_IMAGE_NONE;
	if ((a->mean.n || a->scale.n || a->channel_order) && !image)
		return cli_usage("run", "--mean, --scale and --channel-order apply to image inputs "
				 "(.png, .jpg, .jpeg) and --batch");
	if (a->batch && (a->input_count || a->golden_count))
		return cli_usage("run", "--batch DIR names the inputs itself; give --input or --batch, "
				 "and no --golden");
	return 0;
}

/* The options from the table (cli_table.c) into a; 0, or the exit code of
 * a usage error.  --backend is 1 + its place in auto|nnsdk|viplite|cpu,
 * which are nbg_rt_select's values. */
static int parse_run_args(int argc, char **argv, run_args *a)
{
	cli_run_opts o = { 0 };
	const char **ops;
	int n, rc = cli_parse_operands("run", argc, argv, &o, &ops, &n);

	memset(a, 0, sizeof(*a));
	a->inputs = o.inputs.v;
	a->input_count = o.inputs.n;
	a->goldens = o.goldens.v;
	a->golden_count = o.goldens.n;
	a->model = rc == NBG_EXIT_OK && n ? ops[0] : NULL;
	if (rc == NBG_EXIT_OK && n > 1)
		rc = cli_usage("run", "one model at a time; also got '%s' (inputs follow --input)",
			       cli_esc(ops[1]));
	free(ops);
	if (rc != NBG_EXIT_OK)
		return rc;
	a->output_dir = o.output_dir;
	a->nnsdk = o.nnsdk;
	a->device_root = o.device_root;
	a->lib = o.lib;
	a->sample = o.sample;
	a->loops = o.loops ? (unsigned long)o.loops : 1;
	a->top = (unsigned long)o.top;
	a->timeout_s = (unsigned long)o.timeout;
	a->tolerance = o.tolerance.value;
	a->tolerance_given = o.tolerance.set;
	a->float32_outputs = o.float32_outputs;
	a->force_target = o.force_target;
	a->no_isolate = o.no_isolate;
	a->check = o.check;
	a->json = o.json;
	a->input_kind = (uint32_t)o.input_kind.value;
	a->input_kind_given = o.input_kind.set;
	a->layout = (nbg_tensor_layout)o.layout;
	a->backend = o.backend ? o.backend - 1 : NBG_RT_SELECT_AUTO;
	a->backend_given = o.backend != 0;
	a->max_output = o.max_output.set ? o.max_output.value : RUN_MAX_OUTPUT;
	a->max_memory = o.max_memory.set ? o.max_memory.value : RUN_MAX_MEMORY;
	cli_cpu_options(&a->cpu, &o.max_memory, &o.max_work, &o.max_plan_steps);
	a->cpu.threads = o.threads ? o.threads : cli_cpu_threads(o.jobs);
	a->cpu.kernels = o.kernels == 2 ? NBG_CPU_KERNELS_PORTABLE : NBG_CPU_KERNELS_AUTO;
	a->mean = o.mean;
	a->scale = o.scale;
	a->channel_order = o.channel_order;
	a->batch = o.batch;
	a->labels = o.labels;
	a->jobs = (unsigned long)o.jobs;
	if (a->labels && !a->top)
		a->top = 5;
	if ((o.max_work.set || o.max_plan_steps.set) && a->backend != NBG_RT_SELECT_CPU)
		return cli_usage("run", "--max-work and --max-plan-steps bound the CPU backend; give "
			      "--backend cpu");
	if ((o.threads || o.kernels) && a->backend != NBG_RT_SELECT_CPU)
		return cli_usage("run", "--threads and --kernels choose how the CPU backend computes; give "
			      "--backend cpu");
	/* --nnsdk alone asks for libnnsdk, as it did before VIPLite existed;
	 * with --backend it only names libnnsdk's library. */
	if (a->nnsdk && !a->backend_given && !a->lib)
		a->backend = NBG_RT_SELECT_NNSDK;
	if (a->nnsdk && a->backend == NBG_RT_SELECT_VIPLITE)
		fprintf(stderr, "nbg run: note: --nnsdk names the libnnsdk library, which --backend "
				"viplite does not load; --lib names the VIPLite library\n");
	if (a->sample && (a->model || a->input_count || a->golden_count || a->batch))
		return cli_usage("run", "--sample names the model, inputs and goldens itself");
	if (a->sample && !a->output_dir)
		return cli_usage("run", "no --output-dir given");
	if ((rc = run_dump_args(a, &o)) != 0)
		return rc;
	if (a->sample)
		return 0;
	if (!a->model)
		return cli_usage("run", "no model given");
	if (a->check && a->backend != NBG_RT_SELECT_CPU)
		return cli_usage("run", "--check lists what --backend cpu would run; give --backend cpu");
	if (a->check)
		return 0;
	if (a->json)
		return cli_usage("run", "--json only applies with --check (a run writes summary.json)");
	if ((rc = check_image_args(a)) != 0)
		return rc;
	if (a->batch)
		return a->output_dir ? 0 : cli_usage("run", "no --output-dir given");
	if (a->jobs)
		return cli_usage("run", "--jobs applies with --batch");
	if (!a->input_count)
		return cli_usage("run", "no --input given (one file per model input)");
	if (!a->output_dir)
		return cli_usage("run", "no --output-dir given");
	if (a->tolerance_given && !a->golden_count)
		return cli_usage("run", "--tolerance only applies with --golden");
	return 0;
}

int cli_cmd_run(int argc, char **argv)
{
	run_args a;
	int mismatch;
	int rc = parse_run_args(argc, argv, &a);
	if (rc == 0)
		rc = run_labels_load(&a);
	if (rc == 0 && a.check)
		rc = run_check(&a);
	else if (rc == 0)
		rc = a.sample ? run_sample(&a) : a.batch ? run_batch(&a) : run_one(&a, &mismatch);
	run_labels_free(&a);
	free(a.inputs);
	free(a.goldens);
	return rc;
}

/*
 * bench_cpu.c - how fast the CPU backend computes, per corpus model: one
 * row per file with at least one executed operation, for the operations
 * before its first refused one (the whole model when none is refused).
 *
 * Per file: the plan (nbg_cpu_plan_build: parse, graph, commands, weights,
 * verdicts) and the run on zero inputs (nbg_cpu_run up to the first
 * refused operation) on one thread with the default kernels (the CPU's
 * vector instructions where it has them), each the median of ROUNDS rounds
 * of this process's CPU time, so a second program on the machine slows the
 * wall clock but not the figure.  Printed: ms per inference, multiply-
 * accumulates per second of one core, the portable kernels' CPU time over
 * the default ones' (nbg_cpu_options.kernels), the wall time of a run on
 * one thread over one on two (nbg_cpu_options.threads: the least wall
 * time of the rounds, run back to back, each; a second program on a core
 * slows wall time), and the run's time over the plan's
 * (the decoding a run needs once, measured side by side).  It reports; it
 * never fails on a time.
 *
 * Usage: bench_cpu [ROUNDS] DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbg/cpu.h"
#include "nbg/nbg.h"

#include "bench_time.h"

/* What a file's runs take: its bytes, inputs, where they stop, the rounds
 * and room for their times. */
typedef struct bench_runs {
	const uint8_t *data;
	size_t size;
	const nbg_rt_buffer *in;
	size_t count, stop;
	int rounds;
	double *t;
} bench_runs;

/* The median of b's rounds (wall: the least wall time, the round other
 * programs on the machine disturbed least; else this process's CPU time)
 * planned with threads and kernels, into *median; -1 on a failure. */
static int time_runs(const bench_runs *b, uint64_t threads, uint64_t kernels, int wall, double *median)
{
	nbg_cpu_options o = { .size = sizeof(o), .threads = threads, .kernels = kernels };
	nbg_cpu_plan *p = NULL;
	nbg_error err;
	if (nbg_cpu_plan_build_opts(b->data, b->size, &o, &p, &err) != NBG_OK)
		return -1;
	for (int r = 0; r < b->rounds; r++) {
		nbg_cpu_state *st = NULL;
		double t0 = wall ? bench_wall() : bench_cpu();
		if (nbg_cpu_run(p, b->in, b->count, b->stop, &st, &err) != NBG_OK) {
			nbg_cpu_plan_free(p);
			return -1;
		}
		b->t[r] = (wall ? bench_wall() : bench_cpu()) - t0;
		nbg_cpu_state_free(st);
	}
	nbg_cpu_plan_free(p);
	qsort(b->t, (size_t)b->rounds, sizeof(double), bench_cmp_double);
	*median = b->t[wall ? 0 : b->rounds / 2];
	return 0;
}

static void bench_file(const char *path, const char *name, int rounds)
{
	nbg_mapping map;
	nbg_error err;
	if (nbg_map_file(path, &map, &err) != NBG_OK)
		return;
	nbg_model *m = NULL;
	nbg_cpu_plan *p = NULL;
	double *tp = calloc((size_t)rounds, sizeof(double)), *tr = calloc((size_t)rounds, sizeof(double));
	nbg_rt_buffer *in = NULL;
	uint8_t *zeros = NULL;
	if (!tp || !tr || nbg_parse(map.data, map.size, NULL, &m, &err) != NBG_OK)
		goto out;
	uint64_t largest = 0;
	for (size_t i = 0; i < nbg_model_input_count(m); i++)
		if (nbg_model_input_at(m, i)->byte_size > largest)
			largest = nbg_model_input_at(m, i)->byte_size;
	in = calloc(nbg_model_input_count(m) + 1, sizeof(*in));
	zeros = calloc((size_t)largest + 1, 1);
	if (!in || !zeros)
		goto out;
	for (size_t i = 0; i < nbg_model_input_count(m); i++)
		in[i] = (nbg_rt_buffer){ zeros, (size_t)nbg_model_input_at(m, i)->byte_size };
	size_t stop = SIZE_MAX, executed = 0;
	uint64_t macs = 0;
	for (int r = 0; r < rounds; r++) {
		nbg_cpu_plan_free(p);
		p = NULL;
		double t0 = bench_cpu();
		if (nbg_cpu_plan_build(map.data, map.size, &p, &err) != NBG_OK)
			goto out;
		tp[r] = bench_cpu() - t0;
	}
	const nbg_cpu_step *refused = nbg_cpu_plan_first_refused(p);
	stop = refused ? refused->operation : SIZE_MAX;
	for (size_t i = 0; i < nbg_cpu_plan_count(p) && i < stop; i++)
		if (nbg_cpu_plan_at(p, i)->verdict == NBG_CPU_EXECUTE) {
			executed++;
			macs += nbg_cpu_plan_at(p, i)->macs;
		}
	if (!executed)
		goto out;
	/* the run: the portable kernels and the default ones on one thread
	 * (CPU time), the default ones on 1 and 2 threads (wall time) */
	double run_portable, run = 0, wall1, wall2;
	bench_runs br = { map.data, map.size, in, nbg_model_input_count(m), stop, rounds, tr };
	if (time_runs(&br, 1, NBG_CPU_KERNELS_PORTABLE, 0, &run_portable) ||
	    time_runs(&br, 1, NBG_CPU_KERNELS_AUTO, 0, &run) || time_runs(&br, 1, NBG_CPU_KERNELS_AUTO, 1, &wall1) ||
	    time_runs(&br, 2, NBG_CPU_KERNELS_AUTO, 1, &wall2))
		goto out;
	qsort(tp, (size_t)rounds, sizeof(double), bench_cmp_double);
	double plan = tp[rounds / 2];
	printf("%-44.44s %5s %4zu ops %11llu MACs %9.3f ms %7.2f GMAC/s %6.2fx portable %5.2fx 2 threads  "
	       "run/plan %6.2f\n", name, refused ? "part" : "whole", executed, (unsigned long long)macs, run * 1e3,
	       run > 0 ? (double)macs / run / 1e9 : 0.0, run > 0 ? run_portable / run : 0.0,
	       wall2 > 0 ? wall1 / wall2 : 0.0, plan > 0 ? run / plan : 0.0);
out:
	free(zeros);
	free(in);
	free(tp);
	free(tr);
	nbg_cpu_plan_free(p);
	nbg_model_free(m);
	nbg_unmap_file(&map);
}

int main(int argc, char **argv)
{
	int rounds = 5, first = 1;
	if (argc > 1 && atoi(argv[1]) > 0) {
		rounds = atoi(argv[1]);
		first = 2;
	}
	printf("%-44s %5s %8s %16s %12s %14s %16s %17s\n", "file", "model", "executed", "", "per inference",
	       "per core", "vector/portable", "2 threads/1 wall");
	for (int a = first; a < argc; a++) {
		DIR *d = opendir(argv[a]);
		struct dirent *e;
		if (!d) {
			fprintf(stderr, "bench_cpu: %s: no such directory (skipped)\n", argv[a]);
			continue;
		}
		while ((e = readdir(d)) != NULL) {
			size_t len = strlen(e->d_name);
			char path[4096];
			if (len < 3 || strcmp(e->d_name + len - 3, ".nb"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[a], e->d_name);
			bench_file(path, e->d_name, rounds);
		}
		closedir(d);
	}
	return 0;
}

/*
 * bench_cpu.c - how fast the CPU backend computes, per corpus model: one
 * row per file with at least one executed operation, for the operations
 * before its first refused one (the whole model when none is refused).
 *
 * Per file, in one thread: the plan (nbg_cpu_plan_build: parse, graph,
 * commands, weights, verdicts) and the run on zero inputs (nbg_cpu_run up
 * to the first refused operation), each the median of ROUNDS rounds of this
 * process's CPU time, so a second program on the machine slows the wall
 * clock but not the figure.  Printed: ms per inference, multiply-
 * accumulates per second of one core, and the run's time over the plan's
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
	for (int r = 0; r < rounds; r++) {
		nbg_cpu_state *st = NULL;
		double t0 = bench_cpu();
		if (nbg_cpu_run(p, in, nbg_model_input_count(m), stop, &st, &err) != NBG_OK)
			goto out;
		tr[r] = bench_cpu() - t0;
		nbg_cpu_state_free(st);
	}
	qsort(tp, (size_t)rounds, sizeof(double), bench_cmp_double);
	qsort(tr, (size_t)rounds, sizeof(double), bench_cmp_double);
	double run = tr[rounds / 2], plan = tp[rounds / 2];
	printf("%-48.48s %5s %4zu ops %12llu MACs %9.3f ms %8.3f GMAC/s  run/plan %6.2f\n", name,
	       refused ? "part" : "whole", executed, (unsigned long long)macs, run * 1e3,
	       run > 0 ? (double)macs / run / 1e9 : 0.0, plan > 0 ? run / plan : 0.0);
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
	printf("%-48s %5s %8s %17s %12s %14s\n", "file", "model", "executed", "", "per inference",
	       "per core");
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

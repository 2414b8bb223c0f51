/*
 * run_sample.c - `nbg run --sample FILE`: vpm_run's sample.txt, each
 * network in turn, its [output] names checked first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

/* The file name output i of a sample's network is written under: its
 * [output] name without directories, or output_<i>.bin. */
static const char *out_base(const char *name)
{
	const char *slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* A name nbg run writes itself for some output: summary.json,
 * output_<n>.npy, or output_<n>.bin for an output the sample names no file
 * for (n >= named). */
static int reserved_name(const char *base, size_t named)
{
	unsigned long long n;
	int end = 0;

	if (!strcmp(base, "summary.json"))
		return 1;
	if (sscanf(base, "output_%llu.npy%n", &n, &end) == 1 && end && !base[end])
		return 1;
	end = 0;
	return sscanf(base, "output_%llu.bin%n", &n, &end) == 1 && end && !base[end] && n >= named;
}

/* [output] names that would land on the same file in DIR -- two equal
 * names, or the name of a file nbg run writes itself -- are refused before
 * any network runs: one output would silently replace another. */
static int check_output_names(const char *sample, const nbg_sample *smp)
{
	for (size_t k = 0; k < smp->network_count; k++) {
		const nbg_sample_network *w = &smp->networks[k];
		const char **sorted = w->output_count ? malloc(w->output_count * sizeof(*sorted)) : NULL;
		const char *clash = NULL, *why = NULL;
		if (w->output_count && !sorted) {
			fprintf(stderr, "nbg run: out of memory\n");
			return NBG_EXIT_IO;
		}
		for (size_t i = 0; i < w->output_count; i++) {
			const char *b = sorted[i] = out_base(w->outputs[i]);
			if (!clash && (!*b || cli_dot_name(b)))
				clash = b, why = "is not a file name";
			else if (!clash && reserved_name(b, w->output_count))
				clash = b, why = "is a file nbg run writes itself (summary.json, "
						 "output_<n>.npy, output_<n>.bin)";
		}
		if (w->output_count)
			qsort(sorted, w->output_count, sizeof(*sorted), cli_name_order);
		for (size_t i = 1; !clash && i < w->output_count; i++)
			if (!cli_name_order(&sorted[i - 1], &sorted[i]))
				clash = sorted[i], why = "names two outputs";
		free(sorted);
		if (clash) {
			fprintf(stderr, "nbg run: %s: %s: the network at line %u: [output] '%s' %s: "
					"one output would replace another; nothing is run\n",
				nbg_code_name(NBG_E_SAMPLE_INVALID), cli_esc(sample), w->line,
				cli_esc(clash), why);
			return nbg_code_exit(NBG_E_SAMPLE_INVALID);
		}
	}
	return 0;
}

/* vpm_run's sample.txt: each [network] in turn, into DIR (one network) or
 * DIR/network_<n>; stops at the first failure other than a golden mismatch. */
int run_sample(run_args *a)
{
	nbg_mapping map;
	nbg_error e;
	nbg_sample *smp = NULL;
	if (nbg_map_file(a->sample, &map, &e) != 0) {
		fprintf(stderr, "nbg run: %s\n", cli_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	nbg_code c = nbg_sample_parse((const char *)map.data, map.size, &smp, &e);
	nbg_unmap_file(&map);
	if (c != NBG_OK) {
		fprintf(stderr, "nbg run: %s: %s: %s\n", nbg_code_name(c), cli_esc(a->sample),
			cli_esc_msg(e.message));
		return nbg_code_exit(c);
	}
	int worst = 0, rc = check_output_names(a->sample, smp);
	if (rc == 0)
		rc = run_ensure_dir(a->output_dir);
	for (size_t k = 0; rc == 0 && k < smp->network_count; k++) {
		const nbg_sample_network *w = &smp->networks[k];
		run_args one = *a;
		char dir[NBG_RT_PATH_MAX];
		int mismatch;
		if (smp->network_count > 1) {
			snprintf(dir, sizeof(dir), "%s/network_%zu", a->output_dir, k);
			one.output_dir = dir;
		}
		one.model = w->model;
		one.inputs = (const char **)w->inputs;
		one.input_count = w->input_count;
		one.goldens = (const char **)w->goldens;
		one.golden_count = w->golden_count;
		one.out_names = w->outputs;
		one.out_name_count = w->output_count;
		printf("network %zu of %zu: %s\n", k + 1, smp->network_count, cli_esc(w->model));
		rc = run_one(&one, &mismatch);
		if (mismatch) {
			worst = rc; /* only a golden mismatched: the next network still runs */
			rc = 0;
		}
	}
	nbg_sample_free(smp);
	return rc ? rc : worst;
}

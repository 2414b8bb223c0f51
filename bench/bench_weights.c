/*
 * bench_weights.c - how fast the kernel streams decode, beside what
 * `nbg inspect --commands` does to the same files.
 *
 * Over every *.nb file under the directories given (the corpus), in one
 * thread, interleaved round by round so that load from other programs hits
 * both alike:
 *   commands  nbg_parse + nbg_graph_decode + nbg_commands_decode (the work
 *             of `nbg inspect --commands` before it prints);
 *   weights   nbg_weights_decode on those results.
 * Each figure is the median of ROUNDS rounds of CPU time of this process
 * (one core), so a second program on the machine slows the wall clock but
 * not the figure.  Throughput is in MB/s (10^6 bytes per second) of stream:
 * the coefficient bytes the decoded streams span (nbg_weights_explained_
 * bytes), and of file bytes for the commands.  It reports; it never fails on
 * a time.
 *
 * Usage: bench_weights [ROUNDS] DIR...
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbg/commands.h"
#include "nbg/graph.h"
#include "nbg/nbg.h"
#include "nbg/weights.h"

#include "bench_time.h"

typedef struct input {
	nbg_mapping map;
	nbg_model *m;
	nbg_graph *g;
	nbg_commands *c;
} input;

static size_t collect(const char *dir, input **in, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		fprintf(stderr, "bench_weights: %s: no such directory (skipped)\n", dir);
		return n;
	}
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char path[4096];
		nbg_error err;
		input x;
		if (len < 3 || strcmp(e->d_name + len - 3, ".nb"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		memset(&x, 0, sizeof(x));
		if (nbg_map_file(path, &x.map, &err) != NBG_OK)
			continue;
		*in = realloc(*in, (n + 1) * sizeof(**in));
		(*in)[n++] = x;
	}
	closedir(d);
	return n;
}

/* One round of the commands stage over every file; the results kept. */
static double commands_round(input *in, size_t n, uint64_t *bytes)
{
	double t0 = bench_cpu();
	nbg_error err;

	*bytes = 0;
	for (size_t i = 0; i < n; i++) {
		nbg_commands_free(in[i].c);
		nbg_graph_free(in[i].g);
		nbg_model_free(in[i].m);
		in[i].m = NULL;
		in[i].g = NULL;
		in[i].c = NULL;
		if (nbg_parse(in[i].map.data, in[i].map.size, NULL, &in[i].m, &err) != NBG_OK ||
		    nbg_graph_decode(in[i].m, &in[i].g, &err) != NBG_OK ||
		    nbg_commands_decode(in[i].m, in[i].g, &in[i].c, &err) != NBG_OK)
			continue;
		*bytes += in[i].map.size;
	}
	return bench_cpu() - t0;
}

static double weights_round(input *in, size_t n, uint64_t *bytes, size_t *decoded)
{
	double t0 = bench_cpu();
	nbg_error err;

	*bytes = 0;
	*decoded = 0;
	for (size_t i = 0; i < n; i++) {
		nbg_weights *w;
		if (!in[i].c || nbg_weights_decode(in[i].m, in[i].g, in[i].c, &w, &err) != NBG_OK)
			continue;
		*bytes += nbg_weights_explained_bytes(w);
		*decoded += nbg_weights_status_count(w, NBG_WEIGHTS_DECODED);
		nbg_weights_free(w);
	}
	return bench_cpu() - t0;
}

int main(int argc, char **argv)
{
	int rounds = 7, first = 1;
	input *in = NULL;
	size_t n = 0, decoded = 0;
	uint64_t cbytes = 0, wbytes = 0;

	if (argc > 1 && atoi(argv[1]) > 0) {
		rounds = atoi(argv[1]);
		first = 2;
	}
	for (int i = first; i < argc; i++)
		n = collect(argv[i], &in, n);
	if (!n) {
		fprintf(stderr, "usage: bench_weights [ROUNDS] DIR...   (no .nb file found)\n");
		return 2;
	}
	double *tc = calloc((size_t)rounds, sizeof(double)), *tw = calloc((size_t)rounds, sizeof(double));
	for (int r = 0; r < rounds; r++) {
		tc[r] = commands_round(in, n, &cbytes);
		tw[r] = weights_round(in, n, &wbytes, &decoded);
	}
	qsort(tc, (size_t)rounds, sizeof(double), bench_cmp_double);
	qsort(tw, (size_t)rounds, sizeof(double), bench_cmp_double);
	double mc = tc[rounds / 2], mw = tw[rounds / 2];
	printf("files %zu, decoded streams %zu, stream bytes %llu, file bytes %llu, rounds %d\n", n,
	       decoded, (unsigned long long)wbytes, (unsigned long long)cbytes, rounds);
	printf("%-40s %10.4f s CPU  %8.1f MB/s of file\n",
	       "parse + graph + commands (inspect --commands)", mc, (double)cbytes / mc / 1e6);
	printf("%-40s %10.4f s CPU  %8.1f MB/s of stream\n", "weights decode (nbg_weights_decode)",
	       mw, (double)wbytes / mw / 1e6);
	printf("weights / commands time: %.2f\n", mw / mc);
	for (size_t i = 0; i < n; i++) {
		nbg_commands_free(in[i].c);
		nbg_graph_free(in[i].g);
		nbg_model_free(in[i].m);
		nbg_unmap_file(&in[i].map);
	}
	free(in);
	free(tc);
	free(tw);
	return 0;
}

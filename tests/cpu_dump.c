/*
 * cpu_dump.c - runs a model's first operations on the CPU backend and
 * writes every buffer of the machine, so a test can check each operation
 * against a reference of its own (check_cpu.py).  Links the static
 * library: dumping at several points of one run is internal.
 *
 * Usage: nbg-cpu-dump MODEL STOP_BEFORE[,STOP_BEFORE...] OUTDIR INPUT...
 *   runs the operations whose OPERATIONS index is below STOP_BEFORE and
 *   writes OUTDIR/<SOURCE>_<index>.bin (INPUT_0, OUTPUT_0, VIP_SRAM_-1, ...)
 *   for each buffer.  With several ascending stops the model runs once and
 *   each stop's buffers go to OUTDIR/<STOP_BEFORE>/ (the directory must
 *   exist).  Exit 0; 4 with the error's code name when the run up to a stop
 *   is refused (the stops before it are written); 1 on any other failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *b = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			unsigned char *nb = realloc(b, cap);
			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		size_t r = fread(b + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*n = len;
	return b;
}

/* Every buffer of the state into dir: 0, or 1 when a write fails. */
static int write_state(const nbg_cpu_state *st, const char *dir)
{
	static const uint32_t types[] = { NBG_GRAPH_SRC_INPUT, NBG_GRAPH_SRC_OUTPUT,
					  NBG_GRAPH_SRC_MEMORY_POOL, NBG_GRAPH_SRC_AXI_SRAM,
					  NBG_GRAPH_SRC_VIP_SRAM };
	int status = 0;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (int32_t idx = -1; idx < 64; idx++) {
			int io = types[t] == NBG_GRAPH_SRC_INPUT || types[t] == NBG_GRAPH_SRC_OUTPUT;
			if (io != (idx >= 0))
				continue;
			size_t n = 0;
			const uint8_t *d = nbg_cpu_state_buffer(st, types[t], idx, &n);
			if (!d)
				continue;
			char path[4096 + 64];
			snprintf(path, sizeof(path), "%s/%s_%d.bin", dir,
				 nbg_graph_source_type_name(types[t]), idx);
			FILE *f = fopen(path, "wb");
			int bad = !f || fwrite(d, 1, n, f) != n;
			if ((f && fclose(f)) || bad) {
				fprintf(stderr, "cannot write %s\n", path);
				status = 1;
			}
		}
	return status;
}

/* Runs the plan to each stop of the comma-separated list in turn, writing
 * the buffers there: the exit status. */
static int run_stops(const nbg_cpu_plan *p, const nbg_rt_buffer *in, size_t nin, const char *stops,
		     const char *outdir)
{
	int several = strchr(stops, ',') != NULL, status = 0;
	nbg_cpu_state *st = NULL;
	nbg_error e;
	nbg_code rc = NBG_OK;
	size_t done = 0;
	for (const char *c = stops; *c && !status;) {
		char *end = NULL;
		size_t stop = (size_t)strtoull(c, &end, 0);
		if (end == c || stop < done || (*end && *end != ',')) {
			fprintf(stderr, "stops must be ascending numbers: %s\n", stops);
			status = 2;
			break;
		}
		rc = st ? nbg_cpu_run_range(p, st, done, stop, &e) : nbg_cpu_run(p, in, nin, stop, &st, &e);
		if (rc != NBG_OK) {
			printf("%s\n%s\n", nbg_code_name(rc), e.message);
			status = rc == NBG_E_UNSUPPORTED_OPERATION ? 4 : 1;
			break;
		}
		char dir[4096];
		snprintf(dir, sizeof(dir), several ? "%s/%zu" : "%s", outdir, stop);
		status = write_state(st, dir);
		done = stop;
		c = *end ? end + 1 : end;
	}
	nbg_cpu_state_free(st);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: nbg-cpu-dump MODEL STOP_BEFORE[,STOP_BEFORE...] OUTDIR INPUT...\n");
		return 2;
	}
	size_t msize = 0;
	unsigned char *model = slurp(argv[1], &msize);
	if (!model) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	size_t nin = (size_t)(argc - 4);
	nbg_rt_buffer *in = calloc(nin + 1, sizeof(*in));
	unsigned char **bytes = calloc(nin + 1, sizeof(*bytes));
	int status = 1;
	if (!in || !bytes) {
		fprintf(stderr, "out of memory\n");
		nin = 0;
		goto out;
	}
	for (size_t i = 0; i < nin; i++) {
		bytes[i] = slurp(argv[4 + i], &in[i].size);
		in[i].data = bytes[i];
		if (!bytes[i]) {
			fprintf(stderr, "cannot read %s\n", argv[4 + i]);
			nin = i;
			goto out;
		}
	}
	nbg_cpu_plan *p = NULL;
	nbg_error e;
	nbg_code rc = nbg_cpu_plan_build(model, msize, &p, &e);
	if (rc != NBG_OK) {
		printf("%s\n%s\n", nbg_code_name(rc), e.message);
		status = 1;
	} else {
		status = run_stops(p, in, nin, argv[2], argv[3]);
	}
	nbg_cpu_plan_free(p);
out:
	for (size_t i = 0; i < nin; i++)
		free(bytes[i]);
	free(bytes);
	free(in);
	free(model);
	return status;
}

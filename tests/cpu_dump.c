/*
 * cpu_dump.c - runs a model's first operations on the CPU backend and
 * writes every buffer of the machine, so a test can check each operation
 * against a reference of its own (check_cpu.py).
 *
 * Usage: nbg-cpu-dump MODEL STOP_BEFORE OUTDIR INPUT...
 *   runs the operations whose OPERATIONS index is below STOP_BEFORE and
 *   writes OUTDIR/<SOURCE>_<index>.bin (INPUT_0, OUTPUT_0, VIP_SRAM_-1, ...)
 *   for each buffer.  Exit 0; 4 with the error's code name when the run is
 *   refused; 1 on any other failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/cpu.h"
#include "nbg/graph.h"

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

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: nbg-cpu-dump MODEL STOP_BEFORE OUTDIR INPUT...\n");
		return 2;
	}
	size_t msize = 0;
	unsigned char *model = slurp(argv[1], &msize);
	if (!model) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	size_t stop = (size_t)strtoull(argv[2], NULL, 0);
	size_t nin = (size_t)(argc - 4);
	nbg_rt_buffer *in = calloc(nin + 1, sizeof(*in));
	unsigned char **bytes = calloc(nin + 1, sizeof(*bytes));
	if (!in || !bytes) {
		fprintf(stderr, "out of memory\n");
		free(in);
		free(bytes);
		free(model);
		return 1;
	}
	for (size_t i = 0; i < nin; i++) {
		bytes[i] = slurp(argv[4 + i], &in[i].size);
		in[i].data = bytes[i];
		if (!bytes[i]) {
			fprintf(stderr, "cannot read %s\n", argv[4 + i]);
			nin = i;
			free(model);
			for (size_t j = 0; j < nin; j++)
				free(bytes[j]);
			free(bytes);
			free(in);
			return 1;
		}
	}
	nbg_cpu_plan *p = NULL;
	nbg_cpu_state *st = NULL;
	nbg_error e;
	nbg_code rc = nbg_cpu_plan_build(model, msize, &p, &e);
	if (rc == NBG_OK)
		rc = nbg_cpu_run(p, in, nin, stop, &st, &e);
	int status = 0;
	if (rc != NBG_OK) {
		printf("%s\n%s\n", nbg_code_name(rc), e.message);
		status = rc == NBG_E_UNSUPPORTED_OPERATION ? 4 : 1;
		goto out;
	}
	static const uint32_t types[] = { NBG_GRAPH_SRC_INPUT, NBG_GRAPH_SRC_OUTPUT,
					  NBG_GRAPH_SRC_MEMORY_POOL, NBG_GRAPH_SRC_AXI_SRAM,
					  NBG_GRAPH_SRC_VIP_SRAM };
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (int32_t idx = -1; idx < 64; idx++) {
			int io = types[t] == NBG_GRAPH_SRC_INPUT || types[t] == NBG_GRAPH_SRC_OUTPUT;
			if (io != (idx >= 0))
				continue;
			size_t n = 0;
			const uint8_t *d = nbg_cpu_state_buffer(st, types[t], idx, &n);
			if (!d)
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s_%d.bin", argv[3],
				 nbg_graph_source_type_name(types[t]), idx);
			FILE *f = fopen(path, "wb");
			if (!f || fwrite(d, 1, n, f) != n)
				status = 1;
			if (f && fclose(f))
				status = 1;
		}
out:
	nbg_cpu_state_free(st);
	nbg_cpu_plan_free(p);
	for (size_t i = 0; i < nin; i++)
		free(bytes[i]);
	free(bytes);
	free(in);
	free(model);
	return status;
}

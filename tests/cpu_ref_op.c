/*
 * cpu_ref_op.c - runs ONE operation the CPU backend executes by reference
 * semantics (an SH or SW operation), on buffers the test sets, whatever
 * the operations before it are: a model's softmax can be checked while the
 * operation that feeds it is refused (check_cpu_ref.py).  Links the static
 * library: the run of one operation is internal.
 *
 * Usage: nbg-cpu-ref-op MODEL OPERATION INDIR OUTDIR [OPERATION INDIR OUTDIR]...
 *   every buffer of the machine starts as INDIR/<SOURCE>_<index>.bin when
 *   that file exists (it must have the buffer's size), else zeros; after
 *   the operation each is written to OUTDIR/<SOURCE>_<index>.bin.  Each
 *   further triple runs likewise on buffers of its own, with the plan built
 *   once.  Exit 0; 4 with the step's reason id when the plan does not
 *   execute an operation by reference semantics; 1 on any other failure
 *   (the triples before it have run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"

static int read_exact(const char *path, uint8_t *dst, uint64_t size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0; /* absent: zeros */
	size_t n = fread(dst, 1, (size_t)size, f);
	int extra = fgetc(f) != EOF;
	fclose(f);
	if (n != size || extra) {
		fprintf(stderr, "%s: not %llu bytes\n", path, (unsigned long long)size);
		return -1;
	}
	return 1;
}

/* Operation op of the plan on the buffers of indir, written to outdir:
 * the exit status. */
static int run_one(const nbg_cpu_plan *p, size_t op, const char *indir, const char *outdir)
{
	const nbg_cpu_step *s = nbg_cpu_plan_at(p, op);
	if (!s || s->verdict != NBG_CPU_EXECUTE || !s->reference) {
		printf("%s\n%s\n", s && *s->reason_id ? s->reason_id : "not-reference",
		       s ? s->reason : "no such operation");
		return 4;
	}
	int status = 1;
	uint8_t *buf[sizeof(p->regions) / sizeof(p->regions[0])] = { 0 };
	for (size_t i = 0; i < p->region_count; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s_%d.bin", indir,
			 nbg_graph_source_type_name(p->regions[i].source_type), (int)p->regions[i].index);
		buf[i] = calloc((size_t)p->regions[i].size + 1, 1);
		if (!buf[i] || read_exact(path, buf[i], p->regions[i].size) < 0)
			goto out;
	}
	if (nbg_cpu_op_run(&p->ops[op], buf))
		goto out;
	status = 0;
	for (size_t i = 0; i < p->region_count; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s_%d.bin", outdir,
			 nbg_graph_source_type_name(p->regions[i].source_type), (int)p->regions[i].index);
		FILE *o = fopen(path, "wb");
		if (!o || fwrite(buf[i], 1, (size_t)p->regions[i].size, o) != p->regions[i].size)
			status = 1;
		if (o && fclose(o))
			status = 1;
	}
out:
	for (size_t i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
		free(buf[i]);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 5 || (argc - 2) % 3) {
		fprintf(stderr, "usage: nbg-cpu-ref-op MODEL OPERATION INDIR OUTDIR [OPERATION INDIR OUTDIR]...\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || ftell(f) <= 0) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		if (f)
			fclose(f);
		return 1;
	}
	size_t msize = (size_t)ftell(f);
	uint8_t *model = malloc(msize);
	rewind(f);
	if (!model || fread(model, 1, msize, f) != msize) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		fclose(f);
		free(model);
		return 1;
	}
	fclose(f);
	nbg_cpu_plan *p = NULL;
	nbg_error e;
	int status = 1;
	if (nbg_cpu_plan_build(model, msize, &p, &e) != NBG_OK) {
		fprintf(stderr, "plan: %s\n", e.message);
	} else {
		status = 0;
		for (int a = 2; a + 2 < argc && !status; a += 3)
			status = run_one(p, (size_t)strtoull(argv[a], NULL, 0), argv[a + 1], argv[a + 2]);
	}
	nbg_cpu_plan_free(p);
	free(model);
	return status;
}

/*
 * run_outputs.c - `nbg run`'s output files: each output's raw bytes and
 * float32 .npy staged through the one output writer (cli_out.c), compared
 * with its golden (run_golden.c), and with summary.json renamed into place
 * together once the run succeeded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_internal.h"

int run_ensure_dir(const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "nbg run: cannot create output directory %s: %s\n", cli_esc(dir), strerror(errno));
		return NBG_EXIT_IO;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nbg run: %s is not a directory\n", cli_esc(dir));
		return NBG_EXIT_IO;
	}
	return 0;
}

/* Stages DIR/name as files[*n] (the OUT rules of doc/security.md; never
 * standard output, where the report goes) and writes data to it.  Two
 * outputs of one run that are the same file -- the same name, or links to
 * one file -- are refused before anything is renamed.  0 or the exit code,
 * with the reason printed. */
static int stage_file(const char *dir, const char *name, const void *data, size_t size,
		      staged_file *files, size_t *n)
{
	staged_file *f = &files[*n];
	int k = snprintf(f->final, sizeof(f->final), "%s/%s", dir, name), rc;

	if (k < 0 || (size_t)k >= sizeof(f->final)) {
		fprintf(stderr, "nbg run: output path under %s is too long\n", cli_esc(dir));
		return NBG_EXIT_IO;
	}
	if ((rc = cli_out_open(&f->out, "run", f->final, 0)) != 0)
		return rc;
	++*n;
	for (size_t i = 0; i + 1 < *n; i++)
		if (cli_out_same(&files[i].out, &f->out)) {
			fprintf(stderr, "nbg run: %s and ", cli_esc(files[i].final));
			fprintf(stderr, "%s are the same file: one output would replace the other; "
					"nothing is written\n", cli_esc(f->final));
			return NBG_EXIT_IO;
		}
	if (cli_out_write(&f->out, data, size) != 0) {
		fprintf(stderr, "nbg run: cannot write %s: %s\n", cli_esc(f->final),
			strerror(f->out.err));
		return NBG_EXIT_IO;
	}
	return 0;
}

/* output_<i>.bin (raw) and output_<i>.npy (float32), staged; goldens compared. */
int run_outputs(run_state *s)
{
	for (size_t i = 0; i < s->n_out; i++) {
		const nbg_rt_session_output *o = nbg_rt_session_output_at(s->res, i);
		char name[300];
		if (i < s->a.out_name_count) {
			const char *slash = strrchr(s->a.out_names[i], '/');
			snprintf(name, sizeof(name), "%s", slash ? slash + 1 : s->a.out_names[i]);
		} else {
			snprintf(name, sizeof(name), "output_%zu.bin", i);
		}
		s->raw_staged[i] = s->staged_count;
		int rc = stage_file(s->a.output_dir, name, o->data, o->size, s->staged, &s->staged_count);
		if (rc)
			return rc;
		uint8_t *npy;
		size_t nsz;
		nbg_error e;
		const nbg_io *io = &s->out_io[i];
		uint64_t shape[6];
		for (uint32_t d = 0; d < io->dim_count && d < 6; d++)
			shape[d] = nbg_io_dim_outer(io, d);
		/* the .npy is the float32 copy itself (what nbg_tensor_from_raw
		 * writes), not a second dequantization */
		s->out_f[i] = malloc((size_t)io->element_count * sizeof(float) + 1);
		if (!s->out_f[i] ||
		    nbg_tensor_dequantize(io, o->data, o->size, s->out_f[i], io->element_count, &e) !=
			    NBG_OK ||
		    nbg_npy_encode("<f4", shape, io->dim_count, s->out_f[i],
				   (size_t)io->element_count * sizeof(float), &npy, &nsz, &e) != NBG_OK) {
			free(s->out_f[i]);
			s->out_f[i] = NULL; /* 4-bit outputs: raw only */
		} else {
			snprintf(name, sizeof(name), "output_%zu.npy", i);
			rc = stage_file(s->a.output_dir, name, npy, nsz, s->staged, &s->staged_count);
			free(npy);
			if (rc)
				return rc;
		}
		if (i < s->a.golden_count && (rc = run_compare(s, i)) != 0)
			return rc;
	}
	return 0;
}

/* summary.json staged, then every staged file renamed into place. */
int run_commit(run_state *s)
{
	char *text = json_dumps(s->summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text) {
		fprintf(stderr, "nbg run: out of memory writing summary.json\n");
		return NBG_EXIT_IO;
	}
	size_t tl = strlen(text);
	text[tl] = '\n'; /* the file ends with a newline: it takes the NUL's byte */
	int rc = stage_file(s->a.output_dir, "summary.json", text, tl + 1, s->staged, &s->staged_count);
	free(text);
	if (rc)
		return rc;
	cli_out **outs = calloc(s->staged_count, sizeof(*outs));
	if (!outs) {
		fprintf(stderr, "nbg run: out of memory\n");
		return NBG_EXIT_IO;
	}
	for (size_t i = 0; i < s->staged_count; i++)
		outs[i] = &s->staged[i].out;
	rc = cli_out_commit_all(outs, s->staged_count);
	free(outs);
	if (rc)
		return rc;
	return 0;
}

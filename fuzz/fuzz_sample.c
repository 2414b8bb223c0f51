/*
 * fuzz_sample.c - libFuzzer harness: vpm_run's sample.txt as `nbg run
 * --sample` reads it (nbg_sample_parse).  The input is the file.  Checked
 * beyond memory safety:
 *  - a failure is sample-invalid (or out-of-memory) with a message and no
 *    result;
 *  - every network of a success names a model and at least one input, and
 *    every path is non-empty, trimmed, one line without a NUL, not a comment
 *    and not a section header, and the networks' lines rise;
 *  - the sample written back as text (one section per list) parses to the
 *    same networks and paths.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nbg/tensor.h"

static void check_path(const char *p)
{
	size_t n = strlen(p);

	FZ_CHECK(n > 0);
	FZ_CHECK(!isspace((unsigned char)p[0]) && !isspace((unsigned char)p[n - 1]));
	FZ_CHECK(!strchr(p, '\n') && p[0] != '#');
	FZ_CHECK(!(p[0] == '[' && p[n - 1] == ']'));
}

static void check_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_path(l[i]);
}

/* Appends a section with its paths to the memory stream. */
static void put_section(FILE *f, const char *name, char **l, size_t n)
{
	if (!n)
		return;
	fprintf(f, "[%s]\n", name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", l[i]);
}

static int same_list(char **a, size_t na, char **b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_sample *s = (nbg_sample *)1, *t = NULL;
	nbg_error err;
	nbg_code rc = nbg_sample_parse((const char *)data, size, &s, &err);

	if (rc != NBG_OK) {
		FZ_CHECK(s == NULL);
		FZ_CHECK(rc == NBG_E_SAMPLE_INVALID || rc == NBG_E_OUT_OF_MEMORY);
		FZ_CHECK(err.code == rc && fz_terminated(err.message, sizeof(err.message)));
		return 0;
	}
	FZ_CHECK(s && s->network_count > 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	FZ_CHECK(f != NULL);
	for (size_t k = 0; k < s->network_count; k++) {
		const nbg_sample_network *w = &s->networks[k];
		FZ_CHECK(w->model && w->input_count > 0);
		FZ_CHECK(k == 0 || w->line > s->networks[k - 1].line);
		check_path(w->model);
		check_list(w->inputs, w->input_count);
		check_list(w->goldens, w->golden_count);
		check_list(w->outputs, w->output_count);
		fprintf(f, "[network]\n%s\n", w->model);
		put_section(f, "input", w->inputs, w->input_count);
		put_section(f, "golden", w->goldens, w->golden_count);
		put_section(f, "output", w->outputs, w->output_count);
	}
	FZ_CHECK(fclose(f) == 0);
	FZ_CHECK(nbg_sample_parse(text, len, &t, &err) == NBG_OK);
	FZ_CHECK(t->network_count == s->network_count);
	for (size_t k = 0; k < s->network_count; k++) {
		const nbg_sample_network *a = &s->networks[k], *b = &t->networks[k];
		FZ_CHECK(!strcmp(a->model, b->model));
		FZ_CHECK(same_list(a->inputs, a->input_count, b->inputs, b->input_count));
		FZ_CHECK(same_list(a->goldens, a->golden_count, b->goldens, b->golden_count));
		FZ_CHECK(same_list(a->outputs, a->output_count, b->outputs, b->output_count));
	}
	nbg_sample_free(t);
	nbg_sample_free(s);
	free(text);
	return 0;
}

/*
 * sample.c - vpm_run's sample.txt: [network], [input], [golden], [output]
 * sections, '#' comment lines, several networks one after another; lines
 * before the first section are a preamble and ignored, as vpm_run does
 * (the V853 board's sample.txt opens with a sentence).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/internal.h"
#include "nbg/tensor.h"

enum section { S_NONE, S_NETWORK, S_INPUT, S_GOLDEN, S_OUTPUT };

static int push(char ***list, size_t *n, const char *s, size_t len)
{
	char **g = realloc(*list, (*n + 1) * sizeof(**list));
	if (!g)
		return -1;
	*list = g;
	g[*n] = strndup(s, len);
	if (!g[*n])
		return -1;
	(*n)++;
	return 0;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void nbg_sample_free(nbg_sample *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->network_count; i++) {
		nbg_sample_network *w = &s->networks[i];
		free(w->model);
		free_list(w->inputs, w->input_count);
		free_list(w->goldens, w->golden_count);
		free_list(w->outputs, w->output_count);
	}
	free(s->networks);
	free(s);
}

static int section_of(const char *p, size_t len, enum section *out)
{
	static const struct { const char *name; enum section s; } names[] = {
		{ "network", S_NETWORK }, { "input", S_INPUT },
		{ "golden", S_GOLDEN }, { "output", S_OUTPUT },
	};
	if (len < 2 || p[0] != '[' || p[len - 1] != ']')
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len - 2 && !strncasecmp(p + 1, names[i].name, len - 2)) {
			*out = names[i].s;
			return 1;
		}
	*out = S_NONE;
	return 1;
}

/* One non-comment line; returns NBG_OK or fills err. */
static nbg_code take_line(nbg_sample *s, enum section *cur, const char *p, size_t len,
			  unsigned long line, uint64_t off, nbg_error *err)
{
	enum section sec;
	if (section_of(p, len, &sec)) {
		if (sec == S_NONE)
			return nbg_error_set(err, NBG_E_SAMPLE_INVALID, off, "section",
					     "line %lu: unknown section %.*s (known: [network], "
					     "[input], [golden], [output])",
					     line, (int)(len > 64 ? 64 : len), p);
		if (sec != S_NETWORK && !s->network_count)
			return nbg_error_set(err, NBG_E_SAMPLE_INVALID, off, "section",
					     "line %lu: a section before the first [network]", line);
		if (sec == S_NETWORK) {
			nbg_sample_network *g = realloc(s->networks, (s->network_count + 1) * sizeof(*g));
			if (!g)
				return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, off, "", "out of memory");
			s->networks = g;
			memset(&g[s->network_count], 0, sizeof(*g));
			g[s->network_count].line = (uint32_t)line;
			s->network_count++;
		}
		*cur = sec;
		return NBG_OK;
	}
	/* text before the first section is the file's preamble: the vendor's
	 * own sample.txt files open with a sentence and no '#' */
	if (*cur == S_NONE)
		return NBG_OK;
	nbg_sample_network *w = &s->networks[s->network_count - 1];
	int r = 0;
	if (*cur == S_NETWORK) {
		if (w->model)
			return nbg_error_set(err, NBG_E_SAMPLE_INVALID, off, "network",
					     "line %lu: a second path under one [network] (one NBG "
					     "per [network] section)",
					     line);
		w->model = strndup(p, len);
		r = w->model ? 0 : -1;
	} else if (*cur == S_INPUT) {
		r = push(&w->inputs, &w->input_count, p, len);
	} else if (*cur == S_GOLDEN) {
		r = push(&w->goldens, &w->golden_count, p, len);
	} else {
		r = push(&w->outputs, &w->output_count, p, len);
	}
	return r ? nbg_error_set(err, NBG_E_OUT_OF_MEMORY, off, "", "out of memory") : NBG_OK;
}

static nbg_code check_networks(const nbg_sample *s, nbg_error *err)
{
	if (!s->network_count)
		return nbg_error_set(err, NBG_E_SAMPLE_INVALID, 0, "network",
				     "no [network] section: nothing to run");
	for (size_t i = 0; i < s->network_count; i++) {
		const nbg_sample_network *w = &s->networks[i];
		if (!w->model)
			return nbg_error_set(err, NBG_E_SAMPLE_INVALID, 0, "network",
					     "the [network] at line %u names no NBG file", w->line);
		if (!w->input_count)
			return nbg_error_set(err, NBG_E_SAMPLE_INVALID, 0, "input",
					     "the [network] at line %u has no [input] files", w->line);
	}
	return NBG_OK;
}

nbg_code nbg_sample_parse(const char *text, size_t size, nbg_sample **out, nbg_error *err)
{
	if (!out || (!text && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "sample: NULL pointer");
	*out = NULL;
	nbg_sample *s = calloc(1, sizeof(*s));
	if (!s)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	enum section cur = S_NONE;
	unsigned long line = 0;
	nbg_code rc = NBG_OK;
	for (size_t pos = 0; pos < size && rc == NBG_OK;) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - text) : size, b = pos, e = end;
		line++;
		while (b < e && isspace((unsigned char)text[b]))
			b++;
		while (e > b && isspace((unsigned char)text[e - 1]))
			e--;
		if (memchr(text + b, 0, e - b))
			rc = nbg_error_set(err, NBG_E_SAMPLE_INVALID, b, "",
					   "line %lu holds a NUL byte", line);
		else if (b < e && text[b] != '#')
			rc = take_line(s, &cur, text + b, e - b, line, b, err);
		pos = end + 1;
	}
	if (rc == NBG_OK)
		rc = check_networks(s, err);
	if (rc != NBG_OK) {
		nbg_sample_free(s);
		return rc;
	}
	*out = s;
	return NBG_OK;
}

/*
 * cli_values.c - the option values that need more than a table entry:
 * --expect-target (a value, a configuration name or a SoC name from the
 * known-target table, lib/common/targets.c) and --sha256-expect (64
 * hexadecimal digits), --op (an OPERATIONS record, nbg weights), record
 * indexes, sizes and tolerances, and the target-mismatch failure.  Paths and values
 * are escaped with nbg_path_escape here: cli.c calls into this file.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_opts.h"
#include "nbg/targets.h"

/* 1 when `name` is one of the words (letters and digits) of a SoC text,
 * any case: "A311D" in "Amlogic A311D (Khadas VIM3, JeVois-Pro); T931 rev B". */
static int soc_names(const char *soc, const char *name)
{
	size_t n = strlen(name);

	if (!soc || !n)
		return 0;
	for (const char *p = soc; *p;) {
		size_t w = 0;
		while (p[w] && isalnum((unsigned char)p[w]))
			w++;
		if (w == n && !strncasecmp(p, name, n))
			return 1;
		p += w ? w : 1;
	}
	return 0;
}

int cli_target_parse(const char *arg, uint32_t *out)
{
	const nbg_target_info *t;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (*arg >= '0' && *arg <= '9' && !*end && !errno && v <= UINT32_MAX) {
		*out = (uint32_t)v;
		return 0;
	}
	for (size_t i = 0; (t = nbg_target_at(i)) != NULL; i++)
		if (t->config && !strcasecmp(t->config, arg)) {
			*out = t->target;
			return 0;
		}
	char *shown = nbg_path_escape(arg);
	size_t hits = 0;
	uint32_t hit = 0;
	for (size_t i = 0; (t = nbg_target_at(i)) != NULL; i++)
		if (soc_names(t->soc, arg) && (hits++ == 0 || hit != t->target))
			hit = t->target;
	if (hits == 1) {
		free(shown);
		*out = hit;
		return 0;
	}
	if (hits > 1) {
		fprintf(stderr, "nbg: --expect-target '%s' names the SoC of %zu targets:",
			shown ? shown : "?", hits);
		for (size_t i = 0; (t = nbg_target_at(i)) != NULL; i++)
			if (soc_names(t->soc, arg))
				fprintf(stderr, " 0x%08x (%s)", t->target, t->soc);
		fprintf(stderr, "; give the target value or configuration name (nbg targets)\n");
	} else {
		fprintf(stderr, "nbg: --expect-target '%s' is neither a number (0x1000003b), a "
				"configuration name nor a SoC name that nbg targets lists\n",
			shown ? shown : "?");
	}
	free(shown);
	return -1;
}

void cli_target_mismatch(nbg_error *err, uint32_t have, uint32_t want)
{
	char h[256], w[256];

	memset(err, 0, sizeof(*err));
	err->code = NBG_E_TARGET_MISMATCH;
	err->offset = 8;
	err->index = -1;
	snprintf(err->field, sizeof(err->field), "target");
	snprintf(err->message, sizeof(err->message),
		 "the file was compiled for target %s, not the expected %s: a runtime on the "
		 "expected target refuses it; compile the model for that target",
		 nbg_target_describe(have, h, sizeof(h)), nbg_target_describe(want, w, sizeof(w)));
}

int cli_target_arg(const char *value, void *dest)
{
	cli_target *t = dest;

	if (cli_target_parse(value, &t->value) != 0)
		return -1;
	t->set = 1;
	return 0;
}

static int hex_digest(const char *s, uint8_t d[32])
{
	if (strlen(s) != 64)
		return -1;
	for (int i = 0; i < 32; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !isxdigit((unsigned char)s[2 * i]) ||
		    !isxdigit((unsigned char)s[2 * i + 1]))
			return -1;
		d[i] = (uint8_t)v;
	}
	return 0;
}

/* "TEXT, not 'VALUE'" (escaped) on standard error; -1. */
static int refused(const char *text, const char *value)
{
	char *shown = nbg_path_escape(value);

	fprintf(stderr, "%s, not '%s'\n", text, shown ? shown : "?");
	free(shown);
	return -1;
}

/* A whole number in [0, max], digits only (0x hex too with base 0). */
static int whole(const char *v, int base, unsigned long long max, unsigned long long *n)
{
	char *end;

	errno = 0;
	*n = strtoull(v, &end, base);
	return *v >= '0' && *v <= '9' && !*end && !errno && *n <= max ? 0 : -1;
}

int cli_digest_arg(const char *value, void *dest)
{
	cli_digest *d = dest;

	if (hex_digest(value, d->bytes) != 0)
		return refused("nbg verify: --sha256-expect takes 64 hexadecimal digits (what "
			       "sha256sum prints)", value);
	d->set = 1;
	return 0;
}

int cli_op_arg(const char *value, void *dest)
{
	cli_op *op = dest;
	unsigned long long n;

	if (whole(value, 10, 0xFFFFFFFFull, &n) != 0)
		return refused("nbg weights: --op takes an operation's number (its OPERATIONS "
			       "record)", value);
	op->set = 1;
	op->value = (uint32_t)n;
	return 0;
}

/* A cli_record from a whole number in [0, max]; `text` says what it is. */
static int record_of(const char *value, void *dest, int base, unsigned long long max,
		     const char *text)
{
	cli_record *r = dest;
	unsigned long long n;

	if (whole(value, base, max, &n) != 0)
		return refused(text, value);
	r->set = 1;
	r->value = (unsigned long)n;
	return 0;
}

int cli_record_arg(const char *value, void *dest)
{
	return record_of(value, dest, 10, 65535,
			 "nbg tensor: a record index is a whole number from 0 to 65535");
}

int cli_input_kind_arg(const char *value, void *dest)
{
	return record_of(value, dest, 0, 255,
			 "nbg run: --input-kind takes a whole number from 0 to 255");
}

int cli_tolerance_arg(const char *value, void *dest)
{
	cli_real *r = dest;
	char *end;
	double t;

	errno = 0;
	t = strtod(value, &end);
	if (errno || *end || !*value || !isfinite(t) || t < 0)
		return refused("nbg run: --tolerance takes a number >= 0", value);
	r->set = 1;
	r->value = t;
	return 0;
}

int cli_channels_arg(const char *value, void *dest)
{
	cli_channels *c = dest;
	const char *p = value;
	unsigned n = 0;

	for (;;) {
		char *end;
		errno = 0;
		double t = strtod(p, &end);
		if (errno || end == p || !isfinite(t) || n == 3 || (*end && *end != ','))
			return refused("nbg run: --mean and --scale take a number, or three "
				       "separated by commas (one per channel)", value);
		c->v[n++] = t;
		if (!*end)
			break;
		p = end + 1;
	}
	if (n == 2)
		return refused("nbg run: --mean and --scale take a number, or three separated by "
			       "commas (one per channel)", value);
	c->n = n;
	return 0;
}

int cli_size_parse(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return -1;
	if (!strcmp(v, "none")) {
		*out = UINT64_MAX;
		return 0;
	}
	if (*v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -1;
	int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : *end == 'T' ? 40 : 0;
	if (shift)
		end++;
	if (*end || n > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

/* A limit's value into the cli_size at dest, or the refusal `what` says. */
static int limit_arg(const char *value, void *dest, const char *what)
{
	cli_size *z = dest;

	if (cli_size_parse(value, &z->value) != 0)
		return refused(what, value);
	z->set = 1;
	return 0;
}

int cli_size_arg(const char *value, void *dest)
{
	return limit_arg(value, dest, "nbg run: a size is a byte count (a number with an optional K, M, G "
			 "or T suffix, or none)");
}

int cli_count_arg(const char *value, void *dest)
{
	return limit_arg(value, dest, "nbg run: a count is a number with an optional K, M, G or T suffix "
			 "(powers of 1024), or none");
}

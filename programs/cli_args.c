/*
 * cli_args.c - one parser for every command's options (cli_args.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"

const cli_option *cli_option_find(const cli_option *opts, const char *name, size_t len)
{
	for (const cli_option *o = opts; o->kind != CLI_END; o++)
		if ((strlen(o->name) == len && !strncmp(o->name, name, len)) ||
		    (o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len)))
			return o;
	return NULL;
}

/* Levenshtein distance of a and b, capped: anything above 3 is 4. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (la >= 63 || lb >= 63 || (la > lb ? la - lb : lb - la) > 3)
		return 4;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb] > 4 ? 4 : row[lb];
}

/* The option `given` was probably meant for: the one whose name starts
 * with it (when only one does), else the nearest within two edits (when
 * only one is that near); NULL otherwise. */
static const cli_option *nearest(const cli_option *opts, const char *given)
{
	const cli_option *best = NULL, *prefix = NULL;
	size_t best_d = 3, prefixes = 0, ties = 0;

	for (const cli_option *o = opts; o->kind != CLI_END; o++) {
		size_t d = distance(given, o->name);
		if (strlen(given) > 3 && !strncmp(o->name, given, strlen(given))) {
			prefix = o;
			prefixes++;
		}
		if (d < best_d) {
			best = o;
			best_d = d;
			ties = 0;
		} else if (d == best_d) {
			ties++;
		}
	}
	if (prefixes == 1)
		return prefix;
	return best && !ties ? best : NULL;
}

/* "a|b|c" as "a, b or c". */
static void alternatives(char *out, size_t n, const char *arg)
{
	size_t len = 0, parts = 1, k = 0;

	for (const char *p = arg; *p; p++)
		parts += *p == '|';
	out[0] = '\0';
	for (const char *p = arg; len + 8 < n; p++) {
		size_t w = strcspn(p, "|");
		k++;
		len += (size_t)snprintf(out + len, n - len, "%s%.*s",
					k == 1 ? "" : k == parts ? " or " : ", ", (int)w, p);
		p += w;
		if (!*p)
			break;
	}
}

static int refuse(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nbg %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (nbg %s --help lists the options)\n", cmd);
	return -1;
}

static int unknown(const char *cmd, const cli_option *opts, const char *given)
{
	const cli_option *near = nearest(opts, given);

	if (near)
		return refuse(cmd, "unknown option '%s'; did you mean %s?", cli_esc(given),
			      near->name);
	return refuse(cmd, "unknown option '%s'", cli_esc(given));
}

static int value_of(const char *cmd, const cli_option *o, const char *v, void *dest)
{
	void *at = (char *)dest + o->offset; /* the field offsetof named: aligned for its type */
	char list[256], *end;
	unsigned long long n;

	switch (o->kind) {
	case CLI_STRING:
		*(const char **)at = v;
		return 0;
	case CLI_UINT:
		errno = 0;
		n = strtoull(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || errno || n < o->min || n > o->max) {
			char range[80];
			snprintf(range, sizeof(range), "%llu to %llu", (unsigned long long)o->min,
				 (unsigned long long)o->max);
			return refuse(cmd, "%s takes a whole number from %s, not '%s'", o->name, range,
				      cli_esc(v));
		}
		*(uint64_t *)at = n;
		return 0;
	case CLI_CHOICE: {
		int k = 1;
		for (const char *p = o->arg;; k++) {
			size_t w = strcspn(p, "|");
			if (strlen(v) == w && !strncmp(p, v, w)) {
				*(int *)at = k;
				return 0;
			}
			p += w;
			if (!*p++)
				break;
		}
		alternatives(list, sizeof(list), o->arg);
		return refuse(cmd, "%s is %s, not '%s'", o->name, list, cli_esc(v));
	}
	case CLI_CUSTOM:
		return o->parse(v, at);
	default:
		return -1;
	}
}

/* The values after the list option at argv[*i], up to the next option,
 * appended to *l; *i moves to the last.  0, or -1 after a sentence. */
static int take_list(const char *cmd, const cli_option *o, int argc, char **argv, int *i,
		     cli_list *l)
{
	int end = *i + 1;
	const char **grown;

	while (end < argc && !(argv[end][0] == '-' && !cli_is_stdio(argv[end])))
		end++;
	if (end == *i + 1)
		return refuse(cmd, "%s needs a value: %s (one or more)", o->name, o->arg);
	grown = realloc(l->v, (l->n + (size_t)(end - *i - 1)) * sizeof(*l->v));
	if (!grown) {
		fprintf(stderr, "nbg %s: out of memory\n", cmd);
		return -1;
	}
	l->v = grown;
	while (++*i < end)
		l->v[l->n++] = argv[*i];
	--*i;
	return 0;
}

int cli_parse(const char *cmd, const cli_option *opts, int argc, char **argv, void *dest,
	      const char **operands, int *n)
{
	*n = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const cli_option *o;
		if (a[0] != '-' || !a[1]) {
			if (!operands)
				return refuse(cmd, "takes no operand, not '%s'", cli_esc(a));
			operands[(*n)++] = a;
			continue;
		}
		if (!strncmp(a, "--", 2) && strchr(a, '=') &&
		    (o = cli_option_find(opts, a, (size_t)(strchr(a, '=') - a))))
			return refuse(cmd, "%s takes no value, not '%s'", o->name,
				      cli_esc(strchr(a, '=') + 1));
		if (!(o = cli_option_find(opts, a, strlen(a))))
			return unknown(cmd, opts, a);
		void *at = (char *)dest + o->offset; /* as in value_of */
		if (o->kind == CLI_FLAG) {
			*(int *)at = 1;
			continue;
		}
		if (o->kind == CLI_BITS) {
			*(unsigned *)at |= o->bits;
			continue;
		}
		if (o->kind == CLI_LIST) {
			if (take_list(cmd, o, argc, argv, &i, (cli_list *)at))
				return -1;
			continue;
		}
		if (i + 1 >= argc) {
			char list[256];
			alternatives(list, sizeof(list), o->arg);
			return refuse(cmd, "%s needs a value: %s", o->name, list);
		}
		if (value_of(cmd, o, argv[++i], dest) != 0)
			return -1;
	}
	return 0;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nbg %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_synopsis(stderr, cli_command_find(cmd), "usage: ");
	return NBG_EXIT_USAGE;
}

int cli_parse_command(const char *cmd, int argc, char **argv, void *dest, const char **operands,
		      int *n)
{
	return cli_parse(cmd, cli_command_find(cmd)->options, argc, argv, dest, operands, n);
}

int cli_parse_operands(const char *cmd, int argc, char **argv, void *dest, const char ***operands,
		       int *n)
{
	*n = 0;
	*operands = calloc((size_t)argc + 1, sizeof(**operands));
	if (!*operands) {
		fprintf(stderr, "nbg %s: out of memory\n", cmd);
		return NBG_EXIT_IO;
	}
	if (cli_parse_command(cmd, argc, argv, dest, *operands, n) != 0)
		return NBG_EXIT_USAGE;
	return NBG_EXIT_OK;
}

/* "nbg NAME [--opt ARG]... OPERANDS", wrapped, continuation lines indented. */
void cli_synopsis(FILE *out, const cli_command *c, const char *lead)
{
	char line[2048], cont[64];
	size_t n = (size_t)snprintf(line, sizeof(line), "nbg %s", c->name);

	for (const cli_option *o = c->options; o->name && n < sizeof(line); o++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, o->arg ? " [%s\x01%s]" : " [%s]",
				      o->name, o->arg);
	if (*c->operands && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, " %s", c->operands);
	snprintf(cont, sizeof(cont), "%*s", (int)(strlen(lead) + strlen(c->name) + 5), "");
	cli_wrap(out, line, lead, cont);
}

/* A paragraph wrapped at 78 columns: the first line after `first`, the
 * others after `indent`.  \x01 is a space that never breaks. */
void cli_wrap(FILE *out, const char *text, const char *first, const char *indent)
{
	size_t col = 0;
	int line = 0;

	while (*text) {
		size_t n = strcspn(text, " ");
		if (col && col + 1 + n > 78) {
			fputc('\n', out);
			col = 0;
		}
		if (!col) {
			fputs(line++ ? indent : first, out);
			col = strlen(line > 1 ? indent : first);
		} else {
			fputc(' ', out);
			col++;
		}
		for (size_t k = 0; k < n; k++)
			fputc(text[k] == '\x01' ? ' ' : text[k], out);
		col += n;
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}


/*
 * cli.c - what every command shares: reading an input (a file, or standard
 * input for "-"), loading it into a model and printing a load failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static __attribute__((format(printf, 3, 4))) nbg_code input_error(nbg_error *err, int e,
								    const char *fmt, ...)
{
	va_list ap;
	size_t n;

	memset(err, 0, sizeof(*err));
	err->code = NBG_E_IO;
	err->sys_errno = e;
	err->index = -1;
	snprintf(err->field, sizeof(err->field), "file");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	n = strlen(err->message);
	if (e)
		snprintf(err->message + n, sizeof(err->message) - n, ": %s", strerror(e));
	return NBG_E_IO;
}

uint64_t nbg_stdin_max(void)
{
	const char *v = getenv("NBG_MAX_STDIN");
	char *end;
	unsigned long long n;
	int shift = 0;

	if (!v || !*v)
		return NBG_STDIN_DEFAULT_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end == 'K' || *end == 'M' || *end == 'G' || *end == 'T')
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 40;
	if (errno || end == v || end[shift ? 1 : 0] || n > (UINT64_MAX >> shift))
		return NBG_STDIN_DEFAULT_MAX;
	return (uint64_t)n << shift;
}

/* Standard input read whole into memory, at most `max` bytes. */
static nbg_code read_stdin(uint64_t max, nbg_mapping *m, nbg_error *err)
{
	static int consumed;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (consumed)
		return input_error(err, 0, "standard input was read already: '-' can stand for "
					   "one input only");
	consumed = 1;
	if (isatty(STDIN_FILENO))
		return input_error(err, 0, "standard input is a terminal: give the file's path, or "
					   "pipe or redirect the file into nbg ('-' reads standard "
					   "input)");
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : (size_t)1 << 16;
			uint8_t *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return input_error(err, ENOMEM, "cannot read standard input");
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(STDIN_FILENO, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return input_error(err, e, "cannot read standard input");
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max) {
			free(buf);
			return input_error(err, EFBIG, "standard input holds more than %llu bytes, "
						       "the bound for an input read into memory (set "
						       "NBG_MAX_STDIN, e.g. 8G, or give the file's path)",
					   (unsigned long long)max);
		}
	}
	if (!len) {
		static const uint8_t empty[1];
		free(buf);
		m->data = empty;
		return NBG_OK;
	}
	m->priv_base = buf; /* priv_len 0: heap memory, freed by nbg_input_close */
	m->data = buf;
	m->size = len;
	return NBG_OK;
}

nbg_code nbg_input_open(const char *path, nbg_mapping *m, nbg_error *err)
{
	memset(m, 0, sizeof(*m));
	if (strcmp(path, "-"))
		return nbg_map_file(path, m, err);
	return read_stdin(nbg_stdin_max(), m, err);
}

void nbg_input_close(nbg_mapping *m)
{
	if (m->priv_base && !m->priv_len) {
		free(m->priv_base);
		memset(m, 0, sizeof(*m));
	} else {
		nbg_unmap_file(m);
	}
}

int nbg_load(const char *path, const nbg_parse_options *opts, nbg_loaded *l)
{
	return nbg_load_expect(path, opts, NULL, l);
}

int nbg_load_expect(const char *path, const nbg_parse_options *opts, const uint32_t *target,
		    nbg_loaded *l)
{
	const uint8_t *d;

	memset(l, 0, sizeof(*l));
	if (nbg_input_open(path, &l->map, &l->err) != NBG_OK) {
		l->io_failed = 1;
		return NBG_EXIT_IO;
	}
	/* Before the parse hashes the whole file: both families keep the
	 * target word at offset 8, after the magic and the version. */
	d = l->map.data;
	if (target && l->map.size >= 12 && !memcmp(d, "VPMN", 4)) {
		uint32_t have = (uint32_t)d[8] | (uint32_t)d[9] << 8 | (uint32_t)d[10] << 16 |
				(uint32_t)d[11] << 24;
		if (have != *target) {
			nbg_target_mismatch(&l->err, have, *target);
			return NBG_EXIT_INVALID;
		}
	}
	if (nbg_parse(l->map.data, l->map.size, opts, &l->model, &l->err) != NBG_OK)
		return l->err.code == NBG_E_OUT_OF_MEMORY ? NBG_EXIT_IO : NBG_EXIT_INVALID;
	return NBG_EXIT_OK;
}

void nbg_loaded_free(nbg_loaded *l)
{
	nbg_model_free(l->model);
	nbg_input_close(&l->map);
	l->model = NULL;
}

void nbg_print_error(const char *path, const nbg_loaded *l)
{
	/* The path may come from a file (vpm_run's sample.txt): escaped, as
	 * the message that may repeat it. */
	char *p = nbg_text_escape(path ? path : "", SIZE_MAX);
	char *m = nbg_text_escape(l->err.message, sizeof(l->err.message));
	size_t n = path ? strlen(path) : 0;

	if (l->io_failed)
		fprintf(stderr, "nbg: %s\n", m ? m : l->err.message);
	else
		fprintf(stderr, "nbg: %s: %s at offset %llu (0x%llx), field %s: %s\n", p ? p : "?",
			nbg_code_name(l->err.code), (unsigned long long)l->err.offset,
			(unsigned long long)l->err.offset, l->err.field[0] ? l->err.field : "-",
			m ? m : l->err.message);
	/* No public description of the Amlogic ADLA header exists to recognize
	 * its bytes by (doc/lookalikes.md): the hint comes from the name alone. */
	if (!l->io_failed && l->err.code == NBG_E_BAD_MAGIC && n > 5 &&
	    !strcmp(path + n - 5, ".adla") && !strstr(l->err.message, "appears to be"))
		fprintf(stderr, "nbg: %s: the name ends in .adla: Amlogic ADLA models (the ADLA "
				"NPU of newer Amlogic SoCs such as the A311D2, S928X and C308L) are "
				"not NBG files, and nbgkit does not read them\n", p ? p : "?");
	free(p);
	free(m);
}

void nbg_json_list_item(nbg_json_list *list, const char *doc)
{
	if (list->many)
		fputs(list->count ? ",\n" : "[\n", stdout);
	fputs(doc, stdout);
	if (!list->many)
		fputc('\n', stdout);
	list->count++;
}

void nbg_json_list_end(const nbg_json_list *list)
{
	if (list->many)
		fputs(list->count ? "\n]\n" : "[]\n", stdout);
}

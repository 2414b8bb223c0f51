/*
 * cli.c - what every command shares: loading a file into a model, printing
 * a load failure, printing paths escaped and checking standard output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* A byte count from the environment: digits with an optional K/M/G/T
 * suffix (powers of 1024), or "none" for no limit; 0 when unset or bad
 * (the library's default then applies). */
uint64_t nbg_env_limit(const char *name)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return 0;
	if (!strcmp(v, "none"))
		return UINT64_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return 0;
	int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : *end == 'T' ? 40 : 0;
	if (shift)
		end++;
	if (*end || n > (UINT64_MAX >> shift))
		return 0;
	return (uint64_t)n << shift;
}

int nbg_input_shrank(const char *path, const nbg_mapping *m)
{
	struct stat st;

	/* A fault past the new end is caught by the guard; a shrink that ends
	 * inside the last page read faults nowhere (the page reads zeros), so
	 * the size is asked again too. */
	return nbg_mapping_changed(m) || (strcmp(path, "-") && stat(path, &st) == 0 &&
					  (uint64_t)st.st_size < m->size);
}

int nbg_load(const char *path, const nbg_parse_options *opts, nbg_loaded *l)
{
	nbg_parse_options o = { .size = sizeof(o) };
	nbg_code rc;

	memset(l, 0, sizeof(*l));
	if (opts)
		o.flags = opts->flags;
	o.max_file_size = nbg_env_limit("NBG_MAX_FILE_SIZE");
	o.max_undescribed = nbg_env_limit("NBG_MAX_UNDESCRIBED");
	rc = nbg_read_input(path, nbg_env_limit("NBG_MAX_STDIN"), &l->map, &l->err);
	if (rc != NBG_OK) {
		l->io_failed = 1;
		return nbg_code_exit(rc);
	}
	rc = nbg_parse(l->map.data, l->map.size, &o, &l->model, &l->err);
	if (nbg_input_shrank(path, &l->map)) {
		/* Truncated under us: whatever the parse said is about zeros. */
		char *e = nbg_path_escape(path);
		nbg_model_free(l->model);
		l->model = NULL;
		memset(&l->err, 0, sizeof(l->err));
		l->err.code = NBG_E_FILE_CHANGED;
		l->err.index = -1;
		snprintf(l->err.message, sizeof(l->err.message),
			 "%s shrank while it was being read (another process truncated it): "
			 "nothing read from it is reported", e ? e : "the input");
		free(e);
		l->io_failed = 1;
		return NBG_EXIT_IO;
	}
	if (rc != NBG_OK)
		return nbg_code_exit(rc) == NBG_EXIT_IO ? NBG_EXIT_IO : NBG_EXIT_INVALID;
	return NBG_EXIT_OK;
}

void nbg_loaded_free(nbg_loaded *l)
{
	nbg_model_free(l->model);
	nbg_unmap_file(&l->map);
	l->model = NULL;
}

const char *nbg_esc(const char *path)
{
	/* A ring of buffers: several escaped paths can stand in one printf. */
	static char *ring[8];
	static unsigned next;
	char **slot = &ring[next++ % 8];

	free(*slot);
	*slot = nbg_path_escape(path);
	return *slot ? *slot : "(out of memory)";
}

/* A message that holds a control byte (one that repeats bytes of a file,
 * such as a path from vpm_run's sample.txt) is escaped; library messages
 * that name a path already escaped it and are printed as they are. */
static char *safe_message(const char *msg, size_t max)
{
	for (size_t i = 0; i < max && msg[i]; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			return nbg_text_escape(msg, max);
	return strndup(msg, max);
}

void nbg_print_error(const char *path, const nbg_loaded *l)
{
	char *m = safe_message(l->err.message, sizeof(l->err.message));
	if (l->io_failed)
		fprintf(stderr, "nbg: %s\n", m ? m : l->err.message);
	else
		fprintf(stderr, "nbg: %s: %s at offset %llu (0x%llx), field %s: %s\n",
			nbg_esc(path ? path : ""), nbg_code_name(l->err.code),
			(unsigned long long)l->err.offset, (unsigned long long)l->err.offset,
			l->err.field[0] ? l->err.field : "-", m ? m : l->err.message);
	free(m);
}

int nbg_finish_stdout(int rc)
{
	int e;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout) && fclose(stdout) == 0)
		return rc;
	e = errno;
	if (e)
		fprintf(stderr, "nbg: cannot write to standard output: %s\n", strerror(e));
	else
		fprintf(stderr, "nbg: cannot write to standard output (a write failed)\n");
	return NBG_EXIT_IO;
}

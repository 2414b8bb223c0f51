/*
 * cli.c - what every command shares: reading an input (a file, or standard
 * input for "-"), loading it into a model, printing a load failure,
 * printing paths escaped and checking standard output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"

/* A byte count from the environment (cli_size_parse); 0 when unset or bad
 * (the library's default then applies; cli_env_limits_check refused a bad
 * one before any command ran). */
uint64_t cli_env_limit(const char *name)
{
	uint64_t v;

	return cli_size_parse(getenv(name), &v) == 0 ? v : 0;
}

/* The environment variables that set limits (doc/security.md), and what
 * each counts: the CPU backend's work and planning are counts of steps,
 * the others bytes. */
static const struct {
	const char *name, *what;
} limit_vars[] = { { "NBG_MAX_STDIN", "a byte count" }, { "NBG_MAX_FILE_SIZE", "a byte count" },
		   { "NBG_MAX_UNDESCRIBED", "a byte count" }, { "NBG_MAX_CPU_MEMORY", "a byte count" },
		   { "NBG_MAX_CPU_WORK", "a count" }, { "NBG_MAX_CPU_PLAN_STEPS", "a count" } };

int cli_env_limits_check(void)
{
	for (size_t i = 0; i < sizeof(limit_vars) / sizeof(limit_vars[0]); i++) {
		const char *v = getenv(limit_vars[i].name);
		uint64_t n;
		if (v && *v && cli_size_parse(v, &n) != 0) {
			fprintf(stderr, "nbg: %s='%s' is not %s: give digits with an "
					"optional K, M, G or T suffix (1G), or none\n",
				limit_vars[i].name, cli_esc(v), limit_vars[i].what);
			return -1;
		}
	}
	return 0;
}

int cli_input_shrank(const char *path, const nbg_mapping *m)
{
	struct stat st;

	/* A fault past the new end is caught by the guard; a shrink that ends
	 * inside the last page read faults nowhere (the page reads zeros), so
	 * the size is asked again too. */
	return nbg_mapping_changed(m) || (!cli_is_stdio(path) && stat(path, &st) == 0 &&
					  (uint64_t)st.st_size < m->size);
}

static nbg_code input_refused(nbg_error *err, const char *msg)
{
	memset(err, 0, sizeof(*err));
	err->code = NBG_E_IO;
	err->index = -1;
	snprintf(err->field, sizeof(err->field), "file");
	snprintf(err->message, sizeof(err->message), "%s", msg);
	return NBG_E_IO;
}

/* Standard input once per process, and never from a terminal (a person
 * typing is not a model); the bytes through nbg_read_input. */
nbg_code cli_input_open(const char *path, nbg_mapping *m, nbg_error *err)
{
	static int consumed;

	memset(m, 0, sizeof(*m));
	if (!cli_is_stdio(path))
		return nbg_read_input(path, 0, m, err);
	if (consumed)
		return input_refused(err, "standard input was read already: '-' can stand for "
					  "one input only");
	consumed = 1;
	if (isatty(STDIN_FILENO))
		return input_refused(err, "standard input is a terminal: give the file's path, or "
					  "pipe or redirect the file into nbg ('-' reads standard "
					  "input)");
	return nbg_read_input(path, cli_env_limit("NBG_MAX_STDIN"), m, err);
}

void cli_input_close(nbg_mapping *m)
{
	nbg_unmap_file(m);
}

int cli_load(const char *path, const nbg_parse_options *opts, cli_loaded *l)
{
	return cli_load_expect(path, opts, NULL, l);
}

int cli_loaded_changed(const char *path, cli_loaded *l, const char *dropped)
{
	if (!cli_input_shrank(path, &l->map))
		return 0;
	memset(&l->err, 0, sizeof(l->err));
	l->err.code = NBG_E_FILE_CHANGED;
	l->err.index = -1;
	snprintf(l->err.message, sizeof(l->err.message),
		 "%s shrank while it was being read (another process truncated it): %s",
		 cli_esc(path), dropped ? dropped : "nothing read from it is reported");
	l->io_failed = 1;
	return NBG_EXIT_IO;
}


int cli_load_expect(const char *path, const nbg_parse_options *opts, const uint32_t *target,
		    cli_loaded *l)
{
	nbg_parse_options o = { .size = sizeof(o) };
	const uint8_t *d;
	nbg_code rc;

	memset(l, 0, sizeof(*l));
	if (opts)
		o.flags = opts->flags;
	o.max_file_size = cli_env_limit("NBG_MAX_FILE_SIZE");
	o.max_undescribed = cli_env_limit("NBG_MAX_UNDESCRIBED");
	rc = cli_input_open(path, &l->map, &l->err);
	if (rc != NBG_OK) {
		l->io_failed = 1;
		return nbg_code_exit(rc);
	}
	/* Before the parse hashes the whole file: both families keep the
	 * target word at offset 8, after the magic and the version. */
	d = l->map.data;
	if (target && l->map.size >= 12 && !memcmp(d, "VPMN", 4)) {
		uint32_t have = (uint32_t)d[8] | (uint32_t)d[9] << 8 | (uint32_t)d[10] << 16 |
				(uint32_t)d[11] << 24;
		if (have != *target) {
			cli_target_mismatch(&l->err, have, *target);
			return NBG_EXIT_INVALID;
		}
	}
	rc = nbg_parse(l->map.data, l->map.size, &o, &l->model, &l->err);
	/* a mapping that shrank under the parse: whatever the parse said is
	 * about zeros, so it is replaced by a file-changed failure */
	if (cli_loaded_changed(path, l, NULL)) {
		nbg_model_free(l->model);
		l->model = NULL;
		return NBG_EXIT_IO;
	}
	if (rc != NBG_OK)
		return nbg_code_exit(rc) == NBG_EXIT_IO ? NBG_EXIT_IO : NBG_EXIT_INVALID;
	return NBG_EXIT_OK;
}

void cli_loaded_free(cli_loaded *l)
{
	nbg_model_free(l->model);
	cli_input_close(&l->map);
	l->model = NULL;
}

/* A path in JSON: as it is when it is UTF-8, else escaped as
 * nbg_path_escape does (as every JSON report writes paths). */
json_t *cli_json_path(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	char *e;

	if (j || !s)
		return j ? j : json_null();
	e = nbg_path_escape(s);
	j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

const char *cli_esc(const char *path)
{
	/* A ring of buffers: several escaped paths can stand in one printf. */
	static char *ring[8];
	static unsigned next;
	char **slot = &ring[next++ % 8];

	free(*slot);
	*slot = nbg_path_escape(path);
	return *slot ? *slot : "(out of memory)";
}

const char *cli_esc_msg(const char *msg)
{
	size_t backslashes = 0, len = strlen(msg);
	const char *e = cli_esc(msg);

	for (size_t i = 0; i < len; i++)
		backslashes += msg[i] == '\\';
	/* every other escape lengthens the text too: equal lengths mean only
	 * the backslashes were doubled */
	return strlen(e) == len + backslashes ? msg : e;
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

void cli_print_error(const char *path, const cli_loaded *l)
{
	/* The path may come from a file (vpm_run's sample.txt): escaped, as
	 * the message that may repeat it. */
	const char *p = cli_esc(path ? path : "");
	char *m = safe_message(l->err.message, sizeof(l->err.message));
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
	    cli_has_suffix(path, ".adla") && !strstr(l->err.message, "appears to be"))
		fprintf(stderr, "nbg: %s: the name ends in .adla: Amlogic ADLA models (the ADLA "
				"NPU of newer Amlogic SoCs such as the A311D2, S928X and C308L) are "
				"not NBG files, and nbgkit does not read them\n", p ? p : "?");
	free(m);
}

void cli_json_list_open(const cli_json_list *list)
{
	if (list->many)
		fputs(list->count ? ",\n" : "[\n", stdout);
}

void cli_json_list_close(cli_json_list *list)
{
	if (!list->many)
		fputc('\n', stdout);
	list->count++;
}

void cli_json_list_item(cli_json_list *list, const char *doc)
{
	cli_json_list_open(list);
	fputs(doc, stdout);
	cli_json_list_close(list);
}

void cli_json_list_end(const cli_json_list *list)
{
	if (list->many)
		fputs(list->count ? "\n]\n" : "[]\n", stdout);
}

int cli_finish_stdout(int rc)
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

/*
 * cli.c - what every command shares: loading a file into a model and
 * printing a load failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int nbg_load(const char *path, const nbg_parse_options *opts, nbg_loaded *l)
{
	memset(l, 0, sizeof(*l));
	if (nbg_map_file(path, &l->map, &l->err) != 0) {
		l->io_failed = 1;
		return NBG_EXIT_IO;
	}
	if (nbg_parse(l->map.data, l->map.size, opts, &l->model, &l->err) != NBG_OK)
		return l->err.code == NBG_E_OUT_OF_MEMORY ? NBG_EXIT_IO : NBG_EXIT_INVALID;
	return NBG_EXIT_OK;
}

void nbg_loaded_free(nbg_loaded *l)
{
	nbg_model_free(l->model);
	nbg_unmap_file(&l->map);
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

/*
 * inspect_export.c - `nbg inspect --format meta|vpm|jevois`: a model's
 * inputs and outputs in the forms ACUITY, vpm_run and JeVois-Pro read
 * (include/nbg/export.h, doc/export.md).
 */
#include <stdlib.h>

#include "cli.h"
#include "nbg/export.h"

/* ACUITY has dtypes for the formats of export.c's table only: 0-12 and 16
 * (BOOL8); INT4 (13), UINT4 (14) and unassigned values have none.  Returns
 * the first record that cannot be written, or NULL. */
static const nbg_io *meta_unnamed(const nbg_model *m, const char **side, size_t *index)
{
	for (int out = 0; out < 2; out++) {
		size_t n = out ? nbg_model_output_count(m) : nbg_model_input_count(m);
		for (size_t i = 0; i < n; i++) {
			const nbg_io *io = out ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
			if (io->data_format > 12 && io->data_format != 16) {
				*side = out ? "output" : "input";
				*index = i;
				return io;
			}
		}
	}
	return NULL;
}

static int export_meta(const nbg_model *m, const char *path, cli_json_list *list)
{
	char *s = nbg_export_meta_json(m);
	const char *side;
	size_t index;
	const nbg_io *io;

	if (s) {
		cli_json_list_item(list, s);
		free(s);
		return NBG_EXIT_OK;
	}
	io = meta_unnamed(m, &side, &index);
	if (!io) {
		fprintf(stderr, "nbg: out of memory writing the nbg_meta.json document\n");
		return NBG_EXIT_IO;
	}
	const char *fname = nbg_data_format_name(io->data_format);
	fprintf(stderr, "nbg: %s: %s %zu has data format %s (%u), which ACUITY's nbg_meta.json "
			"has no dtype for: use --format vpm, which gives the format's number\n",
		cli_esc(path), side, index, fname ? fname : "unknown", io->data_format);
	return NBG_EXIT_INVALID;
}

int cli_inspect_export(const nbg_model *m, const char *path, cli_export_form form, int many,
		       cli_json_list *list)
{
	if (form == NBG_EXPORT_META)
		return export_meta(m, path, list);
	/* Several files: each block under a comment line naming its file (a
	 * YAML comment for JeVois; vpm_run lines never start with '#'). */
	if (many) {
		printf("%s# NBG file: %s\n", list->count ? "\n" : "", cli_esc(path));
	}
	list->count++;
	if (form == NBG_EXPORT_VPM)
		nbg_export_vpm(stdout, m);
	else
		nbg_export_jevois(stdout, m);
	return NBG_EXIT_OK;
}

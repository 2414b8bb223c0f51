/*
 * cmd_targets.c - `nbg targets`: the known-target table
 * (lib/common/targets.c) that --expect-target names come from
 * (cli_values.c).
 */
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "cli_opts.h"
#include "nbg/targets.h"

int cli_cmd_targets(int argc, char **argv)
{
	cli_json_opts o = { 0 };
	const nbg_target_info *t;
	int n;

	if (cli_parse_command("targets", argc, argv, &o, NULL, &n) != 0)
		return NBG_EXIT_USAGE;
	if (o.json) {
		json_t *arr = json_array();
		char *s;
		for (size_t i = 0; (t = nbg_target_at(i)) != NULL; i++)
			json_array_append_new(arr, json_pack("{s:I,s:o,s:o}", "target",
							     (json_int_t)t->target, "config",
							     t->config ? json_string(t->config)
								       : json_null(),
							     "soc", t->soc ? json_string(t->soc)
									   : json_null()));
		s = json_dumps(arr, JSON_INDENT(2));
		json_decref(arr);
		if (!s) {
			fprintf(stderr, "nbg targets: out of memory\n");
			return NBG_EXIT_IO;
		}
		puts(s);
		free(s);
		return NBG_EXIT_OK;
	}
	printf("%-10s  %-34s  %s\n", "target", "configuration", "SoC / board (where a source "
							       "states it)");
	for (size_t i = 0; (t = nbg_target_at(i)) != NULL; i++)
		printf("0x%08x  %-34s  %s\n", t->target, t->config ? t->config : "unknown",
		       t->soc ? t->soc : "unknown");
	printf("\nAny other value is an unknown target: nbgkit never guesses a SoC.  The "
	       "names come\nfrom public sources (vendor configuration names, SoC vendors' "
	       "SDKs), not from\ntests on hardware.\n");
	return NBG_EXIT_OK;
}

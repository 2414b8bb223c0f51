/*
 * cmd_targets.c - `nbg targets`, the known-target table (lib/common/targets.c),
 * and --expect-target, shared by inspect and verify: a target given as a
 * value or a configuration name, checked against a file's header before it
 * is parsed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cli.h"
#include "nbg/targets.h"

int nbg_cmd_targets(int argc, char **argv)
{
	int json = argc == 2 && !strcmp(argv[1], "--json");
	const nbg_target_info *t;

	if (argc > 2 || (argc == 2 && !json)) {
		fprintf(stderr, "usage: nbg targets [--json]\n");
		return NBG_EXIT_USAGE;
	}
	if (json) {
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

int nbg_target_parse(const char *arg, uint32_t *out)
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
	/* nbg_path_escape, not nbg_esc: cli.c calls into this file */
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

void nbg_target_mismatch(nbg_error *err, uint32_t have, uint32_t want)
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

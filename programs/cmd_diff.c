/*
 * cmd_diff.c - `nbg diff A B [--json]`: what changed between two NBG files,
 * mapped to the structures that changed.  Exit 0 identical, 1 different (or
 * a file is not a valid NBG), 2 usage, 3 cannot read a file.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nbg/diff.h"

static void print_side(const char *tag, const char *path, const nbg_model *m)
{
	char hex[65];
	nbg_hex32(m->file_sha256, hex);
	printf("  %s: %s  v%u 0x%08x target 0x%08x  %" PRIu64 " bytes  sha256 %.16s\n", tag,
	       path, m->family, m->version, m->target, m->file_size, hex);
}

static void print_text(const nbg_diff *d, const char *pa, const nbg_model *a, const char *pb,
		       const nbg_model *b)
{
	printf("nbg diff\n");
	print_side("A", pa, a);
	print_side("B", pb, b);
	if (d->identical) {
		printf("identical: the files are byte for byte the same\n");
		return;
	}
	printf("\nFields (%zu):\n", d->field_count);
	for (size_t i = 0; i < d->count; i++) {
		const nbg_diff_item *it = &d->items[i];
		if (it->kind == NBG_DIFF_FIELD)
			printf("  %-44s %s -> %s\n", it->path, it->a, it->b);
	}
	printf("\nOwner ranges (%zu changed, %zu only in A, %zu only in B):\n", d->owners_changed,
	       d->owners_removed, d->owners_added);
	for (size_t i = 0; i < d->count; i++) {
		const nbg_diff_item *it = &d->items[i];
		switch (it->kind) {
		case NBG_DIFF_REMOVED:
			printf("  - %-40s @%-9" PRIu64 " only in A (%s)\n", it->path, it->offset_a,
			       it->a);
			break;
		case NBG_DIFF_ADDED:
			printf("  + %-40s @%-9" PRIu64 " only in B (%s)\n", it->path, it->offset_b,
			       it->b);
			break;
		case NBG_DIFF_BYTES:
			printf("  ~ %-40s @%" PRIu64 "", it->path, it->offset_a);
			if (it->offset_b != it->offset_a)
				printf(" (B @%" PRIu64 ")", it->offset_b);
			if (!strncmp(it->detail, "size differs", 12))
				printf(" %s -> %s", it->a, it->b);
			else
				printf(" %" PRIu64 " byte%s", it->length, it->length == 1 ? "" : "s");
			if (it->a[0] && strncmp(it->detail, "size differs", 12))
				printf(" %s -> %s", it->a, it->b);
			if (it->detail[0])
				printf(" [%s]", it->detail);
			putchar('\n');
			break;
		default:
			break;
		}
	}
	printf("\nsummary: files differ: %zu field(s), %zu owner range(s) changed, %zu added, "
	       "%zu removed, %" PRIu64 " byte(s) changed in place%s\n",
	       d->field_count, d->owners_changed, d->owners_added, d->owners_removed,
	       d->bytes_changed, d->truncated ? " (listing truncated; counts exact)" : "");
}

int nbg_cmd_diff(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL };
	int json = 0, n = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg diff: unknown option '%s'\n", argv[i]);
			return NBG_EXIT_USAGE;
		} else if (n < 2)
			paths[n++] = argv[i];
		else {
			fprintf(stderr, "nbg diff: two files only (got '%s' too)\n", argv[i]);
			return NBG_EXIT_USAGE;
		}
	}
	if (n != 2) {
		fprintf(stderr, "usage: nbg diff [--json] A.nb B.nb\n");
		return NBG_EXIT_USAGE;
	}
	nbg_loaded la, lb;
	int ra = nbg_load(paths[0], NULL, &la);
	int rb = nbg_load(paths[1], NULL, &lb);
	if (ra != NBG_EXIT_OK || rb != NBG_EXIT_OK) {
		if (ra != NBG_EXIT_OK)
			nbg_print_error(paths[0], &la);
		if (rb != NBG_EXIT_OK)
			nbg_print_error(paths[1], &lb);
		nbg_loaded_free(&la);
		nbg_loaded_free(&lb);
		return ra == NBG_EXIT_IO || rb == NBG_EXIT_IO ? NBG_EXIT_IO : NBG_EXIT_INVALID;
	}
	nbg_diff *d = NULL;
	nbg_error err;
	if (nbg_diff_models(la.model, lb.model, &d, &err) != NBG_OK) {
		fprintf(stderr, "nbg diff: %s\n", err.message);
		rc = NBG_EXIT_IO;
	} else {
		if (json) {
			char *s = nbg_diff_json(d, la.model, paths[0], lb.model, paths[1]);
			if (s)
				puts(s);
			free(s);
		} else {
			print_text(d, paths[0], la.model, paths[1], lb.model);
		}
		rc = d->identical ? NBG_EXIT_OK : NBG_EXIT_INVALID;
	}
	nbg_diff_free(d);
	nbg_loaded_free(&la);
	nbg_loaded_free(&lb);
	if (fflush(stdout) != 0)
		return NBG_EXIT_IO;
	return rc;
}

/*
 * fixture_document.c - fx_document (fixture.h): the library's JSON document
 * as a string, for the tests that read it.  Apart from fixture.c, which the
 * fuzz seed writer builds without the library.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"
#include "nbg/report.h"

char *fx_document(const nbg_model *m, const char *path, unsigned what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	nbg_error err;

	if (!f || nbg_json_document_write(f, m, path, what, &err) != NBG_OK || fclose(f) != 0) {
		fprintf(stderr, "fx_document: %s\n", f ? err.message : "no memory stream");
		abort();
	}
	return buf;
}

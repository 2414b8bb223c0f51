/*
 * fuzz_report_text.c - libFuzzer harness: the human report of `nbg inspect`
 * (nbg_text_report, compiled in from programs/).  The report goes to a
 * memory stream and must be text: file bytes reach it only escaped, so it
 * holds no NUL and no control character other than newline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbg/report.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	out = open_memstream(&buf, &len);
	FZ_CHECK(out != NULL);
	nbg_text_report(out, m, "fuzz.nb");
	FZ_CHECK(fclose(out) == 0);
	FZ_CHECK(len > 0 && strlen(buf) == len);
	for (size_t i = 0; i < len; i++)
		FZ_CHECK(buf[i] == '\n' || ((unsigned char)buf[i] >= 0x20 &&
					    (unsigned char)buf[i] < 0x7f));
	free(buf);
	nbg_model_free(m);
	return 0;
}

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
	fz_text t;

	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	nbg_text_report(fz_text_open(&t), m, "fuzz.nb");
	fz_text_close(&t);
	FZ_CHECK(t.len > 0);
	fz_text_free(&t);
	nbg_model_free(m);
	return 0;
}

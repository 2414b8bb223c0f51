/*
 * fuzz_common.h - shared by every harness: parse with the invariants of a
 * result checked (a violated invariant aborts, which libFuzzer and the
 * replay driver report as a crash).
 */
#ifndef NBG_FUZZ_COMMON_H
#define NBG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nbg/nbg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHECK(cond) ((cond) ? (void)0 : fz_fail(#cond, __FILE__, __LINE__))
void fz_fail(const char *what, const char *file, int line) __attribute__((noreturn));

/* nbg_parse with NBG_PARSE_NO_CRC_CHECK (the fuzzing build forces it anyway),
 * then: a failure has a named code, *m NULL and a filled error; a success
 * satisfies every invariant of fz_check_model. */
nbg_code fz_parse(const uint8_t *data, size_t size, nbg_model **m, nbg_error *err);

/* What every successful parse promises, whatever the input: ranges inside the
 * file, records inside their sections, counts consistent, strings terminated. */
void fz_check_model(const nbg_model *m, const uint8_t *data, size_t size);

/* A printer's text captured in memory: fz_text_open gives the stream to
 * print to; fz_text_close closes it and checks the text is printable ASCII
 * and newlines only, with no NUL inside; the text stays in t->buf (length
 * t->len) until fz_text_free. */
typedef struct fz_text {
	char *buf;
	size_t len;
	FILE *f;
} fz_text;
FILE *fz_text_open(fz_text *t);
const char *fz_text_close(fz_text *t);
void fz_text_free(fz_text *t);
/* Closes, checks and frees: for a printer whose text is not read further. */
void fz_text_check(fz_text *t);

/* nbg_json_document_write(m, path, what) as a string (free it); checks
 * that it succeeded. */
char *fz_document(const nbg_model *m, const char *path, unsigned what);

/* String is NUL-terminated within n bytes. */
int fz_terminated(const char *s, size_t n);

#endif

/*
 * fuzz_parse.c - libFuzzer harness: nbg_parse on any bytes (v1 and v2 go
 * through the one entry point).  Besides the sanitizers, every result is
 * checked: a named code on failure, the model invariants on success, and the
 * same answer when the same bytes are parsed again.
 */
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL, *m2 = NULL;
	nbg_error err, err2;
	nbg_code rc = fz_parse(data, size, &m, &err);

	/* Deterministic: no state survives between calls.  Small inputs only, so
	 * the second parse costs little where the fuzzer spends its time. */
	if (size <= 4096) {
		nbg_code rc2 = fz_parse(data, size, &m2, &err2);
		FZ_CHECK(rc2 == rc);
		if (rc != NBG_OK)
			FZ_CHECK(err2.offset == err.offset && !strcmp(err2.message, err.message));
		else
			FZ_CHECK(nbg_model_section_count(m2) == nbg_model_section_count(m) &&
				 nbg_model_note_count(m2) == nbg_model_note_count(m) &&
				 !memcmp(nbg_model_file_sha256(m2), nbg_model_file_sha256(m), 32));
		nbg_model_free(m2);
	}
	nbg_model_free(m);
	return 0;
}

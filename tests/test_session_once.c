/*
 * test_session_once.c - a session of the CPU backend on the caller's parsed
 * model and plan (nbg_rt_session_options.parsed and .cpu_plan): it parses
 * and plans nothing again (of the bytes this process feeds to SHA-256 and
 * CRC-32, nbg_digest_counts, the run feeds only its output's 16, whose
 * SHA-256 the result carries, while a session without them hashes the
 * file), and its outputs are the run's without
 * them and what the model computes (a TP copy of 16 bytes: output 0 is
 * input 0, tests/cpu_hostile.c).  A model of other bytes, or one whose
 * checksum failed, is not taken: the session parses the bytes itself and
 * says what it said before, and the plan builders given that model refuse
 * it with the bytes' words.  In-process (NBG_RT_SESSION_NO_ISOLATE), so
 * that the counts are this process's.
 */
#define NBG_STATIC_LINKING_ONLY
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_hostile.h"
#include "fixture.h"
#include "nbg/cpu.h"
#include "nbg/decoded.h"
#include "nbg/session.h"

/* One in-process CPU session on `model`; the digest bytes it fed in *fed,
 * its output 0 in out[16]. */
static nbg_code run(const uint8_t *model, size_t size, const nbg_model *parsed,
		    const nbg_cpu_plan *plan, uint64_t *fed, uint8_t out[16], nbg_error *err)
{
	uint8_t in[16];
	nbg_rt_buffer buf = { in, sizeof(in) };
	nbg_rt_session_options o = { .size = sizeof(o), .backend = NBG_RT_SELECT_CPU,
				     .flags = NBG_RT_SESSION_NO_ISOLATE, .parsed = parsed,
				     .cpu_plan = plan };
	nbg_rt_session_result *r = NULL;
	uint64_t sha0, crc0, sha1, crc1;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 37 + 11);
	nbg_digest_counts(&sha0, &crc0);
	nbg_code rc = nbg_rt_session_run(&o, model, size, &buf, 1, &r, err);
	nbg_digest_counts(&sha1, &crc1);
	*fed = (sha1 - sha0) + (crc1 - crc0);
	if (rc == NBG_OK) {
		const nbg_rt_session_output *x = nbg_rt_session_output_at(r, 0);
		assert_non_null(x);
		assert_int_equal(x->size, 16);
		memcpy(out, x->data, 16);
		/* the model copies its input */
		assert_memory_equal(out, in, 16);
	}
	nbg_rt_session_free(r);
	return rc;
}

static void test_once(void **state)
{
	size_t size;
	uint8_t *b = ch_copy(1, 0, 0, &size), *copy, a[16], c[16];
	nbg_model *m = NULL, *other = NULL;
	nbg_cpu_plan *p = NULL;
	uint64_t fed_own, fed_given, fed_other;

	(void)state;
	assert_non_null(b);
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	assert_int_equal(nbg_cpu_plan_build_opts(b, size, NULL, &p, NULL), NBG_OK);
	assert_int_equal(run(b, size, NULL, NULL, &fed_own, a, NULL), NBG_OK);
	assert_int_equal(run(b, size, m, p, &fed_given, c, NULL), NBG_OK);
	print_message("a session of its own fed %llu bytes to the digests; on the caller's "
		      "model and plan, %llu\n", (unsigned long long)fed_own,
		      (unsigned long long)fed_given);
	/* its parse hashed the file at least once; on the caller's, only the
	 * SHA-256 of output 0 that the result carries (16 bytes) */
	assert_true(fed_own >= size + 16);
	assert_int_equal(fed_given, 16);
	assert_memory_equal(a, c, 16);
	/* a model of other bytes (a copy): not taken, the bytes are parsed */
	copy = malloc(size);
	assert_non_null(copy);
	memcpy(copy, b, size);
	assert_int_equal(nbg_parse(copy, size, NULL, &other, NULL), NBG_OK);
	assert_int_equal(run(b, size, other, NULL, &fed_other, c, NULL), NBG_OK);
	assert_true(fed_other >= size);
	nbg_model_free(other);
	free(copy);
	nbg_cpu_plan_free(p);
	nbg_model_free(m);
	free(b);
}

/* A model kept past a checksum that fails (NBG_PARSE_KEEP_UNVERIFIED) is
 * not taken: the session refuses the bytes as it does without it. */
static void test_unverified(void **state)
{
	nbg_parse_options keep = { .size = sizeof(keep), .flags = NBG_PARSE_KEEP_UNVERIFIED };
	size_t size;
	uint8_t *b = ch_copy(1, 0, 0, &size), out[16];
	nbg_model *m = NULL;
	nbg_error e1, e2;
	uint64_t fed;

	(void)state;
	assert_non_null(b);
	/* a byte of the first section whose checksum record covers it */
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	size_t at = 0;
	for (size_t i = 0; !at && i < nbg_model_section_count(m); i++) {
		const nbg_section *x = nbg_model_section_at(m, i);
		if (x->has_checksum_record && x->size)
			at = (size_t)x->offset;
	}
	nbg_model_free(m);
	m = NULL;
	assert_true(at > 0);
	b[at] ^= 0x5a;
	assert_int_equal(nbg_parse(b, size, &keep, &m, NULL), NBG_E_SECTION_CHECKSUM_MISMATCH);
	assert_non_null(m);
	assert_int_equal(run(b, size, NULL, NULL, &fed, out, &e1), NBG_E_MODEL_INVALID);
	assert_int_equal(run(b, size, m, NULL, &fed, out, &e2), NBG_E_MODEL_INVALID);
	assert_string_equal(e1.message, e2.message);
	/* the plan builders given that model refuse it as the bytes' builder
	 * does: MODEL_INVALID, the checksum failure as the cause */
	nbg_cpu_plan *p = NULL;
	nbg_decoded *d = NULL;
	assert_int_equal(nbg_cpu_plan_build(b, size, &p, &e1), NBG_E_MODEL_INVALID);
	assert_int_equal(e1.cause, NBG_E_SECTION_CHECKSUM_MISMATCH);
	assert_int_equal(nbg_cpu_plan_build_model(m, NULL, &p, &e2), NBG_E_MODEL_INVALID);
	assert_null(p);
	assert_int_equal(e2.cause, NBG_E_SECTION_CHECKSUM_MISMATCH);
	assert_string_equal(e1.message, e2.message);
	assert_int_equal(nbg_decoded_new(m, &d, NULL), NBG_OK);
	assert_int_equal(nbg_cpu_plan_build_decoded(d, NULL, &p, &e2), NBG_E_MODEL_INVALID);
	assert_null(p);
	assert_int_equal(e2.cause, NBG_E_SECTION_CHECKSUM_MISMATCH);
	assert_string_equal(e1.message, e2.message);
	nbg_decoded_free(d);
	nbg_model_free(m);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_unverified),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_viplite.c - the VIPLite backend and the isolation, through the test
 * double (tests/runtime/viplite_testdouble.c): success with outputs checked
 * against the double's documented formula, and every failure edge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nbg/session.h"
#include "rt_models.h"
#include "lp64.h"

/* Synthesized, or the real face detector with --corpus (rt_models.h). */
static rt_models models;
#define MODEL models.int16

static uint8_t *model;
static size_t model_size;
static uint8_t *input;
static size_t input_size;
static char state_path[64]; /* the double's VIPLITE_TD_STATE file */

static nbg_code run(const char *lib, const char *modes, unsigned flags, nbg_rt_session_result **r,
		    nbg_error *e)
{
	setenv("VIPLITE_TD", modes ? modes : "", 1);
	setenv("VIPLITE_TD_STATE", state_path, 1);
	unlink(state_path);
	nbg_rt_session_options o = { .size = sizeof(o), .backend = NBG_RT_SELECT_VIPLITE,
				     .lib_path = lib, .loops = 2, .flags = flags | NBG_RT_SESSION_SKIP_PROBE };
	nbg_rt_buffer in = { input, input_size };
	return nbg_rt_session_run(&o, model, model_size, &in, 1, r, e);
}

/* After a run: everything the double handed out was given back (network,
 * buffers, mappings, vip_init paired with vip_destroy; the double itself
 * aborts on a release out of order).  `inited`: vip_init succeeded, so the
 * double must have written its state. */
static void expect_released(const char *modes, int inited)
{
	char line[128] = "";
	FILE *f = fopen(state_path, "r");
	if (!f) {
		if (inited)
			fail_msg("%s: the double recorded no state after vip_init", modes ? modes : "-");
		return;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	if (strcmp(line, "init=0 net=0 buffers=0 mapped=0\n"))
		fail_msg("%s: after the run the double still holds: %s", modes ? modes : "-", line);
}

static void test_success(void **state)
{
	(void)state;
	nbg_rt_session_result *r;
	nbg_error e;
	assert_int_equal(run(TD_VIP, NULL, 0, &r, &e), NBG_OK);
	assert_int_equal(nbg_rt_session_info_of(r)->backend, NBG_RT_SELECT_VIPLITE);
	assert_int_equal(nbg_rt_session_info_of(r)->version_word, 0x00020003u);
	assert_int_equal(nbg_rt_session_info_of(r)->cid, 0x1000003bu);
	assert_true(nbg_rt_session_info_of(r)->profile_known);
	assert_true(nbg_rt_session_info_of(r)->inference_us.first == 1234 && nbg_rt_session_info_of(r)->cycles.first == 567890);
	uint64_t sum = 0;
	for (size_t i = 0; i < input_size; i++)
		sum += input[i];
	for (size_t k = 0; k < nbg_rt_session_output_count(r); k++) {
		const nbg_rt_session_output *o = nbg_rt_session_output_at(r, k);
		assert_true(o->stable);
		for (size_t j = 0; j < o->size; j++)
			if (o->data[j] != (uint8_t)(j * 7 + k + 2 * sum)) /* the sum accumulates per flush */
				if (o->data[j] != (uint8_t)(j * 7 + k + sum))
					fail_msg("output %zu byte %zu", k, j);
	}
	nbg_rt_session_free(r);
	expect_released(NULL, 1);
}

static void expect(const char *lib, const char *modes, unsigned flags, nbg_code want,
		   const char *needle)
{
	nbg_rt_session_result *r = NULL;
	nbg_error e;
	nbg_code rc = run(lib, modes, flags, &r, &e);
	if (rc != want)
		fail_msg("%s: got %s (%s), want %s", modes ? modes : "-", nbg_code_name(rc), e.message,
			 nbg_code_name(want));
	assert_null(r);
	if (!strstr(e.message, needle))
		fail_msg("%s: message '%s' lacks '%s'", modes ? modes : "-", e.message, needle);
	/* a crash ends the child that held it all: nothing to give back */
	if (want != NBG_E_RUNTIME_CRASHED)
		expect_released(modes, want != NBG_E_LIBRARY_MISSING && want != NBG_E_SYMBOL_MISSING &&
					       want != NBG_E_INIT_FAILED);
}

static void test_failures(void **state)
{
	(void)state;
	expect("/nonexistent/libVIPlite.so", NULL, 0, NBG_E_LIBRARY_MISSING, "cannot load VIPLite");
	expect(TD_VIP_NOPREPARE, NULL, 0, NBG_E_SYMBOL_MISSING, "vip_prepare_network");
	expect(TD_VIP, "init-fail", 0, NBG_E_INIT_FAILED, "VIP_ERROR_IO");
	expect(TD_VIP, "hw-fail", 0, NBG_E_QUERY_FAILED, "vip_query_hardware(CID)");
	setenv("VIPLITE_TD_CID", "0xee", 1);
	expect(TD_VIP, NULL, 0, NBG_E_TARGET_MISMATCH, "VIP9000PICO_PID0XEE, Allwinner V853");
	expect(TD_VIP, NULL, 0, NBG_E_TARGET_MISMATCH, "0x1000003b (VIP9000NANODI_PLUS_PID0X1000003B");
	nbg_rt_session_result *r;
	nbg_error e;
	assert_int_equal(run(TD_VIP, NULL, NBG_RT_SESSION_FORCE_TARGET, &r, &e), NBG_OK);
	assert_true(nbg_rt_session_info_of(r)->target_forced);
	nbg_rt_session_free(r);
	expect_released("--force-target", 1);
	unsetenv("VIPLITE_TD_CID");
	/* every status of vip_status_e (1.13 and 2.0; -16 and -17 are 2.0's),
	 * named as the API documents them, and values outside the list */
	static const struct { const char *status, *name; } st[] = {
		{ "-1", "-1 (VIP_ERROR_TIMEOUT)" }, { "-2", "-2 (VIP_ERROR_IO)" },
		{ "-3", "-3 (VIP_ERROR_INVALID_ARGUMENTS)" }, { "-4", "-4 (VIP_ERROR_NOT_SUPPORTED)" },
		{ "-5", "-5 (VIP_ERROR_OUT_OF_RESOURCE)" }, { "-6", "-6 (VIP_ERROR_OUT_OF_MEMORY)" },
		{ "-7", "-7 (VIP_ERROR_INVALID_NETWORK)" },
		{ "-8", "-8 (VIP_ERROR_MISSING_INPUT_OUTPUT)" },
		{ "-9", "-9 (VIP_ERROR_NETWORK_NOT_PREPARED)" },
		{ "-10", "-10 (VIP_ERROR_NETWORK_INCOMPATIBLE)" }, { "-11", "-11 (VIP_ERROR_FAILURE)" },
		{ "-12", "-12 (VIP_ERROR_POWER_OFF)" }, { "-13", "-13 (VIP_ERROR_POWER_STOP)" },
		{ "-14", "-14 (VIP_ERROR_RECOVERY)" }, { "-15", "-15 (VIP_ERROR_CANCELED)" },
		{ "-16", "-16 (VIP_ERROR_NAN_INF)" }, { "-17", "-17 (VIP_ERROR_FUSA)" },
		{ "-18", "-18 (unknown status)" }, { "-99", "-99 (unknown status)" },
		{ "7", "7 (unknown status)" },
	};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		setenv("VIPLITE_TD_STATUS", st[i].status, 1);
		expect(TD_VIP, "create-fail", 0, NBG_E_CREATE_FAILED, st[i].name);
	}
	unsetenv("VIPLITE_TD_STATUS");
	expect(TD_VIP, "io-count", 0, NBG_E_RUNTIME_IO_MISMATCH, "the runtime counts 2 inputs");
	expect(TD_VIP, "prepare-fail", 0, NBG_E_PREPARE_FAILED, "vip_prepare_network returned -7");
	expect(TD_VIP, "buffer-fail", 0, NBG_E_BUFFER_FAILED, "vip_create_buffer returned -5");
	expect(TD_VIP, "map-null", 0, NBG_E_BUFFER_FAILED, "vip_map_buffer returned NULL");
	expect(TD_VIP, "run-timeout", 0, NBG_E_RUN_TIMEOUT, "VIP_ERROR_TIMEOUT");
	expect(TD_VIP, "invalidate-fail", 0, NBG_E_RUN_FAILED, "vip_flush_buffer(invalidate)");
	/* a crash inside the vendor call: a clean error naming the call and the signal */
	expect(TD_VIP, "crash-run", 0, NBG_E_RUNTIME_CRASHED, "inside vip_run_network: signal 11 (SIGSEGV");
}

/* libnnsdk as the real library behaves with a failed backend (non-NULL
 * context, input_set 1, output_get 0x1, destroy 1), and a stand-in whose
 * output_get returns 0x1 after a successful input set. */
static void test_nnsdk_real_failure(void **state)
{
	(void)state;
	nbg_rt_session_options o = { .size = sizeof(o), .backend = NBG_RT_SELECT_NNSDK,
				     .lib_path = TD_NNSDK, .loops = 1, .flags = NBG_RT_SESSION_SKIP_PROBE };
	nbg_rt_buffer in = { input, input_size };
	nbg_rt_session_result *r = NULL;
	nbg_error e;
#if !NBG_TEST_NNSDK_ABI
	assert_int_equal(nbg_rt_session_run(&o, model, model_size, &in, 1, &r, &e),
			 NBG_E_ABI_UNSUPPORTED);
	assert_null(r);
#endif
	NEEDS_NNSDK_ABI();
	setenv("NNSDK_TESTDOUBLE_FAIL", "real-failed-backend", 1);
	assert_int_equal(nbg_rt_session_run(&o, model, model_size, &in, 1, &r, &e), NBG_E_INPUT_SET_FAILED);
	assert_non_null(strstr(e.message, "returned 1"));
	setenv("NNSDK_TESTDOUBLE_FAIL", "output-one", 1);
	assert_int_equal(nbg_rt_session_run(&o, model, model_size, &in, 1, &r, &e), NBG_E_DESCRIPTOR_INVALID);
	assert_non_null(strstr(e.message, "0x1"));
	setenv("NNSDK_TESTDOUBLE_FAIL", "crash-output-get", 1);
	assert_int_equal(nbg_rt_session_run(&o, model, model_size, &in, 1, &r, &e), NBG_E_RUNTIME_CRASHED);
	assert_non_null(strstr(e.message, "aml_module_output_get(perfMode 2)"));
	assert_non_null(strstr(e.message, "SIGSEGV"));
	assert_null(r);
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
}

/* The options struct grows at its end: a caller compiled before nnsdk_path
 * existed passes the smaller size and still runs; a size short of that is
 * refused. */
static void test_options_size(void **state)
{
	(void)state;
	setenv("VIPLITE_TD", "", 1);
	nbg_rt_session_options o;
	memset(&o, 0xa5, sizeof(o)); /* bytes past the given size must not be read */
	o.size = offsetof(nbg_rt_session_options, nnsdk_path);
	o.backend = NBG_RT_SELECT_VIPLITE;
	o.lib_path = TD_VIP;
	o.device_root = NULL;
	o.loops = 1;
	o.flags = NBG_RT_SESSION_SKIP_PROBE;
	o.input_kind = 0;
	o.timeout_ms = 0;
	o.run_timeout_ms = 0;
	nbg_rt_buffer in = { input, input_size };
	nbg_rt_session_result *r = NULL;
	nbg_error e;
	assert_int_equal(nbg_rt_session_run(&o, model, model_size, &in, 1, &r, &e), NBG_OK);
	assert_int_equal(nbg_rt_session_info_of(r)->backend, NBG_RT_SELECT_VIPLITE);
	nbg_rt_session_free(r);
	o.size = offsetof(nbg_rt_session_options, run_timeout_ms);
	assert_int_equal(nbg_rt_session_run(&o, model, model_size, &in, 1, &r, &e),
			 NBG_E_INVALID_ARGUMENT);
	assert_null(r);
}

static void test_probe_report(void **state)
{
	(void)state;
	nbg_rt_backend_report rep;
	nbg_error e;
	setenv("VIPLITE_TD", "", 1);
	assert_int_equal(nbg_rt_backend_probe(NBG_RT_SELECT_VIPLITE, TD_VIP, 0, &rep, &e), NBG_OK);
	assert_int_equal(rep.code, NBG_OK);
	assert_true(rep.library_found);
	assert_int_equal(rep.symbols_resolved, rep.symbols_wanted);
	assert_int_equal(rep.version_word, 0x00020003u);
	assert_true(rep.version_major == 2 && rep.version_minor == 0 && rep.version_patch == 3);
	assert_int_equal(rep.cid, 0x1000003bu);
	assert_int_equal(rep.device_count, 1);
	setenv("VIPLITE_TD", "init-fail", 1);
	assert_int_equal(nbg_rt_backend_probe(NBG_RT_SELECT_VIPLITE, TD_VIP, 0, &rep, &e), NBG_OK);
	assert_int_equal(rep.code, NBG_E_INIT_FAILED);
	assert_int_equal(rep.init_status, -2);
	unsigned maj, min, pat;
	nbg_rt_version_decode(0x00010d00u, &maj, &min, &pat);
	assert_true(maj == 1 && min == 13 && pat == 0);
}

static int setup(void **state)
{
	(void)state;
	struct stat st;
	if (stat(MODEL, &st) != 0) {
		fprintf(stderr, "corpus file %s absent: skipped\n", MODEL);
		return -1;
	}
	FILE *f = fopen(MODEL, "rb");
	model_size = (size_t)st.st_size;
	model = malloc(model_size);
	assert_int_equal(fread(model, 1, model_size, f), model_size);
	fclose(f);
	input_size = 98304; /* the model's one INT16 input, 1x128x128x3 */
	input = malloc(input_size);
	for (size_t i = 0; i < input_size; i++)
		input[i] = (uint8_t)(i * 31 + 3);
	snprintf(state_path, sizeof(state_path), "/tmp/nbgvipstate.XXXXXX");
	int fd = mkstemp(state_path);
	assert_true(fd >= 0);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(state_path);
	free(model);
	free(input);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_nnsdk_real_failure),
		cmocka_unit_test(test_options_size),
		cmocka_unit_test(test_probe_report),
	};
	int rc = rt_models_open(argc, argv, "test_viplite", &models);

	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, setup, teardown);
	rt_models_close(&models);
	return rc;
}

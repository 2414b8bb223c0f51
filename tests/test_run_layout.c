/*
 * test_run_layout.c - nbg run's input layout on a synthesized model with
 * two 4-D inputs: an NHWC record (dims 3, 5, 4, 1 innermost first: shape
 * (1, 4, 5, 3)) and an NCHW one (dims 5, 4, 3, 1: shape (1, 3, 4, 5)).
 *
 * - An array in the other layout is refused (tensor-shape-mismatch, exit
 *   1) with a sentence naming both shapes and the --layout that converts
 *   it; a shape that is no permutation of the record's keeps its message;
 *   an array in the model's own shape is read as before, with or without
 *   --layout.
 * - With --layout, the bytes nbg run feeds (nbg_tensor_to_raw_layout, the
 *   call run_inputs.c makes) and nbg tensor --layout writes equal numpy's:
 *   the arrays and the expected bytes are written by /usr/bin/python3 with
 *   np.transpose (the record's own dtype uint8 and float32 for FP32
 *   records, C and Fortran order).  Without numpy those cases are reported
 *   as not run, with why.  (tests/python's test_run_layout runs a copy
 *   model through nbg run --backend cpu --layout end to end.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fixture.h"
#include "nbg/nbg.h"
#include "nbg/tensor.h"

static char *work;
static char model_u8[512], model_f32[512];
static int have_numpy;

static void write_file(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* A model whose two inputs (and outputs) are the NHWC and NCHW records,
 * in data format fmt (2 UINT8, 0 FP32), unquantized. */
static void build_model(const char *path, uint32_t fmt)
{
	static const uint32_t nhwc[4] = { 3, 5, 4, 1 }, nchw[4] = { 5, 4, 3, 1 };
	fx_spec *s = fx_default();
	uint8_t rec[2 * 112];
	fx_io_record(rec, 4, nhwc, fmt, NBG_QUANT_NONE, 0, 0, "nhwc");
	fx_io_record(rec + 112, 4, nchw, fmt, NBG_QUANT_NONE, 0, 0, "nchw");
	fx_set(s, 1, rec, sizeof(rec), 0, 112); /* INPUT */
	fx_set(s, 2, rec, sizeof(rec), 0, 112); /* OUTPUT */
	fx_put32(fx_find(s, 35)->data + 0x40, 2);
	fx_put32(fx_find(s, 35)->data + 0x44, 2);
	size_t n;
	uint8_t *b = fx_build(s, &n);
	fx_free(s);
	write_file(path, b, n);
	free(b);
}

static int sh(const char *cmd)
{
	int s = system(cmd);
	return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

/* The arrays, and what numpy says the records' bytes are. */
static const char numpy_script[] =
	"import numpy as np\n"
	"rng = np.random.default_rng(41)\n"
	"for dt, tag in (('|u1', 'u8'), ('<f4', 'f32')):\n"
	"    if tag == 'u8':\n"
	"        a = rng.integers(0, 256, size=(1, 3, 4, 5)).astype(dt)\n"
	"        b = rng.integers(0, 256, size=(1, 3, 4, 5)).astype(dt)\n"
	"    else:\n"
	"        a = rng.standard_normal((1, 3, 4, 5)).astype(dt)\n"
	"        b = rng.standard_normal((1, 3, 4, 5)).astype(dt)\n"
	"    np.save('nchw_%s.npy' % tag, a)            # NCHW, for the NHWC record\n"
	"    np.save('nchw_f_%s.npy' % tag, np.asfortranarray(a))\n"
	"    open('exp_nhwc_%s.bin' % tag, 'wb').write(np.transpose(a, (0, 2, 3, 1)).tobytes())\n"
	"    h = np.transpose(b, (0, 2, 3, 1))               # NHWC, for the NCHW record\n"
	"    np.save('nhwc_%s.npy' % tag, h)\n"
	"    np.save('nhwc_f_%s.npy' % tag, np.asfortranarray(h))\n"
	"    open('exp_nchw_%s.bin' % tag, 'wb').write(np.transpose(h, (0, 3, 1, 2)).tobytes())\n";

static int setup(void **state)
{
	(void)state;
	work = fx_tmpdir("nbg-layout");
	if (!work)
		return -1;
	snprintf(model_u8, sizeof(model_u8), "%s/u8.nb", work);
	snprintf(model_f32, sizeof(model_f32), "%s/f32.nb", work);
	build_model(model_u8, 2);
	build_model(model_f32, 0);
	have_numpy = sh("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0;
	if (!have_numpy) {
		printf("run-layout: /usr/bin/python3 has no numpy: the byte checks against "
		       "np.transpose are not run\n");
		return 0;
	}
	char p[600], cmd[800];
	snprintf(p, sizeof(p), "%s/gen.py", work);
	write_file(p, numpy_script, strlen(numpy_script));
	snprintf(cmd, sizeof(cmd), "cd '%s' && /usr/bin/python3 gen.py", work);
	return sh(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fx_rmtree(work);
	free(work);
	return 0;
}

/* The bytes nbg run feeds input `idx` of model from the file `name`. */
static void expect_fed(const char *model, size_t idx, const char *name, nbg_tensor_layout layout,
		       const char *expected)
{
	char p[600];
	size_t mn, an, en;
	uint8_t *mb = fx_read_file(model, &mn);
	snprintf(p, sizeof(p), "%s/%s", work, name);
	uint8_t *ab = fx_read_file(p, &an);
	snprintf(p, sizeof(p), "%s/%s", work, expected);
	uint8_t *eb = fx_read_file(p, &en);
	assert_true(mb && ab && eb);
	nbg_model *m;
	nbg_error e;
	assert_int_equal(nbg_parse(mb, mn, NULL, &m, &e), NBG_OK);
	uint8_t *raw;
	size_t rs;
	nbg_code rc = nbg_tensor_to_raw_layout(nbg_model_input_at(m, idx), NBG_TENSOR_NPY, layout,
					       ab, an, &raw, &rs, &e);
	if (rc != NBG_OK)
		fail_msg("%s: %s", name, e.message);
	assert_int_equal(rs, en);
	if (memcmp(raw, eb, en) != 0)
		fail_msg("%s: the bytes fed differ from numpy's transpose (%s)", name, expected);
	free(raw);
	nbg_model_free(m);
	free(mb);
	free(ab);
	free(eb);
}

/* nbg tensor --layout L on input idx of model: the bytes written are the
 * file `expected`; without --layout the array is refused (exit 1). */
static void expect_tensor_cli(const char *model, size_t idx, const char *name, const char *layout,
			      const char *expected)
{
	char out[600], e[600];
	snprintf(out, sizeof(out), "%s/t.bin", work);
	snprintf(e, sizeof(e), "%s/%s", work, expected);
	fx_run_result r = fx_run_nbg(NULL, "tensor --model '%s' --input %zu '%s/%s' -o '%s'", model,
				     idx, work, name, out);
	if (r.status != 1 || !strstr(r.err, "tensor-shape-mismatch"))
		fail_msg("nbg tensor %s without --layout: exit %d\n%s", name, r.status, r.err);
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "tensor --model '%s' --input %zu '%s/%s' --layout %s -o '%s'", model,
		       idx, work, name, layout, out);
	if (r.status != 0)
		fail_msg("nbg tensor %s --layout %s: exit %d\n%s", name, layout, r.status, r.err);
	fx_run_free(&r);
	size_t hn, wn;
	uint8_t *have = fx_read_file(out, &hn), *want = fx_read_file(e, &wn);
	assert_true(have && want);
	if (hn != wn || memcmp(have, want, wn) != 0)
		fail_msg("nbg tensor %s --layout %s: the bytes differ from numpy's (%s)", name, layout,
			 expected);
	free(have);
	free(want);
}

/* --layout: the bytes are numpy's transposition, bit for bit. */
static void test_layout_bytes(void **state)
{
	(void)state;
	if (!have_numpy)
		skip();
	static const char *const tags[] = { "u8", "f32" };
	for (int t = 0; t < 2; t++) {
		const char *m = t ? model_f32 : model_u8;
		char a[64], e[64];
		snprintf(e, sizeof(e), "exp_nhwc_%s.bin", tags[t]);
		snprintf(a, sizeof(a), "nchw_%s.npy", tags[t]);
		expect_fed(m, 0, a, NBG_LAYOUT_NCHW, e);
		snprintf(a, sizeof(a), "nchw_f_%s.npy", tags[t]);
		expect_fed(m, 0, a, NBG_LAYOUT_NCHW, e);
		snprintf(e, sizeof(e), "exp_nchw_%s.bin", tags[t]);
		snprintf(a, sizeof(a), "nhwc_%s.npy", tags[t]);
		expect_fed(m, 1, a, NBG_LAYOUT_NHWC, e);
		snprintf(a, sizeof(a), "nhwc_f_%s.npy", tags[t]);
		expect_fed(m, 1, a, NBG_LAYOUT_NHWC, e);
		expect_tensor_cli(m, 1, a, "nhwc", e);
		snprintf(a, sizeof(a), "nchw_%s.npy", tags[t]);
		snprintf(e, sizeof(e), "exp_nhwc_%s.bin", tags[t]);
		expect_tensor_cli(m, 0, a, "nchw", e);
	}
}

/* An npy of shape s (uint8, zeros) written by the test itself. */
static void npy_of(const char *name, const uint64_t *s, uint32_t k)
{
	uint8_t z[60] = { 0 }, *out;
	size_t n;
	nbg_error e;
	uint64_t count = 1;
	for (uint32_t i = 0; i < k; i++)
		count *= s[i];
	assert_true(count <= sizeof(z));
	assert_int_equal(nbg_npy_encode("|u1", s, k, z, (size_t)count, &out, &n, &e), NBG_OK);
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", work, name);
	write_file(p, out, n);
	free(out);
}

static fx_run_result run_nbg(const char *in0, const char *in1, const char *opt)
{
	return fx_run_nbg(NULL,
			  "run '%s' --input '%s/%s' '%s/%s' --output-dir '%s/out' --device-root '%s' %s",
			  model_u8, work, in0, work, in1, work, work, opt);
}

static void expect_refused(fx_run_result *r, const char *const *needles, const char *what)
{
	if (r->status != 1)
		fail_msg("%s: exit %d, want 1\n%s", what, r->status, r->err);
	for (size_t i = 0; needles[i]; i++)
		if (!strstr(r->err, needles[i]))
			fail_msg("%s: no '%s' in:\n%s", what, needles[i], r->err);
	fx_run_free(r);
}

/* The inputs read and accepted: the run goes on to look for a device
 * under --device-root, an empty directory, and stops there (no-device,
 * exit 4), which it does only after the inputs (doc/runtime.md). */
static void expect_read(fx_run_result *r, const char *what)
{
	if (r->status != 4 || !strstr(r->err, "no-device"))
		fail_msg("%s: exit %d, want 4 (no-device, after the inputs):\n%s", what, r->status,
			 r->err);
	fx_run_free(r);
}

static void test_run_cli(void **state)
{
	(void)state;
	static const uint64_t nhwc[4] = { 1, 4, 5, 3 }, nchw[4] = { 1, 3, 4, 5 },
			      hw_swapped[4] = { 1, 3, 5, 4 }, other[4] = { 1, 2, 5, 6 };
	npy_of("a_nhwc.npy", nhwc, 4);
	npy_of("a_nchw.npy", nchw, 4);
	npy_of("a_swapped.npy", hw_swapped, 4);
	npy_of("a_other.npy", other, 4);
	npy_of("a_3d.npy", nchw + 1, 3);
	/* the model's own shapes: read as they are, with or without --layout */
	fx_run_result r = run_nbg("a_nhwc.npy", "a_nchw.npy", "");
	expect_read(&r, "own shapes");
	r = run_nbg("a_nhwc.npy", "a_nchw.npy", "--layout nchw");
	expect_read(&r, "own shapes, --layout nchw");
	/* NCHW for the NHWC record: refused, naming both shapes and --layout nchw */
	static const char *const nchw_msg[] = { "tensor-shape-mismatch", "(1, 3, 4, 5)",
						"(1, 4, 5, 3)", "another order", "--layout nchw",
						NULL };
	r = run_nbg("a_nchw.npy", "a_nchw.npy", "");
	expect_refused(&r, nchw_msg, "NCHW array, NHWC record");
	r = run_nbg("a_nchw.npy", "a_nchw.npy", "--layout nchw");
	expect_read(&r, "NCHW array, NHWC record, --layout nchw");
	/* the other way round: --layout nhwc */
	static const char *const nhwc_msg[] = { "tensor-shape-mismatch", "--layout nhwc", NULL };
	r = run_nbg("a_nhwc.npy", "a_nhwc.npy", "");
	expect_refused(&r, nhwc_msg, "NHWC array, NCHW record");
	r = run_nbg("a_nhwc.npy", "a_nhwc.npy", "--layout nhwc");
	expect_read(&r, "NHWC array, NCHW record, --layout nhwc");
	/* the wrong --layout converts nothing: still refused */
	r = run_nbg("a_nchw.npy", "a_nchw.npy", "--layout nhwc");
	expect_refused(&r, nchw_msg, "NCHW array, --layout nhwc");
	/* a permutation no layout reaches, and one that is not 4-D */
	static const char *const none_msg[] = { "tensor-shape-mismatch", "(1, 3, 5, 4)",
						"another order", "no --layout", NULL };
	r = run_nbg("a_swapped.npy", "a_nchw.npy", "--layout nchw");
	expect_refused(&r, none_msg, "H and W swapped");
	static const char *const d3_msg[] = { "tensor-shape-mismatch", "(3, 4, 5)",
					      "no --layout", NULL };
	r = run_nbg("a_3d.npy", "a_nchw.npy", "--layout nchw");
	expect_refused(&r, d3_msg, "3-D NCHW");
	/* not a permutation: the message it always had */
	static const char *const other_msg[] = { "tensor-shape-mismatch", "(1, 2, 5, 6)",
						 "is not the record's", NULL };
	r = run_nbg("a_other.npy", "a_nchw.npy", "--layout nchw");
	expect_refused(&r, other_msg, "other dimensions");
	/* a raw file carries no shape: its size is all that is compared */
	char p[600];
	snprintf(p, sizeof(p), "%s/short.bin", work);
	write_file(p, "abc", 3);
	static const char *const raw_msg[] = { "input-size-mismatch", NULL };
	r = run_nbg("short.bin", "a_nchw.npy", "--layout nchw");
	expect_refused(&r, raw_msg, "raw of another size");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_bytes),
		cmocka_unit_test(test_run_cli),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

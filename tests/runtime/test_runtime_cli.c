/*
 * test_runtime_cli.c - end-to-end tests of `nbg probe` and `nbg run`: the
 * real binary against the libnnsdk test double, with exit codes, the files
 * written (and never left behind on failure) and summary.json checked.
 */
#define NBG_STATIC_LINKING_ONLY /* nbg_hex32 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "../exe_wrapper.h"
#include "lp64.h"
#include "nbg/nbg.h"
#include "nbg/runtime.h"
#include "rt_models.h"

/* Synthesized, or the real face detector pair with --corpus (rt_models.h). */
static rt_models models;
#define MODEL_INT16 models.int16
#define MODEL_FP16 models.fp16

static char work[64];      /* scratch directory for this run */
static char dev_root[128]; /* galcore present */
static char no_dev[128];   /* empty */
static char input_ok[160]; /* 98304 bytes */
static char input_short[160];
static char bad_model[160];

/* ------------------------------------------------------------ helpers */

static void path_in(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", work, name);
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	rewind(f);
	uint8_t *p = malloc(len > 0 ? (size_t)len + 1 : 1);
	assert_non_null(p);
	size_t got = fread(p, 1, (size_t)len, f);
	fclose(f);
	assert_int_equal(got, (size_t)len);
	p[len] = 0;
	*n = (size_t)len;
	return p;
}

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		rm_rf(p);
	}
	closedir(d);
	rmdir(path);
}

/* Number of entries in dir (hidden ones included); -1 if it does not exist. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

typedef struct result {
	int status;
	char *out;
	char *err;
} result;

static void result_free(result *r)
{
	free(r->out);
	free(r->err);
}

/* Runs NBG_BIN with args (NULL-terminated); env is "NAME=VALUE" (empty value:
 * unset) or NULL. */
static result run_nbg(const char *env, ...)
{
	const char *argv[64];
	int argc = 0;
	argv[argc++] = NBG_BIN;
	va_list ap;
	va_start(ap, env);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && argc < 63)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;

	char out_path[128], err_path[128];
	path_in(out_path, sizeof(out_path), "stdout.txt");
	path_in(err_path, sizeof(err_path), "stderr.txt");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0)
			_exit(127);
		dup2(fo, 1);
		dup2(fe, 2);
		unsetenv("NNSDK_TESTDOUBLE_FAIL");
		unsetenv("NBG_NNSDK_PATH");
		unsetenv("NBG_DEVICE_ROOT");
		if (env) {
			char name[64];
			const char *eq = strchr(env, '=');
			snprintf(name, sizeof(name), "%.*s", (int)(eq - env), env);
			setenv(name, eq + 1, 1);
		}
		nbg_execv(NBG_BIN, (char *const *)argv);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	result r = { 0 };
	if (WIFSIGNALED(st))
		fprintf(stderr, "nbg died from signal %d\n", WTERMSIG(st));
	assert_true(WIFEXITED(st));
	r.status = WEXITSTATUS(st);
	size_t n;
	r.out = (char *)read_file(out_path, &n);
	r.err = (char *)read_file(err_path, &n);
	assert_non_null(r.out);
	assert_non_null(r.err);
	return r;
}

static void expect_status(const result *r, int status)
{
	if (r->status != status)
		fprintf(stderr, "exit %d (wanted %d)\nstdout:\n%s\nstderr:\n%s\n", r->status, status,
			r->out, r->err);
	assert_int_equal(r->status, status);
}

static json_t *load_summary(const char *dir)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/summary.json", dir);
	json_error_t je;
	json_t *j = json_load_file(p, 0, &je);
	if (!j)
		fprintf(stderr, "summary.json: %s\n", je.text);
	assert_non_null(j);
	return j;
}

static void fresh_dir(char *out, size_t n, const char *name)
{
	path_in(out, n, name);
	rm_rf(out);
}

/* ------------------------------------------------------------ fixtures */

static int setup_all(void **state)
{
	(void)state;
	snprintf(work, sizeof(work), "/tmp/nbgrtcli.XXXXXX");
	assert_non_null(mkdtemp(work));
	path_in(dev_root, sizeof(dev_root), "dev");
	path_in(no_dev, sizeof(no_dev), "nodev");
	assert_int_equal(mkdir(dev_root, 0755), 0);
	assert_int_equal(mkdir(no_dev, 0755), 0);
	char g[192];
	snprintf(g, sizeof(g), "%s/galcore", dev_root);
	write_file(g, "", 0);

	uint8_t *in = calloc(98304, 1);
	assert_non_null(in);
	for (size_t i = 0; i < 98304; i++)
		in[i] = (uint8_t)(i * 31);
	path_in(input_ok, sizeof(input_ok), "input.bin");
	write_file(input_ok, in, 98304);
	path_in(input_short, sizeof(input_short), "input_short.bin");
	write_file(input_short, in, 98300);
	free(in);

	/* An invalid model derived from a valid one: one payload byte flipped. */
	size_t n;
	uint8_t *m = read_file(MODEL_INT16, &n);
	assert_non_null(m);
	m[n - 600] ^= 0x40;
	path_in(bad_model, sizeof(bad_model), "bad.nb");
	write_file(bad_model, m, n);
	free(m);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	rm_rf(work);
	return 0;
}

/* ------------------------------------------------------------ probe */

static void test_probe_no_npu(void **state)
{
	(void)state;
	result r = run_nbg(NULL, "probe", "--device-root", no_dev, "--nnsdk", TD_LIB, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.out, "NPU: none found"));
	assert_non_null(strstr(r.out, "ready to run NBG files: no"));
	assert_non_null(strstr(r.err, "no NPU device found"));
	result_free(&r);

	r = run_nbg(NULL, "probe", "--device-root", no_dev, "--json", NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "npu_present")));
	assert_false(json_is_true(json_object_get(j, "ready")));
	assert_int_equal(json_integer_value(json_object_get(j, "backend")), -1);
	assert_int_equal(json_array_size(json_object_get(j, "nodes")), 4);
	json_decref(j);
	result_free(&r);

	/* The environment variable is the default root. */
	char env[192];
	snprintf(env, sizeof(env), "NBG_DEVICE_ROOT=%s", no_dev);
	r = run_nbg(env, "probe", NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.out, no_dev));
	result_free(&r);
}

/* The CPU backend's line per MODEL operand.  Expected from the sample's
 * builder (tests/sample_model.c): INIT, two NN convolutions and an SH
 * softmax, so it is planned with 4 operations, and the verdicts add up. */
static void test_probe_cpu_models(void **state)
{
	(void)state;
	result r = run_nbg(NULL, "probe", "--device-root", no_dev, NBG_SAMPLE, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME); /* no NPU: the machine's verdict stands */
	assert_non_null(strstr(r.out, "CPU backend (nbg run --backend cpu): available, needs no device\n"));
	assert_non_null(strstr(r.out, "sample.nb: "));
	result_free(&r);

	r = run_nbg(NULL, "probe", "--device-root", no_dev, "--json", NBG_SAMPLE, bad_model, NULL);
	expect_status(&r, NBG_EXIT_INVALID); /* the damaged model sets the exit code */
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	json_t *cpu = json_object_get(j, "cpu_backend");
	assert_true(json_is_true(json_object_get(cpu, "available")));
	json_t *ms = json_object_get(cpu, "models");
	assert_int_equal(json_array_size(ms), 2);
	json_t *s = json_array_get(ms, 0);
	assert_int_equal(json_integer_value(json_object_get(s, "operations")), 4);
	assert_int_equal(json_integer_value(json_object_get(s, "executed")) +
				 json_integer_value(json_object_get(s, "nothing")) +
				 json_integer_value(json_object_get(s, "refused")),
			 4);
	/* first_refused: null when it runs whole; the sample's SH softmax otherwise */
	json_t *fr = json_object_get(s, "first_refused");
	assert_true(json_is_true(json_object_get(s, "runs_whole")) == json_is_null(fr));
	assert_true(json_is_null(fr) || !strcmp(json_string_value(json_object_get(fr, "type")), "SH"));
	assert_true(json_is_null(json_object_get(s, "caveat"))); /* a v2 file: no inferred layout */
	assert_non_null(json_string_value(json_object_get(json_array_get(ms, 1), "error")));
	json_decref(j);
	result_free(&r);
}

static void test_probe_galcore(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	result r = run_nbg(NULL, "probe", "--device-root", dev_root, "--nnsdk", TD_LIB, "--json", NULL);
	expect_status(&r, NBG_EXIT_OK);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "backend")), 0);
	assert_string_equal(json_string_value(json_object_get(j, "backend_name")), "VIPUNIFY");
	assert_true(json_is_true(json_object_get(j, "nbg_capable")));
	assert_true(json_is_true(json_object_get(j, "ready")));
	json_t *lib = json_array_get(json_object_get(j, "backends"), 0); /* libnnsdk's report */
	assert_string_equal(json_string_value(json_object_get(lib, "backend")), "nnsdk");
	assert_string_equal(json_string_value(json_object_get(lib, "library")), TD_LIB);
	assert_true(json_is_true(json_object_get(lib, "found")));
	assert_string_equal(json_string_value(json_object_get(lib, "code")), "ok");
	assert_true(json_is_true(json_object_get(lib, "flush")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "selected"), "backend")),
			    "nnsdk");
	json_decref(j);
	result_free(&r);

	r = run_nbg(NULL, "probe", "--device-root", dev_root, "--nnsdk", TD_LIB, NULL);
	expect_status(&r, NBG_EXIT_OK);
	assert_non_null(strstr(r.out, "NPU: backend 0 (VIPUNIFY)"));
	assert_non_null(strstr(r.out, "ready to run NBG files: yes"));
	result_free(&r);

	/* Device present, library missing: not ready. */
	r = run_nbg(NULL, "probe", "--device-root", dev_root, "--nnsdk", "/nonexistent/libnnsdk.so", NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.out, "library-missing"));
	result_free(&r);

	/* Device present, a symbol missing. */
	r = run_nbg(NULL, "probe", "--device-root", dev_root, "--nnsdk", TD_LIB_NODESTROY, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.out, "symbol-missing"));
	result_free(&r);
}

static void test_probe_other_backends(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char root[160], p[200];
	fresh_dir(root, sizeof(root), "adla");
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(p, sizeof(p), "%s/adla0", root);
	write_file(p, "", 0);
	result r = run_nbg(NULL, "probe", "--device-root", root, "--nnsdk", TD_LIB, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.out, "ADLA"));
	assert_non_null(strstr(r.out, "does not run VeriSilicon NBG"));
	result_free(&r);
	unlink(p);
	snprintf(p, sizeof(p), "%s/mali0", root);
	write_file(p, "", 0);
	r = run_nbg(NULL, "probe", "--device-root", root, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.out, "mali0 is a GPU"));
	result_free(&r);
	snprintf(p, sizeof(p), "%s/vipcore", root);
	write_file(p, "", 0);
	r = run_nbg(NULL, "probe", "--device-root", root, "--nnsdk", TD_LIB, NULL);
	expect_status(&r, NBG_EXIT_OK);
	assert_non_null(strstr(r.out, "VIPLITE"));
	result_free(&r);
	rm_rf(root);

	r = run_nbg(NULL, "probe", "--bogus", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "probe", "--device-root", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
}

/* ------------------------------------------------------------ run: success */

static void check_output_file(const char *dir, int i, size_t want, json_t *jo)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/output_%d.bin", dir, i);
	size_t n;
	uint8_t *data = read_file(p, &n);
	assert_non_null(data);
	assert_int_equal(n, want);
	uint8_t d[32];
	char hex[65];
	unsigned dlen = 0;
	/* OpenSSL's digest of the bytes: an independent computation */
	assert_int_equal(EVP_Digest(data, n, d, &dlen, EVP_sha256(), NULL), 1);
	nbg_hex32(d, hex);
	assert_string_equal(json_string_value(json_object_get(jo, "sha256")), hex);
	free(data);
}

static void test_run_ok(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char out[160];
	fresh_dir(out, sizeof(out), "out_ok");
	result r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out,
			   "--nnsdk", TD_LIB, "--device-root", dev_root, "--loops", "3", NULL);
	expect_status(&r, NBG_EXIT_OK);
	assert_non_null(strstr(r.out, "output 0: INT16 [1,896,16] 28672 bytes"));
	assert_non_null(strstr(r.out, "output 1: INT16 [1,896,1] 1792 bytes"));
	result_free(&r);
	/* output_<i>.bin and output_<i>.npy for both outputs, summary.json */
	assert_int_equal(dir_entries(out), 5);

	json_t *s = load_summary(out);
	assert_string_equal(json_string_value(json_object_get(s, "result")), "ok");
	assert_int_equal(json_integer_value(json_object_get(s, "loops")), 3);
	json_t *model = json_object_get(s, "model");
	assert_string_equal(json_string_value(json_object_get(model, "target")), "0x1000003b");
	json_t *rt = json_object_get(s, "runtime");
	assert_string_equal(json_string_value(json_object_get(rt, "backend_name")), "VIPUNIFY");
	assert_string_equal(json_string_value(json_object_get(rt, "library")), TD_LIB);
	json_t *ins = json_object_get(s, "inputs");
	assert_int_equal(json_array_size(ins), 1);
	json_t *in0 = json_array_get(ins, 0);
	assert_int_equal(json_integer_value(json_object_get(in0, "bytes")), 98304);
	json_t *shape = json_object_get(in0, "shape");
	assert_int_equal(json_array_size(shape), 4);
	assert_int_equal(json_integer_value(json_array_get(shape, 0)), 1);
	assert_int_equal(json_integer_value(json_array_get(shape, 1)), 128);
	assert_int_equal(json_integer_value(json_array_get(shape, 3)), 3);

	json_t *outs = json_object_get(s, "outputs");
	assert_int_equal(json_array_size(outs), 2);
	json_t *o0 = json_array_get(outs, 0), *o1 = json_array_get(outs, 1);
	assert_string_equal(json_string_value(json_object_get(o0, "format")), "INT16");
	assert_string_equal(json_string_value(json_object_get(o0, "file")), "output_0.bin");
	assert_int_equal(json_integer_value(json_object_get(o0, "bytes")), 28672);
	assert_int_equal(json_integer_value(json_object_get(o1, "bytes")), 1792);
	shape = json_object_get(o0, "shape");
	assert_int_equal(json_array_size(shape), 3);
	assert_int_equal(json_integer_value(json_array_get(shape, 0)), 1);
	assert_int_equal(json_integer_value(json_array_get(shape, 1)), 896);
	assert_int_equal(json_integer_value(json_array_get(shape, 2)), 16);
	assert_true(json_is_true(json_object_get(o0, "stable_across_loops")));
	check_output_file(out, 0, 28672, o0);
	check_output_file(out, 1, 1792, o1);

	json_t *t = json_object_get(s, "timings_ms");
	assert_true(json_is_number(json_object_get(t, "create")));
	assert_true(json_is_number(json_object_get(t, "destroy")));
	assert_true(json_is_number(json_object_get(json_object_get(t, "run"), "mean")));
	assert_true(json_is_number(json_object_get(json_object_get(t, "retrieve"), "max")));
	assert_null(json_object_get(s, "golden"));
	json_decref(s);

	/* --float32-outputs: the stock caller's conversion, FP32 sizes. */
	fresh_dir(out, sizeof(out), "out_f32");
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--float32-outputs", NULL);
	expect_status(&r, NBG_EXIT_OK);
	result_free(&r);
	s = load_summary(out);
	o0 = json_array_get(json_object_get(s, "outputs"), 0);
	assert_string_equal(json_string_value(json_object_get(o0, "format")), "FP32");
	assert_int_equal(json_integer_value(json_object_get(o0, "bytes")), 57344);
	check_output_file(out, 0, 57344, o0);
	json_decref(s);
}

/* ------------------------------------------------------------ run: golden */

/* Flips the lowest bit of element 0 of a 16-bit output: |diff| == 1 for INT16. */
static void flip_low_bit(const char *path, size_t offset)
{
	size_t n;
	uint8_t *p = read_file(path, &n);
	assert_non_null(p);
	assert_true(offset < n);
	p[offset] ^= 1;
	write_file(path, p, n);
	free(p);
}

static void copy_file(const char *from, const char *to)
{
	size_t n;
	uint8_t *p = read_file(from, &n);
	assert_non_null(p);
	write_file(to, p, n);
	free(p);
}

static void make_goldens(const char *model, const char *tag, char g0[160], char g1[160])
{
	char out[160], a[200], b[200];
	snprintf(out, sizeof(out), "%s/gold_src_%s", work, tag);
	rm_rf(out);
	result r = run_nbg(NULL, "run", model, "--input", input_ok, "--output-dir", out, "--nnsdk",
			   TD_LIB, "--device-root", dev_root, NULL);
	expect_status(&r, NBG_EXIT_OK);
	result_free(&r);
	snprintf(a, sizeof(a), "%s/output_0.bin", out);
	snprintf(b, sizeof(b), "%s/output_1.bin", out);
	snprintf(g0, 160, "%s/golden0_%s.bin", work, tag);
	snprintf(g1, 160, "%s/golden1_%s.bin", work, tag);
	copy_file(a, g0);
	copy_file(b, g1);
}

static void test_golden_int16(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char g0[160], g1[160], out[160], tol[32];
	make_goldens(MODEL_INT16, "i16", g0, g1);
	/* Goldens are compared dequantized: one step of output k is 2^-fl_k, with
	 * fl the records' fixed point positions (both outputs INT16 dfp). */
	size_t mn;
	uint8_t *mb = read_file(MODEL_INT16, &mn);
	nbg_model *mm;
	nbg_error me;
	assert_int_equal(nbg_parse(mb, mn, NULL, &mm, &me), NBG_OK);
	assert_int_equal(nbg_model_output_at(mm, 0)->quant_format, NBG_QUANT_DFP);
	double lsb0 = ldexp(1.0, -nbg_model_output_at(mm, 0)->fixed_point_pos);
	double lsb1 = ldexp(1.0, -nbg_model_output_at(mm, 1)->fixed_point_pos);
	nbg_model_free(mm);
	free(mb);
	snprintf(tol, sizeof(tol), "%.17g", lsb0 > lsb1 ? lsb0 : lsb1);

	fresh_dir(out, sizeof(out), "out_gold_match");
	result r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out,
			   "--nnsdk", TD_LIB, "--device-root", dev_root, "--golden", g0, g1, NULL);
	expect_status(&r, NBG_EXIT_OK);
	result_free(&r);
	json_t *s = load_summary(out);
	json_t *g = json_object_get(s, "golden");
	assert_true(json_is_true(json_object_get(g, "match")));
	json_t *go0 = json_array_get(json_object_get(g, "outputs"), 0);
	assert_int_equal(json_integer_value(json_object_get(go0, "elements")), 14336);
	assert_int_equal(json_integer_value(json_object_get(go0, "mismatches")), 0);
	assert_true(json_number_value(json_object_get(go0, "max_abs_diff")) == 0.0);
	json_decref(s);

	/* One element off by one: a mismatch at tolerance 0... */
	flip_low_bit(g0, 2 * 100);
	fresh_dir(out, sizeof(out), "out_gold_mismatch");
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", g0, g1, NULL);
	expect_status(&r, NBG_EXIT_INVALID);
	assert_non_null(strstr(r.err, "golden mismatch"));
	assert_non_null(strstr(r.out, "MISMATCH"));
	result_free(&r);
	s = load_summary(out);
	assert_string_equal(json_string_value(json_object_get(s, "result")), "golden-mismatch");
	g = json_object_get(s, "golden");
	assert_false(json_is_true(json_object_get(g, "match")));
	go0 = json_array_get(json_object_get(g, "outputs"), 0);
	assert_int_equal(json_integer_value(json_object_get(go0, "mismatches")), 1);
	assert_int_equal(json_integer_value(json_object_get(go0, "first_mismatch")), 100);
	assert_true(json_number_value(json_object_get(go0, "max_abs_diff")) == lsb0);
	json_t *go1 = json_array_get(json_object_get(g, "outputs"), 1);
	assert_true(json_is_true(json_object_get(go1, "match")));
	json_decref(s);

	/* ...and within tolerance 1. */
	fresh_dir(out, sizeof(out), "out_gold_tol");
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", g0, g1, "--tolerance", tol, NULL);
	expect_status(&r, NBG_EXIT_OK);
	result_free(&r);

	/* A large difference: the high byte of an element. */
	flip_low_bit(g1, 1);
	flip_low_bit(g1, 1 + 2);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", g0, g1, "--tolerance", tol, NULL);
	expect_status(&r, NBG_EXIT_INVALID);
	result_free(&r);
	s = load_summary(out);
	go1 = json_array_get(json_object_get(json_object_get(s, "golden"), "outputs"), 1);
	assert_int_equal(json_integer_value(json_object_get(go1, "mismatches")), 2);
	assert_true(json_number_value(json_object_get(go1, "max_abs_diff")) == 256.0 * lsb1);
	json_decref(s);

	/* Golden usage errors: wrong count, wrong size, tolerance alone. */
	fresh_dir(out, sizeof(out), "out_gold_usage");
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", g0, NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", g1, g0, NULL);
	expect_status(&r, NBG_EXIT_INVALID); /* a golden of another size: a wrong file */
	assert_non_null(strstr(r.err, "golden"));
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--tolerance", "1", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", "/nonexistent/g0", g1, NULL);
	expect_status(&r, NBG_EXIT_IO);
	result_free(&r);
	assert_true(dir_entries(out) <= 0);
}

static void test_golden_fp16(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char g0[160], g1[160], out[160];
	make_goldens(MODEL_FP16, "f16", g0, g1);
	flip_low_bit(g0, 0); /* one ulp of an FP16 element */
	fresh_dir(out, sizeof(out), "out_gold_f16");
	result r = run_nbg(NULL, "run", MODEL_FP16, "--input", input_ok, "--output-dir", out,
			   "--nnsdk", TD_LIB, "--device-root", dev_root, "--golden", g0, g1, NULL);
	expect_status(&r, NBG_EXIT_INVALID);
	result_free(&r);
	json_t *s = load_summary(out);
	json_t *go0 = json_array_get(json_object_get(json_object_get(s, "golden"), "outputs"), 0);
	assert_string_equal(json_string_value(json_object_get(go0, "format")), "FP16");
	double d = json_number_value(json_object_get(go0, "max_abs_diff"));
	assert_true(d > 0 && d < 0.01); /* compared as floats, not as bytes */
	json_decref(s);
	r = run_nbg(NULL, "run", MODEL_FP16, "--input", input_ok, "--output-dir", out, "--nnsdk",
		    TD_LIB, "--device-root", dev_root, "--golden", g0, g1, "--tolerance", "0.01", NULL);
	expect_status(&r, NBG_EXIT_OK);
	result_free(&r);
}

/* ------------------------------------------------------------ run: failures */

/* Runs a failing case into a fresh directory; nothing may be left there. */
static void expect_failure(const char *tag, const char *env, int status, const char *needle,
			   const char *model, const char *input, const char *lib, const char *root)
{
	char out[160];
	fresh_dir(out, sizeof(out), tag);
	result r = run_nbg(env, "run", model, "--input", input, "--output-dir", out, "--nnsdk", lib,
			   "--device-root", root, NULL);
	expect_status(&r, status);
	if (needle && !strstr(r.err, needle))
		fprintf(stderr, "[%s] stderr lacks '%s':\n%s\n", tag, needle, r.err);
	if (needle)
		assert_non_null(strstr(r.err, needle));
	result_free(&r);
	int n = dir_entries(out);
	if (n > 0)
		fprintf(stderr, "[%s] %d file(s) left in %s\n", tag, n, out);
	assert_true(n <= 0); /* absent or empty: no partial outputs */
}

static void test_run_failures(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	expect_failure("f_libmissing", NULL, NBG_EXIT_RUNTIME, "library-missing", MODEL_INT16,
		       input_ok, "/nonexistent/libnnsdk.so", dev_root);
	expect_failure("f_symbol", NULL, NBG_EXIT_RUNTIME, "symbol-missing", MODEL_INT16, input_ok,
		       TD_LIB_NODESTROY, dev_root);
	expect_failure("f_nodevice", NULL, NBG_EXIT_RUNTIME, "no-device", MODEL_INT16, input_ok,
		       TD_LIB, no_dev);
	expect_failure("f_create", "NNSDK_TESTDOUBLE_FAIL=create-null", NBG_EXIT_RUNTIME,
		       "create-failed", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_inputset", "NNSDK_TESTDOUBLE_FAIL=input-set-fail", NBG_EXIT_RUNTIME,
		       "input-set-failed", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_flush", "NNSDK_TESTDOUBLE_FAIL=flush-fail", NBG_EXIT_RUNTIME,
		       "run-failed", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_outnull", "NNSDK_TESTDOUBLE_FAIL=output-null", NBG_EXIT_RUNTIME,
		       "output-null", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_datanull", "NNSDK_TESTDOUBLE_FAIL=data-null", NBG_EXIT_RUNTIME,
		       "output-data-null", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_count", "NNSDK_TESTDOUBLE_FAIL=count-short", NBG_EXIT_RUNTIME,
		       "output-invalid", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_size", "NNSDK_TESTDOUBLE_FAIL=size-short", NBG_EXIT_RUNTIME,
		       "output-invalid", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_destroy", "NNSDK_TESTDOUBLE_FAIL=destroy-fail", NBG_EXIT_RUNTIME,
		       "destroy-failed", MODEL_INT16, input_ok, TD_LIB, dev_root);
	expect_failure("f_inputsize", NULL, NBG_EXIT_INVALID, "input-size-mismatch", MODEL_INT16,
		       input_short, TD_LIB, dev_root);
	expect_failure("f_badmodel", NULL, NBG_EXIT_INVALID, "model-invalid", bad_model, input_ok,
		       TD_LIB, dev_root);
	expect_failure("f_nomodel", NULL, NBG_EXIT_IO, NULL, "/nonexistent/model.nb", input_ok,
		       TD_LIB, dev_root);
	expect_failure("f_noinput", NULL, NBG_EXIT_IO, NULL, MODEL_INT16, "/nonexistent/in.bin",
		       TD_LIB, dev_root);
	/* The environment variables are honoured when no option is given. */
	char out[160];
	fresh_dir(out, sizeof(out), "f_env");
	char env[256];
	snprintf(env, sizeof(env), "NBG_NNSDK_PATH=/nonexistent/env/libnnsdk.so");
	result r = run_nbg(env, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out,
			   "--device-root", dev_root, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.err, "/nonexistent/env/libnnsdk.so"));
	result_free(&r);
	assert_true(dir_entries(out) <= 0);
}

static void test_run_input_count(void **state)
{
	(void)state;
	char out[160];
	fresh_dir(out, sizeof(out), "f_inputcount");
	result r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, input_ok, "--output-dir",
			   out, "--nnsdk", TD_LIB, "--device-root", dev_root, NULL);
	/* Inputs that do not fit the model are a check that failed, not a usage error. */
	expect_status(&r, NBG_EXIT_INVALID);
	assert_non_null(strstr(r.err, "input-count-mismatch"));
	result_free(&r);
	/* --input given twice collects both. */
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--input", input_ok,
		    "--output-dir", out, "--nnsdk", TD_LIB, "--device-root", dev_root, NULL);
	expect_status(&r, NBG_EXIT_INVALID);
	assert_non_null(strstr(r.err, "2 --input files given"));
	result_free(&r);
	assert_true(dir_entries(out) <= 0);
}

static void test_run_usage(void **state)
{
	(void)state;
	result r = run_nbg(NULL, "run", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	assert_non_null(strstr(r.err, "usage: nbg run"));
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	assert_non_null(strstr(r.err, "--output-dir"));
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--output-dir", work, NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", work, "--loops",
		    "0", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", work, "--loops",
		    "x", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", "--output-dir", work, NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, MODEL_FP16, "--input", input_ok, "--output-dir", work, NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", work,
		    "--tolerance", "-1", "--golden", input_ok, NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
	r = run_nbg(NULL, "run", "--help", NULL);
	expect_status(&r, NBG_EXIT_OK);
	assert_non_null(strstr(r.out, "usage: nbg run"));
	result_free(&r);
}

/* An SDK numbering the input kind enum differently: --input-kind reaches +0x18. */
static void test_input_kind(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char out[160];
	fresh_dir(out, sizeof(out), "out_kind");
	result r = run_nbg("NNSDK_TESTDOUBLE_INPUT_KIND=0", "run", MODEL_INT16, "--input", input_ok,
			   "--output-dir", out, "--nnsdk", TD_LIB, "--device-root", dev_root,
			   "--input-kind", "0", NULL);
	expect_status(&r, NBG_EXIT_OK);
	result_free(&r);
	json_t *s = load_summary(out);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "runtime"), "input_kind")), 0);
	json_decref(s);
	r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out,
		    "--input-kind", "256", NULL);
	expect_status(&r, NBG_EXIT_USAGE);
	result_free(&r);
}

static void test_output_dir_is_file(void **state)
{
	(void)state;
	result r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", input_ok,
			   "--nnsdk", TD_LIB, "--device-root", dev_root, NULL);
	expect_status(&r, NBG_EXIT_IO);
	result_free(&r);
}

#if !NBG_TEST_NNSDK_ABI
/* Not LP64: nbg run on libnnsdk ends with abi-unsupported (exit 4) and
 * writes nothing. */
static void test_abi_refused(void **state)
{
	(void)state;
	char out[160];
	fresh_dir(out, sizeof(out), "out_abi");
	result r = run_nbg(NULL, "run", MODEL_INT16, "--input", input_ok, "--output-dir", out,
			   "--nnsdk", TD_LIB, "--device-root", dev_root, NULL);
	expect_status(&r, NBG_EXIT_RUNTIME);
	assert_non_null(strstr(r.err, "abi-unsupported"));
	assert_int_equal(dir_entries(out), 0);
	result_free(&r);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_no_npu),
		cmocka_unit_test(test_probe_cpu_models),
		cmocka_unit_test(test_probe_galcore),
		cmocka_unit_test(test_probe_other_backends),
		cmocka_unit_test(test_run_ok),
		cmocka_unit_test(test_golden_int16),
		cmocka_unit_test(test_golden_fp16),
		cmocka_unit_test(test_run_failures),
		cmocka_unit_test(test_run_input_count),
		cmocka_unit_test(test_run_usage),
		cmocka_unit_test(test_input_kind),
		cmocka_unit_test(test_output_dir_is_file),
#if !NBG_TEST_NNSDK_ABI
		cmocka_unit_test(test_abi_refused),
#endif
	};
	int rc = rt_models_open(argc, argv, "test_runtime_cli", &models);

	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, setup_all, teardown_all);
	rt_models_close(&models);
	return rc;
}

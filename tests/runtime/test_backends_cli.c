/*
 * test_backends_cli.c - the nbg binary with both vendor runtimes' test
 * doubles installed under the vendor's own library names (libnnsdk.so,
 * libNBGlinker.so, libVIPlite.so in temporary directories reached through
 * LD_LIBRARY_PATH) and fake device roots (regular files, and a character
 * device made with mknod when the machine allows it):
 *
 *   - nbg probe per backend: library found, version word and its decoding,
 *     entry points, vip_init's status, devices, cores, CID; library
 *     missing, symbol missing, init failing; non-UTF-8 paths in the JSON;
 *   - the automatic backend choice from galcore / vipcore nodes;
 *   - --nnsdk together with --backend viplite (never loaded as VIPLite);
 *   - vpm_run's sample.txt, --top N, --timeout against a hanging double,
 *     and crashes inside a vendor call leaving nothing of ours behind.
 *
 * Expected values come from the doubles' documented behaviour, never from
 * nbg: the VIPLite double writes byte j of output k as (j*7 + k + S) & 0xff
 * (S: the sum of all input bytes), the libnnsdk double element j of output
 * k as ((j*13 + k*101 + S) % 200 - 100) * 300 for INT16; versions 0x00020003
 * and 0x00010d00; one device with one core; CID 0x1000003b.  The outputs'
 * fixed point positions come from the model's .meta.json: the vendor's
 * beside the real face detector (--corpus), or the one written beside the
 * synthesized model with the positions it was built with (rt_models.h).
 */
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
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "../exe_wrapper.h"
#include "rt_models.h"
#include "lp64.h"

/* Synthesized, or the real face detector pair with --corpus (rt_models.h). */
static rt_models models;
#define MODEL_I16 models.int16
#define MODEL_F16 models.fp16
#define META_I16 models.meta_int16
#define IN_BYTES 98304u  /* 1x128x128x3, 16-bit elements */
#define OUT0_ELEMS 14336u /* 1x896x16 */
#define OUT1_ELEMS 896u   /* 1x896x1 */

static char work[64];
static char dev_g[128], dev_v[128], dev_gv[128], dev_none[128];
static char lib_all[128], lib_v1[128], lib_nn[128], lib_noprep[128], lib_empty[128];
static char in_i16[160];
static uint64_t sum_i16; /* sum of the input file's bytes */
static int fl_out[2];    /* the outputs' fixed point positions, from .meta.json */
static int fl_in;        /* the input's, from the same file */

/* ------------------------------------------------------------ files */

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
	assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
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

/* The names in dir (hidden ones too), sorted, joined by ' '; "-" if absent. */
static void dir_names(const char *dir, char *out, size_t n)
{
	DIR *d = opendir(dir);
	out[0] = 0;
	if (!d) {
		snprintf(out, n, "-");
		return;
	}
	char names[32][256];
	int k = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && k < 32)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			snprintf(names[k++], sizeof(names[0]), "%s", de->d_name);
	closedir(d);
	for (int i = 0; i < k; i++)
		for (int j = i + 1; j < k; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char t[256];
				memcpy(t, names[i], sizeof(t));
				memcpy(names[i], names[j], sizeof(t));
				memcpy(names[j], t, sizeof(t));
			}
	size_t len = 0;
	for (int i = 0; i < k; i++) {
		size_t m = strlen(names[i]);
		if (len + (i ? 1 : 0) + m >= n)
			fail_msg("the names in %s do not fit in %zu bytes", dir, n);
		if (i)
			out[len++] = ' ';
		memcpy(out + len, names[i], m + 1);
		len += m;
	}
}

static void expect_names(const char *dir, const char *want)
{
	char have[2048];
	dir_names(dir, have, sizeof(have));
	if (strcmp(have, want))
		fail_msg("%s holds [%s], want [%s]", dir, have, want);
}

static void make_dir(char *out, size_t n, const char *name, const char *node1, const char *node2)
{
	path_in(out, n, name);
	assert_int_equal(mkdir(out, 0755), 0);
	char p[256];
	if (node1) {
		snprintf(p, sizeof(p), "%s/%s", out, node1);
		write_file(p, "", 0);
	}
	if (node2) {
		snprintf(p, sizeof(p), "%s/%s", out, node2);
		write_file(p, "", 0);
	}
}

/* A library directory: name=target pairs, NULL-terminated. */
static void make_libdir(char *out, size_t n, const char *name, ...)
{
	path_in(out, n, name);
	assert_int_equal(mkdir(out, 0755), 0);
	va_list ap;
	va_start(ap, name);
	const char *link;
	while ((link = va_arg(ap, const char *)) != NULL) {
		const char *target = va_arg(ap, const char *);
		char p[256];
		snprintf(p, sizeof(p), "%s/%s", out, link);
		assert_int_equal(symlink(target, p), 0);
	}
	va_end(ap);
}

/* ------------------------------------------------------------ running nbg */

typedef struct result {
	int status; /* exit status, or -signal */
	char *out, *err;
} result;

static void result_free(result *r)
{
	free(r->out);
	free(r->err);
}

static const char *const vars[] = { "NNSDK_TESTDOUBLE_FAIL", "NBG_NNSDK_PATH", "NBG_DEVICE_ROOT",
				    "NBG_VIPLITE_PATH", "VIPLITE_TD", "VIPLITE_TD_CID",
				    "LD_LIBRARY_PATH" };

/* Starts nbg with argv in `cwd` (NULL: here) with the variables above
 * unset, then env[] ("NAME=VALUE", NULL-terminated) set; its stdout and
 * stderr go to files of the work directory.  Returns its pid. */
static pid_t spawn_env(const char *const *env, const char *cwd, const char *const *argv)
{
	char out_path[128], err_path[128];
	path_in(out_path, sizeof(out_path), "stdout.txt");
	path_in(err_path, sizeof(err_path), "stderr.txt");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0 || (cwd && chdir(cwd) != 0))
			_exit(127);
		dup2(fo, 1);
		dup2(fe, 2);
		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			unsetenv(vars[i]);
		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		nbg_execv(NBG_BIN, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* What the process spawn_env started ended with (status: what waitpid gave). */
static result spawned_result(int st)
{
	char out_path[128], err_path[128];
	path_in(out_path, sizeof(out_path), "stdout.txt");
	path_in(err_path, sizeof(err_path), "stderr.txt");
	result r = { WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), NULL, NULL };
	size_t n;
	r.out = (char *)read_file(out_path, &n);
	r.err = (char *)read_file(err_path, &n);
	assert_non_null(r.out);
	assert_non_null(r.err);
	return r;
}

/* Runs nbg with args (NULL-terminated) as spawn_env does and waits for it. */
static result run_env(const char *const *env, const char *cwd, ...)
{
	const char *argv[64];
	int argc = 0;
	argv[argc++] = NBG_BIN;
	va_list ap;
	va_start(ap, cwd);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && argc < 63)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	pid_t pid = spawn_env(env, cwd, argv);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return spawned_result(st);
}

static void expect_status(const result *r, int status)
{
	if (r->status != status)
		fail_msg("exit %d (wanted %d)\nstdout:\n%s\nstderr:\n%s", r->status, status, r->out,
			 r->err);
}

static void expect_in(const char *hay, const char *needle, const char *what)
{
	if (!strstr(hay, needle))
		fail_msg("%s lacks '%s':\n%s", what, needle, hay);
}

static json_t *load_json_file(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j)
		fail_msg("%s: %s", path, je.text);
	return j;
}

static json_t *summary_of(const char *dir)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/summary.json", dir);
	return load_json_file(p);
}

static const char *jstr(json_t *o, const char *path)
{
	char key[64];
	const char *dot;
	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = json_object_get(o, key);
		path = dot + 1;
	}
	const char *s = json_string_value(json_object_get(o, path));
	if (!s)
		fail_msg("no string at %s", path);
	return s;
}

/* ------------------------------------------------------------ the doubles */

static uint8_t vip_byte(unsigned k, size_t j, uint64_t sum)
{
	return (uint8_t)(j * 7 + k + sum);
}

/* The file holds output k of the VIPLite double for input sum `sum`. */
static void expect_vip_output(const char *path, unsigned k, size_t size, uint64_t sum)
{
	size_t n;
	uint8_t *p = read_file(path, &n);
	if (!p)
		fail_msg("%s is missing", path);
	assert_int_equal(n, size);
	for (size_t j = 0; j < n; j++)
		if (p[j] != vip_byte(k, j, sum))
			fail_msg("%s byte %zu is %u; the VIPLite double writes %u", path, j, p[j],
				 vip_byte(k, j, sum));
	free(p);
}

/* The file holds INT16 output k of the libnnsdk double for input sum `sum`. */
static void expect_nnsdk_output(const char *path, unsigned k, size_t elems, uint64_t sum)
{
	size_t n;
	uint8_t *p = read_file(path, &n);
	if (!p)
		fail_msg("%s is missing", path);
	assert_int_equal(n, elems * 2);
	for (size_t j = 0; j < elems; j++) {
		int v = (int)((j * 13 + k * 101 + sum) % 200) - 100;
		uint16_t want = (uint16_t)(int16_t)(v * 300);
		uint16_t have = (uint16_t)(p[2 * j] | p[2 * j + 1] << 8);
		if (have != want)
			fail_msg("%s element %zu is 0x%04x; the libnnsdk double writes 0x%04x", path, j,
				 have, want);
	}
	free(p);
}

/* ------------------------------------------------------------ setup */

static int read_meta(void)
{
	json_error_t je;
	json_t *m = json_load_file(META_I16, 0, &je);
	if (!m)
		return -1;
	json_t *outs = json_object_get(m, "Outputs");
	json_t *o0 = json_object_get(outs, "regressors_91"), *o1 = json_object_get(outs, "classificators_92");
	json_t *f0 = json_object_get(json_object_get(o0, "quantize"), "fl");
	json_t *f1 = json_object_get(json_object_get(o1, "quantize"), "fl");
	int ok = json_is_integer(f0) && json_is_integer(f1) &&
		 json_integer_value(json_array_get(json_object_get(o0, "shape"), 2)) == 16;
	fl_out[0] = (int)json_integer_value(f0);
	fl_out[1] = (int)json_integer_value(f1);
	json_t *in = json_object_get(json_object_get(m, "Inputs"), "input_0");
	json_t *fi = json_object_get(json_object_get(in, "quantize"), "fl");
	const char *qz = json_string_value(json_object_get(in, "quantizer"));
	ok = ok && json_is_integer(fi) && qz && !strcmp(qz, "dynamic_fixed_point");
	fl_in = (int)json_integer_value(fi);
	json_decref(m);
	return ok ? 0 : -1;
}

static int setup_all(void **state)
{
	(void)state;
	snprintf(work, sizeof(work), "/tmp/nbgbackends.XXXXXX");
	assert_non_null(mkdtemp(work));
	assert_int_equal(read_meta(), 0);
	make_dir(dev_g, sizeof(dev_g), "dev_g", "galcore", NULL);
	make_dir(dev_v, sizeof(dev_v), "dev_v", "vipcore", NULL);
	make_dir(dev_gv, sizeof(dev_gv), "dev_gv", "galcore", "vipcore");
	make_dir(dev_none, sizeof(dev_none), "dev_none", NULL, NULL);
	make_libdir(lib_all, sizeof(lib_all), "lib_all", "libnnsdk.so", TD_LIB, "libNBGlinker.so",
		    TD_VIP, "libVIPlite.so", TD_VIP_V1, NULL);
	make_libdir(lib_v1, sizeof(lib_v1), "lib_v1", "libnnsdk.so", TD_LIB, "libVIPlite.so",
		    TD_VIP_V1, NULL);
	make_libdir(lib_nn, sizeof(lib_nn), "lib_nn", "libnnsdk.so", TD_LIB, NULL);
	make_libdir(lib_noprep, sizeof(lib_noprep), "lib_noprep", "libnnsdk.so", TD_LIB,
		    "libNBGlinker.so", TD_VIP_NOPREPARE, NULL);
	make_libdir(lib_empty, sizeof(lib_empty), "lib_empty", NULL);
	uint8_t *in = malloc(IN_BYTES);
	assert_non_null(in);
	sum_i16 = 0;
	for (size_t i = 0; i < IN_BYTES; i++) {
		in[i] = (uint8_t)(i * 31 + 3);
		sum_i16 += in[i];
	}
	path_in(in_i16, sizeof(in_i16), "in_i16.bin");
	write_file(in_i16, in, IN_BYTES);
	free(in);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	rm_rf(work);
	return 0;
}

/* "LD_LIBRARY_PATH=dir" in a static buffer per slot. */
static const char *ld(const char *dir, int slot)
{
	static char buf[4][192];
	snprintf(buf[slot], sizeof(buf[slot]), "LD_LIBRARY_PATH=%s", dir);
	return buf[slot];
}

/* ------------------------------------------------------------ nbg probe */

static json_t *probe_json(const char *const *env, const char *root, int want_status,
			  const char *extra1, const char *extra2)
{
	result r = run_env(env, NULL, "probe", "--device-root", root, "--json", extra1, extra2, NULL);
	expect_status(&r, want_status);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	if (!j)
		fail_msg("probe --json is not JSON (%s):\n%s", je.text, r.out);
	result_free(&r);
	return j;
}

static json_t *backend_at(json_t *j, size_t i)
{
	json_t *b = json_array_get(json_object_get(j, "backends"), i);
	if (!b)
		fail_msg("no backends[%zu]", i);
	return b;
}

static json_int_t jint(json_t *o, const char *k1, const char *k2)
{
	json_t *v = json_object_get(o, k1);
	if (k2)
		v = json_object_get(v, k2);
	if (!json_is_integer(v))
		fail_msg("%s%s%s is not an integer", k1, k2 ? "." : "", k2 ? k2 : "");
	return json_integer_value(v);
}

/* Every backend found: the documented values of each double. */
static void test_probe_all_backends(void **state)
{
	(void)state;
	const char *env[] = { ld(lib_all, 0), NULL };
	json_t *j = probe_json(env, dev_v, 0, NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(j, "backends")), 3);
	assert_string_equal(jstr(j, "device_root"), dev_v);
	json_t *nn = backend_at(j, 0), *v2 = backend_at(j, 1), *v1 = backend_at(j, 2);
	assert_string_equal(jstr(nn, "backend"), "nnsdk");
	assert_string_equal(jstr(nn, "library"), "libnnsdk.so");
#if NBG_TEST_NNSDK_ABI
	assert_true(json_is_true(json_object_get(nn, "found")));
	assert_int_equal(jint(nn, "symbols", "wanted"), 4); /* create, input_set, output_get, destroy */
	assert_int_equal(jint(nn, "symbols", "resolved"), 4);
	assert_true(json_is_true(json_object_get(nn, "flush")));
	assert_string_equal(jstr(nn, "code"), "ok");
#else
	assert_string_equal(jstr(nn, "code"), "abi-unsupported"); /* lp64.h */
#endif

	assert_string_equal(jstr(v2, "generation"), "VIPLite 2.x");
	assert_string_equal(jstr(v2, "library"), "libNBGlinker.so");
	assert_int_equal(jint(v2, "symbols", "wanted"), 21); /* the double exports exactly these */
	assert_int_equal(jint(v2, "symbols", "resolved"), 21);
	assert_string_equal(jstr(v2, "version.word"), "0x00020003");
	assert_string_equal(jstr(v2, "version.decoded"), "2.0.3");
	assert_int_equal(jint(v2, "init", "status"), 0);
	assert_string_equal(jstr(v2, "init.status_name"), "VIP_SUCCESS");
	assert_string_equal(jstr(v2, "hardware.cid"), "0x1000003b");
	assert_non_null(strstr(jstr(v2, "hardware.cid_target"), "Allwinner A733"));
	assert_int_equal(jint(v2, "hardware", "device_count"), 1);
	assert_int_equal(jint(v2, "hardware", "cores"), 1);
	assert_true(json_is_true(json_object_get(v2, "selected")));

	assert_string_equal(jstr(v1, "library"), "libVIPlite.so");
	assert_string_equal(jstr(v1, "version.word"), "0x00010d00");
	assert_string_equal(jstr(v1, "version.decoded"), "1.13.0"); /* VIPLite 1.13.0.1 */
	assert_string_equal(jstr(v1, "code"), "ok");
	assert_false(json_is_true(json_object_get(v1, "selected")));

	assert_string_equal(jstr(j, "selected.backend"), "viplite");
	assert_string_equal(jstr(j, "selected.library"), "libNBGlinker.so");
	assert_true(json_is_true(json_object_get(j, "ready")));
	json_decref(j);

	/* The same as text. */
	result r = run_env(env, NULL, "probe", "--device-root", dev_v, NULL);
	expect_status(&r, 0);
#if NBG_TEST_NNSDK_ABI
	expect_in(r.out, "libnnsdk (libnnsdk.so): found, 4/4 entry points, flush available", "probe");
#else
	expect_in(r.out, "abi-unsupported", "probe");
#endif
	expect_in(r.out, "VIPLite 2.x (libNBGlinker.so): found, 21/21 entry points, version "
			 "0x00020003 (2.0.3), vip_init 0 (VIP_SUCCESS), 1 device, 1 core, CID "
			 "0x1000003b", "probe");
	expect_in(r.out, "VIPLite 1.x (libVIPlite.so): found, 21/21 entry points, version "
			 "0x00010d00 (1.13.0)", "probe");
	expect_in(r.out, "nbg run --backend auto would use: viplite (libNBGlinker.so)", "probe");
	expect_in(r.out, "ready to run NBG files: yes", "probe");
	result_free(&r);

#if NBG_TEST_NNSDK_ABI
	/* galcore: libnnsdk, whatever VIPLite library exists. */
	j = probe_json(env, dev_g, 0, NULL, NULL);
	assert_string_equal(jstr(j, "selected.backend"), "nnsdk");
	json_decref(j);
#endif
	/* One VIPLite library named: one report, its generation from its version. */
	j = probe_json(env, dev_v, 0, "--viplite", TD_VIP_V1);
	assert_int_equal(json_array_size(json_object_get(j, "backends")), 2);
	assert_string_equal(jstr(backend_at(j, 1), "generation"), "VIPLite 1.x");
	assert_string_equal(jstr(backend_at(j, 1), "library"), TD_VIP_V1);
	assert_string_equal(jstr(j, "selected.library"), TD_VIP_V1);
	json_decref(j);
}

static void test_probe_failures(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	/* No library at all: every report says library-missing; not ready. */
	const char *none[] = { ld(lib_empty, 0), NULL };
	json_t *j = probe_json(none, dev_v, 4, NULL, NULL);
	for (size_t i = 0; i < 3; i++) {
		json_t *b = backend_at(j, i);
		assert_false(json_is_true(json_object_get(b, "found")));
		assert_string_equal(jstr(b, "code"), "library-missing");
		assert_true(json_is_null(json_object_get(b, "version")) ||
			    json_object_get(b, "version") == NULL);
	}
	assert_string_equal(jstr(j, "selected.backend"), "nnsdk"); /* the fallback, not usable */
	assert_false(json_is_true(json_object_get(j, "ready")));
	json_decref(j);

	/* The 2.x library lacks vip_prepare_network: symbol-missing, and the
	 * choice falls back to libnnsdk, as a run's does. */
	const char *noprep[] = { ld(lib_noprep, 0), NULL };
	j = probe_json(noprep, dev_v, 0, NULL, NULL);
	json_t *v2 = backend_at(j, 1);
	assert_true(json_is_true(json_object_get(v2, "found")));
	assert_string_equal(jstr(v2, "code"), "symbol-missing");
	assert_string_equal(jstr(v2, "symbols.missing"), "vip_prepare_network");
	assert_true(jint(v2, "symbols", "resolved") < jint(v2, "symbols", "wanted"));
	assert_string_equal(jstr(j, "selected.backend"), "nnsdk");
	assert_true(json_is_true(json_object_get(j, "ready")));
	json_decref(j);

	/* vip_init fails (-2, as without /dev/vipcore): reported, not ready. */
	const char *initfail[] = { ld(lib_all, 0), "VIPLITE_TD=init-fail", NULL };
	j = probe_json(initfail, dev_v, 4, NULL, NULL);
	v2 = backend_at(j, 1);
	assert_int_equal(jint(v2, "init", "status"), -2);
	assert_string_equal(jstr(v2, "init.status_name"), "VIP_ERROR_IO");
	assert_string_equal(jstr(v2, "code"), "init-failed");
	assert_true(json_is_null(json_object_get(v2, "hardware")));
	assert_string_equal(jstr(v2, "version.word"), "0x00020003"); /* no device needed */
	assert_string_equal(jstr(j, "selected.backend"), "viplite");
	assert_false(json_is_true(json_object_get(j, "ready")));
	json_decref(j);
	result r = run_env(initfail, NULL, "probe", "--device-root", dev_v, NULL);
	expect_status(&r, 4);
	expect_in(r.out, "vip_init -2 (VIP_ERROR_IO)", "probe");
	expect_in(r.out, "init-failed: vip_init returned -2", "probe");
	expect_in(r.out, "ready to run NBG files: no", "probe");
	result_free(&r);

	/* libnnsdk without aml_module_destroy. */
	j = probe_json(none, dev_g, 4, "--nnsdk", TD_LIB_NODESTROY);
	assert_string_equal(jstr(backend_at(j, 0), "code"), "symbol-missing");
	assert_string_equal(jstr(backend_at(j, 0), "library"), TD_LIB_NODESTROY);
	json_decref(j);

	/* No NPU node: nothing selected. */
	const char *all[] = { ld(lib_all, 0), NULL };
	j = probe_json(all, dev_none, 4, NULL, NULL);
	assert_true(json_is_null(json_object_get(j, "selected")));
	json_decref(j);
}

/* Paths that are not UTF-8 survive in the JSON as \xNN text, and are
 * escaped in the text report. */
static void test_probe_non_utf8(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char root[160], node[200];
	path_in(root, sizeof(root), "dev\xff");
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(node, sizeof(node), "%s/vipcore", root);
	write_file(node, "", 0);
	const char *env[] = { ld(lib_nn, 0), NULL };
	json_t *j = probe_json(env, root, 0, "--viplite", "/nonexistent/lib\xfe.so");
	char want[200];
	snprintf(want, sizeof(want), "%s/dev\\377", work);
	assert_string_equal(jstr(j, "device_root"), want);
	snprintf(want, sizeof(want), "%s/dev\\377/vipcore", work);
	assert_string_equal(jstr(json_array_get(json_object_get(j, "nodes"), 1), "path"), want);
	assert_string_equal(jstr(backend_at(j, 1), "library"), "/nonexistent/lib\\376.so");
	json_decref(j);
	result r = run_env(env, NULL, "probe", "--device-root", root, "--viplite",
			   "/nonexistent/lib\xfe.so", NULL);
	expect_status(&r, 0);
	assert_null(strchr(r.out, '\xff'));
	assert_null(strchr(r.out, '\xfe'));
	expect_in(r.out, "VIPLite (/nonexistent/lib\\376.so): not found", "probe");
	result_free(&r);
	rm_rf(root);
}

/* A real character device node (mknod, as root) is told apart from a file. */
static void test_probe_char_device(void **state)
{
	(void)state;
	char root[160], node[200];
	path_in(root, sizeof(root), "dev_chr");
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(node, sizeof(node), "%s/vipcore", root);
	if (mknod(node, S_IFCHR | 0600, makedev(1, 3)) != 0) {
		rm_rf(root);
		print_message("mknod: %s: skipped\n", strerror(errno));
		skip();
	}
	const char *env[] = { ld(lib_all, 0), NULL };
	json_t *j = probe_json(env, root, 0, NULL, NULL);
	json_t *n = json_array_get(json_object_get(j, "nodes"), 1);
	assert_string_equal(jstr(n, "name"), "vipcore");
	assert_true(json_is_true(json_object_get(n, "char_device")));
	assert_string_equal(jstr(j, "selected.backend"), "viplite");
	json_decref(j);
	rm_rf(root);
}

/* ------------------------------------------------------------ backend choice */

static void fresh(char *out, size_t n, const char *name)
{
	path_in(out, n, name);
	rm_rf(out);
}

/* nbg run of the INT16 model into a fresh DIR/name. */
static result run_model(const char *const *env, const char *name, char *dir, size_t n,
			const char *root, const char *o1, const char *o2, const char *o3,
			const char *o4)
{
	fresh(dir, n, name);
	return run_env(env, NULL, "run", MODEL_I16, "--input", in_i16, "--output-dir", dir,
		       "--device-root", root, o1, o2, o3, o4, NULL);
}

static void expect_ran(const char *dir, const char *backend, const char *library)
{
	json_t *s = summary_of(dir);
	assert_string_equal(jstr(s, "runtime.backend_selected"), backend);
	assert_string_equal(jstr(s, "runtime.library"), library);
	json_t *outs = json_object_get(s, "outputs");
	assert_string_equal(jstr(json_array_get(outs, 0), "file"), "output_0.bin");
	assert_string_equal(jstr(json_array_get(outs, 1), "file"), "output_1.bin");
	assert_string_equal(jstr(json_array_get(outs, 1), "npy"), "output_1.npy");
	json_decref(s);
	char p0[256], p1[256];
	snprintf(p0, sizeof(p0), "%s/output_0.bin", dir);
	snprintf(p1, sizeof(p1), "%s/output_1.bin", dir);
	if (!strcmp(backend, "viplite")) {
		expect_vip_output(p0, 0, OUT0_ELEMS * 2, sum_i16);
		expect_vip_output(p1, 1, OUT1_ELEMS * 2, sum_i16);
	} else {
		expect_nnsdk_output(p0, 0, OUT0_ELEMS, sum_i16);
		expect_nnsdk_output(p1, 1, OUT1_ELEMS, sum_i16);
	}
	expect_names(dir, "output_0.bin output_0.npy output_1.bin output_1.npy summary.json");
}

static void test_auto_backend(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char dir[160];
	const char *all[] = { ld(lib_all, 0), NULL };
	/* galcore: libnnsdk (the vendor probe's first node). */
	result r = run_model(all, "auto_g", dir, sizeof(dir), dev_g, NULL, NULL, NULL, NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "nnsdk", "libnnsdk.so");
	/* vipcore: VIPLite 2.x first, its target check made. */
	r = run_model(all, "auto_v", dir, sizeof(dir), dev_v, NULL, NULL, NULL, NULL);
	expect_status(&r, 0);
	expect_in(r.out, "target: device CID 0x1000003b", "run");
	result_free(&r);
	expect_ran(dir, "viplite", "libNBGlinker.so");
	json_t *s = summary_of(dir);
	assert_string_equal(jstr(s, "runtime.version"), "0x00020003");
	assert_true(json_is_true(json_object_get(json_object_get(json_object_get(s, "runtime"),
								 "target_check"), "checked")));
	json_decref(s);
	/* both nodes: galcore wins, as in the vendor's probe order */
	r = run_model(all, "auto_gv", dir, sizeof(dir), dev_gv, NULL, NULL, NULL, NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "nnsdk", "libnnsdk.so");
	/* vipcore with only VIPLite 1.x installed */
	const char *v1[] = { ld(lib_v1, 0), NULL };
	r = run_model(v1, "auto_v1", dir, sizeof(dir), dev_v, NULL, NULL, NULL, NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "viplite", "libVIPlite.so");
	s = summary_of(dir);
	assert_string_equal(jstr(s, "runtime.version"), "0x00010d00");
	json_decref(s);
	/* vipcore without any VIPLite library: libnnsdk */
	const char *nn[] = { ld(lib_nn, 0), NULL };
	r = run_model(nn, "auto_vnn", dir, sizeof(dir), dev_v, NULL, NULL, NULL, NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "nnsdk", "libnnsdk.so");
	/* no node: refused before any library is loaded, nothing written */
	r = run_model(all, "auto_none", dir, sizeof(dir), dev_none, NULL, NULL, NULL, NULL);
	expect_status(&r, 4);
	expect_in(r.err, "no-device", "run");
	result_free(&r);
	expect_names(dir, "");
}

/* --nnsdk names libnnsdk's library only: with --backend viplite it is never
 * loaded as the VIPLite library, whatever the option order. */
static void test_nnsdk_option_with_viplite(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	char dir[160];
	const char *nn[] = { ld(lib_nn, 0), NULL };
	result r = run_model(nn, "nn_vip_missing", dir, sizeof(dir), dev_v, "--backend", "viplite",
			     "--nnsdk", TD_LIB);
	expect_status(&r, 4);
	expect_in(r.err, "library-missing", "run");
	expect_in(r.err, "cannot load VIPLite (libNBGlinker.so or libVIPlite.so)", "run");
	expect_in(r.err, "note: --nnsdk names the libnnsdk library", "run");
	assert_null(strstr(r.err, "has no symbol")); /* libnnsdk was not dlopen'ed as VIPLite */
	result_free(&r);
	expect_names(dir, "");
	r = run_model(nn, "nn_vip_lib", dir, sizeof(dir), dev_v, "--nnsdk", TD_LIB, "--backend",
		      "viplite");
	expect_status(&r, 4);
	expect_in(r.err, "cannot load VIPLite (libNBGlinker.so or libVIPlite.so)", "run");
	result_free(&r);
	/* --lib names the VIPLite library */
	fresh(dir, sizeof(dir), "nn_vip_ok");
	r = run_env(nn, NULL, "run", MODEL_I16, "--input", in_i16, "--output-dir", dir,
		    "--device-root", dev_v, "--nnsdk", TD_LIB, "--backend", "viplite", "--lib", TD_VIP,
		    NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "viplite", TD_VIP);
	/* $NBG_VIPLITE_PATH with --nnsdk and --backend viplite */
	char var[256];
	snprintf(var, sizeof(var), "NBG_VIPLITE_PATH=%s", TD_VIP);
	const char *env[] = { ld(lib_empty, 0), var, NULL };
	r = run_model(env, "nn_vip_env", dir, sizeof(dir), dev_v, "--backend", "viplite", "--nnsdk",
		      TD_LIB);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "viplite", TD_VIP);
	/* --backend auto: --nnsdk is used only when libnnsdk is the choice */
	r = run_model(env, "nn_auto_v", dir, sizeof(dir), dev_v, "--backend", "auto", "--nnsdk",
		      TD_LIB);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "viplite", TD_VIP);
	r = run_model(env, "nn_auto_g", dir, sizeof(dir), dev_g, "--nnsdk", TD_LIB, "--backend",
		      "auto");
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "nnsdk", TD_LIB);
	/* --nnsdk alone still means libnnsdk, as before VIPLite existed */
	r = run_model(env, "nn_alone", dir, sizeof(dir), dev_v, "--nnsdk", TD_LIB, NULL, NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_ran(dir, "nnsdk", TD_LIB);
}

/* ------------------------------------------------------------ --top */

/* Output k of the VIPLite double as the INT16 dfp values the run reports. */
static double vip_value(unsigned k, size_t e, uint64_t sum)
{
	int16_t q = (int16_t)(uint16_t)(vip_byte(k, 2 * e, sum) | vip_byte(k, 2 * e + 1, sum) << 8);
	return ldexp((double)q, -fl_out[k]);
}

/* The `--- TopN ---` block for an output, computed here: the n largest
 * values, ties in ascending index order, "%6llu: %.6f" per line. */
static void expected_top(unsigned k, size_t elems, size_t n, char *out, size_t cap)
{
	size_t *idx = malloc(n * sizeof(*idx)), have = 0;
	assert_non_null(idx);
	for (size_t e = 0; e < elems; e++) {
		double v = vip_value(k, e, sum_i16);
		size_t pos = have;
		while (pos > 0 && v > vip_value(k, idx[pos - 1], sum_i16))
			pos--;
		if (pos >= n)
			continue;
		size_t last = have < n ? have++ : n - 1;
		memmove(idx + pos + 1, idx + pos, (last - pos) * sizeof(*idx));
		idx[pos] = e;
	}
	size_t len = (size_t)snprintf(out, cap, "--- Top%zu ---\n", n);
	for (size_t i = 0; i < have; i++)
		len += (size_t)snprintf(out + len, cap - len, "%6llu: %.6f\n",
					(unsigned long long)idx[i], vip_value(k, idx[i], sum_i16));
	free(idx);
}

static void test_top(void **state)
{
	(void)state;
	char dir[160], want[2][4096];
	const char *all[] = { ld(lib_all, 0), NULL };
	result r = run_model(all, "top", dir, sizeof(dir), dev_v, "--top", "5", NULL, NULL);
	expect_status(&r, 0);
	expected_top(0, OUT0_ELEMS, 5, want[0], sizeof(want[0]));
	expected_top(1, OUT1_ELEMS, 5, want[1], sizeof(want[1]));
	const char *o0 = strstr(r.out, "output 0:"), *o1 = strstr(r.out, "output 1:");
	assert_non_null(o0);
	assert_non_null(o1);
	const char *t0 = strstr(o0, "--- Top5 ---"), *t1 = strstr(o1, "--- Top5 ---");
	if (!t0 || t0 > o1 || strncmp(t0, want[0], strlen(want[0])))
		fail_msg("output 0's top 5:\nwant:\n%s\nstdout:\n%s", want[0], r.out);
	if (!t1 || strncmp(t1, want[1], strlen(want[1])))
		fail_msg("output 1's top 5:\nwant:\n%s\nstdout:\n%s", want[1], r.out);
	result_free(&r);
	/* more than the output holds: every element, still in order */
	r = run_model(all, "top_all", dir, sizeof(dir), dev_v, "--top", "1000", NULL, NULL);
	expect_status(&r, 0);
	o1 = strstr(r.out, "output 1:");
	assert_non_null(o1);
	char *big = malloc(1 << 16);
	assert_non_null(big);
	expected_top(1, OUT1_ELEMS, 1000, big, 1 << 16);
	assert_non_null(strstr(big, "--- Top1000 ---"));
	assert_int_equal(strncmp(strstr(o1, "--- Top1000 ---"), big, strlen(big)), 0);
	free(big);
	result_free(&r);
	r = run_model(all, "top_bad", dir, sizeof(dir), dev_v, "--top", "0", NULL, NULL);
	expect_status(&r, 2);
	result_free(&r);
}

/* ------------------------------------------------------------ --timeout, crashes */

/* A run that must fail inside the vendor library, into a directory holding
 * one file of the user's: afterwards only that file is there. */
static void expect_vendor_failure(const char *const *env, const char *name, const char *root,
				  int status, const char *n1, const char *n2, const char *o1,
				  const char *o2, const char *o3)
{
	char dir[160], keep[200];
	fresh(dir, sizeof(dir), name);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(keep, sizeof(keep), "%s/keep.txt", dir);
	write_file(keep, "mine\n", 5);
	result r = run_env(env, NULL, "run", MODEL_I16, "--input", in_i16, "--output-dir", dir,
			   "--device-root", root, o1, o2, o3, NULL);
	if (status >= 0)
		expect_status(&r, status);
	else if (r.status == 0)
		fail_msg("%s: the run succeeded", name);
	if (n1)
		expect_in(r.err, n1, name);
	if (n2)
		expect_in(r.err, n2, name);
	result_free(&r);
	expect_names(dir, "keep.txt");
}

static void test_timeout_and_crash(void **state)
{
	(void)state;
	/* A driver that never answers: stopped after --timeout, named. */
	const char *hang[] = { ld(lib_all, 0), "VIPLITE_TD=hang-run", NULL };
	expect_vendor_failure(hang, "hang", dev_v, 4, "run-timeout",
			      "it was stopped inside vip_run_network", "--timeout", "1", NULL);
	/* A crash inside vip_run_network, and inside aml_module_output_get. */
	const char *crash[] = { ld(lib_all, 0), "VIPLITE_TD=crash-run", NULL };
	expect_vendor_failure(crash, "crash_vip", dev_v, 4, "runtime-crashed",
			      "inside vip_run_network: signal 11 (SIGSEGV", NULL, NULL, NULL);
#if NBG_TEST_NNSDK_ABI /* lp64.h */
	const char *crash_nn[] = { ld(lib_all, 0), "NNSDK_TESTDOUBLE_FAIL=crash-output-get", NULL };
	expect_vendor_failure(crash_nn, "crash_nn", dev_g, 4, "runtime-crashed",
			      "aml_module_output_get", NULL, NULL, NULL);
#endif
	/* --no-isolate: the crash takes nbg itself down, and still nothing of
	 * ours is left (outputs are staged only after the vendor is done). */
	expect_vendor_failure(crash, "crash_inproc", dev_v, -1, NULL, NULL, "--no-isolate", NULL,
			      NULL);
	/* A time-out status from the driver itself. */
	const char *tmo[] = { ld(lib_all, 0), "VIPLITE_TD=run-timeout", NULL };
	expect_vendor_failure(tmo, "vip_timeout", dev_v, 4, "run-timeout", "VIP_ERROR_TIMEOUT", NULL,
			      NULL, NULL);
	/* A model for another target: refused before vip_create_network. */
	const char *cid[] = { ld(lib_all, 0), "VIPLITE_TD_CID=0xee", NULL };
	expect_vendor_failure(cid, "target", dev_v, 1, "target-mismatch", "Allwinner V853", NULL,
			      NULL, NULL);
	char dir[160];
	result r = run_model(cid, "target_forced", dir, sizeof(dir), dev_v, "--force-target", NULL,
			     NULL, NULL);
	expect_status(&r, 0);
	expect_in(r.out, "differs from the model's: run anyway (--force-target)", "run");
	result_free(&r);
}

/* ------------------------------------------------------------ the runtime child's life */

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	nanosleep(&ts, NULL);
}

/* Waits up to ms for pid (a child of this process) to end: 1 and *st when
 * it did, 0 when it still runs, -1 when it is no child of this process. */
static int wait_bounded(pid_t pid, long ms, int *st)
{
	for (long t = 0;; t += 10) {
		pid_t w = waitpid(pid, st, WNOHANG);
		if (w == pid)
			return 1;
		if (w < 0 && errno != EINTR)
			return -1;
		if (t >= ms)
			return 0;
		nap_ms(10);
	}
}

/* /proc/PID/stat's state letter and parent; 0 when the process is gone. */
static char proc_state(pid_t pid, pid_t *ppid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *e = strrchr(buf, ')'); /* the name may hold anything */
	char state = 0;
	long pp = 0;
	if (!e || sscanf(e + 1, " %c %ld", &state, &pp) != 2)
		return 0;
	if (ppid)
		*ppid = (pid_t)pp;
	return state;
}

/* Starts `nbg run` of the INT16 model on the VIPLite double hanging inside
 * vip_run_network (hang-run) with --timeout `timeout` into DIR/name, and
 * waits (bounded) for the double's handshake (VIPLITE_TD_READY): returns
 * the runtime child's pid, *nbg the nbg process's. */
static pid_t start_hanging_run(const char *name, const char *timeout, char dir[160], pid_t *nbg)
{
	char fifo[200], ready[240];
	path_in(fifo, sizeof(fifo), "ready.fifo");
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	snprintf(ready, sizeof(ready), "VIPLITE_TD_READY=%s", fifo);
	const char *env[] = { ld(lib_all, 0), "VIPLITE_TD=hang-run", ready, NULL };
	fresh(dir, 160, name);
	const char *argv[] = { NBG_BIN, "run", MODEL_I16, "--input", in_i16, "--output-dir", dir,
			       "--device-root", dev_v, "--timeout", timeout, NULL };
	*nbg = spawn_env(env, NULL, argv);
	char line[32] = { 0 };
	ssize_t got = 0;
	for (int t = 0; got <= 0 && t < 600; t++) { /* 60 s at most */
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 100) > 0)
			got = read(fd, line, sizeof(line) - 1);
		int st;
		if (got <= 0 && waitpid(*nbg, &st, WNOHANG) == *nbg) {
			result r = spawned_result(st);
			fail_msg("nbg ended (%d) before the run hung:\n%s", r.status, r.err);
		}
	}
	close(fd);
	unlink(fifo);
	if (got <= 0) {
		kill(*nbg, SIGKILL);
		fail_msg("no handshake from the double within 60 s");
	}
	pid_t child = (pid_t)strtol(line, NULL, 10), parent = 0;
	assert_true(child > 0);
	assert_int_equal(proc_state(child, &parent) != 0, 1);
	assert_int_equal(parent, *nbg); /* the runtime child of that nbg */
	return child;
}

/* The child still running after its parent is gone: killed (the test's own
 * cleanup), then the failure. */
static void expect_child_ended(pid_t child, int sig, const char *what)
{
	int st = 0, r = wait_bounded(child, 10000, &st);
	if (r == 0) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		fail_msg("%s: the runtime child %ld still ran 10 s after its parent ended", what,
			 (long)child);
	}
	if (r < 0) { /* reaped by nbg itself: gone all the same */
		assert_int_equal(kill(child, 0), -1);
		assert_int_equal(errno, ESRCH);
		return;
	}
	if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
		fail_msg("%s: the runtime child ended with status 0x%x, not by signal %d", what, st,
			 sig);
}

/* SIGTERM to nbg run alone, as a subprocess time-out sends it: nbg passes it
 * to its runtime child, which has ended before nbg does (this process, a
 * subreaper, inherits it as a zombie or finds it reaped).  SIGKILL to nbg,
 * which can pass nothing on: the child dies with it (parent-death signal).
 * nbg stopped (SIGSTOP) past --timeout: the child ends at its own limit,
 * and nbg, continued, says run-timeout.  Before, the child outlived nbg in
 * all three, hanging with no time limit.  And SIGTERM to the child alone is
 * `interrupted`, naming the signal, not a crash. */
static void test_child_dies_with_parent(void **state)
{
	(void)state;
	char dir[160];
	pid_t nbg, child;
	int st;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		/* qemu-user (7.2) refuses it: the orphaned child could not be
		 * waited for here; a kernel has it since Linux 3.4 */
		print_message("skipped: this machine refuses PR_SET_CHILD_SUBREAPER (%s), which "
			      "the test needs to wait for the runtime child nbg leaves\n",
			      strerror(errno));
		skip();
	}

	child = start_hanging_run("term", "60", dir, &nbg);
	assert_int_equal(kill(nbg, SIGTERM), 0);
	assert_int_equal(wait_bounded(nbg, 30000, &st), 1);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	char zs = proc_state(child, NULL); /* ended before nbg did: no waiting */
	expect_child_ended(child, SIGTERM, "SIGTERM");
	if (zs && zs != 'Z')
		fail_msg("the runtime child still ran (state %c) when nbg had ended", zs);
	expect_names(dir, "");

	/* SIGTERM to the child alone: said as such, not as a crash */
	child = start_hanging_run("term_child", "60", dir, &nbg);
	assert_int_equal(kill(child, SIGTERM), 0);
	assert_int_equal(wait_bounded(nbg, 30000, &st), 1);
	result rc = spawned_result(st);
	expect_status(&rc, 4);
	expect_in(rc.err, "interrupted: the runtime process was ended by signal 15 (SIGTERM) inside "
			  "vip_run_network", "term_child");
	result_free(&rc);

	child = start_hanging_run("kill", "60", dir, &nbg);
	assert_int_equal(kill(nbg, SIGKILL), 0);
	assert_int_equal(wait_bounded(nbg, 30000, &st), 1);
	expect_child_ended(child, SIGKILL, "SIGKILL");

	child = start_hanging_run("stop", "1", dir, &nbg);
	assert_int_equal(kill(nbg, SIGSTOP), 0);
	char s = 'R';
	for (int t = 0; t < 300 && s && s != 'Z'; t++) { /* 30 s at most */
		nap_ms(100);
		s = proc_state(child, NULL);
	}
	assert_int_equal(kill(nbg, SIGCONT), 0);
	if (s && s != 'Z') {
		kill(child, SIGKILL);
		kill(nbg, SIGKILL);
		waitpid(nbg, &st, 0);
		fail_msg("the runtime child of a stopped nbg still ran 30 s after its --timeout 1");
	}
	assert_int_equal(wait_bounded(nbg, 30000, &st), 1);
	result r = spawned_result(st);
	expect_status(&r, 4);
	expect_in(r.err, "run-timeout", "stop");
	expect_in(r.err, "its own limit", "stop");
	result_free(&r);
	expect_names(dir, "");
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* ------------------------------------------------------------ --sample */

/* IEEE half bits of x, which must be exactly representable and normal (or 0). */
static uint16_t half_exact(double x)
{
	if (x == 0)
		return 0;
	uint16_t sign = x < 0 ? 0x8000 : 0;
	int e;
	double m = frexp(fabs(x), &e); /* |x| = m * 2^e, m in [0.5, 1) */
	int biased = e - 1 + 15;
	double f = (m * 2 - 1) * 1024;
	assert_true(biased >= 1 && biased <= 30 && f == floor(f));
	return (uint16_t)(sign | biased << 10 | (unsigned)f);
}

/* The FP16 model's input as text (vpm_run's .tensor: one value per line),
 * values k/8 that FP16 holds exactly; returns the sum of their FP16 bytes. */
static uint64_t write_f16_tensor(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	uint64_t sum = 0;
	for (size_t i = 0; i < IN_BYTES / 2; i++) {
		double v = ((int)(i * 7 % 64) - 32) / 8.0;
		uint16_t h = half_exact(v);
		sum += (h & 0xffu) + (h >> 8);
		fprintf(f, "%g\n", v);
	}
	assert_int_equal(fclose(f), 0);
	return sum;
}

/* Output k of the VIPLite double, as a golden file. */
static void write_vip_golden(const char *path, unsigned k, size_t size)
{
	uint8_t *g = malloc(size);
	assert_non_null(g);
	for (size_t j = 0; j < size; j++)
		g[j] = vip_byte(k, j, sum_i16);
	write_file(path, g, size);
	free(g);
}

static void write_sample(const char *path, const char *golden0, int relative_tensor)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# vpm_run's sample file: two networks, one after the other\n"
		   "[network]\n%s\n[input]\n%s\n"
		   "# goldens from the double's formula\n"
		   "[golden]\n%s\n%s/gold1.bin\n"
		   "[output]\nregressors.dat\nclassificators.dat\n\n"
		   "[network]\n  %s  \n[input]\n%s%s\n",
		MODEL_I16, in_i16, golden0, work, MODEL_F16, relative_tensor ? "" : work,
		relative_tensor ? "in_f16.tensor" : "/in_f16.tensor");
	assert_int_equal(fclose(f), 0);
}

static void test_sample(void **state)
{
	(void)state;
	char tensor[200], g0[200], g1[200], g0bad[200], smp[200], dir[160], sub[200];
	path_in(tensor, sizeof(tensor), "in_f16.tensor");
	uint64_t sum_f16 = write_f16_tensor(tensor);
	path_in(g0, sizeof(g0), "gold0.bin");
	path_in(g1, sizeof(g1), "gold1.bin");
	write_vip_golden(g0, 0, OUT0_ELEMS * 2);
	write_vip_golden(g1, 1, OUT1_ELEMS * 2);
	path_in(smp, sizeof(smp), "sample.txt");
	write_sample(smp, g0, 1);
	const char *all[] = { ld(lib_all, 0), NULL };
	fresh(dir, sizeof(dir), "sample_out");
	/* run where the sample is: its relative paths are read from there */
	result r = run_env(all, work, "run", "--sample", smp, "--output-dir", dir, "--device-root",
			   dev_v, NULL);
	expect_status(&r, 0);
	expect_in(r.out, "network 1 of 2:", "run");
	expect_in(r.out, "network 2 of 2:", "run");
	result_free(&r);
	snprintf(sub, sizeof(sub), "%s/network_0", dir);
	expect_names(sub, "classificators.dat output_0.npy output_1.npy regressors.dat summary.json");
	char p[256];
	snprintf(p, sizeof(p), "%s/regressors.dat", sub);
	expect_vip_output(p, 0, OUT0_ELEMS * 2, sum_i16);
	snprintf(p, sizeof(p), "%s/classificators.dat", sub);
	expect_vip_output(p, 1, OUT1_ELEMS * 2, sum_i16);
	json_t *s = summary_of(sub);
	assert_true(json_is_true(json_object_get(json_object_get(s, "golden"), "match")));
	assert_string_equal(jstr(json_array_get(json_object_get(s, "outputs"), 0), "file"),
			    "regressors.dat");
	json_decref(s);
	/* the second network read the text tensor, quantized to FP16 */
	snprintf(sub, sizeof(sub), "%s/network_1", dir);
	snprintf(p, sizeof(p), "%s/output_0.bin", sub);
	expect_vip_output(p, 0, OUT0_ELEMS * 2, sum_f16);
	s = summary_of(sub);
	assert_string_equal(jstr(json_array_get(json_object_get(s, "inputs"), 0), "file_kind"), "text");
	json_decref(s);

	/* A golden mismatch in the first network: reported (exit 1), and the
	 * second network still runs. */
	path_in(g0bad, sizeof(g0bad), "gold0_bad.bin");
	size_t n;
	uint8_t *b = read_file(g0, &n);
	b[2 * 7 + 1] ^= 0x10;
	write_file(g0bad, b, n);
	free(b);
	write_sample(smp, g0bad, 0);
	fresh(dir, sizeof(dir), "sample_mismatch");
	r = run_env(all, NULL, "run", "--sample", smp, "--output-dir", dir, "--device-root", dev_v,
		    NULL);
	expect_status(&r, 1);
	expect_in(r.err, "golden mismatch", "run");
	result_free(&r);
	snprintf(sub, sizeof(sub), "%s/network_0", dir);
	s = summary_of(sub);
	assert_string_equal(jstr(s, "result"), "golden-mismatch");
	json_t *go = json_array_get(json_object_get(json_object_get(s, "golden"), "outputs"), 0);
	assert_int_equal(json_integer_value(json_object_get(go, "first_mismatch")), 7);
	json_decref(s);
	snprintf(sub, sizeof(sub), "%s/network_1", dir);
	s = summary_of(sub);
	assert_string_equal(jstr(s, "result"), "ok");
	json_decref(s);

	/* A sample naming a missing input: exit 3, nothing written for it. */
	FILE *f = fopen(smp, "w");
	assert_non_null(f);
	fprintf(f, "[network]\n%s\n[input]\n%s/absent.dat\n", MODEL_I16, work);
	fclose(f);
	fresh(dir, sizeof(dir), "sample_missing");
	r = run_env(all, NULL, "run", "--sample", smp, "--output-dir", dir, "--device-root", dev_v,
		    NULL);
	expect_status(&r, 3);
	result_free(&r);
	expect_names(dir, "");
	/* One network: its files go straight into DIR. */
	f = fopen(smp, "w");
	assert_non_null(f);
	fprintf(f, "[network]\n%s\n[input]\n%s\n", MODEL_I16, in_i16);
	fclose(f);
	fresh(dir, sizeof(dir), "sample_one");
	r = run_env(all, NULL, "run", "--sample", smp, "--output-dir", dir, "--device-root", dev_v,
		    NULL);
	expect_status(&r, 0);
	result_free(&r);
	expect_names(dir, "output_0.bin output_0.npy output_1.bin output_1.npy summary.json");
	/* Paths from the sample reach the terminal escaped: a model name with
	 * an escape sequence and a byte that is not UTF-8. */
	char odd[200];
	path_in(odd, sizeof(odd), "m\x1b[31m\xff.nb");
	assert_int_equal(symlink(MODEL_I16, odd), 0);
	f = fopen(smp, "w");
	assert_non_null(f);
	fprintf(f, "[network]\n%s\n[input]\n%s\n[network]\n%s/absent\x1b[2J.nb\n[input]\n%s\n", odd,
		in_i16, work, in_i16);
	fclose(f);
	fresh(dir, sizeof(dir), "sample_odd");
	r = run_env(all, NULL, "run", "--sample", smp, "--output-dir", dir, "--device-root", dev_v,
		    NULL);
	expect_status(&r, 3); /* the second model does not exist */
	assert_null(strchr(r.out, '\x1b'));
	assert_null(strchr(r.err, '\x1b'));
	assert_null(strchr(r.out, '\xff'));
	/* paths are escaped as ls -b does (doc/security.md), those the
	 * library opens too */
	expect_in(r.out, "m\\033[31m\\377.nb", "run");
	expect_in(r.err, "absent\\033[2J.nb", "run");
	result_free(&r);
	/* A malformed sample: a usage error naming the line. */
	f = fopen(smp, "w");
	assert_non_null(f);
	fprintf(f, "[network]\n%s\n[inputs]\nx.dat\n", MODEL_I16);
	fclose(f);
	r = run_env(all, NULL, "run", "--sample", smp, "--output-dir", dir, NULL);
	expect_status(&r, 2);
	expect_in(r.err, "sample-invalid", "run");
	expect_in(r.err, "line 3", "run");
	result_free(&r);
}

/* ------------------------------------------------------------ .npy in, .npy goldens */

/* A float32 .npy file as the NumPy format (version 1.0) lays it out: magic,
 * header length, a dict padded with spaces to a 64-byte boundary, data. */
static void write_npy_f32(const char *path, const float *v, size_t n, const unsigned *dims, int nd)
{
	char h[192];
	int len = snprintf(h, sizeof(h), "{'descr': '<f4', 'fortran_order': False, 'shape': (");
	for (int d = 0; d < nd; d++)
		len += snprintf(h + len, sizeof(h) - (size_t)len, d ? ", %u" : "%u", dims[d]);
	len += snprintf(h + len, sizeof(h) - (size_t)len, "%s), }", nd == 1 ? "," : "");
	while ((10 + len + 1) % 64)
		h[len++] = ' ';
	h[len++] = '\n';
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	uint8_t head[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)len, (uint8_t)(len >> 8) };
	assert_int_equal(fwrite(head, 1, 10, f), 10);
	assert_int_equal(fwrite(h, 1, (size_t)len, f), (size_t)len);
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		uint8_t le[4] = { (uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24) };
		assert_int_equal(fwrite(le, 1, 4, f), 4);
	}
	assert_int_equal(fclose(f), 0);
}

/* The VIPLite double's output k for input sum `sum`, dequantized, as .npy. */
static float *vip_golden_npy(const char *path, unsigned k, size_t elems, uint64_t sum)
{
	float *g = malloc(elems * sizeof(float));
	assert_non_null(g);
	for (size_t e = 0; e < elems; e++)
		g[e] = (float)vip_value(k, e, sum);
	const unsigned dims[] = { 1, 896, k ? 1u : 16u };
	write_npy_f32(path, g, elems, dims, 3);
	return g;
}

/* nbg run --input x.npy (float32, quantized with the input record's own
 * fixed point position) and --golden g.npy (compared in float).  The input
 * values are q / 2^fl, so dynamic fixed point gives back q exactly: the
 * bytes handed to the runtime are computed here and their SHA-256 (OpenSSL)
 * checked against summary.json; the goldens are the double's formula for
 * their sum, dequantized with the outputs' positions from .meta.json. */
static void test_npy_input_and_golden(void **state)
{
	(void)state;
	const char *all[] = { ld(lib_all, 0), NULL };
	size_t ne = IN_BYTES / 2;
	float *v = malloc(ne * sizeof(float));
	uint8_t *raw = malloc(IN_BYTES);
	assert_true(v && raw);
	uint64_t sum = 0;
	for (size_t i = 0; i < ne; i++) {
		int16_t q = (int16_t)((int)((i * 37) % 4001) - 2000);
		v[i] = (float)ldexp((double)q, -fl_in);
		raw[2 * i] = (uint8_t)(uint16_t)q;
		raw[2 * i + 1] = (uint8_t)((uint16_t)q >> 8);
		sum += raw[2 * i] + raw[2 * i + 1];
	}
	char in_npy[200], g0[200], g1[200], dir[160], hex[65];
	path_in(in_npy, sizeof(in_npy), "in.npy");
	path_in(g0, sizeof(g0), "gold0.npy");
	path_in(g1, sizeof(g1), "gold1.npy");
	static const unsigned in_dims[] = { 1, 128, 128, 3 };
	write_npy_f32(in_npy, v, ne, in_dims, 4);
	unsigned char md[32];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(raw, IN_BYTES, md, &mdlen, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	float *gv0 = vip_golden_npy(g0, 0, OUT0_ELEMS, sum);
	free(vip_golden_npy(g1, 1, OUT1_ELEMS, sum));

	fresh(dir, sizeof(dir), "npy_io");
	result r = run_env(all, NULL, "run", MODEL_I16, "--input", in_npy, "--output-dir", dir,
			   "--device-root", dev_v, "--golden", g0, g1, NULL);
	expect_status(&r, 0);
	result_free(&r);
	json_t *s = summary_of(dir);
	json_t *in0 = json_array_get(json_object_get(s, "inputs"), 0);
	assert_string_equal(jstr(in0, "file_kind"), "npy");
	assert_string_equal(jstr(in0, "sha256"), hex);
	assert_true(json_is_true(json_object_get(json_object_get(s, "golden"), "match")));
	json_decref(s);
	char p[256];
	snprintf(p, sizeof(p), "%s/output_0.bin", dir);
	expect_vip_output(p, 0, OUT0_ELEMS * 2, sum);

	/* element 100 of golden 0 three steps off: a mismatch there, accepted
	 * under a tolerance of four steps */
	double lsb = ldexp(1.0, -fl_out[0]);
	gv0[100] += (float)(3 * lsb);
	static const unsigned d0[] = { 1, 896, 16 };
	write_npy_f32(g0, gv0, OUT0_ELEMS, d0, 3);
	r = run_env(all, NULL, "run", MODEL_I16, "--input", in_npy, "--output-dir", dir,
		    "--device-root", dev_v, "--golden", g0, g1, NULL);
	expect_status(&r, 1);
	result_free(&r);
	s = summary_of(dir);
	json_t *go0 = json_array_get(json_object_get(json_object_get(s, "golden"), "outputs"), 0);
	assert_int_equal(json_integer_value(json_object_get(go0, "mismatches")), 1);
	assert_int_equal(json_integer_value(json_object_get(go0, "first_mismatch")), 100);
	assert_true(json_number_value(json_object_get(go0, "max_abs_diff")) == 3 * lsb);
	json_decref(s);
	char tol[32];
	snprintf(tol, sizeof(tol), "%.17g", 4 * lsb);
	r = run_env(all, NULL, "run", MODEL_I16, "--input", in_npy, "--output-dir", dir,
		    "--device-root", dev_v, "--golden", g0, g1, "--tolerance", tol, NULL);
	expect_status(&r, 0);
	result_free(&r);
	free(gv0);
	free(v);
	free(raw);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_all_backends),
		cmocka_unit_test(test_probe_failures),
		cmocka_unit_test(test_probe_non_utf8),
		cmocka_unit_test(test_probe_char_device),
		cmocka_unit_test(test_auto_backend),
		cmocka_unit_test(test_nnsdk_option_with_viplite),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_timeout_and_crash),
		cmocka_unit_test(test_child_dies_with_parent),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_npy_input_and_golden),
	};
	int rc = rt_models_open(argc, argv, "test_backends_cli", &models);

	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, setup_all, teardown_all);
	rt_models_close(&models);
	return rc;
}

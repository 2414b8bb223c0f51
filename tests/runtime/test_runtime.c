/*
 * test_runtime.c - the runtime layer (nbg_runtime.h) driven through the
 * libnnsdk test double: every failure edge of the recovered call graph, the lifecycle
 * order, destroy-once, the device probe, the error table and comparisons.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "nbg/nbg.h"
#include "nbg/runtime.h"
#include "nbg/targets.h"
#include "rt_models.h"
#include "lp64.h"

/* Synthesized, or the real face detector pair with --corpus (rt_models.h). */
static rt_models models;
#define MODEL_INT16 models.int16
#define MODEL_FP16 models.fp16
#define INPUT_BYTES 98304u  /* INT16 [1,128,128,3] */
#define OUT0_BYTES 28672u   /* INT16 [1,896,16] */
#define OUT1_BYTES 1792u    /* INT16 [1,896,1] */

/* ------------------------------------------------------------ fixtures */

static char dev_root[64];    /* has galcore */
static char empty_root[64];  /* has nothing */

static void touch(const char *dir, const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static void rm(const char *dir, const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
}

static void make_root(char *buf, size_t n)
{
	snprintf(buf, n, "/tmp/nbgrt.XXXXXX");
	assert_non_null(mkdtemp(buf));
}

static int setup_all(void **state)
{
	(void)state;
	make_root(dev_root, sizeof(dev_root));
	make_root(empty_root, sizeof(empty_root));
	touch(dev_root, "galcore");
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
	unsetenv("NBG_NNSDK_PATH");
	unsetenv("NBG_DEVICE_ROOT");
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	rm(dev_root, "galcore");
	rmdir(dev_root);
	rmdir(empty_root);
	return 0;
}

static int reset_env(void **state)
{
	(void)state;
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
	unsetenv("NBG_NNSDK_PATH");
	unsetenv("NBG_DEVICE_ROOT");
	return 0;
}

typedef struct file_buf {
	uint8_t *data;
	size_t size;
} file_buf;

static file_buf read_all(const char *path)
{
	file_buf b = { 0 };
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	b.data = malloc((size_t)n);
	assert_non_null(b.data);
	assert_int_equal(fread(b.data, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b.size = (size_t)n;
	return b;
}

/* Call counters of the test double, through our own dlopen of the same file. */
static unsigned td_count(const char *lib, const char *what)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	void *sym = dlsym(h, "nnsdk_testdouble_count");
	assert_non_null(sym);
	unsigned (*fn)(const char *);
	memcpy(&fn, &sym, sizeof(fn));
	unsigned v = fn(what);
	dlclose(h);
	return v;
}

static void td_release_kept(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	void *sym = dlsym(h, "nnsdk_testdouble_release_kept");
	assert_non_null(sym);
	void (*fn)(void);
	memcpy(&fn, &sym, sizeof(fn));
	fn();
	dlclose(h);
}

static nbg_runtime *open_rt(const char *lib, const char *root, int float32)
{
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = lib, .device_root = root,
			     .float32_outputs = float32 };
	nbg_runtime *rt = NULL;
	nbg_error e;
	nbg_code c = nbg_runtime_open(&o, &rt, &e);
	if (c != NBG_OK)
		fprintf(stderr, "open: %s: %s\n", nbg_code_name(c), e.message);
	assert_int_equal(c, NBG_OK);
	assert_non_null(rt);
	return rt;
}

static nbg_rt_graph *create_graph(nbg_runtime *rt, const char *model)
{
	file_buf b = read_all(model);
	nbg_rt_graph *g = NULL;
	nbg_error e;
	nbg_code c = nbg_rt_graph_create(rt, b.data, b.size, &g, &e);
	/* The graph keeps its own copy: freeing ours now must be safe (ASan checks). */
	free(b.data);
	if (c != NBG_OK)
		fprintf(stderr, "create: %s: %s\n", nbg_code_name(c), e.message);
	assert_int_equal(c, NBG_OK);
	return g;
}

static uint8_t *input_bytes(size_t n, uint8_t seed)
{
	uint8_t *p = malloc(n ? n : 1);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
	return p;
}

/* One full set/execute/retrieve; returns the code of the first failing step. */
static nbg_code run_once(nbg_rt_graph *g, nbg_rt_output *outs, nbg_error *e)
{
	const nbg_model *m = nbg_rt_graph_model(g);
	uint8_t *in = input_bytes(nbg_model_input_at(m, 0)->byte_size, 1);
	nbg_rt_buffer b = { in, nbg_model_input_at(m, 0)->byte_size };
	nbg_code c = nbg_rt_graph_set_inputs(g, &b, 1, e);
	free(in);
	if (c == NBG_OK)
		c = nbg_rt_graph_execute(g, e);
	if (c == NBG_OK)
		c = nbg_rt_graph_retrieve(g, outs, nbg_model_output_count(m), e);
	return c;
}

static void destroy_ok(nbg_rt_graph **g)
{
	nbg_error e;
	assert_int_equal(nbg_rt_graph_destroy(g, &e), NBG_OK);
	assert_null(*g);
}

/* ------------------------------------------------------------ error table */

static void test_code_table(void **state)
{
	(void)state;
	assert_string_equal(nbg_code_name(NBG_OK), "ok");
	assert_null(nbg_code_name(NBG_E__COUNT));
	assert_null(nbg_code_text((nbg_code)-1));
	for (int i = NBG_E_INVALID_ARGUMENT; i <= NBG_E_SAMPLE_INVALID; i++) {
		const char *n = nbg_code_name((nbg_code)i);
		const char *t = nbg_code_text((nbg_code)i);
		assert_non_null(n);
		assert_non_null(t);
		for (const char *p = n; *p; p++)
			assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
		size_t tl = strlen(t);
		assert_true(tl > 10 && t[tl - 1] == '.');
		for (int j = 1; j < i; j++)
			assert_string_not_equal(n, nbg_code_name((nbg_code)j));
		int x = nbg_code_exit((nbg_code)i);
		assert_true(x == NBG_EXIT_INVALID || x == NBG_EXIT_USAGE || x == NBG_EXIT_RUNTIME);
	}
	/* The names the issue asks for exist. */
	static const char *const wanted[] = { "library-missing", "symbol-missing", "no-device",
		"create-failed", "input-size-mismatch", "input-count-mismatch", "run-failed",
		"output-null", "output-invalid", "destroy-failed", "model-invalid" };
	for (size_t w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
		int found = 0;
		for (int i = 1; i < NBG_E__COUNT; i++)
			found |= !strcmp(nbg_code_name((nbg_code)i), wanted[w]);
		assert_true(found);
	}
	assert_int_equal(nbg_code_exit(NBG_OK), NBG_EXIT_OK);
	assert_int_equal(nbg_code_exit(NBG_E_MODEL_INVALID), NBG_EXIT_INVALID);
	/* A wrong input file is not a usage error. */
	assert_int_equal(nbg_code_exit(NBG_E_INPUT_SIZE_MISMATCH), NBG_EXIT_INVALID);
	assert_int_equal(nbg_code_exit(NBG_E_INPUT_COUNT_MISMATCH), NBG_EXIT_INVALID);
	assert_int_equal(nbg_code_exit(NBG_E_INVALID_ARGUMENT), NBG_EXIT_USAGE);
	assert_int_equal(nbg_code_exit(NBG_E_LIBRARY_MISSING), NBG_EXIT_RUNTIME);
	assert_int_equal(nbg_code_exit(NBG_E_NO_DEVICE), NBG_EXIT_RUNTIME);
	assert_int_equal(nbg_code_exit(NBG_E_CREATE_FAILED), NBG_EXIT_RUNTIME);
}

/* doc/runtime.md carries the table of the runtime's and the tensors' codes
 * (invalid-argument to sample-invalid in the one list of nbg/codes.h, and
 * out-of-memory). */
static void test_code_table_doc(void **state)
{
	(void)state;
	file_buf doc = read_all(NBG_SOURCE_DIR "/doc/runtime.md");
	char *text = malloc(doc.size + 1);
	assert_non_null(text);
	memcpy(text, doc.data, doc.size);
	text[doc.size] = 0;
	free(doc.data);
	static const char begin[] = "<!-- BEGIN runtime codes -->\n";
	char *b = strstr(text, begin), *e = strstr(text, "<!-- END runtime codes -->");
	assert_non_null(b);
	assert_non_null(e);
	b += strlen(begin);

	size_t cap = 16384, len = 0;
	char *want = malloc(cap);
	assert_non_null(want);
	len += (size_t)snprintf(want + len, cap - len, "| code | exit | meaning |\n|---|---|---|\n");
	for (int i = NBG_E_INVALID_ARGUMENT; i <= NBG_E_SAMPLE_INVALID + 1; i++) {
		nbg_code c = i > NBG_E_SAMPLE_INVALID ? NBG_E_OUT_OF_MEMORY : (nbg_code)i;
		len += (size_t)snprintf(want + len, cap - len, "| `%s` | %d | %s |\n",
					nbg_code_name(c), nbg_code_exit(c), nbg_code_text(c));
	}
	assert_true(len < cap);
	*e = 0;
	if (strcmp(b, want) != 0)
		fprintf(stderr, "doc/runtime.md error table is stale; expected:\n%s", want);
	assert_string_equal(b, want);
	free(want);
	free(text);
}

/* doc/runtime.md lists the known-target table of lib/common/targets.c, and
 * nbg_target_lookup finds every entry it lists. */
static void test_target_table_doc(void **state)
{
	(void)state;
	file_buf doc = read_all(NBG_SOURCE_DIR "/doc/runtime.md");
	char *text = malloc(doc.size + 1);
	assert_non_null(text);
	memcpy(text, doc.data, doc.size);
	text[doc.size] = 0;
	free(doc.data);
	static const char begin[] = "<!-- BEGIN known targets -->\n";
	char *b = strstr(text, begin), *e = strstr(text, "<!-- END known targets -->");
	assert_non_null(b);
	assert_non_null(e);
	b += strlen(begin);
	size_t cap = 8192, len = 0;
	char *want = malloc(cap);
	assert_non_null(want);
	len += (size_t)snprintf(want, cap, "| target | VeriSilicon configuration | SoC / board where "
					   "a source states it |\n|---|---|---|\n");
	const nbg_target_info *t;
	uint32_t prev = 0;
	for (size_t i = 0; (t = nbg_target_at(i)) != NULL; i++) {
		assert_true(i == 0 || t->target > prev); /* ascending, no duplicates */
		prev = t->target;
		assert_ptr_equal(nbg_target_lookup(t->target), t);
		len += (size_t)snprintf(want + len, cap - len, "| 0x%08x | %s | %s |\n", t->target,
					t->config ? t->config : "—", t->soc ? t->soc : "—");
	}
	assert_true(len < cap);
	*e = 0;
	if (strcmp(b, want) != 0)
		fprintf(stderr, "doc/runtime.md target table is stale; expected:\n%s", want);
	assert_string_equal(b, want);
	assert_null(nbg_target_lookup(0x15)); /* the driver's own example of an unknown target */
	char d[128];
	assert_string_equal(nbg_target_describe(0x15, d, sizeof(d)), "0x00000015 (unknown target)");
	free(want);
	free(text);
}

/* ------------------------------------------------------------ probe */

static void test_probe_order(void **state)
{
	(void)state;
	char root[64];
	make_root(root, sizeof(root));
	nbg_rt_probe p;
	nbg_error e;

	assert_int_equal(nbg_rt_probe_devices(root, &p, &e), NBG_OK);
	assert_int_equal(p.backend, NBG_RT_BACKEND_NONE);
	assert_false(p.npu_present);
	assert_false(p.nbg_capable);
	assert_string_equal(p.device_root, root);
	assert_string_equal(p.nodes[0].name, "galcore");
	assert_string_equal(p.nodes[3].name, "mali0");

	touch(root, "mali0"); /* a GPU only: no NPU */
	assert_int_equal(nbg_rt_probe_devices(root, &p, &e), NBG_OK);
	assert_int_equal(p.backend, NBG_RT_BACKEND_GPU);
	assert_false(p.npu_present);

	touch(root, "adla0");
	assert_int_equal(nbg_rt_probe_devices(root, &p, &e), NBG_OK);
	assert_int_equal(p.backend, NBG_RT_BACKEND_ADLA);
	assert_true(p.npu_present);
	assert_false(p.nbg_capable);

	touch(root, "vipcore");
	assert_int_equal(nbg_rt_probe_devices(root, &p, &e), NBG_OK);
	assert_int_equal(p.backend, NBG_RT_BACKEND_VIPLITE);
	assert_true(p.nbg_capable);

	touch(root, "galcore");
	assert_int_equal(nbg_rt_probe_devices(root, &p, &e), NBG_OK);
	assert_int_equal(p.backend, NBG_RT_BACKEND_VIPUNIFY);
	assert_true(p.nodes[0].present);
	assert_false(p.nodes[0].is_char_device); /* a plain file stands in for the node */
	for (int i = 0; i < NBG_RT_PROBE_NODES; i++)
		assert_true(p.nodes[i].present);

	assert_string_equal(nbg_rt_backend_name(0), "VIPUNIFY");
	assert_string_equal(nbg_rt_backend_name(-1), "none");
	assert_null(nbg_rt_backend_name(4));

	rm(root, "galcore");
	rm(root, "vipcore");
	rm(root, "adla0");
	rm(root, "mali0");
	rmdir(root);
}

static void test_probe_env(void **state)
{
	(void)state;
	nbg_rt_probe p;
	setenv("NBG_DEVICE_ROOT", dev_root, 1);
	assert_int_equal(nbg_rt_probe_devices(NULL, &p, NULL), NBG_OK);
	assert_string_equal(p.device_root, dev_root);
	assert_int_equal(p.backend, NBG_RT_BACKEND_VIPUNIFY);
	/* The argument wins over the environment. */
	assert_int_equal(nbg_rt_probe_devices(empty_root, &p, NULL), NBG_OK);
	assert_int_equal(p.backend, NBG_RT_BACKEND_NONE);
	unsetenv("NBG_DEVICE_ROOT");
	assert_int_equal(nbg_rt_probe_devices(NULL, &p, NULL), NBG_OK);
	assert_string_equal(p.device_root, "/dev");
	assert_int_equal(nbg_rt_probe_devices(NULL, NULL, NULL), NBG_E_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ open */

static void test_open_library_missing(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = "/nonexistent/libnnsdk.so",
			     .device_root = dev_root };
	nbg_runtime *rt = (nbg_runtime *)&o; /* must be reset to NULL */
	nbg_error e;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_LIBRARY_MISSING);
	assert_null(rt);
	assert_int_equal(e.code, NBG_E_LIBRARY_MISSING);
	assert_non_null(strstr(e.message, "/nonexistent/libnnsdk.so"));

	/* The environment variable is honoured when no path is given... */
	setenv("NBG_NNSDK_PATH", "/nonexistent/env/libnnsdk.so", 1);
	o.nnsdk_path = NULL;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_LIBRARY_MISSING);
	assert_non_null(strstr(e.message, "/nonexistent/env/libnnsdk.so"));
	/* ...and the argument wins over it. */
	o.nnsdk_path = TD_LIB;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	assert_string_equal(nbg_runtime_library_path(rt), TD_LIB);
	nbg_runtime_close(rt);
	setenv("NBG_NNSDK_PATH", TD_LIB, 1);
	o.nnsdk_path = NULL;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	assert_string_equal(nbg_runtime_library_path(rt), TD_LIB);
	nbg_runtime_close(rt);
}

static void test_open_symbol_missing(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = TD_LIB_NODESTROY,
			     .device_root = dev_root };
	nbg_runtime *rt = NULL;
	nbg_error e;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_SYMBOL_MISSING);
	assert_null(rt);
	assert_non_null(strstr(e.message, "aml_module_destroy"));
}

static void test_open_no_device(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = TD_LIB, .device_root = empty_root };
	nbg_runtime *rt = NULL;
	nbg_error e;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_NO_DEVICE);
	assert_null(rt);
	assert_non_null(strstr(e.message, empty_root));

	/* ADLA alone is an NPU, but not one that runs VeriSilicon NBGs. */
	touch(empty_root, "adla0");
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_BACKEND_UNSUPPORTED);
	rm(empty_root, "adla0");

	/* mali0 alone: no NPU. */
	touch(empty_root, "mali0");
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_NO_DEVICE);
	assert_non_null(strstr(e.message, "mali0"));
	rm(empty_root, "mali0");

	/* The environment root is used when none is given. */
	o.device_root = NULL;
	setenv("NBG_DEVICE_ROOT", empty_root, 1);
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_NO_DEVICE);
	setenv("NBG_DEVICE_ROOT", dev_root, 1);
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	nbg_runtime_close(rt);

	/* Skipping the probe opens without a device. */
	o.device_root = empty_root;
	o.flags = NBG_RT_OPEN_SKIP_PROBE;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	assert_int_equal(nbg_runtime_probe(rt)->backend, NBG_RT_BACKEND_NONE);
	nbg_runtime_close(rt);
}

static void test_open_arguments(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_error e;
	nbg_runtime *rt = NULL;
	assert_int_equal(nbg_runtime_open(NULL, NULL, &e), NBG_E_INVALID_ARGUMENT);
	nbg_rt_options o = { .size = 4, .nnsdk_path = TD_LIB, .device_root = dev_root };
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_INVALID_ARGUMENT);
	/* An older, shorter struct: the fields it lacks take their defaults. */
	o.size = offsetof(nbg_rt_options, flags);
	o.flags = NBG_RT_OPEN_NO_FLUSH; /* beyond the given size: must be ignored */
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	assert_true(nbg_runtime_has_flush(rt));
	assert_int_equal(nbg_runtime_input_kind(rt), NBG_RT_INPUT_KIND_BINARY_RAW);
	nbg_runtime_close(rt);
	o.size = sizeof(o);
	o.flags = NBG_RT_OPEN_INPUT_KIND;
	o.input_kind = 0;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	assert_int_equal(nbg_runtime_input_kind(rt), 0);
	nbg_runtime_close(rt);
	o.flags = 0x80;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_INVALID_ARGUMENT);
	nbg_runtime_close(NULL);
	assert_null(nbg_runtime_probe(NULL));
	assert_int_equal(nbg_runtime_has_flush(NULL), 0);
}

static void test_open_conflict(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *a = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = TD_LIB_NOFLUSH, .device_root = dev_root };
	nbg_runtime *b = NULL;
	nbg_error e;
	assert_int_equal(nbg_runtime_open(&o, &b, &e), NBG_E_RUNTIME_CONFLICT);
	assert_null(b);
	/* Refused before its code was mapped (no earlier test loads this variant). */
	void *probe = dlopen(TD_LIB_NOFLUSH, RTLD_NOW | RTLD_NOLOAD);
	assert_null(probe);
	/* The same library twice is fine. */
	nbg_runtime *c = open_rt(TD_LIB, dev_root, 0);
	nbg_runtime_close(c);
	/* A graph keeps the library in use after its runtime handle is closed. */
	nbg_rt_graph *g = create_graph(a, MODEL_INT16);
	nbg_runtime_close(a);
	assert_int_equal(nbg_runtime_open(&o, &b, &e), NBG_E_RUNTIME_CONFLICT);
	destroy_ok(&g);
	b = open_rt(TD_LIB_NOFLUSH, dev_root, 0);
	nbg_runtime_close(b);
}

/* ------------------------------------------------------------ lifecycle */

static void test_run_int16(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	unsigned c0 = td_count(TD_LIB, "create"), d0 = td_count(TD_LIB, "destroy");
	unsigned f0 = td_count(TD_LIB, "flush");
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	assert_true(nbg_runtime_has_flush(rt));
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	nbg_runtime_close(rt); /* the graph keeps what it needs */

	const nbg_model *m = nbg_rt_graph_model(g);
	assert_int_equal(nbg_model_input_count(m), 1);
	assert_int_equal(nbg_model_output_count(m), 2);
	assert_int_equal(nbg_model_input_at(m, 0)->byte_size, INPUT_BYTES);
	assert_int_equal(nbg_rt_graph_output_size(g, 0), OUT0_BYTES);
	assert_int_equal(nbg_rt_graph_output_size(g, 1), OUT1_BYTES);
	assert_int_equal(nbg_rt_graph_output_size(g, 2), 0);
	assert_int_equal(nbg_rt_graph_output_format(g, 0), 5); /* INT16 */

	nbg_rt_output outs[2], again[2];
	nbg_error e;
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(outs[i].index, i);
		assert_ptr_equal(outs[i].io, nbg_model_output_at(m, i));
		assert_non_null(outs[i].data);
		assert_int_equal(outs[i].size, i ? OUT1_BYTES : OUT0_BYTES);
		assert_int_equal(outs[i].reported_size, outs[i].size);
		uint8_t d[32];
		unsigned dlen = 0;
		/* OpenSSL's digest of the bytes: an independent computation */
		assert_int_equal(EVP_Digest(outs[i].data, outs[i].size, d, &dlen, EVP_sha256(), NULL),
				 1);
		assert_memory_equal(d, outs[i].sha256, 32);
	}
	/* Deterministic: the same inputs give the same digests. */
	assert_int_equal(run_once(g, again, &e), NBG_OK);
	assert_memory_equal(outs[0].sha256, again[0].sha256, 32);
	assert_memory_equal(outs[1].sha256, again[1].sha256, 32);
	/* Two flushes (input, output) per execute. */
	assert_int_equal(td_count(TD_LIB, "flush") - f0, 4);

	destroy_ok(&g);
	assert_int_equal(td_count(TD_LIB, "create") - c0, 1);
	assert_int_equal(td_count(TD_LIB, "destroy") - d0, 1);
	assert_int_equal(td_count(TD_LIB, "live"), 0);
	/* A second destroy is a no-op: the pointer is gone, the double sees nothing. */
	assert_int_equal(nbg_rt_graph_destroy(&g, &e), NBG_OK);
	assert_int_equal(nbg_rt_graph_destroy(NULL, &e), NBG_OK);
	assert_int_equal(td_count(TD_LIB, "destroy") - d0, 1);
}

static void test_run_fp16_and_float32(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g = create_graph(rt, MODEL_FP16);
	nbg_rt_output outs[2];
	nbg_error e;
	assert_int_equal(nbg_rt_graph_output_format(g, 0), 1); /* FP16 */
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	assert_int_equal(outs[0].size, OUT0_BYTES);
	destroy_ok(&g);
	nbg_runtime_close(rt);

	/* The stock caller's zeroed command asks for FP32 conversion. */
	rt = open_rt(TD_LIB, dev_root, 1);
	g = create_graph(rt, MODEL_INT16);
	assert_int_equal(nbg_rt_graph_output_format(g, 0), 0);
	assert_int_equal(nbg_rt_graph_output_size(g, 0), 896u * 16u * 4u);
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	assert_int_equal(outs[0].size, 896u * 16u * 4u);
	assert_int_equal(outs[1].size, 896u * 4u);
	assert_int_equal(outs[0].data_format, 0);
	destroy_ok(&g);
	nbg_runtime_close(rt);
}

static void test_no_flush_variant(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB_NOFLUSH, dev_root, 0);
	assert_false(nbg_runtime_has_flush(rt));
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	nbg_rt_output outs[2];
	nbg_error e;
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	destroy_ok(&g);
	nbg_runtime_close(rt);

	/* NBG_RT_OPEN_NO_FLUSH disables a present flush. */
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = TD_LIB, .device_root = dev_root,
			     .flags = NBG_RT_OPEN_NO_FLUSH };
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_OK);
	assert_false(nbg_runtime_has_flush(rt));
	unsigned f0 = td_count(TD_LIB, "flush");
	g = create_graph(rt, MODEL_INT16);
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	assert_int_equal(td_count(TD_LIB, "flush"), f0);
	destroy_ok(&g);
	nbg_runtime_close(rt);
}

/* ------------------------------------------------------------ failure edges */

static void test_model_invalid(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	file_buf b = read_all(MODEL_INT16);
	unsigned c0 = td_count(TD_LIB, "create");
	nbg_rt_graph *g = (nbg_rt_graph *)&b;
	nbg_error e;

	b.data[0] = 'X'; /* bad magic */
	assert_int_equal(nbg_rt_graph_create(rt, b.data, b.size, &g, &e), NBG_E_MODEL_INVALID);
	assert_null(g);
	assert_int_equal(e.cause, NBG_E_BAD_MAGIC);
	assert_non_null(strstr(e.message, "bad-magic"));
	b.data[0] = 'V';

	/* A flipped payload byte near the end: a checksum rule fails. */
	b.data[b.size - 600] ^= 0x40;
	assert_int_equal(nbg_rt_graph_create(rt, b.data, b.size, &g, &e), NBG_E_MODEL_INVALID);
	assert_int_not_equal(e.cause, NBG_OK);

	/* Truncated. */
	assert_int_equal(nbg_rt_graph_create(rt, b.data, 20, &g, &e), NBG_E_MODEL_INVALID);
	assert_int_equal(nbg_rt_graph_create(rt, b.data, 0, &g, &e), NBG_E_MODEL_INVALID);

	/* The vendor was never called with a file that fails validation. */
	assert_int_equal(td_count(TD_LIB, "create"), c0);

	assert_int_equal(nbg_rt_graph_create(NULL, b.data, b.size, &g, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_graph_create(rt, NULL, 10, &g, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_graph_create(rt, b.data, b.size, NULL, &e), NBG_E_INVALID_ARGUMENT);
	free(b.data);
	nbg_runtime_close(rt);
}

static void test_create_null(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	file_buf b = read_all(MODEL_INT16);
	nbg_rt_graph *g = NULL;
	nbg_error e;
	unsigned c0 = td_count(TD_LIB, "create"), d0 = td_count(TD_LIB, "destroy");
	setenv("NNSDK_TESTDOUBLE_FAIL", "create-null", 1);
	assert_int_equal(nbg_rt_graph_create(rt, b.data, b.size, &g, &e), NBG_E_CREATE_FAILED);
	assert_null(g);
	assert_non_null(strstr(e.message, "0x1000003b"));
	assert_int_equal(td_count(TD_LIB, "create") - c0, 1);
	assert_int_equal(td_count(TD_LIB, "destroy"), d0); /* nothing to destroy */
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
	free(b.data);
	nbg_runtime_close(rt);
}

static void test_input_count_and_size(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	unsigned s0 = td_count(TD_LIB, "input-set");
	uint8_t *in = input_bytes(INPUT_BYTES + 1, 3);
	nbg_rt_buffer two[2] = { { in, INPUT_BYTES }, { in, INPUT_BYTES } };
	nbg_error e;

	assert_int_equal(nbg_rt_graph_set_inputs(g, two, 0, &e), NBG_E_INPUT_COUNT_MISMATCH);
	assert_int_equal(nbg_rt_graph_set_inputs(g, two, 2, &e), NBG_E_INPUT_COUNT_MISMATCH);
	assert_non_null(strstr(e.message, "declares 1 input"));
	nbg_rt_buffer b = { in, INPUT_BYTES - 1 };
	assert_int_equal(nbg_rt_graph_set_inputs(g, &b, 1, &e), NBG_E_INPUT_SIZE_MISMATCH);
	assert_int_equal(e.index, 0);
	assert_non_null(strstr(e.message, "98304"));
	b.size = INPUT_BYTES + 1;
	assert_int_equal(nbg_rt_graph_set_inputs(g, &b, 1, &e), NBG_E_INPUT_SIZE_MISMATCH);
	b.data = NULL;
	b.size = INPUT_BYTES;
	assert_int_equal(nbg_rt_graph_set_inputs(g, &b, 1, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_graph_set_inputs(g, NULL, 1, &e), NBG_E_INVALID_ARGUMENT);
	/* Nothing reached the vendor, and a failed set leaves no runnable state. */
	assert_int_equal(td_count(TD_LIB, "input-set"), s0);
	assert_int_equal(nbg_rt_graph_execute(g, &e), NBG_E_BAD_STATE);
	free(in);
	destroy_ok(&g);
	nbg_runtime_close(rt);
}

static void test_input_set_failed(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	nbg_rt_output outs[2];
	nbg_error e;
	setenv("NNSDK_TESTDOUBLE_FAIL", "input-set-fail", 1);
	assert_int_equal(run_once(g, outs, &e), NBG_E_INPUT_SET_FAILED);
	assert_int_equal(e.index, 0);
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
	assert_int_equal(nbg_rt_graph_execute(g, &e), NBG_E_BAD_STATE);
	/* The graph recovers with a fresh set of inputs. */
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	destroy_ok(&g);
	nbg_runtime_close(rt);
}

static void test_order(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	nbg_rt_output outs[2];
	nbg_error e;
	unsigned x0 = td_count(TD_LIB, "execute"), r0 = td_count(TD_LIB, "retrieve");
	assert_int_equal(nbg_rt_graph_execute(g, &e), NBG_E_BAD_STATE);
	assert_int_equal(nbg_rt_graph_retrieve(g, outs, 2, &e), NBG_E_BAD_STATE);
	assert_int_equal(td_count(TD_LIB, "execute"), x0);
	assert_int_equal(td_count(TD_LIB, "retrieve"), r0);
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	/* One retrieve per execute, one execute per set of inputs. */
	assert_int_equal(nbg_rt_graph_retrieve(g, outs, 2, &e), NBG_E_BAD_STATE);
	assert_int_equal(nbg_rt_graph_execute(g, &e), NBG_E_BAD_STATE);
	/* Wrong room for outputs. */
	assert_int_equal(nbg_rt_graph_retrieve(g, outs, 1, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_graph_execute(NULL, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_graph_set_inputs(NULL, NULL, 0, &e), NBG_E_INVALID_ARGUMENT);
	assert_null(nbg_rt_graph_model(NULL));
	destroy_ok(&g);
	nbg_runtime_close(rt);
}

static void expect_retrieve_failure(const char *mode, nbg_code want, int32_t index)
{
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	nbg_rt_output outs[2];
	nbg_error e;
	setenv("NNSDK_TESTDOUBLE_FAIL", mode, 1);
	assert_int_equal(run_once(g, outs, &e), want);
	assert_int_equal(e.code, want);
	assert_int_equal(e.index, index);
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
	/* After a failed retrieve the graph needs fresh inputs, then works. */
	assert_int_equal(nbg_rt_graph_execute(g, &e), NBG_E_BAD_STATE);
	assert_int_equal(run_once(g, outs, &e), NBG_OK);
	destroy_ok(&g);
	nbg_runtime_close(rt);
}

static void test_flush_failed(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	expect_retrieve_failure("flush-fail", NBG_E_RUN_FAILED, -1);
}

static void test_output_null(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	expect_retrieve_failure("output-null", NBG_E_OUTPUT_NULL, -1);
}

static void test_output_data_null(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	expect_retrieve_failure("data-null", NBG_E_OUTPUT_DATA_NULL, 0);
}

static void test_output_count_short(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	expect_retrieve_failure("count-short", NBG_E_OUTPUT_INVALID, -1);
}

static void test_output_size_short(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	expect_retrieve_failure("size-short", NBG_E_OUTPUT_INVALID, 0);
}

static void test_destroy_failed(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g = create_graph(rt, MODEL_INT16);
	nbg_error e;
	unsigned d0 = td_count(TD_LIB, "destroy");
	setenv("NNSDK_TESTDOUBLE_FAIL", "destroy-fail", 1);
	assert_int_equal(nbg_rt_graph_destroy(&g, &e), NBG_E_DESTROY_FAILED);
	assert_null(g);
	assert_non_null(strstr(e.message, "not retried"));
	/* Never retried: a second call has nothing to pass. */
	assert_int_equal(nbg_rt_graph_destroy(&g, &e), NBG_OK);
	assert_int_equal(td_count(TD_LIB, "destroy") - d0, 1);
	unsetenv("NNSDK_TESTDOUBLE_FAIL");
	td_release_kept(TD_LIB);
	nbg_runtime_close(rt);
}

static void test_many_graphs(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	nbg_rt_graph *g[4];
	nbg_rt_output outs[2];
	nbg_error e;
	for (int i = 0; i < 4; i++)
		g[i] = create_graph(rt, i % 2 ? MODEL_FP16 : MODEL_INT16);
	assert_int_equal(td_count(TD_LIB, "live"), 4);
	for (int i = 3; i >= 0; i--)
		assert_int_equal(run_once(g[i], outs, &e), NBG_OK);
	for (int i = 0; i < 4; i++)
		destroy_ok(&g[i]);
	assert_int_equal(td_count(TD_LIB, "live"), 0);
	nbg_runtime_close(rt);
}

/* Create/destroy from several threads at once: the process mutex must
 * serialize them (the test double aborts on any overlap). */
typedef struct thread_job {
	nbg_runtime *rt;
	const file_buf *model;
	int failures;
} thread_job;

static void *thread_main(void *arg)
{
	thread_job *j = arg;
	for (int i = 0; i < 4; i++) {
		nbg_rt_graph *g = NULL;
		nbg_rt_output outs[2];
		nbg_error e;
		if (nbg_rt_graph_create(j->rt, j->model->data, j->model->size, &g, &e) != NBG_OK) {
			j->failures++;
			continue;
		}
		if (run_once(g, outs, &e) != NBG_OK)
			j->failures++;
		if (nbg_rt_graph_destroy(&g, &e) != NBG_OK)
			j->failures++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	nbg_runtime *rt = open_rt(TD_LIB, dev_root, 0);
	file_buf model = read_all(MODEL_INT16);
	pthread_t th[4];
	thread_job jobs[4];
	unsigned c0 = td_count(TD_LIB, "create-ok"), d0 = td_count(TD_LIB, "destroy");
	for (int i = 0; i < 4; i++) {
		jobs[i] = (thread_job){ rt, &model, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(jobs[i].failures, 0);
	}
	assert_int_equal(td_count(TD_LIB, "create-ok") - c0, 16);
	assert_int_equal(td_count(TD_LIB, "destroy") - d0, 16);
	assert_int_equal(td_count(TD_LIB, "live"), 0);
	free(model.data);
	nbg_runtime_close(rt);
}

/* ------------------------------------------------------------ comparisons */

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

static void test_compare(void **state)
{
	(void)state;
	nbg_rt_compare_result r;
	nbg_error e;

	float fa[3] = { 1.0f, 2.0f, NAN }, fb[3] = { 1.0f, 2.25f, NAN };
	assert_int_equal(nbg_rt_compare(fa, fb, sizeof(fa), 0, 0.0, &r, &e), NBG_OK);
	assert_int_equal(r.elements, 3);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 1);
	assert_true(fabs(r.max_abs_diff - 0.25) < 1e-12);
	assert_int_equal(nbg_rt_compare(fa, fb, sizeof(fa), 0, 0.25, &r, &e), NBG_OK);
	assert_int_equal(r.mismatches, 0);
	fb[2] = 1.0f; /* NaN against a number never matches */
	assert_int_equal(nbg_rt_compare(fa, fb, sizeof(fa), 0, 1e9, &r, &e), NBG_OK);
	assert_int_equal(r.mismatches, 1);
	assert_true(isinf(r.max_abs_diff));

	/* FP16: 1.0 (0x3c00) vs 1.0009766 (0x3c01), 65504 (0x7bff), -2 (0xc000), subnormal */
	uint8_t ha[8], hb[8];
	put16(ha, 0x3c00); put16(hb, 0x3c01);
	put16(ha + 2, 0x7bff); put16(hb + 2, 0x7bff);
	put16(ha + 4, 0xc000); put16(hb + 4, 0x4000);
	put16(ha + 6, 0x0001); put16(hb + 6, 0x0000);
	assert_int_equal(nbg_rt_compare(ha, hb, 8, 1, 0.001, &r, &e), NBG_OK);
	/* only -2 vs 2 (diff 4): one ulp at 1.0 (2^-10) and the subnormal 2^-24 are within */
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first_mismatch, 2);
	assert_true(fabs(r.max_abs_diff - 4.0) < 1e-12);
	assert_int_equal(nbg_rt_compare(ha, hb, 8, 1, 0.0, &r, &e), NBG_OK);
	assert_int_equal(r.mismatches, 3);

	/* INT16 extremes: exact difference, no overflow */
	int16_t ia[2] = { -32768, 5 }, ib[2] = { 32767, 5 };
	assert_int_equal(nbg_rt_compare(ia, ib, 4, 5, 0, &r, &e), NBG_OK);
	assert_int_equal(r.mismatches, 1);
	assert_true(r.max_abs_diff == 65535.0);
	/* the same bytes as UINT16: 32768 vs 32767 */
	assert_int_equal(nbg_rt_compare(ia, ib, 4, 4, 0, &r, &e), NBG_OK);
	assert_true(r.max_abs_diff == 1.0);
	assert_int_equal(nbg_rt_compare(ia, ib, 4, 4, 1, &r, &e), NBG_OK);
	assert_int_equal(r.mismatches, 0);

	/* INT8 vs UINT8 reading of 0xff / 0x01 */
	uint8_t ba[1] = { 0xff }, bb[1] = { 0x01 };
	assert_int_equal(nbg_rt_compare(ba, bb, 1, 3, 0, &r, &e), NBG_OK);
	assert_true(r.max_abs_diff == 2.0);
	assert_int_equal(nbg_rt_compare(ba, bb, 1, 2, 0, &r, &e), NBG_OK);
	assert_true(r.max_abs_diff == 254.0);

	/* INT64 extremes */
	int64_t la[1] = { INT64_MIN }, lb[1] = { INT64_MAX };
	assert_int_equal(nbg_rt_compare(la, lb, 8, 10, 0, &r, &e), NBG_OK);
	assert_true(r.max_abs_diff > 1.8e19);

	/* Refusals */
	assert_int_equal(nbg_rt_compare(ba, bb, 1, 13, 0, &r, &e), NBG_E_GOLDEN_FORMAT);
	assert_int_equal(nbg_rt_compare(ba, bb, 1, 99, 0, &r, &e), NBG_E_GOLDEN_FORMAT);
	assert_int_equal(nbg_rt_compare(ia, ib, 3, 5, 0, &r, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_compare(ia, ib, 4, 5, -1, &r, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_compare(ia, ib, 4, 5, NAN, &r, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_compare(NULL, ib, 4, 5, 0, &r, &e), NBG_E_INVALID_ARGUMENT);
	assert_int_equal(nbg_rt_compare(ia, ib, 0, 5, 0, &r, &e), NBG_OK);
	assert_int_equal(r.elements, 0);
}

#if !NBG_TEST_NNSDK_ABI
/* Not LP64: libnnsdk is refused before anything is loaded, saying why. */
static void test_abi_refused(void **state)
{
	(void)state;
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = TD_LIB, .device_root = dev_root };
	nbg_runtime *rt = NULL;
	nbg_error e;
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_ABI_UNSUPPORTED);
	assert_null(rt);
	assert_non_null(strstr(e.message, "LP64"));
	assert_non_null(strstr(e.message, "4-byte pointers"));
	o.nnsdk_path = "/nonexistent/libnnsdk.so"; /* before the library is looked for */
	assert_int_equal(nbg_runtime_open(&o, &rt, &e), NBG_E_ABI_UNSUPPORTED);
	assert_null(rt);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_table),
		cmocka_unit_test(test_code_table_doc),
		cmocka_unit_test(test_target_table_doc),
		cmocka_unit_test_setup(test_probe_order, reset_env),
		cmocka_unit_test_setup(test_probe_env, reset_env),
		cmocka_unit_test_setup(test_open_library_missing, reset_env),
		cmocka_unit_test_setup(test_open_symbol_missing, reset_env),
		cmocka_unit_test_setup(test_open_no_device, reset_env),
		cmocka_unit_test_setup(test_open_arguments, reset_env),
		cmocka_unit_test_setup(test_open_conflict, reset_env),
		cmocka_unit_test_setup(test_run_int16, reset_env),
		cmocka_unit_test_setup(test_run_fp16_and_float32, reset_env),
		cmocka_unit_test_setup(test_no_flush_variant, reset_env),
		cmocka_unit_test_setup(test_model_invalid, reset_env),
		cmocka_unit_test_setup(test_create_null, reset_env),
		cmocka_unit_test_setup(test_input_count_and_size, reset_env),
		cmocka_unit_test_setup(test_input_set_failed, reset_env),
		cmocka_unit_test_setup(test_order, reset_env),
		cmocka_unit_test_setup(test_flush_failed, reset_env),
		cmocka_unit_test_setup(test_output_null, reset_env),
		cmocka_unit_test_setup(test_output_data_null, reset_env),
		cmocka_unit_test_setup(test_output_count_short, reset_env),
		cmocka_unit_test_setup(test_output_size_short, reset_env),
		cmocka_unit_test_setup(test_destroy_failed, reset_env),
		cmocka_unit_test_setup(test_many_graphs, reset_env),
		cmocka_unit_test_setup(test_threads, reset_env),
		cmocka_unit_test(test_compare),
#if !NBG_TEST_NNSDK_ABI
		cmocka_unit_test_setup(test_abi_refused, reset_env),
#endif
	};
	int rc = rt_models_open(argc, argv, "test_runtime", &models);

	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, setup_all, teardown_all);
	rt_models_close(&models);
	return rc;
}

/*
 * nnsdk_testdouble.c - a TEST DOUBLE standing in for the vendor's libnnsdk.so
 * on machines without an NPU.  It is not vendor code and runs nothing: it
 * exports the same four entry points with the recovered libnnsdk ABI, checks every byte
 * it is handed against the documented layouts (reading raw offsets, not
 * libnbg's structs, so the two sides are independent), copies the model as the
 * real runtime does, and returns deterministic outputs of the sizes the NBG
 * declares (it parses the NBG itself with libnbg).
 *
 * An ABI or call-order violation aborts the process with a message: the
 * runtime layer under test must never produce one.
 *
 * Failure modes, chosen per call by NNSDK_TESTDOUBLE_FAIL (a comma list):
 *   create-null     aml_module_create returns NULL
 *   input-set-fail  aml_module_input_set returns -1
 *   flush-fail      aml_util_flushTensorHandle returns -1
 *   output-null     perfMode 2 returns NULL
 *   data-null       perfMode 2: output 0's data pointer (+0x50) is NULL
 *   count-short     perfMode 2: the count word lists one output too few
 *   size-short      perfMode 2: output 0's size word is one byte short
 *   destroy-fail    aml_module_destroy returns -1 and keeps its context, as the
 *                   vendor keeps its wrapper when the backend destroy fails
 *   real-failed-backend  the real library with a failed backend: create returns
 *                   a non-NULL context, input_set 1, output_get the pointer
 *                   0x1 (both perfModes), destroy 1 (and keeps the context)
 *   output-one      input_set succeeds, perfMode 2 returns the pointer 0x1
 *   crash-output-get  perfMode 2 dies with SIGSEGV inside the call
 * NNSDK_TESTDOUBLE_INPUT_KIND sets the input kind it expects (default 3).
 *
 * Variants built from this file: -DTD_OMIT_DESTROY (no aml_module_destroy,
 * for symbol-missing) and -DTD_OMIT_FLUSH (no aml_util_flushTensorHandle).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbg/nbg.h"

#define TD_EXPORT __attribute__((visibility("default")))

/* The layouts, as offsets (the recovered libnnsdk call graph, doc/runtime.md). */
#define CFG_SIZE 0x8e0u
#define CFG_PATH 0x08u
#define CFG_DATA 0x10u
#define CFG_MODEL_TYPE 0x18u
#define CFG_NBG_TYPE 0x1cu
#define CFG_HW_FLAG 0x8d8u
#define IN_SIZE 64u
#define IN_INDEX 0x04u
#define IN_BYTES 0x08u
#define IN_DATA 0x10u
#define IN_KIND 0x18u
#define IN_KIND_BINARY_RAW 3u
#define CMD_SIZE 56u
#define CMD_PERF 0x08u
#define CMD_FORMAT 0x0cu
#define OUT_FIRST 0x08u
#define OUT_STRIDE 0x60u
#define OUT_DATA 0x48u

/* By-value command: same size and alignment as the caller's 56-byte struct. */
typedef struct td_cmd {
	uint64_t w[7];
} td_cmd;
_Static_assert(sizeof(td_cmd) == CMD_SIZE, "56-byte command");

#define TD_MAGIC 0x58435444u /* "TDCX" */
#define TD_MAX_LIVE 64

typedef struct td_ctx {
	uint32_t magic;
	uint8_t *model;      /* our own copy, as the vendor copies */
	size_t model_len;
	nbg_model *m;
	unsigned char *in_set; /* per input: set since the last execute */
	uint64_t input_sum;
	int executed;
	uint32_t format;     /* output format of the last execute */
	uint8_t **bufs;
	size_t *sizes;
	uint8_t *obj;
} td_ctx;

static pthread_mutex_t td_lock = PTHREAD_MUTEX_INITIALIZER;
static td_ctx *live[TD_MAX_LIVE];
static td_ctx *kept[TD_MAX_LIVE]; /* contexts whose destroy "failed": still reachable */
static unsigned n_create, n_create_ok, n_destroy, n_input_set, n_execute, n_retrieve, n_flush;

static void violation(const char *what)
{
	fprintf(stderr, "nnsdk-testdouble: ABI violation: %s\n", what);
	fflush(stderr);
	abort();
}

/* The caller must serialize create and destroy (the vendor keeps global state
 * around them): two of them overlapping is a violation.  A short sleep inside
 * widens the window so a missing lock shows up in threaded tests. */
static int in_native;

static void native_enter(const char *fn)
{
	static char msg[128];
	pthread_mutex_lock(&td_lock);
	int busy = in_native;
	in_native = 1;
	pthread_mutex_unlock(&td_lock);
	if (busy) {
		snprintf(msg, sizeof(msg), "%s overlaps another create/destroy (not serialized)", fn);
		violation(msg);
	}
	struct timespec ts = { 0, 200 * 1000 };
	nanosleep(&ts, NULL);
}

static void native_leave(void)
{
	pthread_mutex_lock(&td_lock);
	in_native = 0;
	pthread_mutex_unlock(&td_lock);
}

static int failing(const char *mode)
{
	const char *v = getenv("NNSDK_TESTDOUBLE_FAIL");
	if (!v)
		return 0;
	size_t n = strlen(mode);
	for (const char *p = v; (p = strstr(p, mode)) != NULL; p += n)
		if ((p == v || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static const void *rdptr(const uint8_t *p)
{
	const void *v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int is_live(const td_ctx *c)
{
	for (int i = 0; i < TD_MAX_LIVE; i++)
		if (live[i] && live[i] == c)
			return 1;
	return 0;
}

static td_ctx *checked_ctx(void *context, const char *fn)
{
	static char msg[128];
	pthread_mutex_lock(&td_lock);
	int ok = context && is_live(context);
	pthread_mutex_unlock(&td_lock);
	if (!ok) {
		snprintf(msg, sizeof(msg), "%s called with a context that is not live", fn);
		violation(msg);
	}
	return context;
}

static void ctx_free(td_ctx *c)
{
	if (!c)
		return;
	if (c->bufs && c->m)
		for (size_t i = 0; i < nbg_model_output_count(c->m); i++)
			free(c->bufs[i]);
	free(c->bufs);
	free(c->sizes);
	free(c->obj);
	free(c->in_set);
	nbg_model_free(c->m);
	free(c->model);
	free(c);
}

static void *create_impl(const uint8_t *cfg)
{
	if (!cfg)
		violation("aml_module_create(NULL)");
	uint64_t word0 = rd64(cfg);
	uint32_t len = (uint32_t)(word0 >> 32);
	if ((uint32_t)word0 != CFG_SIZE)
		violation("config +0x00: low 32 bits of the first word are not 0x8e0");
	if (rdptr(cfg + CFG_PATH) != NULL)
		violation("config +0x08: path set in NBG-from-memory mode");
	const uint8_t *data = rdptr(cfg + CFG_DATA);
	if (!data)
		violation("config +0x10: data pointer is NULL");
	if ((int32_t)rd32(cfg + CFG_MODEL_TYPE) != 4)
		violation("config +0x18: modelType is not 4");
	if ((int32_t)rd32(cfg + CFG_NBG_TYPE) != 1)
		violation("config +0x1c: nbgType is not 1 (memory)");
	if (rd32(cfg + CFG_HW_FLAG) != 0)
		violation("config +0x8d8: hardware selection flag is not the stock 0");
	if (!all_zero(cfg + 0x20, CFG_HW_FLAG - 0x20) || !all_zero(cfg + CFG_HW_FLAG + 4, CFG_SIZE - CFG_HW_FLAG - 4))
		violation("config: bytes the stock caller leaves zero are not zero");
	if (len < 4 || memcmp(data, "VPMN", 4) != 0)
		violation("config: the model bytes do not start with VPMN");

	if (failing("create-null"))
		return NULL;

	td_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->magic = TD_MAGIC;
	/* Copy, as the vendor's read_nbg_from_memory does. */
	c->model = malloc(len);
	if (!c->model) {
		ctx_free(c);
		return NULL;
	}
	memcpy(c->model, data, len);
	c->model_len = len;
	nbg_error perr;
	nbg_code pc = nbg_parse(c->model, len, NULL, &c->m, &perr);
	if (pc == NBG_E_FILE_SIZE_MISMATCH || pc == NBG_E_TRUNCATED)
		violation("config +0x04: the model length does not match the NBG's own size");
	if (pc != NBG_OK) {
		/* the vendor's own parser refuses the file: create returns NULL */
		c->m = NULL;
		ctx_free(c);
		return NULL;
	}
	size_t nin = nbg_model_input_count(c->m) ? nbg_model_input_count(c->m) : 1;
	size_t nout = nbg_model_output_count(c->m) ? nbg_model_output_count(c->m) : 1;
	c->in_set = calloc(nin, 1);
	c->bufs = calloc(nout, sizeof(*c->bufs));
	c->sizes = calloc(nout, sizeof(*c->sizes));
	c->obj = calloc(1, OUT_FIRST + nout * OUT_STRIDE);
	if (!c->in_set || !c->bufs || !c->sizes || !c->obj) {
		ctx_free(c);
		return NULL;
	}
	pthread_mutex_lock(&td_lock);
	int slot = -1;
	for (int i = 0; i < TD_MAX_LIVE && slot < 0; i++)
		if (!live[i])
			slot = i;
	if (slot >= 0) {
		live[slot] = c;
		n_create_ok++;
	}
	pthread_mutex_unlock(&td_lock);
	if (slot < 0) {
		ctx_free(c);
		return NULL;
	}
	return c;
}

TD_EXPORT void *aml_module_create(void *config);
TD_EXPORT void *aml_module_create(void *config)
{
	pthread_mutex_lock(&td_lock);
	n_create++;
	pthread_mutex_unlock(&td_lock);
	native_enter("aml_module_create");
	void *r = create_impl(config);
	native_leave();
	return r;
}

TD_EXPORT int aml_module_input_set(void *context, void *input);
TD_EXPORT int aml_module_input_set(void *context, void *input)
{
	td_ctx *c = checked_ctx(context, "aml_module_input_set");
	const uint8_t *d = input;
	pthread_mutex_lock(&td_lock);
	n_input_set++;
	pthread_mutex_unlock(&td_lock);
	if (!d)
		violation("aml_module_input_set(descriptor NULL)");
	if (rd32(d) != IN_SIZE)
		violation("input +0x00: type size is not the documented 64");
	uint32_t idx = rd32(d + IN_INDEX);
	if (idx >= nbg_model_input_count(c->m))
		violation("input +0x04: tensor index out of range");
	if (rd32(d + IN_BYTES) != nbg_model_input_at(c->m, idx)->byte_size)
		violation("input +0x08: byte count differs from the NBG input record");
	const uint8_t *data = rdptr(d + IN_DATA);
	if (!data)
		violation("input +0x10: data pointer is NULL");
	const char *kind_env = getenv("NNSDK_TESTDOUBLE_INPUT_KIND");
	uint32_t want_kind = kind_env && *kind_env ? (uint32_t)strtoul(kind_env, NULL, 0) : IN_KIND_BINARY_RAW;
	if (rd32(d + IN_KIND) != want_kind)
		violation("input +0x18: input kind is not the expected one (BINARY_RAW_DATA, 3, by default)");
	if (!all_zero(d + 0x0c, 4) || !all_zero(d + 0x1c, IN_SIZE - 0x1c))
		violation("input: padding or preprocessing block is not zero");
	if (failing("input-set-fail"))
		return -1;
	if (failing("real-failed-backend"))
		return 1;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < rd32(d + IN_BYTES); i++)
		sum += data[i];
	c->input_sum += sum * (idx + 1);
	c->in_set[idx] = 1;
	return 0;
}

#ifndef TD_OMIT_FLUSH
TD_EXPORT int aml_util_flushTensorHandle(void *context, int type);
TD_EXPORT int aml_util_flushTensorHandle(void *context, int type)
{
	td_ctx *c = checked_ctx(context, "aml_util_flushTensorHandle");
	pthread_mutex_lock(&td_lock);
	n_flush++;
	pthread_mutex_unlock(&td_lock);
	if (type != 0 && type != 1)
		violation("flush: type is neither 0 (input) nor 1 (output)");
	(void)c;
	if (failing("flush-fail"))
		return -1;
	return 0;
}
#endif

/* Encodes v/8 (|v| < 128, exactly representable) as IEEE half. */
static uint16_t half_of_eighths(int v)
{
	uint16_t sign = v < 0 ? 0x8000 : 0;
	unsigned a = (unsigned)(v < 0 ? -v : v);
	if (!a)
		return sign;
	int e = 0;
	while ((a >> (e + 1)) != 0)
		e++;
	unsigned mant = (a << (10 - e)) & 0x3ffu;
	return (uint16_t)(sign | ((unsigned)(e - 3 + 15) << 10) | mant);
}

static void fill_outputs(td_ctx *c)
{
	for (size_t k = 0; k < nbg_model_output_count(c->m); k++) {
		const nbg_io *io = nbg_model_output_at(c->m, k);
		uint32_t fmt = c->format == 0 ? 0 : io->data_format;
		size_t esz = c->format == 0 ? 4 : (nbg_data_format_bits(fmt) + 7) / 8;
		size_t n = c->format == 0 ? (size_t)io->element_count * 4 : (size_t)io->byte_size;
		if (!c->bufs[k] || c->sizes[k] != n) {
			free(c->bufs[k]);
			c->bufs[k] = malloc(n ? n : 1);
			if (!c->bufs[k])
				violation("out of memory in the test double");
			c->sizes[k] = n;
		}
		uint8_t *b = c->bufs[k];
		if (esz == 0) { /* packed 4-bit formats: a byte pattern */
			for (size_t j = 0; j < n; j++)
				b[j] = (uint8_t)(j * 13 + k * 101 + c->input_sum);
			continue;
		}
		for (size_t j = 0; j < n / esz; j++) {
			int v = (int)((j * 13 + k * 101 + c->input_sum) % 200) - 100;
			uint8_t *p = b + j * esz;
			uint32_t u32;
			uint16_t u16;
			float f;
			switch (fmt) {
			case 0: f = (float)v / 8.0f; memcpy(&u32, &f, 4); memcpy(p, &u32, 4); break;
			case 1: u16 = half_of_eighths(v); memcpy(p, &u16, 2); break;
			case 4: case 5: u16 = (uint16_t)(int16_t)(v * 300); memcpy(p, &u16, 2); break;
			case 8: case 9: u32 = (uint32_t)(v * 70000); memcpy(p, &u32, 4); break;
			default: memset(p, 0, esz); p[0] = (uint8_t)(int8_t)v; break;
			}
		}
	}
}

TD_EXPORT void *aml_module_output_get(void *context, td_cmd cmd);
TD_EXPORT void *aml_module_output_get(void *context, td_cmd cmd)
{
	td_ctx *c = checked_ctx(context, "aml_module_output_get");
	uint8_t raw[CMD_SIZE];
	memcpy(raw, &cmd, sizeof(raw));
	if (rd32(raw) != CMD_SIZE)
		violation("command +0x00: typeSize is not 56");
	uint32_t mode = rd32(raw + CMD_PERF), format = rd32(raw + CMD_FORMAT);
	if (rd32(raw + 4) != 0 || !all_zero(raw + 0x10, CMD_SIZE - 0x10))
		violation("command: bytes the stock caller leaves zero are not zero");
	if (format > 1)
		violation("command +0x0c: output format is neither 0 (float32) nor 1 (raw)");

	if (failing("real-failed-backend"))
		return (void *)(uintptr_t)1;
	if (mode == 2 && failing("crash-output-get"))
		raise(SIGSEGV);
	if (mode == 2 && failing("output-one")) {
		c->executed = 0;
		return (void *)(uintptr_t)1;
	}
	if (mode == 1) {
		pthread_mutex_lock(&td_lock);
		n_execute++;
		pthread_mutex_unlock(&td_lock);
		for (size_t i = 0; i < nbg_model_input_count(c->m); i++)
			if (!c->in_set[i])
				violation("perfMode 1 before every input was set");
		memset(c->in_set, 0, nbg_model_input_count(c->m) ? nbg_model_input_count(c->m) : 1);
		c->format = format;
		fill_outputs(c);
		c->input_sum = 0;
		c->executed = 1;
		return NULL; /* perfMode 1: the return is ignored */
	}
	if (mode == 2) {
		pthread_mutex_lock(&td_lock);
		n_retrieve++;
		pthread_mutex_unlock(&td_lock);
		if (!c->executed)
			violation("perfMode 2 before perfMode 1");
		if (format != c->format)
			violation("perfMode 2 with another output format than perfMode 1");
		c->executed = 0;
		if (failing("output-null"))
			return NULL;
		size_t n = nbg_model_output_count(c->m);
		uint32_t type_size = (uint32_t)(OUT_FIRST + n * OUT_STRIDE);
		uint32_t count = (uint32_t)n - (failing("count-short") && n ? 1u : 0u);
		memset(c->obj, 0, OUT_FIRST + (n ? n : 1) * OUT_STRIDE);
		memcpy(c->obj, &type_size, 4);
		memcpy(c->obj + 4, &count, 4);
		for (size_t k = 0; k < n; k++) {
			uint8_t *d = c->obj + OUT_FIRST + k * OUT_STRIDE;
			uint32_t size = (uint32_t)c->sizes[k];
			if (k == 0 && failing("size-short"))
				size--;
			memcpy(d, &size, 4);
			const char *name = nbg_model_output_at(c->m, k)->has_name ? nbg_model_output_at(c->m, k)->name : "output";
			memcpy(d + 4, name, strnlen(name, 63)); /* NUL-terminated: the rest is zero */
			const void *p = (k == 0 && failing("data-null")) ? NULL : c->bufs[k];
			memcpy(d + OUT_DATA, &p, sizeof(p));
		}
		return c->obj;
	}
	violation("perfMode other than 1 (execute) or 2 (retrieve): this layer never uses 0 or 3");
	return NULL;
}

#ifndef TD_OMIT_DESTROY
static int destroy_impl(void *context);

TD_EXPORT int aml_module_destroy(void *context);
TD_EXPORT int aml_module_destroy(void *context)
{
	native_enter("aml_module_destroy");
	int r = destroy_impl(context);
	native_leave();
	return r;
}

static int destroy_impl(void *context)
{
	pthread_mutex_lock(&td_lock);
	n_destroy++;
	int slot = -1;
	for (int i = 0; i < TD_MAX_LIVE; i++)
		if (context && live[i] == context)
			slot = i;
	if (slot < 0) {
		pthread_mutex_unlock(&td_lock);
		violation("aml_module_destroy of a context that is not live (NULL or destroyed twice)");
	}
	live[slot] = NULL;
	if (failing("destroy-fail") || failing("real-failed-backend")) {
		/* The vendor frees its wrapper only after backend success. */
		for (int i = 0; i < TD_MAX_LIVE; i++)
			if (!kept[i]) {
				kept[i] = context;
				break;
			}
		pthread_mutex_unlock(&td_lock);
		return failing("real-failed-backend") ? 1 : -1;
	}
	pthread_mutex_unlock(&td_lock);
	ctx_free(context);
	return 0;
}
#endif

/* Test hooks (not part of the vendor ABI): call counters by name. */
TD_EXPORT unsigned nnsdk_testdouble_count(const char *what);
TD_EXPORT unsigned nnsdk_testdouble_count(const char *what)
{
	unsigned v = 0;
	pthread_mutex_lock(&td_lock);
	if (!strcmp(what, "create"))
		v = n_create;
	else if (!strcmp(what, "create-ok"))
		v = n_create_ok;
	else if (!strcmp(what, "destroy"))
		v = n_destroy;
	else if (!strcmp(what, "input-set"))
		v = n_input_set;
	else if (!strcmp(what, "execute"))
		v = n_execute;
	else if (!strcmp(what, "retrieve"))
		v = n_retrieve;
	else if (!strcmp(what, "flush"))
		v = n_flush;
	else if (!strcmp(what, "live"))
		for (int i = 0; i < TD_MAX_LIVE; i++)
			v += live[i] != NULL;
	pthread_mutex_unlock(&td_lock);
	return v;
}

/* Frees the contexts a failed destroy kept, so leak checkers stay quiet. */
TD_EXPORT void nnsdk_testdouble_release_kept(void);
TD_EXPORT void nnsdk_testdouble_release_kept(void)
{
	pthread_mutex_lock(&td_lock);
	for (int i = 0; i < TD_MAX_LIVE; i++) {
		ctx_free(kept[i]);
		kept[i] = NULL;
	}
	pthread_mutex_unlock(&td_lock);
}

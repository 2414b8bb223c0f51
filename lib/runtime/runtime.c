/*
 * runtime.c - the libnnsdk ABI layer: dlopen the vendor runtime, create a
 * graph from an NBG in memory, set inputs, execute (perfMode 1), retrieve
 * (perfMode 2), destroy exactly once.  Struct layouts live in nnsdk_abi.h.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "nbg/runtime.h"
#include "runtime/nnsdk_abi.h"
#include "runtime/runtime_internal.h"

/* ------------------------------------------------------------------ errors */

/* -------------------------------------------------------- process state */

/*
 * Two locks, never held together:
 *  - native_lock serializes aml_module_create / aml_module_destroy across the
 *    process (the vendor guards creation with global parser/backend state);
 *  - state_lock guards the loaded library handle and reference counts.
 */
static pthread_mutex_t native_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static void *loaded_dl;        /* the one libnnsdk handle in use by this process */
static unsigned loaded_refs;   /* runtime handles + graphs referring to loaded_dl */

struct nbg_runtime {
	void *dl;
	char path[NBG_RT_PATH_MAX];
	nbg_rt_probe probe;
	unsigned flags;
	uint32_t output_format;
	uint32_t input_kind;
	unsigned refs; /* the handle itself + its graphs; guarded by state_lock */
	nnsdk_create_fn create;
	nnsdk_input_set_fn input_set;
	nnsdk_output_get_fn output_get;
	nnsdk_destroy_fn destroy;
	nnsdk_flush_fn flush; /* optional */
};

static void runtime_unref(nbg_runtime *rt)
{
	int last;
	pthread_mutex_lock(&state_lock);
	last = --rt->refs == 0;
	if (last) {
		/* RTLD_NODELETE keeps the vendor library mapped; dlclose only drops
		 * our reference so a later open of the same path gets the same handle. */
		if (--loaded_refs == 0)
			loaded_dl = NULL;
		dlclose(rt->dl);
	}
	pthread_mutex_unlock(&state_lock);
	if (last)
		free(rt);
}

/* dlsym into a function pointer without the object-to-function cast ISO C
 * does not define. */
static int resolve(void *dl, const char *name, void *fn, size_t fn_size)
{
	dlerror();
	void *sym = dlsym(dl, name);
	if (!sym)
		return -1;
	memcpy(fn, &sym, fn_size);
	return 0;
}

nbg_code nbg_runtime_open(const nbg_rt_options *opts, nbg_runtime **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "open: no output pointer given");
	*out = NULL;
	nbg_rt_options o;
	memset(&o, 0, sizeof(o));
	if (opts) {
		if (opts->size < sizeof(opts->size))
			return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
					   "open: options size %zu; set it to sizeof(nbg_rt_options)",
					   opts->size);
		/* An older, shorter struct leaves the newer fields zero (defaults). */
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	}
	o.size = sizeof(o);
	if (o.flags & ~(NBG_RT_OPEN_SKIP_PROBE | NBG_RT_OPEN_NO_FLUSH | NBG_RT_OPEN_INPUT_KIND))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "open: unknown flags 0x%x",
				   o.flags);

	if (!NNSDK_ABI_LP64)
		return nbg_rt_fail(err, NBG_E_ABI_UNSUPPORTED, -1,
				   "the libnnsdk structures are recovered for LP64 (AArch64); this "
				   "build has %zu-byte pointers",
				   sizeof(void *));

	nbg_runtime *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "open: out of memory");
	rt->flags = o.flags;
	rt->output_format = o.float32_outputs ? NBG_RT_OUTPUT_FLOAT32 : NBG_RT_OUTPUT_RAW;
	rt->input_kind = (o.flags & NBG_RT_OPEN_INPUT_KIND) ? o.input_kind
							   : NBG_RT_INPUT_KIND_BINARY_RAW;

	nbg_code rc = nbg_rt_probe_devices(o.device_root, &rt->probe, err);
	if (rc != NBG_OK)
		goto fail;
	if (!(o.flags & NBG_RT_OPEN_SKIP_PROBE)) {
		if (!rt->probe.npu_present) {
			rc = nbg_rt_fail(err, NBG_E_NO_DEVICE, -1,
					 "no NPU device under %s (looked for galcore, vipcore, adla0%s)",
					 rt->probe.device_root,
					 rt->probe.backend == NBG_RT_BACKEND_GPU
						 ? "; only mali0 exists, a GPU" : "");
			goto fail;
		}
		if (!rt->probe.nbg_capable) {
			rc = nbg_rt_fail(err, NBG_E_BACKEND_UNSUPPORTED, -1,
					 "%s/adla0 selects the ADLA backend, which does not run "
					 "VeriSilicon NBG files",
					 rt->probe.device_root);
			goto fail;
		}
	}

	const char *path = o.nnsdk_path && *o.nnsdk_path ? o.nnsdk_path : nbg_rt_env("NBG_NNSDK_PATH");
	if (!path)
		path = "libnnsdk.so";
	if (strlen(path) >= sizeof(rt->path)) {
		rc = nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "libnnsdk path is too long");
		goto fail;
	}
	memcpy(rt->path, path, strlen(path) + 1);

	/* Load, resolve and register under state_lock so two opens cannot race to
	 * load two different libraries. */
	pthread_mutex_lock(&state_lock);
	dlerror();
	if (loaded_dl) {
		/* One libnnsdk per process: anything but the loaded file is refused
		 * before its code is mapped (RTLD_NOLOAD also matches the same file
		 * reached through another name). */
		rt->dl = dlopen(rt->path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		if (rt->dl != loaded_dl) {
			if (rt->dl)
				dlclose(rt->dl);
			pthread_mutex_unlock(&state_lock);
			rc = nbg_rt_fail(err, NBG_E_RUNTIME_CONFLICT, -1,
					 "%s is not the libnnsdk already in use in this process; "
					 "close every runtime and graph first",
					 rt->path);
			goto fail;
		}
	} else {
		nbg_rt_crumb("dlopen(libnnsdk)");
		rt->dl = dlopen(rt->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	}
	if (!rt->dl) {
		const char *why = dlerror();
		pthread_mutex_unlock(&state_lock);
		rc = nbg_rt_fail(err, NBG_E_LIBRARY_MISSING, -1, "cannot load %s: %s", rt->path,
				 why ? why : "unknown dlopen error");
		goto fail;
	}

	static const char *const required[] = { "aml_module_create", "aml_module_input_set",
						"aml_module_output_get", "aml_module_destroy" };
	void *const slots[] = { &rt->create, &rt->input_set, &rt->output_get, &rt->destroy };
	const size_t slot_sizes[] = { sizeof(rt->create), sizeof(rt->input_set),
				      sizeof(rt->output_get), sizeof(rt->destroy) };
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (resolve(rt->dl, required[i], slots[i], slot_sizes[i]) != 0) {
			pthread_mutex_unlock(&state_lock);
			rc = nbg_rt_fail(err, NBG_E_SYMBOL_MISSING, -1, "%s has no symbol %s",
					 rt->path, required[i]);
			goto fail_dl;
		}
	}
	if (!(o.flags & NBG_RT_OPEN_NO_FLUSH) &&
	    resolve(rt->dl, "aml_util_flushTensorHandle", &rt->flush, sizeof(rt->flush)) != 0)
		rt->flush = NULL; /* optional: older SDKs have no explicit flush */

	loaded_dl = rt->dl;
	loaded_refs++;
	rt->refs = 1;
	pthread_mutex_unlock(&state_lock);
	*out = rt;
	return NBG_OK;

fail_dl:
	dlclose(rt->dl);
fail:
	free(rt);
	return rc;
}

void nbg_runtime_close(nbg_runtime *rt)
{
	if (rt)
		runtime_unref(rt);
}

const nbg_rt_probe *nbg_runtime_probe(const nbg_runtime *rt)
{
	return rt ? &rt->probe : NULL;
}

const char *nbg_runtime_library_path(const nbg_runtime *rt)
{
	return rt ? rt->path : NULL;
}

int nbg_runtime_has_flush(const nbg_runtime *rt)
{
	return rt && rt->flush ? 1 : 0;
}

uint32_t nbg_runtime_input_kind(const nbg_runtime *rt)
{
	return rt ? rt->input_kind : 0;
}

/* -------------------------------------------------------------- graph */

enum graph_state {
	GRAPH_CREATED,    /* needs inputs */
	GRAPH_INPUTS_SET, /* may execute */
	GRAPH_EXECUTED,   /* may retrieve */
};

struct nbg_rt_graph {
	nbg_runtime *rt;
	void *native;          /* aml_module_create's wrapper; NULL once destroyed */
	uint8_t *model_bytes;  /* owned copy, alive for the whole graph lifetime */
	size_t model_size;
	nbg_model *model;      /* parsed from model_bytes */
	uint8_t **staging;     /* one buffer per input, record byte_size each */
	size_t *out_size;
	uint32_t *out_format;
	enum graph_state state;
};

static void graph_free(nbg_rt_graph *g)
{
	if (g->staging && g->model)
		for (size_t i = 0; i < g->model->input_count; i++)
			free(g->staging[i]);
	free(g->staging);
	free(g->out_size);
	free(g->out_format);
	nbg_model_free(g->model);
	free(g->model_bytes);
	free(g);
}

const nbg_model *nbg_rt_graph_model(const nbg_rt_graph *g)
{
	return g ? g->model : NULL;
}

size_t nbg_rt_graph_output_size(const nbg_rt_graph *g, size_t i)
{
	return g && i < g->model->output_count ? g->out_size[i] : 0;
}

uint32_t nbg_rt_graph_output_format(const nbg_rt_graph *g, size_t i)
{
	return g && i < g->model->output_count ? g->out_format[i] : 0;
}

static nnsdk_output_cmd output_cmd(const nbg_rt_graph *g, uint32_t perf_mode)
{
	nnsdk_output_cmd cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.type_size = NNSDK_OUTPUT_CMD_SIZE;
	cmd.perf_mode = perf_mode;
	cmd.format = g->rt->output_format;
	return cmd;
}

/* Host-side buffers of a new graph: one staging buffer per input and the
 * byte size and format of each output, every size checked against the
 * 32-bit fields of the vendor structures. */
static nbg_code size_buffers(nbg_rt_graph *g, nbg_error *err)
{
	const nbg_model *m = g->model;
	const nbg_runtime *rt = g->rt;
	nbg_code rc = NBG_OK;

	g->staging = calloc(m->input_count ? m->input_count : 1, sizeof(*g->staging));
	g->out_size = calloc(m->output_count ? m->output_count : 1, sizeof(*g->out_size));
	g->out_format = calloc(m->output_count ? m->output_count : 1, sizeof(*g->out_format));
	if (!g->staging || !g->out_size || !g->out_format) {
		rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "create: out of memory");
		return rc;
	}
	for (size_t i = 0; i < m->input_count; i++) {
		const nbg_io *io = &m->inputs[i];
		if (!io->byte_size_known) {
			rc = nbg_rt_fail(err, NBG_E_IO_SIZE_UNKNOWN, (int32_t)i,
					 "input %zu has data format %u, whose byte size is not known",
					 i, io->data_format);
			return rc;
		}
		if (io->byte_size > INT32_MAX) {
			rc = nbg_rt_fail(err, NBG_E_MODEL_TOO_LARGE, (int32_t)i,
					 "input %zu needs %llu bytes; the input descriptor's byte "
					 "count is a signed 32-bit field",
					 i, (unsigned long long)io->byte_size);
			return rc;
		}
		g->staging[i] = malloc(io->byte_size ? (size_t)io->byte_size : 1);
		if (!g->staging[i]) {
			rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, (int32_t)i,
					 "create: cannot allocate %llu bytes for input %zu",
					 (unsigned long long)io->byte_size, i);
			return rc;
		}
	}
	for (size_t i = 0; i < m->output_count; i++) {
		const nbg_io *io = &m->outputs[i];
		uint64_t bytes;
		if (rt->output_format == NBG_RT_OUTPUT_FLOAT32) {
			if (__builtin_mul_overflow(io->element_count, (uint64_t)4, &bytes) ||
			    io->element_count == 0) {
				rc = nbg_rt_fail(err, NBG_E_IO_SIZE_UNKNOWN, (int32_t)i,
						 "output %zu has no usable element count", i);
				return rc;
			}
			g->out_format[i] = 0; /* FP32 */
		} else {
			if (!io->byte_size_known) {
				rc = nbg_rt_fail(err, NBG_E_IO_SIZE_UNKNOWN, (int32_t)i,
						 "output %zu has data format %u, whose byte size is "
						 "not known",
						 i, io->data_format);
				return rc;
			}
			bytes = io->byte_size;
			g->out_format[i] = io->data_format;
		}
		if (bytes > SIZE_MAX || bytes > UINT32_MAX) {
			rc = nbg_rt_fail(err, NBG_E_MODEL_TOO_LARGE, (int32_t)i,
					 "output %zu has %llu bytes, more than the descriptor's "
					 "32-bit size word",
					 i, (unsigned long long)bytes);
			return rc;
		}
		g->out_size[i] = (size_t)bytes;
	}
	return NBG_OK;
}

nbg_code nbg_rt_graph_create(nbg_runtime *rt, const uint8_t *model, size_t size,
				nbg_rt_graph **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "create: no output pointer given");
	*out = NULL;
	if (!rt || (!model && size))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "create: runtime or model pointer is NULL");

	nbg_rt_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "create: out of memory");
	g->rt = rt;
	/* Our own copy: the vendor consumes the bytes synchronously, but the graph
	 * keeps them for its whole life anyway, and the parsed model points into
	 * them. */
	g->model_bytes = malloc(size ? size : 1);
	if (!g->model_bytes) {
		graph_free(g);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1,
				   "create: cannot allocate %zu bytes for the model", size);
	}
	if (size)
		memcpy(g->model_bytes, model, size);
	else
		g->model_bytes[0] = 0; /* never read as model bytes; keeps the buffer defined */
	g->model_size = size;

	nbg_error perr;
	memset(&perr, 0, sizeof(perr));
	nbg_code pc = nbg_parse(g->model_bytes, size, NULL, &g->model, &perr);
	if (pc != NBG_OK) {
		g->model = NULL;
		graph_free(g);
		if (err) {
			nbg_rt_fail(err, NBG_E_MODEL_INVALID, -1,
				    "the NBG failed validation (%s at offset %llu%s%s): %s",
				    nbg_code_name(pc) ? nbg_code_name(pc) : "?",
				    (unsigned long long)perr.offset, perr.field[0] ? ", field " : "",
				    perr.field, perr.message);
			err->cause = pc;
			err->offset = perr.offset;
			memcpy(err->field, perr.field, sizeof(err->field));
		}
		return NBG_E_MODEL_INVALID;
	}
	const nbg_model *m = g->model;
	if (size > INT32_MAX) {
		graph_free(g);
		return nbg_rt_fail(err, NBG_E_MODEL_TOO_LARGE, -1,
				   "the NBG has %zu bytes; the create configuration's length is a "
				   "signed 32-bit field",
				   size);
	}

	nbg_code rc = size_buffers(g, err);
	if (rc != NBG_OK)
		goto fail;

	nnsdk_create_config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "create: out of memory");
		goto fail;
	}
	cfg->type_size = NNSDK_CONFIG_TYPE_SIZE;
	cfg->model_length = (uint32_t)size;
	cfg->path = NULL;
	cfg->data = g->model_bytes;
	cfg->model_type = NNSDK_MODEL_TYPE_STOCK;
	cfg->nbg_type = NNSDK_NBG_TYPE_MEMORY;
	cfg->hw_select = NNSDK_HW_SELECT_STOCK;

	/* Take the runtime reference before the native call so a concurrent
	 * nbg_runtime_close() cannot unload the library under us. */
	pthread_mutex_lock(&state_lock);
	rt->refs++;
	pthread_mutex_unlock(&state_lock);

	pthread_mutex_lock(&native_lock);
	nbg_rt_crumb("aml_module_create");
	g->native = rt->create(cfg);
	pthread_mutex_unlock(&native_lock);
	free(cfg);

	if (!g->native) {
		rc = nbg_rt_fail(err, NBG_E_CREATE_FAILED, -1,
				 "aml_module_create returned NULL for this NBG (version 0x%08x, target "
				 "0x%08x); the runtime refuses at config validation, hardware "
				 "detection, backend loading, NBG parsing, product selection (the "
				 "target must be in the driver's product list), context/graph "
				 "creation, IO binding, NBG node, tensor creation, setup or verify; "
				 "its log names the step",
				 m->version, m->target);
		graph_free(g);
		runtime_unref(rt);
		return rc;
	}
	g->state = GRAPH_CREATED;
	*out = g;
	return NBG_OK;

fail:
	graph_free(g);
	return rc;
}

nbg_code nbg_rt_graph_set_inputs(nbg_rt_graph *g, const nbg_rt_buffer *inputs, size_t count,
				    nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!g || !g->native || (!inputs && count))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "set inputs: graph or input array is NULL");
	const nbg_model *m = g->model;
	if (count != m->input_count)
		return nbg_rt_fail(err, NBG_E_INPUT_COUNT_MISMATCH, -1,
				   "%zu input buffer%s given; the NBG declares %zu input%s", count,
				   count == 1 ? "" : "s", m->input_count,
				   m->input_count == 1 ? "" : "s");
	/* Check every buffer before the first native call. */
	for (size_t i = 0; i < count; i++) {
		if (!inputs[i].data && inputs[i].size)
			return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, (int32_t)i,
					   "input %zu has a NULL data pointer", i);
		if (inputs[i].size != m->inputs[i].byte_size)
			return nbg_rt_fail(err, NBG_E_INPUT_SIZE_MISMATCH, (int32_t)i,
					   "input %zu has %zu bytes; its NBG record (%s, %u dims) "
					   "needs %llu",
					   i, inputs[i].size,
					   nbg_data_format_name(m->inputs[i].data_format)
						   ? nbg_data_format_name(m->inputs[i].data_format)
						   : "?",
					   m->inputs[i].dim_count,
					   (unsigned long long)m->inputs[i].byte_size);
	}
	g->state = GRAPH_CREATED;
	for (size_t i = 0; i < count; i++) {
		if (inputs[i].size)
			memcpy(g->staging[i], inputs[i].data, inputs[i].size);
		nnsdk_input_desc d;
		memset(&d, 0, sizeof(d));
		d.type_size = NNSDK_INPUT_DESC_SIZE;
		d.index = (uint32_t)i;
		d.size = (uint32_t)inputs[i].size;
		d.data = g->staging[i];
		d.kind = g->rt->input_kind;
		nbg_rt_crumb("aml_module_input_set");
		int r = g->rt->input_set(g->native, &d);
		if (r != 0)
			return nbg_rt_fail(err, NBG_E_INPUT_SET_FAILED, (int32_t)i,
					   "aml_module_input_set returned %d for input %zu", r, i);
	}
	g->state = GRAPH_INPUTS_SET;
	return NBG_OK;
}

nbg_code nbg_rt_graph_execute(nbg_rt_graph *g, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!g || !g->native)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "execute: graph is NULL");
	if (g->state != GRAPH_INPUTS_SET)
		return nbg_rt_fail(err, NBG_E_BAD_STATE, -1,
				   "execute: set the inputs first (each execute consumes one "
				   "nbg_rt_graph_set_inputs)");
	g->state = GRAPH_CREATED;
	if (g->rt->flush) {
		nbg_rt_crumb("aml_util_flushTensorHandle(input)");
		int r = g->rt->flush(g->native, NNSDK_FLUSH_INPUT);
		if (r != 0)
			return nbg_rt_fail(err, NBG_E_RUN_FAILED, -1,
					   "aml_util_flushTensorHandle(input) returned %d", r);
	}
	/* perfMode 1 runs the graph; the vendor returns NULL or an ignorable
	 * value here by definition. */
	nbg_rt_crumb("aml_module_output_get(perfMode 1)");
	(void)g->rt->output_get(g->native, output_cmd(g, NNSDK_PERF_EXECUTE));
	if (g->rt->flush) {
		nbg_rt_crumb("aml_util_flushTensorHandle(output)");
		int r = g->rt->flush(g->native, NNSDK_FLUSH_OUTPUT);
		if (r != 0)
			return nbg_rt_fail(err, NBG_E_RUN_FAILED, -1,
					   "aml_util_flushTensorHandle(output) returned %d", r);
	}
	g->state = GRAPH_EXECUTED;
	return NBG_OK;
}

nbg_code nbg_rt_graph_retrieve(nbg_rt_graph *g, nbg_rt_output *outs, size_t count,
				  nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!g || !g->native || (!outs && count))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "retrieve: graph or output array is NULL");
	const nbg_model *m = g->model;
	if (count != m->output_count)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "retrieve: room for %zu outputs given; the NBG declares %zu", count,
				   m->output_count);
	if (g->state != GRAPH_EXECUTED)
		return nbg_rt_fail(err, NBG_E_BAD_STATE, -1,
				   "retrieve: execute first (one retrieve per execute)");
	g->state = GRAPH_CREATED;
	memset(outs, 0, count * sizeof(*outs));

	nbg_rt_crumb("aml_module_output_get(perfMode 2)");
	const uint8_t *obj = g->rt->output_get(g->native, output_cmd(g, NNSDK_PERF_RETRIEVE));
	nbg_rt_crumb("reading the aml_module_output_get(perfMode 2) result");
	if (!obj)
		return nbg_rt_fail(err, NBG_E_OUTPUT_NULL, -1,
				   "aml_module_output_get(perfMode 2) returned NULL");
	/* The real library with a failed backend returns small integers such as
	 * 0x1 here: refuse anything that cannot be the object before reading it. */
	size_t obj_bytes = NNSDK_OUTPUT_FIRST_DESC + count * NNSDK_OUTPUT_DESC_STRIDE;
	if (!nbg_rt_plausible(obj, obj_bytes, sizeof(void *)))
		return nbg_rt_fail(err, NBG_E_DESCRIPTOR_INVALID, -1,
				   "aml_module_output_get(perfMode 2) returned %p, which cannot be "
				   "an output object of %zu bytes (the runtime's backend failed; "
				   "its log says why)",
				   (const void *)obj, obj_bytes);
	uint32_t listed;
	memcpy(&listed, obj + offsetof(nnsdk_output_object, count), sizeof(listed));
	if (listed < m->output_count)
		return nbg_rt_fail(err, NBG_E_OUTPUT_INVALID, -1,
				   "the output object lists %u output%s; the NBG declares %zu", listed,
				   listed == 1 ? "" : "s", m->output_count);

	for (size_t i = 0; i < count; i++) {
		const uint8_t *desc = obj + NNSDK_OUTPUT_FIRST_DESC + i * NNSDK_OUTPUT_DESC_STRIDE;
		const void *data;
		uint32_t reported;
		memcpy(&data, desc + NNSDK_OUTPUT_DESC_DATA, sizeof(data));
		memcpy(&reported, desc + offsetof(nnsdk_output_desc, size), sizeof(reported));
		if (!data)
			return nbg_rt_fail(err, NBG_E_OUTPUT_DATA_NULL, (int32_t)i,
					   "output %zu: the data pointer at object +0x%zx is NULL", i,
					   (size_t)(NNSDK_OUTPUT_FIRST_DESC + i * NNSDK_OUTPUT_DESC_STRIDE +
						    NNSDK_OUTPUT_DESC_DATA));
		if (!nbg_rt_plausible(data, g->out_size[i], 1))
			return nbg_rt_fail(err, NBG_E_DESCRIPTOR_INVALID, (int32_t)i,
					   "output %zu: the data pointer %p cannot be a buffer of %zu "
					   "bytes",
					   i, data, g->out_size[i]);
		if (reported < g->out_size[i])
			return nbg_rt_fail(err, NBG_E_OUTPUT_INVALID, (int32_t)i,
					   "output %zu: the runtime reports %u bytes; the NBG record "
					   "needs %zu",
					   i, reported, g->out_size[i]);
		nbg_rt_output *o = &outs[i];
		o->index = (uint32_t)i;
		o->io = &m->outputs[i];
		o->data_format = g->out_format[i];
		o->data = data;
		o->size = g->out_size[i];
		o->reported_size = reported;
		nbg_sha256(data, o->size, o->sha256);
	}
	return NBG_OK;
}

nbg_code nbg_rt_graph_destroy(nbg_rt_graph **pg, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!pg || !*pg)
		return NBG_OK;
	nbg_rt_graph *g = *pg;
	*pg = NULL;
	nbg_runtime *rt = g->rt;
	/* Clear the stored pointer before the native call: whatever happens, it
	 * is never handed to aml_module_destroy twice. */
	void *native = g->native;
	g->native = NULL;
	int r = 0;
	if (native) {
		pthread_mutex_lock(&native_lock);
		nbg_rt_crumb("aml_module_destroy");
		r = rt->destroy(native);
		pthread_mutex_unlock(&native_lock);
	}
	graph_free(g);
	runtime_unref(rt);
	if (r != 0)
		return nbg_rt_fail(err, NBG_E_DESTROY_FAILED, -1,
				   "aml_module_destroy returned %d; the runtime keeps its wrapper and "
				   "it is not retried",
				   r);
	return NBG_OK;
}

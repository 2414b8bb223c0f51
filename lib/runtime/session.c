/*
 * session.c - one run on the board through the runtime chosen from the
 * device nodes and the library that loads, every vendor call in an
 * isolated child process (the per-backend probe of `nbg probe` is
 * probe_backend.c).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/internal.h"
#include "nbg/cpu.h"
#include "nbg/graph.h"
#include "nbg/session.h"
#include "runtime/viplite.h"

const char *nbg_rt_select_name(int s)
{
	switch (s) {
	case NBG_RT_SELECT_AUTO: return "auto";
	case NBG_RT_SELECT_NNSDK: return "nnsdk";
	case NBG_RT_SELECT_VIPLITE: return "viplite";
	case NBG_RT_SELECT_CPU: return "cpu";
	default: return NULL;
	}
}

typedef struct sess_arg {
	nbg_rt_session_options o;
	const uint8_t *model;
	size_t size;
	const nbg_rt_buffer *inputs;
	const nbg_model *m;
	size_t nout;
	size_t *out_size;
	uint32_t *out_format;
	nbg_rt_session_result seed; /* the result fields the child starts from */
} sess_arg;

/* The shared block: head, result, outputs, then the output bytes. */
typedef struct sess_shared {
	nbg_rt_shared_head head;
	nbg_rt_session_result res;
	nbg_rt_session_output outs[];
} sess_shared;

static size_t data_offset(size_t nout)
{
	size_t off = sizeof(sess_shared) + nout * sizeof(nbg_rt_session_output);
	return (off + 63) / 64 * 64;
}

/* ------------------------------------------------------------ libnnsdk */

static nbg_code nnsdk_loops(nbg_rt_graph *g, const sess_arg *a, nbg_rt_sink *sink,
			    nbg_rt_output *outs, nbg_error *err)
{
	nbg_rt_session_result *r = sink->res;
	for (unsigned long loop = 0; loop < r->info.loops; loop++) {
		double t1 = nbg_rt_now_ms();
		nbg_code rc = nbg_rt_graph_set_inputs(g, a->inputs, a->m->input_count, err);
		double t2 = nbg_rt_now_ms();
		if (rc == NBG_OK)
			rc = nbg_rt_graph_execute(g, err);
		double t3 = nbg_rt_now_ms();
		if (rc == NBG_OK)
			rc = nbg_rt_graph_retrieve(g, outs, a->nout, err);
		if (rc != NBG_OK)
			return rc;
		nbg_rt_stat_add(&r->info.input_set, t2 - t1);
		nbg_rt_stat_add(&r->info.run, t3 - t2);
		nbg_rt_stat_add(&r->info.retrieve, nbg_rt_now_ms() - t3);
		for (size_t i = 0; i < a->nout; i++) {
			nbg_rt_session_output *o = &sink->outs[i];
			if (loop == 0)
				o->stable = 1;
			else if (memcmp(o->sha256, outs[i].sha256, 32))
				o->stable = 0;
			memcpy(o->sha256, outs[i].sha256, 32);
			o->reported_size = outs[i].reported_size;
			if (loop + 1 == r->info.loops) {
				nbg_rt_crumb("copying an output of aml_module_output_get");
				memcpy(sink->dst[i], outs[i].data, o->size);
			}
		}
	}
	return NBG_OK;
}

static nbg_code nnsdk_session(const sess_arg *a, nbg_rt_sink *sink, nbg_error *err)
{
	const nbg_rt_session_options *o = &a->o;
	/* lib_path names the chosen backend's library; nnsdk_path only ever
	 * names libnnsdk's. */
	const char *lib = o->lib_path && *o->lib_path ? o->lib_path : o->nnsdk_path;
	nbg_rt_options ro = { .size = sizeof(ro), .nnsdk_path = lib,
			      .device_root = o->device_root, .flags = NBG_RT_OPEN_SKIP_PROBE,
			      .float32_outputs = (o->flags & NBG_RT_SESSION_FLOAT32_OUTPUTS) != 0,
			      .input_kind = o->input_kind };
	if (o->flags & NBG_RT_SESSION_INPUT_KIND)
		ro.flags |= NBG_RT_OPEN_INPUT_KIND;
	nbg_runtime *rt = NULL;
	nbg_rt_graph *g = NULL;
	nbg_rt_session_result *r = sink->res;
	nbg_code rc = nbg_runtime_open(&ro, &rt, err);
	if (rc != NBG_OK)
		return rc;
	snprintf(r->info.library, sizeof(r->info.library), "%s", nbg_runtime_library_path(rt));
	r->info.flush = nbg_runtime_has_flush(rt);
	r->info.input_kind = nbg_runtime_input_kind(rt);
	nbg_rt_output *outs = calloc(a->nout + 1, sizeof(*outs));
	double t0 = nbg_rt_now_ms();
	if (!outs)
		rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	if (rc == NBG_OK)
		rc = nbg_rt_graph_create(rt, a->model, a->size, &g, err);
	r->info.create_ms = nbg_rt_now_ms() - t0;
	for (size_t i = 0; rc == NBG_OK && i < a->nout; i++)
		sink->outs[i].data_format = nbg_rt_graph_output_format(g, i);
	if (rc == NBG_OK)
		rc = nnsdk_loops(g, a, sink, outs, err);
	free(outs);
	t0 = nbg_rt_now_ms();
	nbg_error de;
	nbg_code dc = nbg_rt_graph_destroy(&g, &de);
	r->info.destroy_ms = nbg_rt_now_ms() - t0;
	if (dc != NBG_OK && rc == NBG_OK) {
		rc = dc;
		if (err)
			*err = de;
	}
	nbg_runtime_close(rt);
	return rc;
}

/* ------------------------------------------------------------ selection */

static int has_symbol(const char *path, const char *sym)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int r = dl && dlsym(dl, sym) != NULL;
	return r; /* kept open: the vendor library stays mapped for the process */
}

static int pick_backend(const sess_arg *a, nbg_vip_api *api, nbg_error *err)
{
	const nbg_rt_session_options *o = &a->o;
	if (o->backend == NBG_RT_SELECT_NNSDK)
		return NBG_RT_SELECT_NNSDK;
	if (o->backend == NBG_RT_SELECT_VIPLITE)
		return nbg_vip_load(o->lib_path, api, NULL, err) == NBG_OK ? NBG_RT_SELECT_VIPLITE : -1;
	if (o->lib_path && *o->lib_path) {
		nbg_rt_crumb("dlopen(--lib)");
		if (!has_symbol(o->lib_path, "vip_init"))
			return NBG_RT_SELECT_NNSDK;
		return nbg_vip_load(o->lib_path, api, NULL, err) == NBG_OK ? NBG_RT_SELECT_VIPLITE : -1;
	}
	nbg_error ignored;
	return nbg_vip_load(NULL, api, NULL, &ignored) == NBG_OK ? NBG_RT_SELECT_VIPLITE
								 : NBG_RT_SELECT_NNSDK;
}

/* The CPU backend: the plan, then `loops` runs, the last one's outputs kept. */
static nbg_code cpu_session(const sess_arg *a, nbg_rt_sink *sink, nbg_error *err)
{
	nbg_rt_session_result *r = sink->res;
	snprintf(r->info.library, sizeof(r->info.library), "nbgkit CPU backend");
	/* the caller's plan, or one of our own */
	nbg_cpu_plan *own = NULL;
	const nbg_cpu_plan *p = a->o.cpu_plan;
	double t0 = nbg_rt_now_ms();
	nbg_code rc = p ? NBG_OK : nbg_cpu_plan_build_opts(a->model, a->size, a->o.cpu, &own, err);
	if (!p)
		p = own;
	r->info.create_ms = nbg_rt_now_ms() - t0;
	for (unsigned long loop = 0; rc == NBG_OK && loop < r->info.loops; loop++) {
		nbg_cpu_state *st = NULL;
		double t1 = nbg_rt_now_ms();
		rc = nbg_cpu_run(p, a->inputs, a->m->input_count, SIZE_MAX, &st, err);
		double t2 = nbg_rt_now_ms();
		for (size_t i = 0; rc == NBG_OK && i < a->nout; i++) {
			nbg_rt_session_output *o = &sink->outs[i];
			size_t n = 0;
			const uint8_t *d = nbg_cpu_state_buffer(st, NBG_GRAPH_SRC_OUTPUT, (int32_t)i, &n);
			if (!d || n < o->size) {
				rc = nbg_rt_fail(err, NBG_E_RUNTIME_IO_MISMATCH, (int32_t)i,
						 "output %zu has no buffer of its record's size", i);
				break;
			}
			uint8_t h[32];
			nbg_sha256(d, o->size, h);
			o->stable = loop == 0 || (o->stable && !memcmp(o->sha256, h, 32));
			memcpy(o->sha256, h, 32);
			o->reported_size = (uint32_t)o->size;
			if (loop + 1 == r->info.loops)
				memcpy(sink->dst[i], d, o->size);
		}
		nbg_cpu_state_free(st);
		if (rc == NBG_OK) {
			nbg_rt_stat_add(&r->info.run, t2 - t1);
			nbg_rt_stat_add(&r->info.retrieve, nbg_rt_now_ms() - t2);
		}
	}
	t0 = nbg_rt_now_ms();
	nbg_cpu_plan_free(own);
	r->info.destroy_ms = nbg_rt_now_ms() - t0;
	return rc;
}

static void session_child(nbg_rt_shared_head *h, void *varg)
{
	sess_arg *a = varg;
	sess_shared *sh = (sess_shared *)h;
	sh->res = a->seed;
	uint8_t *base = (uint8_t *)h + data_offset(a->nout);
	uint8_t **dst = calloc(a->nout + 1, sizeof(*dst));
	if (!dst) {
		h->rc = nbg_rt_fail(&h->err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
		h->done = 1;
		return;
	}
	for (size_t i = 0; i < a->nout; i++) {
		sh->outs[i].size = a->out_size[i];
		sh->outs[i].data_format = a->out_format[i];
		dst[i] = base;
		base += a->out_size[i];
	}
	nbg_rt_sink sink = { &sh->res, sh->outs, dst };
	nbg_vip_api api;
	memset(&api, 0, sizeof(api));
	nbg_code rc;
	int b = a->o.backend == NBG_RT_SELECT_CPU ? NBG_RT_SELECT_CPU
		: sh->res.info.probe.backend == NBG_RT_BACKEND_VIPUNIFY && a->o.backend == NBG_RT_SELECT_AUTO
			? NBG_RT_SELECT_NNSDK
			: pick_backend(a, &api, &h->err);
	sh->res.info.backend = b;
	if (b < 0) {
		rc = h->err.code;
	} else if (b == NBG_RT_SELECT_CPU) {
		rc = cpu_session(a, &sink, &h->err);
	} else if (b == NBG_RT_SELECT_NNSDK) {
		rc = nnsdk_session(a, &sink, &h->err);
	} else {
		snprintf(sh->res.info.library, sizeof(sh->res.info.library), "%s", api.path);
		nbg_rt_run_params p = { sh->res.info.loops, a->o.flags, a->o.run_timeout_ms, a->o.input_kind };
		rc = nbg_vip_session(&api, a->m, a->model, a->size, a->inputs, &p, &sink, &h->err);
	}
	free(dst);
	h->rc = rc;
	h->done = 1;
}

/* Output sizes as the chosen runtime will report them, checked before any
 * vendor call. */
static nbg_code size_outputs(sess_arg *a, nbg_error *err)
{
	int f32 = (a->o.flags & NBG_RT_SESSION_FLOAT32_OUTPUTS) != 0;
	a->out_size = calloc(a->nout + 1, sizeof(*a->out_size));
	a->out_format = calloc(a->nout + 1, sizeof(*a->out_format));
	if (!a->out_size || !a->out_format)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	for (size_t i = 0; i < a->nout; i++) {
		const nbg_io *io = nbg_model_output_at(a->m, i);
		if (!io->byte_size_known || io->byte_size > UINT32_MAX ||
		    io->element_count > UINT32_MAX / 4)
			return nbg_rt_fail(err, NBG_E_IO_SIZE_UNKNOWN, (int32_t)i,
					   "output %zu has no usable byte size (data format %u)", i,
					   io->data_format);
		/* FP32 conversion applies to libnnsdk only; VIPLite reports the record. */
		a->out_size[i] = f32 ? (size_t)io->element_count * 4 : (size_t)io->byte_size;
		a->out_format[i] = f32 ? 0 : io->data_format;
	}
	return NBG_OK;
}

static nbg_code check_probe(const nbg_rt_session_options *o, nbg_rt_probe *p, nbg_error *err)
{
	if (o->backend == NBG_RT_SELECT_CPU) { /* no device is used */
		memset(p, 0, sizeof(*p));
		p->backend = NBG_RT_BACKEND_NONE;
		return NBG_OK;
	}
	nbg_code rc = nbg_rt_probe_devices(o->device_root, p, err);
	if (rc != NBG_OK || (o->flags & NBG_RT_SESSION_SKIP_PROBE))
		return rc;
	if (!p->npu_present)
		return nbg_rt_fail(err, NBG_E_NO_DEVICE, -1,
				   "no NPU device under %s (looked for galcore, vipcore, adla0%s)",
				   p->device_root,
				   p->backend == NBG_RT_BACKEND_GPU ? "; only mali0 exists, a GPU" : "");
	if (!p->nbg_capable)
		return nbg_rt_fail(err, NBG_E_BACKEND_UNSUPPORTED, -1,
				   "%s/adla0 selects the ADLA backend, which does not run VeriSilicon "
				   "NBG files",
				   p->device_root);
	return NBG_OK;
}

static nbg_code collect(sess_shared *sh, size_t shared_size, size_t nout,
			nbg_rt_session_result **out, nbg_error *err)
{
	nbg_rt_session_result *r = malloc(sizeof(*r));
	nbg_rt_session_output *o = calloc(nout + 1, sizeof(*o));
	void **priv = malloc(2 * sizeof(void *));
	if (!r || !o || !priv) {
		free(r);
		free(o);
		free(priv);
		nbg_rt_shared_free(&sh->head, shared_size);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	*r = sh->res;
	const uint8_t *base = (const uint8_t *)sh + data_offset(nout);
	for (size_t i = 0; i < nout; i++) {
		o[i] = sh->outs[i];
		o[i].data = base;
		base += o[i].size;
	}
	r->output_count = nout;
	r->outputs = o;
	priv[0] = sh;
	priv[1] = (void *)(uintptr_t)shared_size;
	r->priv = priv;
	*out = r;
	return NBG_OK;
}

nbg_code nbg_rt_session_run(const nbg_rt_session_options *opts, const uint8_t *model, size_t size,
			    const nbg_rt_buffer *inputs, size_t count, nbg_rt_session_result **out,
			    nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (out)
		*out = NULL; /* on every failure, as the header promises */
	/* The options struct grows at its end: a caller built before nnsdk_path
	 * existed passes the smaller size, and the members past it read as zero. */
	if (!out || !opts || opts->size < offsetof(nbg_rt_session_options, nnsdk_path) || !model ||
	    (count && !inputs))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "session: NULL pointer or options size not sizeof(nbg_rt_session_options)");
	*out = NULL;
	sess_arg a;
	memset(&a, 0, sizeof(a));
	memcpy(&a.o, opts, opts->size < sizeof(a.o) ? opts->size : sizeof(a.o));
	a.o.size = sizeof(a.o);
	a.model = model;
	a.size = size;
	a.inputs = inputs;
	/* the caller's model of these bytes, or one of our own */
	const nbg_model *m = a.o.parsed;
	nbg_model *own = NULL;
	nbg_error perr;
	if (!m || m->data != model || m->file_size != size || m->integrity == NBG_INTEGRITY_FAILED) {
		if (nbg_parse(model, size, NULL, &own, &perr) != NBG_OK) {
			nbg_rt_fail(err, NBG_E_MODEL_INVALID, -1, "the NBG failed validation: %s",
				    perr.message);
			if (err)
				err->cause = perr.code;
			return NBG_E_MODEL_INVALID;
		}
		m = own;
	}
	a.m = m;
	a.nout = m->output_count;
	nbg_rt_probe probe;
	nbg_code rc = count != m->input_count
			      ? nbg_rt_fail(err, NBG_E_INPUT_COUNT_MISMATCH, -1,
					    "%zu inputs given; the NBG declares %zu", count, m->input_count)
			      : check_probe(&a.o, &probe, err);
	for (size_t i = 0; rc == NBG_OK && i < count; i++)
		if (inputs[i].size != nbg_model_input_at(m, i)->byte_size)
			rc = nbg_rt_fail(err, NBG_E_INPUT_SIZE_MISMATCH, (int32_t)i,
					 "input %zu has %zu bytes; its record needs %llu", i,
					 inputs[i].size,
					 (unsigned long long)nbg_model_input_at(m, i)->byte_size);
	if (rc == NBG_OK)
		rc = size_outputs(&a, err);
	size_t total = data_offset(a.nout);
	for (size_t i = 0; rc == NBG_OK && i < a.nout; i++)
		total += a.out_size[i];
	nbg_rt_shared_head *h = NULL;
	if (rc == NBG_OK) {
		a.seed.info.probe = probe;
		a.seed.info.loops = a.o.loops ? a.o.loops : 1;
		nbg_rt_stop stop = { a.o.stop, a.o.stop_ctx };
		rc = nbg_rt_isolate(!(a.o.flags & NBG_RT_SESSION_NO_ISOLATE), total, a.o.timeout_ms,
				    stop, session_child, &a, &h, err);
	}
	if (rc == NBG_OK && h->rc != NBG_OK) {
		rc = h->rc;
		if (err)
			*err = h->err;
	}
	if (rc == NBG_OK)
		rc = collect((sess_shared *)h, total, a.nout, out, err);
	else if (h)
		nbg_rt_shared_free(h, total);
	free(a.out_size);
	free(a.out_format);
	nbg_model_free(own);
	return rc;
}

void nbg_rt_session_free(nbg_rt_session_result *r)
{
	if (!r)
		return;
	void **priv = r->priv;
	if (priv)
		nbg_rt_shared_free(priv[0], (size_t)(uintptr_t)priv[1]);
	free(priv);
	free(r->outputs);
	free(r);
}

const nbg_rt_session_info *nbg_rt_session_info_of(const nbg_rt_session_result *r)
{
	return r ? &r->info : NULL;
}

size_t nbg_rt_session_output_count(const nbg_rt_session_result *r)
{
	return r ? r->output_count : 0;
}

const nbg_rt_session_output *nbg_rt_session_output_at(const nbg_rt_session_result *r, size_t i)
{
	return r && i < r->output_count ? &r->outputs[i] : NULL;
}

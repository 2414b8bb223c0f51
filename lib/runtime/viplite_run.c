/*
 * viplite_run.c - one VIPLite session, in vpm_run's order (doc/runtime.md):
 * init -> query hardware -> target check -> create from memory -> query
 * network -> set network -> prepare -> input buffers (query, create from
 * the NBG record, map, copy, flush, bind) -> output buffers -> run x loops
 * (profiling, invalidate, read) -> finish -> unmap and destroy buffers ->
 * destroy network -> destroy.  Teardown runs in reverse on every path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/internal.h"
#include "nbg/targets.h"
#include "runtime/viplite.h"

typedef struct vsess {
	nbg_vip_api *api;
	const nbg_model *m;
	const nbg_rt_run_params *p;
	nbg_rt_sink *sink;
	int inited, prepared;
	vip_network net;
	size_t nin, nout;
	vip_buffer *buf;  /* inputs then outputs */
	void **map;       /* their mapped addresses (NULL: not mapped) */
} vsess;

static nbg_code vfail(nbg_error *err, nbg_code code, int32_t index, const char *call,
		      vip_status s, const char *what)
{
	return nbg_rt_fail(err, code, index, "%s returned %d (%s)%s%s", call, s,
			   nbg_vip_status_name(s), what ? ": " : "", what ? what : "");
}

static nbg_code check_target(vsess *v, nbg_error *err)
{
	nbg_rt_session_result *r = v->sink->res;
	vip_status s[3];
	uint32_t cores[16] = { 0 };
	nbg_rt_crumb("vip_query_hardware");
	s[0] = v->api->query_hardware(VIP_QUERY_HW_PROP_CID, sizeof(r->info.cid), &r->info.cid);
	if (s[0] != VIP_SUCCESS)
		return vfail(err, NBG_E_QUERY_FAILED, -1, "vip_query_hardware(CID)", s[0], NULL);
	s[1] = v->api->query_hardware(VIP_QUERY_HW_PROP_DEVICE_COUNT, sizeof(r->info.device_count),
				      &r->info.device_count);
	if (s[1] != VIP_SUCCESS)
		return vfail(err, NBG_E_QUERY_FAILED, -1, "vip_query_hardware(device count)", s[1], NULL);
	uint32_t n = r->info.device_count < 16 ? r->info.device_count : 16;
	if (n) {
		s[2] = v->api->query_hardware(VIP_QUERY_HW_PROP_CORE_COUNT_EACH_DEVICE,
					      (uint32_t)(n * sizeof(uint32_t)), cores);
		if (s[2] != VIP_SUCCESS)
			return vfail(err, NBG_E_QUERY_FAILED, -1, "vip_query_hardware(cores)", s[2], NULL);
	}
	r->info.cores = cores[0];
	r->info.cid_known = 1;
	if (r->info.cid == v->m->target)
		return NBG_OK;
	if (v->p->flags & NBG_RT_SESSION_FORCE_TARGET) {
		r->info.target_forced = 1;
		return NBG_OK;
	}
	char a[200], b[200];
	return nbg_rt_fail(err, NBG_E_TARGET_MISMATCH, -1,
			   "the NBG is compiled for target %s; the device reports CID %s "
			   "(vip_query_hardware CID).  Recompile the model for this device's "
			   "target, or pass --force-target to let the driver decide",
			   nbg_target_describe(v->m->target, a, sizeof(a)),
			   nbg_target_describe(r->info.cid, b, sizeof(b)));
}

static nbg_code create_network(vsess *v, const uint8_t *model, size_t size, nbg_error *err)
{
	if (size > UINT32_MAX)
		return nbg_rt_fail(err, NBG_E_MODEL_TOO_LARGE, -1,
				   "the NBG has %zu bytes; vip_create_network takes a 32-bit size", size);
	nbg_rt_crumb("vip_create_network");
	vip_status s = v->api->create_network(model, (uint32_t)size, VIP_CREATE_NETWORK_FROM_MEMORY,
					      &v->net);
	if (s != VIP_SUCCESS) {
		v->net = NULL; /* never destroy what was not created */
		char t[200];
		return nbg_rt_fail(err, NBG_E_CREATE_FAILED, -1,
				   "vip_create_network returned %d (%s) for this NBG (version 0x%08x, "
				   "target %s); the driver's log line 'binary target=..., actually "
				   "target=...' means the model is for another device",
				   s, nbg_vip_status_name(s), v->m->version,
				   nbg_target_describe(v->m->target, t, sizeof(t)));
	}
	if (!v->net)
		return nbg_rt_fail(err, NBG_E_DESCRIPTOR_INVALID, -1,
				   "vip_create_network returned success and no network");
	uint32_t cnt[2] = { 0, 0 };
	nbg_rt_crumb("vip_query_network");
	s = v->api->query_network(v->net, VIP_NETWORK_PROP_INPUT_COUNT, &cnt[0]);
	if (s == VIP_SUCCESS)
		s = v->api->query_network(v->net, VIP_NETWORK_PROP_OUTPUT_COUNT, &cnt[1]);
	if (s != VIP_SUCCESS)
		return vfail(err, NBG_E_QUERY_FAILED, -1, "vip_query_network(input/output count)", s, NULL);
	if (cnt[0] != v->nin || cnt[1] != v->nout)
		return nbg_rt_fail(err, NBG_E_RUNTIME_IO_MISMATCH, -1,
				   "the runtime counts %u inputs and %u outputs; the NBG's records "
				   "declare %zu and %zu",
				   cnt[0], cnt[1], v->nin, v->nout);
	if (v->p->run_timeout_ms) {
		uint32_t t = v->p->run_timeout_ms;
		nbg_rt_crumb("vip_set_network(time-out)");
		s = v->api->set_network(v->net, VIP_NETWORK_PROP_SET_TIME_OUT, &t);
		if (s != VIP_SUCCESS)
			return vfail(err, NBG_E_PREPARE_FAILED, -1, "vip_set_network(time-out)", s, NULL);
	}
	nbg_rt_crumb("vip_prepare_network");
	s = v->api->prepare_network(v->net);
	if (s != VIP_SUCCESS)
		return vfail(err, NBG_E_PREPARE_FAILED, -1, "vip_prepare_network", s, NULL);
	v->prepared = 1;
	return NBG_OK;
}

/* The runtime's view of tensor k (input or output) against its NBG record. */
static nbg_code check_io(vsess *v, int out, uint32_t k, const nbg_io *io, nbg_error *err)
{
	vip_query_io_fn q = out ? v->api->query_output : v->api->query_input;
	const char *call = out ? "vip_query_output" : "vip_query_input";
	uint32_t ndim = 0, sizes[VIP_MAX_DIMENSION] = { 0 };
	int32_t fmt = -1;
	nbg_rt_crumb(call);
	vip_status s = q(v->net, k, VIP_BUFFER_PROP_NUM_OF_DIMENSION, &ndim);
	if (s == VIP_SUCCESS)
		s = q(v->net, k, VIP_BUFFER_PROP_SIZES_OF_DIMENSION, sizes);
	if (s == VIP_SUCCESS)
		s = q(v->net, k, VIP_BUFFER_PROP_DATA_FORMAT, &fmt);
	if (s != VIP_SUCCESS)
		return vfail(err, NBG_E_QUERY_FAILED, (int32_t)k, call, s, NULL);
	int same = ndim == io->dim_count && fmt == (int32_t)io->data_format;
	for (uint32_t d = 0; same && d < ndim && d < VIP_MAX_DIMENSION; d++)
		same = sizes[d] == io->dims[d];
	if (!same)
		return nbg_rt_fail(err, NBG_E_RUNTIME_IO_MISMATCH, (int32_t)k,
				   "%s %u: the runtime reports %u dimensions [%u,%u,%u,%u,...] format "
				   "%d; the NBG record has %u [%u,%u,%u,%u,...] format %u",
				   out ? "output" : "input", k, ndim, sizes[0], sizes[1], sizes[2],
				   sizes[3], fmt, io->dim_count, io->dims[0], io->dims[1], io->dims[2],
				   io->dims[3], io->data_format);
	return NBG_OK;
}

/* Creates, sizes and maps the buffer of tensor slot (inputs first). */
static nbg_code make_buffer(vsess *v, size_t slot, const nbg_io *io, int32_t idx, nbg_error *err)
{
	vip_buffer_create_params bp;
	memset(&bp, 0, sizeof(bp));
	bp.num_of_dims = io->dim_count;
	for (uint32_t d = 0; d < io->dim_count && d < VIP_MAX_DIMENSION; d++)
		bp.sizes[d] = io->dims[d];
	bp.data_format = (int32_t)io->data_format;
	bp.quant_format = (int32_t)io->quant_format;
	if (io->quant_format == NBG_QUANT_DFP) {
		bp.quant_data.fixed_point_pos = io->fixed_point_pos;
	} else if (io->quant_format == NBG_QUANT_AFFINE) {
		bp.quant_data.affine.scale = io->scale;
		bp.quant_data.affine.zero_point = io->zero_point;
	}
	nbg_rt_crumb("vip_create_buffer");
	vip_status s = v->api->create_buffer(&bp, (uint32_t)sizeof(bp), &v->buf[slot]);
	if (s != VIP_SUCCESS) {
		v->buf[slot] = NULL;
		return vfail(err, NBG_E_BUFFER_FAILED, idx, "vip_create_buffer", s, NULL);
	}
	if (!v->buf[slot])
		return nbg_rt_fail(err, NBG_E_BUFFER_FAILED, idx,
				   "vip_create_buffer returned success and no buffer");
	nbg_rt_crumb("vip_get_buffer_size");
	uint32_t have = v->api->get_buffer_size(v->buf[slot]);
	if (have < io->byte_size)
		return nbg_rt_fail(err, NBG_E_BUFFER_FAILED, idx,
				   "vip_get_buffer_size says %u bytes; the NBG record needs %llu", have,
				   (unsigned long long)io->byte_size);
	if (slot >= v->nin)
		v->sink->outs[slot - v->nin].reported_size = have;
	nbg_rt_crumb("vip_map_buffer");
	void *p = v->api->map_buffer(v->buf[slot]);
	if (!p)
		return nbg_rt_fail(err, NBG_E_BUFFER_FAILED, idx, "vip_map_buffer returned NULL");
	v->map[slot] = p;
	if (!nbg_rt_plausible(p, (size_t)io->byte_size, 1))
		return nbg_rt_fail(err, NBG_E_DESCRIPTOR_INVALID, idx,
				   "vip_map_buffer returned %p, which cannot be a buffer of %llu bytes",
				   p, (unsigned long long)io->byte_size);
	return NBG_OK;
}

static nbg_code bind_buffers(vsess *v, const nbg_rt_buffer *inputs, nbg_error *err)
{
	nbg_code rc;
	for (size_t i = 0; i < v->nin; i++) {
		const nbg_io *io = nbg_model_input_at(v->m, i);
		if ((rc = check_io(v, 0, (uint32_t)i, io, err)) != NBG_OK ||
		    (rc = make_buffer(v, i, io, (int32_t)i, err)) != NBG_OK)
			return rc;
		nbg_rt_crumb("copying an input into the mapped VIPLite buffer");
		if (inputs[i].size)
			memcpy(v->map[i], inputs[i].data, inputs[i].size);
		nbg_rt_crumb("vip_flush_buffer(flush)");
		vip_status s = v->api->flush_buffer(v->buf[i], VIP_BUFFER_OPER_TYPE_FLUSH);
		if (s != VIP_SUCCESS)
			return vfail(err, NBG_E_BUFFER_FAILED, (int32_t)i, "vip_flush_buffer(flush)", s, NULL);
		nbg_rt_crumb("vip_set_input");
		if ((s = v->api->set_input(v->net, (uint32_t)i, v->buf[i])) != VIP_SUCCESS)
			return vfail(err, NBG_E_BUFFER_FAILED, (int32_t)i, "vip_set_input", s, NULL);
	}
	for (size_t i = 0; i < v->nout; i++) {
		const nbg_io *io = nbg_model_output_at(v->m, i);
		if ((rc = check_io(v, 1, (uint32_t)i, io, err)) != NBG_OK ||
		    (rc = make_buffer(v, v->nin + i, io, (int32_t)i, err)) != NBG_OK)
			return rc;
		nbg_rt_crumb("vip_set_output");
		vip_status s = v->api->set_output(v->net, (uint32_t)i, v->buf[v->nin + i]);
		if (s != VIP_SUCCESS)
			return vfail(err, NBG_E_BUFFER_FAILED, (int32_t)i, "vip_set_output", s, NULL);
	}
	return NBG_OK;
}

static nbg_code read_outputs(vsess *v, unsigned long loop, nbg_error *err)
{
	for (size_t i = 0; i < v->nout; i++) {
		nbg_rt_session_output *o = &v->sink->outs[i];
		nbg_rt_crumb("vip_flush_buffer(invalidate)");
		vip_status s = v->api->flush_buffer(v->buf[v->nin + i], VIP_BUFFER_OPER_TYPE_INVALIDATE);
		if (s != VIP_SUCCESS)
			return vfail(err, NBG_E_RUN_FAILED, (int32_t)i, "vip_flush_buffer(invalidate)", s,
				     "the outputs cannot be read back");
		nbg_rt_crumb("reading a mapped VIPLite output buffer");
		memcpy(v->sink->dst[i], v->map[v->nin + i], o->size);
		uint8_t d[32];
		nbg_sha256(v->sink->dst[i], o->size, d);
		if (loop == 0)
			o->stable = 1;
		else if (memcmp(d, o->sha256, 32) != 0)
			o->stable = 0;
		memcpy(o->sha256, d, 32);
	}
	return NBG_OK;
}

static nbg_code run_loops(vsess *v, nbg_error *err)
{
	nbg_rt_session_result *r = v->sink->res;
	r->info.profile_known = 1;
	for (unsigned long loop = 0; loop < v->p->loops; loop++) {
		double t0 = nbg_rt_now_ms();
		nbg_rt_crumb("vip_run_network");
		vip_status s = v->api->run_network(v->net);
		double t1 = nbg_rt_now_ms();
		if (s == VIP_ERROR_TIMEOUT)
			return vfail(err, NBG_E_RUN_TIMEOUT, -1, "vip_run_network", s,
				     "the NPU did not finish the network in time");
		if (s != VIP_SUCCESS)
			return vfail(err, NBG_E_RUN_FAILED, -1, "vip_run_network", s, NULL);
		vip_inference_profile prof = { 0, 0 };
		nbg_rt_crumb("vip_query_network(profiling)");
		if (v->api->query_network(v->net, VIP_NETWORK_PROP_PROFILING, &prof) == VIP_SUCCESS) {
			nbg_rt_stat_add(&r->info.inference_us, prof.inference_time);
			nbg_rt_stat_add(&r->info.cycles, prof.total_cycle);
		} else {
			r->info.profile_known = 0; /* reported as unavailable, not a failure */
		}
		nbg_code rc = read_outputs(v, loop, err);
		if (rc != NBG_OK)
			return rc;
		nbg_rt_stat_add(&r->info.run, t1 - t0);
		nbg_rt_stat_add(&r->info.retrieve, nbg_rt_now_ms() - t1);
	}
	return NBG_OK;
}

/* Reverse order, every step whatever happened before; the first failure is
 * reported when the session itself succeeded. */
static nbg_code teardown(vsess *v, nbg_code rc, nbg_error *err)
{
	vip_status s;
	double t0 = nbg_rt_now_ms();
	if (v->prepared) {
		nbg_rt_crumb("vip_finish_network");
		if ((s = v->api->finish_network(v->net)) != VIP_SUCCESS && rc == NBG_OK)
			rc = vfail(err, NBG_E_DESTROY_FAILED, -1, "vip_finish_network", s, NULL);
	}
	for (size_t k = v->nin + v->nout; v->buf && v->map && k-- > 0;) {
		if (v->map[k]) {
			nbg_rt_crumb("vip_unmap_buffer");
			if ((s = v->api->unmap_buffer(v->buf[k])) != VIP_SUCCESS && rc == NBG_OK)
				rc = vfail(err, NBG_E_DESTROY_FAILED, -1, "vip_unmap_buffer", s, NULL);
		}
		if (v->buf[k]) {
			nbg_rt_crumb("vip_destroy_buffer");
			if ((s = v->api->destroy_buffer(v->buf[k])) != VIP_SUCCESS && rc == NBG_OK)
				rc = vfail(err, NBG_E_DESTROY_FAILED, -1, "vip_destroy_buffer", s, NULL);
		}
	}
	if (v->net) {
		nbg_rt_crumb("vip_destroy_network");
		if ((s = v->api->destroy_network(v->net)) != VIP_SUCCESS && rc == NBG_OK)
			rc = vfail(err, NBG_E_DESTROY_FAILED, -1, "vip_destroy_network", s, NULL);
	}
	if (v->inited) {
		nbg_rt_crumb("vip_destroy");
		if ((s = v->api->destroy()) != VIP_SUCCESS && rc == NBG_OK)
			rc = vfail(err, NBG_E_DESTROY_FAILED, -1, "vip_destroy", s, NULL);
	}
	v->sink->res->info.destroy_ms = nbg_rt_now_ms() - t0;
	free(v->buf);
	free(v->map);
	return rc;
}

nbg_code nbg_vip_session(nbg_vip_api *api, const nbg_model *m, const uint8_t *model, size_t size,
			 const nbg_rt_buffer *inputs, const nbg_rt_run_params *p, nbg_rt_sink *sink,
			 nbg_error *err)
{
	vsess v;
	memset(&v, 0, sizeof(v));
	v.api = api;
	v.m = m;
	v.p = p;
	v.sink = sink;
	v.nin = m->input_count;
	v.nout = m->output_count;
	nbg_rt_session_result *r = sink->res;
	nbg_rt_crumb("vip_get_version");
	r->info.version_word = api->get_version();
	r->info.has_version = 1;
	v.buf = calloc(v.nin + v.nout + 1, sizeof(*v.buf));
	v.map = calloc(v.nin + v.nout + 1, sizeof(*v.map));
	if (!v.buf || !v.map)
		return teardown(&v, nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory"), err);
	nbg_rt_crumb("vip_init");
	vip_status s = api->init();
	if (s != VIP_SUCCESS)
		return teardown(&v, vfail(err, NBG_E_INIT_FAILED, -1, "vip_init", s,
					  s == VIP_ERROR_IO ? "the device node /dev/vipcore cannot be "
							      "opened (driver loaded? permissions?)"
							    : NULL),
				err);
	v.inited = 1;
	double t0 = nbg_rt_now_ms();
	nbg_code rc = check_target(&v, err);
	if (rc == NBG_OK)
		rc = create_network(&v, model, size, err);
	if (rc == NBG_OK)
		rc = bind_buffers(&v, inputs, err);
	r->info.create_ms = nbg_rt_now_ms() - t0;
	if (rc == NBG_OK)
		rc = run_loops(&v, err);
	return teardown(&v, rc, err);
}

/*
 * run_summary.c - summary.json of `nbg run`: the model, the runtime and
 * the target check, the inputs, the outputs, the timings, the goldens.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

static json_t *json_hex32(const uint8_t d[32])
{
	char h[65];
	nbg_hex32(d, h);
	return json_string(h);
}

static json_t *json_hex_u32(uint32_t v)
{
	char b[16];
	snprintf(b, sizeof(b), "0x%08x", v);
	return json_string(b);
}

/* Names come from the model file and paths from the command line: neither is
 * guaranteed UTF-8, and json_string() rejects what is not. */
static json_t *json_text(const char *s)
{
	char *e = nbg_text_escape(s, SIZE_MAX);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

static json_t *json_shape(const nbg_io *io)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < io->dim_count; i++)
		json_array_append_new(a, json_integer(nbg_io_dim_outer(io, i)));
	return a;
}

static json_t *rstat_json(const nbg_rt_stat *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "first", json_real(st->first));
	json_object_set_new(o, "min", json_real(st->min));
	json_object_set_new(o, "mean", json_real(st->n ? st->sum / (double)st->n : 0));
	json_object_set_new(o, "max", json_real(st->max));
	return o;
}

static json_t *runtime_json(const run_state *s)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	char t[200];
	json_t *jr = json_object();
	json_object_set_new(jr, "backend_selected", json_string(nbg_rt_select_name(r->backend)));
	json_object_set_new(jr, "library", cli_json_path(r->library));
	json_object_set_new(jr, "device_root", cli_json_path(r->probe.device_root));
	json_object_set_new(jr, "backend", json_integer(r->probe.backend));
	json_object_set_new(jr, "backend_name", json_string(nbg_rt_backend_name(r->probe.backend)));
	if (r->backend == NBG_RT_SELECT_NNSDK) {
		json_object_set_new(jr, "flush", json_boolean(r->flush));
		json_object_set_new(jr, "output_format", json_string(s->a.float32_outputs ? "float32" : "raw"));
		json_object_set_new(jr, "input_kind", json_integer(r->input_kind));
	}
	if (r->has_version)
		json_object_set_new(jr, "version", json_hex_u32(r->version_word));
	json_t *jt = json_object();
	json_object_set_new(jt, "model", json_string(nbg_target_describe(nbg_model_target(s->m), t, sizeof(t))));
	json_object_set_new(jt, "device_cid", r->cid_known ? json_string(nbg_target_describe(r->cid, t, sizeof(t)))
							  : json_null());
	json_object_set_new(jt, "checked", json_boolean(r->cid_known));
	json_object_set_new(jt, "forced", json_boolean(r->target_forced));
	json_object_set_new(jr, "target_check", jt);
	run_cpu_json(s, jr);
	return jr;
}

static json_t *outputs_json(const run_state *s)
{
	json_t *jo = json_array();
	for (size_t i = 0; i < s->n_out; i++) {
		const nbg_rt_session_output *op = nbg_rt_session_output_at(s->res, i);
		const nbg_io *io = nbg_model_output_at(s->m, i);
		json_t *x = json_object();
		const char *final = s->staged[s->raw_staged[i]].final, *slash = strrchr(final, '/');
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		if (io->has_name)
			json_object_set_new(x, "name", json_text(io->name));
		json_object_set_new(x, "file", cli_json_path(slash ? slash + 1 : final));
		if (s->out_f[i]) {
			char n[64];
			snprintf(n, sizeof(n), "output_%zu.npy", i);
			json_object_set_new(x, "npy", json_string(n));
		}
		json_object_set_new(x, "shape", json_shape(io));
		json_object_set_new(x, "format", json_string(run_format_name(op->data_format)));
		json_object_set_new(x, "bytes", json_integer((json_int_t)op->size));
		json_object_set_new(x, "reported_bytes", json_integer(op->reported_size));
		json_object_set_new(x, "sha256", json_hex32(op->sha256));
		json_object_set_new(x, "stable_across_loops", json_boolean(op->stable));
		json_array_append_new(jo, x);
	}
	return jo;
}

/* summary.json: model, runtime, inputs, outputs, timings, goldens. */
json_t *run_summary_json(const run_state *s)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	json_t *summary = json_object();
	json_object_set_new(summary, "nbgkit_version", json_string(nbg_version_string()));
	json_t *jm = json_object();
	json_object_set_new(jm, "path", cli_json_path(s->a.model));
	json_object_set_new(jm, "bytes", json_integer((json_int_t)s->model.map.size));
	json_object_set_new(jm, "sha256", json_hex32(nbg_model_file_sha256(s->m)));
	json_object_set_new(jm, "version", json_hex_u32(nbg_model_version(s->m)));
	json_object_set_new(jm, "target", json_hex_u32(nbg_model_target(s->m)));
	json_object_set_new(summary, "model", jm);
	json_object_set_new(summary, "runtime", runtime_json(s));
	json_object_set_new(summary, "loops", json_integer((json_int_t)r->loops));
	json_t *ji = json_array();
	for (size_t i = 0; i < s->n_in; i++) {
		uint8_t d[32];
		const nbg_io *io = nbg_model_input_at(s->m, i);
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		json_object_set_new(x, "file", cli_json_path(s->a.inputs[i]));
		json_t *image = run_image_json(io, &s->a, s->a.inputs[i]);
		int ik = run_image_kind(s->a.inputs[i]);
		const char *kind = ik == RUN_IMAGE_PNG ? "png" : ik == RUN_IMAGE_JPEG ? "jpeg"
				 : nbg_tensor_kind_name(nbg_tensor_kind_of(s->a.inputs[i]));
		json_object_set_new(x, "file_kind", json_string(kind));
		if (image)
			json_object_set_new(x, "image", image);
		json_object_set_new(x, "shape", json_shape(io));
		json_object_set_new(x, "format", json_string(run_format_name(io->data_format)));
		json_object_set_new(x, "bytes", json_integer((json_int_t)s->bufs[i].size));
		nbg_sha256_bytes(s->bufs[i].data, s->bufs[i].size, d);
		json_object_set_new(x, "sha256", json_hex32(d));
		json_array_append_new(ji, x);
	}
	json_object_set_new(summary, "inputs", ji);
	json_object_set_new(summary, "outputs", outputs_json(s));
	json_t *jt = json_object();
	json_object_set_new(jt, "create", json_real(r->create_ms));
	if (r->backend == NBG_RT_SELECT_NNSDK)
		json_object_set_new(jt, "input_set", rstat_json(&r->input_set));
	json_object_set_new(jt, "run", rstat_json(&r->run));
	json_object_set_new(jt, "retrieve", rstat_json(&r->retrieve));
	json_object_set_new(jt, "destroy", json_real(r->destroy_ms));
	json_object_set_new(summary, "timings_ms", jt);
	if (r->profile_known) {
		json_t *jp = json_object();
		json_object_set_new(jp, "inference_time_us", rstat_json(&r->inference_us));
		json_object_set_new(jp, "total_cycles", rstat_json(&r->cycles));
		json_object_set_new(summary, "profile", jp);
	}
	if (s->a.golden_count)
		json_object_set_new(summary, "golden", run_golden_json(s));
	json_object_set_new(summary, "result", json_string(s->golden_ok ? "ok" : "golden-mismatch"));
	return summary;
}

/*
 * probe_json.c - `nbg probe --json`: the machine probe as one document.
 * Paths and vendor messages go through nbg_json_str, so a path that is not
 * UTF-8 keeps its bytes as \xNN escapes instead of vanishing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/internal.h"
#include "common/json.h"
#include "nbg/session.h"
#include "nbg/targets.h"

static json_t *hex32(uint32_t v)
{
	char b[16];
	snprintf(b, sizeof(b), "0x%08x", v);
	return json_string(b);
}

static json_t *nodes_json(const nbg_rt_probe *p)
{
	json_t *nodes = json_array();
	for (int i = 0; i < NBG_RT_PROBE_NODES; i++) {
		const nbg_rt_probe_node *n = &p->nodes[i];
		json_t *jn = json_object();
		json_object_set_new(jn, "name", json_string(n->name));
		json_object_set_new(jn, "path", nbg_json_path(n->path));
		json_object_set_new(jn, "present", json_boolean(n->present));
		json_object_set_new(jn, "char_device", json_boolean(n->is_char_device));
		json_object_set_new(jn, "backend", json_integer(n->backend));
		json_object_set_new(jn, "backend_name", json_string(nbg_rt_backend_name(n->backend)));
		json_array_append_new(nodes, jn);
	}
	return nodes;
}

/* VIPLite only: version, vip_init, hardware (null where not reached). */
static void vip_json(json_t *o, const nbg_rt_backend_report *r)
{
	char t[200];
	json_t *v = json_null(), *init = json_null(), *hw = json_null();
	if (r->has_version) {
		snprintf(t, sizeof(t), "%u.%u.%u", r->version_major, r->version_minor,
			 r->version_patch);
		v = json_pack("{s:o,s:s}", "word", hex32(r->version_word), "decoded", t);
	}
	if (r->init_called)
		init = json_pack("{s:i,s:s}", "status", (int)r->init_status, "status_name",
				 nbg_vip_status_name(r->init_status));
	if (r->hw_known)
		hw = json_pack("{s:o,s:s,s:I,s:I}", "cid", hex32(r->cid), "cid_target",
			       nbg_target_describe(r->cid, t, sizeof(t)), "device_count",
			       (json_int_t)r->device_count, "cores", (json_int_t)r->cores);
	json_object_set_new(o, "version", v ? v : json_null());
	json_object_set_new(o, "init", init ? init : json_null());
	json_object_set_new(o, "hardware", hw ? hw : json_null());
}

static json_t *report_json(const nbg_rt_backend_report *r, const char *generation, int selected)
{
	json_t *o = json_object();
	json_object_set_new(o, "backend", json_string(nbg_rt_select_name(r->backend)));
	json_object_set_new(o, "generation", json_string(generation ? generation : ""));
	json_object_set_new(o, "library", nbg_json_path(r->library));
	json_object_set_new(o, "found", json_boolean(r->library_found));
	json_t *sym = json_object();
	json_object_set_new(sym, "wanted", json_integer(r->symbols_wanted));
	json_object_set_new(sym, "resolved", json_integer(r->symbols_resolved));
	json_object_set_new(sym, "missing", r->symbol_missing[0] ? nbg_json_str(r->symbol_missing)
								  : json_null());
	json_object_set_new(o, "symbols", sym);
	if (r->backend == NBG_RT_SELECT_NNSDK)
		json_object_set_new(o, "flush", json_boolean(r->has_flush));
	else
		vip_json(o, r);
	json_object_set_new(o, "code", json_string(nbg_code_name(r->code)));
	json_object_set_new(o, "message", nbg_json_str(r->message));
	json_object_set_new(o, "usable", json_boolean(r->code == NBG_OK));
	json_object_set_new(o, "selected", json_boolean(selected));
	return o;
}

char *nbg_rt_machine_json(const nbg_rt_machine *m)
{
	if (!m)
		return NULL;
	const nbg_rt_probe *p = &m->devices;
	json_t *doc = json_object();
	json_object_set_new(doc, "device_root", nbg_json_path(p->device_root));
	json_object_set_new(doc, "nodes", nodes_json(p));
	json_object_set_new(doc, "backend", json_integer(p->backend));
	json_object_set_new(doc, "backend_name", json_string(nbg_rt_backend_name(p->backend)));
	json_object_set_new(doc, "npu_present", json_boolean(p->npu_present));
	json_object_set_new(doc, "nbg_capable", json_boolean(p->nbg_capable));
	json_t *reps = json_array();
	for (size_t i = 0; i < m->report_count && i < NBG_RT_MACHINE_REPORTS; i++)
		json_array_append_new(reps, report_json(&m->reports[i], m->generation[i],
							(int)i == m->selected));
	json_object_set_new(doc, "backends", reps);
	json_t *sel = json_null();
	if (m->selected >= 0 && (size_t)m->selected < m->report_count) {
		const nbg_rt_backend_report *r = &m->reports[m->selected];
		sel = json_object();
		json_object_set_new(sel, "backend", json_string(nbg_rt_select_name(r->backend)));
		json_object_set_new(sel, "library", nbg_json_path(r->library));
	}
	json_object_set_new(doc, "selected", sel);
	json_object_set_new(doc, "ready", json_boolean(m->ready));
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = 0;
	return t;
}

/*
 * probe_backend.c - what `nbg probe` reports per backend: library found,
 * entry points resolved, and for VIPLite the version word, vip_init's
 * status, device count, cores and CID.  Runs isolated like a session.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/session.h"
#include "runtime/viplite.h"

typedef struct probe_shared {
	nbg_rt_shared_head head;
	nbg_rt_backend_report rep;
} probe_shared;

typedef struct probe_arg {
	int backend;
	const char *lib;
} probe_arg;

static void probe_nnsdk(const char *lib, nbg_rt_backend_report *rep)
{
	static const char *const names[] = { "aml_module_create", "aml_module_input_set",
					     "aml_module_output_get", "aml_module_destroy" };
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = lib, .flags = NBG_RT_OPEN_SKIP_PROBE };
	nbg_runtime *rt = NULL;
	nbg_error e;
	rep->symbols_wanted = 4;
	rep->code = nbg_runtime_open(&o, &rt, &e);
	if (rep->code != NBG_OK)
		snprintf(rep->message, sizeof(rep->message), "%s", e.message);
	const char *path = lib && *lib ? lib : nbg_rt_env("NBG_NNSDK_PATH");
	snprintf(rep->library, sizeof(rep->library), "%s", path ? path : "libnnsdk.so");
	rep->has_flush = nbg_runtime_has_flush(rt);
	nbg_rt_crumb("dlopen(libnnsdk)");
	void *dl = rep->code == NBG_E_ABI_UNSUPPORTED ? NULL : dlopen(rep->library, RTLD_NOW | RTLD_LOCAL);
	rep->library_found = dl != NULL;
	for (size_t i = 0; dl && i < 4; i++) {
		if (dlsym(dl, names[i]))
			rep->symbols_resolved++;
		else if (!rep->symbol_missing[0])
			snprintf(rep->symbol_missing, sizeof(rep->symbol_missing), "%s", names[i]);
	}
	nbg_runtime_close(rt);
}

static void probe_child(nbg_rt_shared_head *h, void *varg)
{
	probe_arg *a = varg;
	nbg_rt_backend_report *rep = &((probe_shared *)h)->rep;
	rep->backend = a->backend;
	if (a->backend == NBG_RT_SELECT_NNSDK) {
		probe_nnsdk(a->lib, rep);
	} else {
		nbg_vip_api api;
		nbg_error e;
		rep->code = nbg_vip_load(a->lib, &api, rep, &e);
		if (rep->code != NBG_OK)
			snprintf(rep->message, sizeof(rep->message), "%s", e.message);
		else
			nbg_vip_probe(&api, rep);
	}
	h->rc = NBG_OK;
	h->done = 1;
}

nbg_code nbg_rt_backend_probe(int backend, const char *lib_path, unsigned flags,
			      nbg_rt_backend_report *out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out || (backend != NBG_RT_SELECT_NNSDK && backend != NBG_RT_SELECT_VIPLITE))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "probe: no report given or backend is not nnsdk or viplite");
	memset(out, 0, sizeof(*out));
	probe_arg a = { backend, lib_path };
	nbg_rt_shared_head *h = NULL;
	nbg_error ie;
	nbg_rt_stop never = { NULL, NULL };
	nbg_code rc = nbg_rt_isolate(!(flags & NBG_RT_SESSION_NO_ISOLATE), sizeof(probe_shared), 60000,
				     never, probe_child, &a, &h, &ie);
	if (rc == NBG_OK) {
		*out = ((probe_shared *)h)->rep;
	} else {
		if (h)
			*out = ((probe_shared *)h)->rep; /* as far as it got */
		out->backend = backend;
		out->code = rc;
		snprintf(out->message, sizeof(out->message), "%s", ie.message);
	}
	nbg_rt_shared_free(h, sizeof(probe_shared));
	return NBG_OK;
}

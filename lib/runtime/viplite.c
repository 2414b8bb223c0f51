/*
 * viplite.c - the VIPLite backend: dlopen libVIPlite.so (1.x) or
 * libNBGlinker.so (2.x) and drive the lifecycle of vpm_run: init, query
 * hardware, target check, create from memory, query, prepare, buffers from
 * the NBG's own I/O records, flush, run (profiling), invalidate, read,
 * finish, destroy in reverse order on every path.  Every status is checked
 * before the next call.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hash.h"
#include "common/internal.h"
#include "nbg/targets.h"
#include "runtime/viplite.h"

const char *nbg_vip_status_name(int32_t s)
{
	static const char *const names[] = {
		"VIP_SUCCESS", "VIP_ERROR_TIMEOUT", "VIP_ERROR_IO", "VIP_ERROR_INVALID_ARGUMENTS",
		"VIP_ERROR_NOT_SUPPORTED", "VIP_ERROR_OUT_OF_RESOURCE", "VIP_ERROR_OUT_OF_MEMORY",
		"VIP_ERROR_INVALID_NETWORK", "VIP_ERROR_MISSING_INPUT_OUTPUT",
		"VIP_ERROR_NETWORK_NOT_PREPARED", "VIP_ERROR_NETWORK_INCOMPATIBLE", "VIP_ERROR_FAILURE",
		"VIP_ERROR_POWER_OFF", "VIP_ERROR_POWER_STOP", "VIP_ERROR_RECOVERY",
		"VIP_ERROR_CANCELED", "VIP_ERROR_NAN_INF", "VIP_ERROR_FUSA",
	};
	return s <= 0 && s >= -17 ? names[-s] : "unknown status";
}

void nbg_rt_version_decode(uint32_t w, unsigned *major, unsigned *minor, unsigned *patch)
{
	if (major)
		*major = (w >> 16) & 0xffu;
	if (minor)
		*minor = (w >> 8) & 0xffu;
	if (patch)
		*patch = w & 0xffu;
}

double nbg_rt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void nbg_rt_stat_add(nbg_rt_stat *s, double v)
{
	if (s->n == 0)
		s->first = s->min = s->max = v;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->sum += v;
	s->n++;
}

/* ------------------------------------------------------------ loading */

#define SLOT(name, field) { name, offsetof(nbg_vip_api, field), sizeof(((nbg_vip_api *)0)->field) }
static const struct { const char *name; size_t off, size; } vip_symbols[] = {
	SLOT("vip_get_version", get_version), SLOT("vip_init", init),
	SLOT("vip_destroy", destroy), SLOT("vip_query_hardware", query_hardware),
	SLOT("vip_create_network", create_network), SLOT("vip_query_network", query_network),
	SLOT("vip_set_network", set_network), SLOT("vip_prepare_network", prepare_network),
	SLOT("vip_run_network", run_network), SLOT("vip_finish_network", finish_network),
	SLOT("vip_destroy_network", destroy_network), SLOT("vip_query_input", query_input),
	SLOT("vip_query_output", query_output), SLOT("vip_create_buffer", create_buffer),
	SLOT("vip_destroy_buffer", destroy_buffer), SLOT("vip_unmap_buffer", unmap_buffer),
	SLOT("vip_map_buffer", map_buffer), SLOT("vip_get_buffer_size", get_buffer_size),
	SLOT("vip_flush_buffer", flush_buffer), SLOT("vip_set_input", set_input),
	SLOT("vip_set_output", set_output),
};
#undef SLOT
#define N_VIP_SYMBOLS (sizeof(vip_symbols) / sizeof(vip_symbols[0]))

static void *try_open(const char *path, char *why, size_t n)
{
	nbg_rt_crumb("dlopen(VIPLite)");
	dlerror();
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		const char *e = dlerror();
		size_t len = strlen(why);
		snprintf(why + len, n - len, "%s%s", len ? "; " : "", e ? e : path);
	}
	return dl;
}

nbg_code nbg_vip_load(const char *path, nbg_vip_api *api, nbg_rt_backend_report *rep,
		      nbg_error *err)
{
	memset(api, 0, sizeof(*api));
	const char *p = path && *path ? path : nbg_rt_env("NBG_VIPLITE_PATH");
	static const char *const defaults[] = { "libNBGlinker.so", "libVIPlite.so" };
	char why[400] = "";
	if (p) {
		if (strlen(p) >= sizeof(api->path))
			return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "VIPLite path is too long");
		snprintf(api->path, sizeof(api->path), "%s", p);
		api->dl = try_open(p, why, sizeof(why));
	} else {
		for (size_t i = 0; i < 2 && !api->dl; i++) {
			snprintf(api->path, sizeof(api->path), "%s", defaults[i]);
			api->dl = try_open(defaults[i], why, sizeof(why));
		}
		if (!api->dl)
			snprintf(api->path, sizeof(api->path), "libNBGlinker.so or libVIPlite.so");
	}
	if (rep) {
		snprintf(rep->library, sizeof(rep->library), "%s", api->path);
		rep->library_found = api->dl != NULL;
		rep->symbols_wanted = (unsigned)N_VIP_SYMBOLS;
	}
	if (!api->dl)
		return nbg_rt_fail(err, NBG_E_LIBRARY_MISSING, -1, "cannot load VIPLite (%s): %s",
				   api->path, why);
	for (size_t i = 0; i < N_VIP_SYMBOLS; i++) {
		dlerror();
		void *sym = dlsym(api->dl, vip_symbols[i].name);
		if (!sym) {
			if (rep)
				snprintf(rep->symbol_missing, sizeof(rep->symbol_missing), "%s",
					 vip_symbols[i].name);
			nbg_code rc = nbg_rt_fail(err, NBG_E_SYMBOL_MISSING, -1, "%s has no symbol %s",
						  api->path, vip_symbols[i].name);
			nbg_vip_unload(api);
			return rc;
		}
		memcpy((char *)api + vip_symbols[i].off, &sym, vip_symbols[i].size);
		if (rep)
			rep->symbols_resolved++;
	}
	return NBG_OK;
}

void nbg_vip_unload(nbg_vip_api *api)
{
	/* The vendor keeps process-wide state and threads: never unmapped. */
	api->dl = NULL;
}

void nbg_vip_probe(nbg_vip_api *api, nbg_rt_backend_report *rep)
{
	nbg_rt_crumb("vip_get_version");
	rep->version_word = api->get_version();
	rep->has_version = 1;
	nbg_rt_version_decode(rep->version_word, &rep->version_major, &rep->version_minor,
			      &rep->version_patch);
	nbg_rt_crumb("vip_init");
	rep->init_called = 1;
	rep->init_status = api->init();
	if (rep->init_status != VIP_SUCCESS) {
		rep->code = NBG_E_INIT_FAILED;
		snprintf(rep->message, sizeof(rep->message), "vip_init returned %d (%s)%s",
			 rep->init_status, nbg_vip_status_name(rep->init_status),
			 rep->init_status == VIP_ERROR_IO ? ": /dev/vipcore cannot be opened" : "");
		return;
	}
	vip_status s[3];
	uint32_t cores[16] = { 0 };
	nbg_rt_crumb("vip_query_hardware");
	s[0] = api->query_hardware(VIP_QUERY_HW_PROP_CID, sizeof(rep->cid), &rep->cid);
	s[1] = api->query_hardware(VIP_QUERY_HW_PROP_DEVICE_COUNT, sizeof(rep->device_count),
				   &rep->device_count);
	uint32_t n = rep->device_count < 16 ? rep->device_count : 16;
	s[2] = s[1] == VIP_SUCCESS && n
		       ? api->query_hardware(VIP_QUERY_HW_PROP_CORE_COUNT_EACH_DEVICE,
					     (uint32_t)(n * sizeof(uint32_t)), cores)
		       : VIP_SUCCESS;
	rep->cores = cores[0];
	rep->hw_known = s[0] == VIP_SUCCESS && s[1] == VIP_SUCCESS && s[2] == VIP_SUCCESS;
	if (!rep->hw_known) {
		rep->code = NBG_E_QUERY_FAILED;
		snprintf(rep->message, sizeof(rep->message),
			 "vip_query_hardware returned %d/%d/%d (CID, devices, cores)", s[0], s[1], s[2]);
	}
	nbg_rt_crumb("vip_destroy");
	vip_status d = api->destroy();
	if (d != VIP_SUCCESS && rep->code == NBG_OK) {
		rep->code = NBG_E_DESTROY_FAILED;
		snprintf(rep->message, sizeof(rep->message), "vip_destroy returned %d (%s)", d,
			 nbg_vip_status_name(d));
	}
}

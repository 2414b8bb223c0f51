/*
 * probe_machine.c - everything `nbg probe` reports: the device nodes, one
 * report per backend (libnnsdk, VIPLite 2.x and 1.x), and the backend a
 * session with NBG_RT_SELECT_AUTO would choose, by the same rule.
 */
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/session.h"
#include "runtime/runtime_internal.h"

/* What a session's VIPLite loader needs: the library and every entry point. */
static int vip_loads(const nbg_rt_backend_report *r)
{
	return r->backend == NBG_RT_SELECT_VIPLITE && r->library_found &&
	       r->symbols_wanted && r->symbols_resolved == r->symbols_wanted;
}

/* The session's selection for NBG_RT_SELECT_AUTO (session.c pick_backend):
 * the VIPLite loader takes the first default library that dlopen() finds,
 * and falls back to libnnsdk when that one lacks an entry point. */
static int select_report(const nbg_rt_machine *m)
{
	if (!m->devices.nbg_capable)
		return -1;
	if (m->devices.backend == NBG_RT_BACKEND_VIPLITE)
		for (size_t i = 1; i < m->report_count; i++)
			if (m->reports[i].library_found)
				return vip_loads(&m->reports[i]) ? (int)i : 0;
	return 0;
}

nbg_code nbg_rt_machine_probe(const char *device_root, const char *nnsdk_path,
			      const char *viplite_path, unsigned flags, nbg_rt_machine *out,
			      nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "probe: no result struct given");
	memset(out, 0, sizeof(*out));
	out->selected = -1;
	nbg_code rc = nbg_rt_probe_devices(device_root, &out->devices, err);
	if (rc != NBG_OK)
		return rc;

	const char *vip = viplite_path && *viplite_path ? viplite_path : nbg_rt_env("NBG_VIPLITE_PATH");
	struct {
		int backend;
		const char *lib, *generation;
	} plan[NBG_RT_MACHINE_REPORTS] = {
		{ NBG_RT_SELECT_NNSDK, nnsdk_path, "libnnsdk" },
		{ NBG_RT_SELECT_VIPLITE, "libNBGlinker.so", "VIPLite 2.x" },
		{ NBG_RT_SELECT_VIPLITE, "libVIPlite.so", "VIPLite 1.x" },
	};
	size_t n = NBG_RT_MACHINE_REPORTS;
	if (vip) { /* one library named: its generation is what its version says */
		plan[1].lib = vip;
		plan[1].generation = "VIPLite";
		n = 2;
	}
	for (size_t i = 0; i < n; i++) {
		nbg_error e;
		out->generation[i] = plan[i].generation;
		rc = nbg_rt_backend_probe(plan[i].backend, plan[i].lib, flags, &out->reports[i], &e);
		if (rc != NBG_OK) {
			if (err)
				*err = e;
			return rc;
		}
	}
	if (vip && out->reports[1].has_version) /* the version word names the generation */
		out->generation[1] = out->reports[1].version_major == 1   ? "VIPLite 1.x"
				     : out->reports[1].version_major == 2 ? "VIPLite 2.x"
									  : "VIPLite";
	out->report_count = n;
	out->selected = select_report(out);
	out->ready = out->selected >= 0 && out->reports[out->selected].code == NBG_OK;
	return NBG_OK;
}

/*
 * probe.c - the NPU device probe of libnnsdk's aml_get_hardware_type,
 * redone on the host side so a tool can say "no NPU" before loading vendor
 * code.  Order and backend numbers follow the recovered call graph exactly
 * (doc/runtime.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nbg/runtime.h"
#include "runtime/runtime_internal.h"

static const struct {
	const char *name;
	int backend;
} probe_order[NBG_RT_PROBE_NODES] = {
	{ "galcore", NBG_RT_BACKEND_VIPUNIFY },
	{ "vipcore", NBG_RT_BACKEND_VIPLITE },
	{ "adla0", NBG_RT_BACKEND_ADLA },
	{ "mali0", NBG_RT_BACKEND_GPU },
};

const char *nbg_rt_backend_name(int backend)
{
	switch (backend) {
	case NBG_RT_BACKEND_NONE: return "none";
	case NBG_RT_BACKEND_VIPUNIFY: return "VIPUNIFY";
	case NBG_RT_BACKEND_VIPLITE: return "VIPLITE";
	case NBG_RT_BACKEND_ADLA: return "ADLA";
	case NBG_RT_BACKEND_GPU: return "GPU-DELEGATE";
	}
	return NULL;
}

const char *nbg_rt_env(const char *name)
{
	/* secure_getenv: these variables choose a library to dlopen and paths to
	 * stat; a set-id program must not take them from its caller. */
	const char *v = secure_getenv(name);
	return v && *v ? v : NULL;
}

nbg_code nbg_rt_probe_devices(const char *device_root, nbg_rt_probe *out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "probe: no result struct given");
	memset(out, 0, sizeof(*out));
	out->backend = NBG_RT_BACKEND_NONE;

	const char *root = device_root && *device_root ? device_root : nbg_rt_env("NBG_DEVICE_ROOT");
	if (!root)
		root = "/dev";
	if (strlen(root) >= sizeof(out->device_root))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "device root is longer than %d bytes", NBG_RT_PATH_MAX - 1);
	memcpy(out->device_root, root, strlen(root) + 1);

	for (unsigned i = 0; i < NBG_RT_PROBE_NODES; i++) {
		nbg_rt_probe_node *n = &out->nodes[i];
		n->name = probe_order[i].name;
		n->backend = probe_order[i].backend;
		int len = snprintf(n->path, sizeof(n->path), "%s/%s", root, n->name);
		if (len < 0 || (size_t)len >= sizeof(n->path))
			return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
					   "device path under '%s' is too long", root);
		struct stat st;
		if (stat(n->path, &st) == 0) {
			n->present = 1;
			n->is_char_device = S_ISCHR(st.st_mode) ? 1 : 0;
		}
	}

	/* First present node wins, as in the vendor's probe; mali0 only counts
	 * when no NPU node exists (it is last in the order). */
	for (unsigned i = 0; i < NBG_RT_PROBE_NODES; i++) {
		if (out->nodes[i].present) {
			out->backend = out->nodes[i].backend;
			break;
		}
	}
	out->npu_present = out->backend >= NBG_RT_BACKEND_VIPUNIFY && out->backend <= NBG_RT_BACKEND_ADLA;
	out->nbg_capable = out->backend == NBG_RT_BACKEND_VIPUNIFY || out->backend == NBG_RT_BACKEND_VIPLITE;
	return NBG_OK;
}

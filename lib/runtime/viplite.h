/*
 * viplite.h - the VIPLite backend inside libnbg: load the library, probe
 * it, run a whole session.  Private.
 */
#ifndef NBG_RUNTIME_VIPLITE_H
#define NBG_RUNTIME_VIPLITE_H

#include "nbg/session.h"
#include "runtime/runtime_internal.h"

/* The definition of the opaque nbg_rt_session_result (nbg/session.h). */
struct nbg_rt_session_result {
	nbg_rt_session_info info;
	size_t output_count;
	nbg_rt_session_output *outputs;
	void *priv;
};

#include "runtime/viplite_abi.h"

typedef struct nbg_vip_api {
	void *dl;
	char path[NBG_RT_PATH_MAX];
	vip_get_version_fn get_version;
	vip_void_fn init, destroy;
	vip_query_hardware_fn query_hardware;
	vip_create_network_fn create_network;
	vip_network_prop_fn query_network, set_network;
	vip_network_fn prepare_network, run_network, finish_network, destroy_network;
	vip_query_io_fn query_input, query_output;
	vip_create_buffer_fn create_buffer;
	vip_buffer_fn destroy_buffer, unmap_buffer;
	vip_map_buffer_fn map_buffer;
	vip_get_buffer_size_fn get_buffer_size;
	vip_flush_buffer_fn flush_buffer;
	vip_set_io_fn set_input, set_output;
} nbg_vip_api;

/* Loads path (NULL: $NBG_VIPLITE_PATH, else libNBGlinker.so then
 * libVIPlite.so) and resolves every entry point; rep (may be NULL) gets the
 * library and symbol counts.  LIBRARY_MISSING, SYMBOL_MISSING. */
NBG_RT_INTERNAL nbg_code nbg_vip_load(const char *path, nbg_vip_api *api,
				      nbg_rt_backend_report *rep, nbg_error *err);
NBG_RT_INTERNAL void nbg_vip_unload(nbg_vip_api *api);

/* Version, vip_init, hardware queries, vip_destroy, into rep. */
NBG_RT_INTERNAL void nbg_vip_probe(nbg_vip_api *api, nbg_rt_backend_report *rep);

/* Where a session's outputs go (shared memory the caller owns). */
typedef struct nbg_rt_sink {
	nbg_rt_session_result *res; /* stats, versions, CID */
	nbg_rt_session_output *outs;
	uint8_t **dst;              /* dst[i]: outs[i].size bytes */
} nbg_rt_sink;

typedef struct nbg_rt_run_params {
	unsigned long loops;
	unsigned flags;
	uint32_t run_timeout_ms;
	uint32_t input_kind;
} nbg_rt_run_params;

/* The whole VIPLite lifecycle for the valid model m (parsed from model). */
NBG_RT_INTERNAL nbg_code nbg_vip_session(nbg_vip_api *api, const nbg_model *m, const uint8_t *model,
					 size_t size, const nbg_rt_buffer *inputs,
					 const nbg_rt_run_params *p, nbg_rt_sink *sink,
					 nbg_error *err);

/* Adds one sample to a statistic. */
NBG_RT_INTERNAL void nbg_rt_stat_add(nbg_rt_stat *s, double v);
/* Milliseconds on the monotonic clock. */
NBG_RT_INTERNAL double nbg_rt_now_ms(void);

#endif

/*
 * session.h - one whole run of an NBG on the board, through either vendor
 * runtime: Amlogic's libnnsdk.so (nbg/runtime.h) or VeriSilicon's VIPLite
 * (libVIPlite.so 1.x, libNBGlinker.so 2.x), chosen from the device nodes and
 * which library loads.  doc/runtime.md describes both lifecycles.
 *
 * Isolation.  Unless NBG_RT_SESSION_NO_ISOLATE, every vendor call runs in a
 * child process (fork) that writes its results into shared memory: a crash,
 * an exit() or a hang inside the vendor library becomes runtime-crashed (or
 * run-timeout after timeout_ms), naming the vendor call it was in and the
 * signal, and the caller's process is untouched.  The child's stdout is
 * sent to stderr, so vendor log lines never mix with a command's report.
 *
 * Target check.  With VIPLite the device's CID (vip_query_hardware) is
 * compared with the NBG header's target before vip_create_network, and a
 * mismatch is refused with target-mismatch naming both targets, unless
 * NBG_RT_SESSION_FORCE_TARGET.  libnnsdk exposes no CID query, so the check
 * is not made there (result->cid_known == 0).
 */
#ifndef NBG_SESSION_H
#define NBG_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "nbg.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which runtime runs the NBG. */
typedef enum nbg_rt_select {
	NBG_RT_SELECT_AUTO = 0,    /* vipcore: VIPLite if a VIPLite library loads, else libnnsdk;
				      galcore: libnnsdk */
	NBG_RT_SELECT_NNSDK = 1,
	NBG_RT_SELECT_VIPLITE = 2,
	NBG_RT_SELECT_CPU = 3,     /* no board: nbgkit's CPU backend (nbg/cpu.h); never chosen by AUTO */
} nbg_rt_select;

/* "auto", "nnsdk", "viplite", "cpu"; NULL outside the enum. */
NBG_API const char *nbg_rt_select_name(int select);

#define NBG_RT_SESSION_FORCE_TARGET 0x1u    /* create even when the CID differs */
#define NBG_RT_SESSION_NO_ISOLATE 0x2u      /* call the vendor in this process (debugging) */
#define NBG_RT_SESSION_FLOAT32_OUTPUTS 0x4u /* libnnsdk: ask for FP32 outputs */
#define NBG_RT_SESSION_INPUT_KIND 0x8u      /* libnnsdk: use input_kind */
#define NBG_RT_SESSION_SKIP_PROBE 0x10u     /* do not refuse when no device node exists */

typedef struct nbg_rt_session_options {
	size_t size;             /* sizeof(nbg_rt_session_options) */
	int backend;             /* nbg_rt_select */
	const char *lib_path;    /* the chosen backend's library.  NULL: for libnnsdk
				    nnsdk_path, else $NBG_NNSDK_PATH, else "libnnsdk.so"; for
				    VIPLite $NBG_VIPLITE_PATH, else "libNBGlinker.so" then
				    "libVIPlite.so".  With AUTO, a lib_path exporting vip_init
				    selects VIPLite, any other libnnsdk */
	const char *device_root; /* NULL: $NBG_DEVICE_ROOT, else "/dev" */
	unsigned long loops;     /* 0 means 1 */
	unsigned flags;          /* NBG_RT_SESSION_* */
	uint32_t input_kind;     /* with NBG_RT_SESSION_INPUT_KIND */
	uint32_t timeout_ms;     /* the isolated child's limit; 0: 600000 */
	uint32_t run_timeout_ms; /* VIPLite's own network time-out (property 68); 0: its default */
	const char *nnsdk_path;  /* libnnsdk's library when libnnsdk runs and lib_path does not
				    name it (NBG_RT_SELECT_NNSDK without lib_path, or AUTO choosing
				    libnnsdk); never loaded as VIPLite.  NULL: $NBG_NNSDK_PATH or
				    "libnnsdk.so" */
	int (*stop)(void *ctx);  /* isolated runs: called in this process while the child runs
				    (every 20 ms at most, and at once when a signal interrupts
				    the wait); nonzero ends the child (SIGKILL, reaped) and the
				    run returns NBG_E_INTERRUPTED.  NULL: the run is stopped only
				    by timeout_ms.  For a caller whose signals are only noted
				    by its handlers (an interpreter: Ctrl-C) */
	void *stop_ctx;          /* stop's argument */
	const struct nbg_cpu_options *cpu; /* NBG_RT_SELECT_CPU: the plan's limits (nbg/cpu.h);
				    NULL: their defaults.  A run over one is refused with
				    work-limit before anything is computed */
	const nbg_model *parsed; /* the model the caller parsed from `model` (nbg_parse of the
				    same buffer and size, its checksums holding): the session
				    does not parse the bytes again.  NULL, or a model of other
				    bytes or whose checksums failed: it parses them itself */
	const struct nbg_cpu_plan *cpu_plan; /* NBG_RT_SELECT_CPU: the plan of that model the
				    caller built (nbg/cpu.h; with the limits of `cpu`), which it
				    frees after the run: the session builds none.  NULL: it
				    builds its own */
} nbg_rt_session_options;

typedef struct nbg_rt_stat {
	double first, min, max, sum;
	unsigned long n;
} nbg_rt_stat;

typedef struct nbg_rt_session_output {
	uint32_t data_format;   /* format of the bytes (FP32 with float32 outputs) */
	size_t size;            /* from the NBG record */
	uint32_t reported_size; /* the runtime's own size (descriptor word, vip_get_buffer_size) */
	uint8_t sha256[32];     /* of the last loop's bytes */
	int stable;             /* every loop gave the same bytes */
	const uint8_t *data;    /* the last loop's bytes; owned by the result */
} nbg_rt_session_output;

/* What a session measured and found (nbg_rt_session_info_of). */
typedef struct nbg_rt_session_info {
	int backend;                  /* NBG_RT_SELECT_NNSDK, _VIPLITE or _CPU: what ran */
	char library[NBG_RT_PATH_MAX];
	nbg_rt_probe probe;           /* the device probe */
	int has_version;
	uint32_t version_word;        /* vip_get_version() */
	int cid_known;
	uint32_t cid;                 /* vip_query_hardware(CID) */
	uint32_t device_count;
	uint32_t cores;               /* of device 0 */
	int target_forced;            /* the CID differed and FORCE_TARGET was given */
	int flush;                    /* libnnsdk: aml_util_flushTensorHandle used */
	uint32_t input_kind;          /* libnnsdk's descriptor +0x18 */
	unsigned long loops;
	double create_ms, destroy_ms;
	nbg_rt_stat input_set, run, retrieve; /* milliseconds per loop */
	int profile_known;
	nbg_rt_stat inference_us, cycles;     /* VIPLite profiling per loop */
} nbg_rt_session_info;

/* A session's result: opaque, read through the accessors below. */
typedef struct nbg_rt_session_result nbg_rt_session_result;

/*
 * Runs the NBG model[0..size) once per loop with inputs[0..count) (raw
 * bytes in the records' formats): probe, select and load the runtime, (VIPLite)
 * init and check the target, create, run `loops` times, read the outputs,
 * destroy everything in reverse order on every path.  model must already be
 * valid (it is parsed again here, unless opts->parsed is its model;
 * failures are model-invalid).
 *
 * Returns NBG_OK and *out (free with nbg_rt_session_free), or any runtime
 * code of nbg/codes.h: the libnnsdk ones of nbg/runtime.h, and
 * target-mismatch, init-failed, query-failed, prepare-failed, buffer-failed,
 * run-timeout, run-failed, runtime-io-mismatch, descriptor-invalid,
 * destroy-failed, runtime-crashed.  err->message names the vendor call.
 * *out is NULL on failure.  One session at a time per process.
 */
NBG_API nbg_code nbg_rt_session_run(const nbg_rt_session_options *opts, const uint8_t *model,
				    size_t size, const nbg_rt_buffer *inputs, size_t count,
				    nbg_rt_session_result **out, nbg_error *err);
NBG_API void nbg_rt_session_free(nbg_rt_session_result *r);
/* The measurements; NULL for a NULL result. */
NBG_API const nbg_rt_session_info *nbg_rt_session_info_of(const nbg_rt_session_result *r);
/* The outputs, one per output record: count, and element i (NULL past the
 * end).  Their bytes live as long as r. */
NBG_API size_t nbg_rt_session_output_count(const nbg_rt_session_result *r);
NBG_API const nbg_rt_session_output *nbg_rt_session_output_at(const nbg_rt_session_result *r,
								size_t i);

/* What `nbg probe` reports for one backend. */
typedef struct nbg_rt_backend_report {
	int backend;                /* NBG_RT_SELECT_NNSDK or _VIPLITE */
	char library[NBG_RT_PATH_MAX];
	int library_found;
	unsigned symbols_wanted, symbols_resolved;
	char symbol_missing[64];    /* the first one missing */
	int has_version;
	uint32_t version_word;
	unsigned version_major, version_minor, version_patch; /* decoded guess */
	int init_called;
	int32_t init_status;        /* vip_init's status */
	int hw_known;
	uint32_t cid, device_count, cores;
	nbg_code code;              /* NBG_OK when the backend is usable */
	char message[512];
	int has_flush;              /* libnnsdk: aml_util_flushTensorHandle exported */
} nbg_rt_backend_report;

/*
 * Probes one backend: loads its library (lib_path, or the defaults above),
 * resolves every entry point a run needs, and for VIPLite reads the version,
 * calls vip_init, queries CID, device count and cores, and vip_destroy.
 * Isolated as a session is (flags: NBG_RT_SESSION_NO_ISOLATE).  Returns
 * NBG_OK when the probe ran (read out->code), INVALID_ARGUMENT.
 */
NBG_API nbg_code nbg_rt_backend_probe(int backend, const char *lib_path, unsigned flags,
				      nbg_rt_backend_report *out, nbg_error *err);

/* ------------------------------------------------------ the whole machine */

#define NBG_RT_MACHINE_REPORTS 3

/* What `nbg probe` reports: the device nodes, every backend, and which one
 * `nbg run --backend auto` would use. */
typedef struct nbg_rt_machine {
	nbg_rt_probe devices;
	size_t report_count;
	/* libnnsdk first, then VIPLite 2.x (libNBGlinker.so) and 1.x
	 * (libVIPlite.so); a single VIPLite report when a VIPLite path was
	 * given or $NBG_VIPLITE_PATH is set. */
	nbg_rt_backend_report reports[NBG_RT_MACHINE_REPORTS];
	const char *generation[NBG_RT_MACHINE_REPORTS]; /* "libnnsdk", "VIPLite 2.x", ... */
	int selected; /* index into reports, -1 when no NBG-capable device node exists */
	int ready;    /* an NBG-capable node exists and reports[selected].code is NBG_OK */
} nbg_rt_machine;

/*
 * Probes the device nodes under device_root (NULL: $NBG_DEVICE_ROOT, else
 * /dev) and every backend (nnsdk_path and viplite_path may be NULL for the
 * defaults; flags: NBG_RT_SESSION_NO_ISOLATE), and selects as a session with
 * NBG_RT_SELECT_AUTO does: galcore -> libnnsdk; vipcore -> the first VIPLite
 * library that loads with every entry point, else libnnsdk; no node or
 * adla0 -> none.  Returns NBG_OK (read out->ready), INVALID_ARGUMENT.
 */
NBG_API nbg_code nbg_rt_machine_probe(const char *device_root, const char *nnsdk_path,
				      const char *viplite_path, unsigned flags,
				      nbg_rt_machine *out, nbg_error *err);

/* The probe as one JSON document (doc/runtime.md, "nbg probe"), paths and
 * messages that are not UTF-8 kept readable as \xNN escapes.  Returns
 * malloc'd text ending in a newline, NULL when out of memory. */
NBG_API char *nbg_rt_machine_json(const nbg_rt_machine *m);

/* The decoded guess of a vip_get_version() word: major, minor, patch in
 * bytes 2, 1, 0 (0x00010d00 -> 1.13.0 for "1.13.0.1", 0x00020003 -> 2.0.3
 * for "2.0.3.2"; the fourth part of the vendor's string is not in it). */
NBG_API void nbg_rt_version_decode(uint32_t word, unsigned *major, unsigned *minor,
				   unsigned *patch);

/* A VIPLite status as a name: "VIP_ERROR_TIMEOUT" ...; "unknown status"
 * outside -17..0. */
NBG_API const char *nbg_vip_status_name(int32_t status);

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_SESSION_H_STATIC_LINKING_ONLY)
#define NBG_SESSION_H_STATIC_LINKING_ONLY
#include "cpu.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A CPU backend run that kept every executed operation's output. */
typedef struct nbg_rt_dump_result {
	size_t count;
	nbg_cpu_tensor *tensors;  /* nbg_cpu_dump_list's, in execution order, each one's data
				   * its bytes (valid while the result lives; layer and kind
				   * while the plan lives) */
	size_t output_count;
	nbg_rt_buffer *outputs;   /* each output record's bytes (its byte size) */
	void *priv;
	size_t priv_size;
} nbg_rt_dump_result;

/*
 * nbg_cpu_run_dump of o->cpu_plan, the plan of o->parsed, on
 * inputs[0..count), isolated as a session is (o->flags
 * NBG_RT_SESSION_NO_ISOLATE, o->timeout_ms, o->stop): the child writes the
 * tensors and outputs into a block shared with this process.  What the plan
 * refuses (nbg_cpu_plan_check) and a dump whose tensors hold more than
 * max_bytes (WORK_LIMIT) are refused before anything runs.  NBG_OK and *out
 * (nbg_rt_dump_result_free), or the session's codes.
 */
NBG_API nbg_code nbg_rt_cpu_dump_run(const nbg_rt_session_options *o, const nbg_rt_buffer *inputs,
				     size_t count, uint64_t max_bytes, nbg_rt_dump_result **out,
				     nbg_error *err);
NBG_API void nbg_rt_dump_result_free(nbg_rt_dump_result *r);

#ifdef __cplusplus
}
#endif
#endif

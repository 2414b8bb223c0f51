/*
 * nbg_runtime.h - run a compiled NBG on an Amlogic/VeriSilicon NPU through the
 * vendor's libnnsdk.so, loaded with dlopen() at run time (the build never
 * links it), plus the device probe the vendor runtime itself performs.
 *
 * The binary interface is the one recovered from the stock firmware callers
 * (doc/runtime.md lists every offset): a 0x8e0-byte create configuration in
 * NBG-from-memory mode, one input descriptor per input, a 56-byte output
 * command used twice (perfMode 1 = execute, perfMode 2 = retrieve) and the
 * returned output object whose first data pointer sits at +0x50.
 *
 * Lifecycle:
 *
 *   nbg_runtime_open()            probe the device, dlopen, resolve symbols
 *   nbg_rt_graph_create()         parse + validate the NBG, aml_module_create
 *   loop:
 *     nbg_rt_graph_set_inputs()   size checks, aml_module_input_set per input
 *     nbg_rt_graph_execute()      flush, aml_module_output_get(perfMode 1), flush
 *     nbg_rt_graph_retrieve()     aml_module_output_get(perfMode 2) + validation
 *   nbg_rt_graph_destroy()        aml_module_destroy, exactly once
 *   nbg_runtime_close()
 *
 * Thread safety: create and destroy are serialized by one process-wide mutex
 * (the vendor keeps global parser/backend state around creation).  A graph
 * must be used by one thread at a time; running two different graphs from two
 * threads at once is not proven safe on hardware and is the caller's choice.
 * This layer only ever uses the NBG-from-memory mode, so it cannot mix backend
 * modes inside one process; do not let other code in the same process drive
 * libnnsdk in another mode.
 *
 * Every function returns an nbg_code; NBG_OK (0) is success.  On failure the
 * optional nbg_error is filled with the code, a sentence and, for
 * NBG_E_MODEL_INVALID, the parser's own failure as its cause.
 */
#ifndef NBG_RUNTIME_H
#define NBG_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ errors */

/*
 * Every function returns an nbg_code from the one list in nbg/codes.h (the
 * runtime's codes are "invalid-argument" to "golden-format" there) and fills
 * the optional nbg_error: code, message, index (the input or output involved,
 * or -1), and for NBG_E_MODEL_INVALID the parser's failure: cause, offset and
 * field are the parser's.  nbg_code_exit() gives the exit code a command uses.
 */

/* --------------------------------------------------------------- probe */

/* Backend numbers as the vendor's aml_get_hardware_type selects them. */
typedef enum nbg_rt_backend {
	NBG_RT_BACKEND_NONE = -1,
	NBG_RT_BACKEND_VIPUNIFY = 0, /* /dev/galcore: the proven NBG route */
	NBG_RT_BACKEND_VIPLITE = 1,  /* /dev/vipcore: NBG capable, not proven live */
	NBG_RT_BACKEND_ADLA = 2,     /* /dev/adla0: Amlogic ADLA, not a VeriSilicon NBG engine */
	NBG_RT_BACKEND_GPU = 3,      /* /dev/mali0 without an NPU: TFLite GPU/CPU delegate */
} nbg_rt_backend;

#define NBG_RT_PROBE_NODES 4
#define NBG_RT_PATH_MAX 4096

typedef struct nbg_rt_probe_node {
	const char *name;     /* "galcore", "vipcore", "adla0", "mali0" (static) */
	int backend;          /* the backend this node selects */
	int present;          /* the path exists (any file type) */
	int is_char_device;   /* it is a character device (a real driver node) */
	char path[NBG_RT_PATH_MAX];
} nbg_rt_probe_node;

typedef struct nbg_rt_probe {
	char device_root[NBG_RT_PATH_MAX];
	int backend;          /* nbg_rt_backend the vendor would select; -1 if none */
	int npu_present;      /* backend 0, 1 or 2 */
	int nbg_capable;      /* backend 0 or 1: a VeriSilicon NBG can run */
	nbg_rt_probe_node nodes[NBG_RT_PROBE_NODES]; /* in the vendor's probe order */
} nbg_rt_probe;

/* ------------------------------------------------------------ runtime */

/* Input kind written at descriptor +0x18: BINARY_RAW_DATA in the vendor enum
 * that matches the recovered config layout (doc/runtime.md); bytes go to the tensor unchanged. */
#define NBG_RT_INPUT_KIND_BINARY_RAW 3u

/* Output format written at command +0x0c. */
#define NBG_RT_OUTPUT_FLOAT32 0u /* the vendor converts every output to FP32 (stock zeroed command) */
#define NBG_RT_OUTPUT_RAW 1u     /* the bytes as the NBG output record declares them (default) */

/* Flags */
#define NBG_RT_OPEN_SKIP_PROBE 0x1u /* do not refuse to open when no NPU is found */
#define NBG_RT_OPEN_NO_FLUSH 0x2u   /* never call aml_util_flushTensorHandle */
#define NBG_RT_OPEN_INPUT_KIND 0x4u /* use nbg_rt_options.input_kind (0 included) */

/* Options that can grow: set `size` to sizeof(nbg_rt_options); zero the rest
 * for the defaults.  A smaller `size` from an older caller reads the missing
 * fields as zero.  Strings are copied by nbg_runtime_open(). */
typedef struct nbg_rt_options {
	size_t size;
	const char *nnsdk_path;  /* NULL: $NBG_NNSDK_PATH, else "libnnsdk.so" (dlopen search) */
	const char *device_root; /* NULL: $NBG_DEVICE_ROOT, else "/dev" */
	unsigned flags;          /* NBG_RT_OPEN_* */
	int float32_outputs;     /* 0: NBG_RT_OUTPUT_RAW (default); non-zero: NBG_RT_OUTPUT_FLOAT32,
				    the stock caller's zeroed command */
	uint32_t input_kind;     /* descriptor +0x18, only with NBG_RT_OPEN_INPUT_KIND; otherwise
				    NBG_RT_INPUT_KIND_BINARY_RAW (for SDKs numbering the enum
				    differently) */
} nbg_rt_options;

typedef struct nbg_runtime nbg_runtime;

/* -------------------------------------------------------------- graph */

typedef struct nbg_rt_graph nbg_rt_graph;

/* One input buffer: the bytes of input `index` (raw, already in the record's
 * data format and innermost-first layout). */
typedef struct nbg_rt_buffer {
	const void *data;
	size_t size;
} nbg_rt_buffer;

/* One retrieved output.  data is owned by the vendor runtime and valid until
 * the next set_inputs/execute/retrieve or destroy on the same graph. */
typedef struct nbg_rt_output {
	uint32_t index;
	const nbg_io *io;       /* the NBG output record (owned by the graph) */
	uint32_t data_format;   /* format of the bytes (see nbg_rt_graph_output_format) */
	const void *data;
	size_t size;            /* from the NBG output record, never from the device */
	uint32_t reported_size; /* the descriptor's own size word (+0x00), for reports */
	uint8_t sha256[32];     /* SHA-256 of data[0..size) (OpenSSL EVP) */
} nbg_rt_output;

/* -------------------------------------------------------- comparisons */

typedef struct nbg_rt_compare_result {
	uint64_t elements;
	uint64_t mismatches;      /* elements with |a - b| > tolerance (or NaN vs number) */
	uint64_t first_mismatch;  /* element index; valid when mismatches > 0 */
	double max_abs_diff;      /* over all elements; +inf when a NaN meets a number */
} nbg_rt_compare_result;

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_RUNTIME_H_STATIC_LINKING_ONLY)
#define NBG_RUNTIME_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* "VIPUNIFY", "VIPLITE", "ADLA", "GPU-DELEGATE", "none"; NULL outside -1..3. */
NBG_API const char *nbg_rt_backend_name(int backend);

/*
 * Probes the device nodes in the vendor's order: <root>/galcore -> 0,
 * <root>/vipcore -> 1, <root>/adla0 -> 2, <root>/mali0 -> 3 (first present
 * wins).  device_root: the argument if non-NULL, else $NBG_DEVICE_ROOT, else
 * "/dev".  Presence is tested with stat() and any file type counts, so a test
 * can use a directory of empty files; is_char_device tells real nodes apart.
 *
 * Returns NBG_OK whenever the probe ran (even with nothing found: read
 * out->backend); NBG_E_INVALID_ARGUMENT if out is NULL or the root path is
 * too long.  Never opens a device.  Reentrant.
 */
NBG_API nbg_code nbg_rt_probe_devices(const char *device_root, nbg_rt_probe *out,
					 nbg_error *err);

/*
 * Probes the device (unless NBG_RT_OPEN_SKIP_PROBE), dlopen()s libnnsdk
 * (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE: the vendor keeps global state, so the
 * library is never unmapped) and resolves aml_module_create,
 * aml_module_input_set, aml_module_output_get, aml_module_destroy and, when
 * present, aml_util_flushTensorHandle.  opts may be NULL.
 *
 * Returns NBG_OK and *out (close with nbg_runtime_close), or:
 *   INVALID_ARGUMENT (out NULL, opts->size below sizeof(size_t), unknown flags,
 *   path too long),
 *   ABI_UNSUPPORTED (not LP64), NO_DEVICE, BACKEND_UNSUPPORTED (ADLA/GPU only),
 *   LIBRARY_MISSING (dlerror() text in the message), SYMBOL_MISSING (names the
 *   symbol), RUNTIME_CONFLICT (a different library path is open in this
 *   process), OUT_OF_MEMORY.  *out is NULL on failure.
 * Thread-safe.
 */
NBG_API nbg_code nbg_runtime_open(const nbg_rt_options *opts, nbg_runtime **out,
				     nbg_error *err);

/* Releases the handle.  Graphs created from it stay valid; the library
 * reference is dropped when the last of them is destroyed.  NULL is a no-op. */
NBG_API void nbg_runtime_close(nbg_runtime *rt);

/* The probe result taken at open (backend -1 with NBG_RT_OPEN_SKIP_PROBE and no
 * device).  Owned by rt. */
NBG_API const nbg_rt_probe *nbg_runtime_probe(const nbg_runtime *rt);
/* The path given to dlopen().  Owned by rt. */
NBG_API const char *nbg_runtime_library_path(const nbg_runtime *rt);
/* 1 if aml_util_flushTensorHandle was resolved (and not disabled). */
NBG_API int nbg_runtime_has_flush(const nbg_runtime *rt);
/* The input kind written at descriptor +0x18; 0 if rt is NULL. */
NBG_API uint32_t nbg_runtime_input_kind(const nbg_runtime *rt);

/*
 * Parses and validates the NBG in model[0..size) with nbg_parse(), checks that
 * every input and output record has a known byte size, copies the bytes into a
 * buffer the graph owns for its whole life (the caller may free its own copy
 * when this returns), builds the 0x8e0-byte create configuration (length,
 * data pointer, modelType 4, nbgType 1 = from memory) and calls
 * aml_module_create under the process-wide mutex.
 *
 * Returns NBG_OK and *out, or INVALID_ARGUMENT, MODEL_INVALID (err->model
 * holds the parser's failure), MODEL_TOO_LARGE (the file, or a tensor, beyond
 * the vendor's 32-bit fields; err->index names the tensor), IO_SIZE_UNKNOWN,
 * OUT_OF_MEMORY, CREATE_FAILED (the message prints the NBG's version and
 * target).  The graph holds a reference on rt.  Thread-safe.
 */
NBG_API nbg_code nbg_rt_graph_create(nbg_runtime *rt, const uint8_t *model, size_t size,
					nbg_rt_graph **out, nbg_error *err);

/* The parsed model (inputs/outputs with shapes, formats, byte sizes).  Owned by
 * the graph; valid until nbg_rt_graph_destroy(). */
NBG_API const nbg_model *nbg_rt_graph_model(const nbg_rt_graph *g);

/* Size in bytes of output i as retrieve will report it: the record's byte size
 * (RAW) or element count x 4 (FLOAT32); 0 if i is out of range. */
NBG_API size_t nbg_rt_graph_output_size(const nbg_rt_graph *g, size_t i);
/* Data format of output i's bytes: the record's (RAW) or 0 = FP32 (FLOAT32). */
NBG_API uint32_t nbg_rt_graph_output_format(const nbg_rt_graph *g, size_t i);

/*
 * Checks count against the NBG's input count and each size against the input
 * record's byte_size, copies each buffer into the graph's staging buffer
 * (the caller's buffers are not referenced after return) and submits one
 * descriptor per input (+0x04 index, +0x08 byte count, +0x10 data pointer,
 * +0x18 input kind).  inputs[i] is input i.
 *
 * Returns NBG_OK, INVALID_ARGUMENT, INPUT_COUNT_MISMATCH,
 * INPUT_SIZE_MISMATCH (err->index names the input), INPUT_SET_FAILED.  The
 * vendor's wrapper hides most backend errors here (it returns 0 after
 * dispatch): retrieve validates the result.  Not thread-safe per graph.
 */
NBG_API nbg_code nbg_rt_graph_set_inputs(nbg_rt_graph *g, const nbg_rt_buffer *inputs,
					    size_t count, nbg_error *err);

/*
 * Executes once: aml_util_flushTensorHandle(input) when available,
 * aml_module_output_get(perfMode 1) (its return is ignored, as the vendor
 * defines), aml_util_flushTensorHandle(output).
 * Returns NBG_OK, INVALID_ARGUMENT, BAD_STATE (no inputs set since the last
 * execute), RUN_FAILED (a flush returned non-zero).  Not thread-safe per graph.
 */
NBG_API nbg_code nbg_rt_graph_execute(nbg_rt_graph *g, nbg_error *err);

/*
 * Retrieves the outputs of the last execute: aml_module_output_get(perfMode 2),
 * then validates: object non-NULL (OUTPUT_NULL), output count word (+0x04) at
 * least the NBG's output count, every descriptor's data pointer non-NULL
 * (OUTPUT_DATA_NULL) and its size word not smaller than the record's size
 * (OUTPUT_INVALID).  outs must have room for exactly count ==
 * model->output_count entries (else INVALID_ARGUMENT).  BAD_STATE before any
 * execute; OUT_OF_MEMORY when the digest cannot be computed.  After any
 * failure the graph needs fresh inputs.  Not thread-safe per graph.
 */
NBG_API nbg_code nbg_rt_graph_retrieve(nbg_rt_graph *g, nbg_rt_output *outs, size_t count,
					  nbg_error *err);

/*
 * Destroys *pg exactly once and sets *pg to NULL: the native pointer is
 * cleared before aml_module_destroy runs (under the process-wide mutex), so it
 * can never be passed twice; all host memory is freed whatever the vendor
 * returns.  Returns NBG_OK, DESTROY_FAILED (the vendor keeps its wrapper:
 * a leak by its design, not retried).  pg NULL or *pg NULL: NBG_OK, no-op.
 */
NBG_API nbg_code nbg_rt_graph_destroy(nbg_rt_graph **pg, nbg_error *err);

/*
 * Compares two buffers element by element in data format `fmt` (the NBG
 * buffer-format enum): FP32, FP16, BFP16 and FP64 as floating point (two NaNs
 * compare equal); UINT8/INT8/CHAR/BOOL8, UINT16/INT16, UINT32/INT32,
 * UINT64/INT64 as integers (difference computed exactly, reported as double).
 * Little-endian.  size must be a whole number of elements.
 * Returns NBG_OK (read out->mismatches), INVALID_ARGUMENT (NULL pointers,
 * size not a multiple of the element size), GOLDEN_FORMAT (INT4/UINT4 or an
 * unknown format).  Reentrant.
 */
NBG_API nbg_code nbg_rt_compare(const void *a, const void *b, size_t size, uint32_t fmt,
				   double tolerance, nbg_rt_compare_result *out,
				   nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif

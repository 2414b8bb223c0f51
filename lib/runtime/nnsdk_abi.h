/*
 * nnsdk_abi.h - the libnnsdk.so binary interface as the stock firmware callers
 * use it (seed 003, "Stock CTC NPU Call Graph").  Private to libnbg; every
 * offset and size the recovered call graph pins is checked at compile time below, and
 * doc/runtime.md carries the same table.
 *
 * The layouts are LP64 (AArch64, the boards that ship libnnsdk.so).  On other
 * data models NNSDK_ABI_LP64 is 0 and the runtime refuses to open
 * (abi-unsupported) instead of passing a wrong layout to native code.
 */
#ifndef NBG_NNSDK_ABI_H
#define NBG_NNSDK_ABI_H

#include <stddef.h>
#include <stdint.h>

#if UINTPTR_MAX == UINT64_MAX && SIZE_MAX == UINT64_MAX
#define NNSDK_ABI_LP64 1
#else
#define NNSDK_ABI_LP64 0
#endif

/* Values the stock caller writes. */
#define NNSDK_CONFIG_TYPE_SIZE 0x8e0u /* 2272 bytes, low half of the first 64-bit word */
#define NNSDK_MODEL_TYPE_STOCK 4      /* modelType the stock NBG caller writes (ONNX enum value) */
#define NNSDK_NBG_TYPE_MEMORY 1       /* nbgType: NBG from memory */
#define NNSDK_HW_SELECT_STOCK 0       /* +0x8d8 left zero by the stock caller: automatic probe */
#define NNSDK_OUTPUT_CMD_SIZE 56u
#define NNSDK_PERF_EXECUTE 1          /* perfMode 1: run only, return ignored */
#define NNSDK_PERF_RETRIEVE 2         /* perfMode 2: output-get, returns the output object */
#define NNSDK_FLUSH_INPUT 0           /* aml_util_flushTensorHandle type: input tensors */
#define NNSDK_FLUSH_OUTPUT 1          /* output tensors */

/*
 * Create configuration (aml_module_create's only argument), 0x8e0 bytes,
 * zeroed, then: +0x00 type size 0x8e0 and +0x04 model byte length (together
 * the first 64-bit word: low 32 bits = 0x8e0, high 32 bits = length),
 * +0x08 path (NULL: the "model/path discriminator" selects memory), +0x10
 * data pointer, +0x18 modelType 4, +0x1c nbgType 1, +0x8d8 hardware selection
 * flag.  Everything between is left zero, as the stock caller leaves it.
 */
typedef struct nnsdk_create_config {
	uint32_t type_size;    /* 0x000 */
	uint32_t model_length; /* 0x004 (vendor type: int) */
	const char *path;      /* 0x008 */
	const void *data;      /* 0x010 */
	int32_t model_type;    /* 0x018 */
	int32_t nbg_type;      /* 0x01c */
	uint8_t zero_0x20[0x8d8 - 0x20];
	int32_t hw_select;     /* 0x8d8 */
	uint32_t zero_0x8dc;   /* 0x8dc */
} nnsdk_create_config;

/*
 * Input descriptor (aml_module_input_set's second argument).  The libnnsdk call graph pins
 * +0x04 tensor index, +0x08 byte count, +0x10 data pointer, +0x18 input kind.
 * Chosen here: 64 bytes (the largest layout published for this SDK
 * generation; 0x1c..0x3f is the preprocessing block, left zero so its
 * "valid" word is 0 = no preprocessing), type size word +0x00 = 64, kind 3
 * (BINARY_RAW_DATA: bytes reach the tensor unchanged).  A library reading a
 * shorter descriptor reads only zeroed bytes we own.
 */
#define NNSDK_INPUT_DESC_SIZE 64u
typedef struct nnsdk_input_desc {
	uint32_t type_size;  /* 0x00 */
	uint32_t index;      /* 0x04 */
	uint32_t size;       /* 0x08 (vendor type: int) */
	uint32_t zero_0x0c;  /* 0x0c: padding before the pointer */
	const void *data;    /* 0x10 */
	uint32_t kind;       /* 0x18 */
	uint32_t info[9];    /* 0x1c: preprocessing block, all zero */
} nnsdk_input_desc;

/*
 * Output command, 56 bytes, passed BY VALUE as the vendor prototype declares
 * (AArch64 passes a pointer to a caller-made copy, which is what the stock
 * call sites show).  +0x00 typeSize 56, +0x08 perfMode; +0x04 module type left
 * 0 as the stock caller leaves it; +0x0c output format (0 = FP32 conversion,
 * the stock zeroed value; 1 = raw bytes, this layer's default).
 */
typedef struct nnsdk_output_cmd {
	uint32_t type_size;   /* 0x00 */
	uint32_t module_type; /* 0x04 */
	uint32_t perf_mode;   /* 0x08 */
	uint32_t format;      /* 0x0c */
	uint64_t zero_0x10[5];
} nnsdk_output_cmd;

/*
 * Returned output object.  Pinned by the recovered call graph: first descriptor at +0x08, its
 * data pointer at descriptor +0x48 = object +0x50.  Derived from the same
 * descriptor layout (not pinned by the call graph, so only read, and checked): the
 * output count word at +0x04, the size word at descriptor +0x00 (+0x04 name,
 * +0x50 params, +0x58 format) and the 0x60-byte stride between descriptors.
 * The size used is the NBG output record's; the size word is only checked.
 */
typedef struct nnsdk_output_desc {
	uint32_t size;       /* +0x00 */
	char name[64];       /* +0x04 */
	uint32_t pad_0x44;
	const void *data;    /* +0x48 */
	const void *params;  /* +0x50 */
	uint32_t format;     /* +0x58 */
	uint32_t pad_0x5c;
} nnsdk_output_desc;

typedef struct nnsdk_output_object {
	int32_t type_size;          /* +0x00 */
	uint32_t count;             /* +0x04 */
	nnsdk_output_desc out[];    /* +0x08 */
} nnsdk_output_object;

#define NNSDK_OUTPUT_FIRST_DESC 0x08u
#define NNSDK_OUTPUT_DESC_DATA 0x48u
#define NNSDK_OUTPUT_FIRST_DATA 0x50u
#define NNSDK_OUTPUT_DESC_STRIDE 0x60u

#if NNSDK_ABI_LP64
_Static_assert(sizeof(nnsdk_create_config) == NNSDK_CONFIG_TYPE_SIZE, "create config is 0x8e0 bytes");
_Static_assert(offsetof(nnsdk_create_config, type_size) == 0x00, "config +0x00 type size");
_Static_assert(offsetof(nnsdk_create_config, model_length) == 0x04, "config +0x04 length (high half)");
_Static_assert(offsetof(nnsdk_create_config, path) == 0x08, "config +0x08 path discriminator");
_Static_assert(offsetof(nnsdk_create_config, data) == 0x10, "config +0x10 data pointer");
_Static_assert(offsetof(nnsdk_create_config, model_type) == 0x18, "config +0x18 modelType");
_Static_assert(offsetof(nnsdk_create_config, nbg_type) == 0x1c, "config +0x1c nbgType");
_Static_assert(offsetof(nnsdk_create_config, hw_select) == 0x8d8, "config +0x8d8 hardware flag");

_Static_assert(sizeof(nnsdk_input_desc) == NNSDK_INPUT_DESC_SIZE, "input descriptor is 64 bytes");
_Static_assert(offsetof(nnsdk_input_desc, index) == 0x04, "input +0x04 tensor index");
_Static_assert(offsetof(nnsdk_input_desc, size) == 0x08, "input +0x08 byte count");
_Static_assert(offsetof(nnsdk_input_desc, data) == 0x10, "input +0x10 data pointer");
_Static_assert(offsetof(nnsdk_input_desc, kind) == 0x18, "input +0x18 input kind");

_Static_assert(sizeof(nnsdk_output_cmd) == NNSDK_OUTPUT_CMD_SIZE, "output command is 56 bytes");
_Static_assert(offsetof(nnsdk_output_cmd, type_size) == 0x00, "command +0x00 typeSize");
_Static_assert(offsetof(nnsdk_output_cmd, perf_mode) == 0x08, "command +0x08 perfMode");
_Static_assert(offsetof(nnsdk_output_cmd, format) == 0x0c, "command +0x0c format");

_Static_assert(sizeof(nnsdk_output_desc) == NNSDK_OUTPUT_DESC_STRIDE, "descriptor stride 0x60");
_Static_assert(offsetof(nnsdk_output_desc, data) == NNSDK_OUTPUT_DESC_DATA, "descriptor +0x48 data");
_Static_assert(offsetof(nnsdk_output_object, count) == 0x04, "object +0x04 count");
_Static_assert(offsetof(nnsdk_output_object, out) == NNSDK_OUTPUT_FIRST_DESC, "object +0x08 first descriptor");
_Static_assert(offsetof(nnsdk_output_object, out) + offsetof(nnsdk_output_desc, data) ==
		       NNSDK_OUTPUT_FIRST_DATA,
	       "first data pointer at object +0x50");
#endif

/* Entry points, with the vendor's prototypes (first argument types are ours). */
typedef void *(*nnsdk_create_fn)(nnsdk_create_config *config);
typedef int (*nnsdk_input_set_fn)(void *context, nnsdk_input_desc *input);
typedef void *(*nnsdk_output_get_fn)(void *context, nnsdk_output_cmd cmd);
typedef int (*nnsdk_destroy_fn)(void *context);
typedef int (*nnsdk_flush_fn)(void *context, int type);

#endif

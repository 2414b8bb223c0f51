/*
 * viplite_abi.h - VeriSilicon's VIPLite C API (1.x libVIPlite.so, 2.x
 * libNBGlinker.so) as nbgkit calls it through dlopen: our own
 * declarations, written from the API's documented types and values
 * (doc/runtime.md, "VIPLite").  Private to libnbg.
 *
 * Every type has a fixed width except the opaque handles (pointers), so the
 * same declarations hold on LP64 (aarch64) and ILP32 (armhf); the one
 * struct passed by pointer has no pointer inside and is 48 bytes on both.
 */
#ifndef NBG_VIPLITE_ABI_H
#define NBG_VIPLITE_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t vip_status; /* vip_status_e */
typedef int32_t vip_enum;
typedef void *vip_network;
typedef void *vip_buffer;

/* Status codes (2.x adds -16 and -17). */
#define VIP_SUCCESS 0
#define VIP_ERROR_TIMEOUT (-1)
#define VIP_ERROR_IO (-2)

/* vip_query_hardware properties */
#define VIP_QUERY_HW_PROP_CID 0
#define VIP_QUERY_HW_PROP_DEVICE_COUNT 1
#define VIP_QUERY_HW_PROP_CORE_COUNT_EACH_DEVICE 2

/* vip_create_network type */
#define VIP_CREATE_NETWORK_FROM_MEMORY 0x02

/* vip_query_network properties */
#define VIP_NETWORK_PROP_INPUT_COUNT 1
#define VIP_NETWORK_PROP_OUTPUT_COUNT 2
#define VIP_NETWORK_PROP_PROFILING 7

/* vip_set_network properties */
#define VIP_NETWORK_PROP_SET_TIME_OUT 68

/* vip_query_input / vip_query_output properties */
#define VIP_BUFFER_PROP_QUANT_FORMAT 0
#define VIP_BUFFER_PROP_NUM_OF_DIMENSION 1
#define VIP_BUFFER_PROP_SIZES_OF_DIMENSION 2
#define VIP_BUFFER_PROP_DATA_FORMAT 3

/* vip_flush_buffer operations */
#define VIP_BUFFER_OPER_TYPE_FLUSH 1      /* CPU -> device, after writing inputs */
#define VIP_BUFFER_OPER_TYPE_INVALIDATE 2 /* device -> CPU, before reading outputs */

#define VIP_MAX_DIMENSION 6

/* vip_buffer_create_params_t: 48 bytes in 1.13 and 2.0. */
typedef struct vip_buffer_create_params {
	uint32_t num_of_dims;                 /* 0 */
	uint32_t sizes[VIP_MAX_DIMENSION];    /* 4: fastest-varying first, as in the NBG */
	int32_t data_format;                  /* 28: the NBG buffer-format numbers */
	int32_t quant_format;                 /* 32: 0 none, 1 dynamic fixed point, 2 affine */
	union {
		int32_t fixed_point_pos;
		struct {
			float scale;
			int32_t zero_point;
		} affine;
	} quant_data;                         /* 36 */
	uint32_t memory_type;                 /* 44: 0 default */
} vip_buffer_create_params;

_Static_assert(sizeof(vip_buffer_create_params) == 48, "buffer-create params are 48 bytes");
_Static_assert(offsetof(vip_buffer_create_params, sizes) == 4, "+4 sizes[6]");
_Static_assert(offsetof(vip_buffer_create_params, data_format) == 28, "+28 data_format");
_Static_assert(offsetof(vip_buffer_create_params, quant_format) == 32, "+32 quant_format");
_Static_assert(offsetof(vip_buffer_create_params, quant_data) == 36, "+36 quant union");
_Static_assert(offsetof(vip_buffer_create_params, quant_data.affine.zero_point) == 40,
	       "+40 affine zero point");
_Static_assert(offsetof(vip_buffer_create_params, memory_type) == 44, "+44 memory_type");

/* vip_inference_profile_t */
typedef struct vip_inference_profile {
	uint32_t inference_time; /* microseconds */
	uint32_t total_cycle;
} vip_inference_profile;
_Static_assert(sizeof(vip_inference_profile) == 8, "profile is two 32-bit words");

/* Entry points. */
typedef uint32_t (*vip_get_version_fn)(void);
typedef vip_status (*vip_void_fn)(void); /* vip_init, vip_destroy */
typedef vip_status (*vip_query_hardware_fn)(vip_enum prop, uint32_t size, void *value);
typedef vip_status (*vip_create_network_fn)(const void *data, uint32_t size, vip_enum type,
					    vip_network *network);
typedef vip_status (*vip_network_prop_fn)(vip_network net, vip_enum prop, void *value);
typedef vip_status (*vip_network_fn)(vip_network net);
typedef vip_status (*vip_query_io_fn)(vip_network net, uint32_t index, vip_enum prop, void *value);
typedef vip_status (*vip_create_buffer_fn)(vip_buffer_create_params *params, uint32_t size,
					   vip_buffer *buffer);
typedef vip_status (*vip_buffer_fn)(vip_buffer buffer);
typedef void *(*vip_map_buffer_fn)(vip_buffer buffer);
typedef uint32_t (*vip_get_buffer_size_fn)(vip_buffer buffer);
typedef vip_status (*vip_flush_buffer_fn)(vip_buffer buffer, vip_enum op);
typedef vip_status (*vip_set_io_fn)(vip_network net, uint32_t index, vip_buffer buffer);

#endif

/*
 * half.h - the library's one converter between float and the 16-bit
 * floating-point formats of NPU tensors: IEEE binary16 (fp16) and bfloat16
 * (bf16).  Used by the tensor files and quantization (lib/tensor), output
 * comparison (lib/runtime) and the CPU backend.  Never installed.
 *
 * Narrowing rounds to nearest, ties to even, and overflows to infinity; a
 * NaN stays a NaN of the same sign: fp16 0x7e00 (quiet, payload dropped),
 * bf16 the float's top 16 bits with the quiet bit 0x40 set.  Widening is
 * exact and keeps a NaN's payload (fp16: shifted into the float's top
 * mantissa bits).
 */
#ifndef NBG_COMMON_HALF_H
#define NBG_COMMON_HALF_H

#include <stdint.h>

#include "common/internal.h"

/* The fp16 nearest a double (rounded once: not through a float) or a float. */
NBG_INTERNAL uint16_t nbg_fp16_from_double(double d);
NBG_INTERNAL uint16_t nbg_fp16_from_float(float f);
/* The float an fp16 is (every fp16 is one). */
NBG_INTERNAL float nbg_fp16_to_float(uint16_t h);
/* The bf16 nearest a float; the float a bf16 is. */
NBG_INTERNAL uint16_t nbg_bf16_from_float(float f);
NBG_INTERNAL float nbg_bf16_to_float(uint16_t b);

#endif

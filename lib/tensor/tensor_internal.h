/*
 * tensor_internal.h - helpers shared inside lib/tensor.  Never installed.
 */
#ifndef NBG_TENSOR_INTERNAL_H
#define NBG_TENSOR_INTERNAL_H

#include <stdint.h>

#include "common/internal.h"

/* IEEE half <-> float, round half to even. */
NBG_INTERNAL uint16_t nbg_tensor_f32_to_f16(float f);
NBG_INTERNAL float nbg_tensor_f16_to_f32(uint16_t h);

#endif

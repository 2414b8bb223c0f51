/*
 * sample_model.h - the bundled sample, samples/sample.nb: a synthesized
 * NBG v2 file for target 0x1000003b (Allwinner A733), laid out as the real
 * A733 files of the corpus are, with a small network whose every record,
 * command and kernel stream agree:
 *
 *   input 0 [1,28,28,1] UINT8 affine
 *   -> NN 0: conv 3x3x1 -> 8, 28x28 -> 26x26, relu, 2x2 max pooling (13x13x8)
 *   -> NN 1: fully connected 1352 -> 10 (a 1x1x1352 convolution, as the
 *            vendor's compiler writes LeNet's)
 *   -> SH:   softmax (a PPU operation)
 *   -> output 0 [1,10] FP16
 *
 * Its weights are written by tests/coef_encode.c in the v8a stream format.
 * nbg-mksample (tests/mksample.c) writes the file (and the weights and
 * biases it encoded); test_cli checks the committed file equals what
 * sm_build() makes.
 */
#ifndef NBG_TEST_SAMPLE_MODEL_H
#define NBG_TEST_SAMPLE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "coef_encode.h"

#define SM_LAYERS 2          /* NN layers with kernels */
#define SM_NAME "nbgkit_synthesized_sample"

/* NN layer i (0: the convolution, 1: the fully connected layer): its
 * kernels [out][kz][ky][kx], true biases and zero points, as encoded. */
const ce_layer *sm_layer(unsigned i);

/* The whole file (malloc'd). */
uint8_t *sm_build(size_t *size);

#endif

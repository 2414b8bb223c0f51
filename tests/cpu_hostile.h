/*
 * cpu_hostile.h - the hostile models of the CPU backend's limits
 * (doc/security.md, "The third sweep"), synthesized with tests/cpu_model.c:
 * each is small and valid, and asks for work, memory or planning out of
 * all proportion to its size.  Used by tests/test_cpu_limits.c and, through
 * nbg-cpu-hostile (tests/mkhostile.c), by the Python package's tests.
 */
#ifndef NBG_TEST_CPU_HOSTILE_H
#define NBG_TEST_CPU_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

/* Its shape, for the tests' own figures: an NN 3x3 convolution of 64
 * channels into 64 over a 256x256 output (its multiply-accumulates:
 * 256 x 256 x 64 x 3 x 3 x 64), every output row and slice at the same
 * bytes (strides 0), so its records stay small. */
#define CH_CONV_MACS (256ull * 256 * 64 * 3 * 3 * 64)

/* Each returns the file (malloc'd) and its size in *size. */

/* One such convolution command named by `ops` OPERATIONS records: each
 * under the per-operation bound, together as much work as `ops` of them
 * (issue 47, item 1). */
uint8_t *ch_shared_conv(uint32_t ops, size_t *size);

/* A TP max pooling (2x2) of a 1-pixel-wide window, z slices deep, its
 * window rows -32768..32767 in 2-row tiles one row apart: no element, but
 * z x 65535 tile rows to walk (item 2). */
uint8_t *ch_tp_walk(uint32_t z, size_t *size);

/* A TP copy of a side x side image, `ops` records naming it: each walk
 * side^2 elements long (the planners' budget). */
uint8_t *ch_tp_copies(uint32_t side, uint32_t ops, size_t *size);

/* An NN 1x1 convolution of a 1x1x1 input into side x side x 64, its
 * output rows and slices at the same bytes: an output record of side
 * bytes, 2 x side^2 x 64 bytes of scratch (item 3). */
uint8_t *ch_scratch(uint32_t side, size_t *size);

/* A TP copy of 16 bytes from input 0 to output 0 with `outputs` output
 * records of 16 bytes and a memory pool of `pool` bytes that no operation
 * uses (item 10); output_bytes (0: 16) sets output 0's size (item 6). */
uint8_t *ch_copy(uint32_t outputs, uint64_t pool, uint32_t output_bytes, size_t *size);

/* ch_copy(1, 0, 0) with a 4-D input record, dims (2, 2, 4, 1) innermost
 * first: an NHWC image of shape (1, 4, 2, 2) whose 16 bytes the run hands
 * back as output 0 (Model.run's and nbg run's --layout, tests/python). */
uint8_t *ch_copy_nhwc(size_t *size);
/* ch_copy(1, 0, 0) with a second 16-byte input nothing reads: a model of
 * two inputs whose output is its first (nbg run --batch's folders). */
uint8_t *ch_copy_two_inputs(size_t *size);

/* n NN 1x1 convolutions and n TP copies, each one command named n times
 * (item 12). */
uint8_t *ch_records(uint32_t n, size_t *size);

#endif

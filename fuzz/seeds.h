/*
 * seeds.h - inputs for the fuzzers, the replay driver and the mutation test:
 * synthesized NBG files (v2 through tests/fixture.h, v1 through a small
 * builder here) and "shrunk" copies of real files (every structure kept,
 * opaque payloads cut short) so a fuzzer spends its mutations on structure.
 *
 * Nothing here uses libnbg: the layouts are written from doc/format-v1.md and
 * doc/format-v2.md, so the seeds are a second opinion on the parser.
 */
#ifndef NBG_FUZZ_SEEDS_H
#define NBG_FUZZ_SEEDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct seed_file {
	char name[64];
	uint8_t *data;
	size_t size;
} seed_file;

/* Every synthesized seed (v2 and v1 shapes); *count receives the number.
 * All of them parse with the CRC check on.  Free with seed_free_all. */
seed_file *seed_synth_all(size_t *count);
void seed_free_all(seed_file *s, size_t count);

/* The kernel-stream seeds (seeds_coef.c, with tests/coef_encode.c and
 * tests/fixture.c): layers written in the v7, v8a and v8b formats.
 * seed_coef_file(i) is the fixture's v2 file carrying stream i (it parses
 * with the CRC check on); seed_coef_raw(i) is
 * the raw input of the coef harness: "COEF", what the NN command would say
 * (SEED_COEF_HEADER bytes, fuzz/fuzz_coef.c), then the stream.  Both
 * malloc'd, with their names. */
#define SEED_COEF_HEADER 19
size_t seed_coef_count(void);
uint8_t *seed_coef_file(size_t i, char *name, size_t name_size, size_t *size);
uint8_t *seed_coef_raw(size_t i, char *name, size_t name_size, size_t *size);

/* A v1 file of `version` with 1 input, 2 outputs, 2 layers, 3 operations,
 * 2 SH and 2 PATCH records, 1 SW record and small opaque tables.  variant 0:
 * plain; 1: every table that can be empty is empty; 2: nested/zero-size
 * entries and a trailer.  For versions without a measured entry count the
 * table has 20 entries (the input table begins after them).  malloc'd. */
uint8_t *seed_v1_build(uint32_t version, int variant, size_t *size);

/* Writes the nbg_crc_sum of a v1 file of `version` (from 0x10016) under
 * its version's rule (doc/format-v1.md): CRC-32 of the file from its first
 * section on for 0x10020, of the whole file with the word read as zero for
 * every other version. */
void seed_v1_crc_sum(uint8_t *b, size_t n, uint32_t version);

/* Record strides of a v1 version (doc/format-v1.md); patch 0 for
 * 0x10010-0x10013, where either 28 or 40 may be used. */
typedef struct seed_v1_strides {
	uint32_t io, layer, operation, patch, sh, sw;
} seed_v1_strides;
void seed_v1_strides_of(uint32_t version, seed_v1_strides *st);
/* Entry-table start and measured entry count (0: none measured). */
uint32_t seed_v1_entries_offset(uint32_t version);
uint32_t seed_v1_measured_entries(uint32_t version);

/* A small copy of a real NBG (v1 or v2): headers, directory/entry table and
 * every record table the parser decodes kept, each opaque payload cut to at
 * most `cap` bytes, offsets rewritten, v2 checksums recomputed.  NULL when
 * the file is not a v1/v2 NBG the shrinker understands.  malloc'd. */
uint8_t *seed_shrink(const uint8_t *data, size_t size, size_t cap, size_t *out_size);

/* Reads a whole file into an exact-size malloc'd buffer (so a sanitizer sees
 * any read past its end).  NULL on failure. */
uint8_t *seed_read_file(const char *path, size_t *size);

#endif

/*
 * internal.h - libnbg private helpers: little-endian loads, checked
 * arithmetic, error and note reporting, hashing.  Never installed.
 */
#ifndef NBG_INTERNAL_H
#define NBG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifndef NBG_STATIC_LINKING_ONLY
#define NBG_STATIC_LINKING_ONLY /* the library declares what it exports */
#endif
#include "nbg/nbg.h"
#include "common/fieldmap.h"
#include "common/model.h"

#define NBG_INTERNAL __attribute__((visibility("hidden")))

static inline uint32_t le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

/* true on overflow */
static inline bool add_overflow_u64(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}
static inline bool mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_mul_overflow(a, b, r);
}

/* [off, off+len) lies inside a buffer of `size` bytes, without overflow. */
static inline bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Parser state shared by the v1 and v2 decoders. */
typedef struct nbg_ctx {
	const uint8_t *data;
	uint64_t size;
	unsigned flags;
	nbg_model *m;
	nbg_error *err;
	size_t note_cap;
	uint64_t max_undescribed;   /* work limit, resolved from the options */
	struct nbg_file_hash *file_hash; /* the whole-file SHA-256, once started */
	int hash_thread;                 /* ... on a second thread */
	int structure_passed;            /* nbg_structure_checked let hashing start */
	/* NBG_PARSE_KEEP_UNVERIFIED: the first checksum that did not match,
	 * whose failure the parse went on past (kept_rc NBG_OK: none). */
	nbg_code kept_rc;
	nbg_error kept;
} nbg_ctx;

/* Fills err (may be NULL) and returns code: the one error setter of every
 * libnbg component.  fmt describes the problem for a person. */
/* Non-zero: every parse skips the CRC comparisons, as the libFuzzer build
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) does, so that mutated bytes
 * reach the rules behind the checksums.  Set only by the fuzz replay
 * drivers (fuzz/fuzz_mode.c), which link the static library: the library
 * is compiled once per build, not once more for them.  Hidden, so no
 * program linking the shared library can reach it. */
NBG_INTERNAL extern int nbg_fuzzing_no_crc;

NBG_INTERNAL nbg_code nbg_error_set(nbg_error *err, nbg_code code, uint64_t offset,
				    const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* NBG_E_IO with err->sys_errno = sys_errno and ": strerror(sys_errno)" after
 * the sentence. */
NBG_INTERNAL nbg_code nbg_error_io(nbg_error *err, int sys_errno, uint64_t offset,
				   const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
NBG_INTERNAL nbg_code nbg_fail(nbg_ctx *c, nbg_code code, uint64_t offset, const char *field,
			       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A checksum that does not match, its failure built into *e with code
 * `code` (format/checksum.h): returns code after copying *e into the
 * caller's error, as the parse stops there; or NBG_OK to go on, under
 * NBG_PARSE_KEEP_UNVERIFIED after keeping the first such failure in
 * c->kept.  The callers skip it under NBG_PARSE_NO_CRC_CHECK. */
NBG_INTERNAL nbg_code nbg_checksum_failed(nbg_ctx *c, nbg_code code, const nbg_error *e);
NBG_INTERNAL void nbg_set_error(nbg_error *err, nbg_code code, uint64_t offset,
				const char *field, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));
/* Appends a note; returns false only on allocation failure (then the note is dropped). */
NBG_INTERNAL bool nbg_note_add(nbg_ctx *c, const char *id, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The note io-scale-not-finite for an affine record whose scale is NaN or
 * infinite (its word at file offset `at`); the reports write null for it. */
NBG_INTERNAL void nbg_note_scale(nbg_ctx *c, const nbg_io *io, uint64_t at, const char *what,
				 size_t i);


/* Decodes a buffer I/O record common to v1 and v2 once its fields are read. */
NBG_INTERNAL void nbg_io_derive(nbg_io *io);


NBG_INTERNAL nbg_code nbg_parse_v2(nbg_ctx *c);
NBG_INTERNAL nbg_code nbg_parse_v1(nbg_ctx *c);

/* The family parser calls this once the header and directory proved the
 * structure sound, before any section byte is hashed: it enforces the
 * undescribed-bytes limit (NBG_E_WORK_LIMIT) and only then starts the
 * whole-file SHA-256.  A file refused earlier is never hashed. */
NBG_INTERNAL nbg_code nbg_structure_checked(nbg_ctx *c);
/* nbg_parse_reached (nbg.h, static-linking-only) is nbg_parse that also
 * says whether the structure passed. */
/* Ends the whole-file hash started there: cancelled when rc failed, else
 * completed (on this thread when none was started).  parse.c. */
NBG_INTERNAL void nbg_file_hash_finish(nbg_ctx *c, nbg_code rc);

/* 1 when the parse may start a thread of its own now: not
 * NBG_PARSE_ONE_THREAD, and the whole-file SHA-256 is not running on a
 * second thread already. */
static inline int nbg_second_core_free(const nbg_ctx *c)
{
	return !(c->flags & NBG_PARSE_ONE_THREAD) && !c->hash_thread;
}

/* Section payload fingerprints (CRC-32 + SHA-256) for every section. */
NBG_INTERNAL void nbg_fingerprint_sections(nbg_ctx *c);

#endif

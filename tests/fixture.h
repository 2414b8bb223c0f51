/*
 * fixture.h - synthesizes NBG v2 files for tests: any section set, alignment,
 * dynamic-I/O table and trailing bytes, with correct section checksums and
 * header file checksum.  The checksum code here is written independently of
 * libnbg (plain zlib crc32 over a normalized copy), so tests compare the
 * library against a second implementation.
 */
#ifndef NBG_FIXTURE_H
#define NBG_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "nbg/nbg.h"

typedef struct fx_section {
	uint32_t type;
	uint8_t *data;
	size_t size;
	uint32_t align;     /* sd_alignsize */
	uint32_t entsize;   /* sd_entsize */
	uint32_t gap;       /* extra zero bytes placed before the section */
} fx_section;

typedef struct fx_spec {
	fx_section sec[48];
	size_t n;
	size_t trailing;       /* bytes after the last section */
	uint8_t trailing_byte;
	int no_checksums;      /* 1: leave CHECKSUM records as given */
} fx_spec;

/* A valid v2 model with 19 sections in the real corpus order and a graph
 * whose layers, operations, patches and tables agree (1 input INT16 dfp,
 * 2 outputs, dynamic I/O with 2 entries, aligned COEF_DATA and PPU_INSTR). */
fx_spec *fx_default(void);
/* The default's graph `groups` times over, for files that are mostly
 * records: 3G layers, 3G+1 operations (the INIT first), 4G+1 patches, 2G NN
 * commands, G SH records and 3G+1 LOADSTATE states, every cross-reference
 * holding (about 850 bytes of records per group). */
void fx_many_records(fx_spec *s, size_t groups);
void fx_free(fx_spec *s);
fx_section *fx_find(fx_spec *s, uint32_t type);
/* Adds (or replaces) a section with a copy of data (NULL: zeros). */
fx_section *fx_set(fx_spec *s, uint32_t type, const void *data, size_t size, uint32_t align,
		   uint32_t entsize);
void fx_remove(fx_spec *s, uint32_t type);
/* Changes a section's size, keeping its bytes; new bytes are zero. */
void fx_resize(fx_section *x, size_t size);

/* The controlled pair of doc/diff.md: the fixture default with dynamic-I/O
 * entry 0 (region +0, 4 bytes) holding v[0..3] (00 01 02 03 for A,
 * 00 01 02 04 for B), checksums made by fx_build.  malloc'd. */
uint8_t *fx_dynaio_constant(const uint8_t v[4], size_t *size);

/* Lays the file out; returns a malloc'd buffer.  Checksum records are made
 * for every present section of type 7, 8, 19, 21, 24 unless no_checksums. */
uint8_t *fx_build(const fx_spec *s, size_t *size);

/* Recomputes, from the directory in buf, every CHECKSUM record value and the
 * header crc_sum (sections out of bounds are skipped). */
void fx_refresh(uint8_t *buf, size_t size);
/* Only the header crc_sum. */
void fx_refresh_header(uint8_t *buf, size_t size);

/* The file offset of directory entry for `type`, or 0. */
size_t fx_dir_entry(const uint8_t *buf, size_t size, uint32_t type);
uint32_t fx_get32(const uint8_t *p);
void fx_put32(uint8_t *p, uint32_t v);

/* nbg_json_document_write(m, path, what) as a malloc'd string; aborts when
 * the writer fails. */
char *fx_document(const nbg_model *m, const char *path, unsigned what);

/* Reads a whole file (malloc'd, one byte more than *size); NULL on failure. */
uint8_t *fx_read_file(const char *path, size_t *size);
/* 1 when d is the SHA-256 of the n bytes at p as coreutils' sha256sum
 * computes it (an implementation independent of libnbg's and OpenSSL's). */
int fx_sha256sum_is(const uint8_t d[32], const void *p, size_t n);
/* A new directory /tmp/PREFIX-XXXXXX (malloc'd); aborts when none can be made. */
char *fx_tmpdir(const char *prefix);
/* Removes the tree at dir whatever the modes inside it; 0 when it is gone. */
int fx_rmtree(const char *dir);
/* Milliseconds of wall-clock time (CLOCK_MONOTONIC), and of this thread's
 * CPU time: the complexity checks compare the work of two sizes, which
 * wall-clock time on a loaded machine does not measure. */
double fx_wall_ms(void);
double fx_cpu_ms(void);

/* The nbg command as a user runs it: "PREFIX $NBG_BIN ARGS" through sh,
 * stdout and stderr captured (NUL-terminated, malloc'd), exit status decoded
 * (-1 when killed by a signal). */
typedef struct fx_run_result {
	int status;
	char *out, *err;
} fx_run_result;

fx_run_result fx_run_nbg(const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fx_run_free(fx_run_result *r);
/* Prefix that runs the command from the source directory. */
#define FX_IN_SOURCE "cd '" NBG_SOURCE_DIR "' &&"

/* The kernel names the address that faulted in SIGBUS, and the signal
 * guard of a truncated mapping relies on it; qemu-arm 7.2 (the armhf cross
 * build) names one 4 KiB page higher, so the guard maps zeros from the page
 * after the one that faulted and the access faults again forever.  This
 * asks the machine, in a child: the distance between the reported and the
 * real address (0 where it is right), or LONG_MIN when the check itself
 * could not run.  A test that truncates a mapping skips where it is not 0. */
long fx_sigbus_address_error(void);

/* A v2 I/O record. */
void fx_io_record(uint8_t rec[112], uint32_t dim_count, const uint32_t *dims, uint32_t fmt,
		  uint32_t quant, uint32_t q0, uint32_t q1, const char *name);

#endif

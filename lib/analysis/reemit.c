/*
 * reemit.c - lossless re-emission from the ledger.  Each byte is hashed once
 * per check that needs it: one pass over the input computes every range's
 * SHA-256 (against the ledger's fingerprints) and a CRC-32 of what will be
 * written, while the SHA-256 of the whole output (against the source's) runs
 * beside it on a second thread.  Writing and the read-back of a file output
 * then only recompute that CRC-32 to prove the bytes did not change.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/ledger_internal.h"
#include "common/atomic.h"
#include "common/hash.h"

/* Pieces the ranges are CRC'd, hashed and written in; also the size from
 * which the whole-output hash gets its own thread. */
#define REEMIT_CHUNK ((uint64_t)1 << 20)

static nbg_code refuse(nbg_error *err, const nbg_ledger_range *r)
{
	return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, r->offset, r->owner,
		     "the bytes of %s [%llu, %llu) (%s) are not the bytes the ledger "
		     "fingerprinted: re-emitting them would serialize a change, which nbgkit "
		     "refuses", r->owner, (unsigned long long)r->offset,
		     (unsigned long long)(r->offset + r->size), nbg_ledger_class_names[r->cls]);
}

static nbg_code no_sha(nbg_error *err, uint64_t offset)
{
	return nbg_error_set(err, NBG_E_RESOURCE, offset, "sha256", "SHA-256 could not be computed");
}

/* The SHA-256 of the ranges concatenated in ledger order: what is written. */
typedef struct whole_job {
	const nbg_ledger *l;
	const uint8_t *data;
	uint8_t d[32];
	bool ok;
} whole_job;

static void *whole_sha(void *arg)
{
	whole_job *j = arg;
	nbg_sha256_ctx s;

	nbg_sha256_begin(&s);
	for (size_t i = 0; i < j->l->nranges; i++)
		nbg_sha256_update(&s, j->data + j->l->ranges[i].offset, j->l->ranges[i].size);
	j->ok = nbg_sha256_end(&s, j->d);
	return NULL;
}

/* One range: CRC-32 continued into *crc and SHA-256 compared with the
 * ledger's, chunk by chunk.  The CRC sees each chunk first, so a byte that
 * changes after it is seen changed by the SHA-256 (and refused); one that
 * changes later is caught by the CRC when written or read back.
 * 0 when the range matches, 1 when it does not, -1 when SHA-256 failed. */
static int scan_range(const nbg_ledger_range *r, const uint8_t *data, uint32_t *crc)
{
	nbg_sha256_ctx s;
	uint8_t d[32];

	nbg_sha256_begin(&s);
	for (uint64_t k = 0; k < r->size; k += REEMIT_CHUNK) {
		const uint8_t *p = data + r->offset + k;
		uint64_t n = r->size - k < REEMIT_CHUNK ? r->size - k : REEMIT_CHUNK;
		*crc = nbg_crc32(*crc, p, n);
		nbg_sha256_update(&s, p, n);
	}
	if (!nbg_sha256_end(&s, d))
		return -1;
	return memcmp(d, r->sha256, 32) != 0;
}

/* nbg_reemit_check, also giving the CRC-32 of the output to be written. */
static nbg_code reemit_scan(const nbg_ledger *l, const uint8_t *data, size_t size,
			    uint32_t *crc, nbg_error *err)
{
	whole_job job = { l, data, { 0 }, false };
	nbg_code rc = NBG_OK;
	pthread_t thread;
	int threaded;

	*crc = 0;
	if ((uint64_t)size != l->file_size)
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED,
			     (uint64_t)size < l->file_size ? (uint64_t)size : l->file_size,
			     "file_size",
			     "the bytes to emit are %llu long; the ledger fingerprinted %llu: "
			     "re-emission refused", (unsigned long long)size,
			     (unsigned long long)l->file_size);
	threaded = size >= REEMIT_CHUNK && pthread_create(&thread, NULL, whole_sha, &job) == 0;
	for (size_t i = 0; i < l->nranges && rc == NBG_OK; i++) {
		int x = scan_range(&l->ranges[i], data, crc);
		if (x < 0)
			rc = no_sha(err, l->ranges[i].offset);
		else if (x > 0)
			rc = refuse(err, &l->ranges[i]);
	}
	if (threaded)
		pthread_join(thread, NULL);
	else if (rc == NBG_OK)
		whole_sha(&job);
	if (rc != NBG_OK)
		return rc;
	if (!job.ok)
		return no_sha(err, 0);
	if (memcmp(job.d, l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "sha256",
			     "every range matches but the whole output's SHA-256 is not the "
			     "source's: the ledger is inconsistent; re-emission refused");
	return NBG_OK;
}

nbg_code nbg_reemit_check(const nbg_ledger *l, const uint8_t *data, size_t size, nbg_error *err)
{
	uint32_t crc;

	if (err)
		memset(err, 0, sizeof(*err));
	return reemit_scan(l, data, size, &crc, err);
}

/* Writes the ranges in ledger order, CRC'ing what goes out: a CRC other
 * than the checked bytes' means the input changed under us (a mapped file
 * being rewritten). */
static nbg_code emit_ranges(const nbg_ledger *l, const uint8_t *data, int fd, uint32_t want,
			    nbg_error *err)
{
	uint32_t crc = 0;

	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		for (uint64_t k = 0; k < r->size; k += REEMIT_CHUNK) {
			const uint8_t *p = data + r->offset + k;
			uint64_t n = r->size - k < REEMIT_CHUNK ? r->size - k : REEMIT_CHUNK;
			crc = nbg_crc32(crc, p, n);
			if (!nbg_write_all(fd, p, n)) {
				int e = errno;
				return nbg_error_io(err, e, r->offset + k, r->owner,
						    "writing %s [%llu, %llu) failed", r->owner,
						    (unsigned long long)r->offset,
						    (unsigned long long)(r->offset + r->size));
			}
		}
	}
	if (crc != want)
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "crc32",
			     "the bytes written are not the bytes checked (CRC-32 0x%08x, "
			     "checked 0x%08x): the input changed while it was being written; "
			     "output refused", crc, want);
	return NBG_OK;
}

nbg_code nbg_reemit_write(const nbg_ledger *l, const uint8_t *data, size_t size, int fd,
			  nbg_error *err)
{
	uint32_t crc;
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if ((rc = reemit_scan(l, data, size, &crc, err)) != NBG_OK)
		return rc;
	return emit_ranges(l, data, fd, crc, err);
}

typedef struct reemit_ctx {
	const nbg_ledger *l;
	const uint8_t *data;
	uint32_t crc; /* of the checked bytes */
} reemit_ctx;

static nbg_code reemit_emit(int fd, void *ctx, nbg_error *err)
{
	reemit_ctx *r = ctx;
	return emit_ranges(r->l, r->data, fd, r->crc, err);
}

/* What the file system returns for the written file, read back after fsync,
 * must have the checked bytes' size and CRC-32.  The read is served from the
 * page cache (see doc/ledger.md, section 5). */
static nbg_code reemit_verify(int fd, void *ctx, nbg_error *err)
{
	reemit_ctx *r = ctx;
	uint8_t buf[1 << 16];
	uint64_t total = 0;
	uint32_t crc = 0;
	ssize_t k;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return nbg_error_io(err, errno, 0, "output", "cannot re-read the output");
	while ((k = read(fd, buf, sizeof(buf))) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return nbg_error_io(err, errno, total, "output",
					    "cannot re-read the output");
		}
		crc = nbg_crc32(crc, buf, (uint64_t)k);
		total += (uint64_t)k;
	}
	if (total != r->l->file_size || crc != r->crc)
		return nbg_error_set(err, NBG_E_IO, total, "output",
			     "the written file (%llu bytes, CRC-32 0x%08x) does not read back as "
			     "the checked bytes (%llu bytes, CRC-32 0x%08x): output discarded",
			     (unsigned long long)total, crc,
			     (unsigned long long)r->l->file_size, r->crc);
	return NBG_OK;
}

nbg_code nbg_reemit_file(const nbg_ledger *l, const uint8_t *data, size_t size, const char *path,
			 nbg_error *err)
{
	reemit_ctx ctx = { l, data, 0 };
	nbg_code rc;

	if (err)
		memset(err, 0, sizeof(*err));
	/* Refuse before anything, not even a temporary file, exists. */
	if ((rc = reemit_scan(l, data, size, &ctx.crc, err)) != NBG_OK)
		return rc;
	return nbg_atomic_write(path, reemit_emit, reemit_verify, &ctx, err);
}

/*
 * reemit.c - lossless re-emission from the ledger: the bytes are checked
 * range by range against the ledger's fingerprints before anything is
 * written, hashed again as they go out, and a file output is read back
 * before it replaces the target.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/ledger_internal.h"
#include "common/atomic.h"
#include "common/hash.h"

static nbg_code refuse(nbg_error *err, const nbg_ledger_range *r)
{
	return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, r->offset, r->owner,
		     "the bytes of %s [%llu, %llu) (%s) are not the bytes the ledger "
		     "fingerprinted: re-emitting them would serialize a change, which nbgkit "
		     "refuses", r->owner, (unsigned long long)r->offset,
		     (unsigned long long)(r->offset + r->size), nbg_ledger_class_names[r->cls]);
}

nbg_code nbg_reemit_check(const nbg_ledger *l, const uint8_t *data, size_t size, nbg_error *err)
{
	nbg_sha256_ctx whole;
	uint8_t d[32];

	if (err)
		memset(err, 0, sizeof(*err));
	if ((uint64_t)size != l->file_size)
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED,
			     (uint64_t)size < l->file_size ? (uint64_t)size : l->file_size,
			     "file_size",
			     "the bytes to emit are %llu long; the ledger fingerprinted %llu: "
			     "re-emission refused", (unsigned long long)size,
			     (unsigned long long)l->file_size);
	nbg_sha256_begin(&whole);
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		nbg_sha256_ctx one;
		nbg_sha256_begin(&one);
		nbg_sha256_update(&one, data + r->offset, r->size);
		nbg_sha256_update(&whole, data + r->offset, r->size);
		if (!nbg_sha256_end(&one, d)) {
			nbg_sha256_end(&whole, d);
			return nbg_error_set(err, NBG_E_RESOURCE, r->offset, "sha256",
				     "SHA-256 could not be computed");
		}
		if (memcmp(d, r->sha256, 32)) {
			nbg_sha256_end(&whole, d);
			return refuse(err, r);
		}
	}
	if (!nbg_sha256_end(&whole, d))
		return nbg_error_set(err, NBG_E_RESOURCE, 0, "sha256",
			     "SHA-256 could not be computed");
	if (memcmp(d, l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "sha256",
			     "every range matches but the whole output's SHA-256 is not the "
			     "source's: the ledger is inconsistent; re-emission refused");
	return NBG_OK;
}

nbg_code nbg_reemit_write(const nbg_ledger *l, const uint8_t *data, size_t size, int fd,
			  nbg_error *err)
{
	nbg_code rc = nbg_reemit_check(l, data, size, err);
	nbg_sha256_ctx out;
	uint8_t d[32];

	if (rc != NBG_OK)
		return rc;
	/* Range by range, from the ledger; what goes out is hashed again as it
	 * goes, so a buffer changing under us (a mapped file being rewritten)
	 * is caught too. */
	nbg_sha256_begin(&out);
	for (size_t i = 0; i < l->nranges; i++) {
		const nbg_ledger_range *r = &l->ranges[i];
		nbg_sha256_update(&out, data + r->offset, r->size);
		if (!nbg_write_all(fd, data + r->offset, r->size)) {
			int e = errno;
			nbg_sha256_end(&out, d);
			return nbg_error_io(err, e, r->offset, r->owner,
					    "writing %s [%llu, %llu) failed", r->owner,
					    (unsigned long long)r->offset,
					    (unsigned long long)(r->offset + r->size));
		}
	}
	if (!nbg_sha256_end(&out, d))
		return nbg_error_set(err, NBG_E_RESOURCE, 0, "sha256", "SHA-256 could not be computed");
	if (memcmp(d, l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "sha256",
			     "the bytes written do not hash to the source's SHA-256 (the input "
			     "changed while it was being written): output refused");
	return NBG_OK;
}


typedef struct reemit_ctx {
	const nbg_ledger *l;
	const uint8_t *data;
	size_t size;
} reemit_ctx;

static nbg_code reemit_emit(int fd, void *ctx, nbg_error *err)
{
	reemit_ctx *r = ctx;
	return nbg_reemit_write(r->l, r->data, r->size, fd, err);
}

/* What reached the file system, read back, must hash to the source's SHA-256. */
static nbg_code reemit_verify(int fd, void *ctx, nbg_error *err)
{
	reemit_ctx *r = ctx;
	uint8_t buf[1 << 16], d[32];
	uint64_t total = 0;
	nbg_sha256_ctx s;
	ssize_t k;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return nbg_error_io(err, errno, 0, "output", "cannot re-read the output");
	nbg_sha256_begin(&s);
	while ((k = read(fd, buf, sizeof(buf))) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			nbg_sha256_end(&s, d);
			return nbg_error_io(err, e, total, "output", "cannot re-read the output");
		}
		nbg_sha256_update(&s, buf, (uint64_t)k);
		total += (uint64_t)k;
	}
	if (!nbg_sha256_end(&s, d))
		return nbg_error_set(err, NBG_E_RESOURCE, 0, "sha256", "SHA-256 could not be computed");
	if (total != r->l->file_size || memcmp(d, r->l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_IO, total, "output",
			     "the written file (%llu bytes) does not read back as the source "
			     "(%llu bytes, same SHA-256): output discarded",
			     (unsigned long long)total, (unsigned long long)r->l->file_size);
	return NBG_OK;
}

nbg_code nbg_reemit_file(const nbg_ledger *l, const uint8_t *data, size_t size, const char *path,
			 nbg_error *err)
{
	reemit_ctx ctx = { l, data, size };
	nbg_code rc;

	/* Refuse before anything, not even a temporary file, exists. */
	if ((rc = nbg_reemit_check(l, data, size, err)) != NBG_OK)
		return rc;
	return nbg_atomic_write(path, reemit_emit, reemit_verify, &ctx, err);
}

/*
 * reemit.c - lossless re-emission from the ledger (doc/ledger.md, section
 * 5).  Each byte is hashed once per check that needs it.
 *
 * With a ledger of fingerprints (nbg_reemit_check/_write): one pass
 * over the input before anything is written computes every range's SHA-256
 * (against the ledger's) and its CRC-32, while the SHA-256 of the whole
 * output (against the source's) runs beside it on a second thread.
 *
 * A file's own bytes (nbg_reemit_model, what `nbg reemit FILE OUT` does):
 * the parser CRC'd every section; the ledger takes those CRCs as the ranges'
 * fingerprints (nbg_ledger_build_crc), and the only SHA-256 is the whole
 * output's, on a second thread while the output is written.
 *
 * Writing (reemit_out.c) CRCs each range once as it goes out, against the
 * CRC of the checked bytes, and reads the file back from the device.  The
 * output is the caller's descriptor: `nbg reemit` gives a temporary that it
 * renames over OUT once this returned NBG_OK (programs/cli_out.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/ledger/reemit_internal.h"
#include "common/fdio.h"
#include "common/hash.h"

/* Pieces the ranges are CRC'd and hashed in; also the size from which the
 * whole-output hash gets its own thread. */
#define REEMIT_CHUNK ((uint64_t)1 << 20)

static nbg_code refuse(nbg_error *err, const nbg_ledger_range *r)
{
	return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, r->offset, r->owner,
		     "the bytes of %s [%llu, %llu) (%s) are not the bytes the ledger "
		     "fingerprinted: re-emitting them would serialize a change, which nbgkit "
		     "refuses", r->owner, (unsigned long long)r->offset,
		     (unsigned long long)(r->offset + r->size), nbg_ledger_class_names[r->cls]);
}

/* The SHA-256 of the ranges concatenated in ledger order: what is written. */
typedef struct whole_job {
	const nbg_ledger *l;
	const uint8_t *data;
	uint8_t d[32];
} whole_job;

static void *whole_sha(void *arg)
{
	whole_job *j = arg;
	nbg_sha256_ctx s;

	nbg_sha256_begin(&s);
	for (size_t i = 0; i < j->l->nranges; i++)
		nbg_sha256_update(&s, j->data + j->l->ranges[i].offset, j->l->ranges[i].size);
	nbg_sha256_end(&s, j->d);
	return NULL;
}

/* One range: its CRC-32 into *crc and its SHA-256 compared with the
 * ledger's, chunk by chunk.  The CRC sees each chunk first, so a byte that
 * changes after it is seen changed by the SHA-256 (and refused); one that
 * changes later is caught by the CRC when written or read back.
 * 0 when the range matches, 1 when it does not. */
static int scan_range(const nbg_ledger_range *r, const uint8_t *data, uint32_t *crc)
{
	nbg_sha256_ctx s;
	uint8_t d[32];

	*crc = 0;
	nbg_sha256_begin(&s);
	for (uint64_t k = 0; k < r->size; k += REEMIT_CHUNK) {
		const uint8_t *p = data + r->offset + k;
		uint64_t n = r->size - k < REEMIT_CHUNK ? r->size - k : REEMIT_CHUNK;
		*crc = nbg_crc32(*crc, p, n);
		nbg_sha256_update(&s, p, n);
	}
	nbg_sha256_end(&s, d);
	return memcmp(d, r->sha256, 32) != 0;
}

/* nbg_reemit_check, also giving each range's CRC-32 (crc: nranges
 * entries, may be NULL). */
static nbg_code reemit_scan(const nbg_ledger *l, const uint8_t *data, size_t size,
			    uint32_t *crc, nbg_error *err)
{
	whole_job job = { l, data, { 0 } };
	nbg_code rc = NBG_OK;
	pthread_t thread;
	int threaded;

	if ((uint64_t)size != l->file_size)
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED,
			     (uint64_t)size < l->file_size ? (uint64_t)size : l->file_size,
			     "file_size",
			     "the bytes to emit are %llu long; the ledger fingerprinted %llu: "
			     "re-emission refused", (unsigned long long)size,
			     (unsigned long long)l->file_size);
	threaded = size >= REEMIT_CHUNK && pthread_create(&thread, NULL, whole_sha, &job) == 0;
	for (size_t i = 0; i < l->nranges && rc == NBG_OK; i++) {
		uint32_t c;
		int x = scan_range(&l->ranges[i], data, &c);
		if (crc)
			crc[i] = c;
		if (x)
			rc = refuse(err, &l->ranges[i]);
	}
	if (threaded)
		pthread_join(thread, NULL);
	else if (rc == NBG_OK)
		whole_sha(&job);
	if (rc != NBG_OK)
		return rc;
	if (memcmp(job.d, l->file_sha256, 32))
		return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, 0, "sha256",
			     "every range matches but the whole output's SHA-256 is not the "
			     "source's: the ledger is inconsistent; re-emission refused");
	return NBG_OK;
}

nbg_code nbg_reemit_check(const nbg_ledger *l, const uint8_t *data, size_t size, nbg_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!l || (!data && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "ledger",
				     "no ledger or file bytes were given");
	return reemit_scan(l, data, size, NULL, err);
}

/* The ranges through reemit_out.c onto fd; with a read-back, the file is
 * synced before the last windows are read back from the device. */
static nbg_code write_out(nbg_reemit_out *o, int fd, nbg_error *err)
{
	nbg_code rc = nbg_reemit_out_emit(fd, o, err);

	if (rc == NBG_OK && o->readback && fsync(fd) != 0)
		rc = nbg_error_io(err, errno, 0, "output", "cannot sync the output");
	if (rc == NBG_OK && o->readback)
		rc = nbg_reemit_out_verify(fd, o, err);
	return rc;
}

nbg_code nbg_reemit_write(const nbg_ledger *l, const uint8_t *data, size_t size, int fd,
			  unsigned flags, nbg_error *err)
{
	uint32_t *crc;
	nbg_reemit_out o;
	nbg_code rc, end;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!l || (!data && size) || fd < 0)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "ledger",
				     "nbg_reemit_write needs a ledger, the bytes and a descriptor");
	if (!(crc = malloc((l->nranges ? l->nranges : 1) * sizeof(*crc))))
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	/* Refuse before anything is written. */
	if ((rc = reemit_scan(l, data, size, crc, err)) != NBG_OK) {
		free(crc);
		return rc;
	}
	nbg_reemit_out_init(&o, l, data, crc, 0, (flags & NBG_REEMIT_READBACK) != 0);
	rc = write_out(&o, fd, err);
	end = nbg_reemit_out_finish(&o, rc == NBG_OK ? err : NULL);
	free(crc);
	return rc != NBG_OK ? rc : end;
}

nbg_code nbg_reemit_model(const nbg_model *m, int fd, unsigned flags, nbg_reemit_info *info,
			  nbg_error *err)
{
	nbg_ledger *l = NULL;
	nbg_reemit_out o;
	nbg_code rc, end;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!m || fd < 0)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "model",
				     "nbg_reemit_model needs a model and a descriptor");
	if ((rc = nbg_ledger_build_crc(m, &l, err)) != NBG_OK)
		return rc;
	nbg_reemit_out_init(&o, l, m->data, l->crc, 1, (flags & NBG_REEMIT_READBACK) != 0);
	rc = write_out(&o, fd, err);
	end = nbg_reemit_out_finish(&o, rc == NBG_OK ? err : NULL);
	if (rc == NBG_OK)
		rc = end;
	if (rc == NBG_OK && info && info->size >= sizeof(*info)) {
		memcpy(info->sha256, o.sha256, 32);
		info->ranges = l->nranges;
		info->bytes = l->file_size;
		info->readback = !o.readback ? NBG_READBACK_NONE
			       : o.cache_only ? NBG_READBACK_CACHE : NBG_READBACK_DEVICE;
	}
	nbg_ledger_free(l);
	return rc;
}

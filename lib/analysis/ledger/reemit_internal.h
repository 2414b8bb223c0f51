/*
 * reemit_internal.h - writing a ledger's ranges out with the checks beside
 * the write (reemit_out.c), shared by the re-emission functions of
 * reemit.c.  Private to libnbg.
 */
#ifndef NBG_ANALYSIS_REEMIT_INTERNAL_H
#define NBG_ANALYSIS_REEMIT_INTERNAL_H

#include <pthread.h>

#include "analysis/ledger/ledger_internal.h"

/* Output offsets are read back in windows of this many bytes. */
#define NBG_REEMIT_WINDOW ((uint64_t)8 << 20)

typedef struct nbg_reemit_out {
	/* set by the caller (nbg_reemit_out_init) */
	const nbg_ledger *l;
	const uint8_t *data;  /* the bytes the ranges index, l->file_size long */
	const uint32_t *want; /* the CRC-32 each range must have as it goes out */
	int sha;              /* 1: the SHA-256 of the whole output while writing */
	int readback;         /* 1: read the written file back (nbg_reemit_out_verify) */

	/* results */
	uint8_t sha256[32];   /* with sha: of what was written */
	int cache_only;       /* a window was read from the page cache (atomic) */

	/* private */
	int fd, direct_fd;
	uint64_t windows;
	uint32_t *win_crc;      /* CRC-32 written into each window */
	uint8_t *buf;           /* the read-back window, page aligned */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t published;     /* windows written completely */
	uint64_t checked;       /* windows read back */
	int writer_done, stop;
	nbg_code rb_rc;         /* the read-back's verdict */
	nbg_error rb_err;
	pthread_t sha_thread, rb_thread;
	int sha_running, rb_running, sha_ok;
} nbg_reemit_out;

NBG_INTERNAL void nbg_reemit_out_init(nbg_reemit_out *o, const nbg_ledger *l,
				      const uint8_t *data, const uint32_t *want, int sha,
				      int readback);
/* Writes every range to fd, each CRC'd as it goes out and
 * compared with want (NBG_E_SEMANTIC_CHANGE_REFUSED when the input changed),
 * the SHA-256 and the read-back running beside it. */
NBG_INTERNAL nbg_code nbg_reemit_out_emit(int fd, void *ctx, nbg_error *err);
/* After the caller's fsync: waits for the read-back of every window (and
 * the SHA-256); NBG_E_IO when the file does not read back as written. */
NBG_INTERNAL nbg_code nbg_reemit_out_verify(int fd, void *ctx, nbg_error *err);
/* Stops and joins whatever still runs, frees; the SHA-256's verdict when
 * it was asked for (NBG_E_RESOURCE when OpenSSL failed). */
NBG_INTERNAL nbg_code nbg_reemit_out_finish(nbg_reemit_out *o, nbg_error *err);

#endif

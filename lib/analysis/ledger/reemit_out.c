/*
 * reemit_out.c - a ledger's ranges written out, with every check beside the
 * write instead of after it (doc/ledger.md, section 5):
 *
 *  - each range is CRC'd as it goes out, one pass, and the CRC compared with
 *    the one the range must have (the parser's, or the check's before
 *    writing): the bytes written are the bytes checked;
 *  - with `sha`, the SHA-256 of the whole output runs on a second thread
 *    over the same bytes while they are written;
 *  - with `readback`, a third thread follows the writer window by window
 *    (8 MiB of output each): it starts the window's writeback
 *    (sync_file_range), waits for it, and reads the window back from the
 *    device, with O_DIRECT on a second descriptor of the file, or, where
 *    the file system refuses direct I/O, buffered after
 *    posix_fadvise(DONTNEED) dropped the window's cached pages; each
 *    window's CRC-32 must be the one written there.  What the thread has not
 *    done when the writer ends (and everything, for small files) is done by
 *    nbg_reemit_out_verify, after the caller's fsync.
 *
 * Small outputs (under NBG_REEMIT_THREADED_MIN) run all of it on the
 * calling thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/ledger/reemit_internal.h"
#include "common/fdio.h"
#include "common/hash.h"

#define NBG_REEMIT_THREADED_MIN ((uint64_t)4 << 20)
#define NBG_REEMIT_ALIGN 4096
#define SHA_PIECE ((size_t)8 << 20)

void nbg_reemit_out_init(nbg_reemit_out *o, const nbg_ledger *l, const uint8_t *data,
			 const uint32_t *want, int sha, int readback)
{
	memset(o, 0, sizeof(*o));
	o->l = l;
	o->data = data;
	o->want = want;
	o->sha = sha;
	o->readback = readback;
	o->fd = o->direct_fd = -1;
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
}

/* ------------------------------------------------------------ SHA-256 */

/* The ranges tile [0, file_size) in order (every ledger is checked for
 * it), so the output is data[0..file_size). */
static void *sha_thread(void *arg)
{
	nbg_reemit_out *o = arg;
	uint64_t size = o->l->file_size;
	nbg_sha256_ctx s;

	nbg_sha256_begin(&s);
	for (uint64_t at = 0; at < size; at += SHA_PIECE) {
		if (__atomic_load_n(&o->stop, __ATOMIC_RELAXED))
			break;
		nbg_sha256_update(&s, o->data + at, size - at < SHA_PIECE ? size - at : SHA_PIECE);
	}
	nbg_sha256_end(&s, o->sha256);
	o->sha_ok = !__atomic_load_n(&o->stop, __ATOMIC_RELAXED);
	return NULL;
}

/* ---------------------------------------------------------- read-back */

static nbg_code readback_fail(nbg_reemit_out *o, uint64_t off, const char *what, int e)
{
	if (e)
		return nbg_error_io(&o->rb_err, e, off, "output",
				    "cannot read the output back at %llu (%s)",
				    (unsigned long long)off, what);
	return nbg_error_set(&o->rb_err, NBG_E_IO, off, "output", "%s", what);
}

/* Whether any page of [off, off+len) of the output is in the page cache
 * (mincore on a mapping of it); -1 when that cannot be told. */
static int window_cached(int fd, uint64_t off, uint64_t len)
{
	unsigned char vec[NBG_REEMIT_WINDOW / 4096];
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int any = 0;

	if (page < 4096 || !len)
		return -1;
	p = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		return -1;
	if (mincore(p, (size_t)len, vec) != 0)
		any = -1;
	for (uint64_t i = 0; any == 0 && i < (len + (uint64_t)page - 1) / (uint64_t)page; i++)
		any = vec[i] & 1;
	munmap(p, (size_t)len);
	return any;
}

/* Reads up to len bytes at off from fd into o->buf; direct: whole pages
 * (the file's end makes the last read short).  The bytes read, -1 with
 * errno. */
static ssize_t read_at(nbg_reemit_out *o, int fd, int direct, uint64_t off, uint64_t len)
{
	uint64_t got = 0;

	while (got < len) {
		uint64_t want = direct ? (len - got + NBG_REEMIT_ALIGN - 1) / NBG_REEMIT_ALIGN *
						 NBG_REEMIT_ALIGN
				       : len - got;
		ssize_t k = pread(fd, o->buf + got, (size_t)want, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (uint64_t)k;
		if (direct && (uint64_t)k % NBG_REEMIT_ALIGN)
			break;
	}
	return (ssize_t)(got > len ? len + 1 : got);
}

/* Reads [off, off+len) of the output as the device holds it into o->buf:
 * the window's writeback is waited for, its pages dropped from the page
 * cache, and, when mincore shows none left, read buffered (the read goes
 * to the device); else read with O_DIRECT; else (a file system that keeps
 * files in memory only) read from the cache, which is noted.  The bytes
 * read, or -1 with errno. */
static ssize_t read_window(nbg_reemit_out *o, uint64_t off, uint64_t len, int last)
{
#ifdef SYNC_FILE_RANGE_WRITE
	(void)sync_file_range(o->fd, (off_t)off, (off_t)len,
			      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				      SYNC_FILE_RANGE_WAIT_AFTER);
#endif
	/* length 0 reaches the end of the file: its last, partial page too */
	(void)posix_fadvise(o->fd, (off_t)off, last ? 0 : (off_t)len, POSIX_FADV_DONTNEED);
	if (window_cached(o->fd, off, len) == 0)
		return read_at(o, o->fd, 0, off, len);
	if (o->direct_fd >= 0) {
		ssize_t k = read_at(o, o->direct_fd, 1, off, len);
		if (k >= 0 || errno != EINVAL)
			return k;
		close(o->direct_fd); /* direct I/O refused after all */
		o->direct_fd = -1;
	}
	__atomic_store_n(&o->cache_only, 1, __ATOMIC_RELAXED);
	return read_at(o, o->fd, 0, off, len);
}

/* Window w: read back and compared with what was written there. */
static nbg_code check_window(nbg_reemit_out *o, uint64_t w)
{
	uint64_t off = w * NBG_REEMIT_WINDOW, size = o->l->file_size;
	uint64_t len = size - off < NBG_REEMIT_WINDOW ? size - off : NBG_REEMIT_WINDOW;
	ssize_t got = read_window(o, off, len, w + 1 == o->windows);
	uint32_t crc;

	if (got < 0)
		return readback_fail(o, off, "read failed", errno);
	if ((uint64_t)got != len)
		return readback_fail(o, off + (uint64_t)got,
				     "the written file reads back with a different size: output "
				     "discarded", 0);
	crc = nbg_crc32(0, o->buf, len);
	if (crc != o->win_crc[w])
		return nbg_error_set(&o->rb_err, NBG_E_IO, off, "output",
			     "the written file does not read back as written: bytes [%llu, %llu) "
			     "have CRC-32 0x%08x on the device, 0x%08x were written; output "
			     "discarded", (unsigned long long)off, (unsigned long long)(off + len),
			     crc, o->win_crc[w]);
	return NBG_OK;
}

static void *readback_thread(void *arg)
{
	nbg_reemit_out *o = arg;

	for (;;) {
		uint64_t w;
		pthread_mutex_lock(&o->mu);
		while (o->published <= o->checked && !o->writer_done && !o->stop)
			pthread_cond_wait(&o->cv, &o->mu);
		w = o->checked;
		int go = w < o->published && !o->stop && o->rb_rc == NBG_OK;
		pthread_mutex_unlock(&o->mu);
		if (!go)
			break;
		nbg_code rc = check_window(o, w);
		pthread_mutex_lock(&o->mu);
		o->rb_rc = rc;
		if (rc == NBG_OK)
			o->checked = w + 1;
		pthread_mutex_unlock(&o->mu);
	}
	return NULL;
}

/* The page-aligned window buffer, and a second descriptor of the output
 * with direct I/O for windows whose pages stay cached (none when the file
 * system has no direct I/O). */
static nbg_code readback_setup(nbg_reemit_out *o, nbg_error *err)
{
	char self[64];
	void *p = NULL;

	if (posix_memalign(&p, NBG_REEMIT_ALIGN, (size_t)NBG_REEMIT_WINDOW) != 0)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
				     "out of memory reading the output back");
	o->buf = p;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", o->fd);
	o->direct_fd = open(self, O_RDONLY | O_DIRECT | O_CLOEXEC);
	return NBG_OK;
}

/* -------------------------------------------------------------- write */

static nbg_code changed(nbg_error *err, const nbg_ledger_range *r, uint32_t got, uint32_t want)
{
	return nbg_error_set(err, NBG_E_SEMANTIC_CHANGE_REFUSED, r->offset, r->owner,
		     "the bytes of %s [%llu, %llu) changed while they were being written "
		     "(CRC-32 0x%08x, checked 0x%08x): another process is rewriting the "
		     "input; output refused", r->owner, (unsigned long long)r->offset,
		     (unsigned long long)(r->offset + r->size), got, want);
}

/* Window w is complete: the read-back thread may take it. */
static nbg_code publish(nbg_reemit_out *o, uint64_t w, uint32_t crc, nbg_error *err)
{
	nbg_code rc;

	o->win_crc[w] = crc;
#ifdef SYNC_FILE_RANGE_WRITE
	/* the window's writeback starts now; the read-back waits for its end */
	if (o->win_crc)
		(void)sync_file_range(o->fd, (off_t)(w * NBG_REEMIT_WINDOW),
				      (off_t)NBG_REEMIT_WINDOW, SYNC_FILE_RANGE_WRITE);
#endif
	pthread_mutex_lock(&o->mu);
	o->published = w + 1;
	rc = o->rb_rc;
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
	if (rc != NBG_OK && err)
		*err = o->rb_err;
	return rc;
}

/* Writes range i piece by piece (pieces end at window ends); *out is the
 * output offset, *wcrc the CRC of the current window so far. */
static nbg_code write_range(nbg_reemit_out *o, size_t i, uint64_t *out, uint32_t *wcrc,
			    nbg_sha256_ctx *inline_sha, nbg_error *err)
{
	const nbg_ledger_range *r = &o->l->ranges[i];
	uint32_t rcrc = 0;
	nbg_code rc;

	for (uint64_t k = 0; k < r->size;) {
		uint64_t room = NBG_REEMIT_WINDOW - *out % NBG_REEMIT_WINDOW;
		uint64_t n = r->size - k < room ? r->size - k : room;
		const uint8_t *p = o->data + r->offset + k;
		uint32_t c = nbg_crc32(0, p, n);

		rcrc = nbg_crc32_combine(rcrc, c, n);
		*wcrc = nbg_crc32_combine(*wcrc, c, n);
		if (inline_sha)
			nbg_sha256_update(inline_sha, p, n);
		if (!nbg_write_all(o->fd, p, n))
			return nbg_error_io(err, errno, r->offset + k, r->owner,
					    "writing %s [%llu, %llu) failed", r->owner,
					    (unsigned long long)r->offset,
					    (unsigned long long)(r->offset + r->size));
		k += n;
		*out += n;
		if (o->win_crc && (*out % NBG_REEMIT_WINDOW == 0 || *out == o->l->file_size)) {
			if ((rc = publish(o, (*out - 1) / NBG_REEMIT_WINDOW, *wcrc, err)) != NBG_OK)
				return rc;
			*wcrc = 0;
		}
	}
	return rcrc == o->want[i] ? NBG_OK : changed(err, r, rcrc, o->want[i]);
}

/* Starts the SHA-256 and read-back threads an output this large gets. */
static nbg_code start(nbg_reemit_out *o, nbg_error *err)
{
	uint64_t size = o->l->file_size;
	int threads = size >= NBG_REEMIT_THREADED_MIN;
	nbg_code rc;

	if (o->readback) {
		o->windows = (size + NBG_REEMIT_WINDOW - 1) / NBG_REEMIT_WINDOW;
		o->win_crc = calloc(o->windows ? o->windows : 1, sizeof(*o->win_crc));
		if (!o->win_crc)
			return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
		if ((rc = readback_setup(o, err)) != NBG_OK)
			return rc;
		o->rb_running = threads && o->windows > 1 &&
				pthread_create(&o->rb_thread, NULL, readback_thread, o) == 0;
	}
	if (o->sha)
		o->sha_running = threads && pthread_create(&o->sha_thread, NULL, sha_thread, o) == 0;
	return NBG_OK;
}

nbg_code nbg_reemit_out_emit(int fd, void *ctx, nbg_error *err)
{
	nbg_reemit_out *o = ctx;
	nbg_sha256_ctx s = { 0 };
	uint64_t out = 0;
	uint32_t wcrc = 0;
	nbg_code rc;

	o->fd = fd;
	if ((rc = start(o, err)) != NBG_OK)
		return rc;
	int inline_sha = o->sha && !o->sha_running;
	if (inline_sha)
		nbg_sha256_begin(&s);
	for (size_t i = 0; i < o->l->nranges && rc == NBG_OK; i++)
		rc = write_range(o, i, &out, &wcrc, inline_sha ? &s : NULL, err);
	if (inline_sha) {
		nbg_sha256_end(&s, o->sha256);
		o->sha_ok = rc == NBG_OK;
	}
	pthread_mutex_lock(&o->mu);
	o->writer_done = 1;
	if (rc != NBG_OK)
		o->stop = 1;
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
	return rc;
}

/* ------------------------------------------------------------- finish */

static void join(nbg_reemit_out *o)
{
	if (o->rb_running) {
		pthread_join(o->rb_thread, NULL);
		o->rb_running = 0;
	}
	if (o->sha_running) {
		pthread_join(o->sha_thread, NULL);
		o->sha_running = 0;
	}
}

nbg_code nbg_reemit_out_verify(int fd, void *ctx, nbg_error *err)
{
	nbg_reemit_out *o = ctx;
	struct stat st;

	join(o); /* the read-back thread ends once the windows it was given are done */
	if (o->rb_rc != NBG_OK) {
		if (err)
			*err = o->rb_err;
		return o->rb_rc;
	}
	if (fstat(fd, &st) != 0)
		return nbg_error_io(err, errno, 0, "output", "cannot stat the output");
	if ((uint64_t)st.st_size != o->l->file_size)
		return nbg_error_set(err, NBG_E_IO, (uint64_t)st.st_size, "output",
			     "the written file holds %llu bytes, %llu were written: output "
			     "discarded", (unsigned long long)st.st_size,
			     (unsigned long long)o->l->file_size);
	for (uint64_t w = o->checked; o->readback && w < o->windows; w++)
		if ((o->rb_rc = check_window(o, w)) != NBG_OK) {
			if (err)
				*err = o->rb_err;
			return o->rb_rc;
		}
	if (o->sha && !o->sha_ok)
		return nbg_error_set(err, NBG_E_RESOURCE, 0, "sha256",
				     "SHA-256 could not be computed");
	return NBG_OK;
}

nbg_code nbg_reemit_out_finish(nbg_reemit_out *o, nbg_error *err)
{
	nbg_code rc = NBG_OK;

	pthread_mutex_lock(&o->mu);
	o->stop = o->stop || !o->writer_done;
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
	join(o);
	if (o->sha && !o->sha_ok)
		rc = nbg_error_set(err, NBG_E_RESOURCE, 0, "sha256", "SHA-256 could not be computed");
	if (o->direct_fd >= 0)
		close(o->direct_fd);
	o->direct_fd = -1;
	free(o->win_crc);
	free(o->buf);
	o->win_crc = NULL;
	o->buf = NULL;
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	return rc;
}

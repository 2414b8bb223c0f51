/*
 * measure.c - one file of a corpus, measured: stat first (a path that is
 * not a regular file is never opened), open without blocking or taking a
 * terminal, check the size the walk saw, parse, check the digest a
 * manifest lists.  A small file is read whole into the item's buffer (a
 * read: a file truncated by someone else is a short read); a large one is
 * mapped (nbg_map_file), when the program installed the signal guards (a
 * mapping cut meanwhile reads zeros and is reported changed, never a
 * SIGBUS), so that
 * the size limit and the header checks come before any byte past the
 * structure is read: a 2 GiB sparse file with a wrong header costs what it
 * costs `nbg verify`, not a read of 2 GiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus_internal.h"

/* A buffer kept between files is given back when it is this much larger
 * than the file at hand. */
#define KEEP_LIMIT (64u << 20)
/* Files above this size are mapped, not read (when the guards are in). */
#define MAP_MIN ((uint64_t)1 << 20)

static nbg_code set_status(corpus_item *it, corpus_status st, nbg_code code)
{
	it->status = st;
	it->err.code = code;
	return code;
}

/* NBG_E_IO with errno and its text after the sentence, as libnbg says it. */
static nbg_code io_fail(corpus_item *it, const char *path, const char *what)
{
	int e = errno;
	corpus_error(&it->err, NBG_E_IO, 0, "file", "cannot %s %s: %s", what, path, strerror(e));
	it->err.sys_errno = e;
	return set_status(it, e == ENOENT || e == ENOTDIR ? CORPUS_VANISHED
							  : CORPUS_UNREADABLE,
			  NBG_E_IO);
}

static nbg_code changed(corpus_item *it, const char *path, uint64_t was, uint64_t now,
			const char *when)
{
	corpus_error(&it->err, NBG_E_FILE_CHANGED, 0, "file",
		     "%s changed %s: %" PRIu64 " bytes before, %" PRIu64 " bytes now; measure it "
		     "again once nothing writes to it", path, when, was, now);
	return set_status(it, CORPUS_CHANGED, NBG_E_FILE_CHANGED);
}

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	     : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static int ensure_buffer(corpus_item *it, size_t need)
{
	if (it->cap >= need && !(it->cap > KEEP_LIMIT && it->cap / 4 > need))
		return 1;
	void *p = realloc(it->buf, need);
	if (!p && it->cap < need)
		return 0;
	if (p) {
		it->buf = p;
		it->cap = need;
	}
	return 1;
}

/* Reads up to `want` bytes; returns how many, or -1 with errno. */
static int64_t read_all(int fd, uint8_t *buf, size_t want)
{
	size_t got = 0;
	while (got < want) {
		ssize_t r = read(fd, buf + got, want - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (int64_t)got;
}

/* Maps the regular file `st` describes, opened and checked already
 * (nbg_map_file: registered with the SIGBUS guard like every mapping); a
 * file that is no longer that one is `changed`. */
static nbg_code map_file(corpus_item *it, const char *path, const struct stat *st)
{
	nbg_error e;
	nbg_code rc = nbg_map_file(path, &it->map, &e);

	if (rc == NBG_E_IO) {
		errno = e.sys_errno;
		return io_fail(it, path, "map");
	}
	if (rc != NBG_OK || it->map.size != (uint64_t)st->st_size) {
		uint64_t now = rc == NBG_OK ? it->map.size : 0;
		nbg_unmap_file(&it->map);
		return changed(it, path, (uint64_t)st->st_size, now,
			       "(was replaced) between stat and open");
	}
	it->size = (uint64_t)st->st_size;
	return NBG_OK;
}

/* Opens and reads the regular file `st` describes into the item's buffer. */
static nbg_code read_file(corpus_item *it, const char *path, const struct stat *st,
			  int map_large)
{
	struct stat fst;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return io_fail(it, path, "open");
	if (fstat(fd, &fst) != 0) {
		nbg_code rc = io_fail(it, path, "stat");
		close(fd);
		return rc;
	}
	if (fst.st_dev != st->st_dev || fst.st_ino != st->st_ino || !S_ISREG(fst.st_mode) ||
	    fst.st_size != st->st_size) {
		close(fd);
		return changed(it, path, (uint64_t)st->st_size,
			       S_ISREG(fst.st_mode) ? (uint64_t)fst.st_size : 0,
			       "(was replaced) between stat and open");
	}
	if ((uint64_t)fst.st_size > MAP_MIN && (uint64_t)fst.st_size < SIZE_MAX && map_large) {
		close(fd);
		return map_file(it, path, &fst);
	}
	/* One byte more than the size: a file that grows is seen to grow. */
	if ((uint64_t)fst.st_size >= SIZE_MAX || !ensure_buffer(it, (size_t)fst.st_size + 1)) {
		close(fd);
		corpus_error(&it->err, NBG_E_OUT_OF_MEMORY, 0, "file",
			     "%s: no memory for its %" PRIu64 " bytes", path, (uint64_t)fst.st_size);
		return set_status(it, CORPUS_UNREADABLE, NBG_E_OUT_OF_MEMORY);
	}
	int64_t got = read_all(fd, it->buf, (size_t)fst.st_size + 1);
	if (got < 0) {
		nbg_code rc = io_fail(it, path, "read");
		close(fd);
		return rc;
	}
	close(fd);
	if ((uint64_t)got != (uint64_t)fst.st_size)
		return changed(it, path, (uint64_t)fst.st_size, (uint64_t)got, "while it was read");
	it->size = (uint64_t)got;
	return NBG_OK;
}

static void digest_mismatch(corpus_item *it, const char *path, const uint8_t want[32])
{
	char have_hex[65], want_hex[65];
	nbg_hex32(it->sha256, have_hex);
	nbg_hex32(want, want_hex);
	nbg_model_free(it->model);
	it->model = NULL;
	corpus_error(&it->err, NBG_E_DIGEST_MISMATCH, 0, "file",
		     "%s has SHA-256 %s, the manifest lists %s: these are not the bytes it pins",
		     path, have_hex, want_hex);
	set_status(it, CORPUS_DIGEST_MISMATCH, NBG_E_DIGEST_MISMATCH);
}

/* A mapped file whose size changed while it was parsed: what was read past
 * a new end is zeros, and a file that grew was not read whole. */
static int resized(const corpus_item *it, const char *path)
{
	struct stat st;

	return nbg_mapping_changed(&it->map) ||
	       (stat(path, &st) == 0 && (uint64_t)st.st_size != it->size);
}

corpus_item *corpus_item_new(void)
{
	return calloc(1, sizeof(corpus_item));
}

nbg_code corpus_measure(corpus_item *it, const char *path,
			const corpus_expect *expect)
{
	if (!it || !path) {
		if (it)
			corpus_error(&it->err, NBG_E_INVALID_ARGUMENT, 0, "path", "no path was given");
		return NBG_E_INVALID_ARGUMENT;
	}
	void *buf = it->buf;
	size_t cap = it->cap;
	static const nbg_parse_options one_thread = { sizeof(one_thread), NBG_PARSE_ONE_THREAD, 0, 0 };
	static const corpus_expect nothing;
	const corpus_expect *exp = expect ? expect : &nothing;
	nbg_parse_options po = one_thread;
	struct stat st;
	nbg_code rc;
	int read_whole;

	nbg_model_free(it->model);
	nbg_unmap_file(&it->map);
	memset(it, 0, sizeof(*it));
	it->buf = buf;
	it->cap = cap;
	po.max_file_size = exp->max_file_size;
	po.max_undescribed = exp->max_undescribed;
	it->err.index = -1;
	if (stat(path, &st) != 0)
		return io_fail(it, path, "stat");
	if (!S_ISREG(st.st_mode)) {
		corpus_error(&it->err, NBG_E_NOT_REGULAR_FILE, 0, "file",
			     "%s is %s, not a regular file: it is not opened", path,
			     kind_of(st.st_mode));
		return set_status(it, CORPUS_NOT_REGULAR, NBG_E_NOT_REGULAR_FILE);
	}
	it->has_size = 1;
	it->size = (uint64_t)st.st_size;
	if (exp->has_size && exp->file_size != (uint64_t)st.st_size)
		return changed(it, path, exp->file_size, (uint64_t)st.st_size,
			       "between the walk and reading it");
	if ((rc = read_file(it, path, &st, exp->map_large)) != NBG_OK)
		return rc;
	const uint8_t *data = it->map.data ? it->map.data : it->buf;

	rc = nbg_parse_reached(data, (size_t)it->size, &po, &it->model, &it->err, &read_whole);
	if (it->map.data && resized(it, path)) {
		struct stat now;
		nbg_model_free(it->model);
		it->model = NULL;
		return changed(it, path, it->size,
			       stat(path, &now) == 0 ? (uint64_t)now.st_size : 0, "while it was read");
	}
	it->status = rc == NBG_OK ? CORPUS_VALID : CORPUS_INVALID;
	if (rc == NBG_OK) {
		memcpy(it->sha256, nbg_model_file_sha256(it->model), 32);
	} else if (read_whole || !it->map.data) {
		nbg_sha256_bytes(data, (size_t)it->size, it->sha256); /* read already */
	} else {
		return it->err.code; /* refused on its structure: not read, not hashed */
	}
	it->has_sha256 = 1;
	if (exp->has_sha256 && memcmp(exp->sha256, it->sha256, 32))
		digest_mismatch(it, path, exp->sha256);
	return it->err.code;
}

nbg_code corpus_add_item(corpus_agg *c, const corpus_item *it)
{
	if (!c)
		return NBG_E_INVALID_ARGUMENT;
	if (it->status == CORPUS_VALID)
		return corpus_add_model(c, it->model);
	if (it->status == CORPUS_INVALID)
		return corpus_add_failure(c, it->err.code);
	return corpus_add_unmeasured(c, it->status);
}

int corpus_item_exit(const corpus_item *it)
{
	if (!it)
		return NBG_EXIT_USAGE;
	if (it->status == CORPUS_VALID)
		return NBG_EXIT_OK;
	if (it->status == CORPUS_INVALID || it->status == CORPUS_DIGEST_MISMATCH)
		return it->err.code == NBG_E_OUT_OF_MEMORY ? NBG_EXIT_IO : NBG_EXIT_INVALID;
	return NBG_EXIT_IO;
}

void corpus_item_free(corpus_item *it)
{
	if (!it)
		return;
	nbg_model_free(it->model);
	nbg_unmap_file(&it->map);
	free(it->buf);
	free(it);
}

corpus_status corpus_item_status(const corpus_item *it)
{
	return it ? it->status : CORPUS_STATUS_COUNT;
}

const nbg_error *corpus_item_error(const corpus_item *it)
{
	return it ? &it->err : NULL;
}

int corpus_item_size(const corpus_item *it, uint64_t *size)
{
	if (!it)
		return 0;
	if (it->has_size && size)
		*size = it->size;
	return it->has_size;
}

int corpus_item_sha256(const corpus_item *it, uint8_t out[32])
{
	if (!it)
		return 0;
	if (it->has_sha256 && out)
		memcpy(out, it->sha256, 32);
	return it->has_sha256;
}

const nbg_model *corpus_item_model(const corpus_item *it)
{
	return it && it->status == CORPUS_VALID ? it->model : NULL;
}

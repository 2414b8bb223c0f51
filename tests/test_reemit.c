/*
 * test_reemit.c - nbg_reemit_model, the re-emission `nbg reemit FILE OUT`
 * does, by what it does rather than how long it takes:
 *
 *  - the output is the input, byte for byte, and the SHA-256 it reports is
 *    the file's (computed here with OpenSSL);
 *  - every byte is hashed once: parse (without SHA-256) and re-emission
 *    together feed SHA-256 exactly the file's size (nbg_digest_counts), and
 *    CRC-32 the parse's CRCs, then the write and the read-back, each once;
 *  - the read-back is a real check: the file is read back after its pages
 *    were dropped from the page cache (posix_fadvise DONTNEED precedes the
 *    read of every window, which starts after the window was written back;
 *    both interposed below), and one flipped byte in what is read back
 *    fails the re-emission (the caller then discards the output: `nbg
 *    reemit` never renames it over OUT, tests/test_hostile.c);
 *  - an input that changes after the parse is refused at the range that
 *    changed.
 *
 * Synthesized files (the fixture, and one of 20 MiB so that the threads and
 * several read-back windows are used) and, in the part --corpus, every real
 * file.
 */
#define NBG_STATIC_LINKING_ONLY /* nbg_digest_counts */

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"

/* ------------------------------------------- pread and fadvise, watched */

static long flip_at = -1;       /* the read-back's read (0, 1, ...) to flip a byte in */
static unsigned long reads, drops, reads_after_drop;
static int dropped;             /* a DONTNEED came before the next read */

/* Only the read-back calls pread and posix_fadvise while a re-emission
 * runs (the input is mapped; other files are read with read(2)). */
static ssize_t watch_read(void *buf, ssize_t k)
{
	if (k > 0) {
		if ((long)reads == flip_at)
			((unsigned char *)buf)[k / 2] ^= 0x40;
		reads++;
		reads_after_drop += dropped;
		dropped = 0;
	}
	return k;
}

/* With _FILE_OFFSET_BITS=64 (meson's default) the headers name these
 * pread64 and posix_fadvise64: so does libnbg, and so do the definitions
 * here, which the dynamic linker binds libnbg's calls to. */
__attribute__((visibility("default"))) ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, sizeof(off_t) == 8 ? "pread64" : "pread");
	return watch_read(buf, real(fd, buf, n, off));
}

__attribute__((visibility("default"))) int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	static int (*real)(int, off_t, off_t, int);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, sizeof(off_t) == 8 ? "posix_fadvise64"
								   : "posix_fadvise");
	if (advice == POSIX_FADV_DONTNEED) {
		drops++;
		dropped = 1;
	}
	return real(fd, off, len, advice);
}

static void watch_reset(void)
{
	flip_at = -1;
	reads = drops = reads_after_drop = 0;
	dropped = 0;
}

/* ------------------------------------------------------------ helpers */

static char dir[] = "/tmp/nbg-test-reemit-XXXXXX";

static const char *in_dir(const char *name)
{
	static char p[8][4200];
	static int k;
	char *s = p[k++ % 8];
	snprintf(s, sizeof(p[0]), "%s/%s", dir, name);
	return s;
}

static void openssl_sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
	unsigned len = 32;
	assert_int_equal(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL), 1);
}

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static nbg_model *parse_lean(const uint8_t *b, size_t size)
{
	nbg_parse_options o = { .size = sizeof(o),
				.flags = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 };
	nbg_model *m = NULL;
	nbg_error err;

	if (nbg_parse(b, size, &o, &m, &err) != NBG_OK)
		fail_msg("parse: %s", err.message);
	return m;
}

/* Bytes no section payload holds (headers, directory, gaps): the ranges
 * whose CRC the parser did not compute, read from the raw directory of a
 * v2 file (offset 48: directory offset, entry size, count; each entry
 * holds the payload offset at +4 and size at +12). */
static uint64_t v2_non_payload(const uint8_t *b, uint64_t size)
{
	uint32_t dir_off = fx_get32(b + 48), esz = fx_get32(b + 52), n = fx_get32(b + 56);
	uint64_t payload = 0;

	for (uint32_t i = 0; i < n; i++)
		payload += fx_get32(b + dir_off + esz * i + 12);
	return size - payload;
}

/* A new output file, open for reading and writing (the read-back reads it). */
static int open_out(const char *name)
{
	int fd = open(in_dir(name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	return fd;
}

/* One file re-emitted: identical, the SHA-256 OpenSSL computes, each byte
 * hashed once.  non_payload: the bytes outside section payloads, or
 * UINT64_MAX when unknown (v1: checked against an upper bound). */
static void reemit_one(const uint8_t *b, size_t size, uint64_t non_payload, unsigned flags)
{
	nbg_reemit_info info = { .size = sizeof(info) };
	uint64_t sha0, crc0, sha1, crc1, sha2, crc2;
	uint8_t want[32];
	nbg_error err;
	nbg_model *m;
	size_t n;

	nbg_digest_counts(&sha0, &crc0);
	m = parse_lean(b, size);
	nbg_digest_counts(&sha1, &crc1);
	watch_reset();
	int fd = open_out("out.nb");
	if (nbg_reemit_model(m, fd, flags, &info, &err) != NBG_OK)
		fail_msg("reemit: %s", err.message);
	assert_int_equal(close(fd), 0);
	nbg_digest_counts(&sha2, &crc2);
	uint8_t *copy = fx_read_file(in_dir("out.nb"), &n);
	assert_non_null(copy);
	assert_int_equal(n, size);
	assert_memory_equal(copy, b, size);
	free(copy);
	openssl_sha256(b, size, want);
	assert_memory_equal(info.sha256, want, 32);
	assert_int_equal(info.bytes, size);

	/* SHA-256: the whole file once, nothing in the parse */
	assert_int_equal(sha1 - sha0, 0);
	assert_int_equal(sha2 - sha1, size);
	/* CRC-32: the write once, the read-back once, and the bytes outside
	 * section payloads (the parser's CRCs cover the payloads) */
	uint64_t rb = flags & NBG_REEMIT_READBACK ? size : 0;
	if (non_payload != UINT64_MAX)
		assert_int_equal(crc2 - crc1, size + rb + non_payload);
	else
		assert_true(crc2 - crc1 <= 2 * size + rb);
	if (!(flags & NBG_REEMIT_READBACK)) {
		assert_int_equal(info.readback, NBG_READBACK_NONE);
		assert_int_equal(reads, 0);
	} else {
		assert_true(info.readback == NBG_READBACK_DEVICE ||
			    info.readback == NBG_READBACK_CACHE);
		/* every window: dropped, then read */
		assert_true(reads > 0);
		assert_int_equal(reads_after_drop, drops);
		assert_true(drops >= (size + ((uint64_t)8 << 20) - 1) / ((uint64_t)8 << 20));
	}
	nbg_model_free(m);
	assert_int_equal(unlink(in_dir("out.nb")), 0);
	assert_int_equal(entries(), 0);
}

static uint8_t *big_file(size_t *size)
{
	fx_spec *s = fx_default();
	fx_section *c = fx_find(s, 24);
	fx_resize(c, (size_t)20 << 20);
	for (size_t i = 0; i < c->size; i++)
		c->data[i] = (uint8_t)(i * 2654435761u >> 13);
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

/* -------------------------------------------------------------- tests */

static void test_synthesized(void **state)
{
	fx_spec *s = fx_default();
	size_t size;
	uint8_t *b = fx_build(s, &size);

	(void)state;
	fx_free(s);
	reemit_one(b, size, v2_non_payload(b, size), NBG_REEMIT_READBACK);
	reemit_one(b, size, v2_non_payload(b, size), 0);
	free(b);
	b = big_file(&size);
	reemit_one(b, size, v2_non_payload(b, size), NBG_REEMIT_READBACK);
	reemit_one(b, size, v2_non_payload(b, size), 0);
	free(b);
}

/* arg: 1 for a v2 file (the bytes outside payloads known exactly), 0 v1 */
static void corpus_one(const char *path, void *arg)
{
	size_t size;
	uint8_t *b = fx_read_file(path, &size);

	assert_non_null(b);
	reemit_one(b, size, *(int *)arg ? v2_non_payload(b, size) : UINT64_MAX,
		   NBG_REEMIT_READBACK);
	free(b);
}

static void test_corpus(void **state)
{
	int v2 = 1, v1 = 0;
	unsigned files;

	(void)state;
	files = tc_each_corpus_file("v2", corpus_one, &v2) +
		tc_each_corpus_file("v1", corpus_one, &v1);
	print_message("%u real files re-emitted, each byte SHA-256'd once\n", files);
	assert_true(files > 0);
}

/* A byte that reads back changed, in the first window or the second: the
 * re-emission fails and says where. */
static void test_readback_mismatch(void **state)
{
	size_t size;
	uint8_t *b = big_file(&size);
	nbg_model *m = parse_lean(b, size);
	nbg_error err;

	(void)state;
	for (long at = 0; at < 2; at++) {
		watch_reset();
		flip_at = at;
		int fd = open_out("out.nb");
		assert_int_equal(nbg_reemit_model(m, fd, NBG_REEMIT_READBACK, NULL, &err), NBG_E_IO);
		assert_non_null(strstr(err.message, "does not read back as written"));
		assert_int_equal(err.offset, (uint64_t)at << 23); /* the 8 MiB window */
		close(fd);
		unlink(in_dir("out.nb"));
	}
	watch_reset();
	nbg_model_free(m);
	free(b);
}

/* The input changes between the parse and the write: refused at the range
 * that changed. */
static void test_input_changed(void **state)
{
	size_t size;
	uint8_t *b = big_file(&size);
	nbg_model *m = parse_lean(b, size);
	const nbg_section *coef = nbg_model_section(m, NBG_SEC_COEF_DATA);
	nbg_error err;

	(void)state;
	assert_non_null(coef);
	b[coef->offset + coef->size / 2] ^= 1;
	int fd = open_out("out.nb");
	assert_int_equal(nbg_reemit_model(m, fd, NBG_REEMIT_READBACK, NULL, &err),
			 NBG_E_SEMANTIC_CHANGE_REFUSED);
	assert_int_equal(err.offset, coef->offset);
	assert_non_null(strstr(err.message, "changed while they were being written"));
	close(fd);
	unlink(in_dir("out.nb"));
	assert_int_equal(entries(), 0);
	nbg_model_free(m);
	free(b);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthesized),
		cmocka_unit_test(test_readback_mismatch),
		cmocka_unit_test(test_input_changed),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus),
	};
	return tc_main(argc, argv, "test_reemit", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), setup, teardown);
}

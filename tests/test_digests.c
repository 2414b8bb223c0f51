/*
 * test_digests.c - the parse flags that leave out the SHA-256 digests, and
 * `nbg verify` with and without --sha256.
 *
 * How many SHA-256 computations a parse starts is counted by interposing
 * OpenSSL's two entry points that libnbg hashes through (EVP_Digest and
 * EVP_DigestInit_ex): this executable defines them, libnbg finds them first
 * when it looks OpenSSL's functions up in the global scope, and they
 * forward to libcrypto (dlsym RTLD_NEXT).  pthread_create and dlopen are
 * interposed the same way, through the dynamic linker.
 * Expected digests are computed here with OpenSSL on the raw file bytes,
 * expected CRC-32s with zlib.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <zlib.h>

#include "corpus.h"
#include "exe_wrapper.h"
#include "fixture.h"
#include "nbg/ledger.h"
#include "nbg/nbg.h"

/* SHA-256 with OpenSSL, called here directly (libnbg's counts do not see
 * it). */
static void openssl_sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
	unsigned len = 32;
	assert_int_equal(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL), 1);
}

static int all_zero(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i])
			return 0;
	return 1;
}

/* Parses buf with `flags` and checks the digests: computed and equal to
 * OpenSSL's when asked for, all zero, marked and not computed when not. */
static void check_flags(const uint8_t *buf, size_t size, unsigned flags)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	nbg_model *m = NULL;
	nbg_error err;
	uint8_t want[32];

	uint64_t before, after, sections = 0;
	nbg_digest_counts(&before, NULL);
	assert_int_equal(nbg_parse(buf, size, &o, &m, &err), NBG_OK);
	nbg_digest_counts(&after, NULL);
	assert_int_equal(m->sha256_skipped,
			 flags & (NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256));
	openssl_sha256(buf, size, want);
	if (flags & NBG_PARSE_NO_FILE_SHA256)
		assert_true(all_zero(m->file_sha256, 32));
	else
		assert_memory_equal(m->file_sha256, want, 32);
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (flags & NBG_PARSE_NO_SECTION_SHA256) {
			assert_true(all_zero(s->sha256, 32));
		} else {
			openssl_sha256(buf + s->offset, (size_t)s->size, want);
			assert_memory_equal(s->sha256, want, 32);
		}
	}
	for (size_t i = 0; i < m->section_count; i++)
		sections += nbg_model_section_at(m, i)->size;
	/* the bytes SHA-256 saw (OpenSSL's or the portable code's): none when
	 * both are skipped, at least the file and every section when neither is */
	if ((flags & NBG_PARSE_NO_SECTION_SHA256) && (flags & NBG_PARSE_NO_FILE_SHA256))
		assert_int_equal(after - before, 0);
	else if (!flags)
		assert_true(after - before >= size + sections);
	/* a model without its fingerprints makes no ledger */
	nbg_ledger *l = NULL;
	nbg_code lrc = nbg_ledger_build(m, &l, &err);
	if (flags)
		assert_int_equal(lrc, NBG_E_LEDGER_INVARIANT);
	else
		assert_int_equal(lrc, NBG_OK);
	nbg_ledger_free(l);
	nbg_model_free(m);
}

static void check_all_flags(const uint8_t *buf, size_t size)
{
	check_flags(buf, size, 0);
	check_flags(buf, size, NBG_PARSE_NO_FILE_SHA256);
	check_flags(buf, size, NBG_PARSE_NO_SECTION_SHA256);
	check_flags(buf, size, NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256);
}

static void test_flags_fixture(void **state)
{
	(void)state;
	size_t n;
	fx_spec *s = fx_default();
	/* 2 MiB of coefficients: the whole-file hash runs on its own thread */
	fx_resize(fx_find(s, 24), (size_t)2 << 20);
	uint8_t *buf = fx_build(s, &n);
	check_all_flags(buf, n);
	free(buf);
	fx_free(s);
}

static unsigned long threads_started;

/* Counts the threads libnbg starts (the same interposition as above). */
__attribute__((visibility("default")))
int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	__atomic_add_fetch(&threads_started, 1, __ATOMIC_SEQ_CST);
	return real(t, attr, fn, arg);
}

/* Parses buf with flags; every section's CRC-32 must be zlib's over its
 * bytes here, each byte CRC'd once (the CHECKSUM section twice: as it is,
 * and with its value words read as zero for the header checksum), and
 * `threads` threads started. */
static void check_crcs(const uint8_t *buf, size_t size, unsigned flags, unsigned long threads)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	nbg_model *m = NULL;
	nbg_error err;
	uint64_t crc0, crc1, want = 0;

	nbg_digest_counts(NULL, &crc0);
	threads_started = 0;
	assert_int_equal(nbg_parse(buf, size, &o, &m, &err), NBG_OK);
	assert_int_equal(threads_started, threads);
	nbg_digest_counts(NULL, &crc1);
	for (size_t i = 0; i < m->section_count; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		assert_int_equal(s->crc32, (uint32_t)crc32(0, buf + s->offset, (uInt)s->size));
		want += s->size * (s->type == NBG_SEC_CHECKSUM ? 2 : 1);
	}
	assert_int_equal(crc1 - crc0, want);
	nbg_model_free(m);
}

/* With the whole-file SHA-256 not wanted, a parse of 1 MiB or more CRCs
 * half the bytes on a second thread, wherever the half falls (within the
 * coefficients, within the PPU instructions, near their boundary); the
 * CRCs are the same as on one thread, and NBG_PARSE_ONE_THREAD starts no
 * thread at all. */
static void test_crc_split(void **state)
{
	static const size_t coef[] = { 1u << 20, (1u << 20) + 1, (3u << 20) + 7, 600000, 4096 };
	static const size_t ppu[] = { 4096, 12345, (1u << 20) + 3, 700001, (2u << 20) + 5 };
	const unsigned verify = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256;

	(void)state;
	srand(7);
	for (size_t k = 0; k < sizeof(coef) / sizeof(coef[0]); k++) {
		fx_spec *s = fx_default();
		uint8_t *a = malloc(coef[k]), *b = malloc(ppu[k]);
		size_t n;
		assert_true(a && b);
		for (size_t i = 0; i < coef[k]; i++)
			a[i] = (uint8_t)rand();
		for (size_t i = 0; i < ppu[k]; i++)
			b[i] = (uint8_t)rand();
		fx_set(s, NBG_SEC_COEF_DATA, a, coef[k], fx_find(s, NBG_SEC_COEF_DATA)->align, 0);
		fx_set(s, NBG_SEC_PPU_INSTR, b, ppu[k], fx_find(s, NBG_SEC_PPU_INSTR)->align, 0);
		uint8_t *buf = fx_build(s, &n);
		assert_true(n >= (1u << 20));
		check_crcs(buf, n, verify, 1);
		check_crcs(buf, n, verify | NBG_PARSE_ONE_THREAD, 0);
		/* the whole-file hash takes the second core: CRCs stay on this one */
		check_crcs(buf, n, 0, 1);
		check_crcs(buf, n, NBG_PARSE_ONE_THREAD, 0);
		free(buf);
		free(a);
		free(b);
		fx_free(s);
	}
}

static int fail_libcrypto;
static unsigned long libcrypto_loads;

/* Counts libnbg's loads of OpenSSL's library, and makes them fail on
 * demand (the same interposition as above). */
__attribute__((visibility("default")))
void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	if (file && strstr(file, "libcrypto")) {
		__atomic_add_fetch(&libcrypto_loads, 1, __ATOMIC_SEQ_CST);
		if (fail_libcrypto)
			return NULL;
	}
	return real(file, mode);
}

/* A parse of buf with every digest, each compared with OpenSSL's (linked
 * into this program); 0 when they all match. */
static int digests_match(const uint8_t *buf, size_t n)
{
	nbg_model *m = NULL;
	nbg_error err;
	uint8_t want[32];
	int bad;

	if (nbg_parse(buf, n, NULL, &m, &err) != NBG_OK)
		return 1;
	openssl_sha256(buf, n, want);
	bad = memcmp(m->file_sha256, want, 32) != 0;
	for (size_t i = 0; i < m->section_count && !bad; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		openssl_sha256(buf + s->offset, (size_t)s->size, want);
		bad = memcmp(s->sha256, want, 32) != 0;
	}
	nbg_model_free(m);
	return bad;
}

/* A 2 MiB synthesized file: more than the portable SHA-256 is given. */
static uint8_t *big_file(size_t *n)
{
	fx_spec *s = fx_default();
	fx_resize(fx_find(s, 24), (size_t)2 << 20);
	uint8_t *b = fx_build(s, n);
	fx_free(s);
	return b;
}

/* The checks of lazy_child, in order; 0 or the number of the first that
 * did not hold.  big_first: the first parse with digests is of a 2 MiB
 * file, else of the sample (5 KiB). */
static int lazy_checks(int big_first, const uint8_t *buf, size_t n)
{
	const unsigned verify = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256;
	nbg_parse_options o = { .size = sizeof(o), .flags = verify };
	nbg_model *m = NULL;
	nbg_error err;
	size_t big_n;
	uint8_t *big = big_file(&big_n);
	int r = 0;

	if (!big)
		return 18;
	/* what nbg verify parses with: OpenSSL is not loaded */
	if (nbg_parse(buf, n, &o, &m, &err) != NBG_OK)
		r = 11;
	nbg_model_free(m);
	if (!r && libcrypto_loads != 0)
		r = 12;
	if (!r && big_first) {
		/* a parse that hashes more than the portable allowance loads
		 * OpenSSL at once, and only once */
		if (digests_match(big, big_n) || digests_match(big, big_n))
			r = 13;
		else if (libcrypto_loads != 1)
			r = 14;
	} else if (!r) {
		/* the sample's digests (about 10 KiB) are the portable ones:
		 * OpenSSL is not loaded */
		if (digests_match(buf, n))
			r = 15;
		else if (libcrypto_loads != 0)
			r = 16;
		/* parse after parse, the allowance (512 KiB) runs out: then
		 * OpenSSL is loaded, once; every digest is right either way */
		for (int i = 0; i < 80 && !r; i++)
			if (digests_match(buf, n))
				r = 17;
		if (!r && libcrypto_loads != 1)
			r = 21;
		if (!r && (digests_match(big, big_n) || libcrypto_loads != 1))
			r = 19;
	}
	free(big);
	return r;
}

/* The child of test_libcrypto_lazy, a fresh process (libnbg loads OpenSSL
 * once per process): `fail` says whether the load fails (the process has
 * OpenSSL's functions all the same: it links libcrypto, and they serve;
 * test_no_libcrypto.c is a process without them).  Exits 0 when every
 * check held, else the number of the first that did not. */
static int lazy_child(int fail, int big_first)
{
	size_t n;
	uint8_t *buf = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &n);
	int r;

	if (!buf)
		return 10;
	fail_libcrypto = fail;
	r = lazy_checks(big_first, buf, n);
	free(buf);
	return r;
}

/* OpenSSL is loaded when a process has hashed more than the portable
 * implementation's allowance, or is about to, and not before, and once;
 * when its library cannot be loaded, OpenSSL's functions already in the
 * process serve.  Each case is a fresh process. */
static void test_libcrypto_lazy(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++) {
		char mode[3] = { (char)('0' + (k & 1)), (char)('0' + (k >> 1)), 0 };
		char *argv[] = { "test_digests", "--lazy-child", mode, NULL };
		int status = 0;
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			nbg_exec_self(argv);
			_exit(127);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status))
			print_error("lazy child (fail=%d, big first=%d): check %d failed\n", k & 1,
				    k >> 1, WEXITSTATUS(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void corpus_files(const char *family, void (*fn)(const char *path), int *done)
{
	char list[1024];
	snprintf(list, sizeof(list), "ls %s/%s/*.nb 2>/dev/null", NBG_CORPUS_DIR, family);
	FILE *p = popen(list, "r");
	char path[1024];
	while (p && fgets(path, sizeof(path), p)) {
		path[strcspn(path, "\n")] = '\0';
		fn(path);
		++*done;
	}
	if (p)
		pclose(p);
}

static void flags_on_file(const char *path)
{
	size_t n;
	uint8_t *buf = fx_read_file(path, &n);
	assert_non_null(buf);
	check_all_flags(buf, n);
	free(buf);
}

static void test_flags_corpus(void **state)
{
	(void)state;
	int done = 0;
	corpus_files("v2", flags_on_file, &done);
	corpus_files("v1", flags_on_file, &done);
	assert_true(done > 0);
}

/* `nbg verify --sha256 PATH` (prefix: what the shell line starts with, an
 * environment) passes, and its line ends with the SHA-256 OpenSSL computes
 * here. */
static void check_verify_sha256(const char *prefix, const char *path)
{
	size_t n;
	uint8_t *buf = fx_read_file(path, &n), d[32];
	char want[80] = " sha256 ";
	assert_non_null(buf);
	openssl_sha256(buf, n, d);
	for (int i = 0; i < 32; i++)
		snprintf(want + 8 + 2 * i, 3, "%02x", d[i]);
	/* then what proved the bytes, in brackets (test_integrity.c) */
	strcat(want, " (");

	fx_run_result r = fx_run_nbg(prefix, "verify --sha256 '%s'", path);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, want))
		fail_msg("no \"%s\" in %s", want, r.out);
	fx_run_free(&r);
	free(buf);
}

/* verify prints no sha256 field by default; --sha256 prints OpenSSL's digest. */
static void verify_on_file(const char *path)
{
	fx_run_result r = fx_run_nbg("", "verify '%s'", path);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ": OK v"));
	assert_null(strstr(r.out, "sha256"));
	fx_run_free(&r);
	check_verify_sha256("", path);
}

static void test_verify_sha256_option(void **state)
{
	(void)state;
	verify_on_file(NBG_SOURCE_DIR "/samples/sample.nb");
}

static void test_verify_sha256_corpus(void **state)
{
	(void)state;
	int done = 0;
	corpus_files("v2", verify_on_file, &done);
	corpus_files("v1", verify_on_file, &done);
	assert_true(done > 0);
}

/* The child of test_broken_openssl: a fresh process whose OpenSSL reads
 * the broken configuration at its first use, in libnbg, which does not
 * initialize it standalone here.  Every digest of a 2 MiB file must still
 * be right (the portable code serves where EVP fails), checked against
 * sha256sum, since this process's OpenSSL is broken too.  0, or the number
 * of the first check that did not hold. */
static int broken_conf_child(void)
{
	size_t n;
	uint8_t *big = big_file(&n);
	nbg_model *m = NULL;
	nbg_error err;
	int r = 0;

	if (!big || nbg_parse(big, n, NULL, &m, &err) != NBG_OK)
		r = 31;
	if (!r && !fx_sha256sum_is(m->file_sha256, big, n))
		r = 32;
	for (size_t i = 0; !r && i < m->section_count; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (!fx_sha256sum_is(s->sha256, big + s->offset, (size_t)s->size))
			r = 33;
	}
	nbg_model_free(m);
	free(big);
	return r;
}

static void test_broken_openssl(void **state)
{
	static const char conf[] = "config_diagnostics = 1\nopenssl_conf = init\n"
				   "[init]\nproviders = prov\n[prov]\nnosuch = nosuch\n"
				   "[nosuch]\nactivate = 1\n";
	char path[] = "/tmp/nbg-test-openssl-XXXXXX";
	char *argv[] = { "test_digests", "--broken-conf-child", NULL };
	int fd = mkstemp(path), status = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, conf, sizeof(conf) - 1), (ssize_t)sizeof(conf) - 1);
	close(fd);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("OPENSSL_CONF", path, 1);
		nbg_exec_self(argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(path);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		print_error("broken-configuration child: check %d failed\n", WEXITSTATUS(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* nbg initializes OpenSSL for SHA-256 alone (nbg_init_standalone): no
 * configuration file is read.  One that would make OpenSSL's default
 * library context fail (a provider that does not exist, with diagnostics
 * on) changes nothing: the SHA-256 is still the file's. */
static void test_no_openssl_config(void **state)
{
	static const char conf[] = "config_diagnostics = 1\nopenssl_conf = init\n"
				   "[init]\nproviders = prov\n[prov]\nnosuch = nosuch\n"
				   "[nosuch]\nactivate = 1\n";
	char path[] = "/tmp/nbg-test-openssl-XXXXXX", env[128];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, conf, sizeof(conf) - 1), (ssize_t)sizeof(conf) - 1);
	close(fd);
	snprintf(env, sizeof(env), "OPENSSL_CONF='%s'", path);
	check_verify_sha256(env, NBG_SOURCE_DIR "/samples/sample.nb");
	/* 2 MiB: hashed by OpenSSL, initialized without that configuration.
	 * Where the configuration broke OpenSSL, the portable SHA-256 would
	 * give the same digest: tests/evp_shim.c logs each digest OpenSSL
	 * finished, and there must be one. */
	size_t n;
	uint8_t *big = big_file(&n);
	char big_path[] = "/tmp/nbg-test-big-XXXXXX", log[] = "/tmp/nbg-test-evp-XXXXXX";
	char prefix[1024], line[16];
	int bfd = mkstemp(big_path), lfd = mkstemp(log), finals = 0;
	assert_non_null(big);
	assert_true(bfd >= 0 && lfd >= 0);
	close(lfd);
	assert_int_equal(write(bfd, big, n), (ssize_t)n);
	close(bfd);
	snprintf(prefix, sizeof(prefix),
		 "%s LD_PRELOAD='%s' NBG_EVP_LOG='%s' "
		 "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:verify_asan_link_order=0\"", env, EVP_SHIM, log);
	check_verify_sha256(prefix, big_path);
	FILE *lf = fopen(log, "r");
	assert_non_null(lf);
	while (fgets(line, sizeof(line), lf))
		finals++;
	fclose(lf);
	assert_int_equal(finals, 1); /* the whole file's digest, by OpenSSL */
	unlink(log);
	unlink(big_path);
	free(big);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_fixture),
		cmocka_unit_test(test_crc_split),
		cmocka_unit_test(test_libcrypto_lazy),
		cmocka_unit_test(test_verify_sha256_option),
		cmocka_unit_test(test_no_openssl_config),
		cmocka_unit_test(test_broken_openssl),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_flags_corpus),
		cmocka_unit_test(test_verify_sha256_corpus),
	};
	if (argc == 2 && !strcmp(argv[1], "--broken-conf-child"))
		return broken_conf_child();
	if (argc == 3 && !strcmp(argv[1], "--lazy-child"))
		return lazy_child(argv[2][0] == '1', argv[2][1] == '1');
	return tc_main(argc, argv, "test_digests", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}

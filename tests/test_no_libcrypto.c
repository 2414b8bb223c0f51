/*
 * test_no_libcrypto.c - libnbg in a process without OpenSSL, where its
 * library cannot be loaded either.  This program does not link libcrypto,
 * and its dlopen (found by libnbg through the dynamic linker) refuses
 * libcrypto: every digest is then libnbg's portable SHA-256, and must be
 * the one coreutils' sha256sum gives for the same bytes.  On the sample
 * and on a 2 MiB file (past the portable allowance, so that OpenSSL is
 * tried, once), with each combination of the digest flags, on one thread
 * and free to start them.  Exits 0 when every check held, else a code
 * naming the first that did not (printed in full on standard error).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "nbg/nbg.h"

static unsigned long refused;

__attribute__((visibility("default")))
void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	if (file && strstr(file, "libcrypto")) {
		refused++;
		return NULL;
	}
	return real(file, mode);
}

static int all_zero(const uint8_t d[32])
{
	for (int i = 0; i < 32; i++)
		if (d[i])
			return 0;
	return 1;
}

/* A parse of buf with flags: 0 when it passed and every digest asked for
 * is sha256sum's (and every other one zero), else why not. */
static int parse_as_expected(const uint8_t *buf, size_t n, unsigned flags)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	nbg_model *m = NULL;
	nbg_error err;
	int r = 0;

	if (nbg_parse(buf, n, &o, &m, &err) != NBG_OK)
		return 1;
	if (flags & NBG_PARSE_NO_FILE_SHA256 ? !all_zero(m->file_sha256)
					     : !fx_sha256sum_is(m->file_sha256, buf, n))
		r = 2;
	for (size_t i = 0; i < m->section_count && !r; i++) {
		const nbg_section *s = nbg_model_section_at(m, i);
		if (flags & NBG_PARSE_NO_SECTION_SHA256 ? !all_zero(s->sha256)
							: !fx_sha256sum_is(s->sha256, buf + s->offset,
									(size_t)s->size))
			r = 3;
	}
	nbg_model_free(m);
	return r;
}

/* Every combination of the digest flags, each on the calling thread alone
 * and free to start threads (on a file of 1 MiB or more, the whole-file
 * hash has a thread of its own, which tries to load the library). */
static int checks(const uint8_t *buf, size_t n, unsigned base)
{
	static const unsigned flags[] = { 0, NBG_PARSE_NO_FILE_SHA256, NBG_PARSE_NO_SECTION_SHA256,
					  NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 };

	if (dlsym(RTLD_DEFAULT, "EVP_Digest"))
		return 20; /* OpenSSL is in the process after all: nothing is tested */
	for (unsigned t = 0; t < 2; t++)
		for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			int r = parse_as_expected(buf, n, flags[i] | (t ? NBG_PARSE_ONE_THREAD : 0));
			if (r)
				return (int)base + (int)(t * 4 + i) * 4 + r;
		}
	return 0;
}

int main(void)
{
	FILE *f = fopen(NBG_SOURCE_DIR "/samples/sample.nb", "rb");
	static uint8_t buf[1 << 16];
	size_t n, big_n;
	int r;

	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	r = checks(buf, n, 100);
	/* 2 MiB: past the size where the whole-file hash gets a thread */
	fx_spec *s = fx_default();
	fx_resize(fx_find(s, 24), (size_t)2 << 20);
	uint8_t *big = fx_build(s, &big_n);
	fx_free(s);
	if (!r)
		r = big ? checks(big, big_n, 200) : 2;
	free(big);
	/* the library was tried once, when the allowance ran out, and is not
	 * tried again */
	if (!r && refused != 1)
		r = 3;
	if (r)
		fprintf(stderr, "test_no_libcrypto: check %d failed\n", r);
	return r ? (r % 250 ? r % 250 : 1) : 0;
}

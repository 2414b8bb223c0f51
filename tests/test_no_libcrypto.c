/*
 * test_no_libcrypto.c - libnbg in a process without OpenSSL, where its
 * library cannot be loaded either.  This program does not link libcrypto,
 * and its dlopen (found by libnbg through the dynamic linker) refuses
 * libcrypto: a parse that needs the SHA-256 fingerprints fails with
 * resource-error naming the library, instead of giving digests of zero,
 * and one that leaves them out (what nbg verify does) passes; on the
 * sample and on a 2 MiB file, with each combination of the digest flags.
 * Exits 0 when every check held, else a code naming the first that did
 * not (printed in full on standard error).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A parse of buf with flags: 0 when it fails with resource-error naming
 * the library (digests wanted) or passes (none wanted), else why not. */
static int parse_as_expected(const uint8_t *buf, size_t n, unsigned flags)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = flags };
	unsigned none = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256;
	nbg_model *m = NULL;
	nbg_error err;
	nbg_code rc = nbg_parse(buf, n, &o, &m, &err);

	if ((flags & none) == none) {
		nbg_model_free(m);
		return rc == NBG_OK ? 0 : 1;
	}
	if (rc != NBG_E_RESOURCE || m)
		return 2;
	if (strcmp(err.field, "sha256") || !strstr(err.message, "libcrypto.so."))
		return 3;
	return 0;
}

/* Every combination of the digest flags, each on the calling thread alone
 * and free to start threads: on a file of 1 MiB or more the whole-file hash
 * thread loads the library while the parse CRCs the sections, and the
 * parse must still refuse before giving a digest. */
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
	/* the library was tried once, and is not tried again */
	if (!r && refused != 1)
		r = 3;
	if (r)
		fprintf(stderr, "test_no_libcrypto: check %d failed\n", r);
	return r ? (r % 250 ? r % 250 : 1) : 0;
}

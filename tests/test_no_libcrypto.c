/*
 * test_no_libcrypto.c - libnbg in a process without OpenSSL, where its
 * library cannot be loaded either.  This program does not link libcrypto,
 * and its dlopen (found by libnbg through the dynamic linker) refuses
 * libcrypto: a parse that needs the SHA-256 fingerprints fails with
 * resource-error naming the library, instead of giving digests of zero,
 * and one that leaves them out (what nbg verify does) passes.  Exits 0
 * when every check held, else the number of the first that did not.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int checks(const uint8_t *buf, size_t n)
{
	nbg_parse_options o = { .size = sizeof(o),
				.flags = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 };
	nbg_model *m = NULL;
	nbg_error err;

	if (dlsym(RTLD_DEFAULT, "EVP_Digest"))
		return 2; /* OpenSSL is in the process after all: nothing is tested */
	if (nbg_parse(buf, n, NULL, &m, &err) != NBG_E_RESOURCE || m)
		return 3;
	if (strcmp(err.field, "sha256") || !strstr(err.message, "libcrypto.so."))
		return 4;
	if (refused != 1)
		return 5;
	if (nbg_parse(buf, n, &o, &m, &err) != NBG_OK)
		return 6;
	nbg_model_free(m);
	return 0;
}

int main(void)
{
	FILE *f = fopen(NBG_SOURCE_DIR "/samples/sample.nb", "rb");
	static uint8_t buf[1 << 16];
	size_t n;
	int r;

	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	r = checks(buf, n);
	if (r)
		fprintf(stderr, "test_no_libcrypto: check %d failed\n", r);
	return r;
}

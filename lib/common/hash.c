/*
 * hash.c - SHA-256 (OpenSSL EVP, loaded when first worth it, or sha256.c)
 * and CRC-32 (ISA-L, combined with zlib).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <isa-l/crc.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <zlib.h>

#include "common/hash.h"

/* Bytes digested by this process (nbg_bytes_digested, nbg_digest_counts):
 * one relaxed atomic add per call, not per byte. */
static uint64_t sha_bytes, crc_bytes;

static void count(uint64_t n)
{
	__atomic_fetch_add(&sha_bytes, n, __ATOMIC_RELAXED);
}

static void count_crc(uint64_t n)
{
	__atomic_fetch_add(&crc_bytes, n, __ATOMIC_RELAXED);
}

/*
 * OpenSSL is loaded at the first SHA-256 that is worth it, not when the
 * program starts: mapping and relocating libcrypto and fetching its
 * SHA-256 cost a process about 2 ms here, more than a small file's whole
 * parse, and commands that hash nothing (verify, targets, help) never need
 * it.  Until then, digests of up to NBG_PORTABLE_ALLOWANCE bytes in all are
 * computed by sha256.c (about 240 MB/s here, against about 1.1-2 GB/s for
 * OpenSSL with SHA-NI), 512 KiB being about what the load costs in time: a
 * process that parses one file of up to about 200 KB never loads OpenSSL,
 * and one that hashes more spends at most about that long before it does.
 * Where the library cannot be loaded, or fails, every digest is the
 * portable one: slower, never wrong.  Its functions are looked up in the
 * process's global scope after loading it there, so a program that links
 * OpenSSL itself, or defines one of them, is served by its own.  The
 * library name is the one of the headers this was compiled with (3.x: the
 * build requires it).  A program linking the static libnbg.a needs the
 * shared library at run time all the same, or OpenSSL's functions in its
 * own global scope.
 */
#define NBG_STR_(x) #x
#define NBG_STR(x) NBG_STR_(x)
#define NBG_LIBCRYPTO "libcrypto.so." NBG_STR(OPENSSL_SHLIB_VERSION)

static struct {
	int (*init_crypto)(uint64_t, const OPENSSL_INIT_SETTINGS *);
	int (*digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *,
		      ENGINE *);
	const EVP_MD *(*sha256)(void);
	EVP_MD_CTX *(*ctx_new)(void);
	int (*init_ex)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
	int (*update)(EVP_MD_CTX *, const void *, size_t);
	int (*final_ex)(EVP_MD_CTX *, unsigned char *, unsigned int *);
	void (*ctx_free)(EVP_MD_CTX *);
	int ok;
} ossl;

/* nbg_init_standalone: OpenSSL is initialized at the first digest, for
 * SHA-256 alone.  Commands that hash nothing never initialize it. */
static int standalone;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

#define NBG_PORTABLE_ALLOWANCE ((uint64_t)512 << 10)
/* atomics: bytes given to the portable implementation before OpenSSL was
 * loaded; 1 once OpenSSL is to be used from now on */
static uint64_t portable_used;
static int want_openssl;

static int resolve(void *fp, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	memcpy(fp, &p, sizeof(p));
	return p != NULL;
}

static void init_openssl(void)
{
	/* Where the library cannot be loaded, a process that has OpenSSL's
	 * functions already (linked under another name) is served by those;
	 * one with none, by the portable SHA-256. */
	if (!dlopen(NBG_LIBCRYPTO, RTLD_LAZY | RTLD_GLOBAL) && !dlsym(RTLD_DEFAULT, "EVP_Digest"))
		return;
	if (!resolve(&ossl.init_crypto, "OPENSSL_init_crypto") ||
	    !resolve(&ossl.digest, "EVP_Digest") || !resolve(&ossl.sha256, "EVP_sha256") ||
	    !resolve(&ossl.ctx_new, "EVP_MD_CTX_new") ||
	    !resolve(&ossl.init_ex, "EVP_DigestInit_ex") ||
	    !resolve(&ossl.update, "EVP_DigestUpdate") ||
	    !resolve(&ossl.final_ex, "EVP_DigestFinal_ex") ||
	    !resolve(&ossl.ctx_free, "EVP_MD_CTX_free"))
		return;
	/* SHA-256 through EVP needs the default provider only: no
	 * configuration file, no cipher and digest name tables, which cost a
	 * small file more than hashing it does. */
	if (__atomic_load_n(&standalone, __ATOMIC_RELAXED))
		(void)ossl.init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
					       OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
				       NULL);
	ossl.ok = 1;
}

/* Whether OpenSSL's SHA-256 can be used (else its library could not be
 * loaded, or lacks a function); the first call loads it. */
static bool openssl_loaded(void)
{
	pthread_once(&init_once, init_openssl);
	return ossl.ok;
}

void nbg_sha256_expect(uint64_t total)
{
	uint64_t used = __atomic_load_n(&portable_used, __ATOMIC_RELAXED);

	/* A quarter more room than asked for: callers estimate (a v1 parse
	 * hashes a little more than twice the file), and running out in the
	 * middle would cost the portable work and the load both. */
	total = total > UINT64_MAX / 2 ? UINT64_MAX : total + total / 4;
	if (used >= NBG_PORTABLE_ALLOWANCE || total > NBG_PORTABLE_ALLOWANCE - used)
		__atomic_store_n(&want_openssl, 1, __ATOMIC_RELAXED);
}

/* Whether a digest of n bytes goes to OpenSSL (loading it when this is the
 * first), or to the portable implementation. */
static bool use_openssl(uint64_t n)
{
	if (!__atomic_load_n(&want_openssl, __ATOMIC_RELAXED)) {
		uint64_t used = __atomic_add_fetch(&portable_used, n, __ATOMIC_RELAXED);
		if (used <= NBG_PORTABLE_ALLOWANCE && used >= n)
			return false;
		__atomic_store_n(&want_openssl, 1, __ATOMIC_RELAXED);
	}
	return openssl_loaded();
}

void nbg_init_standalone(void)
{
	__atomic_store_n(&standalone, 1, __ATOMIC_RELAXED);
}

uint64_t nbg_bytes_digested(void)
{
	return __atomic_load_n(&sha_bytes, __ATOMIC_RELAXED) +
	       __atomic_load_n(&crc_bytes, __ATOMIC_RELAXED);
}

void nbg_digest_counts(uint64_t *sha256, uint64_t *crc32)
{
	if (sha256)
		*sha256 = __atomic_load_n(&sha_bytes, __ATOMIC_RELAXED);
	if (crc32)
		*crc32 = __atomic_load_n(&crc_bytes, __ATOMIC_RELAXED);
}

void nbg_sha256(const void *p, size_t n, uint8_t out[32])
{
	static const uint8_t empty;
	unsigned int len = 32;

	count(n);
	/* EVP picks the SHA-NI / AVX2 implementation at run time; it wants a
	 * pointer even for zero bytes.  Where it fails (a library context its
	 * configuration broke), the portable code serves, as in
	 * nbg_sha256_begin. */
	if (use_openssl(n) &&
	    ossl.digest(p ? p : &empty, n, out, &len, ossl.sha256(), NULL) == 1 && len == 32)
		return;
	nbg_sha256_portable s;
	nbg_sha256_portable_init(&s);
	nbg_sha256_portable_update(&s, p, n);
	nbg_sha256_portable_final(&s, out);
}

void nbg_sha256_begin(nbg_sha256_ctx *s, uint64_t total)
{
	s->md = use_openssl(total) ? ossl.ctx_new() : NULL;
	/* where OpenSSL cannot give a context, the portable one serves */
	if (s->md && !ossl.init_ex(s->md, ossl.sha256(), NULL)) {
		ossl.ctx_free(s->md);
		s->md = NULL;
	}
	if (!s->md)
		nbg_sha256_portable_init(&s->portable);
	s->promised = total;
	s->ok = true;
}

void nbg_sha256_update(nbg_sha256_ctx *s, const void *p, uint64_t n)
{
	const uint8_t *b = p;

	if (s->ok)
		count(n);
	if (s->ok && !s->md) {
		/* bytes past those promised at the start count against the
		 * allowance too (the context stays portable) */
		uint64_t over = n > s->promised ? n - s->promised : 0;
		s->promised -= n - over;
		if (over)
			__atomic_fetch_add(&portable_used, over, __ATOMIC_RELAXED);
		nbg_sha256_portable_update(&s->portable, p, n);
		return;
	}
	/* EVP takes size_t; feed huge ranges in pieces. */
	while (s->ok && n) {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
		s->ok = ossl.update(s->md, b, k);
		b += k;
		n -= k;
	}
}

/* A context that never began (all zero) ignores updates and ends with an
 * all-zero digest. */
bool nbg_sha256_end(nbg_sha256_ctx *s, uint8_t out[32])
{
	unsigned int len = 32;
	bool ok = s->ok;

	if (ok && !s->md)
		nbg_sha256_portable_final(&s->portable, out);
	else if (ok)
		ok = ossl.final_ex(s->md, out, &len) && len == 32;
	if (s->md)
		ossl.ctx_free(s->md);
	s->md = NULL;
	s->ok = false;
	if (!ok)
		memset(out, 0, 32);
	return ok;
}

uint32_t nbg_crc32(uint32_t crc, const uint8_t *p, uint64_t n)
{
	count_crc(n);
	return n ? crc32_gzip_refl(crc, p, n) : crc;
}

uint32_t nbg_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
	/* crc32_combine takes z_off_t; split lengths it cannot represent. */
	const uint64_t max_chunk = (uint64_t)1 << 62;
	while (len_b > max_chunk) {
		a = (uint32_t)crc32_combine(a, 0, (z_off_t)max_chunk);
		len_b -= max_chunk;
	}
	return (uint32_t)crc32_combine(a, b, (z_off_t)len_b);
}

/* The second half of nbg_crc32_ranges: ranges [first, n), the first of
 * them from byte `skip` on (its CRC in `head`, the rest's in place). */
typedef struct crc_half {
	nbg_crc_range *r;
	size_t first, n;
	uint64_t skip;
	uint32_t head;
} crc_half;

static void *crc_half_run(void *arg)
{
	crc_half *h = arg;

	h->head = nbg_crc32(0, h->r[h->first].p + h->skip, h->r[h->first].n - h->skip);
	for (size_t i = h->first + 1; i < h->n; i++)
		h->r[i].crc = nbg_crc32(0, h->r[i].p, h->r[i].n);
	return NULL;
}

void nbg_crc32_ranges(nbg_crc_range *r, size_t n, int two_cores)
{
	uint64_t total = 0, half, at = 0;
	crc_half h = { r, 0, n, 0, 0 };
	pthread_t t;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		total += r[i].n;
	if (!two_cores || total < NBG_CRC_SPLIT_MIN) {
		for (size_t i = 0; i < n; i++)
			r[i].crc = nbg_crc32(0, r[i].p, r[i].n);
		return;
	}
	/* The range holding byte total/2 of the stream is cut there. */
	half = total / 2;
	while (at + r[k].n <= half)
		at += r[k++].n;
	h.first = k;
	h.skip = half - at;
	if (pthread_create(&t, NULL, crc_half_run, &h) != 0) {
		nbg_crc32_ranges(r, n, 0);
		return;
	}
	for (size_t i = 0; i < k; i++)
		r[i].crc = nbg_crc32(0, r[i].p, r[i].n);
	uint32_t lead = nbg_crc32(0, r[k].p, h.skip);
	pthread_join(t, NULL);
	r[k].crc = nbg_crc32_combine(lead, h.head, r[k].n - h.skip);
}

void nbg_hex32(const uint8_t d[32], char out[65])
{
	static const char hx[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hx[d[i] >> 4];
		out[2 * i + 1] = hx[d[i] & 15];
	}
	out[64] = '\0';
}

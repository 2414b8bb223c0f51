/*
 * hash.c - the library's one way to SHA-256 and CRC-32 (hash.h), and the
 * count of the bytes each has seen.
 */
#include <pthread.h>
#include <string.h>

#define NBG_STATIC_LINKING_ONLY
#include "common/hash.h"

/* Bytes digested by this process (nbg_digest_counts): one relaxed atomic
 * add per call, not per byte.  A diagnostic: the digests never depend on
 * it. */
static uint64_t sha_bytes, crc_bytes;

void nbg_digest_counts(uint64_t *sha256, uint64_t *crc32)
{
	if (sha256)
		*sha256 = __atomic_load_n(&sha_bytes, __ATOMIC_RELAXED);
	if (crc32)
		*crc32 = __atomic_load_n(&crc_bytes, __ATOMIC_RELAXED);
}

void nbg_sha256_bytes(const void *data, size_t size, uint8_t out[32])
{
	if (!out || (!data && size))
		return;
	nbg_sha256(data, size, out);
}

uint32_t nbg_crc32_bytes(uint32_t crc, const void *data, size_t size)
{
	if (!data)
		return crc;
	return nbg_crc32(crc, data, size);
}

void nbg_sha256(const void *p, size_t n, uint8_t out[32])
{
	nbg_sha256_ctx s;

	nbg_sha256_begin(&s);
	nbg_sha256_update(&s, p, n);
	nbg_sha256_end(&s, out);
}

void nbg_sha256_begin(nbg_sha256_ctx *s)
{
	nbg_sha256_init(s);
}

void nbg_sha256_update(nbg_sha256_ctx *s, const void *p, uint64_t n)
{
	if (!s->blocks)
		return; /* never began */
	__atomic_fetch_add(&sha_bytes, n, __ATOMIC_RELAXED);
	nbg_sha256_feed(s, p, n);
}

void nbg_sha256_end(nbg_sha256_ctx *s, uint8_t out[32])
{
	if (s->blocks)
		nbg_sha256_final(s, out);
	else
		memset(out, 0, 32);
	s->blocks = NULL;
}

uint32_t nbg_crc32(uint32_t crc, const uint8_t *p, uint64_t n)
{
	__atomic_fetch_add(&crc_bytes, n, __ATOMIC_RELAXED);
	return n ? nbg_crc32_impl(crc, p, n) : crc;
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
	if (!d || !out)
		return;
	static const char hx[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hx[d[i] >> 4];
		out[2 * i + 1] = hx[d[i] & 15];
	}
	out[64] = '\0';
}

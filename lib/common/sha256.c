/*
 * sha256.c - SHA-256 after FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3
 * and 6.2): the padding and buffering every implementation shares, the
 * portable block function, and the choice of block function, made once per
 * process from what the CPU runs (sha256.h).  tests/test_hash.c checks every
 * block function this machine runs against the standard's examples and
 * against OpenSSL.
 */
#include <string.h>

#include "common/sha256.h"

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One 64-byte block into the state (6.2.2). */
static void compress(uint32_t h[8], const uint8_t *block)
{
	uint32_t w[64], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
			x = h[7];

	for (int t = 0; t < 16; t++)
		w[t] = load_be32(block + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = x + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
			      nbg_sha256_k[t] + w[t];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		x = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += x;
}


static void blocks_portable(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	for (; nblocks; nblocks--, p += 64)
		compress(h, p);
}

static const nbg_sha256_impl impls[] = {
#if NBG_SHA256_X86
	{ "sha-ni", nbg_sha256_blocks_shani, nbg_sha256_x86_usable },
#endif
#if NBG_SHA256_ARM
	{ "armv8-ce", nbg_sha256_blocks_armce, nbg_sha256_arm_usable },
#endif
	{ "portable", blocks_portable, NULL },
};

const nbg_sha256_impl *nbg_sha256_impls(size_t *n)
{
	*n = sizeof(impls) / sizeof(impls[0]);
	return impls;
}

/*
 * The choice, as libdeflate makes it for CRC-32: the first call asks the
 * CPU (cpuid, or the kernel's hardware capabilities) and keeps the answer
 * for the process.  Threads that race there compute the same answer and
 * store the same pointer, so the store needs no lock; it is atomic so that
 * the race is not undefined behaviour.  Nothing else is kept, and the
 * digests do not depend on which function computed them.
 */
static const nbg_sha256_impl *chosen(void)
{
	static const nbg_sha256_impl *best;
	const nbg_sha256_impl *b = __atomic_load_n(&best, __ATOMIC_RELAXED);

	if (!b) {
		b = impls;
		while (b->usable && !b->usable())
			b++; /* the portable one, last, has none */
		__atomic_store_n(&best, b, __ATOMIC_RELAXED);
	}
	return b;
}

const char *nbg_sha256_impl_name(void)
{
	return chosen()->name;
}

void nbg_sha256_init_with(nbg_sha256_ctx *s, nbg_sha256_blocks_fn blocks)
{
	static const uint32_t h0[8] = { 0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
					0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u };

	memcpy(s->h, h0, sizeof(h0));
	s->bytes = 0;
	s->fill = 0;
	s->blocks = blocks;
}

void nbg_sha256_init(nbg_sha256_ctx *s)
{
	nbg_sha256_init_with(s, chosen()->blocks);
}

void nbg_sha256_feed(nbg_sha256_ctx *s, const void *data, uint64_t n)
{
	const uint8_t *p = data;

	if (!n)
		return; /* data may be NULL then */
	s->bytes += n;
	if (s->fill) {
		size_t k = 64 - s->fill < n ? 64 - s->fill : (size_t)n;
		memcpy(s->buf + s->fill, p, k);
		s->fill += k;
		p += k;
		n -= k;
		if (s->fill < 64)
			return;
		s->blocks(s->h, s->buf, 1);
		s->fill = 0;
	}
	/* whole blocks straight from the input, in pieces size_t can count */
	while (n >= 64) {
		uint64_t whole = n / 64 > SIZE_MAX / 64 ? SIZE_MAX / 64 : n / 64;
		s->blocks(s->h, p, (size_t)whole);
		p += whole * 64;
		n -= whole * 64;
	}
	if (n) {
		memcpy(s->buf, p, (size_t)n);
		s->fill = (size_t)n;
	}
}

/* Padding (5.1.1): a 1 bit, zeros, and the length in bits, big-endian. */
void nbg_sha256_final(nbg_sha256_ctx *s, uint8_t out[32])
{
	uint64_t bits = s->bytes * 8;

	s->buf[s->fill++] = 0x80;
	if (s->fill > 56) {
		memset(s->buf + s->fill, 0, 64 - s->fill);
		s->blocks(s->h, s->buf, 1);
		s->fill = 0;
	}
	memset(s->buf + s->fill, 0, 56 - s->fill);
	store_be32(s->buf + 56, (uint32_t)(bits >> 32));
	store_be32(s->buf + 60, (uint32_t)bits);
	s->blocks(s->h, s->buf, 1);
	for (int i = 0; i < 8; i++)
		store_be32(out + 4 * i, s->h[i]);
}

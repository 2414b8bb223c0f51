/*
 * ring.h - reading and writing an image through a circular buffer
 * [lo, lo + size): an address at or past lo wraps to lo + (address - lo)
 * mod size (size 0: no buffer).  Where a command's buffer lies is one rule
 * the data flow shares (nbg_command_ring, analysis/graph/commands_lib.h),
 * checked by the plan (nbg_cpu_ring, cpu_internal.h); these are the run's
 * accesses.  Never installed.
 */
#ifndef NBG_CPU_RING_H
#define NBG_CPU_RING_H

#include <stdint.h>
#include <string.h>

static inline uint64_t nbg_cpu_ring_at(uint64_t a, uint64_t lo, uint64_t size)
{
	return size && a >= lo ? lo + (a - lo) % size : a;
}

/* n bytes at addresses a, a + step, ... of buf read into d (write: d
 * written there), through the ring: one division for the first, then
 * contiguous runs up to the ring's end (step 1) or a step and at most one
 * subtraction each (step < size); the same addresses nbg_cpu_ring_at
 * gives. */
static inline void nbg_cpu_ring_read(uint8_t *d, const uint8_t *buf, uint64_t a, uint64_t n, uint64_t step,
				     uint64_t lo, uint64_t size)
{
	if (!size || a < lo || step >= size) {
		for (uint64_t i = 0; i < n; i++)
			d[i] = buf[nbg_cpu_ring_at(a + i * step, lo, size)];
		return;
	}
	uint64_t p = nbg_cpu_ring_at(a, lo, size), end = lo + size;
	if (step == 1) {
		/* runs up to the ring's end */
		while (n) {
			uint64_t k = end - p < n ? end - p : n;
			memcpy(d, buf + p, (size_t)k);
			d += k;
			n -= k;
			p = lo;
		}
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		d[i] = buf[p];
		p += step;
		if (p >= end)
			p -= size;
	}
}

static inline void nbg_cpu_ring_write(uint8_t *buf, const uint8_t *s, uint64_t a, uint64_t n, uint64_t lo,
				      uint64_t size)
{
	if (!size || a < lo) {
		for (uint64_t i = 0; i < n; i++)
			buf[nbg_cpu_ring_at(a + i, lo, size)] = s[i];
		return;
	}
	uint64_t p = nbg_cpu_ring_at(a, lo, size), end = lo + size;
	while (n) {
		uint64_t k = end - p < n ? end - p : n;
		memcpy(buf + p, s, (size_t)k);
		s += k;
		n -= k;
		p = lo;
	}
}

#endif

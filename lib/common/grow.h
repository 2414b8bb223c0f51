/*
 * grow.h - the one growth rule of libnbg's arrays: room for `need` elements,
 * doubling the capacity from `first`, overflow checked.  Private to libnbg.
 */
#ifndef NBG_COMMON_GROW_H
#define NBG_COMMON_GROW_H

#include <stddef.h>
#include <stdlib.h>

/*
 * Returns an array with room for at least `need` elements of `elem` bytes:
 * `p` itself when *cap already suffices, else `p` reallocated to the next
 * doubling of *cap (starting at `first`), with *cap updated.  Returns NULL,
 * leaving `p` and *cap untouched, when memory runs out or the size overflows.
 */
static inline void *nbg_grow(void *p, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n = *cap ? *cap : first, bytes;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		if (__builtin_mul_overflow(n, (size_t)2, &n))
			return NULL;
	if (__builtin_mul_overflow(n, elem, &bytes) || !(q = realloc(p, bytes ? bytes : 1)))
		return NULL;
	*cap = n;
	return q;
}

#endif

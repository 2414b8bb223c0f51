/*
 * threads.c - an operation's work cut across threads (nbg_cpu_parallel,
 * ops/conv_fast.h): contiguous ranges of its items, one thread each, the
 * caller's thread taking the first.  Each item writes bytes of its own, so
 * the output is the same for any number of threads.  A build without
 * threads (the page's WebAssembly) and a thread that cannot start run the
 * ranges in the caller.
 */
#include <stdint.h>

#include "cpu/ops/conv_fast.h"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define CPU_THREADS 0
#else
#define CPU_THREADS 1
#include <pthread.h>
#endif

/* At most this many threads per operation. */
#define CPU_MAX_THREADS 64

typedef struct cpu_range {
	cpu_range_fn fn;
	void *ctx;
	uint64_t lo, hi;
} cpu_range;

#if CPU_THREADS
static void *range_main(void *arg)
{
	cpu_range *r = arg;
	r->fn(r->ctx, r->lo, r->hi);
	return NULL;
}
#endif

void nbg_cpu_parallel(uint32_t threads, uint64_t n, cpu_range_fn fn, void *ctx)
{
	uint64_t t = threads < CPU_MAX_THREADS ? threads : CPU_MAX_THREADS;
	t = t < n ? t : n;
	if (t <= 1 || !CPU_THREADS) {
		if (n)
			fn(ctx, 0, n);
		return;
	}
#if CPU_THREADS
	cpu_range r[CPU_MAX_THREADS];
	pthread_t id[CPU_MAX_THREADS];
	int started[CPU_MAX_THREADS] = { 0 };
	for (uint64_t i = 0; i < t; i++)
		r[i] = (cpu_range){ fn, ctx, n * i / t, n * (i + 1) / t };
	for (uint64_t i = 1; i < t; i++)
		started[i] = pthread_create(&id[i], NULL, range_main, &r[i]) == 0;
	fn(ctx, r[0].lo, r[0].hi);
	for (uint64_t i = 1; i < t; i++) {
		if (started[i])
			pthread_join(id[i], NULL);
		else
			fn(ctx, r[i].lo, r[i].hi);
	}
#endif
}

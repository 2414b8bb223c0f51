/*
 * threads.c - an operation's work cut across threads (nbg_cpu_parallel,
 * ops/conv_fast.h): chunks of contiguous items, claimed in turn by the
 * threads, the caller's among them.  Each item writes bytes of its own, so
 * the output is the same for any number of threads and any order.  A
 * build without threads (the page's WebAssembly) runs every item in the
 * caller, and the caller takes the chunks of a thread that cannot start.
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

/* The items of one call: each thread claims the next chunk until none is
 * left, so a thread that waits for its core (another program on it) takes
 * fewer chunks rather than holding the others up. */
typedef struct cpu_work {
	cpu_range_fn fn;
	void *ctx;
	uint64_t n, chunk;
	uint64_t next; /* the first unclaimed item (atomic) */
} cpu_work;

#if CPU_THREADS
static void *claim_chunks(void *arg)
{
	cpu_work *w = arg;
	for (;;) {
		uint64_t lo = __atomic_fetch_add(&w->next, w->chunk, __ATOMIC_RELAXED);
		if (lo >= w->n)
			return NULL;
		w->fn(w->ctx, lo, w->n - lo < w->chunk ? w->n : lo + w->chunk);
	}
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
	/* some 8 chunks a thread */
	cpu_work w = { fn, ctx, n, (n + 8 * t - 1) / (8 * t), 0 };
	pthread_t id[CPU_MAX_THREADS];
	int started[CPU_MAX_THREADS] = { 0 };
	for (uint64_t i = 1; i < t; i++)
		started[i] = pthread_create(&id[i], NULL, claim_chunks, &w) == 0;
	claim_chunks(&w); /* a thread that did not start leaves its chunks to the others */
	for (uint64_t i = 1; i < t; i++)
		if (started[i])
			pthread_join(id[i], NULL);
#endif
}

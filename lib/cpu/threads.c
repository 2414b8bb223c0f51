/*
 * threads.c - an operation's work cut across threads (nbg_cpu_parallel,
 * ops/conv_fast.h): chunks of contiguous items, claimed in turn by the
 * caller and the workers of a pool that lives across operations.  Each
 * item writes bytes of its own, so the output is the same for any number
 * of threads and any order.
 *
 * The pool's workers sleep between operations.  The caller posts its
 * operation, wakes as many workers as it asked threads (less itself), and
 * claims chunks itself: a worker that has not woken yet (its core busy
 * with another program) never holds the operation up, since the caller
 * takes the chunks it would have taken and, once none is left, waits only
 * for the chunks in flight, then withdraws the operation, so that a worker
 * waking late finds nothing.  The chunks shrink as the items run out
 * (half the items left over twice the threads, at least `grain`), so the
 * last ones in flight are short.
 *
 * One operation at a time uses the pool: a second caller (another thread
 * of the program, a second plan) runs its items alone, as does a build
 * without threads (the page's WebAssembly).  The workers block every
 * signal.
 *
 * The pool lives while a run holds it (nbg_cpu_pool_hold, as
 * nbg_cpu_run does for its operations): the last release joins its
 * workers and frees the scratch cache, so no thread and no cached block
 * outlives the library's calls.  An operation run outside any hold stops
 * the pool it started before it returns.  A forked child forgets its
 * parent's pool and holds (its workers and runs are not in the child) and
 * starts its own.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/ops/conv_fast.h"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define CPU_THREADS 0
#else
#define CPU_THREADS 1
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sched.h>
#endif
#endif

/* At most this many threads per operation (the pool's workers, plus the
 * caller). */
#define CPU_MAX_THREADS 64

/* The items of one call. */
typedef struct cpu_work {
	cpu_range_fn fn;
	void *ctx;
	uint64_t n, threads, grain;
	uint64_t next; /* the first unclaimed item (atomic) */
} cpu_work;

/* Claims the next chunk of w into [*lo, *hi): 0 when none is left. */
static int claim(cpu_work *w, uint64_t *lo, uint64_t *hi)
{
	uint64_t at = __atomic_load_n(&w->next, __ATOMIC_RELAXED);
	for (;;) {
		if (at >= w->n)
			return 0;
		uint64_t left = w->n - at, c = left / (2 * w->threads);
		c = c > w->grain ? c : w->grain;
		c = c < left ? c : left;
		if (__atomic_compare_exchange_n(&w->next, &at, at + c, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			*lo = at;
			*hi = at + c;
			return 1;
		}
	}
}

static void run_chunks(cpu_work *w)
{
	uint64_t lo, hi;
	while (claim(w, &lo, &hi))
		w->fn(w->ctx, lo, hi);
}

#if CPU_THREADS
typedef struct cpu_pool {
	pthread_mutex_t mu;
	pthread_cond_t wake; /* the workers wait for an operation */
	pthread_cond_t idle; /* the caller waits for the chunks in flight */
	cpu_work *job;       /* the operation posted, NULL between operations */
	uint64_t gen;        /* operations posted */
	uint32_t seats;      /* workers the operation still takes */
	uint32_t busy;       /* workers inside it */
	uint32_t workers;    /* started */
	int quit;            /* the workers leave */
	int off;             /* the core the workers are kept off, -1: none */
	pthread_t id[CPU_MAX_THREADS];
} cpu_pool;

/* The process's pool (started at the first operation on several
 * threads); a forked child's handler forgets its parent's (whose workers
 * it does not have: `stale` keeps it reachable) and the use of it. */
static cpu_pool *pool, *stale;
static pthread_mutex_t pool_use = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* The runs holding the pool (changed under hold_mu, read atomically). */
static uint32_t holds;
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;

/* The scratch cache's lock (below). */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static void pool_forked(void)
{
	stale = pool;
	pool = NULL;
	holds = 0;
	pthread_mutex_init(&hold_mu, NULL);
	pthread_mutex_init(&pool_use, NULL);
	pthread_mutex_init(&cache_mu, NULL);
}

static void pool_once_init(void)
{
	pthread_atfork(NULL, NULL, pool_forked);
}

/* The pool, its workers not yet started (under pool_use). */
static void pool_start(void)
{
	cpu_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return;
	if (pthread_mutex_init(&p->mu, NULL) || pthread_cond_init(&p->wake, NULL) || pthread_cond_init(&p->idle, NULL)) {
		free(p);
		return;
	}
	p->off = -1;
	pool = p;
}

/* Before it sleeps, a worker watches for the next operation this long:
 * an operation follows another within microseconds in a model's run,
 * and a sleeping worker wakes only when the kernel lets it (tens of
 * microseconds to milliseconds where other programs hold the cores). */
#define CPU_SPIN_NS 200000

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ __volatile__("yield");
#endif
}

/* Locks mu, which its holder keeps for a few instructions: tried while
 * watching before sleeping on it (a sleeper's wake-up costs its holder a
 * system call and the sleeper the kernel's latency). */
static void lock_soon(pthread_mutex_t *mu)
{
	for (unsigned i = 0; i < 1024; i++)
		if (!pthread_mutex_trylock(mu))
			return;
		else
			spin_pause();
	pthread_mutex_lock(mu);
}

/* Waits (p->mu unlocked) until an operation after `seen` is posted or
 * CPU_SPIN_NS pass. */
static void spin_for(cpu_pool *p, uint64_t seen)
{
	uint64_t until = now_ns() + CPU_SPIN_NS;
	for (unsigned i = 1; __atomic_load_n(&p->gen, __ATOMIC_RELAXED) == seen; i++)
		if (i % 256 == 0 && now_ns() > until)
			return;
		else
			spin_pause();
}

static void *worker(void *arg)
{
	cpu_pool *p = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && (!p->job || p->gen == seen || !p->seats))
			pthread_cond_wait(&p->wake, &p->mu);
		if (p->quit)
			break;
		cpu_work *w = p->job;
		seen = p->gen;
		p->seats--;
		__atomic_add_fetch(&p->busy, 1, __ATOMIC_RELAXED); /* read unlocked by a watching caller */
		pthread_mutex_unlock(&p->mu);
		run_chunks(w);
		lock_soon(&p->mu);
		if (!__atomic_sub_fetch(&p->busy, 1, __ATOMIC_RELEASE) && !p->job)
			pthread_cond_signal(&p->idle);
		pthread_mutex_unlock(&p->mu);
		spin_for(p, seen);
		lock_soon(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Starts workers up to `want` (under p->mu), each with every signal
 * blocked; one that cannot start leaves its chunks to the others. */
static void pool_grow(cpu_pool *p, uint32_t want)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (p->workers < want) {
		pthread_t id;
		if (pthread_create(&id, NULL, worker, p))
			break;
		p->id[p->workers++] = id;
		p->off = -1; /* the new one is not kept off yet */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Keeps the workers off the caller's core (under p->mu): where no core is
 * idle (other programs on each), the kernel wakes a thread on its
 * waker's core, which then runs the two in turn rather than at once.
 * Their cores are the caller's allowed ones less its own, set again only
 * when the caller moved. */
static void pool_place(cpu_pool *p)
{
#if defined(__linux__)
	int cpu = sched_getcpu();
	cpu_set_t set;
	if (cpu < 0 || cpu == p->off || cpu >= CPU_SETSIZE ||
	    pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		return;
	CPU_CLR(cpu, &set);
	if (!CPU_COUNT(&set))
		return;
	for (uint32_t i = 0; i < p->workers; i++)
		pthread_setaffinity_np(p->id[i], sizeof(set), &set);
	p->off = cpu;
#else
	(void)p;
#endif
}

/* Stops the pool (under pool_use, no operation on it): its workers
 * leave (a spinning one sees gen change) and are joined. */
static void pool_stop(void)
{
	cpu_pool *p = pool;
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (uint32_t i = 0; i < p->workers; i++)
		pthread_join(p->id[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->idle);
	free(p);
	pool = NULL;
}

/* w on the pool: 0 when the pool is in use or cannot start. */
static int pool_run(cpu_work *w)
{
	if (pthread_once(&pool_once, pool_once_init) || pthread_mutex_trylock(&pool_use))
		return 0;
	if (!pool)
		pool_start();
	cpu_pool *p = pool;
	if (!p) {
		pthread_mutex_unlock(&pool_use);
		return 0;
	}
	pthread_mutex_lock(&p->mu);
	pool_grow(p, (uint32_t)w->threads - 1);
	pool_place(p);
	p->job = w;
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELAXED); /* read unlocked by a spinning worker */
	p->seats = (uint32_t)w->threads - 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	run_chunks(w);
	lock_soon(&p->mu);
	p->job = NULL; /* a worker waking now finds nothing */
	p->seats = 0;
	pthread_mutex_unlock(&p->mu);
	/* the chunks in flight are short: watch for their end, as a worker
	 * watches for the next operation, before sleeping (a sleeping
	 * thread's wake-up took tens of microseconds here, as long as a
	 * small operation's chunks) */
	uint64_t until = now_ns() + CPU_SPIN_NS;
	for (unsigned i = 1; __atomic_load_n(&p->busy, __ATOMIC_ACQUIRE); i++)
		if (i % 256 == 0 && now_ns() > until)
			break;
		else
			spin_pause();
	pthread_mutex_lock(&p->mu);
	while (p->busy)
		pthread_cond_wait(&p->idle, &p->mu);
	pthread_mutex_unlock(&p->mu);
	if (!__atomic_load_n(&holds, __ATOMIC_ACQUIRE))
		pool_stop(); /* no run holds it: no worker outlives this call */
	pthread_mutex_unlock(&pool_use);
	return 1;
}
#endif

void nbg_cpu_parallel(uint32_t threads, uint64_t n, uint64_t grain, cpu_range_fn fn, void *ctx)
{
	uint64_t t = threads < CPU_MAX_THREADS ? threads : CPU_MAX_THREADS;
	t = t < n ? t : n;
	cpu_work w = { fn, ctx, n, t ? t : 1, grain ? grain : 1, 0 };
	if (t <= 1) {
		if (n)
			fn(ctx, 0, n);
		return;
	}
#if CPU_THREADS
	if (pool_run(&w))
		return;
#endif
	run_chunks(&w);
}

/*
 * Scratch memory kept between operations: an operation's large buffers
 * (the laid-out input, the planes) go back to a cache of CPU_CACHE_BLOCKS
 * blocks rather than to the allocator, which would hand the memory back
 * to the kernel at each free (its trim threshold) and take it again page
 * by page at the next operation's first writes: on a 1x1 convolution
 * those page faults cost as much as its multiply-accumulates.  The cache
 * keeps at most CPU_CACHE_MAX bytes (as the allocator keeps freed memory
 * below its trim threshold), a smaller block giving its place to a larger
 * one.
 */
#define CPU_CACHE_BLOCKS 4
#define CPU_CACHE_MAX ((size_t)32 << 20)

/* A block: its size, then the caller's bytes (64-byte aligned). */
#define CPU_SCRATCH_HEAD 64

static struct {
	void *block[CPU_CACHE_BLOCKS];
	size_t size[CPU_CACHE_BLOCKS], held;
} cache;
#if CPU_THREADS
#define CACHE_LOCK() (pthread_once(&pool_once, pool_once_init), pthread_mutex_lock(&cache_mu))
#define CACHE_UNLOCK() pthread_mutex_unlock(&cache_mu)
#else
#define CACHE_LOCK() ((void)0)
#define CACHE_UNLOCK() ((void)0)
#endif

void *nbg_cpu_scratch_take(size_t n)
{
	size_t best = CPU_CACHE_BLOCKS;
	CACHE_LOCK();
	for (size_t i = 0; i < CPU_CACHE_BLOCKS; i++)
		if (cache.block[i] && cache.size[i] >= n && (best == CPU_CACHE_BLOCKS || cache.size[i] < cache.size[best]))
			best = i;
	uint8_t *b = NULL;
	if (best < CPU_CACHE_BLOCKS) {
		b = cache.block[best];
		cache.held -= cache.size[best];
		cache.block[best] = NULL;
	}
	CACHE_UNLOCK();
	if (b)
		return b + CPU_SCRATCH_HEAD;
	/* the head and the bytes, in whole 64-byte lines from a line's start */
	if (n > SIZE_MAX - 2 * CPU_SCRATCH_HEAD ||
	    !(b = aligned_alloc(CPU_SCRATCH_HEAD, (n + 2 * CPU_SCRATCH_HEAD - 1) / CPU_SCRATCH_HEAD * CPU_SCRATCH_HEAD)))
		return NULL;
	memcpy(b, &n, sizeof(n));
	return b + CPU_SCRATCH_HEAD;
}

void nbg_cpu_scratch_give(void *p)
{
	if (!p)
		return;
	uint8_t *b = (uint8_t *)p - CPU_SCRATCH_HEAD;
	size_t n;
	memcpy(&n, b, sizeof(n));
	CACHE_LOCK();
	/* an empty slot, else the smallest block's: this block takes it when
	 * larger, within the bytes kept */
	size_t at = 0;
	for (size_t i = 0; i < CPU_CACHE_BLOCKS; i++) {
		if (!cache.block[i]) {
			at = i;
			break;
		}
		at = cache.size[i] < cache.size[at] ? i : at;
	}
	void *drop = b;
	size_t out = cache.block[at] ? cache.size[at] : 0;
	if ((!cache.block[at] || out < n) && cache.held - out <= CPU_CACHE_MAX && n <= CPU_CACHE_MAX - (cache.held - out)) {
		drop = cache.block[at];
		cache.held = cache.held - out + n;
		cache.block[at] = b;
		cache.size[at] = n;
	}
	CACHE_UNLOCK();
	free(drop);
}

/* The cached blocks, freed. */
static void cache_drain(void)
{
	void *drop[CPU_CACHE_BLOCKS];
	CACHE_LOCK();
	for (size_t i = 0; i < CPU_CACHE_BLOCKS; i++) {
		drop[i] = cache.block[i];
		cache.block[i] = NULL;
	}
	cache.held = 0;
	CACHE_UNLOCK();
	for (size_t i = 0; i < CPU_CACHE_BLOCKS; i++)
		free(drop[i]);
}

#if !CPU_THREADS
static uint32_t holds;
#endif

void nbg_cpu_pool_hold(void)
{
#if CPU_THREADS
	if (pthread_once(&pool_once, pool_once_init))
		return;
	pthread_mutex_lock(&hold_mu);
	__atomic_add_fetch(&holds, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&hold_mu);
#else
	holds++;
#endif
}

void nbg_cpu_pool_release(void)
{
	int last;
#if CPU_THREADS
	if (pthread_once(&pool_once, pool_once_init))
		return;
	pthread_mutex_lock(&hold_mu);
	last = holds && !__atomic_sub_fetch(&holds, 1, __ATOMIC_ACQ_REL);
	if (last) {
		pthread_mutex_lock(&pool_use); /* waits for an operation run outside any hold */
		pool_stop();
		pthread_mutex_unlock(&pool_use);
	}
	pthread_mutex_unlock(&hold_mu);
#else
	last = holds && !--holds;
#endif
	if (last)
		cache_drain();
}

/*
 * test_cpu_threads.c - the CPU backend's thread pool and scratch cache
 * (lib/cpu/threads.c): nbg_cpu_parallel visits every item exactly once on
 * several threads (each item counted: the expected count, 1, needs no
 * program output); no worker thread is left when an operation run outside
 * any hold returns, nor after the last nbg_cpu_pool_release (the process's
 * threads counted in /proc/self/task: 1, this one); a forked child whose
 * parent holds a started pool runs its own; a scratch block is 64-byte
 * aligned, as conv_fast.h says.  Where /proc/self/task cannot be read the
 * thread counts are printed as not judged.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpu/ops/conv_fast.h"

#define ITEMS 100003u

typedef struct seen {
	uint32_t *count; /* per item, atomic */
	uint64_t calls;  /* chunks (atomic) */
} seen;

static void count_items(void *ctx, uint64_t lo, uint64_t hi)
{
	seen *s = ctx;
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED);
	for (uint64_t i = lo; i < hi; i++)
		__atomic_add_fetch(&s->count[i], 1, __ATOMIC_RELAXED);
}

/* Runs ITEMS items on `threads` threads; 1 when each was visited once. */
static int items_once(uint32_t threads, uint64_t grain)
{
	seen s = { calloc(ITEMS, sizeof(uint32_t)), 0 };
	if (!s.count)
		return 0;
	nbg_cpu_parallel(threads, ITEMS, grain, count_items, &s);
	int ok = 1;
	for (uint32_t i = 0; i < ITEMS; i++)
		ok &= s.count[i] == 1;
	free(s.count);
	return ok;
}

/* The process's threads, -1 when /proc/self/task cannot be read. */
static int threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The threads the process had before any pool existed: 1, or more where
 * it runs under an emulator that keeps threads of its own (qemu-user's
 * RCU thread shows in /proc/self/task). */
static int base_threads = -1;

static void expect_alone(const char *when)
{
	int n = threads_now();
	/* a joined thread may show in /proc/self/task until the kernel has
	 * reaped it: look again for up to 200 ms */
	for (int i = 0; i < 40 && n > base_threads && base_threads >= 0; i++) {
		struct timespec t = { 0, 5 * 1000 * 1000 };
		nanosleep(&t, NULL);
		n = threads_now();
	}
	if (n < 0 || base_threads < 0) {
		printf("threads %s: not judged (/proc/self/task cannot be read)\n", when);
		return;
	}
	if (n != base_threads)
		fail_msg("%s: %d threads in the process (%d before any pool), the pool's workers left behind",
			 when, n, base_threads);
}

static void test_items(void **state)
{
	(void)state;
	for (uint32_t t = 1; t <= 5; t++)
		for (uint64_t grain = 1; grain <= 4096; grain *= 64)
			if (!items_once(t, grain))
				fail_msg("%u threads, grain %llu: an item not visited exactly once", t,
					 (unsigned long long)grain);
}

static void test_unheld_leaves_none(void **state)
{
	(void)state;
	assert_true(items_once(3, 1));
	expect_alone("after an operation run outside any hold");
}

static void test_release_leaves_none(void **state)
{
	(void)state;
	nbg_cpu_pool_hold();
	nbg_cpu_pool_hold(); /* holds nest */
	for (int i = 0; i < 3; i++)
		assert_true(items_once(3, 1));
	nbg_cpu_pool_release();
	assert_true(items_once(3, 1));
	nbg_cpu_pool_release();
	expect_alone("after the last release");
	nbg_cpu_pool_release(); /* one release too many: nothing */
	expect_alone("after a release without a hold");
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static void test_fork(void **state)
{
	(void)state;
	if (base_threads != 1) {
		/* qemu-user aborts in its own code when a threaded guest forks */
		printf("fork: not judged (the process started with %d threads: an emulator's)\n", base_threads);
		return;
	}
	if (SANITIZED) {
		/* gcc 12's AddressSanitizer does not take its allocator's lock
		 * around fork: a child forked while a worker of the parent holds
		 * it blocks in its first allocation (seen: 1 run in 12, the
		 * child's new workers waiting in SizeClassAllocator64::
		 * GetFromAllocator).  glibc's malloc, which the other builds
		 * use, resets its locks in the child. */
		printf("fork: not judged (built with AddressSanitizer, whose allocator lock a forked child "
		       "can inherit held)\n");
		return;
	}
	nbg_cpu_pool_hold();
	assert_true(items_once(3, 1)); /* the parent's pool started, held */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the child: its own pool, none left when its operation returns */
		int ok = items_once(3, 1) && items_once(2, 7);
		int n = threads_now();
		_exit(ok && (n == 1 || n < 0) ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(items_once(3, 1));
	nbg_cpu_pool_release();
	expect_alone("after the parent's release");
}

static void test_scratch(void **state)
{
	(void)state;
	nbg_cpu_pool_hold();
	for (size_t n = 1; n <= ((size_t)1 << 20); n = n * 7 + 3) {
		uint8_t *p = nbg_cpu_scratch_take(n);
		assert_non_null(p);
		if ((uintptr_t)p % 64)
			fail_msg("a scratch block of %zu bytes at %p: not 64-byte aligned", n, (void *)p);
		memset(p, 0xa5, n);
		nbg_cpu_scratch_give(p);
	}
	nbg_cpu_pool_release();
}

int main(void)
{
	base_threads = threads_now();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items),
		cmocka_unit_test(test_unheld_leaves_none),
		cmocka_unit_test(test_release_leaves_none),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_scratch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

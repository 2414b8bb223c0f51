/*
 * runtime_internal.h - helpers shared by runtime.c and probe.c.  Never
 * installed.
 */
#ifndef NBG_RUNTIME_INTERNAL_H
#define NBG_RUNTIME_INTERNAL_H

#include "nbg/runtime.h"
#include "runtime/errors.h"

/* The variable's value, or NULL when unset or empty (secure_getenv). */
NBG_RT_INTERNAL const char *nbg_rt_env(const char *name);


/* ------------------------------------------------------------ isolation */

/* The head of the block a child shares with its parent. */
typedef struct nbg_rt_shared_head {
	char call[64];  /* the vendor call in progress (a breadcrumb) */
	int done;       /* the child finished and filled rc and err */
	nbg_code rc;
	nbg_error err;
} nbg_rt_shared_head;

/* Records the vendor call about to run: in the shared block when isolated. */
NBG_RT_INTERNAL void nbg_rt_crumb(const char *call);

typedef void (*nbg_rt_child_fn)(nbg_rt_shared_head *shared, void *arg);

/*
 * Runs fn(shared, arg) in a forked child (or in this process when !isolate)
 * with a zeroed shared block of shared_size bytes (at least the head) that
 * outlives the child: *shared_out, released with nbg_rt_shared_free.
 * Returns NBG_OK when fn finished (read shared->rc), RUNTIME_CRASHED (a
 * signal or an exit inside the call the breadcrumb names), RUN_TIMEOUT (the
 * child outlived timeout_ms and was killed), INTERRUPTED (stop(stop_ctx),
 * when stop is not NULL, returned nonzero while the child ran: it was
 * killed), OUT_OF_MEMORY, IO (fork).
 */
typedef struct nbg_rt_stop {
	int (*fn)(void *ctx);
	void *ctx;
} nbg_rt_stop;

NBG_RT_INTERNAL nbg_code nbg_rt_isolate(int isolate, size_t shared_size, uint32_t timeout_ms,
					nbg_rt_stop stop, nbg_rt_child_fn fn, void *arg,
					nbg_rt_shared_head **shared_out, nbg_error *err);
NBG_RT_INTERNAL void nbg_rt_shared_free(nbg_rt_shared_head *shared, size_t size);

/* 1 when p..p+n could be a real object: not in the unmapped low pages,
 * aligned to `align`, no wrap-around, and its first and last bytes (each
 * page for n up to 64 KiB) readable by the kernel (checked with a pipe, so
 * an unmapped address is an EFAULT here instead of a crash). */
NBG_RT_INTERNAL int nbg_rt_plausible(const void *p, size_t n, size_t align);

#endif

/*
 * errors.h - how the runtime layer fills an nbg_error (errors.c): the
 * interface lib/runtime gives the CPU backend (lib/cpu), whose errors are
 * the runtime's.  Never installed (doc/architecture.md, "What may include
 * what").
 */
#ifndef NBG_RUNTIME_ERRORS_H
#define NBG_RUNTIME_ERRORS_H

#include "nbg/runtime.h"

#define NBG_RT_INTERNAL __attribute__((visibility("hidden")))

/* Fills err (may be NULL) and returns code. */
NBG_RT_INTERNAL nbg_code nbg_rt_fail(nbg_error *err, nbg_code code, int32_t index,
					const char *fmt, ...) __attribute__((format(printf, 4, 5)));
NBG_RT_INTERNAL void nbg_rt_error_clear(nbg_error *err);

#endif

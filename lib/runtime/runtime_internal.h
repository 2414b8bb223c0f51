/*
 * runtime_internal.h - helpers shared by runtime.c and probe.c.  Never
 * installed.
 */
#ifndef NBG_RUNTIME_INTERNAL_H
#define NBG_RUNTIME_INTERNAL_H

#include "nbg/runtime.h"

#define NBG_RT_INTERNAL __attribute__((visibility("hidden")))

/* Fills err (may be NULL) and returns code. */
NBG_RT_INTERNAL nbg_code nbg_rt_fail(nbg_error *err, nbg_code code, int32_t index,
					const char *fmt, ...) __attribute__((format(printf, 4, 5)));
NBG_RT_INTERNAL void nbg_rt_error_clear(nbg_error *err);
/* The variable's value, or NULL when unset or empty (secure_getenv). */
NBG_RT_INTERNAL const char *nbg_rt_env(const char *name);

#endif

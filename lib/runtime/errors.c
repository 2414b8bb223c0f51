/*
 * errors.c - how the runtime layer fills an nbg_error: the code, a sentence
 * and the tensor involved.
 */
#include <stdarg.h>
#include <string.h>

#include "common/internal.h"
#include "runtime/runtime_internal.h"

void nbg_rt_error_clear(nbg_error *err)
{
	memset(err, 0, sizeof(*err));
	err->index = -1;
}

nbg_code nbg_rt_fail(nbg_error *err, nbg_code code, int32_t index, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nbg_set_error(err, code, 0, "runtime", fmt, ap);
	va_end(ap);
	if (err)
		err->index = index;
	return code;
}

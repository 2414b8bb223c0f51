/*
 * error.c - error code names, explanations and exit codes, from the one list
 * in nbg/codes.h, and the one error setter of every libnbg component.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"

static const char *const code_names[NBG_E__COUNT] = {
	"ok",
#define X(sym, name, exit, text) name,
	NBG_CODE_LIST(X)
#undef X
};

static const char *const code_texts[NBG_E__COUNT] = {
	"No failure.",
#define X(sym, name, exit, text) text,
	NBG_CODE_LIST(X)
#undef X
};

static const unsigned char code_exits[NBG_E__COUNT] = {
	0,
#define X(sym, name, exit, text) exit,
	NBG_CODE_LIST(X)
#undef X
};

const char *nbg_code_name(nbg_code code)
{
	return (unsigned)code < NBG_E__COUNT ? code_names[code] : NULL;
}

const char *nbg_code_text(nbg_code code)
{
	return (unsigned)code < NBG_E__COUNT ? code_texts[code] : NULL;
}

int nbg_code_exit(nbg_code code)
{
	return (unsigned)code < NBG_E__COUNT ? code_exits[code] : NBG_EXIT_USAGE;
}

void nbg_set_error(nbg_error *err, nbg_code code, uint64_t offset, const char *field,
		   const char *fmt, va_list ap)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	err->code = code;
	err->offset = offset;
	err->index = -1;
	snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
}

nbg_code nbg_error_set(nbg_error *err, nbg_code code, uint64_t offset, const char *field,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nbg_set_error(err, code, offset, field, fmt, ap);
	va_end(ap);
	return code;
}

nbg_code nbg_error_io(nbg_error *err, int sys_errno, uint64_t offset, const char *field,
		      const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	nbg_set_error(err, NBG_E_IO, offset, field, fmt, ap);
	va_end(ap);
	if (err) {
		err->sys_errno = sys_errno;
		n = strlen(err->message);
		snprintf(err->message + n, sizeof(err->message) - n, ": %s", strerror(sys_errno));
	}
	return NBG_E_IO;
}

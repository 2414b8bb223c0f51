/*
 * codes.c - failure code names and explanations, from the one list in
 * nbg_codes.h; error filling and notes shared by the decoders.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/internal.h"

static const char *const code_names[NBG_E__COUNT] = {
	"ok",
#define X(sym, name, text) name,
	NBG_CODE_LIST(X)
#undef X
};

static const char *const code_texts[NBG_E__COUNT] = {
	"No failure.",
#define X(sym, name, text) text,
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

void nbg_set_error(nbg_error *err, nbg_code code, uint64_t offset, const char *field,
		   const char *fmt, va_list ap)
{
	if (!err)
		return;
	err->code = code;
	err->offset = offset;
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

nbg_code nbg_fail(nbg_ctx *c, nbg_code code, uint64_t offset, const char *field,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nbg_set_error(c->err, code, offset, field, fmt, ap);
	va_end(ap);
	return code;
}

bool nbg_note_add(nbg_ctx *c, const char *id, uint64_t offset, const char *fmt, ...)
{
	nbg_model *m = c->m;
	va_list ap;

	if (m->note_count == c->note_cap) {
		size_t cap = c->note_cap ? c->note_cap * 2 : 16;
		nbg_note *n;

		/* Notes are per rule and per structure; a hostile file could
		 * still ask for many, so they are capped. */
		if (cap > 4096)
			return false;
		n = realloc(m->notes, cap * sizeof(*n));
		if (!n)
			return false;
		m->notes = n;
		c->note_cap = cap;
	}
	nbg_note *n = &m->notes[m->note_count++];
	snprintf(n->id, sizeof(n->id), "%s", id);
	n->offset = offset;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
	return true;
}

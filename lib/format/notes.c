/*
 * notes.c - how the family parsers report: a failure (fills the caller's
 * error) or a note (a finding that is not a failure, kept in the model).
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/internal.h"

nbg_code nbg_fail(nbg_ctx *c, nbg_code code, uint64_t offset, const char *field,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nbg_set_error(c->err, code, offset, field, fmt, ap);
	va_end(ap);
	return code;
}

nbg_code nbg_checksum_failed(nbg_ctx *c, nbg_code code, const nbg_error *e)
{
	if (!(c->flags & NBG_PARSE_KEEP_UNVERIFIED)) {
		if (c->err)
			*c->err = *e;
		return code;
	}
	if (c->kept_rc == NBG_OK) {
		c->kept_rc = code;
		c->kept = *e;
	}
	return NBG_OK;
}

bool nbg_note_add(nbg_ctx *c, const char *id, uint64_t offset, const char *fmt, ...)
{
	nbg_model *m = c->m;
	va_list ap;

	/* Notes are per rule and per structure; a hostile file could still ask
	 * for many, so they are capped. */
	if (m->note_count == 4096)
		return false;
	nbg_note *grown = nbg_grow(m->notes, &c->note_cap, m->note_count + 1, sizeof(*grown), 16);
	if (!grown)
		return false;
	m->notes = grown;
	nbg_note *n = &m->notes[m->note_count++];
	snprintf(n->id, sizeof(n->id), "%s", id);
	n->offset = offset;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
	return true;
}

/*
 * json_stream.c - the streaming JSON writer (json_stream.h).
 *
 * jansson with JSON_INDENT(2) writes a non-empty container as its opening
 * bracket, each member on a line of its own indented two spaces per depth
 * ("key": value, members separated by ","), and the closing bracket on a
 * line indented to the container's own depth; an empty one as "{}" or "[]".
 * A value dumped at depth 0 and then indented by two spaces per enclosing
 * container after every newline is the same value dumped in place: a
 * newline inside a dump is always one of jansson's own (strings escape
 * theirs).
 */
#include <errno.h>
#include <stdlib.h>

#include "report/json_stream.h"

static const char spaces[2 * NBG_JW_MAX_DEPTH + 1] =
	"                                ";

void nbg_jw_init(nbg_jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->failed = 0;
	w->len = 0;
}

static void flush(nbg_jw *w)
{
	if (w->len && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->failed = w->failed ? w->failed : 2;
	w->len = 0;
}

static void put(nbg_jw *w, const char *p, size_t n)
{
	if (w->len + n > sizeof(w->buf)) {
		flush(w);
		if (n > sizeof(w->buf)) {
			if (fwrite(p, 1, n, w->f) != n)
				w->failed = w->failed ? w->failed : 2;
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void putstr(nbg_jw *w, const char *s)
{
	put(w, s, strlen(s));
}

static void newline(nbg_jw *w, unsigned depth)
{
	put(w, "\n", 1);
	put(w, spaces, 2 * (depth < NBG_JW_MAX_DEPTH ? depth : NBG_JW_MAX_DEPTH));
}

/* jansson's output of one value, re-indented to the writer's depth. */
static int indented(const char *buf, size_t size, void *data)
{
	nbg_jw *w = data;
	const char *p = buf, *end = buf + size, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		put(w, p, (size_t)(nl - p));
		newline(w, w->depth);
		p = nl + 1;
	}
	put(w, p, (size_t)(end - p));
	return 0;
}

/* A key the code names: plain identifiers, written as they are; anything
 * else goes through jansson's string encoder. */
static void put_key(nbg_jw *w, const char *key)
{
	bool plain = true;

	for (const char *p = key; *p && plain; p++)
		plain = *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\';
	if (plain) {
		put(w, "\"", 1);
		putstr(w, key);
		put(w, "\": ", 3);
		return;
	}
	json_t *s = json_string(key);
	if (!s || json_dump_callback(s, indented, w, JSON_ENCODE_ANY) != 0)
		w->failed = 1;
	json_decref(s);
	put(w, ": ", 2);
}

/* What comes before a member: the separator, the line break and indent,
 * and the key. */
static void member(nbg_jw *w, const char *key)
{
	if (w->depth == 0)
		return;
	if (w->items[w->depth - 1]++)
		put(w, ",", 1);
	newline(w, w->depth);
	if (key)
		put_key(w, key);
}

static void open_container(nbg_jw *w, const char *key, char open, char close)
{
	member(w, key);
	if (w->depth == NBG_JW_MAX_DEPTH) {
		w->failed = 1; /* never reached: the documents nest far less */
		return;
	}
	put(w, &open, 1);
	w->close[w->depth] = close;
	w->items[w->depth++] = 0;
}

void nbg_jw_object(nbg_jw *w, const char *key)
{
	open_container(w, key, '{', '}');
}

void nbg_jw_array(nbg_jw *w, const char *key)
{
	open_container(w, key, '[', ']');
}

void nbg_jw_end(nbg_jw *w)
{
	if (w->depth == 0)
		return;
	w->depth--;
	if (w->items[w->depth])
		newline(w, w->depth);
	put(w, &w->close[w->depth], 1);
	if (w->depth == 0)
		flush(w);
}

void nbg_jw_put(nbg_jw *w, const char *key, json_t *v)
{
	if (!v) {
		w->failed = 1;
		return;
	}
	member(w, key);
	if (json_dump_callback(v, indented, w, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					       JSON_ENCODE_ANY) != 0)
		w->failed = 1;
	json_decref(v);
}

void nbg_jw_members(nbg_jw *w, json_t *obj)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj)) {
		w->failed = 1;
		json_decref(obj);
		return;
	}
	json_object_foreach(obj, key, v)
		nbg_jw_put(w, key, json_incref(v));
	json_decref(obj);
}

nbg_code nbg_jw_status(nbg_jw *w, nbg_error *err)
{
	flush(w);
	if (w->failed == 1)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "memory",
				     "out of memory writing the JSON document");
	if (w->failed || ferror(w->f))
		return nbg_error_io(err, errno ? errno : EIO, 0, "output",
				    "writing the JSON document failed");
	return NBG_OK;
}

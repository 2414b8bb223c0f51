/*
 * escape.c - file names made safe to print.  A path from the command line
 * or a walked directory is bytes chosen by whoever named the file: printed
 * raw, a newline forges an output line and ESC / OSC sequences reach the
 * terminal.  Every path nbgkit prints in text goes through here.
 *
 * The rules follow `ls -b` (C escapes, \ooo octal for other bytes), made
 * independent of the locale: printable ASCII is kept, backslash doubles,
 * \a \b \t \n \v \f \r are written as such, every other control byte and
 * every byte that is not part of a valid UTF-8 sequence becomes \ooo; valid
 * UTF-8 is kept except the code points that move or hide text (C1 controls,
 * zero-width and bidirectional controls, line and paragraph separators),
 * whose bytes become \ooo too.  Spaces are kept.  The result is unambiguous:
 * a backslash in the output always starts an escape.
 */
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"

/* Length of the valid UTF-8 sequence at p (1..4), its code point in *cp;
 * 0 when the bytes are not one (overlong, surrogate, past U+10FFFF, cut). */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Code points that reorder, hide or break lines of text on a terminal. */
static int hides_text(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x61c || (c >= 0x200b && c <= 0x200f) ||
	       (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2069) || c == 0xfeff ||
	       (c >= 0xfff9 && c <= 0xfffb);
}

/* Calls put(piece, len) for the escaped form of s, in order. */
typedef void (*put_fn)(void *ctx, const char *p, size_t n);

static void escape_walk(const char *s, put_fn put, void *ctx)
{
	static const char letters[] = "abtnvfr"; /* \a = 7 ... \r = 13 */
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];

	while (*p) {
		uint32_t cp;
		size_t n;

		if (*p >= 0x20 && *p < 0x7f) {
			if (*p == '\\')
				put(ctx, "\\\\", 2);
			else
				put(ctx, (const char *)p, 1);
			p++;
			continue;
		}
		if (*p >= 7 && *p <= 13) {
			buf[0] = '\\';
			buf[1] = letters[*p - 7];
			put(ctx, buf, 2);
			p++;
			continue;
		}
		n = *p >= 0x80 ? utf8_seq(p, &cp) : 0;
		if (n && !hides_text(cp)) {
			put(ctx, (const char *)p, n);
			p += n;
			continue;
		}
		for (size_t i = 0; i < (n ? n : 1); i++) {
			buf[0] = '\\';
			buf[1] = (char)('0' + (p[i] >> 6));
			buf[2] = (char)('0' + ((p[i] >> 3) & 7));
			buf[3] = (char)('0' + (p[i] & 7));
			put(ctx, buf, 4);
		}
		p += n ? n : 1;
	}
}

typedef struct sink {
	char *out;
	size_t cap, len; /* len counts every byte, also those past cap */
} sink;

static void sink_put(void *ctx, const char *p, size_t n)
{
	sink *k = ctx;

	for (size_t i = 0; i < n; i++, k->len++)
		if (k->out && k->len < k->cap)
			k->out[k->len] = p[i];
}

size_t nbg_escape_path_buf(char *out, size_t cap, const char *path)
{
	sink k = { out, cap, 0 };

	escape_walk(path ? path : "", sink_put, &k);
	if (!out || !cap)
		return k.len;
	if (k.len < cap) {
		out[k.len] = '\0';
	} else {
		/* Cut short, ending in "..." (an escape cut in two still reads
		 * as bytes, never as a control). */
		size_t e = cap - 1;
		out[e] = '\0';
		for (size_t i = 0; i < 3 && e > i; i++)
			out[e - 1 - i] = '.';
	}
	return k.len;
}

char *nbg_path_escape(const char *path)
{
	size_t n = nbg_escape_path_buf(NULL, 0, path);
	char *out = malloc(n + 1);

	if (out)
		nbg_escape_path_buf(out, n + 1, path);
	return out;
}

int nbg_path_needs_escape(const char *path)
{
	/* Every escape is longer than the byte it stands for. */
	return nbg_escape_path_buf(NULL, 0, path) != strlen(path ? path : "");
}

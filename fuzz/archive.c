/*
 * archive.c - the ustar reader of archive.h: the file decompressed by zlib's
 * gz* functions (which read an uncompressed file as it is) and cut into
 * 512-byte blocks; every header is checked before any of its fields is used,
 * and only what fuzz/run.sh writes (POSIX ustar, regular files, directories)
 * is accepted.
 */
#include "archive.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define BLOCK 512u

/* POSIX ustar header fields: offset (_AT) and width (_W) */
enum {
	NAME_AT = 0, NAME_W = 100,
	SIZE_AT = 124, SIZE_W = 12,
	SUM_AT = 148, SUM_W = 8,
	TYPE_AT = 156,
	MAGIC_AT = 257, /* "ustar\0" then version "00" */
	PREFIX_AT = 345, PREFIX_W = 155, /* then "/" and the name */
};

typedef struct reader {
	gzFile gz;
	const char *path;
	unsigned long long offset; /* decompressed bytes read so far */
	char *err;
	size_t errlen;
} reader;

static int fail(reader *r, unsigned long long at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(reader *r, unsigned long long at, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen,
		 "%s: byte %llu of the decompressed archive: %s. The archive is damaged or "
		 "was not written by fuzz/run.sh; restore it from git.",
		 r->path, at, what);
	return -1;
}

/* n bytes, counted against ARCHIVE_MAX_TOTAL.  1: read; 0: the stream ended
 * before the first byte and at_end_ok; -1: error set. */
static int read_exact(reader *r, uint8_t *buf, size_t n, const char *what, int at_end_ok)
{
	int got, zerr;
	const char *msg;

	if (n > ARCHIVE_MAX_TOTAL - r->offset)
		return fail(r, r->offset, "more than %llu bytes once decompressed (the limit)",
			    (unsigned long long)ARCHIVE_MAX_TOTAL);
	got = gzread(r->gz, buf, (unsigned)n);
	msg = gzerror(r->gz, &zerr);
	if (zerr != Z_OK && zerr != Z_BUF_ERROR)
		return fail(r, r->offset + (got > 0 ? (unsigned)got : 0),
			    "the compressed stream is corrupt (zlib: %s)", msg);
	if (got == 0 && at_end_ok && zerr == Z_OK)
		return 0;
	if (got < 0 || (size_t)got < n)
		return fail(r, r->offset + (got > 0 ? (unsigned)got : 0),
			    "the archive ends inside %s (%d of %zu bytes): it is truncated", what,
			    got > 0 ? got : 0, n);
	r->offset += n;
	return 1;
}

/* An octal field: optional leading spaces, at least one digit, then only
 * spaces and NULs (GNU's base-256 form is refused: nothing here is that large). */
static int octal(const uint8_t *h, size_t off, size_t width, unsigned long long *v)
{
	size_t i = off, end = off + width;
	unsigned long long x = 0;
	int digits = 0;

	while (i < end && h[i] == ' ')
		i++;
	for (; i < end && h[i] >= '0' && h[i] <= '7'; i++, digits++) {
		if (x >> 60)
			return 0;
		x = x * 8 + (unsigned)(h[i] - '0');
	}
	for (; i < end; i++)
		if (h[i] != ' ' && h[i] != '\0')
			return 0;
	*v = x;
	return digits > 0;
}

/* Appends a name field (NUL-terminated or full width) to out; 0 when it holds
 * a byte that is not printable ASCII, or a space. */
static int name_field(const uint8_t *h, size_t off, size_t width, char *out, size_t *len)
{
	for (size_t i = off; i < off + width && h[i]; i++) {
		if (h[i] <= 0x20 || h[i] >= 0x7f)
			return 0;
		out[(*len)++] = (char)h[i];
	}
	return 1;
}

/* Checks the header at r->offset - BLOCK; fills the member's name ("" for a
 * directory) and size. */
static int check_header(reader *r, const uint8_t *h, char *name, size_t *size)
{
	unsigned long long at = r->offset - BLOCK, stored, sum = 0, v;
	size_t len = 0;

	if (memcmp(h + MAGIC_AT, "ustar\0" "00", 8) != 0)
		return fail(r, at + MAGIC_AT, "not a POSIX ustar header (fuzz/run.sh writes "
			    "tar --format=ustar)");
	if (!octal(h, SUM_AT, SUM_W, &stored))
		return fail(r, at + SUM_AT, "the header checksum field is not an octal number");
	for (unsigned i = 0; i < BLOCK; i++)
		sum += (i >= SUM_AT && i < SUM_AT + SUM_W) ? ' ' : h[i];
	if (sum != stored)
		return fail(r, at + SUM_AT, "header checksum %llo, the header's bytes sum to %llo",
			    stored, sum);
	if (!octal(h, SIZE_AT, SIZE_W, &v))
		return fail(r, at + SIZE_AT, "the size field is not an octal number");
	if (v > ARCHIVE_MAX_MEMBER)
		return fail(r, at + SIZE_AT, "a member of %llu bytes (at most %u)", v,
			    ARCHIVE_MAX_MEMBER);
	*size = (size_t)v;
	if (h[PREFIX_AT]) {
		if (!name_field(h, PREFIX_AT, PREFIX_W, name, &len))
			return fail(r, at + PREFIX_AT, "the name prefix holds a byte that is not "
				    "printable ASCII");
		name[len++] = '/';
	}
	if (!name_field(h, NAME_AT, NAME_W, name, &len) || len == 0)
		return fail(r, at, "the member name is empty or holds a byte that is not "
			    "printable ASCII");
	name[len] = '\0';
	if (h[TYPE_AT] == '5') { /* a directory ("NAME/"): no data */
		name[0] = '\0';
		return v == 0 ? 0 : fail(r, at + SIZE_AT, "a directory member with data");
	}
	if (h[TYPE_AT] != '0' && h[TYPE_AT] != '\0')
		return fail(r, at + TYPE_AT, "member type 0x%02x; only regular files (and "
			    "directories) are read", h[TYPE_AT]);
	if (name[len - 1] == '/')
		return fail(r, at, "a regular file named like a directory");
	return 0;
}

/* After the end-of-archive block: only zeros (tar's padding) up to the end,
 * so that damage anywhere in the file is seen (zlib checks its CRC there). */
static int check_tail(reader *r)
{
	uint8_t b[BLOCK];
	int got, zerr;
	const char *msg;

	while ((got = gzread(r->gz, b, BLOCK)) > 0) {
		for (int i = 0; i < got; i++)
			if (b[i])
				return fail(r, r->offset + (unsigned)i,
					    "a nonzero byte after the end-of-archive block");
		r->offset += (unsigned)got;
		if (r->offset > ARCHIVE_MAX_TOTAL)
			return fail(r, r->offset, "more than %llu bytes once decompressed (the "
				    "limit)", (unsigned long long)ARCHIVE_MAX_TOTAL);
	}
	msg = gzerror(r->gz, &zerr);
	if (got < 0 || zerr != Z_OK)
		return fail(r, r->offset, "the compressed stream is corrupt or truncated (zlib: %s)",
			    msg);
	return 0;
}

static int all_zero(const uint8_t *b)
{
	for (unsigned i = 0; i < BLOCK; i++)
		if (b[i])
			return 0;
	return 1;
}

long archive_each(const char *path,
		  void (*fn)(const char *name, const uint8_t *data, size_t size, void *arg),
		  void *arg, char *err, size_t errlen)
{
	reader r = { .path = path, .err = err, .errlen = errlen };
	uint8_t h[BLOCK], *data;
	char member[PREFIX_W + 1 + NAME_W + 1], *name;
	size_t size = 0, pad, plen = strlen(path);
	long members = 0;
	int k;

	r.gz = gzopen(path, "rb");
	if (!r.gz) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 errno ? strerror(errno) : "out of memory");
		return -1;
	}
	name = malloc(plen + 1 + sizeof(member));
	k = name ? 0 : -1;
	while (k == 0) {
		k = read_exact(&r, h, BLOCK, "a header", 1);
		if (k == 0)
			k = fail(&r, r.offset, "no end-of-archive block: it is truncated");
		if (k < 0)
			break;
		if (all_zero(h)) {
			k = check_tail(&r);
			break;
		}
		k = check_header(&r, h, member, &size);
		if (k < 0 || !member[0]) /* an error, or a directory */
			continue;
		data = malloc(size ? size : 1);
		if (!data) {
			k = fail(&r, r.offset, "out of memory for a member of %zu bytes", size);
			break;
		}
		pad = (BLOCK - size % BLOCK) % BLOCK;
		k = read_exact(&r, data, size, "a member's data", 0);
		if (k == 1)
			k = read_exact(&r, h, pad, "a member's padding", 0);
		if (k == 1) {
			snprintf(name, plen + 1 + sizeof(member), "%s:%s", path, member);
			fn(name, data, size, arg);
			members++;
			k = 0;
		}
		free(data);
	}
	if (!name)
		snprintf(err, errlen, "%s: out of memory", path);
	free(name);
	gzclose(r.gz);
	return k < 0 ? -1 : members;
}

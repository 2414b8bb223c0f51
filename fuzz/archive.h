/*
 * archive.h - reads the committed fuzz corpora: one ustar archive per
 * harness, gzip-compressed (fuzz/corpus/HARNESS.tar.gz, written by
 * fuzz/run.sh), one input per member.
 *
 * The archive is untrusted like any other input: every header is checked
 * (magic, checksum, octal fields, printable name, member type) before it is
 * used, a member is at most ARCHIVE_MAX_MEMBER bytes and the archive at most
 * ARCHIVE_MAX_TOTAL bytes once decompressed, so a hostile or damaged file
 * costs bounded memory and time and is refused with a message naming the
 * byte offset (in the decompressed stream) of what is wrong.
 */
#ifndef NBG_FUZZ_ARCHIVE_H
#define NBG_FUZZ_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#define ARCHIVE_MAX_MEMBER (1u << 20)
#define ARCHIVE_MAX_TOTAL (512ull << 20)

/* Calls fn(name, data, size, arg) for every regular-file member of the
 * archive at path, in archive order (directory members are passed over);
 * data is valid during the call only, name is "PATH:MEMBER".  A plain
 * (uncompressed) tar file is read too.  Returns the number of members
 * passed to fn, or -1 with a sentence in err (errlen bytes) when the archive
 * cannot be opened or read, or a header, a size or the compressed stream is
 * wrong; the members before the fault have been passed to fn by then. */
long archive_each(const char *path,
		  void (*fn)(const char *name, const uint8_t *data, size_t size, void *arg),
		  void *arg, char *err, size_t errlen);

#endif

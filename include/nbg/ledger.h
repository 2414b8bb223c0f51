/*
 * nbg_ledger.h - libnbg byte-ownership ledger, lossless re-emission and a
 * picture of the file (doc/ledger.md).
 *
 * A ledger assigns every byte of a successfully parsed NBG file to exactly
 * one owner range: continuous, non-overlapping ranges from offset 0 to the
 * file size, each with a byte class, the structure it belongs to and the
 * SHA-256 of its bytes.  Views (the final 512-byte connection region when
 * something else owns it, dynamic-I/O entries inside their region, entries
 * nested in other entries, empty sections) are listed apart and never own
 * bytes.
 *
 * Re-emission writes a file from the ledger's ranges alone and refuses
 * (NBG_E_SEMANTIC_CHANGE_REFUSED) whenever the bytes about to be written are
 * not the bytes the ledger fingerprinted: nbgkit never serializes a change.
 * It writes to a descriptor the caller opened; which file that becomes, and
 * how it replaces an existing one, is the caller's (`nbg reemit` writes a
 * temporary and renames it, doc/security.md).
 *
 * Thread safety: a ledger is immutable after it is built and may be read
 * from several threads at once; every function is reentrant.
 *
 * Errors: functions return NBG_OK or a code of the one list (nbg/codes.h):
 * NBG_E_LEDGER_INVARIANT (the ranges do not tile the file: a bug, or an
 * edited ledger document), NBG_E_IO (a write, sync or read-back of the
 * caller's descriptor failed; err->sys_errno is set), NBG_E_RESOURCE (a ledger
 * document that is not a ledger, or a digest that could not be computed),
 * NBG_E_OUT_OF_MEMORY, and NBG_E_SEMANTIC_CHANGE_REFUSED for re-emission.
 */
#ifndef NBG_LEDGER_H
#define NBG_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Byte classes of owner ranges. */
typedef enum nbg_ledger_class {
	NBG_LEDGER_DECODED_RECORD = 0,   /* header, sub-header, directory, decoded sections */
	NBG_LEDGER_ALIGNMENT = 1,        /* minimum pre-section bytes an alignment requires */
	NBG_LEDGER_PADDING = 2,          /* every other byte no structure claims */
	NBG_LEDGER_PRESERVED_OPAQUE = 3, /* section payloads without a proved codec */
	NBG_LEDGER_CONNECTION_TAIL = 4,  /* the final 512 bytes, when nothing else owns any */
	NBG_LEDGER_OPAQUE_FIXED_EXTENSION = 5, /* v1: bytes between prefix and first section */
	NBG_LEDGER_DECODED_COEFFICIENTS = 6, /* kernel streams decoded whole, each check
					      * holding (nbg_ledger_build_weights) */
	NBG_LEDGER_CLASS_COUNT = 7
} nbg_ledger_class;

/* Kinds of views: fingerprints over bytes that other ranges own. */
typedef enum nbg_ledger_view_kind {
	/* the final 512 bytes, all owned by other structures */
	NBG_VIEW_SECTION_COVERED = 0,
	/* the final 512 bytes, partly owned by other structures; the rest is padding */
	NBG_VIEW_PARTLY_COVERED = 1,
	/* the final 512 bytes, owned by the connection-tail range of the same extent */
	NBG_VIEW_CONNECTION_TAIL = 2,
	/* one dynamic-I/O table entry inside the DYNAIO region */
	NBG_VIEW_DYNAIO_ENTRY = 3,
	/* a v1 entry that lies inside (or overlaps) bytes another structure owns */
	NBG_VIEW_NESTED_ENTRY = 4,
	/* a section of size zero: it owns no bytes (offset as declared) */
	NBG_VIEW_EMPTY_SECTION = 5,
	NBG_VIEW_KIND_COUNT = 6
} nbg_ledger_view_kind;

#define NBG_LEDGER_NAME_MAX 64

/* One owner range.  `owner` names the structure: "header", "sub-header",
 * "directory entry 5", "section 24 COEF_DATA", "alignment of section 24
 * COEF_DATA", "end of file", ... (doc/ledger.md lists them). */
typedef struct nbg_ledger_range {
	uint64_t offset, size;
	nbg_ledger_class cls;
	char owner[NBG_LEDGER_NAME_MAX];
	int32_t section;       /* index into nbg_model.sections, -1 if none */
	uint32_t section_type; /* v2 type (v1: entry index + 1); 0 if section < 0 */
	uint8_t sha256[32];
} nbg_ledger_range;

typedef struct nbg_ledger_view {
	nbg_ledger_view_kind kind;
	uint64_t offset, size;
	uint64_t covered_bytes; /* tail views: bytes other structures own */
	char name[NBG_LEDGER_NAME_MAX];
	int32_t section;        /* index into nbg_model.sections, -1 if none */
	uint8_t sha256[32];
} nbg_ledger_view;

typedef struct nbg_ledger nbg_ledger;

/* ------------------------------------------------------ re-emission */

/* nbg_reemit_write, nbg_reemit_model: after the last byte, fsync the
 * descriptor (a regular file opened for reading and writing) and read the
 * file back from the device, window by window behind the writer and the
 * rest after the fsync: NBG_E_IO unless every window has the size and
 * CRC-32 written there (doc/ledger.md, section 5). */
#define NBG_REEMIT_READBACK 0x2u

/* How the written file was read back. */
typedef enum nbg_readback {
	NBG_READBACK_NONE = 0,   /* not read back: no NBG_REEMIT_READBACK */
	NBG_READBACK_DEVICE = 1, /* every byte read from the device: its pages dropped
				  * from the page cache first, or read with O_DIRECT */
	NBG_READBACK_CACHE = 2,  /* some from the page cache: a file system that keeps
				  * files in memory (tmpfs), where that is the storage */
} nbg_readback;

/* What nbg_reemit_model wrote; set `size` to sizeof(nbg_reemit_info). */
typedef struct nbg_reemit_info {
	size_t size;
	uint64_t bytes;       /* written */
	size_t ranges;        /* ledger ranges they came from */
	uint8_t sha256[32];   /* SHA-256 of what was written */
	nbg_readback readback;
} nbg_reemit_info;

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_LEDGER_H_STATIC_LINKING_ONLY)
#define NBG_LEDGER_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* "decoded-record", "alignment", ... ; NULL out of range. */
NBG_API const char *nbg_ledger_class_name(nbg_ledger_class c);

/* "section-covered-view", "partly-covered-view", "connection-tail-view",
 * "dynaio-entry-view", "nested-entry-view", "empty-section"; NULL out of range. */
NBG_API const char *nbg_ledger_view_kind_name(nbg_ledger_view_kind k);

/*
 * Builds the ledger of a model returned by nbg_parse() (v1 or v2).  The
 * model's buffer (m->data) must still be alive; the ledger copies what it
 * needs and does not keep a pointer to it or to the model.
 *
 * Returns NBG_OK and a new ledger in *out (free with nbg_ledger_free), or
 * NBG_E_LEDGER_INVARIANT when the ranges it derived do not tile the file
 * exactly (a bug: the error names the first offset where they break), or
 * NBG_E_RESOURCE when memory runs out.  On failure *out is NULL and
 * *err (may be NULL) says why.
 */
NBG_API nbg_code nbg_ledger_build(const nbg_model *m, nbg_ledger **out, nbg_error *err);
NBG_API void nbg_ledger_free(nbg_ledger *l);

/* NBG family (1 or 2) and version word of the file the ledger describes. */
NBG_API uint32_t nbg_ledger_family(const nbg_ledger *l);
NBG_API uint32_t nbg_ledger_version(const nbg_ledger *l);
/* Size and SHA-256 of the whole source file. */
NBG_API uint64_t nbg_ledger_file_size(const nbg_ledger *l);
NBG_API const uint8_t *nbg_ledger_file_sha256(const nbg_ledger *l);

/* Owner ranges in file order; nbg_ledger_range_at returns NULL past the end. */
NBG_API size_t nbg_ledger_range_count(const nbg_ledger *l);
NBG_API const nbg_ledger_range *nbg_ledger_range_at(const nbg_ledger *l, size_t i);
/* The range owning byte `offset` (binary search), or NULL past the end. */
NBG_API const nbg_ledger_range *nbg_ledger_owner_of(const nbg_ledger *l, uint64_t offset);

/* Views, in file order (by offset, then kind). */
NBG_API size_t nbg_ledger_view_count(const nbg_ledger *l);
NBG_API const nbg_ledger_view *nbg_ledger_view_at(const nbg_ledger *l, size_t i);

/* Bytes and number of ranges of one class (0 for an out-of-range class). */
NBG_API uint64_t nbg_ledger_class_bytes(const nbg_ledger *l, nbg_ledger_class c);
NBG_API size_t nbg_ledger_class_ranges(const nbg_ledger *l, nbg_ledger_class c);

/*
 * Checks that `count` ranges tile [0, file_size) exactly: sorted, first at 0,
 * each starting where the one before ends, none empty, the last ending at
 * file_size.  Every ledger is checked with this when it is built or loaded;
 * it is public so the rule can be tested on its own.  Returns NBG_OK or
 * NBG_E_LEDGER_INVARIANT with the offset where the tiling breaks
 * (NBG_E_INVALID_ARGUMENT for r NULL with count > 0).
 */
NBG_API nbg_code nbg_ledger_check_tiling(const nbg_ledger_range *r, size_t count,
					 uint64_t file_size, nbg_error *err);

/* The ledger as one JSON document (ranges, views, per-class totals, file
 * SHA-256); `path` is recorded as given (may be NULL).  Returns a malloc'd
 * NUL-terminated string, NULL on allocation failure. */
NBG_API char *nbg_ledger_json(const nbg_ledger *l, const char *path);

/*
 * Reads a ledger back from the document nbg_ledger_json() wrote, so a file
 * can later be checked against the fingerprints taken from its original.
 * The document is untrusted: every field is type- and range-checked and the
 * ranges must tile the declared file size.  Returns NBG_OK and a new ledger,
 * NBG_E_RESOURCE for a document that is not a ledger (or no memory),
 * or NBG_E_LEDGER_INVARIANT for ranges that do not tile.
 */
NBG_API nbg_code nbg_ledger_from_json(const char *text, size_t len, nbg_ledger **out,
				      nbg_error *err);

/* The picture of the file as an SVG document (doc/ledger.md, "The map"):
 * one band to scale, one log-scaled band where small structures stay
 * visible, bands colored by class and labeled with owners, the final-512
 * view marked, a legend with per-class totals.  `title` (may be NULL) is
 * shown at the top.  Returns a malloc'd string, NULL on allocation failure. */
NBG_API char *nbg_ledger_svg(const nbg_ledger *l, const char *title);

/*
 * Verifies that data[0..size) is byte for byte what the ledger fingerprinted:
 * size equal to the ledger's file size, every range's SHA-256 equal, and the
 * SHA-256 of the ranges' concatenation (what would be written) equal to the
 * source file's.  Returns NBG_OK, or NBG_E_SEMANTIC_CHANGE_REFUSED with
 * err->offset at the start of the first range whose bytes changed and
 * err->field naming its owner (offset = the smaller size when the sizes
 * differ).
 */
NBG_API nbg_code nbg_reemit_check(const nbg_ledger *l, const uint8_t *data, size_t size,
				  nbg_error *err);

/*
 * Re-emits data[0..size) to the open descriptor `fd`, range by range in
 * ledger order, after the checks of nbg_reemit_check() pass (it runs them,
 * before the first byte is written); the bytes written are CRC'd as they go
 * out and compared with the CRC-32 of the bytes checked, so an input
 * changing under us is refused.  Nothing is written when the check fails.
 * flags: 0 or NBG_REEMIT_READBACK.  The caller decides when the output
 * becomes visible.  Returns NBG_OK, NBG_E_SEMANTIC_CHANGE_REFUSED, NBG_E_IO
 * (short or failed write, or a read-back that differs), NBG_E_RESOURCE or
 * NBG_E_OUT_OF_MEMORY.
 */
NBG_API nbg_code nbg_reemit_write(const nbg_ledger *l, const uint8_t *data, size_t size, int fd,
				  unsigned flags, nbg_error *err);

/*
 * Re-emits the file `m` was parsed from (m->data, m->file_size bytes) to the
 * open descriptor `fd` from its own ledger, hashing each byte once: the
 * model may be parsed with NBG_PARSE_NO_FILE_SHA256 |
 * NBG_PARSE_NO_SECTION_SHA256 (what `nbg reemit` does).  The ranges'
 * fingerprints are the CRC-32s the parser computed; each range is CRC'd as
 * it is written and compared with them (NBG_E_SEMANTIC_CHANGE_REFUSED when
 * the input changed since the parse); the SHA-256 of the output is computed
 * on a second thread while it is written; with NBG_REEMIT_READBACK the file
 * is synced and read back (doc/ledger.md, section 5).  info (may be NULL)
 * receives the byte and range counts, the SHA-256 and how the file was read
 * back.  Returns NBG_OK, NBG_E_SEMANTIC_CHANGE_REFUSED, NBG_E_IO,
 * NBG_E_OUT_OF_MEMORY or NBG_E_RESOURCE; what was written is then not the
 * file, and the caller discards it.
 */
NBG_API nbg_code nbg_reemit_model(const nbg_model *m, int fd, unsigned flags,
				  nbg_reemit_info *info, nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif

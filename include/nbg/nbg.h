/*
 * nbg.h - libnbg: parse, validate and fingerprint VeriSilicon NBG files.
 *
 * Thread safety: every function is reentrant; an nbg_model is immutable after
 * nbg_parse() returns and may be read from several threads at once.
 *
 * Memory: nbg_parse() never copies section payloads.  The model keeps
 * pointers into the caller's buffer only through the `data`/`size` pair it
 * was given; the caller keeps that buffer alive while it uses the model (or
 * until nbg_model_free()).
 */
#ifndef NBG_H
#define NBG_H

#include <stddef.h>
#include <stdint.h>

#include "codes.h"
#include "nbg/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NBG_API __attribute__((visibility("default")))
#else
#define NBG_API
#endif


/* ------------------------------------------------------------------ errors */

typedef enum nbg_code {
	NBG_OK = 0,
#define NBG_X_ENUM(sym, name, exit, text) NBG_E_##sym,
	NBG_CODE_LIST(NBG_X_ENUM)
#undef NBG_X_ENUM
	NBG_E__COUNT
} nbg_code;

/* Kebab-case stable name ("section-overlap"); "ok" for NBG_OK; NULL if out of range. */
NBG_API const char *nbg_code_name(nbg_code code);
/* One-sentence explanation of the rule behind the code; NULL if out of range. */
NBG_API const char *nbg_code_text(nbg_code code);
/* The process exit code for `code` (the NBG_EXIT_* values below): 0 for
 * NBG_OK, the list's column otherwise, NBG_EXIT_USAGE if out of range. */
NBG_API int nbg_code_exit(nbg_code code);

/*
 * What a failed call reports, in every part of the library: the code, the
 * byte offset involved, the field (parser key), a sentence a person can act
 * on, and where it applies the saved errno, the tensor index and the
 * underlying cause.  Callers allocate it; functions that fail fill every
 * member.  Its size is fixed: members are only ever added in place of
 * `reserved` words (see doc/api.md).
 */
typedef struct nbg_error {
	nbg_code code;
	uint64_t offset;
	char field[64];
	char message[512];
	int sys_errno;   /* errno of the failed system call for I/O failures, else 0 */
	int32_t index;   /* input/output index involved, or -1 */
	nbg_code cause;  /* NBG_E_MODEL_INVALID: the parser's code; else NBG_OK */
	uint32_t reserved[13];
} nbg_error;
_Static_assert(sizeof(nbg_error) == 656,
	       "nbg_error has a fixed size: grow it only in place of reserved words");

/* Process exit codes shared by every command. */
enum {
	NBG_EXIT_OK = 0,
	NBG_EXIT_INVALID = 1,  /* not a valid NBG, checks failed, diff found differences */
	NBG_EXIT_USAGE = 2,
	NBG_EXIT_IO = 3,       /* cannot read input or write output */
	NBG_EXIT_RUNTIME = 4,  /* NPU runtime or device not available */
};

/* ------------------------------------------------------------------ files */

/* A read-only mapping of a whole file.  Empty files map to size 0. */
typedef struct nbg_mapping {
	const uint8_t *data;
	size_t size;
	void *priv_base;
	size_t priv_len;
} nbg_mapping;

/* Maps `path` read-only.  Only a regular file is opened: the path is
 * stat()ed first, so a FIFO, device, socket or directory is refused with
 * NBG_E_NOT_REGULAR_FILE without being opened (nothing blocks, no terminal
 * is attached).  Returns NBG_OK, NBG_E_NOT_REGULAR_FILE, or NBG_E_IO with
 * err->sys_errno; messages name the path escaped (nbg_path_escape). */
NBG_API nbg_code nbg_map_file(const char *path, nbg_mapping *m, nbg_error *err);
/* Frees what nbg_map_file or nbg_read_input gave (priv_* are private). */
NBG_API void nbg_unmap_file(nbg_mapping *m);

/* Like nbg_map_file, and "-" reads standard input into memory, at most
 * max_stdin bytes (0: NBG_DEFAULT_MAX_STDIN); more is NBG_E_INPUT_TOO_LARGE. */
#define NBG_DEFAULT_MAX_STDIN ((uint64_t)1 << 30) /* 1 GiB */
NBG_API nbg_code nbg_read_input(const char *path, uint64_t max_stdin, nbg_mapping *m,
				nbg_error *err);



/* ------------------------------------------------------------------ model */

#define NBG_V2_VERSION 0x00020000u
#define NBG_V2_HEADER_SIZE 48u
#define NBG_V2_SUB_HEADER_SIZE 12u
#define NBG_V2_SECTION_HEADER_SIZE 44u
#define NBG_V2_IO_RECORD_SIZE 112u
#define NBG_V2_NETWORK_INFO_SIZE 220u
#define NBG_TAIL_SIZE 512u
#define NBG_SECTION_TYPE_COUNT 41u

enum nbg_section_type {
	NBG_SEC_NONE = 0, NBG_SEC_INPUT = 1, NBG_SEC_OUTPUT = 2, NBG_SEC_LAYER = 3,
	NBG_SEC_OPERATIONS = 4, NBG_SEC_COEF_HEADER_TABLE = 5, NBG_SEC_COEF_HEADER = 6,
	NBG_SEC_NN = 7, NBG_SEC_TP = 8, NBG_SEC_SH = 9, NBG_SEC_PATCH = 10,
	NBG_SEC_LAYER_PARAM = 11, NBG_SEC_SW = 12, NBG_SEC_HWINITOPERATIONS = 13,
	NBG_SEC_ICDT = 14, NBG_SEC_ICD = 15, NBG_SEC_PPU_PARAM = 16, NBG_SEC_OPSYNC = 17,
	NBG_SEC_DMA_SBI_INFO = 18, NBG_SEC_PPU_INSTR = 19, NBG_SEC_DYNAIO = 20,
	NBG_SEC_LOADSTATE = 21, NBG_SEC_DMA_SBI_ADDITION = 22, NBG_SEC_COEF_DATA_TABLE = 23,
	NBG_SEC_COEF_DATA = 24, NBG_SEC_PPU_INSTR_TABLE = 25, NBG_SEC_DYNAIO_TABLE = 26,
	NBG_SEC_LOADSTATE_TABLE = 27, NBG_SEC_LAYER_DUMP_OPERATION = 28,
	NBG_SEC_LAYER_DUMP_OUTPUTS = 29, NBG_SEC_LAYER_DUMP_PATCH_DATA = 30,
	NBG_SEC_LAYER_DUMP_INSTR_TABLE = 31, NBG_SEC_LAYER_DUMP_INSTR = 32,
	NBG_SEC_LAYER_DUMP_LOADSTATE_TABLE = 33, NBG_SEC_LAYER_DUMP_LOADSTATE = 34,
	NBG_SEC_NETWORK_INFO = 35, NBG_SEC_CUSTOMER_DATA = 36, NBG_SEC_MEMORY_POOL = 37,
	NBG_SEC_VIP_SRAM = 38, NBG_SEC_AXI_SRAM = 39, NBG_SEC_CHECKSUM = 40,
};

/* Public enum name without prefix ("COEF_DATA"); NULL outside 0..40. */
NBG_API const char *nbg_section_type_name(uint32_t type);
/* The name a report gives a section of a model of `family`: the public
 * enum name, except the v1 coefficient table and data, which sit in v2's
 * COEF_HEADER_TABLE and COEF_HEADER slots and are named "LCDT" and "LCD"
 * everywhere (doc/format-v1.md); NULL outside 0..40. */
NBG_API const char *nbg_section_name(uint32_t family, uint32_t type);

/* How much of a section the parser understands. */
typedef enum nbg_section_class {
	NBG_CLASS_DECODED = 0,      /* records decoded field by field (by the
	                               parser or the graph layer) */
	NBG_CLASS_CRC_VERIFIED = 1, /* opaque payload proved by a checksum record */
	NBG_CLASS_TABLE_BOUNDED = 2,/* DYNAIO region: geometry checked by its table */
	NBG_CLASS_OPAQUE = 3,       /* named only, fingerprinted */
} nbg_section_class;
NBG_API const char *nbg_section_class_name(nbg_section_class c);

typedef struct nbg_section {
	uint32_t index;        /* position in the directory (or v1 entry index) */
	uint32_t type;         /* v2 section type (v1: entry index + 1) */
	uint64_t record_offset;/* file offset of the directory record / v1 entry */
	uint64_t offset;       /* composed 64-bit payload offset */
	uint64_t size;         /* composed 64-bit payload size */
	uint64_t load_address; /* v2 only */
	uint32_t alignment;    /* sd_alignsize (v2) */
	uint32_t entry_size;   /* sd_entsize (v2); v1: record stride, 0 if none */
	uint32_t reserved[2];
	uint32_t raw[11];      /* the directory record's words as stored (v2) */
	nbg_section_class cls;
	uint32_t crc32;        /* CRC-32 (zlib) of the exact payload */
	uint8_t sha256[32];
	int has_checksum_record;
	uint32_t stored_checksum; /* from the CHECKSUM section, when has_checksum_record */
} nbg_section;

/* Buffer data formats (nbg_buffer_format_e). */
NBG_API const char *nbg_data_format_name(uint32_t fmt); /* NULL if unknown */
NBG_API unsigned nbg_data_format_bits(uint32_t fmt);    /* 0 if unknown */
NBG_API const char *nbg_data_type_name(uint32_t t);
NBG_API const char *nbg_quant_format_name(uint32_t q);

enum { NBG_QUANT_NONE = 0, NBG_QUANT_DFP = 1, NBG_QUANT_AFFINE = 2 };

typedef struct nbg_io {
	uint32_t index;
	uint64_t offset;           /* file offset of the record */
	uint32_t record_size;      /* 112 for v2; the version's stride for v1 */
	uint32_t dim_count;
	uint32_t max_dims;         /* 6, or 4 for old v1 strides */
	uint32_t dims[6];          /* file order: innermost first */
	uint32_t data_format;
	uint32_t data_type;
	uint32_t quant_format;
	uint32_t quant_raw[3];     /* v2: the 8-byte union (2 words); v1: dfp, scale, zp */
	unsigned quant_raw_count;
	int32_t fixed_point_pos;   /* meaningful for NBG_QUANT_DFP */
	float scale;               /* meaningful for NBG_QUANT_AFFINE */
	int32_t zero_point;        /* meaningful for NBG_QUANT_AFFINE */
	int has_name;
	char name[65];             /* NUL-terminated copy; bytes after the first NUL dropped */
	int byte_size_known;       /* 0 for unknown formats or overflow */
	uint64_t element_count;
	uint64_t byte_size;        /* ceil(elements * bits / 8) */
} nbg_io;

typedef struct nbg_network_info {
	int present;
	uint64_t offset;
	char name[65];
	uint32_t input_count, output_count, layer_count;
	uint32_t absolute_operation_count, operation_count;
	uint32_t core_count, address_width, attribute;
	/* attribute bits decoded */
	uint32_t change_ppu_param, nn_command_size_code, tp_command_size_code, dma_support_code,
	    attribute_reserved;
	uint32_t nn_command_bytes, tp_command_bytes; /* 0 if the code is not public */
	unsigned vsi_reserved_nonzero;
	uint8_t vsi_reserved_sha256[32];
} nbg_network_info;

typedef struct nbg_memory {
	int has_memory_pool, has_vip_sram, has_axi_sram;
	uint64_t memory_pool_bytes;
	uint32_t vip_sram_bytes, axi_sram_bytes;
	/* v1 only */
	uint32_t memory_pool_alignment, memory_pool_base;
	uint32_t axi_sram_base, vip_sram_base;
} nbg_memory;

typedef struct nbg_checksum_record {
	uint64_t offset;       /* file offset of the record */
	uint32_t section_type;
	uint32_t stored;
	uint32_t computed;
} nbg_checksum_record;

typedef struct nbg_file_checksum {
	uint32_t recorded, computed;
	uint64_t covered_section_bytes;
	uint64_t excluded_alignment_gap_bytes;
	uint32_t normalized_checksum_value_words;
} nbg_file_checksum;

typedef struct nbg_dynaio_entry {
	uint64_t record_offset; /* file offset of the table record */
	uint32_t offset, size;  /* region-relative */
} nbg_dynaio_entry;

typedef struct nbg_dynaio {
	int present;
	uint64_t region_offset, region_size;
	uint64_t table_offset, table_size;
	size_t entry_count;
	nbg_dynaio_entry *entries;
	uint64_t mapped_bytes, padding_bytes;
} nbg_dynaio;

typedef enum nbg_tail_cover {
	NBG_TAIL_NONE = 0,      /* file shorter than 512 bytes: no view */
	NBG_TAIL_UNCOVERED = 1, /* no section owns any of it */
	NBG_TAIL_PARTIAL = 2,
	NBG_TAIL_COVERED = 3,   /* sections own all of it: a section-covered-view */
} nbg_tail_cover;

typedef struct nbg_tail {
	nbg_tail_cover cover;
	uint64_t offset, size;
	uint64_t covered_bytes;
	uint8_t sha256[32];
} nbg_tail;

/* A deviation from the invariants of the 138-file reference corpus of the
 * field map (doc/reference-corpus.md), or a finding: never a failure. */
typedef struct nbg_note {
	char id[40];        /* stable, kebab-case */
	uint64_t offset;
	char text[200];
} nbg_note;

/* What proved a parsed file's bytes.  A parse succeeds only when every
 * checksum it could check matched, so a model from a normal parse is one of
 * the first three; NBG_INTEGRITY_FAILED is only seen with
 * NBG_PARSE_NO_CRC_CHECK. */
typedef enum nbg_integrity {
	NBG_INTEGRITY_VERIFIED = 0,         /* every checksum the file carries matches */
	NBG_INTEGRITY_STRUCTURE_ONLY = 1,   /* the file carries no checksum (v1 before
					     * 0x10016, or nbg_crc_sum left 0): only the
					     * structure was checked */
	NBG_INTEGRITY_CHECKSUM_UNKNOWN = 2, /* a checksum word is present, but no rule known
					     * for this version gives it: not checked */
	NBG_INTEGRITY_FAILED = 3,           /* a checksum does not match */
} nbg_integrity;
/* "verified", "structure-only", "checksum-unknown", "failed"; NULL otherwise. */
NBG_API const char *nbg_integrity_name(nbg_integrity i);

/* v1: the version-gated prefix (see doc/format-v1.md). */
typedef struct nbg_v1_info {
	char network_name[65];        /* NUL-terminated copy of the 64-byte field */
	uint32_t layer_count, operation_count, input_count, output_count;
	int has_feature_db;           /* versions >= 0x10003 */
	uint64_t feature_db_offset;
	uint32_t feature_word0;
	uint32_t nn_command_size_code, nn_command_bytes; /* bytes 0 if the code is not public */
	uint32_t change_ppu_param;    /* feature word 0 bit 4 */
	uint32_t tp_command_size_code, tp_command_bytes; /* bits 5-6; bytes 0 if not public */
	uint32_t core_count, axi_bus_width_index, nn_core_count, tp_core_count;
	uint8_t feature_db_sha256[32];
	uint64_t memory_offset;       /* start of the memory-pool block */
	int has_vip_sram;             /* versions >= 0x10008 */
	uint64_t entries_offset;      /* start of the (offset, size) table */
	uint32_t entry_count;
	int entry_count_derived;      /* 1: no sample of this version; count from the rule */
	uint32_t entry_count_rule;    /* (input table offset - entries_offset) / 8 before clamping */
	int strides_assumed;          /* 1: version newer than every sample: 0x1001E strides */
	uint32_t io_stride, layer_stride, operation_stride, patch_stride, sh_stride, sw_stride;
	int patch_stride_from_data;   /* 1: 0x10010-0x10013, stride chosen from the records;
				       * patch_stride 0 then means the data could not decide */
	uint64_t prefix_end;          /* end of the decoded prefix (== end of entries) */
	/* feature database word 4 (file offset 108), named nbg_crc_sum from
	 * 0x10016.  Two rules are known (doc/format-v1.md): CRC-32 of the whole
	 * file with the word read as zero (0x1001e), and CRC-32 from the first
	 * section to the end of the file (0x10020).  A version with a rule has
	 * the word enforced: a mismatch fails the parse (v1-crc-sum-mismatch). */
	int has_crc_sum;
	uint32_t crc_sum;
	uint32_t crc_sum_computed;    /* under crc_sum_rule, or the whole-file rule when none */
	const char *crc_sum_finding;  /* "zero", "match", "no-match"; NULL without has_crc_sum */
	const char *crc_sum_rule;     /* "whole-file" or "from-first-section": the version's
				       * rule, else the rule that matched; NULL when neither */
	int crc_sum_enforced;         /* 1: the version's rule is established (see above) */
	uint64_t crc_sum_from;        /* first byte the rule covers (0 for whole-file) */
	uint32_t crc_sum_whole_file;  /* both candidates, as computed */
	uint32_t crc_sum_from_first_section;
	/* bytes between the decoded prefix and the first referenced section */
	uint64_t opaque_offset, opaque_size;
	uint8_t opaque_sha256[32];
	/* bytes no entry references between sections (alignment gaps) */
	uint32_t gap_count;
	uint64_t gap_bytes, gap_nonzero_bytes;
	uint8_t gap_sha256[32];       /* of the gap bytes concatenated in file order */
	/* bytes after the end of the last referenced section */
	uint64_t trailer_offset, trailer_size;
	uint8_t trailer_sha256[32];
} nbg_v1_info;

/* The v2 header and sub-header words as stored (all zero for v1). */
typedef struct nbg_v2_header {
	uint32_t words[12];        /* the 48-byte header */
	uint32_t crc_sum;          /* the file checksum word */
	uint64_t declared_file_size;
	uint32_t sub_header_offset, sub_header_size, sub_header_count;
	uint32_t section_headers_offset, section_header_size, section_header_count;
} nbg_v2_header;

/* A parsed model: opaque, read through the nbg_model_* accessors below. */
typedef struct nbg_model nbg_model;

/* Options that can grow: set `size` to sizeof(nbg_parse_options). */
typedef struct nbg_parse_options {
	size_t size;
	unsigned flags;
	/* Work limits (doc/security.md), checked before any byte is hashed; a
	 * file over one fails with NBG_E_WORK_LIMIT.  0 takes the default,
	 * UINT64_MAX turns the limit off. */
	uint64_t max_file_size;    /* whole file; default NBG_DEFAULT_MAX_FILE_SIZE */
	uint64_t max_undescribed;  /* bytes no header, directory or section owns
				    * (v1 trailer, gaps); default NBG_DEFAULT_MAX_UNDESCRIBED */
} nbg_parse_options;
/* Skip CRC comparisons (values are still computed): a file whose only
 * failure is a checksum parses; nbg_integrity_failure() then gives the
 * failure a parse without the flag reports. */
#define NBG_PARSE_NO_CRC_CHECK 0x1u
/* Do not compute the whole-file SHA-256: file_sha256 is then all zero and
 * sha256_skipped has this bit.  Structure and every CRC are checked as ever
 * (what `nbg verify` needs). */
#define NBG_PARSE_NO_FILE_SHA256 0x2u
/* Do not compute the per-region SHA-256 fingerprints: every section's sha256,
 * the tail's, the network info's reserved block's and, in v1, the feature
 * DB's, opaque prefix's, gaps' and trailer's are then all zero and
 * sha256_skipped has this bit.  CRCs are unaffected.  A model parsed with
 * either bit cannot make a ledger (nbg_ledger_build refuses it). */
#define NBG_PARSE_NO_SECTION_SHA256 0x4u
/* Do all the work on the calling thread.  Without it a parse uses a second
 * thread: for the whole-file SHA-256 beside the section digests on a file
 * of 1 MiB or more, or, when that hash is not wanted, for half of the
 * CRC-32 bytes where the sections (or a v1 file's nbg_crc_sum) hold 1 MiB
 * or more.  For a program that runs parses in parallel itself (nbg corpus
 * --jobs). */
#define NBG_PARSE_ONE_THREAD 0x8u
/* One parse for a program that shows a file whose checksum fails (nbg
 * inspect, nbg verify, the page): every checksum is compared and the
 * return value and *err are exactly those of a parse without the flag, but
 * a checksum that does not match does not end the parse.  When every other
 * rule holds, *out receives the model all the same, even though the
 * return value is the checksum's failure: the model a parse with
 * NBG_PARSE_NO_CRC_CHECK gives (integrity NBG_INTEGRITY_FAILED).  When a
 * rule checked after the first mismatching checksum fails too, *out stays
 * NULL and the checksum's failure is what is reported, as a parse without
 * the flag stops there.  Each byte is read and hashed once.  The caller
 * frees *out whenever it is set, whatever the return value.  No effect
 * with NBG_PARSE_NO_CRC_CHECK.  (A program that wants the model whenever
 * only checksums fail, and otherwise the failure that refused the model,
 * parses with NBG_PARSE_NO_CRC_CHECK and asks nbg_integrity_failure().) */
#define NBG_PARSE_KEEP_UNVERIFIED 0x10u
#define NBG_DEFAULT_MAX_FILE_SIZE ((uint64_t)64 << 30)   /* 64 GiB */
#define NBG_DEFAULT_MAX_UNDESCRIBED ((uint64_t)256 << 20) /* 256 MiB */

/*
 * Parses and validates the NBG in data[0..size).  On success returns NBG_OK and
 * stores a new model in *out (free with nbg_model_free).  On failure returns
 * the failure code, leaves *out NULL (but see NBG_PARSE_KEEP_UNVERIFIED)
 * and fills *err (may be NULL).
 * Every rule of doc/failure-codes.md is checked; a success never carries a
 * mismatching checksum.  opts may be NULL.
 */
NBG_API nbg_code nbg_parse(const uint8_t *data, size_t size, const nbg_parse_options *opts,
			   nbg_model **out, nbg_error *err);
NBG_API void nbg_model_free(nbg_model *m);

/* What the model's integrity rests on, as one sentence into buf (always
 * NUL-terminated when size > 0): "4 section CRC-32s and the file checksum
 * match", "structure only: this version carries no checksum", ...  Returns
 * buf. */
NBG_API char *nbg_integrity_describe(const nbg_model *m, char *buf, size_t size);

/* For a model parsed with NBG_PARSE_NO_CRC_CHECK: the failure a normal
 * parse reports for its first checksum that does not match (the same code,
 * offset, field and sentence) into *err, and its code; NBG_OK, with *err
 * cleared, when every checksum it carries matches.  NBG_E_INVALID_ARGUMENT
 * for a NULL model. */
NBG_API nbg_code nbg_integrity_failure(const nbg_model *m, nbg_error *err);

/* Finds the section of `type` in a parsed model, or NULL. */
NBG_API const nbg_section *nbg_model_section(const nbg_model *m, uint32_t type);

/*
 * The model's records, element i, or NULL when i is past the end.  Callers
 * reach every array of the model through these (never m->sections[i]): the
 * records may grow new members at their end in a later version, which moves
 * element i of a raw array but not what these return (doc/api.md).
 */
NBG_API const nbg_section *nbg_model_section_at(const nbg_model *m, size_t i);
NBG_API const nbg_io *nbg_model_input_at(const nbg_model *m, size_t i);
NBG_API const nbg_io *nbg_model_output_at(const nbg_model *m, size_t i);
NBG_API const nbg_note *nbg_model_note_at(const nbg_model *m, size_t i);
NBG_API const nbg_checksum_record *nbg_model_checksum_record_at(const nbg_model *m, size_t i);
NBG_API const nbg_dynaio_entry *nbg_model_dynaio_entry_at(const nbg_model *m, size_t i);

/*
 * The model's scalars and records.  Every accessor takes a model from
 * nbg_parse (NULL gives 0, or NULL for a pointer); the records they point
 * to live as long as the model.
 */
NBG_API uint32_t nbg_model_family(const nbg_model *m);  /* 1 or 2 */
NBG_API uint32_t nbg_model_magic(const nbg_model *m);
NBG_API uint32_t nbg_model_version(const nbg_model *m);
NBG_API uint32_t nbg_model_target(const nbg_model *m);
NBG_API uint64_t nbg_model_file_size(const nbg_model *m);
/* The caller's buffer given to nbg_parse (not owned). */
NBG_API const uint8_t *nbg_model_data(const nbg_model *m);
/* SHA-256 of the whole file, 32 bytes (all zero under NBG_PARSE_NO_FILE_SHA256). */
NBG_API const uint8_t *nbg_model_file_sha256(const nbg_model *m);
/* What the bytes were checked with (nbg_integrity_describe says it in a
 * sentence). */
NBG_API nbg_integrity nbg_model_integrity(const nbg_model *m);
/* The NBG_PARSE_NO_*_SHA256 bits the parse honoured: each names digests
 * that were not computed (left all zero), 0 when every one was. */
NBG_API unsigned nbg_model_sha256_skipped(const nbg_model *m);
/* Element counts of the arrays the *_at accessors above read. */
NBG_API size_t nbg_model_section_count(const nbg_model *m);  /* directory order */
NBG_API size_t nbg_model_input_count(const nbg_model *m);
NBG_API size_t nbg_model_output_count(const nbg_model *m);
NBG_API size_t nbg_model_note_count(const nbg_model *m);
NBG_API size_t nbg_model_checksum_record_count(const nbg_model *m);
NBG_API const nbg_v2_header *nbg_model_v2_header(const nbg_model *m);
NBG_API const nbg_network_info *nbg_model_network_info(const nbg_model *m);
NBG_API const nbg_memory *nbg_model_memory(const nbg_model *m);
/* The header file checksum (v2), or NULL when the file carries none. */
NBG_API const nbg_file_checksum *nbg_model_file_checksum(const nbg_model *m);
/* The DYNAIO region; its entries through nbg_model_dynaio_entry_at. */
NBG_API const nbg_dynaio *nbg_model_dynaio(const nbg_model *m);
NBG_API const nbg_tail *nbg_model_tail(const nbg_model *m);
/* v1: the version-gated prefix (all zero for v2). */
NBG_API const nbg_v1_info *nbg_model_v1(const nbg_model *m);

/* Dimension i in outermost-first order (NHWC for the corpus). */
static inline uint32_t nbg_io_dim_outer(const nbg_io *io, uint32_t i)
{
	return io->dims[io->dim_count - 1 - i];
}

/* ------------------------------------------------------------ field map */

/* Evidence codes of the field map's confidence ledger, as a string ("W+P+C");
 * doc/field-map.md lists them. */
typedef enum nbg_field_kind {
	NBG_FIELD_U32 = 0,  /* little-endian u32 */
	NBG_FIELD_I32,      /* little-endian two's-complement i32 */
	NBG_FIELD_BITS,     /* bits bit_lo..bit_lo+bit_count-1 of a u32 word */
	NBG_FIELD_LO,       /* low half of a 64-bit value named by key */
	NBG_FIELD_HI,       /* high half of a 64-bit value named by key */
	NBG_FIELD_ASCII,    /* fixed-width NUL-padded text */
	NBG_FIELD_U32_ARRAY,/* width/4 u32 words */
	NBG_FIELD_OPAQUE,   /* kept as raw bytes: non-zero count + SHA-256 only */
	NBG_FIELD_U8,       /* one byte */
} nbg_field_kind;

typedef struct nbg_field {
	const char *structure;   /* "header", "sub_header", "section_header", "io", ... */
	uint32_t offset;         /* relative to the structure */
	uint32_t width;          /* bytes; for bit fields the containing word's width */
	uint8_t bit_lo, bit_count; /* bit fields only */
	nbg_field_kind kind;
	const char *public_name; /* name in the public VeriSilicon source */
	const char *key;         /* parser key in the JSON report */
	const char *alias;       /* compatibility alias of key, or NULL */
	const char *evidence;    /* W/P/C/L/S/R/D/I/U codes */
	const char *meaning;
} nbg_field;

/* The whole field map; *count receives the number of entries. */
NBG_API const nbg_field *nbg_field_map(size_t *count);

/* ----------------------------------------------------------- reports */

/* The JSON report of a model (parser keys of the field map) is
 * nbg_json_document_write's (report.h).  This is the JSON document for a
 * failure, as a malloc'd string; NULL on allocation failure. */
NBG_API char *nbg_error_json(const nbg_error *err, const char *path);

/* A printable copy of at most `max` bytes of s (stops at NUL): printable
 * ASCII except backslash kept, every other byte as \xNN.  malloc'd; NULL on
 * allocation failure or for a NULL s.  Names in NBG files are not
 * guaranteed to be text. */
NBG_API char *nbg_text_escape(const char *s, size_t max);


/* The library's version as a string ("0.1.0") and as NBG_VERSION_NUMBER
 * (major * 10000 + minor * 100 + patch): the version of the library that is
 * loaded, which may differ from the NBG_VERSION_* a caller compiled against. */
NBG_API const char *nbg_version_string(void);
NBG_API unsigned nbg_version_number(void);

#ifdef __cplusplus
}
#endif
#endif

/*
 * Not part of the stable interface: declared only where
 * NBG_STATIC_LINKING_ONLY is defined before this header is included, for
 * programs that link libnbg.a (the nbg tool) and for the tests.  These may
 * change or go in any release, with the same soname (doc/api.md).
 */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_H_STATIC_LINKING_ONLY)
#define NBG_H_STATIC_LINKING_ONLY
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
/* ---------------------------------------- process policy (nbg, the tests) */

/*
 * For programs that read untrusted files; call once, early.  Installs a
 * SIGBUS handler that keeps a mapped input that another process truncates
 * from killing the process (the bytes past the new end read as zero and
 * nbg_mapping_changed() turns true), and SIGINT/SIGTERM/SIGHUP handlers
 * that end the runtime's child processes (doc/runtime.md) before the signal
 * takes its course.  Handlers installed before are chained (nbg's removes
 * the temporaries of its outputs); ignored signals stay ignored.  Returns NBG_OK or NBG_E_IO.  doc/security.md.
 */
NBG_API nbg_code nbg_install_signal_guards(void);
/* The SIGBUS half of nbg_install_signal_guards alone, for a process whose
 * SIGINT/SIGTERM/SIGHUP are its own (an interpreter: the Python package
 * installs it before it maps a file).  Faults outside nbg's mappings go to
 * the handler that was there before.  Returns NBG_OK or NBG_E_IO. */
NBG_API nbg_code nbg_install_sigbus_guard(void);
/* Reads the regular file path into memory (the checks of nbg_map_file;
 * freed by nbg_unmap_file): a copy that another process cannot cut short,
 * for a process without the SIGBUS guard.  More than max bytes (0:
 * NBG_DEFAULT_MAX_STDIN) is NBG_E_INPUT_TOO_LARGE, before anything is
 * read; a file that ends before the size it had when opened is
 * NBG_E_FILE_CHANGED. */
NBG_API nbg_code nbg_read_file(const char *path, uint64_t max, nbg_mapping *m, nbg_error *err);
/* 1 when the file behind m shrank while it was mapped (any result computed
 * from it must be dropped: NBG_E_FILE_CHANGED), else 0. */
NBG_API int nbg_mapping_changed(const nbg_mapping *m);

/* A printable copy of a file name (malloc'd; NULL when memory runs out):
 * printable ASCII and valid UTF-8 kept, backslash doubled, \a \b \t \n \v
 * \f \r, and \ooo (octal) for every other control byte, invalid UTF-8
 * byte and text-hiding code point, as `ls -b` does.  doc/security.md. */
NBG_API char *nbg_path_escape(const char *path);
/* 1 when nbg_path_escape(path) differs from path. */
NBG_API int nbg_path_needs_escape(const char *path);

/* Hex of a SHA-256 digest into out[65]. */
NBG_API void nbg_hex32(const uint8_t digest[32], char out[65]);

/* ------------------------------------------------------------- digests */

/* SHA-256 of data[0..size) into out, with the implementation the library
 * chose for this CPU (doc/api.md, "SHA-256 and CRC-32"). */
NBG_API void nbg_sha256_bytes(const void *data, size_t size, uint8_t out[32]);
/* The zlib-compatible CRC-32 of data[0..size), continuing from crc (0 for
 * a first piece), with the implementation the library chose (the same doc
 * section); crc itself when data is NULL. */
NBG_API uint32_t nbg_crc32_bytes(uint32_t crc, const void *data, size_t size);
/* Bytes this process has fed to SHA-256 and to CRC-32 through libnbg so far
 * (all threads; either pointer may be NULL): what shows that a file the
 * structure refuses is never hashed, and that a command hashes each byte
 * once per check. */
NBG_API void nbg_digest_counts(uint64_t *sha256_bytes, uint64_t *crc32_bytes);

/* ----------------------------------------------------------- parsing */

/* nbg_parse, also telling whether the header and directory passed, so that
 * the file's bytes were read (*structure_passed 1) or only its structure
 * (0: refused before hashing, doc/security.md).  structure_passed may be
 * NULL.  For a program that maps large files and hashes a refused one
 * only when its bytes were read anyway (nbg corpus). */
NBG_API nbg_code nbg_parse_reached(const uint8_t *data, size_t size,
				   const nbg_parse_options *opts, nbg_model **out, nbg_error *err,
				   int *structure_passed);
#ifdef __cplusplus
}
#endif
#endif

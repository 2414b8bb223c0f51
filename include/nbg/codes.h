/*
 * nbg_codes.h - the one list of nbgkit failure codes.
 *
 * Each entry: enum suffix, stable kebab-case name, one-line explanation.
 * The enum, nbg_code_name(), nbg_code_text(), the JSON reports and
 * doc/failure-codes.md are all generated from this list (the doc is checked
 * against it by a test).  Codes are never renamed or reused; new ones are
 * appended.
 */
#ifndef NBG_CODES_H
#define NBG_CODES_H

#define NBG_CODE_LIST(X)                                                                        \
	X(TRUNCATED, "truncated",                                                               \
	  "The file ends before a structure the format requires is complete.")                    \
	X(BAD_MAGIC, "bad-magic", "The first four bytes are not the NBG magic \"VPMN\".")       \
	X(UNSUPPORTED_VERSION, "unsupported-version",                                           \
	  "The version word names no NBG family this parser reads (v1 0x0001xxxx, v2 0x00020000).") \
	X(FILE_SIZE_MISMATCH, "file-size-mismatch",                                             \
	  "The 64-bit total size declared in the v2 header differs from the real file size.")     \
	X(SUB_HEADER_COUNT, "sub-header-count",                                                 \
	  "The v2 header does not declare exactly one sub-header (one graph per file).")          \
	X(SECTION_HEADER_SIZE, "section-header-size",                                           \
	  "The sub-header declares a section-directory record size other than 44 bytes.")         \
	X(UNKNOWN_SECTION_TYPE, "unknown-section-type",                                         \
	  "A section directory entry names a type outside the public v2 enum (0-40).")            \
	X(DUPLICATE_SECTION, "duplicate-section",                                               \
	  "Two directory entries name the same section type.")                                    \
	X(SECTION_OUT_OF_BOUNDS, "section-out-of-bounds",                                       \
	  "A section's 64-bit offset + size overflows or reaches past the end of the file.")       \
	X(SECTION_OVERLAP, "section-overlap",                                                   \
	  "A section overlaps another section or the header, sub-header or directory.")           \
	X(SECTION_MISALIGNED, "section-misaligned",                                             \
	  "A section does not start at a multiple of its declared alignment.")                    \
	X(IO_RECORD_SIZE, "io-record-size",                                                     \
	  "An INPUT or OUTPUT section size is not a multiple of the 112-byte record.")            \
	X(IO_DIMENSION_COUNT, "io-dimension-count",                                             \
	  "An input/output record declares a dimension count outside 1..6 (1..4 for old v1).")   \
	X(IO_DIMENSION_ZERO, "io-dimension-zero",                                               \
	  "An input/output record has a zero-sized dimension.")                                   \
	X(NETWORK_INFO_SIZE, "network-info-size",                                               \
	  "The NETWORK_INFO section is not exactly 220 bytes.")                                   \
	X(MEMORY_SECTION_SIZE, "memory-section-size",                                           \
	  "A MEMORY_POOL (8 bytes), VIP_SRAM or AXI_SRAM (4 bytes) section has the wrong size.")  \
	X(METADATA_COUNT_MISMATCH, "metadata-count-mismatch",                                   \
	  "NETWORK_INFO input/output counts differ from the number of I/O records.")              \
	X(CHECKSUM_RECORD_SIZE, "checksum-record-size",                                         \
	  "The CHECKSUM section size is not a multiple of its 8-byte record.")                    \
	X(SECTION_CHECKSUM_MISSING, "section-checksum-missing",                                 \
	  "A section of type NN, TP, PPU_INSTR, LOADSTATE or COEF_DATA has no checksum record.")  \
	X(SECTION_CHECKSUM_DUPLICATE, "section-checksum-duplicate",                             \
	  "Two checksum records name the same section type.")                                     \
	X(SECTION_CHECKSUM_TARGET_MISSING, "section-checksum-target-missing",                   \
	  "A checksum record names a section type that is not in the directory.")                 \
	X(SECTION_CHECKSUM_MISMATCH, "section-checksum-mismatch",                               \
	  "A section's CRC-32 differs from the value in its checksum record.")                    \
	X(FILE_CHECKSUM_MISMATCH, "file-checksum-mismatch",                                     \
	  "The header crc_sum differs from the CRC-32 of the section payloads.")                  \
	X(DYNAIO_UNPAIRED, "dynaio-unpaired",                                                   \
	  "Only one of DYNAIO and DYNAIO_TABLE is present; they come as a pair.")                 \
	X(DYNAIO_REGION_SIZE, "dynaio-region-size",                                             \
	  "The DYNAIO data region size is not a multiple of 64 bytes.")                           \
	X(DYNAIO_TABLE_SIZE, "dynaio-table-size",                                               \
	  "The DYNAIO_TABLE size is not a multiple of its 8-byte record.")                        \
	X(DYNAIO_ENTRY_EMPTY, "dynaio-entry-empty", "A dynamic-I/O table entry has size zero.") \
	X(DYNAIO_ENTRY_MISALIGNED, "dynaio-entry-misaligned",                                   \
	  "A dynamic-I/O table entry offset is not a multiple of 64.")                            \
	X(DYNAIO_ENTRY_OUT_OF_BOUNDS, "dynaio-entry-out-of-bounds",                             \
	  "A dynamic-I/O table entry reaches past the end of the DYNAIO region.")                 \
	X(DYNAIO_ENTRY_ORDER, "dynaio-entry-order",                                             \
	  "Dynamic-I/O table entries are out of order or overlap.")                               \
	X(DYNAIO_NONZERO_PADDING, "dynaio-nonzero-padding",                                     \
	  "A DYNAIO byte that no table entry maps (gap or trailing padding) is not zero.")        \
	X(SEMANTIC_CHANGE_REFUSED, "semantic-change-refused",                                   \
	  "Re-emission refused: the bytes no longer match the ledger's fingerprints.")            \
	X(V1_ENTRY_OUT_OF_BOUNDS, "v1-entry-out-of-bounds",                                     \
	  "A v1 (offset, size) entry overflows or reaches past the end of the file.")             \
	X(V1_RECORD_STRIDE, "v1-record-stride",                                                 \
	  "A v1 record table size is not a multiple of its version's record stride.")             \
	X(V1_COUNT_MISMATCH, "v1-count-mismatch",                                               \
	  "A v1 record table holds a different number of records than the header counts.")       \
	X(SUB_HEADER_SIZE, "sub-header-size",                                                   \
	  "The v2 header declares a sub-header size other than 12 bytes.")                        \
	X(DIRECTORY_OVERLAP, "directory-overlap",                                               \
	  "The sub-header or section directory overlaps the header or each other.")               \
	X(V1_ENTRY_COUNT, "v1-entry-count",                                                     \
	  "A v1 file's (offset, size) entry table does not end where its input table begins.") \
	X(OUT_OF_MEMORY, "out-of-memory",                                                       \
	  "Memory for the decoded model could not be allocated (not a property of the file).")

#endif

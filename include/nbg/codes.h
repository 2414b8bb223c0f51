/*
 * codes.h - the one list of nbgkit error codes: every failure any libnbg
 * function reports, format rules, ledger checks, I/O and the NPU runtime.
 *
 * Each entry: enum suffix, stable kebab-case name, the process exit code a
 * command uses for it, one-line explanation.  The enum, nbg_code_name(),
 * nbg_code_text(), nbg_code_exit(), the JSON reports and
 * doc/failure-codes.md are all generated from this list (the doc is checked
 * against it by a test).  Codes and names are a contract: never renamed or
 * reused; new ones are appended at the end.
 *
 * Exit codes: 1 the file is not a valid NBG or a check failed; 2 a usage
 * error; 3 an input cannot be read or an output written (or memory ran
 * out); 4 the NPU runtime or device is not available.
 */
#ifndef NBG_CODES_H
#define NBG_CODES_H

#define NBG_CODE_LIST(X)                                                                        \
	X(TRUNCATED, "truncated", 1,                                                               \
	  "The file ends before a structure the format requires is complete.")                    \
	X(BAD_MAGIC, "bad-magic", 1, "The first four bytes are not the NBG magic \"VPMN\".")       \
	X(UNSUPPORTED_VERSION, "unsupported-version", 1,                                           \
	  "The version word names no NBG family this parser reads (v1 0x0001xxxx, v2 0x00020000).") \
	X(FILE_SIZE_MISMATCH, "file-size-mismatch", 1,                                             \
	  "The 64-bit total size declared in the v2 header differs from the real file size.")     \
	X(SUB_HEADER_COUNT, "sub-header-count", 1,                                                 \
	  "The v2 header does not declare exactly one sub-header (one graph per file).")          \
	X(SECTION_HEADER_SIZE, "section-header-size", 1,                                           \
	  "The sub-header declares a section-directory record size other than 44 bytes.")         \
	X(UNKNOWN_SECTION_TYPE, "unknown-section-type", 1,                                         \
	  "A section directory entry names a type outside the public v2 enum (0-40).")            \
	X(DUPLICATE_SECTION, "duplicate-section", 1,                                               \
	  "Two directory entries name the same section type.")                                    \
	X(SECTION_OUT_OF_BOUNDS, "section-out-of-bounds", 1,                                       \
	  "A section's 64-bit offset + size overflows or reaches past the end of the file.")       \
	X(SECTION_OVERLAP, "section-overlap", 1,                                                   \
	  "A section overlaps another section or the header, sub-header or directory.")           \
	X(SECTION_MISALIGNED, "section-misaligned", 1,                                             \
	  "A section does not start at a multiple of its declared alignment.")                    \
	X(IO_RECORD_SIZE, "io-record-size", 1,                                                     \
	  "An INPUT or OUTPUT section size is not a multiple of the 112-byte record.")            \
	X(IO_DIMENSION_COUNT, "io-dimension-count", 1,                                             \
	  "An input/output record declares a dimension count outside 1..6 (1..4 for old v1).")   \
	X(IO_DIMENSION_ZERO, "io-dimension-zero", 1,                                               \
	  "An input/output record has a zero-sized dimension.")                                   \
	X(NETWORK_INFO_SIZE, "network-info-size", 1,                                               \
	  "The NETWORK_INFO section is not exactly 220 bytes.")                                   \
	X(MEMORY_SECTION_SIZE, "memory-section-size", 1,                                           \
	  "A MEMORY_POOL (8 bytes), VIP_SRAM or AXI_SRAM (4 bytes) section has the wrong size.")  \
	X(METADATA_COUNT_MISMATCH, "metadata-count-mismatch", 1,                                   \
	  "NETWORK_INFO input/output counts differ from the number of I/O records.")              \
	X(CHECKSUM_RECORD_SIZE, "checksum-record-size", 1,                                         \
	  "The CHECKSUM section size is not a multiple of its 8-byte record.")                    \
	X(SECTION_CHECKSUM_MISSING, "section-checksum-missing", 1,                                 \
	  "A section of type NN, TP, PPU_INSTR, LOADSTATE or COEF_DATA has no checksum record.")  \
	X(SECTION_CHECKSUM_DUPLICATE, "section-checksum-duplicate", 1,                             \
	  "Two checksum records name the same section type.")                                     \
	X(SECTION_CHECKSUM_TARGET_MISSING, "section-checksum-target-missing", 1,                   \
	  "A checksum record names a section type that is not in the directory.")                 \
	X(SECTION_CHECKSUM_MISMATCH, "section-checksum-mismatch", 1,                               \
	  "A section's CRC-32 differs from the value in its checksum record.")                    \
	X(FILE_CHECKSUM_MISMATCH, "file-checksum-mismatch", 1,                                     \
	  "The header crc_sum differs from the CRC-32 of the section payloads.")                  \
	X(DYNAIO_UNPAIRED, "dynaio-unpaired", 1,                                                   \
	  "Only one of DYNAIO and DYNAIO_TABLE is present; they come as a pair.")                 \
	X(DYNAIO_REGION_SIZE, "dynaio-region-size", 1,                                             \
	  "The DYNAIO data region size is not a multiple of 64 bytes.")                           \
	X(DYNAIO_TABLE_SIZE, "dynaio-table-size", 1,                                               \
	  "The DYNAIO_TABLE size is not a multiple of its 8-byte record.")                        \
	X(DYNAIO_ENTRY_EMPTY, "dynaio-entry-empty", 1, "A dynamic-I/O table entry has size zero.") \
	X(DYNAIO_ENTRY_MISALIGNED, "dynaio-entry-misaligned", 1,                                   \
	  "A dynamic-I/O table entry offset is not a multiple of 64.")                            \
	X(DYNAIO_ENTRY_OUT_OF_BOUNDS, "dynaio-entry-out-of-bounds", 1,                             \
	  "A dynamic-I/O table entry reaches past the end of the DYNAIO region.")                 \
	X(DYNAIO_ENTRY_ORDER, "dynaio-entry-order", 1,                                             \
	  "Dynamic-I/O table entries are out of order or overlap.")                               \
	X(DYNAIO_NONZERO_PADDING, "dynaio-nonzero-padding", 1,                                     \
	  "A DYNAIO byte that no table entry maps (gap or trailing padding) is not zero.")        \
	X(SEMANTIC_CHANGE_REFUSED, "semantic-change-refused", 1,                                   \
	  "Re-emission refused: the bytes no longer match the ledger's fingerprints.")            \
	X(V1_ENTRY_OUT_OF_BOUNDS, "v1-entry-out-of-bounds", 1,                                     \
	  "A v1 (offset, size) entry overflows or reaches past the end of the file.")             \
	X(V1_RECORD_STRIDE, "v1-record-stride", 1,                                                 \
	  "A v1 record table size is not a multiple of its version's record stride.")             \
	X(V1_COUNT_MISMATCH, "v1-count-mismatch", 1,                                               \
	  "A v1 record table holds a different number of records than the header counts.")       \
	X(SUB_HEADER_SIZE, "sub-header-size", 1,                                                   \
	  "The v2 header declares a sub-header size other than 12 bytes.")                        \
	X(DIRECTORY_OVERLAP, "directory-overlap", 1,                                               \
	  "The sub-header or section directory overlaps the header or each other.")               \
	X(V1_ENTRY_COUNT, "v1-entry-count", 1,                                                     \
	  "A v1 file's (offset, size) entry table does not end where its input table begins.") \
	X(OUT_OF_MEMORY, "out-of-memory", 3,                                                       \
	  "Memory could not be allocated (not a property of the file).")                           \
	X(LEDGER_INVARIANT, "ledger-invariant-broken", 1,                                          \
	  "Ledger ranges do not tile the file exactly (a bug, or an edited ledger document).")     \
	X(IO, "io-error", 3,                                                                       \
	  "A file could not be opened, read, created, written, synced or renamed (errno kept).")   \
	X(RESOURCE, "resource-error", 3,                                                           \
	  "A ledger document is not one nbgkit wrote, or a digest could not be computed.")         \
	X(INVALID_ARGUMENT, "invalid-argument", 2,                                                 \
	  "A required pointer is NULL, an options struct has a bad size or a count is wrong.")     \
	X(ABI_UNSUPPORTED, "abi-unsupported", 4,                                                   \
	  "The recovered libnnsdk ABI is LP64 (AArch64); this host's pointer size differs.")        \
	X(NO_DEVICE, "no-device", 4,                                                               \
	  "No NPU device node (galcore, vipcore, adla0) exists under the device root.")             \
	X(BACKEND_UNSUPPORTED, "backend-unsupported", 4,                                           \
	  "The device found selects a libnnsdk backend that cannot run a VeriSilicon NBG.")         \
	X(LIBRARY_MISSING, "library-missing", 4,                                                   \
	  "The vendor runtime (libnnsdk.so, libVIPlite.so, libNBGlinker.so) failed to dlopen().")   \
	X(SYMBOL_MISSING, "symbol-missing", 4,                                                     \
	  "The vendor library lacks an entry point the runner calls (the message names it).")       \
	X(RUNTIME_CONFLICT, "runtime-conflict", 4,                                                 \
	  "A different libnnsdk.so is already in use in this process; one per process.")            \
	X(MODEL_INVALID, "model-invalid", 1,                                                       \
	  "The NBG failed parsing or validation; the error's cause is the parser's code.")          \
	X(MODEL_TOO_LARGE, "model-too-large", 1,                                                   \
	  "The NBG or one of its tensors exceeds a 32-bit size field of the libnnsdk structures.")  \
	X(IO_SIZE_UNKNOWN, "io-size-unknown", 1,                                                   \
	  "An input or output record has a data format whose byte size is not known.")              \
	X(CREATE_FAILED, "create-failed", 4,                                                       \
	  "aml_module_create returned NULL, or vip_create_network a failure status (decoded).")     \
	X(INPUT_COUNT_MISMATCH, "input-count-mismatch", 1,                                         \
	  "The number of input buffers differs from the number of inputs the NBG declares.")        \
	X(INPUT_SIZE_MISMATCH, "input-size-mismatch", 1,                                           \
	  "An input buffer's byte count differs from the byte size of its NBG input record.")       \
	X(INPUT_SET_FAILED, "input-set-failed", 4, "aml_module_input_set returned non-zero.")      \
	X(BAD_STATE, "bad-state", 2,                                                               \
	  "A call came out of order: execute before inputs, retrieve before execute.")              \
	X(RUN_FAILED, "run-failed", 4,                                                             \
	  "The runtime reported a failure around execution (a tensor cache flush returned non-zero).") \
	X(OUTPUT_NULL, "output-null", 4, "aml_module_output_get(perfMode 2) returned NULL.")       \
	X(OUTPUT_DATA_NULL, "output-data-null", 4,                                                 \
	  "An output descriptor's data pointer (first at returned object +0x50) is NULL.")          \
	X(OUTPUT_INVALID, "output-invalid", 4,                                                     \
	  "The output object lists fewer outputs than the NBG, or a buffer smaller than its record.") \
	X(DESTROY_FAILED, "destroy-failed", 4,                                                     \
	  "aml_module_destroy returned non-zero; the vendor keeps its wrapper, it is never retried.") \
	X(GOLDEN_FORMAT, "golden-format", 2,                                                       \
	  "An output's data format has no element-wise comparison (packed 4-bit or unknown).")     \
	X(TARGET_MISMATCH, "target-mismatch", 1,                                                   \
	  "The NBG was compiled for another target than the device's CID or --expect-target.")      \
	X(RUNTIME_CRASHED, "runtime-crashed", 4,                                                   \
	  "The vendor library crashed, exited or hung inside a call (the message names the call).") \
	X(DESCRIPTOR_INVALID, "descriptor-invalid", 4,                                             \
	  "The runtime returned a pointer that cannot be a valid object (such as 0x1); refused.")   \
	X(INIT_FAILED, "init-failed", 4,                                                           \
	  "vip_init returned a failure status (-2, I/O: the device node cannot be opened).")        \
	X(QUERY_FAILED, "query-failed", 4,                                                         \
	  "A vip_query_hardware/network/input/output call returned a failure status.")              \
	X(PREPARE_FAILED, "prepare-failed", 4,                                                     \
	  "vip_set_network or vip_prepare_network returned a failure status.")                      \
	X(BUFFER_FAILED, "buffer-failed", 4,                                                       \
	  "A VIPLite buffer could not be created, mapped, flushed or bound, or is too small.")      \
	X(RUN_TIMEOUT, "run-timeout", 4,                                                           \
	  "The network did not finish in time (VIP_ERROR_TIMEOUT, or the isolated run's limit).")   \
	X(RUNTIME_IO_MISMATCH, "runtime-io-mismatch", 4,                                           \
	  "The runtime's own view of the inputs or outputs differs from the NBG's I/O records.")    \
	X(NPY_INVALID, "npy-invalid", 1,                                                           \
	  "A .npy file breaks the NumPy format: magic, version, header dictionary or data size.")   \
	X(TENSOR_SHAPE_MISMATCH, "tensor-shape-mismatch", 1,                                       \
	  "A tensor's shape is not its I/O record's, outermost first, nor converts to it with "      \
	  "--layout.")                                                                              \
	X(TENSOR_TYPE_MISMATCH, "tensor-type-mismatch", 1,                                         \
	  "A .npy dtype is neither the record's own data format nor float32.")                      \
	X(TENSOR_TEXT_INVALID, "tensor-text-invalid", 1,                                           \
	  "A .tensor text file has a line that is no number, or another value count than needed.")  \
	X(TENSOR_FORMAT_UNSUPPORTED, "tensor-format-unsupported", 1,                               \
	  "The record's data format has no float conversion (packed 4-bit or unknown).")            \
	X(SAMPLE_INVALID, "sample-invalid", 2,                                                     \
	  "A vpm_run sample.txt has an unknown section, a path outside a section or no network.") \
	X(FILE_CHANGED, "file-changed", 3,                                                         \
	  "A file's size changed between the directory walk and reading it, or while it was read.") \
	X(DIGEST_MISMATCH, "digest-mismatch", 1,                                                   \
	  "A file's SHA-256 differs from the one its manifest lists.")                              \
	X(NOT_REGULAR_FILE, "not-regular-file", 3,                                                 \
	  "The path is a FIFO, device, socket or directory, not a regular file; it is not opened.") \
	X(CORPUS_PART, "corpus-part", 2,                                                           \
	  "A corpus part is not a document nbg corpus --json wrote, or another nbgkit version wrote it.") \
	X(WORK_LIMIT, "work-limit", 1,                                                             \
	  "A limit was passed (file size, undescribed bytes, a run's outputs, memory or work); refused first.") \
	X(INPUT_TOO_LARGE, "input-too-large", 3,                                                   \
	  "Standard input, or a file read into memory, holds more than the in-memory bound.")      \
	X(V1_CRC_SUM_MISMATCH, "v1-crc-sum-mismatch", 1,                                           \
	  "A v1 nbg_crc_sum differs from the CRC-32 its version's rule gives (doc/format-v1.md).")  \
	X(NOT_IN_MANIFEST, "not-in-manifest", 1,                                                   \
	  "verify --manifest: the file is not listed in the manifest, so it was not compared.")     \
	X(INTEGRITY_UNVERIFIED, "integrity-unverified", 1,                                         \
	  "verify --require-checksum: no checksum, in the file or given, proved the file's bytes.")   \
	X(UNSUPPORTED_OPERATION, "unsupported-operation", 4,                                       \
	  "The CPU backend cannot execute an operation of the model (the message names it and why).") \
	X(INTERRUPTED, "interrupted", 4,                                                           \
	  "The run was stopped: by its caller (Ctrl-C in Python), or SIGINT/SIGTERM/SIGHUP ended it.") \
	X(OUTPUT_EXISTS, "output-exists", 3,                                                       \
	  "An output that must be new (nbg run --dump DIR) already exists; nothing was written.")    \
	X(DUMP_INVALID, "dump-invalid", 2,                                                         \
	  "A dump directory's dump.json is missing, not nbg run's, or lists files it does not hold.")    \
	X(IMAGE_INVALID, "image-invalid", 1,                                                       \
	  "nbg run: a .png or .jpg input that libpng or libjpeg cannot decode whole (corrupt, cut).") \
	X(IMAGE_TOO_LARGE, "image-too-large", 1,                                                   \
	  "nbg run: an image's declared size is over the bound checked before it is decoded.")     \
	X(BATCH_NAME_INVALID, "batch-name-invalid", 1,                                             \
	  "nbg run --batch: an entry's name has control characters; no output folder is made for it.")

#endif

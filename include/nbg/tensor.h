/*
 * tensor.h - tensors people can read: the raw bytes an NBG input or output
 * record describes, NumPy .npy files, vpm_run's text .tensor files (one
 * number per line), quantization with a record's own parameters, and
 * vpm_run's sample.txt.  Pure host code: no runtime, no device.
 *
 * Layout.  An NBG record lists its dimensions innermost (fastest-varying)
 * first; its raw bytes are that array in memory order.  NumPy lists shapes
 * outermost first and stores C order by default, so the raw bytes of a
 * record ARE the C-order data of the reversed dimension list: no copy, no
 * transposition.  That reversed list is "the shape" everywhere below.
 *
 * Quantization (float -> record element, round half to even, clamped to the
 * element type's range; NaN maps to the zero point):
 *   dynamic fixed point  q = round(f * 2^fixed_point_pos),   f = q * 2^-fixed_point_pos
 *   affine               q = round(f / scale) + zero_point,  f = (q - zero_point) * scale
 *   none                 q = round(f),                       f = q
 * Float formats (FP32, FP16, BFP16, FP64) convert by value (FP16 and BFP16
 * round half to even) and ignore quantization parameters.  Packed 4-bit
 * formats, unknown formats, an affine scale that is zero or not finite and a
 * fixed-point position outside NBG_DFP_POS_MIN..NBG_DFP_POS_MAX have no
 * conversion (tensor-format-unsupported).
 *
 * Every function returns an nbg_code and fills the optional nbg_error.
 * Allocated results are freed with free().  All functions are reentrant.
 */
#ifndef NBG_TENSOR_H
#define NBG_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ elements */

/* The dynamic fixed-point positions that convert: 2^fl beyond them is
 * outside float32's range. */
#define NBG_DFP_POS_MIN (-128)
#define NBG_DFP_POS_MAX 127

/* Bytes per element of an NBG data format, 0 for packed 4-bit or unknown
 * formats (they have no element-wise conversion). */
NBG_API unsigned nbg_tensor_element_size(uint32_t data_format);

/*
 * values[0..count) -> out (the record's raw bytes, little-endian), with the
 * record's data format and quantization.  count must equal
 * io->element_count and out_size io->byte_size.  Returns NBG_OK,
 * INVALID_ARGUMENT, TENSOR_FORMAT_UNSUPPORTED (4-bit, unknown, an affine
 * scale that is zero or not finite, a fixed-point position outside
 * NBG_DFP_POS_MIN..NBG_DFP_POS_MAX).
 */
NBG_API nbg_code nbg_tensor_quantize(const nbg_io *io, const float *values, uint64_t count,
				     void *out, size_t out_size, nbg_error *err);

/* raw (io->byte_size bytes) -> out[0..count) as float, the inverse mapping. */
NBG_API nbg_code nbg_tensor_dequantize(const nbg_io *io, const void *raw, size_t raw_size,
				       float *out, uint64_t count, nbg_error *err);

/* ------------------------------------------------------------ .npy */

#define NBG_NPY_MAX_DIMS 32

/* A parsed .npy file; data points into the caller's buffer. */
typedef struct nbg_npy {
	unsigned major, minor;     /* format version (1.0, 2.0, 3.0) */
	char descr[16];            /* as written, e.g. "<f4", "|u1" */
	char kind;                 /* 'f', 'i', 'u' or 'b' */
	unsigned item_size;        /* bytes per element */
	int big_endian;            /* descr starts with '>' */
	int fortran_order;
	uint32_t ndim;
	uint64_t shape[NBG_NPY_MAX_DIMS];
	uint64_t count;            /* product of shape (1 for a 0-d array) */
	size_t data_offset;        /* where the data starts in the file */
	const uint8_t *data;
	size_t data_size;          /* count * item_size, exactly the rest of the file */
} nbg_npy;

/*
 * Parses a .npy file held in buf[0..size): magic "\x93NUMPY", version 1.0,
 * 2.0 or 3.0, the little-endian header length, the header dictionary
 * ('descr', 'fortran_order', 'shape' in any order, Python literal syntax)
 * and data of exactly count x item_size bytes.  Accepts simple dtypes of
 * kinds f (2, 4, 8 bytes), i and u (1, 2, 4, 8), b (1); any byte order.
 * Returns NBG_OK, INVALID_ARGUMENT, NPY_INVALID (err->offset = where),
 * TENSOR_TYPE_MISMATCH (structured, object or other dtypes).
 */
NBG_API nbg_code nbg_npy_parse(const uint8_t *buf, size_t size, nbg_npy *out, nbg_error *err);

/*
 * Writes a version 1.0 .npy file (version 2.0 when the header needs more
 * than 65535 bytes): descr as given ("<f4" ...), C order, shape[0..ndim),
 * the header padded with spaces and '\n' so the data starts at a multiple
 * of 64.  size must equal product(shape) x the descr's item size.
 * Returns NBG_OK, INVALID_ARGUMENT, OUT_OF_MEMORY; *out is malloc'ed.
 */
NBG_API nbg_code nbg_npy_encode(const char *descr, const uint64_t *shape, uint32_t ndim,
				const void *data, size_t size, uint8_t **out, size_t *out_size,
				nbg_error *err);

/* The .npy descr of an NBG data format ("<f4", "<i2", "|u1", ...), or NULL
 * when NumPy has no equal type (BFP16, 4-bit, unknown). */
NBG_API const char *nbg_npy_descr(uint32_t data_format);

/* ------------------------------------------------------------ files */

typedef enum nbg_tensor_kind {
	NBG_TENSOR_AUTO = 0, /* from the file name: nbg_tensor_kind_of() */
	NBG_TENSOR_RAW = 1,  /* the record's bytes (.bin, .dat, anything else) */
	NBG_TENSOR_NPY = 2,  /* NumPy .npy */
	NBG_TENSOR_TEXT = 3, /* vpm_run .tensor / .txt: one number per line */
} nbg_tensor_kind;

/* By extension (case-insensitive): .npy -> NPY, .tensor/.txt -> TEXT,
 * anything else -> RAW. */
NBG_API nbg_tensor_kind nbg_tensor_kind_of(const char *path);
/* "raw", "npy", "text". */
NBG_API const char *nbg_tensor_kind_name(nbg_tensor_kind kind);

/*
 * A file's content -> the record's raw bytes (*out malloc'ed, *out_size ==
 * io->byte_size).
 *   RAW   the bytes themselves; their count must be io->byte_size
 *         (INPUT_SIZE_MISMATCH otherwise).
 *   NPY   dtype the record's own (nbg_npy_descr) -> bytes as they are;
 *         dtype float (f2/f4/f8) -> quantized with the record's parameters;
 *         anything else TENSOR_TYPE_MISMATCH.  The shape must be the
 *         record's outermost first (NumPy's convention; size-1 dimensions
 *         aside): nbg_tensor_shape_check.  A Fortran-order array is
 *         transposed into the record's layout (its shape names the array,
 *         whatever its storage order).
 *   TEXT  numbers separated by white space (one per line as vpm_run
 *         writes them), exactly io->element_count of them, in memory order,
 *         quantized with the record's parameters; TENSOR_TEXT_INVALID names
 *         the line of the first bad one.
 * Raw and text files carry no shape: nothing is compared but their size.
 */
NBG_API nbg_code nbg_tensor_to_raw(const nbg_io *io, nbg_tensor_kind kind, const uint8_t *buf,
				   size_t size, uint8_t **out, size_t *out_size, nbg_error *err);

/* What a 4-D array's axes are (nbg run --layout).  A record names no
 * layout: its dimensions, outermost first, are the model's order (NHWC
 * for the corpus, NCHW for some files). */
typedef enum nbg_tensor_layout {
	NBG_LAYOUT_MODEL = 0, /* the record's own order: nothing converted */
	NBG_LAYOUT_NCHW = 1,
	NBG_LAYOUT_NHWC = 2,
} nbg_tensor_layout;

/*
 * The one shape rule for an array given for record io (nbg run, nbg
 * tensor, Python's Model.run): shape[0..ndim), size-1 dimensions aside,
 * equal to the record's outermost first -> NBG_OK, *convert 0.  Otherwise,
 * with layout NCHW (NHWC), a 4-D array whose transposition to NHWC (NCHW:
 * axes (0, 2, 3, 1), resp. (0, 3, 1, 2)) has the record's shape ->
 * NBG_OK, *convert 1.  Otherwise TENSOR_SHAPE_MISMATCH: for the record's
 * dimensions in another order, the message names both shapes and the
 * --layout that converts the array (or that none does); for other
 * dimensions, both shapes.  INVALID_ARGUMENT for NULLs, ndim over
 * NBG_NPY_MAX_DIMS or an unknown layout.
 */
NBG_API nbg_code nbg_tensor_shape_check(const nbg_io *io, const uint64_t *shape, uint32_t ndim,
					nbg_tensor_layout layout, int *convert, nbg_error *err);

/* nbg_tensor_to_raw with a .npy's layout: an array nbg_tensor_shape_check
 * converts is transposed (bit for bit) to the record's order before it
 * is quantized.  Raw and text files are read as nbg_tensor_to_raw reads
 * them, whatever the layout: they carry no shape. */
NBG_API nbg_code nbg_tensor_to_raw_layout(const nbg_io *io, nbg_tensor_kind kind,
					  nbg_tensor_layout layout, const uint8_t *buf,
					  size_t size, uint8_t **out, size_t *out_size,
					  nbg_error *err);

/*
 * The record's raw bytes -> a file's content (*out malloc'ed).
 *   RAW   a copy.
 *   NPY   float32 dequantized with the record's parameters, the shape
 *         outermost first; with keep_dtype the record's own dtype instead
 *         (TENSOR_FORMAT_UNSUPPORTED where NumPy has none).
 *   TEXT  one dequantized value per line ("%.9g", so float32 reads back
 *         exactly).
 */
NBG_API nbg_code nbg_tensor_from_raw(const nbg_io *io, nbg_tensor_kind kind, int keep_dtype,
				     const void *raw, size_t raw_size, uint8_t **out,
				     size_t *out_size, nbg_error *err);

/*
 * A file's content -> the record's values as float (*out malloc'ed,
 * io->element_count of them): a float .npy is taken by value (shape checked
 * as in nbg_tensor_to_raw, no quantization); anything else goes through
 * nbg_tensor_to_raw and nbg_tensor_dequantize.  For goldens.
 */
NBG_API nbg_code nbg_tensor_floats(const nbg_io *io, nbg_tensor_kind kind, const uint8_t *buf,
				   size_t size, float **out, nbg_error *err);

/* ------------------------------------------------------------ results */

typedef struct nbg_tensor_top_entry {
	uint64_t index; /* element index in memory order */
	float value;
} nbg_tensor_top_entry;

/* The k largest values of v[0..n) in descending order (ties: lower index
 * first; NaN never listed) into out[0..k); returns how many were written
 * (min(k, number of non-NaN values)). */
NBG_API size_t nbg_tensor_top(const float *v, uint64_t n, size_t k, nbg_tensor_top_entry *out);

typedef struct nbg_tensor_diff {
	uint64_t elements;
	uint64_t mismatches;     /* |a - b| > tolerance, or NaN against a number */
	uint64_t first_mismatch; /* valid when mismatches > 0 */
	double max_abs_diff;     /* +inf when a NaN meets a number */
} nbg_tensor_diff;

/* Element-wise float comparison (two NaNs are equal).  Returns NBG_OK or
 * INVALID_ARGUMENT (NULL pointers, tolerance negative or NaN). */
NBG_API nbg_code nbg_tensor_compare(const float *a, const float *b, uint64_t n,
				    double tolerance, nbg_tensor_diff *out, nbg_error *err);

/* ------------------------------------------------------ vpm_run sample.txt */

typedef struct nbg_sample_network {
	char *model;          /* the [network] path */
	char **inputs;        /* [input] paths, in order */
	size_t input_count;
	char **goldens;       /* [golden] paths */
	size_t golden_count;
	char **outputs;       /* [output] paths */
	size_t output_count;
	uint32_t line;        /* the line of its [network] header (1-based) */
} nbg_sample_network;

typedef struct nbg_sample {
	nbg_sample_network *networks;
	size_t network_count;
} nbg_sample;

/*
 * Parses vpm_run's sample.txt: sections [network] (one NBG path), [input]
 * (one path per input), [golden] and [output] (optional, one per output),
 * section names case-insensitive; '#' as the first non-blank character
 * starts a comment line; blank lines are ignored; lines are trimmed; each
 * [network] starts the next network and the sections after it belong to
 * it.  Paths are kept as written.  Returns NBG_OK and *out (free with
 * nbg_sample_free), INVALID_ARGUMENT, OUT_OF_MEMORY, SAMPLE_INVALID
 * (err->offset is the byte offset and the message names the line: an
 * unknown section, a path outside any section or before the first
 * [network], a second path under one [network], a network without inputs,
 * or no network at all).
 */
NBG_API nbg_code nbg_sample_parse(const char *text, size_t size, nbg_sample **out,
				  nbg_error *err);
NBG_API void nbg_sample_free(nbg_sample *s);

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_TENSOR_H_STATIC_LINKING_ONLY)
#define NBG_TENSOR_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* One side of a comparison (nbg compare, nbg run --golden): each
 * element's stored value (a code, or a float element's value) and how it
 * dequantizes, (stored - zero_point) x scale; scale 0 when it is not known
 * (an inner tensor of a dump: its zero point alone is in the file). */
typedef struct nbg_tensor_side {
	const float *stored;
	double zero_point;
	double scale;
} nbg_tensor_side;

/* What a comparison of two tensors gives (doc/debugging.md, "nbg compare"). */
typedef struct nbg_tensor_stats {
	uint64_t elements;
	double tolerance;        /* in stored units, resolved (a relative one: of B's range) */
	uint64_t beyond;         /* elements whose stored values differ by more than it
				  * (a NaN against a number always) */
	uint64_t first_beyond;   /* valid when beyond > 0 */
	double max_abs_stored, mean_abs_stored; /* |a - b| of the stored values */
	double max_abs, mean_abs; /* of the dequantized values; NaN where a scale is unknown */
	double cosine;           /* cosine similarity of the values less their zero points;
				  * NaN when a side is all zero or holds a NaN */
	uint32_t top_k;          /* min(k asked, elements) */
	uint32_t top_common;     /* indices both sides' top k hold */
	int top1_equal;          /* the largest value's index is the same */
} nbg_tensor_stats;

/* a and b, n elements each, measured: tolerance in stored units, or with
 * relative (a fraction, 0.01 for 1%) of the range (max - min) of b's
 * stored values; top_k the k of the top-k agreement (0: 5).  NBG_OK,
 * INVALID_ARGUMENT (NULLs, a tolerance negative or NaN), OUT_OF_MEMORY. */
NBG_API nbg_code nbg_tensor_measure(const nbg_tensor_side *a, const nbg_tensor_side *b, uint64_t n,
				    double tolerance, int relative, uint32_t top_k, nbg_tensor_stats *out,
				    nbg_error *err);

/* The stored values of count elements of raw bytes in data format fmt
 * (codes as they are, float formats by value), malloc'd into *out.
 * NBG_OK, TENSOR_FORMAT_UNSUPPORTED (4-bit, unknown), INVALID_ARGUMENT
 * (size not count elements), OUT_OF_MEMORY. */
NBG_API nbg_code nbg_tensor_stored(uint32_t fmt, const void *raw, size_t size, uint64_t count, float **out,
				   nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif

/*
 * lookalike.h - naming what a file that is not an NBG appears to be, from
 * the documented header of each kind (doc/lookalikes.md).  Private to libnbg.
 */
#ifndef NBG_FORMAT_LOOKALIKE_H
#define NBG_FORMAT_LOOKALIKE_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/* The kinds recognized, in the order they are tried. */
typedef enum nbg_lookalike_kind {
	NBG_LOOKALIKE_NONE = 0,
	NBG_LOOKALIKE_RKNN,
	NBG_LOOKALIKE_ZIP,
	NBG_LOOKALIKE_ELF,
	NBG_LOOKALIKE_TFLITE,
	NBG_LOOKALIKE_PADDLE,
	NBG_LOOKALIKE_ONNX,
} nbg_lookalike_kind;

/*
 * Looks at data[0..size) (a file whose first four bytes are not "VPMN") and,
 * when it has the documented header of one of the kinds above, writes into
 * buf a phrase naming it ("a ZIP archive (first entry \"x\") ..."), every
 * byte taken from the file escaped, and returns the kind.  Otherwise writes
 * "" and returns NBG_LOOKALIKE_NONE.  Reads nothing outside the buffer.
 */
NBG_INTERNAL nbg_lookalike_kind nbg_lookalike(const uint8_t *data, size_t size, char *buf,
					      size_t bufsize);

#endif

/*
 * fuzz_tensor.c - libFuzzer harness: tensor files as `nbg run` and `nbg
 * tensor` read them (.npy, vpm_run's text, raw) against an NBG record.
 *
 * The first 16 bytes of the input choose the record -- data format,
 * quantization (none, dynamic fixed point with its position, affine with
 * its scale word and zero point), 1 to 6 dimensions of 1 to 16 -- and how
 * the rest is read; the rest is the file.  Checked beyond memory safety:
 *  - nbg_npy_parse of the file: on success the header and data tile the
 *    file and count x item size is the data;
 *  - nbg_tensor_to_raw_layout (the layout, as nbg run --layout gives it,
 *    from the first byte too): on success exactly the record's byte size;
 *    on failure a named code and no buffer;
 *  - the record's own bytes written as .npy in its own dtype read back to
 *    the same bytes, and for FP32 records as text read back to the same
 *    values (NaN to a NaN);
 *  - nbg_tensor_floats gives the record's element count or fails cleanly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nbg/tensor.h"

#define HEAD 16

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The record the header bytes describe (element count at most 16^6). */
static nbg_io record_of(const uint8_t *h)
{
	nbg_io io;
	memset(&io, 0, sizeof(io));
	io.data_format = h[1] % 18;
	io.quant_format = h[2] % 3;
	io.fixed_point_pos = (int8_t)h[3];
	if (h[2] & 0x80) /* now and then a position past the usable range */
		io.fixed_point_pos = (int32_t)le32(h + 4);
	uint32_t sb = le32(h + 4);
	memcpy(&io.scale, &sb, 4);
	io.zero_point = (int32_t)(int8_t)h[8];
	io.dim_count = h[9] % 6 + 1;
	io.element_count = 1;
	for (uint32_t d = 0; d < io.dim_count; d++) {
		io.dims[d] = h[10 + d] % 16 + 1;
		io.element_count *= io.dims[d];
	}
	unsigned bits = nbg_data_format_bits(io.data_format);
	io.byte_size_known = bits != 0;
	io.byte_size = (io.element_count * bits + 7) / 8;
	return io;
}

/* The .npy parser's promises for a file it accepts. */
static void check_npy(const uint8_t *data, size_t size)
{
	nbg_npy a;
	nbg_error err;
	nbg_code rc = nbg_npy_parse(data, size, &a, &err);

	if (rc != NBG_OK) {
		FZ_CHECK(nbg_code_name(rc) != NULL);
		FZ_CHECK(fz_terminated(err.message, sizeof(err.message)));
		return;
	}
	FZ_CHECK(a.ndim <= NBG_NPY_MAX_DIMS);
	FZ_CHECK(a.data_offset <= size && a.data_offset + a.data_size == size);
	FZ_CHECK(a.data == data + a.data_offset);
	FZ_CHECK(a.count * a.item_size == a.data_size);
	FZ_CHECK(fz_terminated(a.descr, sizeof(a.descr)));
}

/* The record's bytes through its own-dtype .npy, and (FP32) through text. */
static void round_trips(const nbg_io *io, const uint8_t *raw, size_t rs)
{
	uint8_t *file = NULL, *back = NULL;
	size_t fs, bs;
	nbg_error err;

	if (nbg_npy_descr(io->data_format) &&
	    nbg_tensor_from_raw(io, NBG_TENSOR_NPY, 1, raw, rs, &file, &fs, &err) == NBG_OK) {
		check_npy(file, fs);
		FZ_CHECK(nbg_tensor_to_raw(io, NBG_TENSOR_NPY, file, fs, &back, &bs, &err) == NBG_OK);
		FZ_CHECK(bs == rs && !memcmp(back, raw, rs));
		free(back);
		free(file);
	}
	if (io->data_format == 0 &&
	    nbg_tensor_from_raw(io, NBG_TENSOR_TEXT, 0, raw, rs, &file, &fs, &err) == NBG_OK) {
		FZ_CHECK(nbg_tensor_to_raw(io, NBG_TENSOR_TEXT, file, fs, &back, &bs, &err) == NBG_OK);
		FZ_CHECK(bs == rs);
		for (size_t i = 0; i + 4 <= rs; i += 4) {
			float x, y;
			memcpy(&x, raw + i, 4);
			memcpy(&y, back + i, 4);
			FZ_CHECK((isnan(x) && isnan(y)) || !memcmp(&x, &y, 4));
		}
		free(back);
		free(file);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEAD)
		return 0;
	nbg_io io = record_of(data);
	const uint8_t *file = data + HEAD;
	size_t n = size - HEAD;
	nbg_tensor_kind kind = data[0] % 3 == 0 ? NBG_TENSOR_NPY
			     : data[0] % 3 == 1 ? NBG_TENSOR_TEXT : NBG_TENSOR_RAW;
	uint8_t *raw = NULL;
	size_t rs = 7;
	nbg_error err;

	check_npy(file, n);
	nbg_tensor_layout layout = (nbg_tensor_layout)(data[0] / 3 % 3);
	nbg_code rc = nbg_tensor_to_raw_layout(&io, kind, layout, file, n, &raw, &rs, &err);
	if (rc == NBG_OK) {
		FZ_CHECK(raw != NULL && io.byte_size_known && rs == io.byte_size);
		round_trips(&io, raw, rs);
		free(raw);
	} else {
		FZ_CHECK(raw == NULL && rs == 0);
		FZ_CHECK(nbg_code_name(rc) != NULL && err.code == rc);
		FZ_CHECK(fz_terminated(err.message, sizeof(err.message)));
	}
	float *v = NULL;
	rc = nbg_tensor_floats(&io, kind, file, n, &v, &err);
	FZ_CHECK((rc == NBG_OK) == (v != NULL));
	if (v) {
		float sum = 0;
		for (uint64_t i = 0; i < io.element_count; i++) /* every value readable */
			sum += v[i] * 0.0f;
		(void)sum;
		free(v);
	}
	return 0;
}

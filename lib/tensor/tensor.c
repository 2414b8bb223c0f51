/*
 * tensor.c - a tensor file (raw, .npy, text) <-> the raw bytes of an NBG
 * record: the shape check (outermost first; 4-D NCHW <-> NHWC when asked),
 * storage-order and layout transposition, quantization with the record's
 * own parameters.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/half.h"
#include "common/internal.h"
#include "nbg/tensor.h"

/* float32 data is copied to and from .npy '<f4' as it lies in memory. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "little-endian hosts only");

nbg_tensor_kind nbg_tensor_kind_of(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/'))
		return NBG_TENSOR_RAW;
	if (!strcasecmp(dot, ".npy"))
		return NBG_TENSOR_NPY;
	if (!strcasecmp(dot, ".tensor") || !strcasecmp(dot, ".txt"))
		return NBG_TENSOR_TEXT;
	return NBG_TENSOR_RAW;
}

const char *nbg_tensor_kind_name(nbg_tensor_kind kind)
{
	switch (kind) {
	case NBG_TENSOR_RAW: return "raw";
	case NBG_TENSOR_NPY: return "npy";
	case NBG_TENSOR_TEXT: return "text";
	default: return "auto";
	}
}

/* ------------------------------------------------------------ shapes */

/* dims without the size-1 entries, in the order given. */
static uint32_t squeeze(const uint64_t *in, uint32_t n, uint64_t *out)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (in[i] != 1)
			out[k++] = in[i];
	return k;
}

static int same(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	if (na != nb)
		return 0;
	for (uint32_t i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static void shape_text(char *buf, size_t n, const uint64_t *s, uint32_t k)
{
	size_t len = 0;
	buf[0] = 0;
	len += (size_t)snprintf(buf + len, n - len, "(");
	for (uint32_t i = 0; i < k && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%llu", i ? ", " : "",
					(unsigned long long)s[i]);
	if (len < n)
		snprintf(buf + len, n - len, ")");
}

/* Whether b[0..n) holds the values of a[0..n) in some order. */
static int permutation_of(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	int used[NBG_NPY_MAX_DIMS] = { 0 };
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = 0;
		while (j < n && (used[j] || b[j] != a[i]))
			j++;
		if (j == n)
			return 0;
		used[j] = 1;
	}
	return 1;
}

/* The axes a 4-D array in layout `from` is transposed by to reach the
 * other layout: NCHW -> NHWC takes axes (0, 2, 3, 1), NHWC -> NCHW
 * (0, 3, 1, 2). */
static const uint32_t *layout_axes(nbg_tensor_layout from)
{
	static const uint32_t to_nhwc[4] = { 0, 2, 3, 1 }, to_nchw[4] = { 0, 3, 1, 2 };
	return from == NBG_LAYOUT_NCHW ? to_nhwc : to_nchw;
}

/* The layout (--layout) whose conversion turns shape s[0..4) into the
 * record's squeezed shape so[0..no), or 0. */
static nbg_tensor_layout layout_reaching(const uint64_t *s, const uint64_t *so, uint32_t no)
{
	for (int l = NBG_LAYOUT_NCHW; l <= NBG_LAYOUT_NHWC; l++) {
		const uint32_t *ax = layout_axes((nbg_tensor_layout)l);
		uint64_t t[4], st[4];
		for (uint32_t i = 0; i < 4; i++)
			t[i] = s[ax[i]];
		uint32_t nt = squeeze(t, 4, st);
		if (same(st, nt, so, no))
			return (nbg_tensor_layout)l;
	}
	return NBG_LAYOUT_MODEL;
}

nbg_code nbg_tensor_shape_check(const nbg_io *io, const uint64_t *shape, uint32_t ndim,
				nbg_tensor_layout layout, int *convert, nbg_error *err)
{
	if (!io || (!shape && ndim) || ndim > NBG_NPY_MAX_DIMS || io->dim_count > 6 || !convert ||
	    (unsigned)layout > NBG_LAYOUT_NHWC)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "tensor: bad shape argument");
	uint64_t outer[6], so[6], sa[NBG_NPY_MAX_DIMS];
	for (uint32_t i = 0; i < io->dim_count; i++)
		outer[i] = nbg_io_dim_outer(io, i);
	uint32_t no = squeeze(outer, io->dim_count, so), na = squeeze(shape, ndim, sa);
	*convert = 0;
	if (same(sa, na, so, no))
		return NBG_OK;
	nbg_tensor_layout reach = ndim == 4 ? layout_reaching(shape, so, no) : NBG_LAYOUT_MODEL;
	if (layout != NBG_LAYOUT_MODEL && reach == layout) {
		*convert = 1;
		return NBG_OK;
	}
	char got[256], want[256];
	shape_text(got, sizeof(got), shape, ndim);
	shape_text(want, sizeof(want), outer, io->dim_count);
	if (na != no || !permutation_of(sa, so, na))
		return nbg_error_set(err, NBG_E_TENSOR_SHAPE_MISMATCH, 0, "shape",
				     "the array's shape %s is not the record's %s (outermost first, "
				     "size-1 dimensions aside)",
				     got, want);
	if (reach != NBG_LAYOUT_MODEL)
		return nbg_error_set(err, NBG_E_TENSOR_SHAPE_MISMATCH, 0, "shape",
				     "the array's shape %s has the dimensions of the record's %s "
				     "(outermost first) in another order: it is not read transposed; "
				     "if the array is %s and the model %s, --layout %s converts it",
				     got, want, reach == NBG_LAYOUT_NCHW ? "NCHW" : "NHWC",
				     reach == NBG_LAYOUT_NCHW ? "NHWC" : "NCHW",
				     reach == NBG_LAYOUT_NCHW ? "nchw" : "nhwc");
	return nbg_error_set(err, NBG_E_TENSOR_SHAPE_MISMATCH, 0, "shape",
			     "the array's shape %s has the dimensions of the record's %s (outermost "
			     "first) in another order: it is not read transposed, and no --layout "
			     "(nchw, nhwc: 4-D arrays) converts it; transpose it to %s",
			     got, want, want);
}

/*
 * Transposes an array: in holds C-order data of shape s[0..k); out gets the
 * C-order data of the array whose axis i is the input's axis ax[i].
 */
static void permute(const uint8_t *in, uint8_t *out, const uint64_t *s, uint32_t k,
		    const uint32_t *ax, unsigned esz, uint64_t count)
{
	uint64_t st[NBG_NPY_MAX_DIMS], os[NBG_NPY_MAX_DIMS], ostride[NBG_NPY_MAX_DIMS];
	uint64_t idx[NBG_NPY_MAX_DIMS] = { 0 };
	uint64_t acc = 1;
	for (uint32_t a = k; a-- > 0;) {
		st[a] = acc;
		acc *= s[a];
	}
	for (uint32_t i = 0; i < k; i++) {
		os[i] = s[ax[i]];
		ostride[i] = st[ax[i]];
	}
	uint64_t f = 0;
	for (uint64_t c = 0; c < count; c++) {
		memcpy(out + c * esz, in + f * esz, esz);
		for (uint32_t a = k; a-- > 0;) { /* advance the output's C-order index */
			idx[a]++;
			f += ostride[a];
			if (idx[a] < os[a])
				break;
			f -= ostride[a] * os[a];
			idx[a] = 0;
		}
	}
}

/* The array's data in C order of its shape, converted by --layout when
 * convert: the record's memory order.  A Fortran-order array's data is the
 * C order of its reversed shape, whose axes are reversed first (composed
 * with the layout's into one pass).  *tmp is what was allocated. */
static nbg_code arrange(const nbg_npy *a, nbg_tensor_layout layout, int convert,
			const uint8_t **data, uint8_t **tmp, nbg_error *err)
{
	*data = a->data;
	*tmp = NULL;
	if (!convert && (!a->fortran_order || a->ndim < 2))
		return NBG_OK;
	uint64_t s[NBG_NPY_MAX_DIMS];
	uint32_t ax[NBG_NPY_MAX_DIMS], k = a->ndim;
	for (uint32_t i = 0; i < k; i++) {
		s[i] = a->fortran_order ? a->shape[k - 1 - i] : a->shape[i];
		ax[i] = i;
	}
	if (convert)
		memcpy(ax, layout_axes(layout), 4 * sizeof(*ax));
	if (a->fortran_order) /* axis i of the array is axis k-1-i of the stored one */
		for (uint32_t i = 0; i < k; i++)
			ax[i] = k - 1 - ax[i];
	*tmp = malloc(a->data_size ? a->data_size : 1);
	if (!*tmp)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	permute(a->data, *tmp, s, k, ax, a->item_size, a->count);
	*data = *tmp;
	return NBG_OK;
}

/* ------------------------------------------------------------ to raw */

static nbg_code alloc_raw(const nbg_io *io, uint8_t **out, nbg_error *err)
{
	if (!io->byte_size_known || io->byte_size > SIZE_MAX)
		return nbg_error_set(err, NBG_E_TENSOR_FORMAT_UNSUPPORTED, 0, "data_format",
				     "the record's byte size is not known (data format %u)",
				     io->data_format);
	*out = malloc(io->byte_size ? (size_t)io->byte_size : 1);
	if (!*out)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	return NBG_OK;
}

static double load_npy_value(const nbg_npy *a, const uint8_t *p)
{
	uint8_t b[8];
	for (unsigned i = 0; i < a->item_size; i++)
		b[i] = a->big_endian ? p[a->item_size - 1 - i] : p[i];
	if (a->kind == 'f') {
		if (a->item_size == 2) {
			uint16_t h = (uint16_t)(b[0] | b[1] << 8);
			return nbg_fp16_to_float(h);
		}
		if (a->item_size == 4) {
			float f;
			memcpy(&f, b, 4);
			return f;
		}
		double d;
		memcpy(&d, b, 8);
		return d;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < a->item_size; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return (double)v;
}

static nbg_code npy_to_raw(const nbg_io *io, nbg_tensor_layout layout, const uint8_t *buf,
			   size_t size, uint8_t *raw, nbg_error *err)
{
	nbg_npy a;
	nbg_code rc = nbg_npy_parse(buf, size, &a, err);
	if (rc != NBG_OK)
		return rc;
	const char *own = nbg_npy_descr(io->data_format);
	int own_type = own && !strcmp(own + 1, a.descr + 1);
	if (!own_type && a.kind != 'f')
		return nbg_error_set(err, NBG_E_TENSOR_TYPE_MISMATCH, 0, "descr",
				     "dtype '%s' is neither the record's own (%s, '%s') nor a float "
				     "type to quantize",
				     a.descr, nbg_data_format_name(io->data_format)
						      ? nbg_data_format_name(io->data_format) : "?",
				     own ? own : "none");
	int convert = 0;
	if ((rc = nbg_tensor_shape_check(io, a.shape, a.ndim, layout, &convert, err)) != NBG_OK)
		return rc;
	const uint8_t *data;
	uint8_t *tmp;
	if ((rc = arrange(&a, layout, convert, &data, &tmp, err)) != NBG_OK)
		return rc;
	if (own_type) {
		memcpy(raw, data, a.data_size);
		if (a.big_endian) /* to the record's little-endian order */
			for (size_t i = 0; i + a.item_size <= a.data_size; i += a.item_size)
				for (unsigned lo = 0, hi = a.item_size - 1; lo < hi; lo++, hi--) {
					uint8_t t = raw[i + lo];
					raw[i + lo] = raw[i + hi];
					raw[i + hi] = t;
				}
		free(tmp);
		return NBG_OK;
	}
	float *v = malloc(a.count ? (size_t)a.count * sizeof(float) : 1);
	if (!v) {
		free(tmp);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	}
	for (uint64_t i = 0; i < a.count; i++)
		v[i] = (float)load_npy_value(&a, data + i * a.item_size);
	rc = nbg_tensor_quantize(io, v, a.count, raw, (size_t)io->byte_size, err);
	free(v);
	free(tmp);
	return rc;
}

static nbg_code text_to_raw(const nbg_io *io, const uint8_t *buf, size_t size, uint8_t *raw,
			    nbg_error *err)
{
	uint64_t n = io->element_count, got = 0;
	float *v = malloc(n ? (size_t)n * sizeof(float) : 1);
	char *text = malloc(size + 1);
	nbg_code rc = NBG_OK;
	if (!v || !text) {
		free(v);
		free(text);
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	}
	memcpy(text, buf, size);
	text[size] = 0;
	unsigned long line = 1;
	char *p = text;
	while (rc == NBG_OK) {
		while (*p && isspace((unsigned char)*p))
			line += *p++ == '\n';
		if (!*p)
			break;
		char *end;
		errno = 0;
		double d = strtod(p, &end);
		if (end == p || (*end && !isspace((unsigned char)*end)))
			rc = nbg_error_set(err, NBG_E_TENSOR_TEXT_INVALID, (uint64_t)(p - text), "",
					   "line %lu is not a number", line);
		else if (got >= n)
			rc = nbg_error_set(err, NBG_E_TENSOR_TEXT_INVALID, (uint64_t)(p - text), "",
					   "line %lu: more than the record's %llu values", line,
					   (unsigned long long)n);
		else
			v[got++] = (float)d;
		p = end;
	}
	if (rc == NBG_OK && (size_t)(p - text) != size)
		rc = nbg_error_set(err, NBG_E_TENSOR_TEXT_INVALID, (uint64_t)(p - text), "",
				   "line %lu holds a NUL byte", line);
	if (rc == NBG_OK && got != n)
		rc = nbg_error_set(err, NBG_E_TENSOR_TEXT_INVALID, size, "",
				   "%llu values; the record has %llu elements",
				   (unsigned long long)got, (unsigned long long)n);
	if (rc == NBG_OK)
		rc = nbg_tensor_quantize(io, v, n, raw, (size_t)io->byte_size, err);
	free(v);
	free(text);
	return rc;
}

nbg_code nbg_tensor_to_raw(const nbg_io *io, nbg_tensor_kind kind, const uint8_t *buf, size_t size,
			   uint8_t **out, size_t *out_size, nbg_error *err)
{
	return nbg_tensor_to_raw_layout(io, kind, NBG_LAYOUT_MODEL, buf, size, out, out_size, err);
}

nbg_code nbg_tensor_to_raw_layout(const nbg_io *io, nbg_tensor_kind kind, nbg_tensor_layout layout,
				  const uint8_t *buf, size_t size, uint8_t **out, size_t *out_size,
				  nbg_error *err)
{
	if (!io || !out || !out_size || (!buf && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "tensor: NULL pointer");
	*out = NULL;
	*out_size = 0;
	uint8_t *raw;
	nbg_code rc = alloc_raw(io, &raw, err);
	if (rc != NBG_OK)
		return rc;
	if (kind == NBG_TENSOR_NPY) {
		rc = npy_to_raw(io, layout, buf, size, raw, err);
	} else if (kind == NBG_TENSOR_TEXT) {
		rc = text_to_raw(io, buf, size, raw, err);
	} else if (size != io->byte_size) {
		rc = nbg_error_set(err, NBG_E_INPUT_SIZE_MISMATCH, 0, "",
				   "%zu raw bytes; the record (%s, %llu elements) needs %llu", size,
				   nbg_data_format_name(io->data_format)
					   ? nbg_data_format_name(io->data_format) : "?",
				   (unsigned long long)io->element_count,
				   (unsigned long long)io->byte_size);
	} else if (size) {
		memcpy(raw, buf, size);
	}
	if (rc != NBG_OK) {
		free(raw);
		return rc;
	}
	*out = raw;
	*out_size = (size_t)io->byte_size;
	return NBG_OK;
}

/* ------------------------------------------------------------ from raw */

static nbg_code to_floats(const nbg_io *io, const void *raw, size_t raw_size, float **v,
			  nbg_error *err)
{
	*v = malloc(io->element_count ? (size_t)io->element_count * sizeof(float) : 1);
	if (!*v)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	nbg_code rc = nbg_tensor_dequantize(io, raw, raw_size, *v, io->element_count, err);
	if (rc != NBG_OK) {
		free(*v);
		*v = NULL;
	}
	return rc;
}

static nbg_code floats_to_text(const float *v, uint64_t n, uint8_t **out, size_t *out_size,
			       nbg_error *err)
{
	size_t cap = (size_t)n * 20 + 1, len = 0;
	char *t = malloc(cap);
	if (!t)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
	for (uint64_t i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, "%.9g\n", (double)v[i]);
	*out = (uint8_t *)t;
	*out_size = len;
	return NBG_OK;
}

nbg_code nbg_tensor_from_raw(const nbg_io *io, nbg_tensor_kind kind, int keep_dtype, const void *raw,
			     size_t raw_size, uint8_t **out, size_t *out_size, nbg_error *err)
{
	if (!io || !out || !out_size || (!raw && raw_size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "tensor: NULL pointer");
	*out = NULL;
	*out_size = 0;
	if (!io->byte_size_known || raw_size != io->byte_size)
		return nbg_error_set(err, NBG_E_INPUT_SIZE_MISMATCH, 0, "",
				     "%zu raw bytes; the record needs %llu", raw_size,
				     (unsigned long long)io->byte_size);
	if (kind != NBG_TENSOR_NPY && kind != NBG_TENSOR_TEXT) {
		uint8_t *c = malloc(raw_size ? raw_size : 1);
		if (!c)
			return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "out of memory");
		if (raw_size)
			memcpy(c, raw, raw_size);
		*out = c;
		*out_size = raw_size;
		return NBG_OK;
	}
	uint64_t shape[6];
	for (uint32_t i = 0; i < io->dim_count; i++)
		shape[i] = nbg_io_dim_outer(io, i);
	if (kind == NBG_TENSOR_NPY && keep_dtype) {
		const char *d = nbg_npy_descr(io->data_format);
		if (!d)
			return nbg_error_set(err, NBG_E_TENSOR_FORMAT_UNSUPPORTED, 0, "data_format",
					     "NumPy has no dtype for data format %u (%s)",
					     io->data_format,
					     nbg_data_format_name(io->data_format)
						     ? nbg_data_format_name(io->data_format) : "?");
		return nbg_npy_encode(d, shape, io->dim_count, raw, raw_size, out, out_size, err);
	}
	float *v;
	nbg_code rc = to_floats(io, raw, raw_size, &v, err);
	if (rc != NBG_OK)
		return rc;
	if (kind == NBG_TENSOR_NPY)
		rc = nbg_npy_encode("<f4", shape, io->dim_count, v,
				    (size_t)io->element_count * sizeof(float), out, out_size, err);
	else
		rc = floats_to_text(v, io->element_count, out, out_size, err);
	free(v);
	return rc;
}

nbg_code nbg_tensor_floats(const nbg_io *io, nbg_tensor_kind kind, const uint8_t *buf, size_t size,
			   float **out, nbg_error *err)
{
	if (!io || !out || (!buf && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "tensor: NULL pointer");
	*out = NULL;
	nbg_io fio = *io;
	nbg_npy a;
	if (kind == NBG_TENSOR_NPY && nbg_npy_parse(buf, size, &a, NULL) == NBG_OK && a.kind == 'f') {
		fio.data_format = 0; /* FP32, unquantized: the values as they are */
		fio.quant_format = NBG_QUANT_NONE;
		fio.byte_size = fio.element_count * 4;
		fio.byte_size_known = 1;
	}
	uint8_t *raw;
	size_t rs;
	nbg_code rc = nbg_tensor_to_raw(&fio, kind, buf, size, &raw, &rs, err);
	if (rc != NBG_OK)
		return rc;
	rc = to_floats(&fio, raw, rs, out, err);
	free(raw);
	return rc;
}

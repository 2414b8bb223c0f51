/*
 * npy.c - the NumPy .npy format, version 1.0/2.0/3.0: magic "\x93NUMPY",
 * major and minor version bytes, a little-endian header length (16 bits in
 * 1.0, 32 bits after), an ASCII (3.0: UTF-8) Python dictionary literal with
 * exactly the keys 'descr', 'fortran_order' and 'shape', padded with spaces
 * and ended by '\n', then the array data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "nbg/tensor.h"

static const uint8_t magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

typedef struct hdr {
	const char *p, *end;
	size_t base; /* file offset of the header's first byte */
	const char *start;
	nbg_error *err;
} hdr;

static nbg_code bad(hdr *h, const char *what)
{
	return nbg_error_set(h->err, NBG_E_NPY_INVALID, h->base + (size_t)(h->p - h->start),
			     "header", "%s", what);
}

static void skip_ws(hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

/* A quoted string into out (at most n-1 bytes). */
static nbg_code parse_string(hdr *h, char *out, size_t n)
{
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return bad(h, "a quoted string is expected in the header dictionary");
	char q = *h->p++;
	size_t len = 0;
	while (h->p < h->end && *h->p != q) {
		if (*h->p == '\\' || len + 1 >= n)
			return bad(h, "a header string is too long or has an escape");
		out[len++] = *h->p++;
	}
	if (h->p >= h->end)
		return bad(h, "a header string is not closed");
	h->p++;
	out[len] = 0;
	return NBG_OK;
}

static nbg_code parse_shape(hdr *h, nbg_npy *o)
{
	if (h->p >= h->end || *h->p != '(')
		return bad(h, "'shape' is not a tuple");
	h->p++;
	o->ndim = 0;
	for (;;) {
		skip_ws(h);
		if (h->p < h->end && *h->p == ')') {
			h->p++;
			return NBG_OK;
		}
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return bad(h, "a 'shape' entry is not a non-negative integer");
		uint64_t v = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return bad(h, "a 'shape' entry is too large");
			v = v * 10 + (uint64_t)(*h->p++ - '0');
		}
		if (h->p < h->end && *h->p == 'L')
			h->p++; /* Python 2 long literal */
		if (o->ndim >= NBG_NPY_MAX_DIMS)
			return bad(h, "'shape' has more than 32 dimensions");
		o->shape[o->ndim++] = v;
		skip_ws(h);
		if (h->p < h->end && *h->p == ',') {
			h->p++;
			continue;
		}
		if (h->p < h->end && *h->p == ')')
			continue;
		return bad(h, "'shape' entries are not separated by commas");
	}
}

static nbg_code parse_descr(hdr *h, nbg_npy *o)
{
	if (h->p < h->end && *h->p == '[')
		return nbg_error_set(h->err, NBG_E_TENSOR_TYPE_MISMATCH,
				     h->base + (size_t)(h->p - h->start), "descr",
				     "the array has a structured dtype; only plain numbers are read");
	nbg_code rc = parse_string(h, o->descr, sizeof(o->descr));
	if (rc != NBG_OK)
		return rc;
	const char *d = o->descr;
	size_t len = strlen(d);
	if (len < 3 || !strchr("<>|=", d[0]) || !strchr("fiub", d[1]) || d[2] < '1' || d[2] > '8' ||
	    len != 3)
		return nbg_error_set(h->err, NBG_E_TENSOR_TYPE_MISMATCH, h->base, "descr",
				     "dtype '%.15s' is not a plain float, integer or bool type", d);
	o->kind = d[1];
	o->item_size = (unsigned)(d[2] - '0');
	o->big_endian = d[0] == '>';
	int ok = (o->kind == 'f' && (o->item_size == 2 || o->item_size == 4 || o->item_size == 8)) ||
		 ((o->kind == 'i' || o->kind == 'u') &&
		  (o->item_size == 1 || o->item_size == 2 || o->item_size == 4 || o->item_size == 8)) ||
		 (o->kind == 'b' && o->item_size == 1);
	if (!ok)
		return nbg_error_set(h->err, NBG_E_TENSOR_TYPE_MISMATCH, h->base, "descr",
				     "dtype '%s' has no NBG equivalent", d);
	return NBG_OK;
}

static nbg_code parse_dict(hdr *h, nbg_npy *o)
{
	int seen_descr = 0, seen_order = 0, seen_shape = 0;
	skip_ws(h);
	if (h->p >= h->end || *h->p != '{')
		return bad(h, "the header is not a dictionary");
	h->p++;
	for (;;) {
		char key[32];
		nbg_code rc;
		skip_ws(h);
		if (h->p < h->end && *h->p == '}')
			break;
		if ((rc = parse_string(h, key, sizeof(key))) != NBG_OK)
			return rc;
		skip_ws(h);
		if (h->p >= h->end || *h->p != ':')
			return bad(h, "a ':' is expected after a header key");
		h->p++;
		skip_ws(h);
		if (!strcmp(key, "descr") && !seen_descr++) {
			rc = parse_descr(h, o);
		} else if (!strcmp(key, "fortran_order") && !seen_order++) {
			if (h->end - h->p >= 4 && !memcmp(h->p, "True", 4)) {
				o->fortran_order = 1;
				h->p += 4;
			} else if (h->end - h->p >= 5 && !memcmp(h->p, "False", 5)) {
				h->p += 5;
			} else {
				rc = bad(h, "'fortran_order' is neither True nor False");
			}
		} else if (!strcmp(key, "shape") && !seen_shape++) {
			rc = parse_shape(h, o);
		} else {
			rc = bad(h, "the header has an unknown or repeated key");
		}
		if (rc != NBG_OK)
			return rc;
		skip_ws(h);
		if (h->p < h->end && *h->p == ',')
			h->p++;
		else if (!(h->p < h->end && *h->p == '}'))
			return bad(h, "header entries are not separated by commas");
	}
	h->p++;
	if (!seen_descr || !seen_order || !seen_shape)
		return bad(h, "the header lacks 'descr', 'fortran_order' or 'shape'");
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\n'))
		h->p++;
	if (h->p != h->end)
		return bad(h, "bytes other than space padding follow the header dictionary");
	return NBG_OK;
}

nbg_code nbg_npy_parse(const uint8_t *buf, size_t size, nbg_npy *o, nbg_error *err)
{
	if (!o || (!buf && size))
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "npy: NULL pointer");
	memset(o, 0, sizeof(*o));
	if (size < 10 || memcmp(buf, magic, 6) != 0)
		return nbg_error_set(err, NBG_E_NPY_INVALID, 0, "magic",
				     "not a .npy file: it does not start with \\x93NUMPY");
	o->major = buf[6];
	o->minor = buf[7];
	if (o->major < 1 || o->major > 3)
		return nbg_error_set(err, NBG_E_NPY_INVALID, 6, "version",
				     ".npy format version %u.%u is not 1.0, 2.0 or 3.0", o->major,
				     o->minor);
	size_t lenbytes = o->major == 1 ? 2 : 4, start = 8 + lenbytes;
	if (size < start)
		return nbg_error_set(err, NBG_E_NPY_INVALID, 8, "header_len",
				     "the file ends inside the header length");
	uint64_t hl = 0;
	for (size_t i = 0; i < lenbytes; i++)
		hl |= (uint64_t)buf[8 + i] << (8 * i);
	if (hl > size - start)
		return nbg_error_set(err, NBG_E_NPY_INVALID, 8, "header_len",
				     "the header length %llu reaches past the end of the file "
				     "(%zu bytes)",
				     (unsigned long long)hl, size);
	hdr h = { (const char *)buf + start, (const char *)buf + start + hl, start,
		  (const char *)buf + start, err };
	nbg_code rc = parse_dict(&h, o);
	if (rc != NBG_OK)
		return rc;
	o->count = 1;
	for (uint32_t i = 0; i < o->ndim; i++)
		if (__builtin_mul_overflow(o->count, o->shape[i], &o->count))
			return nbg_error_set(err, NBG_E_NPY_INVALID, start, "shape",
					     "the shape's element count overflows 64 bits");
	o->data_offset = start + (size_t)hl;
	o->data = buf + o->data_offset;
	uint64_t need;
	if (__builtin_mul_overflow(o->count, (uint64_t)o->item_size, &need) ||
	    need != size - o->data_offset)
		return nbg_error_set(err, NBG_E_NPY_INVALID, o->data_offset, "data",
				     "the data is %zu bytes; shape and dtype '%s' need %llu",
				     size - o->data_offset, o->descr, (unsigned long long)need);
	o->data_size = (size_t)need;
	return NBG_OK;
}

static unsigned descr_item_size(const char *d)
{
	if (!d || strlen(d) != 3 || !strchr("<>|=", d[0]) || !strchr("fiub", d[1]))
		return 0;
	return d[2] >= '1' && d[2] <= '8' ? (unsigned)(d[2] - '0') : 0;
}

nbg_code nbg_npy_encode(const char *descr, const uint64_t *shape, uint32_t ndim, const void *data,
			size_t size, uint8_t **out, size_t *out_size, nbg_error *err)
{
	unsigned isz = descr_item_size(descr);
	if (!out || !out_size || (ndim && !shape) || (size && !data) || !isz ||
	    ndim > NBG_NPY_MAX_DIMS)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "",
				     "npy encode: NULL pointer, bad dtype or too many dimensions");
	*out = NULL;
	*out_size = 0;
	uint64_t count = 1;
	char dict[64 + NBG_NPY_MAX_DIMS * 22];
	int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
			 descr);
	for (uint32_t i = 0; i < ndim; i++) {
		if (__builtin_mul_overflow(count, shape[i], &count))
			return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "", "npy encode: shape overflows");
		n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%llu", i ? ", " : "",
			      (unsigned long long)shape[i]);
	}
	n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", ndim == 1 ? "," : "");
	if (count > SIZE_MAX / isz || count * isz != size)
		return nbg_error_set(err, NBG_E_INVALID_ARGUMENT, 0, "",
				     "npy encode: %zu data bytes for %llu elements of %u bytes", size,
				     (unsigned long long)count, isz);
	/* magic(6) + version(2) + length(2) + dict + padding + '\n' = multiple of 64 */
	size_t pre = 10, total = pre + (size_t)n + 1;
	size_t padded = (total + 63) / 64 * 64;
	size_t hl = padded - pre;
	size_t file = padded + size;
	uint8_t *b = malloc(file ? file : 1);
	if (!b)
		return nbg_error_set(err, NBG_E_OUT_OF_MEMORY, 0, "", "npy encode: out of memory");
	memcpy(b, magic, 6);
	b[6] = 1;
	b[7] = 0;
	b[8] = (uint8_t)(hl & 0xff);
	b[9] = (uint8_t)(hl >> 8);
	memcpy(b + pre, dict, (size_t)n);
	memset(b + pre + n, ' ', hl - (size_t)n - 1);
	b[padded - 1] = '\n';
	if (size)
		memcpy(b + padded, data, size);
	*out = b;
	*out_size = file;
	return NBG_OK;
}

const char *nbg_npy_descr(uint32_t fmt)
{
	switch (fmt) {
	case 0: return "<f4";
	case 1: return "<f2";
	case 2: return "|u1";
	case 3: case 6: return "|i1";
	case 4: return "<u2";
	case 5: return "<i2";
	case 8: return "<i4";
	case 9: return "<u4";
	case 10: return "<i8";
	case 11: return "<u8";
	case 12: return "<f8";
	case 16: return "|b1";
	default: return NULL;
	}
}

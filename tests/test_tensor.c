/*
 * test_tensor.c - tensors people can read: quantization against values
 * worked out by hand from the formulas (and, when the system python3 has
 * NumPy, against NumPy's own rint/clip/astype over many values), .npy files
 * loaded back by NumPy (or by a small parser in this file when NumPy is
 * absent) and NumPy's own files parsed, text tensors, shape orders, and
 * vpm_run's sample.txt.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/nbg.h"
#include "nbg/tensor.h"

static char workdir[256];
static int have_numpy;

/* A record made by hand: dims innermost first. */
static nbg_io rec(uint32_t fmt, uint32_t quant, int32_t fl, float scale, int32_t zp, uint32_t n,
		  const uint32_t *dims)
{
	nbg_io io;
	memset(&io, 0, sizeof(io));
	io.dim_count = n;
	io.element_count = 1;
	for (uint32_t i = 0; i < n; i++) {
		io.dims[i] = dims[i];
		io.element_count *= dims[i];
	}
	io.data_format = fmt;
	io.quant_format = quant;
	io.fixed_point_pos = fl;
	io.scale = scale;
	io.zero_point = zp;
	io.byte_size_known = nbg_data_format_bits(fmt) != 0;
	io.byte_size = io.element_count * nbg_data_format_bits(fmt) / 8;
	return io;
}

static int run(const char *cmd)
{
	int s = system(cmd);
	return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

static void wfile(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* ------------------------------------------------------------ quantization */

/* Each case: one float, the element bytes the formula gives (worked by hand). */
typedef struct qcase {
	float f;
	int64_t q;
} qcase;

static void check_cases(const nbg_io *proto, const qcase *c, size_t n)
{
	uint32_t one = 1;
	nbg_io io = rec(proto->data_format, proto->quant_format, proto->fixed_point_pos, proto->scale,
			proto->zero_point, 1, &one);
	unsigned esz = nbg_tensor_element_size(io.data_format);
	for (size_t i = 0; i < n; i++) {
		uint8_t out[8] = { 0 }, want[8] = { 0 };
		nbg_error e;
		assert_int_equal(nbg_tensor_quantize(&io, &c[i].f, 1, out, esz, &e), NBG_OK);
		for (unsigned b = 0; b < esz; b++)
			want[b] = (uint8_t)((uint64_t)c[i].q >> (8 * b));
		if (memcmp(out, want, esz))
			fail_msg("format %u quant %u: %g -> %02x%02x, want %lld", io.data_format,
				 io.quant_format, (double)c[i].f, out[1], out[0], (long long)c[i].q);
	}
}

static void test_quantize_by_hand(void **state)
{
	(void)state;
	/* dynamic fixed point, INT8, fl = 4: q = round(f * 16), half to even */
	nbg_io d8 = rec(3, NBG_QUANT_DFP, 4, 0, 0, 0, NULL);
	const qcase c_d8[] = { { 1.0f, 16 }, { 0.03125f, 0 }, { 0.09375f, 2 }, { -0.09375f, -2 },
			       { -8.0f, -128 }, { 10.0f, 127 }, { -9.0f, -128 }, { NAN, 0 } };
	check_cases(&d8, c_d8, sizeof(c_d8) / sizeof(c_d8[0]));
	/* INT16, fl = -2: q = round(f / 4) */
	nbg_io d16 = rec(5, NBG_QUANT_DFP, -2, 0, 0, 0, NULL);
	const qcase c_d16[] = { { 12.0f, 3 }, { 10.0f, 2 }, { 14.0f, 4 }, { 1e9f, 32767 } };
	check_cases(&d16, c_d16, sizeof(c_d16) / sizeof(c_d16[0]));
	/* affine UINT8, scale 0.5, zero point 10: q = round(f / 0.5) + 10 */
	nbg_io a8 = rec(2, NBG_QUANT_AFFINE, 0, 0.5f, 10, 0, NULL);
	const qcase c_a8[] = { { 1.25f, 12 }, { -5.0f, 0 }, { -6.0f, 0 }, { 200.0f, 255 },
			       { 0.0f, 10 }, { NAN, 10 } };
	check_cases(&a8, c_a8, sizeof(c_a8) / sizeof(c_a8[0]));
	/* affine INT8, scale 0.25, zero point -3 */
	nbg_io ai8 = rec(3, NBG_QUANT_AFFINE, 0, 0.25f, -3, 0, NULL);
	const qcase c_ai8[] = { { 1.0f, 1 }, { -31.0f, -127 }, { -40.0f, -128 } };
	check_cases(&ai8, c_ai8, sizeof(c_ai8) / sizeof(c_ai8[0]));
	/* no quantization, INT16 and UINT32 */
	nbg_io n16 = rec(5, NBG_QUANT_NONE, 0, 0, 0, 0, NULL);
	const qcase c_n16[] = { { 2.5f, 2 }, { 3.5f, 4 }, { -40000.0f, -32768 } };
	check_cases(&n16, c_n16, sizeof(c_n16) / sizeof(c_n16[0]));
	nbg_io n32 = rec(9, NBG_QUANT_NONE, 0, 0, 0, 0, NULL);
	const qcase c_n32[] = { { -1.0f, 0 }, { 4294967296.0f, 4294967295ll }, { 7.0f, 7 } };
	check_cases(&n32, c_n32, sizeof(c_n32) / sizeof(c_n32[0]));
	/* FP16 bit patterns (IEEE 754 binary16, round half to even) */
	nbg_io h = rec(1, NBG_QUANT_NONE, 0, 0, 0, 0, NULL);
	const qcase c_h[] = { { 1.0f, 0x3c00 }, { 65504.0f, 0x7bff }, { 65520.0f, 0x7c00 },
			      { 1.0f + 1.0f / 2048, 0x3c00 }, { 1.0f + 3.0f / 2048, 0x3c02 },
			      { 0x1p-24f, 0x0001 }, { 0x1p-25f, 0x0000 }, { 0x3p-25f, 0x0002 },
			      { -2.0f, 0xc000 }, { 0x1p-14f, 0x0400 } };
	check_cases(&h, c_h, sizeof(c_h) / sizeof(c_h[0]));
	/* BFP16: the top half of the float32, round half to even */
	nbg_io bf = rec(7, NBG_QUANT_NONE, 0, 0, 0, 0, NULL);
	const qcase c_bf[] = { { 1.0f, 0x3f80 }, { 1.0f + 1.0f / 256, 0x3f80 },
			       { 1.0f + 3.0f / 256, 0x3f82 }, { -0.5f, 0xbf00 } };
	check_cases(&bf, c_bf, sizeof(c_bf) / sizeof(c_bf[0]));
	/* FP32 keeps the bits; quantization parameters on a float format are ignored */
	nbg_io f32 = rec(0, NBG_QUANT_DFP, 7, 0, 0, 0, NULL);
	const qcase c_f32[] = { { 1.0f, 0x3f800000 }, { -2.5f, 0xc0200000 } };
	check_cases(&f32, c_f32, sizeof(c_f32) / sizeof(c_f32[0]));
}

static void test_dequantize_by_hand(void **state)
{
	(void)state;
	uint32_t four = 4;
	float out[4];
	nbg_error e;
	nbg_io d8 = rec(3, NBG_QUANT_DFP, 4, 0, 0, 1, &four);
	const int8_t q8[4] = { 16, -128, 127, 1 };
	assert_int_equal(nbg_tensor_dequantize(&d8, q8, 4, out, 4, &e), NBG_OK);
	assert_true(out[0] == 1.0f && out[1] == -8.0f && out[2] == 7.9375f && out[3] == 0.0625f);
	nbg_io a8 = rec(2, NBG_QUANT_AFFINE, 0, 0.5f, 10, 1, &four);
	const uint8_t u8[4] = { 12, 0, 255, 10 };
	assert_int_equal(nbg_tensor_dequantize(&a8, u8, 4, out, 4, &e), NBG_OK);
	assert_true(out[0] == 1.0f && out[1] == -5.0f && out[2] == 122.5f && out[3] == 0.0f);
	nbg_io d16 = rec(5, NBG_QUANT_DFP, -2, 0, 0, 1, &four);
	const uint8_t q16[8] = { 3, 0, 0xff, 0xff, 0x00, 0x80, 0xff, 0x7f };
	assert_int_equal(nbg_tensor_dequantize(&d16, q16, 8, out, 4, &e), NBG_OK);
	assert_true(out[0] == 12.0f && out[1] == -4.0f && out[2] == -131072.0f && out[3] == 131068.0f);
	nbg_io h = rec(1, NBG_QUANT_NONE, 0, 0, 0, 1, &four);
	const uint8_t h16[8] = { 0x00, 0x3c, 0x01, 0x00, 0x00, 0x7c, 0x00, 0xc0 };
	assert_int_equal(nbg_tensor_dequantize(&h, h16, 8, out, 4, &e), NBG_OK);
	assert_true(out[0] == 1.0f && out[1] == 0x1p-24f && isinf(out[2]) && out[3] == -2.0f);

	/* no conversion for packed 4-bit data, nor a zero affine scale */
	nbg_io i4 = rec(13, NBG_QUANT_NONE, 0, 0, 0, 1, &four);
	assert_int_equal(nbg_tensor_dequantize(&i4, q8, 2, out, 4, &e), NBG_E_TENSOR_FORMAT_UNSUPPORTED);
	nbg_io z = rec(2, NBG_QUANT_AFFINE, 0, 0.0f, 0, 1, &four);
	assert_int_equal(nbg_tensor_quantize(&z, out, 4, (void *)u8, 4, &e), NBG_E_TENSOR_FORMAT_UNSUPPORTED);
	assert_non_null(strstr(e.message, "scale"));
	/* count or size wrong */
	assert_int_equal(nbg_tensor_dequantize(&d8, q8, 3, out, 4, &e), NBG_E_INVALID_ARGUMENT);
}

/* Many values against NumPy: np.rint (half to even), clip, astype, and
 * float16 conversion.  The test writes the floats; python writes the bytes. */
/* Absurd fixed-point positions: INT32_MIN overflowed when negated (UBSan),
 * and 2000 made 0 x 2^2000 a NaN that passed the clamp and was cast (INT64
 * got 0x8000000000000000 for every 0.0).  Positions outside -128..127 are
 * refused; the ends of that range convert (values worked by hand). */
static void test_dfp_positions(void **state)
{
	(void)state;
	uint32_t one = 1;
	nbg_error e;
	float zero = 0.0f, f;
	uint8_t out[8], raw[8] = { 0 };
	static const int32_t bad[] = { INT32_MIN, -129, 128, 2000, INT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nbg_io io = rec(10, NBG_QUANT_DFP, bad[i], 0, 0, 1, &one); /* INT64 */
		memset(out, 0xee, sizeof(out));
		assert_int_equal(nbg_tensor_quantize(&io, &zero, 1, out, 8, &e),
				 NBG_E_TENSOR_FORMAT_UNSUPPORTED);
		assert_non_null(strstr(e.message, "fixed-point position"));
		assert_int_equal(out[7], 0xee); /* nothing written */
		assert_int_equal(nbg_tensor_dequantize(&io, raw, 8, &f, 1, &e),
				 NBG_E_TENSOR_FORMAT_UNSUPPORTED);
	}
	/* 127: 2^-127 (a float32 subnormal, exact) is q = 1; 0 is 0 */
	nbg_io hi = rec(3, NBG_QUANT_DFP, 127, 0, 0, 1, &one); /* INT8 */
	float tiny = ldexpf(1.0f, -127);
	assert_int_equal(nbg_tensor_quantize(&hi, &tiny, 1, out, 1, &e), NBG_OK);
	assert_int_equal(out[0], 1);
	assert_int_equal(nbg_tensor_quantize(&hi, &zero, 1, out, 1, &e), NBG_OK);
	assert_int_equal(out[0], 0);
	/* -128: q = 1 is 2^128, past float32: infinity, by the formula */
	nbg_io lo = rec(3, NBG_QUANT_DFP, -128, 0, 0, 1, &one);
	raw[0] = 1;
	assert_int_equal(nbg_tensor_dequantize(&lo, raw, 1, &f, 1, &e), NBG_OK);
	assert_true(isinf(f) && f > 0);
	nbg_io lo64 = rec(10, NBG_QUANT_DFP, -128, 0, 0, 1, &one);
	assert_int_equal(nbg_tensor_quantize(&lo64, &zero, 1, out, 8, &e), NBG_OK);
	for (int b = 0; b < 8; b++)
		assert_int_equal(out[b], 0);
}

static void test_quantize_vs_numpy(void **state)
{
	(void)state;
	if (!have_numpy)
		skip();
	enum { N = 4096 };
	static float v[N];
	uint32_t n = N;
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[i] = (float)((double)(int64_t)(x % 2000001) / 1000.0 - 1000.0) / 7.0f;
	}
	v[0] = 0.5f, v[1] = -0.5f, v[2] = 1.5f, v[3] = 2.5f;
	char in[300], out[300], cmd[1400];
	snprintf(in, sizeof(in), "%s/vals.f32", workdir);
	wfile(in, v, sizeof(v));
	struct { uint32_t fmt, quant; int32_t fl; float scale; int32_t zp; const char *np; } k[] = {
		{ 3, NBG_QUANT_DFP, 4, 0, 0, "np.clip(np.rint(v.astype(np.float64)*16),-128,127).astype('<i1')" },
		{ 5, NBG_QUANT_DFP, 7, 0, 0, "np.clip(np.rint(v.astype(np.float64)*128),-32768,32767).astype('<i2')" },
		{ 2, NBG_QUANT_AFFINE, 0, 0.0078125f, 128,
		  "np.clip(np.rint(v.astype(np.float64)/0.0078125)+128,0,255).astype('<u1')" },
		{ 1, NBG_QUANT_NONE, 0, 0, 0, "v.astype('<f2')" },
	};
	for (size_t t = 0; t < sizeof(k) / sizeof(k[0]); t++) {
		nbg_io io = rec(k[t].fmt, k[t].quant, k[t].fl, k[t].scale, k[t].zp, 1, &n);
		uint8_t mine[N * 2];
		nbg_error e;
		assert_int_equal(nbg_tensor_quantize(&io, v, N, mine, (size_t)io.byte_size, &e), NBG_OK);
		snprintf(out, sizeof(out), "%s/np_%zu.bin", workdir, t);
		snprintf(cmd, sizeof(cmd),
			 "/usr/bin/python3 -c \"import numpy as np; v=np.fromfile('%s',dtype='<f4'); "
			 "open('%s','wb').write(%s.tobytes())\"",
			 in, out, k[t].np);
		assert_int_equal(run(cmd), 0);
		size_t sz;
		uint8_t *theirs = fx_read_file(out, &sz);
		assert_non_null(theirs);
		assert_int_equal(sz, io.byte_size);
		assert_memory_equal(mine, theirs, sz);
		free(theirs);
	}
}

/* ------------------------------------------------------------ .npy */

/* A parser written here from the format description, used when NumPy is
 * absent: returns the descr and shape text and the data offset. */
static size_t mini_npy(const uint8_t *b, size_t n, char descr[8], char shape[64])
{
	assert_true(n >= 10 && !memcmp(b, "\x93NUMPY\x01\x00", 8));
	size_t hl = (size_t)b[8] | (size_t)b[9] << 8;
	assert_true(10 + hl <= n && (10 + hl) % 64 == 0 && b[10 + hl - 1] == '\n');
	char *h = strndup((const char *)b + 10, hl);
	char *d = strstr(h, "'descr': '"), *s = strstr(h, "'shape': (");
	assert_non_null(d);
	assert_non_null(s);
	assert_non_null(strstr(h, "'fortran_order': False"));
	snprintf(descr, 8, "%.3s", d + 10);
	char *e = strchr(s, ')');
	snprintf(shape, 64, "%.*s", (int)(e - (s + 10)), s + 10);
	free(h);
	return 10 + hl;
}

static void test_npy_written_loads(void **state)
{
	(void)state;
	uint32_t dims[4] = { 3, 5, 2, 1 }; /* innermost first: shape (1, 2, 5, 3) */
	nbg_io io = rec(5, NBG_QUANT_DFP, 8, 0, 0, 4, dims);
	int16_t raw[30];
	for (int i = 0; i < 30; i++)
		raw[i] = (int16_t)(i * 37 - 500);
	uint8_t *npy;
	size_t nsz;
	nbg_error e;
	assert_int_equal(nbg_tensor_from_raw(&io, NBG_TENSOR_NPY, 0, raw, sizeof(raw), &npy, &nsz, &e), NBG_OK);
	char path[300], cmd[1200];
	snprintf(path, sizeof(path), "%s/out.npy", workdir);
	wfile(path, npy, nsz);
	/* expected: raw / 256 in memory order, shape outermost first */
	if (have_numpy) {
		snprintf(cmd, sizeof(cmd),
			 "/usr/bin/python3 -c \"import numpy as np; a=np.load('%s'); "
			 "w=(np.arange(30)*37-500)/256.0; "
			 "assert a.dtype==np.float32 and a.shape==(1,2,5,3), (a.dtype,a.shape); "
			 "assert (a.reshape(-1)==w).all(); assert a.flags.c_contiguous\"",
			 path);
		assert_int_equal(run(cmd), 0);
	} else {
		char descr[8], shape[64];
		size_t off = mini_npy(npy, nsz, descr, shape);
		assert_string_equal(descr, "<f4");
		assert_string_equal(shape, "1, 2, 5, 3");
		assert_int_equal(nsz - off, 30 * 4);
		for (int i = 0; i < 30; i++) {
			float f;
			memcpy(&f, npy + off + 4 * i, 4);
			assert_true(f == (float)(i * 37 - 500) / 256.0f);
		}
	}
	/* keep_dtype: the record's own int16 */
	uint8_t *npy2;
	size_t n2;
	assert_int_equal(nbg_tensor_from_raw(&io, NBG_TENSOR_NPY, 1, raw, sizeof(raw), &npy2, &n2, &e), NBG_OK);
	char descr[8], shape[64];
	size_t off = mini_npy(npy2, n2, descr, shape);
	assert_string_equal(descr, "<i2");
	assert_memory_equal(npy2 + off, raw, sizeof(raw));
	/* and back: our reader takes both files to the same raw bytes */
	uint8_t *back;
	size_t bsz;
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &back, &bsz, &e), NBG_OK);
	assert_memory_equal(back, raw, sizeof(raw));
	free(back);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy2, n2, &back, &bsz, &e), NBG_OK);
	assert_memory_equal(back, raw, sizeof(raw));
	free(back);
	free(npy);
	free(npy2);
	/* a 1-d shape is written "(n,)", a 0-d one "()" */
	float one = 2.0f;
	uint64_t s1 = 1;
	assert_int_equal(nbg_npy_encode("<f4", &s1, 1, &one, 4, &npy, &nsz, &e), NBG_OK);
	off = mini_npy(npy, nsz, descr, shape);
	assert_string_equal(shape, "1,");
	free(npy);
}

/* raw holds the int16 values 0, 1, ..., n - 1 in order. */
static void expect_ascending_i16(const uint8_t *raw, int n)
{
	for (int k = 0; k < n; k++) {
		int16_t v;
		memcpy(&v, raw + 2 * k, 2);
		if (v != k)
			fail_msg("element %d is %d: not transposed into the record's order", k, v);
	}
}

/* Files NumPy writes: every dtype, Fortran order, big-endian, 0-d, 2.0. */
static void test_npy_numpy_files(void **state)
{
	(void)state;
	if (!have_numpy)
		skip();
	char cmd[2000];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && /usr/bin/python3 -c \"import numpy as np\n"
		 "for t in ['<f4','<f2','<f8','|u1','|i1','<u2','<i2','<u4','<i4','<u8','<i8','|b1','>i2','>f4']:\n"
		 "  np.save('t_%%s%%s.npy' %% (t[1:], 'be' if t[0]=='>' else ''), (np.arange(24)%%7).astype(t).reshape(2,3,4))\n"
		 "np.save('fortran.npy', np.asfortranarray(np.arange(24,dtype='<i2').reshape(2,3,4)))\n"
		 "np.save('scalar.npy', np.float32(3.5))\n"
		 "np.lib.format.write_array(open('v2.npy','wb'), np.arange(6,dtype='<u1').reshape(2,3), version=(2,0))\n\"",
		 workdir);
	assert_int_equal(run(cmd), 0);
	static const char *const names[] = { "f4", "f2", "f8", "u1", "i1", "u2", "i2", "u4",
					     "i4", "u8", "i8", "b1", "i2be", "f4be" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char p[300];
		snprintf(p, sizeof(p), "%s/t_%s.npy", workdir, names[i]);
		size_t n;
		uint8_t *b = fx_read_file(p, &n);
		assert_non_null(b);
		nbg_npy a;
		nbg_error e;
		assert_int_equal(nbg_npy_parse(b, n, &a, &e), NBG_OK);
		assert_int_equal(a.ndim, 3);
		assert_true(a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 4);
		assert_int_equal(a.count, 24);
		assert_false(a.fortran_order);
		assert_int_equal(a.big_endian, names[i][2] == 'b');
		/* every value is i % 7 (bool: i % 7 != 0), read into a record of the
		 * same type and dequantized (no quantization: the value itself) */
		static const uint32_t fmt_of[] = { 0, 1, 12, 2, 3, 4, 5, 9, 8, 11, 10, 16, 5, 0 };
		uint32_t dims[3] = { 4, 3, 2 };
		nbg_io io = rec(fmt_of[i], NBG_QUANT_NONE, 0, 0, 0, 3, dims);
		uint8_t *raw;
		size_t rs;
		float f[24];
		assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, b, n, &raw, &rs, &e), NBG_OK);
		assert_int_equal(nbg_tensor_dequantize(&io, raw, rs, f, 24, &e), NBG_OK);
		for (int k = 0; k < 24; k++) {
			float want = names[i][0] == 'b' ? (float)(k % 7 != 0) : (float)(k % 7);
			assert_true(f[k] == want);
		}
		free(raw);
		free(b);
	}
	/* Fortran order, shape (2,3,4): the record's layout is C order of (2,3,4) */
	char p[300];
	snprintf(p, sizeof(p), "%s/fortran.npy", workdir);
	size_t n;
	uint8_t *b = fx_read_file(p, &n);
	uint32_t dims[3] = { 4, 3, 2 };
	nbg_io io = rec(5, NBG_QUANT_NONE, 0, 0, 0, 3, dims);
	uint8_t *raw;
	size_t rs;
	nbg_error e;
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, b, n, &raw, &rs, &e), NBG_OK);
	expect_ascending_i16(raw, 24);
	free(raw);
	free(b);
	snprintf(p, sizeof(p), "%s/scalar.npy", workdir);
	b = fx_read_file(p, &n);
	nbg_npy a;
	assert_int_equal(nbg_npy_parse(b, n, &a, &e), NBG_OK);
	assert_int_equal(a.ndim, 0);
	assert_int_equal(a.count, 1);
	free(b);
	snprintf(p, sizeof(p), "%s/v2.npy", workdir);
	b = fx_read_file(p, &n);
	assert_int_equal(nbg_npy_parse(b, n, &a, &e), NBG_OK);
	assert_int_equal(a.major, 2);
	assert_int_equal(a.count, 6);
	free(b);
}

/* Shapes in either order; the transposition checked element by element. */
static void test_npy_shape_orders(void **state)
{
	(void)state;
	uint32_t dims[3] = { 4, 3, 2 }; /* record: outermost-first (2,3,4) */
	nbg_io io = rec(2, NBG_QUANT_NONE, 0, 0, 0, 3, dims);
	uint8_t data[24], *npy, *raw;
	size_t nsz, rs;
	nbg_error e;
	for (int i = 0; i < 24; i++)
		data[i] = (uint8_t)i;
	/* (2,3,4) C order: bytes as they are */
	uint64_t outer[3] = { 2, 3, 4 }, inner[3] = { 4, 3, 2 }, squeezed[4] = { 1, 2, 3, 4 };
	assert_int_equal(nbg_npy_encode("|u1", outer, 3, data, 24, &npy, &nsz, &e), NBG_OK);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &raw, &rs, &e), NBG_OK);
	assert_memory_equal(raw, data, 24);
	free(raw);
	free(npy);
	/* (1,2,3,4): a size-1 dimension more is the same shape */
	assert_int_equal(nbg_npy_encode("|u1", squeezed, 4, data, 24, &npy, &nsz, &e), NBG_OK);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &raw, &rs, &e), NBG_OK);
	assert_memory_equal(raw, data, 24);
	free(raw);
	free(npy);
	/* (4,3,2), the record's dimensions innermost first: another order,
	 * refused naming both shapes (not 4-D: no --layout converts it) */
	assert_int_equal(nbg_npy_encode("|u1", inner, 3, data, 24, &npy, &nsz, &e), NBG_OK);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &raw, &rs, &e),
			 NBG_E_TENSOR_SHAPE_MISMATCH);
	assert_non_null(strstr(e.message, "(4, 3, 2)"));
	assert_non_null(strstr(e.message, "(2, 3, 4)"));
	assert_non_null(strstr(e.message, "another order"));
	assert_non_null(strstr(e.message, "no --layout"));
	free(npy);
	/* another shape: refused, naming both */
	uint64_t wrong[2] = { 6, 4 };
	assert_int_equal(nbg_npy_encode("|u1", wrong, 2, data, 24, &npy, &nsz, &e), NBG_OK);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &raw, &rs, &e),
			 NBG_E_TENSOR_SHAPE_MISMATCH);
	assert_non_null(strstr(e.message, "(6, 4)"));
	assert_non_null(strstr(e.message, "(2, 3, 4)"));
	free(npy);
	/* another integer type: refused */
	assert_int_equal(nbg_npy_encode("|i1", outer, 3, data, 24, &npy, &nsz, &e), NBG_OK);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &raw, &rs, &e),
			 NBG_E_TENSOR_TYPE_MISMATCH);
	free(npy);
}

/* A Fortran-order array whose shape reads the same both ways once size-1
 * dimensions are dropped -- (1, 28, 28, 1), what np.asfortranarray(img)
 * saves -- is taken outermost first like any shape, so its storage order
 * is reversed: it was handed to the model transposed.  The file is written
 * here byte by byte (Fortran order: element (0, i, j, 0) at i + 28 j), and,
 * when NumPy is there, by NumPy itself. */
static void test_npy_fortran_palindrome(void **state)
{
	(void)state;
	uint32_t dims[4] = { 1, 28, 28, 1 };
	nbg_io io = rec(5, NBG_QUANT_NONE, 0, 0, 0, 4, dims);
	uint64_t shape[4] = { 1, 28, 28, 1 };
	int16_t f[784];
	for (int i = 0; i < 28; i++)
		for (int j = 0; j < 28; j++)
			f[i + 28 * j] = (int16_t)(i * 28 + j); /* the value is its C-order index */
	uint8_t *npy, *raw;
	size_t nsz, rs;
	nbg_error e;
	assert_int_equal(nbg_npy_encode("<i2", shape, 4, f, sizeof(f), &npy, &nsz, &e), NBG_OK);
	char *order = memmem(npy, nsz, "False", 5);
	assert_non_null(order);
	memcpy(order, "True ", 5);
	nbg_npy a;
	assert_int_equal(nbg_npy_parse(npy, nsz, &a, &e), NBG_OK);
	assert_true(a.fortran_order);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, npy, nsz, &raw, &rs, &e), NBG_OK);
	assert_int_equal(rs, sizeof(f));
	expect_ascending_i16(raw, 784);
	free(raw);
	free(npy);
	if (!have_numpy)
		return;
	char cmd[600], p[300];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && /usr/bin/python3 -c \"import numpy as np\n"
		 "img = np.arange(784, dtype='<i2').reshape(1, 28, 28, 1)\n"
		 "np.save('fpal.npy', np.asfortranarray(img))\"", workdir);
	assert_int_equal(run(cmd), 0);
	snprintf(p, sizeof(p), "%s/fpal.npy", workdir);
	size_t n;
	uint8_t *b = fx_read_file(p, &n);
	assert_non_null(b);
	assert_int_equal(nbg_npy_parse(b, n, &a, &e), NBG_OK);
	assert_true(a.fortran_order);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_NPY, b, n, &raw, &rs, &e), NBG_OK);
	expect_ascending_i16(raw, 784);
	free(raw);
	free(b);
}

static void test_npy_malformed(void **state)
{
	(void)state;
	uint64_t s = 2;
	float v[2] = { 1, 2 };
	uint8_t *npy;
	size_t n;
	nbg_npy a;
	nbg_error e;
	assert_int_equal(nbg_npy_encode("<f4", &s, 1, v, 8, &npy, &n, &e), NBG_OK);
	assert_int_equal(nbg_npy_parse(npy, n, &a, &e), NBG_OK);
	assert_int_equal(nbg_npy_parse(npy, n - 1, &a, &e), NBG_E_NPY_INVALID); /* data short */
	assert_int_equal(e.offset, 10 + (npy[8] | npy[9] << 8)); /* where the data starts */
	uint8_t *c = malloc(n);
	memcpy(c, npy, n);
	c[0] = 'x';
	assert_int_equal(nbg_npy_parse(c, n, &a, &e), NBG_E_NPY_INVALID);
	memcpy(c, npy, n);
	c[6] = 9; /* version */
	assert_int_equal(nbg_npy_parse(c, n, &a, &e), NBG_E_NPY_INVALID);
	memcpy(c, npy, n);
	c[8] = 0xff, c[9] = 0xff; /* header length past the end */
	assert_int_equal(nbg_npy_parse(c, n, &a, &e), NBG_E_NPY_INVALID);
	memcpy(c, npy, n);
	memcpy(c + 11, "desc", 4); /* 'descr' misspelled */
	assert_int_equal(nbg_npy_parse(c, n, &a, &e), NBG_E_NPY_INVALID);
	memcpy(c, npy, n);
	char *d = memmem(c, n, "<f4", 3);
	memcpy(d, "<c8", 3); /* complex: not a number type the NBG has */
	assert_int_equal(nbg_npy_parse(c, n, &a, &e), NBG_E_TENSOR_TYPE_MISMATCH);
	free(c);
	free(npy);
	assert_int_equal(nbg_npy_parse((const uint8_t *)"short", 5, &a, &e), NBG_E_NPY_INVALID);
}

/* ------------------------------------------------------------ text */

static void test_text(void **state)
{
	(void)state;
	uint32_t three = 3;
	nbg_io io = rec(3, NBG_QUANT_DFP, 1, 0, 0, 1, &three);
	const char t[] = "1.0\n-0.5\n  2.25 \n";
	uint8_t *raw;
	size_t rs;
	nbg_error e;
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_TEXT, (const uint8_t *)t, strlen(t), &raw, &rs, &e), NBG_OK);
	/* x 2, half to even: 2, -1, 4 (4.5 -> 4) */
	assert_int_equal((int8_t)raw[0], 2);
	assert_int_equal((int8_t)raw[1], -1);
	assert_int_equal((int8_t)raw[2], 4);
	uint8_t *txt;
	size_t ts;
	assert_int_equal(nbg_tensor_from_raw(&io, NBG_TENSOR_TEXT, 0, raw, rs, &txt, &ts, &e), NBG_OK);
	assert_int_equal(ts, strlen("1\n-0.5\n2\n"));
	assert_memory_equal(txt, "1\n-0.5\n2\n", ts);
	free(txt);
	free(raw);
	const char bad[] = "1\n2\nx3\n";
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_TEXT, (const uint8_t *)bad, strlen(bad), &raw, &rs, &e),
			 NBG_E_TENSOR_TEXT_INVALID);
	assert_non_null(strstr(e.message, "line 3"));
	const char few[] = "1\n2\n";
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_TEXT, (const uint8_t *)few, strlen(few), &raw, &rs, &e),
			 NBG_E_TENSOR_TEXT_INVALID);
	const char many[] = "1\n2\n3\n4\n";
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_TEXT, (const uint8_t *)many, strlen(many), &raw, &rs, &e),
			 NBG_E_TENSOR_TEXT_INVALID);
	assert_int_equal(nbg_tensor_to_raw(&io, NBG_TENSOR_RAW, (const uint8_t *)many, 2, &raw, &rs, &e),
			 NBG_E_INPUT_SIZE_MISMATCH);
	assert_int_equal(nbg_tensor_kind_of("a/b.NPY"), NBG_TENSOR_NPY);
	assert_int_equal(nbg_tensor_kind_of("x.tensor"), NBG_TENSOR_TEXT);
	assert_int_equal(nbg_tensor_kind_of("x.txt"), NBG_TENSOR_TEXT);
	assert_int_equal(nbg_tensor_kind_of("x.dat"), NBG_TENSOR_RAW);
	assert_int_equal(nbg_tensor_kind_of("dir.npy/x"), NBG_TENSOR_RAW);
}

/* Every corpus input and output record: raw -> npy float -> raw is the
 * identity for the record's quantization (dequantized values requantize to
 * themselves), and the .npy has the record's outermost-first shape. */
static void test_corpus_round_trip(void **state)
{
	(void)state;
	const char *files[] = { "v2/face_detector_nbg_int16.nb", "v2/face_detector_nbg_fp16.nb",
				"v2/face_blendshapes_nbg_int16.nb" };
	char p[512];
	snprintf(p, sizeof(p), "%s/v2", NBG_CORPUS_DIR);
	struct stat st;
	if (stat(p, &st) != 0)
		fail_msg("%s is missing: the corpus is incomplete", p);
	unsigned records = 0;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		snprintf(p, sizeof(p), "%s/%s", NBG_CORPUS_DIR, files[f]);
		size_t n;
		uint8_t *b = fx_read_file(p, &n);
		assert_non_null(b);
		nbg_model *m;
		nbg_error e;
		assert_int_equal(nbg_parse(b, n, NULL, &m, &e), NBG_OK);
		for (size_t k = 0; k < nbg_model_input_count(m) + nbg_model_output_count(m); k++) {
			const nbg_io *io = k < nbg_model_input_count(m) ? nbg_model_input_at(m, k)
							      : nbg_model_output_at(m, k - nbg_model_input_count(m));
			uint8_t *raw = malloc((size_t)io->byte_size), *npy, *back;
			size_t nsz, bsz;
			unsigned esz = nbg_tensor_element_size(io->data_format);
			for (size_t i = 0; i < io->byte_size; i++)
				raw[i] = (uint8_t)(i * 131 + 7);
			if (io->data_format == 1) /* keep FP16 finite: exponent below 31 */
				for (size_t i = 1; i < io->byte_size; i += 2)
					raw[i] &= 0x3b;
			assert_int_equal(nbg_tensor_from_raw(io, NBG_TENSOR_NPY, 0, raw, (size_t)io->byte_size, &npy, &nsz, &e), NBG_OK);
			nbg_npy a;
			assert_int_equal(nbg_npy_parse(npy, nsz, &a, &e), NBG_OK);
			assert_int_equal(a.ndim, io->dim_count);
			for (uint32_t d = 0; d < a.ndim; d++)
				assert_int_equal(a.shape[d], io->dims[io->dim_count - 1 - d]);
			assert_int_equal(nbg_tensor_to_raw(io, NBG_TENSOR_NPY, npy, nsz, &back, &bsz, &e), NBG_OK);
			assert_int_equal(bsz, io->byte_size);
			assert_memory_equal(back, raw, bsz);
			(void)esz;
			records++;
			free(raw);
			free(npy);
			free(back);
		}
		nbg_model_free(m);
		free(b);
	}
	assert_true(records >= 6);
}

static void test_top_and_compare(void **state)
{
	(void)state;
	const float v[] = { 0.5f, 3.0f, NAN, 3.0f, -1.0f, 7.0f };
	nbg_tensor_top_entry t[4];
	assert_int_equal(nbg_tensor_top(v, 6, 4, t), 4);
	assert_true(t[0].index == 5 && t[1].index == 1 && t[2].index == 3 && t[3].index == 0);
	nbg_tensor_top_entry all[8];
	assert_int_equal(nbg_tensor_top(v, 6, 8, all), 5); /* NaN never listed */
	const float w[] = { 0.5f, 3.25f, NAN, 3.0f, -1.0f, 6.0f };
	nbg_tensor_diff d;
	nbg_error e;
	assert_int_equal(nbg_tensor_compare(v, w, 6, 0.5, &d, &e), NBG_OK);
	assert_int_equal(d.mismatches, 1);
	assert_int_equal(d.first_mismatch, 5);
	assert_true(d.max_abs_diff == 1.0);
	assert_int_equal(nbg_tensor_compare(v, w, 6, -1, &d, &e), NBG_E_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ sample.txt */

static void test_sample(void **state)
{
	(void)state;
	const char text[] =
		"# vpm_run sample\n"
		"[network]\n"
		"  ./a.nb  \n"
		"[input]\n"
		"in0.dat\n"
		"# a comment between paths\n"
		"in1.tensor\n"
		"\n"
		"[golden]\n"
		"g0.dat\n"
		"[output]\n"
		"out0.dat\n"
		"[NETWORK]\n"
		"b.nb\n"
		"[input]\n"
		"x.npy\n";
	nbg_sample *s;
	nbg_error e;
	assert_int_equal(nbg_sample_parse(text, strlen(text), &s, &e), NBG_OK);
	assert_int_equal(s->network_count, 2);
	assert_string_equal(s->networks[0].model, "./a.nb");
	assert_int_equal(s->networks[0].input_count, 2);
	assert_string_equal(s->networks[0].inputs[1], "in1.tensor");
	assert_int_equal(s->networks[0].golden_count, 1);
	assert_string_equal(s->networks[0].outputs[0], "out0.dat");
	assert_int_equal(s->networks[0].line, 2);
	assert_string_equal(s->networks[1].model, "b.nb");
	assert_int_equal(s->networks[1].input_count, 1);
	assert_int_equal(s->networks[1].golden_count, 0);
	assert_int_equal(s->networks[1].line, 13);
	nbg_sample_free(s);

	static const struct { const char *t; const char *needle; } bad[] = {
		{ "[network]\na.nb\n[inputs]\nx\n", "line 3: unknown section" },
		{ "a.nb\n", "no [network]" }, /* a preamble, then nothing */
		{ "[input]\nx\n", "before the first [network]" },
		{ "[network]\na.nb\nb.nb\n", "line 3: a second path" },
		{ "[network]\na.nb\n", "no [input]" },
		{ "# only a comment\n", "no [network]" },
		{ "[network]\n[input]\nx\n", "names no NBG" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(nbg_sample_parse(bad[i].t, strlen(bad[i].t), &s, &e), NBG_E_SAMPLE_INVALID);
		if (!strstr(e.message, bad[i].needle))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].t, e.message, bad[i].needle);
		assert_null(s);
	}
	assert_int_equal(nbg_code_exit(NBG_E_SAMPLE_INVALID), NBG_EXIT_USAGE);
}

static int setup(void **state)
{
	(void)state;
	snprintf(workdir, sizeof(workdir), "/tmp/nbg-test-tensor.XXXXXX");
	assert_non_null(mkdtemp(workdir));
	have_numpy = run("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0;
	if (!have_numpy)
		fprintf(stderr, "python3-numpy absent: .npy files are checked with the parser in "
				"this test instead\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
	return run(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantize_by_hand),
		cmocka_unit_test(test_dequantize_by_hand),
		cmocka_unit_test(test_dfp_positions),
		cmocka_unit_test(test_quantize_vs_numpy),
		cmocka_unit_test(test_npy_written_loads),
		cmocka_unit_test(test_npy_numpy_files),
		cmocka_unit_test(test_npy_shape_orders),
		cmocka_unit_test(test_npy_fortran_palindrome),
		cmocka_unit_test(test_npy_malformed),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_top_and_compare),
		cmocka_unit_test(test_sample),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_round_trip),
	};
	return tc_main(argc, argv, "test_tensor", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), setup, teardown);
}

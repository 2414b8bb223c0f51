/*
 * test_tensor_cli.c - `nbg tensor` end to end: every tensor form (.npy as
 * float32, float64, big-endian float32, the record's own dtype and in the
 * NBG's dimension order; .tensor text; raw) and every quantization kind
 * (dynamic fixed point with positive and negative positions, affine on
 * signed and unsigned types, none on integers, FP32, FP16, BFP16), on a
 * synthesized model whose records are set here and on real corpus models
 * whose records are decoded here from their raw bytes (v2: the 112-byte
 * record; v1: the layout of doc/format-v1.md) and, for v2, checked against
 * the compiler's own .meta.json.
 *
 * Expected bytes are computed in this file from the formulas (round half to
 * even written out here, clamping to the element type; FP16 and BFP16 from
 * values they hold exactly plus hand-worked rounding cases), never from the
 * library.  The .npy files nbg writes are read back with the system's NumPy
 * (python3-numpy) when it is installed, and always with the small parser in
 * this file.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/nbg.h"

static char work[256];
static char model[300]; /* the synthesized model */
static int have_numpy;

enum { Q_NONE = 0, Q_DFP = 1, Q_AFFINE = 2 };

/* One record as this test knows it: dims innermost first (the NBG order). */
typedef struct rspec {
	uint32_t fmt, quant;
	int32_t fl;
	float scale;
	int32_t zp;
	uint32_t ndim;
	uint32_t dims[6];
	const char *descr; /* its NumPy dtype, NULL for BFP16 */
} rspec;

/* The synthesized model's inputs. */
static const rspec synth[] = {
	{ 2, Q_AFFINE, 0, 0.5f, 10, 2, { 3, 4 }, "|u1" },          /* UINT8 affine */
	{ 2, Q_AFFINE, 0, 0.0078125f, 128, 3, { 1, 8, 4 }, "|u1" }, /* the common image input */
	{ 3, Q_DFP, 4, 0, 0, 2, { 5, 3 }, "|i1" },                 /* INT8 dfp */
	{ 3, Q_AFFINE, 0, 0.25f, -3, 1, { 21 }, "|i1" },           /* INT8 affine */
	{ 5, Q_DFP, -2, 0, 0, 2, { 7, 2 }, "<i2" },                /* INT16 dfp, negative position */
	{ 5, Q_DFP, 15, 0, 0, 4, { 3, 2, 2, 1 }, "<i2" },          /* INT16 dfp 15 */
	{ 5, Q_NONE, 0, 0, 0, 1, { 14 }, "<i2" },                  /* INT16, no quantization */
	{ 4, Q_AFFINE, 0, 0.125f, 1000, 2, { 2, 7 }, "<u2" },      /* UINT16 affine */
	{ 8, Q_DFP, 20, 0, 0, 1, { 14 }, "<i4" },                  /* INT32 dfp */
	{ 0, Q_NONE, 0, 0, 0, 2, { 4, 5 }, "<f4" },                /* FP32 */
	{ 1, Q_NONE, 0, 0, 0, 2, { 4, 6 }, "<f2" },                /* FP16 */
	{ 7, Q_NONE, 0, 0, 0, 1, { 16 }, NULL },                   /* BFP16 */
};
#define NSYNTH (sizeof(synth) / sizeof(synth[0]))

/* ------------------------------------------------------------ formulas */

static uint64_t elements(const rspec *r)
{
	uint64_t n = 1;
	for (uint32_t i = 0; i < r->ndim; i++)
		n *= r->dims[i];
	return n;
}

static unsigned esize(uint32_t fmt)
{
	switch (fmt) {
	case 0: case 8: case 9: return 4;
	case 1: case 4: case 5: case 7: return 2;
	default: return 1;
	}
}

/* Round half to even, written out. */
static double round_even(double x)
{
	double r = floor(x), d = x - r;
	if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0))
		r += 1;
	return r;
}

static void type_range(uint32_t fmt, double *lo, double *hi)
{
	switch (fmt) {
	case 2: *lo = 0; *hi = 255; break;
	case 3: *lo = -128; *hi = 127; break;
	case 4: *lo = 0; *hi = 65535; break;
	case 5: *lo = -32768; *hi = 32767; break;
	default: *lo = -2147483648.0; *hi = 2147483647.0; break; /* INT32 */
	}
}

/* IEEE half of a value it holds exactly (normal or zero). */
static uint16_t half_exact(double x)
{
	if (x == 0)
		return signbit(x) ? 0x8000 : 0;
	int e;
	double m = frexp(fabs(x), &e);
	double f = (m * 2 - 1) * 1024;
	assert_true(e - 1 + 15 >= 1 && e - 1 + 15 <= 30 && f == floor(f));
	return (uint16_t)((x < 0 ? 0x8000 : 0) | (e - 1 + 15) << 10 | (unsigned)f);
}

static double half_value(uint16_t h)
{
	int e = (h >> 10) & 31, f = h & 1023;
	double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(1024 + f, e - 25);
	return h & 0x8000 ? -v : v;
}

/* Half and bfloat16 cases worked by hand: value -> bits. */
static const struct { float f; uint16_t half; } half_cases[] = {
	{ 1.0009765625f, 0x3c01 },  /* 1 + 2^-10, exact */
	{ 1.00048828125f, 0x3c00 }, /* 1 + 2^-11: a tie, to the even 1.0 */
	{ 1.00146484375f, 0x3c02 }, /* 1 + 3*2^-11: a tie, to the even 0x3c02 */
	{ 65520.0f, 0x7c00 },       /* rounds past 65504: infinity */
	{ 5.9604645e-08f, 0x0001 }, /* 2^-24, the smallest subnormal */
	{ -2.0f, 0xc000 },
};
static const struct { float f; uint16_t bf; } bf16_cases[] = {
	{ 1.00390625f, 0x3f80 }, /* 1 + 2^-8: a tie, to the even 1.0 */
	{ 1.01171875f, 0x3f82 }, /* 1 + 3*2^-8: a tie, up to the even */
	{ -3.5f, 0xc060 },
};

/* The i-th test value for a record: ties, saturation at both ends, NaN,
 * zero and ordinary values, in units of the record's step. */
static float value_for(const rspec *r, uint64_t i)
{
	if (r->fmt == 1) {
		if (i < sizeof(half_cases) / sizeof(half_cases[0]))
			return half_cases[i].f;
		return (float)(((int)(i * 5 % 64) - 32) / 16.0);
	}
	if (r->fmt == 7) {
		if (i < sizeof(bf16_cases) / sizeof(bf16_cases[0]))
			return bf16_cases[i].f;
		return (float)(((int)(i * 3 % 32) - 16) / 8.0);
	}
	if (r->fmt == 0)
		return (float)((double)i * 0.1 - 1.3);
	double step = r->quant == Q_DFP ? ldexp(1.0, -r->fl) : r->quant == Q_AFFINE ? r->scale : 1.0;
	switch (i % 7) {
	case 0: return (float)(((double)(i / 7) - 2 + 0.5) * step); /* a tie */
	case 1: return (float)(-(double)i * 0.37 * step);
	case 2: return (float)(1e12 * step);  /* beyond the type: clamped high */
	case 3: return (float)(-1e12 * step); /* clamped low */
	case 4: return NAN;
	case 5: return (float)((double)i * 1.25 * step);
	default: return 0.0f;
	}
}

/* The element bytes value f quantizes to under record r (little-endian). */
static void quantize_expected(const rspec *r, float f, uint64_t i, uint8_t *out)
{
	unsigned n = esize(r->fmt);
	uint64_t bits;
	if (r->fmt == 0) {
		uint32_t u;
		memcpy(&u, &f, 4);
		bits = u;
	} else if (r->fmt == 1) {
		bits = i < sizeof(half_cases) / sizeof(half_cases[0]) ? half_cases[i].half
								       : half_exact(f);
	} else if (r->fmt == 7) {
		uint32_t u;
		memcpy(&u, &f, 4);
		bits = i < sizeof(bf16_cases) / sizeof(bf16_cases[0]) ? bf16_cases[i].bf : u >> 16;
	} else {
		double q, lo, hi;
		if (isnan(f))
			q = r->quant == Q_AFFINE ? r->zp : 0;
		else if (r->quant == Q_DFP)
			q = round_even((double)f * ldexp(1.0, r->fl));
		else if (r->quant == Q_AFFINE)
			q = round_even((double)f / (double)r->scale) + r->zp;
		else
			q = round_even(f);
		type_range(r->fmt, &lo, &hi);
		q = q < lo ? lo : q > hi ? hi : q;
		bits = (uint64_t)(int64_t)q;
	}
	for (unsigned b = 0; b < n; b++)
		out[b] = (uint8_t)(bits >> (8 * b));
}

/* The float an element's bytes stand for under record r. */
static float dequantize_expected(const rspec *r, const uint8_t *p)
{
	unsigned n = esize(r->fmt);
	uint64_t bits = 0;
	for (unsigned b = 0; b < n; b++)
		bits |= (uint64_t)p[b] << (8 * b);
	if (r->fmt == 0) {
		uint32_t u = (uint32_t)bits;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	if (r->fmt == 1)
		return (float)half_value((uint16_t)bits);
	if (r->fmt == 7) {
		uint32_t u = (uint32_t)bits << 16;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	double q = (r->fmt == 3) ? (double)(int8_t)bits
		   : (r->fmt == 5) ? (double)(int16_t)bits
		   : (r->fmt == 8) ? (double)(int32_t)bits
				   : (double)bits;
	if (r->quant == Q_DFP)
		return (float)(q * ldexp(1.0, -r->fl));
	if (r->quant == Q_AFFINE)
		return (float)((q - r->zp) * (double)r->scale);
	return (float)q;
}

/* ------------------------------------------------------------ .npy by hand */

static void write_file(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* A version 1.0 .npy: the dictionary as NumPy writes it, padded to 64. */
static void write_npy(const char *path, const char *descr, int fortran, const uint64_t *shape,
		      uint32_t ndim, const void *data, size_t size)
{
	char dict[512];
	size_t n = (size_t)snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': %s, 'shape': (",
				    descr, fortran ? "True" : "False");
	for (uint32_t i = 0; i < ndim; i++)
		n += (size_t)snprintf(dict + n, sizeof(dict) - n, "%llu%s", (unsigned long long)shape[i],
				      ndim == 1 || i + 1 < ndim ? ", " : "");
	n += (size_t)snprintf(dict + n, sizeof(dict) - n, "), }");
	size_t total = (10 + n + 1 + 63) / 64 * 64, hl = total - 10;
	uint8_t *b = calloc(1, total + size);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = (uint8_t)hl;
	b[9] = (uint8_t)(hl >> 8);
	memcpy(b + 10, dict, n);
	memset(b + 10 + n, ' ', hl - n - 1);
	b[total - 1] = '\n';
	memcpy(b + total, data, size);
	write_file(path, b, total + size);
	free(b);
}

/* The parts of a .npy nbg wrote that this test checks. */
typedef struct npy_read {
	char descr[16];
	int fortran;
	uint32_t ndim;
	uint64_t shape[8];
	uint8_t *data; /* owned */
	size_t size;
} npy_read;

static void read_npy(const char *path, npy_read *o)
{
	size_t n;
	uint8_t *b = fx_read_file(path, &n);
	if (!b)
		fail_msg("%s was not written", path);
	assert_true(n >= 10 && !memcmp(b, "\x93NUMPY", 6) && b[6] == 1);
	size_t hl = (size_t)b[8] | (size_t)b[9] << 8, start = 10 + hl;
	assert_true(start <= n && start % 64 == 0 && b[start - 1] == '\n');
	char *h = calloc(1, hl + 1);
	memcpy(h, b + 10, hl);
	const char *d = strstr(h, "'descr': '"), *s = strstr(h, "'shape': (");
	assert_non_null(d);
	assert_non_null(s);
	memset(o, 0, sizeof(*o));
	sscanf(d + 10, "%15[^']", o->descr);
	o->fortran = strstr(h, "'fortran_order': True") != NULL;
	for (s += 10; *s && *s != ')';) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s)
			break;
		o->shape[o->ndim++] = v;
		s = end + strspn(end, ", ");
	}
	free(h);
	o->size = n - start;
	o->data = malloc(o->size + 1);
	memcpy(o->data, b + start, o->size);
	free(b);
}

/* ------------------------------------------------------------ the model */

static void build_model(void)
{
	fx_spec *s = fx_default();
	uint8_t rec[112 * NSYNTH];
	for (size_t i = 0; i < NSYNTH; i++) {
		const rspec *r = &synth[i];
		uint32_t q0 = 0, q1 = 0;
		if (r->quant == Q_DFP)
			q0 = (uint32_t)r->fl;
		if (r->quant == Q_AFFINE) {
			memcpy(&q0, &r->scale, 4);
			q1 = (uint32_t)r->zp;
		}
		char name[16];
		snprintf(name, sizeof(name), "in%zu", i);
		fx_io_record(rec + 112 * i, r->ndim, r->dims, r->fmt, r->quant, q0, q1, name);
	}
	/* the same records as inputs and as outputs */
	fx_set(s, 1, rec, sizeof(rec), 0, 112);        /* INPUT */
	fx_set(s, 2, rec, sizeof(rec), 0, 112);        /* OUTPUT */
	fx_put32(fx_find(s, 35)->data + 0x40, NSYNTH); /* NETWORK_INFO's input count */
	fx_put32(fx_find(s, 35)->data + 0x44, NSYNTH); /* and output count */
	size_t n;
	uint8_t *b = fx_build(s, &n);
	fx_free(s);
	snprintf(model, sizeof(model), "%s/synth.nb", work);
	write_file(model, b, n);
	free(b);
}

static void path_in(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", work, name);
}

static fx_run_result tensor(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static fx_run_result tensor(const char *fmt, ...)
{
	char args[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	return fx_run_nbg(NULL, "tensor %s", args);
}

static void expect_exit(fx_run_result *r, int status, const char *what)
{
	if (r->status != status)
		fail_msg("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r->status, status, r->out,
			 r->err);
	fx_run_free(r);
}

static void expect_file(const char *path, const uint8_t *want, size_t n, const char *what)
{
	size_t have_n;
	uint8_t *have = fx_read_file(path, &have_n);
	if (!have)
		fail_msg("%s: %s was not written", what, path);
	if (have_n != n)
		fail_msg("%s: %s has %zu bytes, want %zu", what, path, have_n, n);
	for (size_t i = 0; i < n; i++)
		if (have[i] != want[i])
			fail_msg("%s: %s byte %zu is 0x%02x, want 0x%02x", what, path, i, have[i], want[i]);
	free(have);
}

static int same_float(float a, float b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* A float32 .npy nbg wrote for record r from raw bytes `raw`: shape
 * outermost first, C order, each value the dequantized element. */
static void expect_float_npy(const char *path, const rspec *r, const uint8_t *raw,
			     const char *what)
{
	npy_read a;
	read_npy(path, &a);
	uint64_t n = elements(r);
	assert_string_equal(a.descr, "<f4");
	assert_false(a.fortran);
	assert_int_equal(a.ndim, r->ndim);
	for (uint32_t d = 0; d < r->ndim; d++)
		assert_int_equal(a.shape[d], r->dims[r->ndim - 1 - d]);
	assert_int_equal(a.size, n * 4);
	for (uint64_t i = 0; i < n; i++) {
		float have, want = dequantize_expected(r, raw + i * esize(r->fmt));
		memcpy(&have, a.data + i * 4, 4);
		if (!same_float(have, want))
			fail_msg("%s: %s element %llu is %.9g, want %.9g", what, path,
				 (unsigned long long)i, (double)have, (double)want);
	}
	free(a.data);
}

/* NumPy itself loads the file: dtype float32, the shape, the values. */
static void numpy_check(const char *npy, const rspec *r, const uint8_t *raw)
{
	if (!have_numpy)
		return;
	uint64_t n = elements(r);
	float *v = malloc(n * sizeof(float));
	assert_non_null(v);
	for (uint64_t i = 0; i < n; i++)
		v[i] = dequantize_expected(r, raw + i * esize(r->fmt));
	char want[300], shape[128] = "", cmd[1024];
	path_in(want, sizeof(want), "want.f32");
	write_file(want, v, n * sizeof(float));
	free(v);
	for (uint32_t d = 0; d < r->ndim; d++)
		snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%u,",
			 r->dims[r->ndim - 1 - d]);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c \"import numpy as np, sys; a=np.load('%s'); "
		 "w=np.fromfile('%s', dtype='<f4').reshape((%s)); "
		 "sys.exit(0 if a.dtype == np.float32 and a.shape == w.shape and "
		 "np.array_equal(a, w, equal_nan=True) else 1)\"",
		 npy, want, shape);
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("NumPy does not read %s as the expected float32 array", npy);
}

/* ------------------------------------------------------------ conversions */

static void outer_shape(const rspec *r, uint64_t *shape)
{
	for (uint32_t d = 0; d < r->ndim; d++)
		shape[d] = r->dims[r->ndim - 1 - d];
}

/* Text as vpm_run writes it: one value per line. */
static void write_text(const char *path, const float *v, uint64_t n)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (uint64_t i = 0; i < n; i++)
		fprintf(f, "%.9g\n", (double)v[i]);
	assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const rspec *r, const uint8_t *raw, const char *what)
{
	size_t n;
	char *t = (char *)fx_read_file(path, &n);
	if (!t)
		fail_msg("%s: %s was not written", what, path);
	char *p = t;
	for (uint64_t i = 0; i < elements(r); i++) {
		char *end;
		float have = strtof(p, &end), want = dequantize_expected(r, raw + i * esize(r->fmt));
		if (end == p || *end != '\n' || !same_float(have, want))
			fail_msg("%s: %s line %llu is not %.9g", what, path, (unsigned long long)i + 1,
				 (double)want);
		p = end + 1;
	}
	assert_int_equal((size_t)(p - t), n);
	free(t);
}

/* Record r quantized from values v through .npy (f4, f8, >f4, the NBG's
 * dimension order, the record's own dtype) and text: always the bytes E. */
static void check_inputs(const char *m, const char *side, size_t idx, const rspec *r,
			 const float *v, const uint8_t *E)
{
	uint64_t n = elements(r), shape[6];
	unsigned es = esize(r->fmt);
	outer_shape(r, shape);
	char x[300], bin[300], what[96];
	path_in(bin, sizeof(bin), "x.bin");
	double *d = malloc(n * sizeof(double));
	uint8_t *be = malloc(n * 4), *f_nbg = malloc(n * 4);
	assert_true(d && be && f_nbg);
	for (uint64_t i = 0; i < n; i++) {
		d[i] = v[i];
		uint32_t u;
		memcpy(&u, &v[i], 4);
		for (int b = 0; b < 4; b++)
			be[i * 4 + (unsigned)b] = (uint8_t)(u >> (24 - 8 * b));
		/* raw index i = i0 + d0*(i1 + d1*(i2 ...)); its C index in the
		 * array of shape dims[0], dims[1], ... */
		uint64_t rest = i, c = 0;
		uint32_t ix[6];
		for (uint32_t k = 0; k < r->ndim; k++) {
			ix[k] = (uint32_t)(rest % r->dims[k]);
			rest /= r->dims[k];
		}
		for (uint32_t k = 0; k < r->ndim; k++)
			c = c * r->dims[k] + ix[k];
		memcpy(f_nbg + c * 4, &v[i], 4);
	}
	/* An array in the NBG's order (innermost first) has the record's
	 * dimensions in another order: refused (tensor-shape-mismatch, exit
	 * 1), never read transposed -- where it differs from NumPy's order
	 * once size-1 dimensions are dropped ((1,64,64,1) reads the same both
	 * ways and is taken outermost first). */
	uint64_t nbg_order[6], sq_in[6], sq_out[6];
	uint32_t n_in = 0, n_out = 0;
	for (uint32_t k = 0; k < r->ndim; k++) {
		nbg_order[k] = r->dims[k];
		if (r->dims[k] != 1)
			sq_in[n_in++] = r->dims[k];
		if (shape[k] != 1)
			sq_out[n_out++] = shape[k];
	}
	int distinct = n_in != n_out || memcmp(sq_in, sq_out, n_in * sizeof(*sq_in)) != 0;
	static const char *const kinds[] = { "f4", "f8", "be", "nbg-order", "own", "text" };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		snprintf(what, sizeof(what), "%s %zu (format %u) from %s", side, idx, r->fmt, kinds[k]);
		path_in(x, sizeof(x), k == 5 ? "x.tensor" : "x.npy");
		if (k == 0)
			write_npy(x, "<f4", 0, shape, r->ndim, v, n * 4);
		else if (k == 1)
			write_npy(x, "<f8", 0, shape, r->ndim, d, n * 8);
		else if (k == 2)
			write_npy(x, ">f4", 0, shape, r->ndim, be, n * 4);
		else if (k == 3 && distinct)
			write_npy(x, "<f4", 0, nbg_order, r->ndim, f_nbg, n * 4);
		else if (k == 4 && r->descr)
			write_npy(x, r->descr, 0, shape, r->ndim, E, n * es);
		else if (k == 5)
			write_text(x, v, n);
		else
			continue;
		unlink(bin);
		fx_run_result res = tensor("--model '%s' --%s %zu '%s' -o '%s'", m, side, idx, x, bin);
		if (k == 3) {
			if (!strstr(res.err, "tensor-shape-mismatch") || !strstr(res.err, "another order"))
				fail_msg("%s: not refused as another order:\n%s", what, res.err);
			expect_exit(&res, 1, what);
			continue;
		}
		if (res.status == 0 && !strstr(res.out, k == 5 ? "(text) -> " : "(npy) -> "))
			fail_msg("%s: the report does not name the kind read:\n%s", what, res.out);
		expect_exit(&res, 0, what);
		expect_file(bin, E, n * es, what);
	}
	free(d);
	free(be);
	free(f_nbg);
}

/* Raw bytes E of record r -> float32 .npy, text, the record's dtype, raw. */
static void check_outputs(const char *m, const char *side, size_t idx, const rspec *r,
			  const uint8_t *E)
{
	uint64_t n = elements(r);
	unsigned es = esize(r->fmt);
	char bin[300], y[300], what[96];
	path_in(bin, sizeof(bin), "y.bin");
	write_file(bin, E, n * es);
	snprintf(what, sizeof(what), "%s %zu (format %u) to .npy", side, idx, r->fmt);
	path_in(y, sizeof(y), "y.npy");
	fx_run_result res = tensor("--model '%s' --%s %zu '%s' -o '%s'", m, side, idx, bin, y);
	expect_exit(&res, 0, what);
	expect_float_npy(y, r, E, what);
	numpy_check(y, r, E);
	snprintf(what, sizeof(what), "%s %zu (format %u) to text", side, idx, r->fmt);
	path_in(y, sizeof(y), "y.tensor");
	res = tensor("--model '%s' --%s %zu '%s' -o '%s'", m, side, idx, bin, y);
	expect_exit(&res, 0, what);
	expect_text(y, r, E, what);
	snprintf(what, sizeof(what), "%s %zu (format %u) to its own dtype", side, idx, r->fmt);
	path_in(y, sizeof(y), "own.npy");
	unlink(y);
	res = tensor("--model '%s' --%s %zu '%s' -o '%s' --keep-dtype", m, side, idx, bin, y);
	if (!r->descr) { /* BFP16: NumPy has no such dtype */
		assert_non_null(strstr(res.err, "tensor-format-unsupported"));
		expect_exit(&res, 1, what);
		assert_int_equal(access(y, F_OK), -1);
	} else {
		expect_exit(&res, 0, what);
		npy_read a;
		read_npy(y, &a);
		assert_string_equal(a.descr, r->descr);
		assert_int_equal(a.size, n * es);
		assert_memory_equal(a.data, E, n * es);
		free(a.data);
	}
	snprintf(what, sizeof(what), "%s %zu (format %u) raw to raw", side, idx, r->fmt);
	path_in(y, sizeof(y), "copy.bin");
	res = tensor("--model '%s' --%s %zu '%s' -o '%s'", m, side, idx, bin, y);
	expect_exit(&res, 0, what);
	expect_file(y, E, n * es, what);
}

static void test_synthesized_records(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSYNTH; i++) {
		const rspec *r = &synth[i];
		uint64_t n = elements(r);
		unsigned es = esize(r->fmt);
		float *v = malloc(n * sizeof(float));
		uint8_t *E = malloc(n * es);
		assert_true(v && E);
		for (uint64_t k = 0; k < n; k++) {
			v[k] = value_for(r, k);
			quantize_expected(r, v[k], k, E + k * es);
		}
		check_inputs(model, "input", i, r, v, E);
		check_outputs(model, "output", i, r, E);
		free(v);
		free(E);
	}
}

/* ------------------------------------------------------------ corpus records */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decodes the record at file offset `off` from its raw bytes: v2's 112-byte
 * record, or v1's 108/116-byte one (doc/format-v1.md, "I/O records"). */
static void decode_record(const uint8_t *file, uint64_t off, int v1, uint32_t stride, rspec *r)
{
	const uint8_t *p = file + off;
	unsigned maxd = v1 && stride != 116 ? 4 : 6, base = 4 + 4 * maxd;
	memset(r, 0, sizeof(*r));
	r->ndim = rd32(p);
	assert_true(r->ndim >= 1 && r->ndim <= maxd);
	for (uint32_t i = 0; i < r->ndim; i++)
		r->dims[i] = rd32(p + 4 + 4 * i);
	r->fmt = rd32(p + base);
	r->quant = rd32(p + base + 8);
	uint32_t w0 = rd32(p + base + 12), w1 = rd32(p + base + 16), w2 = v1 ? rd32(p + base + 20) : 0;
	if (v1) { /* three words: fixed point, scale, zero point */
		r->fl = (int32_t)w0;
		memcpy(&r->scale, &w1, 4);
		r->zp = (int32_t)w2;
	} else if (r->quant == Q_DFP) { /* an 8-byte union */
		r->fl = (int32_t)w0;
	} else if (r->quant == Q_AFFINE) {
		memcpy(&r->scale, &w0, 4);
		r->zp = (int32_t)w1;
	}
	static const char *const descr[] = { "<f4", "<f2", "|u1", "|i1", "<u2", "<i2" };
	r->descr = r->fmt < 6 ? descr[r->fmt] : r->fmt == 8 ? "<i4" : NULL;
}

/* The dynamic fixed point positions the compiler recorded in .meta.json. */
static void check_meta_fl(const char *meta, const char *side, size_t i, const rspec *r)
{
	json_error_t je;
	json_t *m = json_load_file(meta, 0, &je);
	if (!m)
		return; /* no metadata beside this file */
	json_t *group = json_object_get(m, !strcmp(side, "input") ? "Inputs" : "Outputs");
	const char *key;
	json_t *v;
	size_t k = 0;
	json_object_foreach(group, key, v)
	{
		json_t *fl = json_object_get(json_object_get(v, "quantize"), "fl");
		if (k++ == i && json_is_integer(fl) && r->quant == Q_DFP)
			assert_int_equal(json_integer_value(fl), r->fl);
	}
	json_decref(m);
}

static void test_corpus_records(void **state)
{
	(void)state;
	static const char *const files[] = {
		"v2/face_detector_nbg_int16.nb",          /* INT16 dfp 15, 7, 8 */
		"v2/face_blendshapes_nbg_int16.nb",       /* FP16 in, INT16 dfp out */
		"v2/face_detector_nbg_fp16.nb",           /* FP16 */
		"v1/10009_88_emotion_88.nb",              /* UINT8 affine in, FP16 out */
		"v1/10003_88_face_age_88.nb",             /* UINT8 affine outputs */
		"v1/1001e_ba_conv2d_relu_maxpool2d_fp32.nb", /* FP32 */
	};
	char p[512];
	snprintf(p, sizeof(p), "%s/v2", NBG_CORPUS_DIR);
	struct stat st;
	if (stat(p, &st) != 0)
		fail_msg("%s is missing: the corpus is incomplete", p);
	unsigned kinds[3] = { 0, 0, 0 }, records = 0;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		snprintf(p, sizeof(p), "%s/%s", NBG_CORPUS_DIR, files[f]);
		size_t size;
		uint8_t *b = fx_read_file(p, &size);
		if (!b)
			fail_msg("%s is missing: the corpus is incomplete", p);
		nbg_model *m;
		nbg_error e;
		assert_int_equal(nbg_parse(b, size, NULL, &m, &e), NBG_OK);
		for (size_t k = 0; k < nbg_model_input_count(m) + nbg_model_output_count(m); k++) {
			int out = k >= nbg_model_input_count(m);
			size_t i = out ? k - nbg_model_input_count(m) : k;
			const nbg_io *io = out ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
			rspec r;
			decode_record(b, io->offset, files[f][1] == '1', io->record_size, &r);
			char meta[600];
			snprintf(meta, sizeof(meta), "%.*s.meta.json", (int)(strlen(p) - 3), p);
			check_meta_fl(meta, out ? "output" : "input", i, &r);
			uint64_t n = elements(&r);
			unsigned es = esize(r.fmt);
			float *v = malloc(n * sizeof(float));
			uint8_t *E = malloc(n * es);
			assert_true(v && E);
			for (uint64_t j = 0; j < n; j++) {
				v[j] = value_for(&r, j);
				quantize_expected(&r, v[j], j, E + j * es);
			}
			check_inputs(p, out ? "output" : "input", i, &r, v, E);
			check_outputs(p, out ? "output" : "input", i, &r, E);
			kinds[r.quant < 3 ? r.quant : 0]++;
			records++;
			free(v);
			free(E);
		}
		nbg_model_free(m);
		free(b);
	}
	print_message("%u corpus records: %u unquantized, %u dynamic fixed point, %u affine\n",
		      records, kinds[0], kinds[1], kinds[2]);
	assert_true(kinds[0] && kinds[1] && kinds[2]);
}

/* ------------------------------------------------------------ failures */

static void test_failures(void **state)
{
	(void)state;
	char x[300], out[300], keep[300];
	path_in(x, sizeof(x), "bad.npy");
	path_in(out, sizeof(out), "never.bin");
	path_in(keep, sizeof(keep), "kept.bin");
	uint64_t wrong[2] = { 5, 5 };
	float z[25] = { 0 };
	/* shape in neither order: refused, nothing written */
	write_npy(x, "<f4", 0, wrong, 2, z, sizeof(z));
	unlink(out);
	fx_run_result r = tensor("--model '%s' --input 0 '%s' -o '%s'", model, x, out);
	assert_non_null(strstr(r.err, "tensor-shape-mismatch"));
	expect_exit(&r, 1, "shape");
	assert_int_equal(access(out, F_OK), -1);
	/* an existing output is left as it was when the conversion fails */
	write_file(keep, "mine", 4);
	r = tensor("--model '%s' --input 0 '%s' -o '%s'", model, x, keep);
	expect_exit(&r, 1, "shape onto an existing file");
	expect_file(keep, (const uint8_t *)"mine", 4, "kept");
	/* a truncated .npy: npy-invalid */
	write_file(x, "\x93NUMPY\x01\x00\x76\x00{'descr'", 18);
	r = tensor("--model '%s' --input 0 '%s' -o '%s'", model, x, out);
	assert_non_null(strstr(r.err, "npy-invalid"));
	expect_exit(&r, 1, "truncated npy");
	/* text: the bad line is named */
	path_in(x, sizeof(x), "bad.tensor");
	write_file(x, "1\n2\nthree\n", 10);
	r = tensor("--model '%s' --input 0 '%s' -o '%s'", model, x, out);
	assert_non_null(strstr(r.err, "tensor-text-invalid"));
	assert_non_null(strstr(r.err, "line 3"));
	expect_exit(&r, 1, "text");
	/* raw of the wrong size */
	path_in(x, sizeof(x), "short.bin");
	write_file(x, "abc", 3);
	r = tensor("--model '%s' --input 0 '%s' -o '%s'", model, x, out);
	assert_non_null(strstr(r.err, "input-size-mismatch"));
	expect_exit(&r, 1, "raw size");
	assert_int_equal(access(out, F_OK), -1);
	/* files that cannot be read or written */
	r = tensor("--model '%s' --input 0 '%s/absent.npy' -o '%s'", model, work, out);
	expect_exit(&r, 3, "absent input");
	path_in(x, sizeof(x), "twelve.bin");
	write_file(x, "abcdefghijkl", 12);
	r = tensor("--model '%s' --input 0 '%s' -o '%s/no/such/dir/y.npy'", model, x, work);
	expect_exit(&r, 3, "unwritable output");
	r = tensor("--model '%s/absent.nb' --input 0 '%s' -o '%s'", work, x, out);
	expect_exit(&r, 3, "absent model");
	/* usage */
	r = tensor("--model '%s' --input 99 '%s' -o '%s'", model, x, out);
	assert_non_null(strstr(r.err, "the model has 12 inputs"));
	expect_exit(&r, 2, "record index");
	r = tensor("--model '%s' --input 0 '%s'", model, x);
	expect_exit(&r, 2, "no --out");
	r = tensor("--model '%s' --input 0 --output 0 '%s' -o '%s'", model, x, out);
	expect_exit(&r, 2, "two records");
	r = tensor("--model '%s' --input 0 '%s' -o '%s' --from json", model, x, out);
	expect_exit(&r, 2, "--from json");
	r = tensor("--model '%s' --input 0 '%s' -o '%s' --keep-dtype", model, x, out);
	expect_exit(&r, 2, "--keep-dtype to raw");
	r = tensor("--input 0 '%s' -o '%s'", x, out);
	expect_exit(&r, 2, "no --model");
	assert_int_equal(access(out, F_OK), -1);
}

/* --from / --to instead of the extensions; the record listing. */
static void test_kinds_and_listing(void **state)
{
	(void)state;
	const rspec *r = &synth[0];
	uint64_t n = elements(r), shape[6];
	outer_shape(r, shape);
	float v[12];
	uint8_t E[12];
	for (uint64_t k = 0; k < n; k++) {
		v[k] = value_for(r, k);
		quantize_expected(r, v[k], k, E + k);
	}
	char x[300], y[300];
	path_in(x, sizeof(x), "npy_named.dat");
	path_in(y, sizeof(y), "text_named.out");
	write_npy(x, "<f4", 0, shape, r->ndim, v, sizeof(v));
	fx_run_result res = tensor("--model '%s' --input 0 --from npy '%s' --out '%s' --to text",
				   model, x, y);
	expect_exit(&res, 0, "--from npy --to text");
	expect_text(y, r, E, "--to text");
	res = tensor("--model '%s' --input 0 --from text '%s' -o '%s' --to raw", model, y, x);
	expect_exit(&res, 0, "--from text --to raw");
	expect_file(x, E, n, "--to raw");
	res = tensor("--model '%s'", model);
	assert_non_null(strstr(res.out, "input 0 \"in0\": UINT8, affine scale 0.5 zero point 10, "
					"shape [4,3], 12 elements, 12 bytes, npy dtype |u1"));
	assert_non_null(strstr(res.out, "output 11 \"in11\": BFP16"));
	expect_exit(&res, 0, "listing");
}

/* `-o -` (and /dev/stdout) put the tensor on standard output: then only the
 * tensor goes there, and the line that says what was done goes to standard
 * error (it used to follow the data on stdout, corrupting a pipe). */
static void test_out_stdout(void **state)
{
	(void)state;
	char x[300], y[300], e[300];
	path_in(x, sizeof(x), "twelve.dat");
	path_in(y, sizeof(y), "piped.bin");
	path_in(e, sizeof(e), "piped.err");
	write_file(x, "abcdefghijkl", 12); /* record 0: UINT8, 12 elements */
	const char *outs[] = { "-", "/dev/stdout" };
	for (int i = 0; i < 2; i++) {
		fx_run_result r = tensor("--model '%s' --input 0 '%s' -o %s > '%s' 2> '%s'; exit $?",
					 model, x, outs[i], y, e);
		expect_exit(&r, 0, outs[i]);
		expect_file(y, (const uint8_t *)"abcdefghijkl", 12, "standard output: the tensor alone");
		size_t n;
		char *err = (char *)fx_read_file(e, &n);
		assert_non_null(err);
		err[n] = '\0';
		assert_non_null(strstr(err, "input 0 \"in0\" (UINT8"));
		assert_non_null(strstr(err, "-> standard output (raw, 12 bytes)"));
		free(err);
	}
	unlink(y);
	unlink(e);
}

/* ------------------------------------------------- an image to int16 dfp */

static uint32_t png_crc(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

static size_t png_chunk(uint8_t *o, const char *type, const uint8_t *d, uint32_t n)
{
	const uint8_t len[4] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n };
	memcpy(o, len, 4);
	memcpy(o + 4, type, 4);
	if (n)
		memcpy(o + 8, d, n);
	uint32_t c = png_crc(o + 4, n + 4);
	const uint8_t cb[4] = { (uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c };
	memcpy(o + 8 + n, cb, 4);
	return n + 12;
}

/* A w x h 8-bit RGB PNG of px (rows of w RGB pixels), its image data one
 * stored (uncompressed) deflate block, as RFC 1950/1951 and the PNG
 * specification lay them out; w * h * 3 + h below 65536. */
static size_t write_rgb_png(const char *path, const uint8_t *px, uint32_t w, uint32_t h)
{
	static uint8_t raw[65536], z[65600], file[65800];
	uint32_t n = 0, a = 1, b = 0;
	for (uint32_t y = 0; y < h; y++) {
		raw[n++] = 0; /* filter none */
		memcpy(raw + n, px + (size_t)y * w * 3, (size_t)w * 3);
		n += w * 3;
	}
	for (uint32_t i = 0; i < n; i++) {
		a = (a + raw[i]) % 65521;
		b = (b + a) % 65521;
	}
	const uint8_t head[7] = { 0x78, 0x01, 0x01, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)~n, (uint8_t)(~n >> 8) };
	memcpy(z, head, 7);
	memcpy(z + 7, raw, n);
	const uint8_t ad[4] = { (uint8_t)(b >> 8), (uint8_t)b, (uint8_t)(a >> 8), (uint8_t)a };
	memcpy(z + 7 + n, ad, 4);
	const uint8_t ihdr[13] = { 0, 0, (uint8_t)(w >> 8), (uint8_t)w, 0, 0, (uint8_t)(h >> 8), (uint8_t)h, 8, 2,
				   0, 0, 0 };
	size_t o = 8;
	memcpy(file, "\x89PNG\r\n\x1a\n", 8);
	o += png_chunk(file + o, "IHDR", ihdr, 13);
	o += png_chunk(file + o, "IDAT", z, n + 11);
	o += png_chunk(file + o, "IEND", NULL, 0);
	write_file(path, file, o);
	return o;
}

/* The default synthesized v2 file's input is [1,128,128,3] INT16 dynamic
 * fixed point at position 15 (fixture.c), which holds [-1, 1): a photo's
 * pixels 0..255 given as they are all but clamp, and that clipping is said
 * as for an 8-bit input (it used to pass in silence for 16-bit records);
 * with --mean 127.5 --scale 1/127.5 nothing is clipped.  Expected bytes:
 * q = round(((p - mean) * scale) * 2^15), clamped to int16, worked here. */
static void test_image_int16_dfp(void **state)
{
	(void)state;
	enum { W = 128, H = 128 };
	static uint8_t px[W * H * 3];
	static int16_t want[W * H * 3];
	for (size_t i = 0; i < sizeof(px); i++)
		px[i] = (uint8_t)(i * 7 % 256);
	char m[300], img[300], out[300];
	path_in(m, sizeof(m), "v2-default.nb");
	path_in(img, sizeof(img), "rgb.png");
	path_in(out, sizeof(out), "rgb.bin");
	fx_spec *s = fx_default();
	size_t n;
	uint8_t *b = fx_build(s, &n);
	assert_non_null(b);
	write_file(m, b, n);
	free(b);
	fx_free(s);
	write_rgb_png(img, px, W, H);

	fx_run_result r = tensor("--model '%s' --input 0 '%s' -o '%s'", m, img, out);
	assert_non_null(strstr(r.err, "clipped"));
	assert_non_null(strstr(r.err, "--scale 3.05175781e-05")); /* 2^-15: the pixels as stored values */
	for (size_t i = 0; i < sizeof(px); i++)
		want[i] = px[i] ? 32767 : 0; /* p * 2^15 >= 32768 for every p >= 1 */
	expect_exit(&r, 0, "a PNG to int16 dfp 15, no --mean/--scale");
	expect_file(out, (const uint8_t *)want, sizeof(want), "pixels clamped to 32767");

	r = tensor("--model '%s' --input 0 '%s' --mean 127.5 --scale 0.00784313725490196 -o '%s'", m, img, out);
	assert_null(strstr(r.err, "clipped"));
	for (size_t i = 0; i < sizeof(px); i++) {
		float f = (float)((px[i] - 127.5) * 0.00784313725490196);
		double q = nearbyint(ldexp(f, 15));
		want[i] = (int16_t)(q > 32767 ? 32767 : q < -32768 ? -32768 : q);
	}
	expect_exit(&r, 0, "a PNG to int16 dfp 15, --mean 127.5 --scale 1/127.5");
	expect_file(out, (const uint8_t *)want, sizeof(want), "(p - 127.5) / 127.5 at position 15");
}

static int setup(void **state)
{
	(void)state;
	snprintf(work, sizeof(work), "/tmp/nbg-tensor-cli.XXXXXX");
	assert_non_null(mkdtemp(work));
	build_model();
	int st = system("/usr/bin/python3 -c 'import numpy' 2>/dev/null");
	have_numpy = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!have_numpy)
		fprintf(stderr, "python3-numpy absent: .npy output is checked with the parser in "
				"this test only\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthesized_records),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_kinds_and_listing),
		cmocka_unit_test(test_out_stdout),
		cmocka_unit_test(test_image_int16_dfp),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_records),
	};
	return tc_main(argc, argv, "test_tensor_cli", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), setup, teardown);
}

/*
 * network_lut.c - the function a TP lookup-table activation computes, read
 * from its table (commands_lut.c: where it lies, its layouts).  Entry i of
 * the table holds f at the input whose half-precision bits are i << 5 (the
 * table of an odd function, the sign put back: alu_pwl_sign_support 0), or
 * the sign (bit 9) and (i & 511) << 6 (sign support 1); the compiler folds
 * the input's scale into the function, so each candidate has one parameter
 * p: tanh(p x), the sigmoid 1 / (1 + e^(-p x)), SiLU p x / (1 + e^(-p x)),
 * the square (p x)^2, the leaky ReLU (x, or p x below 0; p 0: the ReLU); for the NN engine's
 * tables (NN_LUT) also the square root sqrt(p x) and the reciprocal square root 1 / sqrt(p x).
 * p is solved from the
 * entries in the middle of the function's range, and the candidate is the
 * function only when every finite entry is within 4 units in the last place
 * of the entry's layout (or 2^-13) of it, or where the function passes the
 * layout's largest value, is that value -- the CPU backend's test reads the
 * corpus tables so (test cpu-lut, within 0.51).  doc/commands.md, "The
 * network view".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "analysis/network/network_internal.h"
#include "common/half.h"

enum { FN_TANH, FN_SIGMOID, FN_SILU, FN_SQUARE, FN_LEAKY, FN_SQRT, FN_RSQRT, FN__COUNT };

/* the candidates of a TP table (sign support 1), of one without (odd
 * functions only) and of an NN_LUT table */
#define FNS_TP ((1u << FN_SQRT) - 1u)
#define FNS_ODD (1u << FN_TANH)
#define FNS_NNLUT ((1u << FN__COUNT) - 1u)

static double value(int f, double p, double x)
{
	switch (f) {
	case FN_TANH:
		return tanh(p * x);
	case FN_SIGMOID:
		return 1.0 / (1.0 + exp(-p * x));
	case FN_SILU:
		return p * x / (1.0 + exp(-p * x));
	case FN_SQUARE:
		return p * x * p * x;
	case FN_SQRT:
		return sqrt(p * x);
	case FN_RSQRT:
		return 1.0 / sqrt(p * x);
	default:
		return x >= 0 ? x : p * x;
	}
}

/* The input entry i of a TP table holds f at, as half-precision bits. */
static uint16_t tp_input(uint32_t i, int sign)
{
	return sign ? (uint16_t)((i & 511u) << 6 | (i & 512u) << 6) : (uint16_t)(i << 5);
}

/* The entries as (x, t), finite ones only, each at the input `input`
 * maps it to; their count.  sub15: an input of exponent 0 is read as
 * (1 + m / 1024) x 2^-15, as the maker of the NN_LUT tables without sign
 * bit reads one (doc/weights.md: the square root's entry at +0 is the
 * square root of 2^-15). */
static size_t points(const uint8_t *tab, int wide, uint16_t (*input)(uint32_t, int), int sign, int sub15,
		     double *x, double *t)
{
	size_t n = 0;
	for (uint32_t i = 0; i < NBG_LUT_ENTRIES; i++) {
		double v;
		if (!nbg_command_lut_entry(nbg_command_lut_word(tab, wide, i), wide, &v))
			continue;
		uint16_t h = input(i, sign);
		if ((h & 0x7c00) == 0x7c00) /* no input is infinite or NaN */
			continue;
		double in = sub15 && !(h & 0x7c00) ? ldexp(1.0 + (h & 0x3ff) / 1024.0, -15) : nbg_fp16_to_float(h);
		if (fabs(in) >= 60000) /* the largest halves: past every table's function */
			continue;
		x[n] = in;
		t[n] = v;
		n++;
	}
	return n;
}

/* p such that SiLU(p x) = t for x > 0.5, t > 0: SiLU(p x) grows with p,
 * so Newton's steps kept inside a bracket that each evaluation narrows,
 * bisecting (geometrically) where a step would leave it; to the double's
 * precision in a few evaluations, where bisection alone took 80. */
static double solve_silu(double x, double t)
{
	double lo = 1e-6, hi = 1e6, p = t / x;
	if (!(p > lo && p < hi))
		p = 1.0;
	for (int k = 0; k < 100; k++) {
		double z = p * x, e = exp(-z), s = 1.0 / (1.0 + e);
		double g = z * s - t, d = x * s * (1.0 + z * e * s);
		if (g < 0)
			lo = p;
		else
			hi = p;
		double next = p - g / d;
		if (!(next > lo && next < hi))
			next = sqrt(lo * hi);
		if (fabs(next - p) <= 0x1p-50 * p || hi - lo <= 0x1p-50 * lo)
			return next;
		p = next;
	}
	return p;
}

/* p such that f(p x) = t at one entry, or NAN: a closed form where there
 * is one, Newton's method otherwise. */
static double solve(int f, double x, double t)
{
	switch (f) {
	case FN_TANH:
		return x > 0 && t > 0.1 && t < 0.9 ? atanh(t) / x : NAN;
	case FN_SIGMOID:
		return x > 0 && t > 0.6 && t < 0.9 ? -log(1.0 / t - 1.0) / x : NAN;
	case FN_LEAKY:
		return x < -1 ? t / x : NAN;
	case FN_SQUARE:
		return x > 0.5 && t > 0 ? sqrt(t) / x : NAN;
	case FN_SQRT:
		return x > 0.5 && t > 0 ? t * t / x : NAN;
	case FN_RSQRT:
		return x > 0.5 && t > 0 ? 1.0 / (t * t * x) : NAN;
	default:
		break;
	}
	return x > 0.5 && t > 0 ? solve_silu(x, t) : NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Whether f with the median of the solutions at every fourth entry (the
 * parameter's estimate, into *param; the name rests on the check after
 * it) holds at every entry. */
static int holds(int f, const double *x, const double *t, size_t n, int mbits, double *ps, double *param)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i += 4) {
		double p = solve(f, x[i], t[i]);
		if (isfinite(p))
			ps[k++] = p;
	}
	if (!k)
		return 0;
	qsort(ps, k, sizeof(*ps), cmp_double);
	double p = ps[k / 2];
	if (f == FN_LEAKY ? !(p >= 0 && p < 1) : !(p > 0))
		return 0;
	*param = p;
	/* the layout's largest value: a function beyond it is clamped to it */
	double top = mbits == 15 ? ldexp(2.0 - 0x1p-15, 15) : 65504.0;
	for (size_t i = 0; i < n; i++) {
		double want = value(f, p, x[i]), a = fabs(want);
		if (a > top && fabs(t[i]) == top && (want > 0) == (t[i] > 0))
			continue;
		double ulp = a >= 0x1p-14 ? ldexp(1.0, ilogb(a) - mbits) : 0;
		if (fabs(t[i] - want) > fmax(4 * ulp, 0x1p-13))
			return 0;
	}
	return 1;
}

/* The function the k entries (x, t) hold, NULL when no candidate fits:
 * fns, the candidates (FNS_*) in the enum's order. */
static const char *name_points(const double *x, const double *t, size_t k, unsigned fns, int mbits,
			       double *ps, double *param)
{
	static const char *const names[FN__COUNT] = { "tanh", "sigmoid", "silu", "square",
						      "leaky-relu", "sqrt", "rsqrt" };
	const char *name = NULL;

	for (int f = 0; f < FN__COUNT && !name && k; f++) {
		if (!(fns >> f & 1u))
			continue;
		if (holds(f, x, t, k, mbits, ps, param))
			name = names[f];
	}
	if (name && !strcmp(name, "leaky-relu")) {
		/* the leaky ReLU of slope 0 is the ReLU */
		int relu = 1;
		for (size_t i = 0; i < k && relu; i++)
			relu = x[i] >= 0 || t[i] == 0;
		name = relu ? "relu" : name;
	}
	return name;
}

/* The function a table holds (name_points), its entries at the inputs
 * `input` maps them to; NULL when memory runs out or none fits. */
static const char *name_table(const uint8_t *tab, int wide, uint16_t (*input)(uint32_t, int),
			      int sign, int sub15, unsigned fns, double *param)
{
	double *buf = malloc(3 * NBG_LUT_ENTRIES * sizeof(double));
	if (!buf)
		return NULL;
	double *x = buf, *t = buf + NBG_LUT_ENTRIES;
	size_t k = points(tab, wide, input, sign, sub15, x, t);
	double p = 0;
	const char *name = name_points(x, t, k, fns, wide ? 15 : 10, buf + 2 * NBG_LUT_ENTRIES, &p);
	if (param)
		*param = p;
	free(buf);
	return name;
}

const char *nbg_network_lut_function(const nbg_network *n, const nbg_cmd_op *op)
{
	const nbg_cmd *cmd = nbg_commands_at(n->c, NBG_CMD_TP, op->command);
	nbg_cmd_ref r;
	uint64_t size = 0, bad = 0;
	int wide = 0;
	const uint8_t *tab = cmd ? nbg_command_lut_table(n->m, n->g, cmd, op->operation, &r, &size) : NULL;

	if (!tab || nbg_command_lut_layout(tab, size, &wide, &bad) != 1)
		return NULL;
	int sign = nbg_cmd_tp(cmd, NBG_TPF_ALU_PWL_SIGN_SUPPORT) != 0;
	/* a table without sign support holds an odd function */
	return name_table(tab, wide, tp_input, sign, 0, sign ? FNS_TP : FNS_ODD, NULL);
}

const char *nbg_nnlut_table_function(const uint8_t *tab, uint64_t size, double *param)
{
	if (!tab || size != NBG_NNLUT_BYTES)
		return NULL;
	int mode = nbg_command_nnlut_mode(le32(tab + 4 * NBG_LUT_ENTRIES));
	return name_table(tab, 1, nbg_command_nnlut_input, mode, mode == 0, FNS_NNLUT, param);
}

/* An NN_LUT operation's table (commands_lib.h, NBG_NNLUT_BYTES) on fp16
 * data: its entries at the inputs the tail's sign bit maps them to. */
const char *nbg_network_nnlut_function(const nbg_network *n, const nbg_cmd_op *op)
{
	uint64_t size = 0;
	const uint8_t *tab = op->in_type == 1 && op->out_type == 1 /* fp16 */
				     ? nbg_command_coef_bytes(n->m, n->g, &op->kernel_ref, &size) : NULL;
	return nbg_nnlut_table_function(tab, size, NULL);
}

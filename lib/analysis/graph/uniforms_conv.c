/*
 * uniforms_conv.c - the geometry of the A733 fp16 convolution shaders (and
 * of the fp32 pair of the TIM-VX fp32 file)
 * from their uniforms (uniforms.h): an im2col shader and a matrix-product
 * shader per ConvolutionLayer, one depthwise shader per DepthwiseConvLayer.
 * One reading for the CPU backend that executes them (lib/cpu/ops/
 * shconv.c, shdw16.c) and the network view that shows their tensors.
 *
 * Uniforms (0x36000 + 4 i; an image descriptor is eight words: address,
 * row stride, height << 16 | width, format word, slice stride, depth, two
 * words pinned below):
 *   im2col   0..7   input: w x h, depth c fp16 planes
 *            8..15  output: k = c kx ky values wide, p = ow x oh rows
 *            16..23 kx ky, ow, sx, sy, px, py, kx, ky
 *            28..35 0; any other word 0 where loaded (the corpus loads none)
 *   im2col, stride 2 (loads 0x36090): 0..21 as above, 22 and 23 0 where
 *            loaded (kx = ky = 3), 24..71 constants, pinned
 *   product  0..7   input rows (the im2col matrix, k wide, p high)
 *            8..15  kernels: k wide, n high, in a COEF_DATA_TABLE entry
 *            16..23 bias: n float32 values, in a COEF_DATA_TABLE entry
 *            24..26 0, k rounded up to a multiple of 8, 0
 *            28..35 output: p wide, n high (one plane per output channel)
 *            36..53 constants, pinned (the corpus's one set)
 *            27, 54..79 0 where loaded (the corpus: 27 never, 56..71 on some)
 *   fp32 im2col (its input's format word 0x44405002; the TIM-VX fp32 file)
 *            0..7   input: w x h, depth c float32 planes (last two words 0)
 *            8..15  1, 1, 1, 1, kx, ky, 1, 1 (stride, dilation and padding
 *                   among the ones, which is which not established)
 *            16..23 output: k = c kx ky rounded up to 4 values wide, ow
 *                   high, oh deep (rows ow apart in a plane: row oy ow + ox)
 *            24..26 ow, oh, c; 27 0; any other word 0 where loaded
 *   fp32 product (its input's format word 0x32101034; widths count four
 *            float32 values)
 *            0..7   input rows (k wide, p high)
 *            8..15  kernels: k wide, n high; 16..23 bias: n values
 *            24, 25 k, 0; 28..35 output: p wide, n high
 *            36..38 1, -3, -3, pinned; any other word 0 where loaded
 *   fp16 depthwise
 *            0..7    input: w x h, depth c fp16 planes
 *            8..15   kernels: kx ky fp16 values wide, c rows
 *            16..23  bias: c float32 values
 *            24..31  1, kx, ky, stride, pad, pad, stride, 0 (or 1: below)
 *            32..39  output: ow x oh, depth c fp16 planes
 *            40..79  constants, pinned: one set for stride 1; for stride 2
 *                    word 40 the output width, 41..43 0 where loaded, the
 *                    others another set; for stride 1 with word 31 1 (the
 *                    4x4 and 2x2 images) word 41 the output width, 42
 *                    0x40, 44..51 a third set, the rest 0 where loaded
 * doc/cpu-backend.md ("The fp16 convolution shaders", "The fp16 depthwise
 * convolution shader") gives each word with its evidence.
 */
#include <string.h>

#include "analysis/graph/uniforms.h"

#define SHC_PIN_A 0x10dd10b0u /* an image descriptor's seventh word */
#define SHC_PIN_BIAS 0x10de10b0u
#define SHC_MAX_SIDE 0xffffu

/* The format words of fp16 images (element size 2) and of the float32 bias
 * the corpus holds; bits 4..6 and 12 differ between them, their meaning
 * not established (each value below executes the same). */
static int fp16_format(uint32_t f)
{
	return f == 0x44405041u || f == 0x44405071u || f == 0x44404041u || f == 0x44404071u;
}

static int f32_format(uint32_t f)
{
	return f == 0x32100002u || f == 0x32100032u;
}

/* The product's constants 0x36090..0x360d4 (EVIS-style selection words and
 * two small integers: their meaning not established), as every product
 * shader of the corpus holds them. */
static const uint32_t product_pinned[18] = { 0x55555555u, 0x55550000u, 0x76543210u, 0x76543210u, 0,
					     0x76543210u, 0x76543210u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2 };

#define DW_ANY (-1)   /* not loaded, or 0 */
#define DW_OW (-2)    /* the output width */

/* The depthwise shader's words 40..79 as the corpus's stride-1 and
 * stride-2 shaders hold them, and (set 2) its stride-1 shaders on images
 * of 4x4 and 2x2 (word 31 1): word 41 the output width. */
static const int64_t dw_pinned[3][40] = {
	{ 0x15151515, 0, 0x3210210, 0x5430432, 0x15151515, 0x2100210, 0x2100210, 0x400, 0, 0, 0, 0, 0, 0, 0, 0,
	  0x15151515, 0, 0x3210210, 0x5430432, 0x15151515, 0x5430543, 0x5430543, 0x400, 0, 0, 0, 0, 0, 0, 0, 0,
	  0x11111111, 0x11110000, 0x6040200, 0x6040200, 0x22222222, 0, 0, 0x400 },
	{ DW_OW, DW_ANY, DW_ANY, DW_ANY, 0x151515, 0, 0x4320210, 0x654, 0x151515, 0x2100210, 0x210,
	  0x400, 0, 0, 0, 0, 0, 0, 0, 0, 0x151515, 0, 0x4320210, 0x654, 0x151515, 0x5430543, 0x543, 0x400, 0, 0,
	  0, 0, 0, 0, 0, 0, 0x111111, 0x111000, 0x40200, 0x402 },
	{ 0, DW_OW, 0x40, DW_ANY, 0x15, 0, 0x3210, 0, 0x55, 0x3210, 0, 0x400, DW_ANY, DW_ANY, DW_ANY, DW_ANY,
	  DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY,
	  DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY, DW_ANY },
};

/* Whether words first..last are loaded once each. */
static int once(const nbg_sh_uniforms *u, unsigned first, unsigned last)
{
	for (unsigned j = first; j <= last; j++)
		if (u->loaded[j] != 1)
			return 0;
	return 1;
}

/* Whether word j is not loaded, or loaded once with 0. */
static int zero_or_absent(const nbg_sh_uniforms *u, unsigned j)
{
	return u->loaded[j] == 0 || (u->loaded[j] == 1 && u->value[j] == 0);
}

/* The fp32 shaders' format words (the TIM-VX fp32 file): 0x44405002 a
 * plane of float32 values (the im2col's), 0x32101034 and 0x32100034 rows
 * of four float32 values an element (the product's rows, kernels and
 * output; its bias).  Their images' last two words are 0. */
#define SHC_F32_PLANE 0x44405002u

static int f32_plane_format(uint32_t f)
{
	return f == SHC_F32_PLANE;
}

static int f32x4_format(uint32_t f)
{
	return f == 0x32101034u || f == 0x32100034u;
}

/* The image descriptor at uniform j in a format `format` accepts, elements
 * of esize bytes, depth 1 unless depth_any, its seventh word pin and its
 * eighth 0: its size into *w, *h and row stride into *row. */
static int image(const nbg_sh_uniforms *u, unsigned j, int (*format)(uint32_t), unsigned esize, uint32_t pin,
		 int depth_any, uint32_t *w, uint32_t *h, uint64_t *row)
{
	if (j + 8 > NBG_SH_UNIFORMS)
		return 0;
	const uint32_t *v = u->value + j;
	*w = v[2] & 0xffff;
	*h = v[2] >> 16;
	*row = v[1];
	return format(v[3]) && *w && *h && (uint64_t)*w * esize <= v[1] && (depth_any || v[5] == 1) &&
	       v[6] == pin && v[7] == 0;
}

int nbg_sh_f16_image(const nbg_sh_uniforms *u, unsigned j, int f32, int depth_any, uint32_t *w, uint32_t *h,
		     uint64_t *row)
{
	return image(u, j, f32 ? f32_format : fp16_format, f32 ? 4 : 2, f32 ? SHC_PIN_BIAS : SHC_PIN_A, depth_any,
		     w, h, row);
}

/* The stride-2 fp16 im2col's words 24..71: three sets of EVIS-style
 * selection words (their third word the taps 0 1 2, 2 3 4, 4 5 6: windows
 * of 3 at stride 2), pinned as the corpus's one such shader holds them. */
static const uint32_t im2col_s2_pinned[48] = {
	0x111111u, 0x111000u, 0x20100u, 0x201u, 0x222222u, 0, 0, 0x400u, 1, 1, 1, 1, 1, 1, 0, 0,
	0x111111u, 0x111000u, 0x2040302u, 0x403u, 0x222222u, 0, 0, 0x400u, 1, 1, 1, 1, 1, 1, 0, 0,
	0x111111u, 0x111000u, 0x4060504u, 0x605u, 0x222222u, 0, 0, 0x400u, 1, 1, 1, 1, 1, 1, 0, 0,
};

/* Whether the uniforms are the stride-2 fp16 im2col's: words 0..21 and
 * 24..71 loaded once, 24..71 the pinned set, the rest (22 and 23, the
 * other layout's kernel size, among them) 0 where loaded. */
static int im2col16_s2(const nbg_sh_uniforms *u)
{
	if (!once(u, 0, 21) || !zero_or_absent(u, 22) || !zero_or_absent(u, 23) || !once(u, 24, 71))
		return 0;
	for (unsigned j = 24; j < 72; j++)
		if (u->value[j] != im2col_s2_pinned[j - 24])
			return 0;
	for (unsigned j = 72; j < NBG_SH_UNIFORMS; j++)
		if (!zero_or_absent(u, j))
			return 0;
	return 1;
}

int nbg_sh_conv_is_product(const nbg_sh_uniforms *u)
{
	/* the fp32 im2col loads 0x36090 too, with zeros; its input is a plane;
	 * the stride-2 fp16 im2col loads it with its constants */
	return u->loaded[36] != 0 && !(u->loaded[3] && f32_plane_format(u->value[3])) && !im2col16_s2(u);
}

int nbg_sh_dwconv16_is(const nbg_sh_uniforms *u)
{
	return u->loaded[3] == 1 && (u->value[3] & 0xfff00003u) == 0x44400001u;
}

/* Words 8..11, 14 and 15 of the fp32 im2col: 1 each, stride, dilation and
 * padding among them (which is which not established). */
static const unsigned im2col32_ones[6] = { 8, 9, 10, 11, 14, 15 };

/* The fp32 im2col (its input's format word 0x44405002): words 0..27 loaded
 * once, the rest 0 where loaded. */
static enum nbg_sh_conv_status im2col32(const nbg_sh_uniforms *u, nbg_sh_conv *c)
{
	const uint32_t *v = u->value;
	int other = !once(u, 0, 27) || v[27];
	for (unsigned j = 28; j < NBG_SH_UNIFORMS; j++)
		other |= !zero_or_absent(u, j);
	if (other || !image(u, 0, f32_plane_format, 4, 0, 1, &c->w, &c->h, &c->in_row) ||
	    !image(u, 16, f32_plane_format, 4, 0, 1, &c->k, &c->ow, &c->out_row))
		return NBG_SHC_LAYOUT;
	c->esize = 4;
	c->c = v[5];
	c->oh = v[21];
	c->kx = v[12];
	c->ky = v[13];
	c->sx = c->sy = c->px = c->py = 1;
	c->in_slice = v[4];
	c->out_slice = v[20];
	for (unsigned j = 0; j < 6; j++)
		other |= v[im2col32_ones[j]] != 1;
	if (other || c->kx != 3 || c->ky != 3 || !c->c || c->c > SHC_MAX_SIDE || c->ow != c->w || c->oh != c->h ||
	    v[24] != c->ow || v[25] != c->oh || v[26] != c->c || c->k != (c->c * 9 + 3) / 4 * 4 ||
	    c->out_slice != (uint64_t)c->ow * c->out_row || c->in_slice < (uint64_t)(c->h - 1) * c->in_row + 4ull * c->w)
		return NBG_SHC_SHAPE;
	c->p = c->ow * c->oh;
	return NBG_SHC_OK;
}

enum nbg_sh_conv_status nbg_sh_im2col(const nbg_sh_uniforms *u, nbg_sh_conv *c)
{
	const uint32_t *v = u->value;
	int other = 0;
	memset(c, 0, sizeof(*c));
	if (u->loaded[3] && f32_plane_format(v[3]))
		return im2col32(u, c);
	c->esize = 2;
	int s2 = im2col16_s2(u);
	for (unsigned j = 0; j < NBG_SH_UNIFORMS && !s2; j++)
		other |= (j < 24 || (j >= 28 && j < 36)) ? u->loaded[j] != 1 : !zero_or_absent(u, j);
	for (unsigned j = 28; j < 36 && !s2; j++)
		other |= v[j] != 0;
	if (other || !nbg_sh_f16_image(u, 0, 0, 1, &c->w, &c->h, &c->in_row) ||
	    !nbg_sh_f16_image(u, 8, 0, 0, &c->k, &c->p, &c->out_row))
		return NBG_SHC_LAYOUT;
	c->c = v[5];
	c->kx = s2 ? 3 : v[22];
	c->ky = s2 ? 3 : v[23];
	c->ow = v[17];
	c->sx = v[18];
	c->sy = v[19];
	c->px = v[20];
	c->py = v[21];
	c->in_slice = v[4];
	if (!c->c || !c->kx || !c->ky || !c->ow || v[16] != c->kx * c->ky || c->kx != c->ky || c->sx != c->sy ||
	    (s2 && c->sx != 2) ||
	    c->px != c->py || !c->sx || c->sx > SHC_MAX_SIDE || c->px > SHC_MAX_SIDE || c->kx > SHC_MAX_SIDE ||
	    (uint64_t)c->c * c->kx * c->ky != c->k || c->p % c->ow ||
	    c->in_slice < (uint64_t)(c->h - 1) * c->in_row + 2ull * c->w)
		return NBG_SHC_SHAPE;
	c->oh = c->p / c->ow;
	return NBG_SHC_OK;
}

/* The fp32 product's words 36..38 (not established; pinned). */
static const uint32_t product32_pinned[3] = { 1, 0xfffffffdu, 0xfffffffdu };

/* The fp32 matrix product (its input's format word 0x32101034): words
 * 0..25 and 28..38 loaded once, the rest 0 where loaded; widths count
 * four float32 values. */
static enum nbg_sh_conv_status product32(const nbg_sh_uniforms *u, nbg_sh_conv *c)
{
	const uint32_t *v = u->value;
	uint32_t kw, kk, bw, bh, pw, on;
	uint64_t brow;
	int other = !once(u, 0, 25) || !once(u, 28, 38) || v[25];
	for (unsigned j = 26; j < NBG_SH_UNIFORMS; j = j == 27 ? 39 : j + 1)
		other |= !zero_or_absent(u, j);
	for (unsigned j = 36; j < 39; j++)
		other |= v[j] != product32_pinned[j - 36];
	if (other || !image(u, 0, f32x4_format, 16, 0, 0, &kw, &c->p, &c->in_row) ||
	    !image(u, 8, f32x4_format, 16, 0, 0, &kk, &c->n, &c->w_row) ||
	    !image(u, 16, f32x4_format, 16, 0, 0, &bw, &bh, &brow) ||
	    !image(u, 28, f32x4_format, 16, 0, 0, &pw, &on, &c->out_row))
		return NBG_SHC_LAYOUT;
	c->esize = 4;
	c->k = 4 * kw;
	if (kk != kw || bh != 1 || bw != (c->n + 3) / 4 || (uint64_t)pw * 4 != c->p || on != c->n || v[24] != c->k)
		return NBG_SHC_SHAPE;
	return NBG_SHC_OK;
}

enum nbg_sh_conv_status nbg_sh_product(const nbg_sh_uniforms *u, nbg_sh_conv *c)
{
	const uint32_t *v = u->value;
	uint32_t kk, bn, bh, pw, on;
	uint64_t brow;
	int other = !once(u, 0, 26) || !once(u, 28, 53);
	memset(c, 0, sizeof(*c));
	if (u->loaded[3] && f32x4_format(v[3]))
		return product32(u, c);
	c->esize = 2;
	for (unsigned j = 27; j < NBG_SH_UNIFORMS; j = j == 27 ? 54 : j + 1)
		other |= !zero_or_absent(u, j);
	for (unsigned j = 36; j < 54; j++)
		other |= v[j] != product_pinned[j - 36];
	if (other || v[24] || v[26] || !nbg_sh_f16_image(u, 0, 0, 0, &c->k, &c->p, &c->in_row) ||
	    !nbg_sh_f16_image(u, 8, 0, 0, &kk, &c->n, &c->w_row) || !nbg_sh_f16_image(u, 16, 1, 0, &bn, &bh, &brow) ||
	    !nbg_sh_f16_image(u, 28, 0, 0, &pw, &on, &c->out_row))
		return NBG_SHC_LAYOUT;
	if (kk != c->k || bn != c->n || bh != 1 || pw != c->p || on != c->n || v[25] != (c->k + 7) / 8 * 8)
		return NBG_SHC_SHAPE;
	return NBG_SHC_OK;
}

/* Whether the depthwise shader's words 40..79 are the pinned set of its
 * stride (set 0: stride 1, 1: stride 2, 2: stride 1 with word 31 1). */
static int dw_constants(const nbg_sh_uniforms *u, unsigned set)
{
	const uint32_t *v = u->value;
	for (unsigned j = 40; j < 80; j++) {
		int64_t want = dw_pinned[set][j - 40];
		if (want == DW_ANY ? !zero_or_absent(u, j)
				   : u->loaded[j] != 1 || v[j] != (want == DW_OW ? v[34] & 0xffff : (uint32_t)want))
			return 0;
	}
	return 1;
}

enum nbg_sh_conv_status nbg_sh_dwconv16(const nbg_sh_uniforms *u, nbg_sh_conv *c)
{
	const uint32_t *v = u->value;
	uint32_t kk, bn, bh;
	uint64_t brow;
	memset(c, 0, sizeof(*c));
	c->esize = 2;
	if (!once(u, 0, 39) || v[31] > 1 || (v[31] && v[27] != 1) || !dw_constants(u, v[31] ? 2 : v[27] == 2) ||
	    v[24] != 1 ||
	    !nbg_sh_f16_image(u, 0, 0, 1, &c->w, &c->h, &c->in_row) ||
	    !nbg_sh_f16_image(u, 8, 0, 0, &kk, &c->c, &c->w_row) || !nbg_sh_f16_image(u, 16, 1, 0, &bn, &bh, &brow) ||
	    !nbg_sh_f16_image(u, 32, 0, 1, &c->ow, &c->oh, &c->out_row))
		return NBG_SHC_LAYOUT;
	c->kx = v[25];
	c->ky = v[26];
	c->sx = c->sy = v[27];
	c->px = c->py = v[28];
	c->in_slice = v[4];
	c->out_slice = v[36];
	uint32_t st = c->sx, pad = c->px;
	if (!c->kx || !c->ky || kk != c->kx * c->ky || v[5] != c->c || v[37] != c->c || bn != c->c || bh != 1 ||
	    v[30] != st || v[29] != pad || (st != 1 && st != 2) || pad >= c->kx || pad >= c->ky ||
	    (uint64_t)(c->ow - 1) * st >= (uint64_t)c->w + pad || (uint64_t)(c->oh - 1) * st >= (uint64_t)c->h + pad ||
	    c->in_slice < (uint64_t)(c->h - 1) * c->in_row + 2ull * c->w ||
	    c->out_slice < (uint64_t)(c->oh - 1) * c->out_row + 2ull * c->ow)
		return NBG_SHC_SHAPE;
	return NBG_SHC_OK;
}

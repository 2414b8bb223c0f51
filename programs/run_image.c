/*
 * run_image.c - a photo given as a model input (nbg run --input
 * photo.png|photo.jpg, and each entry of --batch): decoded with libpng or
 * libjpeg after its declared size was bounded, resized to the record's
 * height and width (bilinear, half-pixel centres: OpenCV's INTER_LINEAR,
 * in float; an image of the record's size is copied as it is), its
 * channels ordered (--channel-order), normalized ((pixel - mean) * scale
 * per channel) and quantized with the record's own parameters
 * (doc/runtime.md, "Images as inputs").  A file either converts whole or
 * gives a code and a sentence: libpng's and libjpeg's errors leave through
 * their longjmp, and libjpeg's warnings (a cut file, corrupt data) are
 * failures here, not grey rows.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jpeglib.h>
#include <png.h>

#include "run_internal.h"

/* The bounds checked on the size a file declares, before any pixel is
 * decoded: a side of at most 32768 pixels and 2^26 pixels in all (192 MiB
 * of RGB), and the decoded bytes within --max-memory. */
#define IMAGE_MAX_SIDE 32768u
#define IMAGE_MAX_PIXELS ((uint64_t)1 << 26)
/* Progressive JPEG scans beyond this are refused (libjpeg-turbo's own
 * advice against files crafted to decode for minutes). */
#define IMAGE_MAX_SCANS 500

typedef struct image {
	uint32_t w, h, c; /* c: 1 (grey) or 3 (RGB) */
	uint8_t *px;      /* h rows of w pixels of c bytes */
} image;

/* Where the record keeps height, width and channels. */
typedef struct image_axes {
	uint64_t h, w, c;
	int planar; /* channels outermost (NCHW, CHW) */
} image_axes;

static nbg_code fail(nbg_error *e, nbg_code c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static nbg_code fail(nbg_error *e, nbg_code c, const char *fmt, ...)
{
	va_list ap;
	memset(e, 0, sizeof(*e));
	e->code = c;
	e->index = -1;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return c;
}

int run_image_kind(const char *path)
{
	static const struct {
		const char *ext;
		int kind;
	} exts[] = { { ".png", RUN_IMAGE_PNG }, { ".jpg", RUN_IMAGE_JPEG }, { ".jpeg", RUN_IMAGE_JPEG } };
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof(exts) / sizeof(exts[0]); i++)
		if (!strcasecmp(dot, exts[i].ext))
			return exts[i].kind;
	return RUN_IMAGE_NONE;
}

static nbg_code check_size(uint64_t w, uint64_t h, uint32_t c, uint64_t max_memory, nbg_error *e)
{
	if (w && h && w <= IMAGE_MAX_SIDE && h <= IMAGE_MAX_SIDE && w * h <= IMAGE_MAX_PIXELS &&
	    w * h * c <= max_memory)
		return NBG_OK;
	return fail(e, NBG_E_IMAGE_TOO_LARGE,
		    "it declares %llux%llu pixels: refused before decoding (at most %u on a side, "
		    "%llu in all, and its %u-channel pixels within --max-memory %llu); resize it first",
		    (unsigned long long)w, (unsigned long long)h, IMAGE_MAX_SIDE,
		    (unsigned long long)IMAGE_MAX_PIXELS, c, (unsigned long long)max_memory);
}

/* libpng's reader over a buffer, its errors through the jump. */
typedef struct png_src {
	const uint8_t *p;
	size_t size, at;
	jmp_buf jump;
	char msg[256];
} png_src;

static void png_read_mem(png_structp png, png_bytep out, size_t n)
{
	png_src *src = png_get_io_ptr(png);
	if (n > src->size - src->at)
		png_error(png, "the file ends inside the image (cut short)");
	memcpy(out, src->p + src->at, n);
	src->at += n;
}

static void png_fail(png_structp png, png_const_charp msg)
{
	png_src *src = png_get_error_ptr(png);
	snprintf(src->msg, sizeof(src->msg), "%s", msg);
	longjmp(src->jump, 1);
}

static void png_warn(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg; /* an ancillary chunk libpng skips: the pixels are whole */
}

/* The transformations to 8-bit grey or RGB, alpha kept (composed by
 * compose_alpha); the channels libpng then writes. */
static unsigned png_transforms(png_structp png, png_infop info, uint32_t c)
{
	int type = png_get_color_type(png, info);
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	if (type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (png_get_valid(png, info, PNG_INFO_tRNS))
		png_set_tRNS_to_alpha(png);
	if (png_get_bit_depth(png, info) == 16)
		png_set_scale_16(png);
	if (c == 1 && (type & PNG_COLOR_MASK_COLOR))
		png_set_rgb_to_gray_fixed(png, 1, -1, -1);
	if (c == 3 && !(type & PNG_COLOR_MASK_COLOR))
		png_set_gray_to_rgb(png);
	png_read_update_info(png, info);
	return png_get_channels(png, info);
}

/* Pixels of n channels (c, or c + alpha) composed onto black, in place
 * into c channels a pixel. */
static void compose_alpha(uint8_t *px, size_t pixels, uint32_t c, unsigned n)
{
	for (size_t i = 0; n > c && i < pixels; i++) {
		unsigned a = px[i * n + c];
		for (uint32_t k = 0; k < c; k++)
			px[i * c + k] = (uint8_t)((px[i * n + k] * a + 127) / 255);
	}
}

/* libpng's reader (its errors leave through png_fail's jump): any PNG to
 * 8-bit grey or RGB, sample values as stored (no gamma or colour profile
 * applied), 16-bit scaled to 8, palettes expanded, transparency composed
 * onto black; the whole file read, up to IEND. */
static nbg_code decode_png(const uint8_t *buf, size_t size, uint32_t c, uint64_t max_memory,
			   image *im, nbg_error *e)
{
	png_src src = { .p = buf, .size = size };
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_fail, png_warn);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	uint8_t *volatile px = NULL;
	png_bytep *volatile rows = NULL;
	if (!info) {
		png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
		return fail(e, NBG_E_OUT_OF_MEMORY, "out of memory starting libpng");
	}
	if (setjmp(src.jump)) {
		png_destroy_read_struct(&png, &info, NULL);
		free(px);
		free(rows);
		return fail(e, NBG_E_IMAGE_INVALID, "libpng cannot decode it whole: %s", src.msg);
	}
	png_set_read_fn(png, &src, png_read_mem);
	png_set_chunk_malloc_max(png, (png_alloc_size_t)8 << 20);
	png_read_info(png, info);
	uint32_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
	nbg_code rc = check_size(w, h, 4, max_memory, e);
	if (rc != NBG_OK) {
		png_destroy_read_struct(&png, &info, NULL);
		return rc;
	}
	unsigned n = png_transforms(png, info, c);
	if (n != c && n != c + 1)
		png_error(png, "an unexpected channel count after conversion");
	px = malloc((size_t)w * h * n);
	rows = malloc(h * sizeof(*rows));
	if (!px || !rows)
		png_error(png, "out of memory for the pixels");
	for (uint32_t y = 0; y < h; y++)
		rows[y] = px + (size_t)y * w * n;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	compose_alpha(px, (size_t)w * h, c, n);
	*im = (image){ .w = w, .h = h, .c = c, .px = px };
	return NBG_OK;
}

typedef struct jpeg_fail {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX + 64];
} jpeg_fail;

/* libjpeg's errors, and its warnings (a cut file, corrupt data: it would
 * go on with grey rows), leave the decode through the jump. */
static void jpeg_exit(j_common_ptr ci)
{
	jpeg_fail *f = (jpeg_fail *)(void *)ci->err; /* our jpeg_fail: its first member */
	if (!f->msg[0])
		ci->err->format_message(ci, f->msg);
	longjmp(f->jump, 1);
}

static void jpeg_emit(j_common_ptr ci, int level)
{
	if (level < 0)
		jpeg_exit(ci);
}

static void jpeg_progress(j_common_ptr ci)
{
	j_decompress_ptr d = (j_decompress_ptr)(void *)ci; /* the decompressor it is */
	if (ci->is_decompressor && d->input_scan_number > IMAGE_MAX_SCANS) {
		jpeg_fail *f = (jpeg_fail *)(void *)ci->err; /* our jpeg_fail: its first member */
		snprintf(f->msg, sizeof(f->msg), "more than %d progressive scans", IMAGE_MAX_SCANS);
		longjmp(f->jump, 1);
	}
}

static nbg_code decode_jpeg(const uint8_t *buf, size_t size, uint32_t c, uint64_t max_memory,
			    image *im, nbg_error *e)
{
	struct jpeg_decompress_struct ci;
	struct jpeg_progress_mgr pm;
	jpeg_fail f;
	uint8_t *volatile px = NULL;

	memset(&ci, 0, sizeof(ci));
	memset(&pm, 0, sizeof(pm));
	memset(&f, 0, sizeof(f));
	ci.err = jpeg_std_error(&f.pub);
	f.pub.error_exit = jpeg_exit;
	f.pub.emit_message = jpeg_emit;
	pm.progress_monitor = jpeg_progress;
	if (setjmp(f.jump)) {
		jpeg_destroy_decompress(&ci);
		free(px);
		return fail(e, NBG_E_IMAGE_INVALID, "libjpeg cannot decode it whole: %s", f.msg);
	}
	jpeg_create_decompress(&ci);
	ci.progress = &pm;
	jpeg_mem_src(&ci, buf, (unsigned long)size);
	jpeg_read_header(&ci, TRUE);
	nbg_code rc = check_size(ci.image_width, ci.image_height, c, max_memory, e);
	if (rc == NBG_OK && (ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK))
		rc = fail(e, NBG_E_IMAGE_INVALID, "a CMYK JPEG, which libjpeg does not convert to "
						  "RGB; save it as RGB first");
	if (rc != NBG_OK) {
		jpeg_destroy_decompress(&ci);
		return rc;
	}
	ci.out_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
	ci.dct_method = JDCT_ISLOW;
	jpeg_start_decompress(&ci);
	size_t stride = (size_t)ci.output_width * c;
	px = malloc(stride * ci.output_height);
	if (!px) {
		jpeg_destroy_decompress(&ci);
		return fail(e, NBG_E_OUT_OF_MEMORY, "out of memory for %ux%u pixels",
			    ci.output_width, ci.output_height);
	}
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = px + stride * ci.output_scanline;
		jpeg_read_scanlines(&ci, &row, 1);
	}
	jpeg_finish_decompress(&ci);
	im->w = ci.output_width;
	im->h = ci.output_height;
	im->c = c;
	im->px = px;
	jpeg_destroy_decompress(&ci);
	return NBG_OK;
}

/* The record's height, width and channels from its shape (outermost
 * first): [1,H,W,C] or [1,C,H,W] (C 1 or 3, whichever axis alone can be
 * it), [H,W,C] or [C,H,W], [H,W] grey. */
static nbg_code record_axes(const nbg_io *io, image_axes *ax, nbg_error *e)
{
	uint64_t d[4];
	uint32_t n = io->dim_count;
	for (uint32_t i = 0; i < n && i < 4; i++)
		d[i] = nbg_io_dim_outer(io, i);
	if (n == 4 && d[0] != 1)
		return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "the input takes a batch of %llu "
			    "images; one image fills a batch of 1 (give a .npy)", (unsigned long long)d[0]);
	const uint64_t *s = n == 4 ? d + 1 : d;
	uint32_t k = n == 4 ? 3 : n;
	if (k == 2) {
		*ax = (image_axes){ .h = s[0], .w = s[1], .c = 1 };
		return NBG_OK;
	}
	int last = k == 3 && (s[2] == 1 || s[2] == 3), first = k == 3 && (s[0] == 1 || s[0] == 3);
	if (last != first) {
		*ax = last ? (image_axes){ .h = s[0], .w = s[1], .c = s[2] }
			   : (image_axes){ .h = s[1], .w = s[2], .c = s[0], .planar = 1 };
		return NBG_OK;
	}
	return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "the input's %u dimensions name no one "
		    "channel axis of 1 or 3 (NHWC, NCHW, HWC, CHW or HW); give a .npy", n);
}

/* Bilinear with half-pixel centres, edges clamped: the source coordinate
 * of output index i and its weight. */
static void source_of(uint32_t i, uint32_t out, uint32_t in, uint32_t *i0, uint32_t *i1, double *f)
{
	double x = ((double)i + 0.5) * ((double)in / (double)out) - 0.5;
	if (x < 0)
		x = 0;
	*i0 = (uint32_t)x;
	if (*i0 >= in - 1) {
		*i0 = in - 1;
		x = *i0;
	}
	*i1 = *i0 + 1 < in ? *i0 + 1 : *i0;
	*f = x - *i0;
}

/* The pixel (x, y) of channel ch, resized to ax's height and width. */
static double sample(const image *im, const image_axes *ax, uint32_t x, uint32_t y, uint32_t ch)
{
	uint32_t x0, x1, y0, y1;
	double fx, fy;
	source_of(x, (uint32_t)ax->w, im->w, &x0, &x1, &fx);
	source_of(y, (uint32_t)ax->h, im->h, &y0, &y1, &fy);
	const uint8_t *r0 = im->px + (size_t)y0 * im->w * im->c, *r1 = im->px + (size_t)y1 * im->w * im->c;
	double top = r0[x0 * im->c + ch] * (1 - fx) + r0[x1 * im->c + ch] * fx;
	double bot = r1[x0 * im->c + ch] * (1 - fx) + r1[x1 * im->c + ch] * fx;
	return top * (1 - fy) + bot * fy;
}

/* --mean / --scale value of channel k (one value for all, or one each). */
static double per_channel(const cli_channels *v, uint32_t k, double dflt)
{
	return !v->n ? dflt : v->n == 1 ? v->v[0] : v->v[k];
}

/* The resized, ordered, normalized values in the record's memory order. */
static float *normalize(const image *im, const image_axes *ax, const run_args *a)
{
	float *v = malloc((size_t)(ax->h * ax->w * ax->c) * sizeof(float) + 1);
	if (!v)
		return NULL;
	for (uint32_t y = 0; y < ax->h; y++)
		for (uint32_t x = 0; x < ax->w; x++)
			for (uint32_t k = 0; k < ax->c; k++) {
				uint32_t src = a->channel_order == RUN_ORDER_BGR ? (uint32_t)ax->c - 1 - k : k;
				double p = sample(im, ax, x, y, src);
				size_t at = ax->planar ? (k * ax->h + y) * ax->w + x
						       : ((size_t)y * ax->w + x) * ax->c + k;
				v[at] = (float)((p - per_channel(&a->mean, k, 0)) *
						per_channel(&a->scale, k, 1));
			}
	return v;
}

/* What the options ask of a record with ax's channels; NBG_OK or why not. */
static nbg_code check_options(const image_axes *ax, const run_args *a, nbg_error *e)
{
	if (ax->c != 1 && ax->c != 3)
		return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "the input has %llu channels; an image "
			    "gives 1 or 3", (unsigned long long)ax->c);
	if (ax->c == 3 && a->channel_order == RUN_ORDER_GRAY)
		return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "--channel-order gray, but the input "
			    "has 3 channels: give rgb or bgr");
	if (ax->c == 1 && (a->channel_order == RUN_ORDER_RGB || a->channel_order == RUN_ORDER_BGR))
		return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "--channel-order %s, but the input has "
			    "one channel: give gray, or nothing", a->channel_order == RUN_ORDER_RGB ? "rgb" : "bgr");
	if ((a->mean.n > 1 && a->mean.n != ax->c) || (a->scale.n > 1 && a->scale.n != ax->c))
		return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "--mean and --scale take one value or "
			    "one per channel, and the input has %llu", (unsigned long long)ax->c);
	if (ax->h > IMAGE_MAX_SIDE || ax->w > IMAGE_MAX_SIDE)
		return fail(e, NBG_E_TENSOR_SHAPE_MISMATCH, "the input is %llux%llu; an image fills "
			    "at most %u on a side", (unsigned long long)ax->w, (unsigned long long)ax->h,
			    IMAGE_MAX_SIDE);
	/* the floats it is converted through, beside the record's bytes */
	if (ax->h * ax->w * ax->c * sizeof(float) > a->max_memory)
		return fail(e, NBG_E_WORK_LIMIT, "the input's %llu values, converted through float, "
			    "would hold more than --max-memory %llu bytes",
			    (unsigned long long)(ax->h * ax->w * ax->c), (unsigned long long)a->max_memory);
	return NBG_OK;
}

/* Values the record's quantization cannot hold were clipped by
 * nbg_tensor_quantize: how many, said on standard error, with the --scale
 * that maps pixels 0..255 onto what it holds when none was given. */
static void note_clipped(const char *cmd, const char *path, const nbg_io *io, const run_args *a, const float *v,
			 const uint8_t *raw, uint64_t n)
{
	double step = io->quant_format == NBG_QUANT_AFFINE ? io->scale
		    : io->quant_format == NBG_QUANT_DFP ? ldexp(1, -io->fixed_point_pos) : 1;
	/* 8-bit records, and quantized 16-bit ones (int16 dynamic fixed point
	 * at position 15 holds [-1, 1) only); float records hold what an image
	 * gives */
	int narrow = nbg_tensor_element_size(io->data_format) == 1 || io->quant_format != NBG_QUANT_NONE;
	float *d = narrow ? malloc(n * sizeof(float) + 1) : NULL;
	nbg_error e;
	if (!d || nbg_tensor_dequantize(io, raw, (size_t)io->byte_size, d, n, &e) != NBG_OK) {
		free(d);
		return;
	}
	uint64_t clipped = 0;
	double lo = d[0], hi = d[0];
	for (uint64_t i = 0; i < n; i++) {
		clipped += fabs((double)d[i] - (double)v[i]) > step;
		lo = d[i] < lo ? d[i] : lo;
		hi = d[i] > hi ? d[i] : hi;
	}
	free(d);
	if (!clipped)
		return;
	fprintf(stderr, "nbg %s: note: %s: %llu of %llu values were outside what the input's "
			"quantization holds and were clipped (pixels 0..255, minus --mean, times "
			"--scale)", cmd, cli_esc(path), (unsigned long long)clipped, (unsigned long long)n);
	if (!a->mean.n && !a->scale.n)
		fprintf(stderr, "; give the model's own --mean and --scale, or --scale %.9g to "
				"take the pixels as the input's stored values as a vendor demo copies them",
			io->quant_format == NBG_QUANT_AFFINE ? (double)io->scale : step);
	fputc('\n', stderr);
}

nbg_code run_image_to_raw(const char *cmd, const char *path, const nbg_io *io, const run_args *a, const uint8_t *buf,
			  size_t size, uint8_t **raw, nbg_error *e)
{
	image_axes ax = { 0 };
	image im = { 0 };
	*raw = NULL;
	nbg_code rc = record_axes(io, &ax, e);
	if (rc == NBG_OK)
		rc = check_options(&ax, a, e);
	if (rc != NBG_OK)
		return rc;
	uint32_t c = (uint32_t)ax.c;
	if (size >= 8 && !memcmp(buf, "\x89PNG\r\n\x1a\n", 8))
		rc = decode_png(buf, size, c, a->max_memory, &im, e);
	else if (size >= 3 && !memcmp(buf, "\xff\xd8\xff", 3))
		rc = decode_jpeg(buf, size, c, a->max_memory, &im, e);
	else
		rc = fail(e, NBG_E_IMAGE_INVALID, "it starts with neither PNG's nor JPEG's "
						  "signature: not an image libpng or libjpeg reads");
	if (rc != NBG_OK)
		return rc;
	float *v = normalize(&im, &ax, a);
	free(im.px);
	*raw = v ? malloc((size_t)io->byte_size + 1) : NULL;
	if (!*raw) {
		free(v);
		return fail(e, NBG_E_OUT_OF_MEMORY, "out of memory converting the image");
	}
	rc = nbg_tensor_quantize(io, v, ax.h * ax.w * ax.c, *raw, (size_t)io->byte_size, e);
	if (rc == NBG_OK)
		note_clipped(cmd, path, io, a, v, *raw, ax.h * ax.w * ax.c);
	free(v);
	if (rc != NBG_OK) {
		free(*raw);
		*raw = NULL;
	}
	return rc;
}

/* --mean / --scale as summary.json lists them: one value a channel. */
static json_t *channels_json(const cli_channels *v, uint64_t c, double dflt)
{
	json_t *a = json_array();
	for (uint32_t k = 0; k < c; k++)
		json_array_append_new(a, json_real(per_channel(v, k, dflt)));
	return a;
}

json_t *run_image_json(const nbg_io *io, const run_args *a, const char *path)
{
	image_axes ax = { 0 };
	nbg_error e;
	if (!run_image_kind(path) || record_axes(io, &ax, &e) != NBG_OK)
		return NULL;
	const char *order = ax.c == 1 ? "gray" : a->channel_order == RUN_ORDER_BGR ? "bgr" : "rgb";
	return json_pack("{s:s, s:s, s:o, s:o, s:s}", "decoder",
			 run_image_kind(path) == RUN_IMAGE_PNG ? "libpng" : "libjpeg", "channel_order",
			 order, "mean", channels_json(&a->mean, ax.c, 0), "scale",
			 channels_json(&a->scale, ax.c, 1), "resize",
			 "bilinear, half-pixel centres (none at the record's size)");
}

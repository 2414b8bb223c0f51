/*
 * fuzz_coef.c - libFuzzer harness: the kernel-stream decoder.
 *
 * Two kinds of input:
 *   - an NBG file: parsed, its graph and commands decoded, then every kernel
 *     stream (nbg_weights_decode); the result must satisfy its promises
 *     (statuses counted, decoded arrays whole and sized by the shape,
 *     streams inside the file, the reason of every other operation named),
 *     its JSON must read back and its text be printable, and the ledger with
 *     the decoded streams must tile the file and re-emit it unchanged;
 *   - "COEF", then what an NN command says about a stream (19 bytes, below),
 *     then the stream: decoded with one format directly (the decoder's
 *     stream-level entry, lib/coef/coef_internal.h), so mutations reach the
 *     bit-level decoders without passing through a file.
 * Header of a raw input (little-endian): "COEF", format (1 v7, 2 v8a, 3
 * v8b, 5 f32-pairs with fp16 kernels; others mod 3), out (16 bits), kz (24 bits), kernel size (low 4 bits:
 * kx; high 4 bits: ky, 0 for kx), kernels per core (7 bits), zero point,
 * input zero point, flags (bit 0 depthwise, bit 1 per-channel floats, bit 2
 * write_core_6 first, bit 3 the TP fully connected format instead of the
 * format byte's, bits 4-5 the order of kernels beyond 3x3 in the v7 layout,
 * enum nbg_coef_wide, bit 6 int8 codes, bit 7 int16 codes), output plane
 * (32 bits).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "coef/coef_internal.h"
#include "fuzz_common.h"
#include "nbg/commands.h"
#include "nbg/graph.h"
#include "nbg/ledger.h"
#include "nbg/report.h"
#include "nbg/weights.h"

#define RAW_HEADER 19

static void check_out(const nbg_coef_shape *s, nbg_weights_format f, int r,
		      const nbg_coef_out *o)
{
	FZ_CHECK(r == NBG_COEF_DECODED || r == NBG_COEF_REJECTED);
	if (r == NBG_COEF_REJECTED) {
		FZ_CHECK(o->reason_id && o->reason_id[0]);
		FZ_CHECK(fz_terminated(o->reason, sizeof(o->reason)) && o->reason[0]);
		FZ_CHECK(!o->codes && !o->bias && !o->bias_stored && !o->scale && !o->bias64 &&
			 !o->slope);
		return;
	}
	FZ_CHECK(o->format == f && o->cores >= 1 && o->cores <= 16);
	FZ_CHECK(nbg_coef_order_name(o->order) != NULL);
	/* int16 kernels: two bytes a code, 48-bit biases only; fp16 ones: two
	 * bytes a code, slopes, no bias */
	if (s->fp16)
		FZ_CHECK(o->codes && o->slope && !o->bias && !o->bias_stored && !o->bias64);
	else
		FZ_CHECK(s->bit16 ? o->codes && o->bias64 && !o->bias && !o->bias_stored && !o->scale
				  : o->codes && o->bias && o->bias_stored && !o->bias64);
	FZ_CHECK(s->bit16 || s->fp16 ||
		 !o->scale == !(s->per_channel && f == NBG_WEIGHTS_FORMAT_V8A));
	/* touch every value: a short array is an ASan report */
	size_t n = (size_t)s->out * s->kz * s->ky * s->kx * (s->bit16 || s->fp16 ? 2 : 1);
	unsigned sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += o->codes[i];
	for (uint32_t c = 0; c < s->out; c++) {
		uint32_t bits = 0; /* a slope's bits: converting a negative float is undefined */
		if (s->fp16)
			memcpy(&bits, &o->slope[c], sizeof(bits));
		sum += s->fp16	? bits
		       : s->bit16 ? (unsigned)o->bias64[c]
				  : (unsigned)o->bias[c] ^ (unsigned)o->bias_stored[c];
	}
	(void)sum;
}

static void raw(const uint8_t *d, size_t size)
{
	nbg_coef_shape s;
	nbg_weights_format f;
	nbg_coef_out a, b;
	int ra, rb;

	if (size < RAW_HEADER)
		return;
	memset(&s, 0, sizeof(s));
	f = (nbg_weights_format)(1 + (d[4] + 2) % 3);
	s.out = (d[5] | d[6] << 8) & 0x3fff;
	s.kz = (d[7] | d[8] << 8 | (uint32_t)d[9] << 16) & 0xfffff;
	s.kx = d[10] & 15;
	s.ky = d[10] >> 4 ? d[10] >> 4 : s.kx;
	s.superblock = d[11] & 127;
	s.zero_point = d[12];
	s.in_zero_point = d[13];
	s.depthwise = d[14] & 1;
	s.per_channel = d[14] >> 1 & 1;
	s.six_first = d[14] >> 2 & 1;
	s.wide = d[14] >> 4 & 3;
	s.int8 = d[14] >> 6 & 1;
	s.bit16 = d[14] >> 7 & 1;
	if (d[14] >> 3 & 1)
		f = NBG_WEIGHTS_FORMAT_TPFC;
	if (d[4] == 5) {
		f = NBG_WEIGHTS_FORMAT_F32;
		s.fp16 = 1;
	}
	s.plane[0] = d[15] | d[16] << 8 | (uint32_t)d[17] << 16 | (uint32_t)d[18] << 24;
	s.v7_cores = 16;
	ra = nbg_coef_decode(d + RAW_HEADER, size - RAW_HEADER, &s, f, &a);
	check_out(&s, f, ra, &a);
	/* the same input decodes the same way */
	rb = nbg_coef_decode(d + RAW_HEADER, size - RAW_HEADER, &s, f, &b);
	FZ_CHECK(ra == rb);
	if (ra == NBG_COEF_DECODED)
		FZ_CHECK(!memcmp(a.codes, b.codes,
				 (size_t)s.out * s.kz * s.ky * s.kx * (s.bit16 || s.fp16 ? 2 : 1)));
	else
		FZ_CHECK(!strcmp(a.reason_id, b.reason_id) && a.bit == b.bit);
	nbg_coef_out_free(&a);
	nbg_coef_out_free(&b);
}

static void check_weights(const nbg_model *m, const nbg_commands *c, const nbg_weights *w,
			  size_t size)
{
	size_t counts[NBG_WEIGHTS_STATUS_COUNT] = { 0 };

	FZ_CHECK(nbg_weights_count(w) <= nbg_commands_op_count(c));
	for (size_t i = 0; i < nbg_weights_count(w); i++) {
		const nbg_weights_op *o = nbg_weights_at(w, i);
		nbg_weights_status st = nbg_weights_op_status(o);
		const uint32_t *sh = nbg_weights_op_shape(o);
		size_t n;
		FZ_CHECK((unsigned)st < NBG_WEIGHTS_STATUS_COUNT);
		counts[st]++;
		FZ_CHECK(nbg_weights_op_index(o) < nbg_commands_op_count(c));
		/* NN-engine operations, and TP ones only as fully connected layers */
		FZ_CHECK(nbg_commands_op_at(c, nbg_weights_op_index(o))->engine == NBG_CMD_NN ||
			 (nbg_commands_op_at(c, nbg_weights_op_index(o))->engine == NBG_CMD_TP &&
			  sh[2] == 1 && sh[3] == 1));
		FZ_CHECK(nbg_weights_op_stream_offset(o) <= size &&
			 nbg_weights_op_stream_size(o) <= size - nbg_weights_op_stream_offset(o));
		FZ_CHECK(fz_terminated(nbg_weights_op_reason(o), 200));
		if (st != NBG_WEIGHTS_DECODED) {
			FZ_CHECK(nbg_weights_op_reason(o)[0] && nbg_weights_op_reason_id(o)[0]);
			FZ_CHECK(!nbg_weights_op_codes(o, &n) && n == 0 && !nbg_weights_op_bias(o));
			continue;
		}
		FZ_CHECK(nbg_weights_op_codes(o, &n) && n == (size_t)sh[0] * sh[1] * sh[2] * sh[3]);
		if (nbg_weights_op_format(o) == NBG_WEIGHTS_FORMAT_LUT)
			FZ_CHECK(nbg_weights_op_code_bytes(o) == 4 && nbg_weights_op_lut_tail(o) &&
				 !nbg_weights_op_bias(o) && !nbg_weights_op_bias_stored(o));
		else if (nbg_weights_op_code_bytes(o) == 2)
			FZ_CHECK((nbg_weights_op_bias_stored64(o) || nbg_weights_op_prelu_slope(o)) &&
				 !nbg_weights_op_bias(o));
		else
			FZ_CHECK(nbg_weights_op_code_bytes(o) == 1 && nbg_weights_op_bias(o) &&
				 nbg_weights_op_bias_stored(o));
		FZ_CHECK(nbg_weights_op_format(o) != NBG_WEIGHTS_FORMAT_NONE);
	}
	for (int s = 0; s < NBG_WEIGHTS_STATUS_COUNT; s++)
		FZ_CHECK(counts[s] == nbg_weights_status_count(w, (nbg_weights_status)s));
	FZ_CHECK(nbg_weights_explained_bytes(w) <= size);
	(void)m;
}

static void check_outputs(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
			  const nbg_weights *w, const uint8_t *data, size_t size)
{
	char *s;
	fz_text t;
	json_t *doc;
	nbg_ledger *l;
	nbg_error err;

	nbg_text_weights(fz_text_open(&t), m, g, c, w);
	fz_text_check(&t);
	s = fz_document(m, "fuzz.nb", NBG_JSON_DOC_NO_CORE | NBG_JSON_DOC_WEIGHTS);
	FZ_CHECK(s != NULL);
	doc = json_loads(s, 0, NULL);
	FZ_CHECK(doc != NULL);
	FZ_CHECK(json_array_size(json_object_get(json_object_get(doc, "weights"), "operations")) ==
		 nbg_weights_count(w));
	json_decref(doc);
	free(s);
	/* the ledger with the decoded streams: it tiles the file (checked when
	 * it is built) and owns exactly their bytes as decoded-coefficients */
	FZ_CHECK(nbg_ledger_build_weights(m, w, &l, &err) == NBG_OK);
	FZ_CHECK(nbg_ledger_class_bytes(l, NBG_LEDGER_DECODED_COEFFICIENTS) ==
		 nbg_weights_explained_bytes(w));
	FZ_CHECK(nbg_reemit_check(l, data, size, &err) == NBG_OK);
	nbg_ledger_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_weights *w = NULL;
	nbg_error err;

	if (size >= 4 && !memcmp(data, "COEF", 4)) {
		raw(data, size);
		return 0;
	}
	if (fz_parse(data, size, &m, &err) != NBG_OK)
		return 0;
	FZ_CHECK(nbg_graph_decode(m, &g, &err) == NBG_OK);
	FZ_CHECK(nbg_commands_decode(m, g, &c, &err) == NBG_OK);
	FZ_CHECK(nbg_weights_decode(m, g, c, &w, &err) == NBG_OK);
	check_weights(m, c, w, size);
	check_outputs(m, g, c, w, data, size);
	nbg_weights_free(w);
	nbg_commands_free(c);
	nbg_graph_free(g);
	nbg_model_free(m);
	return 0;
}

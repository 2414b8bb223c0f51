/*
 * export.c - inputs and outputs as ACUITY's nbg_meta.json, vpm_run's I/O
 * lines and JeVois tensor specifications.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "common/json.h"
#include "nbg/export.h"
#include "report/text_internal.h"

/* One data format's names in the other tools: ACUITY dtype/qtype, JeVois. */
static const struct fmt_names {
	const char *dtype, *qtype, *jevois;
} fmt_names[] = {
	[0] = { "float32", "f32", "32F" },  [1] = { "float16", "f16", "16F" },
	[2] = { "uint8", "u8", "8U" },      [3] = { "int8", "i8", "8S" },
	[4] = { "uint16", "u16", "16U" },   [5] = { "int16", "i16", "16S" },
	[6] = { "int8", "i8", "8S" },       [7] = { "bfloat16", "bf16", "16F" },
	[8] = { "int32", "i32", "32S" },    [9] = { "uint32", "u32", "32U" },
	[10] = { "int64", "i64", "64S" },   [11] = { "uint64", "u64", "64U" },
	[12] = { "float64", "f64", "64F" }, [16] = { "bool", "u8", "8U" },
};

static const struct fmt_names *names_of(uint32_t fmt)
{
	if (fmt >= sizeof(fmt_names) / sizeof(fmt_names[0]) || !fmt_names[fmt].dtype)
		return NULL;
	return &fmt_names[fmt];
}

static json_t *meta_tensor(const nbg_io *io, const struct fmt_names *n)
{
	json_t *o = json_object(), *shape = json_array(), *q;

	json_object_set_new(o, "name", nbg_json_text(io->has_name ? io->name : "", 64));
	for (uint32_t d = 0; d < io->dim_count; d++)
		json_array_append_new(shape, json_integer(nbg_io_dim_outer(io, d)));
	json_object_set_new(o, "shape", shape);
	/* No "format" (ACUITY's layout name, "nhwc"): an NBG stores the
	 * dimensions, not the name of their layout (doc/export.md). */
	if (io->quant_format == NBG_QUANT_DFP || io->quant_format == NBG_QUANT_AFFINE) {
		q = json_object();
		json_object_set_new(o, "quantizer",
				    json_string(io->quant_format == NBG_QUANT_DFP
							? "dynamic_fixed_point"
							: "asymmetric_affine"));
		json_object_set_new(q, "qtype", json_string(n->qtype));
		if (io->quant_format == NBG_QUANT_DFP) {
			json_object_set_new(q, "fl", json_integer(io->fixed_point_pos));
		} else {
			json_object_set_new(q, "scale", isfinite(io->scale) ? json_real(io->scale)
									  : json_null());
			json_object_set_new(q, "zero_point", json_integer(io->zero_point));
		}
		json_object_set_new(o, "quantize", q);
	} else {
		json_object_set_new(o, "dtype", json_string(n->dtype));
	}
	return o;
}

static int meta_side(json_t *side, const nbg_model *m, int outputs)
{
	size_t count = outputs ? m->output_count : m->input_count;

	for (size_t i = 0; i < count; i++) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
		const struct fmt_names *n = names_of(io->data_format);
		char key[96];
		char *name;
		if (!n)
			return -1;
		name = nbg_text_escape(io->has_name ? io->name : (outputs ? "output" : "input"), 64);
		if (!name)
			return -1;
		snprintf(key, sizeof(key), "%s_%zu", name, i);
		free(name);
		json_object_set_new(side, key, meta_tensor(io, n));
	}
	return 0;
}

char *nbg_export_meta_json(const nbg_model *m)
{
	if (!m)
		return NULL;
	json_t *root = json_object(), *in = json_object(), *out = json_object();
	char *s = NULL;

	json_object_set_new(root, "Inputs", in);
	json_object_set_new(root, "Outputs", out);
	json_object_set_new(root, "Recurrent_connections", json_object());
	if (meta_side(in, m, 0) == 0 && meta_side(out, m, 1) == 0)
		s = json_dumps(root, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}

/* A name on a vpm line: printable ASCII kept but for '\\' and ',' (which
 * would end the field), every other byte as \xNN, so the line stays one
 * line of the grammar in doc/export.md. */
static void vpm_name(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != ',')
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
}

static void vpm_side(FILE *f, const nbg_model *m, int outputs)
{
	size_t count = outputs ? m->output_count : m->input_count;

	for (size_t i = 0; i < count; i++) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
		fprintf(f, "%s %zu dim", outputs ? "output" : "input", i);
		for (uint32_t d = 0; d < io->dim_count; d++)
			fprintf(f, " %" PRIu32, io->dims[d]);
		fprintf(f, ", data_format=%" PRIu32 ", quant_format=%" PRIu32 ", name=",
			io->data_format, io->quant_format);
		vpm_name(f, io->has_name ? io->name : "");
		if (io->quant_format == NBG_QUANT_DFP)
			fprintf(f, ", dfp=%" PRId32, io->fixed_point_pos);
		else if (io->quant_format == NBG_QUANT_AFFINE)
			fprintf(f, ", scale=%.9g, zero_point=%" PRId32, io->scale, io->zero_point);
		fputc('\n', f);
	}
}

void nbg_export_vpm(FILE *out, const nbg_model *m)
{
	if (!out || !m)
		return;
	vpm_side(out, m, 0);
	vpm_side(out, m, 1);
}

static void jevois_side(FILE *f, const nbg_model *m, int outputs)
{
	size_t count = outputs ? m->output_count : m->input_count;

	fputs(outputs ? "outtensors: \"" : "intensors: \"", f);
	for (size_t i = 0; i < count; i++) {
		const nbg_io *io = outputs ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);
		const struct fmt_names *n = names_of(io->data_format);
		/* no layout prefix (NCHW:, NHWC:): the NBG does not name the layout */
		fprintf(f, "%s%s:", i ? ", " : "", n ? n->jevois : "?");
		for (uint32_t d = 0; d < io->dim_count; d++)
			fprintf(f, "%s%" PRIu32, d ? "x" : "", nbg_io_dim_outer(io, d));
		if (io->quant_format == NBG_QUANT_DFP)
			fprintf(f, ":DFP:%" PRId32, io->fixed_point_pos);
		else if (io->quant_format == NBG_QUANT_AFFINE)
			fprintf(f, ":AA:%.9g:%" PRId32, io->scale, io->zero_point);
	}
	fputs("\"\n", f);
}

void nbg_export_jevois(FILE *out, const nbg_model *m)
{
	if (!out || !m)
		return;
	jevois_side(out, m, 0);
	jevois_side(out, m, 1);
}

/*
 * rt_models.c - see rt_models.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus.h"
#include "fixture.h"
#include "rt_models.h"

enum { FMT_FP16 = 1, FMT_INT16 = 5, Q_NONE = 0, Q_DFP = 1, FP16_SCALE = 0x3f800000 };

static int write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f && fclose(f) != 0)
		ok = 0;
	if (!ok)
		fprintf(stderr, "cannot write the synthesized file %s\n", path);
	return ok ? 0 : 1;
}

static int write_model(const char *path, uint32_t fmt)
{
	uint32_t din[4] = { 3, 128, 128, 1 }, d0[3] = { 16, 896, 1 }, d1[3] = { 1, 896, 1 };
	int dfp = fmt == FMT_INT16;
	uint32_t q = dfp ? Q_DFP : Q_NONE;
	fx_spec *s = fx_default();
	uint8_t *b;
	size_t n;
	int rc;

	fx_io_record(fx_find(s, 1)->data, 4, din, fmt, q, dfp ? 15 : FP16_SCALE, 0,
		     "input/output[0]");
	fx_io_record(fx_find(s, 2)->data, 3, d0, fmt, q, dfp ? 7 : FP16_SCALE, 0, "uid_90_out_0");
	fx_io_record(fx_find(s, 2)->data + 112, 3, d1, fmt, q, dfp ? 8 : FP16_SCALE, 0,
		     "uid_89_out_0");
	b = fx_build(s, &n);
	fx_free(s);
	rc = b ? write_bytes(path, b, n) : 1;
	free(b);
	return rc;
}

/* The INT16 model's meta.json: the vendor compiler's layout (outputs
 * named as in the real pair's), with the positions write_model used. */
static int write_meta(const char *path)
{
	static const char meta[] =
		"{\n"
		"    \"Inputs\": {\n"
		"        \"input_0\": {\"name\": \"input\", \"shape\": [1, 128, 128, 3],\n"
		"            \"quantizer\": \"dynamic_fixed_point\",\n"
		"            \"quantize\": {\"qtype\": \"i16\", \"fl\": 15}}\n"
		"    },\n"
		"    \"Outputs\": {\n"
		"        \"regressors_91\": {\"name\": \"regressors\", \"shape\": [1, 896, 16],\n"
		"            \"quantizer\": \"dynamic_fixed_point\",\n"
		"            \"quantize\": {\"qtype\": \"i16\", \"fl\": 7}},\n"
		"        \"classificators_92\": {\"name\": \"classificators\", \"shape\": [1, 896, 1],\n"
		"            \"quantizer\": \"dynamic_fixed_point\",\n"
		"            \"quantize\": {\"qtype\": \"i16\", \"fl\": 8}}\n"
		"    }\n"
		"}\n";
	return write_bytes(path, meta, sizeof(meta) - 1);
}

int rt_models_open(int argc, char **argv, const char *program, rt_models *m)
{
	memset(m, 0, sizeof(*m));
	if (tc_parts_of(argc, argv) == TC_CORPUS) {
		if (!tc_have_corpus())
			return tc_skip_corpus(program, "the run on the real models");
		snprintf(m->int16, sizeof(m->int16), "%s/v2/face_detector_nbg_int16.nb",
			 NBG_CORPUS_DIR);
		snprintf(m->fp16, sizeof(m->fp16), "%s/v2/face_detector_nbg_fp16.nb", NBG_CORPUS_DIR);
		snprintf(m->meta_int16, sizeof(m->meta_int16),
			 "%s/v2/face_detector_nbg_int16.meta.json", NBG_CORPUS_DIR);
		return 0;
	}
	return rt_models_synthesize(m);
}

int rt_models_synthesize(rt_models *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->dir, sizeof(m->dir), "/tmp/nbgrtmodels.XXXXXX");
	if (!mkdtemp(m->dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(m->int16, sizeof(m->int16), "%s/synth_int16.nb", m->dir);
	snprintf(m->fp16, sizeof(m->fp16), "%s/synth_fp16.nb", m->dir);
	snprintf(m->meta_int16, sizeof(m->meta_int16), "%s/synth_int16.meta.json", m->dir);
	if (write_model(m->int16, FMT_INT16) || write_model(m->fp16, FMT_FP16) ||
	    write_meta(m->meta_int16)) {
		rt_models_close(m);
		return 1;
	}
	return 0;
}

void rt_models_close(rt_models *m)
{
	if (!m->dir[0])
		return;
	unlink(m->int16);
	unlink(m->fp16);
	unlink(m->meta_int16);
	rmdir(m->dir);
	m->dir[0] = '\0';
}

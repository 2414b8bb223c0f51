/*
 * run_golden.c - `nbg run --golden`: each output compared with its golden
 * as float32 (dequantized) by nbg compare's measure (nbg_tensor_measure,
 * the same figures printed: cli_compare.h), and the comparison in
 * summary.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_compare.h"
#include "run_internal.h"

/* A finite double as a JSON real, NaN/inf as null (JSON has no infinity). */
static json_t *json_finite(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Output i (i < the goldens given) against its golden, as float32: the
 * counts into s->cmp[i], s->golden_ok cleared on a mismatch; 0, or the
 * exit code when the output has no float form. */
int run_compare(run_state *s, size_t i)
{
	nbg_error e;

	if (!s->out_f[i]) {
		fprintf(stderr, "nbg run: golden-format: output %zu has no float form\n", i);
		return nbg_code_exit(NBG_E_GOLDEN_FORMAT);
	}
	if (!s->stats && !(s->stats = calloc(s->n_out, sizeof(*s->stats)))) {
		fprintf(stderr, "nbg run: %s: out of memory\n", nbg_code_name(NBG_E_OUT_OF_MEMORY));
		return NBG_EXIT_IO;
	}
	/* float32 values both, dequantized already: the figures are in their
	 * units ("float32"), none given twice */
	nbg_tensor_side a = { s->out_f[i], 0, 0 }, b = { s->gold_f[i], 0, 0 };
	nbg_tensor_stats *st = &s->stats[i];
	if (nbg_tensor_measure(&a, &b, s->out_io[i].element_count, s->a.tolerance, 0, 0, st, &e) != NBG_OK) {
		fprintf(stderr, "nbg run: %s: %s\n", nbg_code_name(e.code), e.message);
		return nbg_code_exit(e.code);
	}
	s->cmp[i] = (nbg_tensor_diff){ st->elements, st->beyond, st->first_beyond, st->max_abs_stored };
	if (s->cmp[i].mismatches)
		s->golden_ok = 0;
	return 0;
}

json_t *run_golden_json(const run_state *s)
{
	json_t *jg = json_object();
	json_object_set_new(jg, "tolerance", json_real(s->a.tolerance));
	json_object_set_new(jg, "compared_as", json_string("float32 (dequantized)"));
	json_object_set_new(jg, "match", json_boolean(s->golden_ok));
	json_t *ja = json_array();
	for (size_t i = 0; i < s->n_out; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		json_object_set_new(x, "file", cli_json_path(s->a.goldens[i]));
		json_object_set_new(x, "format", json_string(run_format_name(nbg_rt_session_output_at(s->res, i)->data_format)));
		json_object_set_new(x, "elements", json_integer((json_int_t)s->cmp[i].elements));
		json_object_set_new(x, "mismatches", json_integer((json_int_t)s->cmp[i].mismatches));
		json_object_set_new(x, "first_mismatch", s->cmp[i].mismatches
			? json_integer((json_int_t)s->cmp[i].first_mismatch) : json_null());
		json_object_set_new(x, "max_abs_diff", json_finite(s->cmp[i].max_abs_diff));
		if (s->stats) /* nbg compare's figures */
			cli_compare_json_add(x, &s->stats[i], "float32");
		json_object_set_new(x, "match", json_boolean(s->cmp[i].mismatches == 0));
		json_array_append_new(ja, x);
	}
	json_object_set_new(jg, "outputs", ja);
	return jg;
}

/*
 * run_report.c - what `nbg run` did, on standard output.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli_compare.h"
#include "run_internal.h"

const char *run_format_name(uint32_t fmt)
{
	const char *n = nbg_data_format_name(fmt);
	return n ? n : "unknown";
}

static void print_shape(FILE *f, const nbg_io *io)
{
	fputc('[', f);
	for (uint32_t i = 0; i < io->dim_count; i++)
		fprintf(f, "%s%u", i ? "," : "", nbg_io_dim_outer(io, i));
	fputc(']', f);
}

static void print_top(const run_state *s, size_t i)
{
	size_t k = s->a.top;
	nbg_tensor_top_entry *t = calloc(k, sizeof(*t));
	if (!t || !s->out_f[i]) {
		free(t);
		return;
	}
	size_t n = nbg_tensor_top(s->out_f[i], s->out_io[i].element_count, k, t);
	printf("--- Top%zu ---\n", k);
	for (size_t j = 0; j < n; j++)
		printf("%6llu: %.6f\n", (unsigned long long)t[j].index, (double)t[j].value);
	free(t);
}

/* What the run did, on stdout. */
int run_report(run_state *s, int rc)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	char t[200];
	printf("model: %s (target 0x%08x), %lu loop%s on %s via %s (%s)\n", cli_esc(s->a.model),
	       nbg_model_target(s->m), r->loops, r->loops == 1 ? "" : "s",
	       r->backend == NBG_RT_SELECT_CPU ? "this machine" : nbg_rt_backend_name(r->probe.backend),
	       cli_esc(r->library),
	       nbg_rt_select_name(r->backend));
	if (r->cid_known)
		printf("target: device CID %s%s\n", nbg_target_describe(r->cid, t, sizeof(t)),
		       r->target_forced ? " differs from the model's: run anyway (--force-target)" : ", matches");
	printf("times: create %.3f ms, run %.3f ms (mean), retrieve %.3f ms (mean), destroy %.3f ms\n",
	       r->create_ms, r->run.sum / (double)r->run.n, r->retrieve.sum / (double)r->retrieve.n, r->destroy_ms);
	const json_t *rt = json_object_get(s->summary, "runtime");
	if (json_string_value(json_object_get(rt, "caveat")))
		printf("caveat: %s\n", cli_esc(json_string_value(json_object_get(rt, "caveat"))));
	const json_t *ref = json_object_get(rt, "reference_semantics");
	for (size_t i = 0; i < json_array_size(ref); i++) {
		const json_t *o = json_array_get(ref, i);
		printf("op %lld [layer %s] %s: %s\n",
		       (long long)json_integer_value(json_object_get(o, "operation")),
		       cli_esc(json_string_value(json_object_get(o, "layer"))),
		       cli_esc(json_string_value(json_object_get(o, "what"))),
		       cli_esc(json_string_value(json_object_get(o, "note"))));
	}
	if (r->profile_known)
		printf("profile: inference %.0f us (mean), %.0f cycles (mean)\n",
		       r->inference_us.sum / (double)r->inference_us.n, r->cycles.sum / (double)r->cycles.n);
	for (size_t i = 0; i < s->n_out; i++) {
		char h[65];
		const nbg_rt_session_output *o = nbg_rt_session_output_at(s->res, i);
		nbg_hex32(o->sha256, h);
		printf("output %zu: %s ", i, run_format_name(o->data_format));
		print_shape(stdout, nbg_model_output_at(s->m, i));
		printf(" %zu bytes sha256 %s -> %s%s\n", o->size, h, cli_esc(s->staged[s->raw_staged[i]].final),
		       o->stable ? "" : " (differs between loops)");
		if (s->a.golden_count) { /* nbg compare's figures */
			printf("  golden %s: %s, ", cli_esc(s->a.goldens[i]), s->cmp[i].mismatches ? "MISMATCH" : "match");
			cli_compare_figures(stdout, &s->stats[i], "float32");
		}
		if (s->a.top)
			print_top(s, i);
	}
	printf("summary: %s\n", cli_esc(s->staged[s->staged_count - 1].final));
	if (!s->golden_ok) {
		fprintf(stderr, "nbg run: golden mismatch (see summary.json)\n");
		rc = NBG_EXIT_INVALID;
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = rc ? rc : NBG_EXIT_IO;
	return rc;
}

/*
 * run_report.c - what `nbg run` did, on standard output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Output i's --top values, each with its --labels name when there is one. */
static void print_top(FILE *f, const run_state *s, size_t i, const char *lead)
{
	size_t k = s->a.top;
	nbg_tensor_top_entry *t = calloc(k, sizeof(*t));
	if (!t || !s->out_f[i]) {
		free(t);
		return;
	}
	size_t n = nbg_tensor_top(s->out_f[i], s->out_io[i].element_count, k, t);
	fprintf(f, "%s--- Top%zu ---\n", lead, k);
	for (size_t j = 0; j < n; j++) {
		fprintf(f, "%s%6llu: %.6f", lead, (unsigned long long)t[j].index, (double)t[j].value);
		if (t[j].index < s->a.label_count)
			fprintf(f, " %s", cli_esc(s->a.label_v[t[j].index]));
		fputc('\n', f);
	}
	free(t);
}

/* A batch entry's report (s->line): where its outputs went, the run's
 * time, each output's top values. */
static int entry_report(run_state *s)
{
	const nbg_rt_session_info *r = nbg_rt_session_info_of(s->res);
	size_t len;
	FILE *f = open_memstream(&s->line, &len);
	if (!f)
		return NBG_EXIT_IO;
	const char *slash = strrchr(s->a.output_dir, '/');
	fprintf(f, "%s: ran in %.3f ms -> ", cli_esc(slash ? slash + 1 : s->a.output_dir),
		r->run.sum / (double)r->run.n);
	fprintf(f, "%s/\n", cli_esc(s->a.output_dir));
	for (size_t i = 0; s->a.top && i < s->n_out; i++) {
		fprintf(f, "  output %zu\n", i);
		print_top(f, s, i, "  ");
	}
	return fclose(f) ? NBG_EXIT_IO : 0;
}

/* What the run did, on stdout. */
int run_report(run_state *s, int rc)
{
	if (s->a.quiet)
		return entry_report(s);
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
			print_top(stdout, s, i, "");
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

/* --labels: at most this many bytes (a name a line; ImageNet's 1000 names
 * are 20 KiB). */
#define LABELS_MAX_BYTES ((size_t)16 << 20)

int run_labels_load(run_args *a)
{
	nbg_mapping map;
	nbg_error e;
	if (!a->labels)
		return 0;
	if (nbg_map_file(a->labels, &map, &e) != 0) {
		fprintf(stderr, "nbg run: %s\n", cli_esc_msg(e.message));
		return NBG_EXIT_IO;
	}
	if (map.size > LABELS_MAX_BYTES) {
		fprintf(stderr, "nbg run: %s: --labels %s is %zu bytes, over %zu: one class name a "
				"line is far less\n", nbg_code_name(NBG_E_WORK_LIMIT), cli_esc(a->labels),
			map.size, LABELS_MAX_BYTES);
		nbg_unmap_file(&map);
		return nbg_code_exit(NBG_E_WORK_LIMIT);
	}
	size_t lines = 1;
	for (size_t i = 0; i < map.size; i++)
		lines += map.data[i] == '\n';
	a->label_text = malloc(map.size + 1);
	a->label_v = calloc(lines, sizeof(*a->label_v));
	if (!a->label_text || !a->label_v) {
		nbg_unmap_file(&map);
		run_labels_free(a);
		fprintf(stderr, "nbg run: out of memory reading %s\n", cli_esc(a->labels));
		return NBG_EXIT_IO;
	}
	memcpy(a->label_text, map.data, map.size);
	a->label_text[map.size] = '\0';
	nbg_unmap_file(&map);
	for (char *p = a->label_text; *p || p == a->label_text;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		size_t n = strlen(p);
		if (n && p[n - 1] == '\r')
			p[n - 1] = '\0'; /* a file written on Windows */
		if (nl || *p)
			a->label_v[a->label_count++] = p;
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

void run_labels_free(run_args *a)
{
	free(a->label_v);
	free(a->label_text);
	a->label_v = NULL;
	a->label_text = NULL;
	a->label_count = 0;
}

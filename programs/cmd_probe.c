/*
 * cmd_probe.c - `nbg probe`: the NPU device nodes, and for each vendor
 * runtime (libnnsdk, VIPLite 2.x libNBGlinker.so, VIPLite 1.x
 * libVIPlite.so) whether its library loads, its version word, the entry
 * points resolved, vip_init's result, devices, cores and CID; then the
 * runtime `nbg run` would choose (doc/runtime.md, "nbg probe"); for each
 * MODEL operand, whether the CPU backend runs it (doc/cpu-backend.md).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmd_run.h"
#include "nbg/cpu.h"
#include "nbg/runtime.h"
#include "nbg/session.h"
#include "nbg/targets.h"

/* A vendor message or symbol: printable ASCII as is, other bytes as \xNN. */
static void put_text(const char *s)
{
	char *e = nbg_text_escape(s, SIZE_MAX);
	fputs(e ? e : "?", stdout);
	free(e);
}

static void print_nodes(const nbg_rt_probe *p)
{
	fputs("device root: ", stdout);
	fputs(cli_esc(p->device_root), stdout);
	fputc('\n', stdout);
	for (int i = 0; i < NBG_RT_PROBE_NODES; i++) {
		const nbg_rt_probe_node *n = &p->nodes[i];
		printf("  %-8s %-8s backend %d (%s)%s\n", n->name, n->present ? "present" : "absent",
		       n->backend, nbg_rt_backend_name(n->backend),
		       n->present && !n->is_char_device ? ", not a character device" : "");
	}
	if (p->backend == NBG_RT_BACKEND_NONE || p->backend == NBG_RT_BACKEND_GPU) {
		fputs("NPU: none found under ", stdout);
		fputs(cli_esc(p->device_root), stdout);
		puts(p->backend == NBG_RT_BACKEND_GPU
			     ? " (mali0 is a GPU; libnnsdk would use its TFLite delegate)" : "");
	} else {
		printf("NPU: backend %d (%s)%s\n", p->backend, nbg_rt_backend_name(p->backend),
		       p->nbg_capable ? "" : ", which does not run VeriSilicon NBG files");
	}
}

/* "VIPLite 2.x (libNBGlinker.so): found, 21/21 entry points, ..." */
static void print_report(const nbg_rt_backend_report *r, const char *generation)
{
	char t[200];
	printf("%s (", generation);
	fputs(cli_esc(r->library), stdout);
	printf("): %s", r->library_found ? "found" : "not found");
	if (r->library_found) {
		printf(", %u/%u entry points", r->symbols_resolved, r->symbols_wanted);
		if (r->symbol_missing[0]) {
			fputs(" (missing ", stdout);
			put_text(r->symbol_missing);
			fputc(')', stdout);
		}
	}
	if (r->backend == NBG_RT_SELECT_NNSDK && r->code == NBG_OK)
		printf(", flush %s", r->has_flush ? "available" : "absent");
	if (r->has_version)
		printf(", version 0x%08x (%u.%u.%u)", r->version_word, r->version_major,
		       r->version_minor, r->version_patch);
	if (r->init_called)
		printf(", vip_init %d (%s)", r->init_status, nbg_vip_status_name(r->init_status));
	if (r->hw_known)
		printf(", %u device%s, %u core%s, CID %s", r->device_count,
		       r->device_count == 1 ? "" : "s", r->cores, r->cores == 1 ? "" : "s",
		       nbg_target_describe(r->cid, t, sizeof(t)));
	fputc('\n', stdout);
	if (r->code != NBG_OK) {
		printf("  %s: ", nbg_code_name(r->code));
		put_text(r->message);
		fputc('\n', stdout);
	}
}

static void print_machine(const nbg_rt_machine *m)
{
	print_nodes(&m->devices);
	for (size_t i = 0; i < m->report_count; i++)
		print_report(&m->reports[i], m->generation[i]);
	if (m->selected >= 0) {
		const nbg_rt_backend_report *r = &m->reports[m->selected];
		printf("nbg run --backend auto would use: %s (", nbg_rt_select_name(r->backend));
		fputs(cli_esc(r->library), stdout);
		puts(")");
	} else {
		puts("nbg run --backend auto would use: nothing (no NBG-capable device node)");
	}
	printf("ready to run NBG files: %s\n", m->ready ? "yes" : "no");
}

/* One model's CPU plan, as a text line and a JSON object; the exit code of
 * a model that cannot be read or parsed (0 otherwise). */
static int probe_cpu(const char *path, json_t *arr)
{
	cli_loaded l;
	nbg_cpu_plan *p = NULL;
	nbg_cpu_options lim;
	nbg_error e;
	json_t *o = json_object();
	int rc = cli_load(path, NULL, &l);

	cli_cpu_options(&lim, NULL, NULL, NULL);
	json_object_set_new(o, "path", cli_json_path(path));
	if (rc == NBG_EXIT_OK && nbg_cpu_plan_build_model(l.model, &lim, &p, &e) != NBG_OK) {
		l.err = e;
		rc = nbg_code_exit(e.code);
	}
	/* the plan read the file after the parse: a shrink since was zeros to it */
	if (l.model && cli_loaded_changed(path, &l, NULL))
		rc = NBG_EXIT_IO;
	if (rc != NBG_EXIT_OK) {
		if (!arr)
			printf("  %s: not planned: %s\n", cli_esc(path), nbg_code_name(l.err.code));
		cli_print_error(path, &l);
		json_object_set_new(o, "error", json_string(nbg_code_name(l.err.code)));
	} else {
		size_t ops = nbg_cpu_plan_count(p), ex = nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE),
		       no = nbg_cpu_plan_verdict_count(p, NBG_CPU_NOTHING),
		       re = nbg_cpu_plan_verdict_count(p, NBG_CPU_REFUSED);
		const nbg_cpu_step *r = nbg_cpu_plan_first_refused(p);
		nbg_code verdict = nbg_cpu_plan_check(p, SIZE_MAX, &e); /* the run's, nbg run --check's */
		if (!arr && verdict == NBG_OK)
			printf("  %s: runs every operation (%zu executed, %zu with nothing to compute)\n",
			       cli_esc(path), ex, no);
		else if (!arr && r)
			printf("  %s: refuses op %zu of %zu first (%s); %zu executed, %zu with nothing to "
			       "compute, %zu refused\n", cli_esc(path), r->operation, ops, r->reason_id, ex,
			       no, re);
		else if (!arr)
			printf("  %s: refused whole: %s: %s\n", cli_esc(path), nbg_code_name(verdict),
			       cli_esc_msg(e.message));
		if (!arr && nbg_cpu_plan_caveat(p))
			printf("    caveat: %s\n", nbg_cpu_plan_caveat(p));
		char *doc = arr ? nbg_cpu_plan_json(p, 0) : NULL;
		json_t *plan = doc ? json_loads(doc, 0, NULL) : NULL;
		free(doc);
		if (arr && !json_is_object(plan)) {
			fprintf(stderr, "nbg probe: out of memory writing the report\n");
			rc = NBG_EXIT_IO;
		}
		json_object_update(o, plan);
		json_decref(plan);
	}
	if (arr)
		json_array_append(arr, o);
	json_decref(o);
	nbg_cpu_plan_free(p);
	cli_loaded_free(&l);
	return rc;
}

int cli_cmd_probe(int argc, char **argv)
{
	cli_probe_opts o = { 0 };
	const char **models = NULL;
	int n, worst = 0;

	int prc = cli_parse_operands("probe", argc, argv, &o, &models, &n);
	if (prc != NBG_EXIT_OK) {
		free(models);
		return prc;
	}
	const char *root = o.device_root, *nnsdk = o.nnsdk, *vip = o.viplite;
	int json = o.json;
	unsigned flags = o.no_isolate ? NBG_RT_SESSION_NO_ISOLATE : 0;
	static nbg_rt_machine m; /* about 35 KB: not on the stack */
	nbg_error e;
	if (nbg_rt_machine_probe(root, nnsdk, vip, flags, &m, &e) != NBG_OK) {
		fprintf(stderr, "nbg probe: %s: %s\n", nbg_code_name(e.code), cli_esc_msg(e.message));
		free(models);
		return NBG_EXIT_USAGE;
	}
	if (json) {
		char *s = nbg_rt_machine_json(&m);
		json_t *doc = s ? json_loads(s, 0, NULL) : NULL, *cpu = json_object(),
		       *arr = json_array();
		free(s);
		for (int i = 0; i < n; i++) {
			int rc = probe_cpu(models[i], arr);
			worst = rc > worst ? rc : worst;
		}
		json_object_set_new(cpu, "available", json_true());
		json_object_set_new(cpu, "models", arr);
		s = doc && !json_object_set_new(doc, "cpu_backend", cpu)
			    ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
			    : NULL;
		json_decref(doc);
		if (!s) {
			free(models);
			fprintf(stderr, "nbg probe: out of memory writing the report\n");
			return NBG_EXIT_IO;
		}
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	} else {
		print_machine(&m);
		printf("CPU backend (nbg run --backend cpu): available, needs no device%s\n",
		       n ? "" : "; nbg probe MODEL... says which models it runs");
		for (int i = 0; i < n; i++) {
			int rc = probe_cpu(models[i], NULL);
			worst = rc > worst ? rc : worst;
		}
	}
	free(models);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "nbg probe: cannot write the report\n");
		return NBG_EXIT_IO;
	}
	if (!m.devices.npu_present) {
		fprintf(stderr, "nbg probe: no NPU device found under %s\n",
			cli_esc(m.devices.device_root));
	}
	return worst ? worst : m.ready ? NBG_EXIT_OK : NBG_EXIT_RUNTIME;
}

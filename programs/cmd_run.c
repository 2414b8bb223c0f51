/*
 * cmd_run.c - `nbg probe` and `nbg run`: drive a compiled NBG through the
 * vendor's libnnsdk.so (see doc/runtime.md).  Outputs are written under
 * temporary names and renamed only when the whole run succeeded, so a failed
 * run never leaves partial files behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "cmd_run.h"
#include "nbg/runtime.h"

/* ------------------------------------------------------------ helpers */

static void print_rt_error(const char *cmd, const nbg_error *e)
{
	fprintf(stderr, "nbg %s: %s: %s\n", cmd, nbg_code_name(e->code), e->message);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void hex32(const uint8_t d[32], char out[65])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[64] = 0;
}

static json_t *json_hex32(const uint8_t d[32])
{
	char h[65];
	hex32(d, h);
	return json_string(h);
}

static json_t *json_hex_u32(uint32_t v)
{
	char b[16];
	snprintf(b, sizeof(b), "0x%08x", v);
	return json_string(b);
}

/* Names come from the model file and paths from the command line: neither is
 * guaranteed UTF-8, and json_string() rejects what is not. */
static json_t *json_text(const char *s)
{
	char *e = nbg_text_escape(s, SIZE_MAX);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

static json_t *json_shape(const nbg_io *io)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < io->dim_count; i++)
		json_array_append_new(a, json_integer(nbg_io_dim_outer(io, i)));
	return a;
}

static void print_shape(FILE *f, const nbg_io *io)
{
	fputc('[', f);
	for (uint32_t i = 0; i < io->dim_count; i++)
		fprintf(f, "%s%u", i ? "," : "", nbg_io_dim_outer(io, i));
	fputc(']', f);
}

static const char *format_name(uint32_t fmt)
{
	const char *n = nbg_data_format_name(fmt);
	return n ? n : "unknown";
}

/* A finite double as a JSON real, NaN/inf as null (JSON has no infinity). */
static json_t *json_finite(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* ------------------------------------------------------------ probe */

int nbg_cmd_probe(int argc, char **argv)
{
	const char *root = NULL, *nnsdk = NULL;
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--device-root") && i + 1 < argc)
			root = argv[++i];
		else if (!strcmp(argv[i], "--nnsdk") && i + 1 < argc)
			nnsdk = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: nbg probe [--device-root DIR] [--nnsdk PATH] [--json]\n");
			return NBG_EXIT_OK;
		} else {
			fprintf(stderr, "nbg probe: unknown or incomplete option '%s'\n"
					"usage: nbg probe [--device-root DIR] [--nnsdk PATH] [--json]\n",
				argv[i]);
			return NBG_EXIT_USAGE;
		}
	}

	nbg_rt_probe p;
	nbg_error e;
	if (nbg_rt_probe_devices(root, &p, &e) != NBG_OK) {
		print_rt_error("probe", &e);
		return NBG_EXIT_USAGE;
	}

	/* The library is checked too: "ready" means `nbg run` can get as far as
	 * aml_module_create. */
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = nnsdk, .device_root = p.device_root,
			     .flags = NBG_RT_OPEN_SKIP_PROBE };
	nbg_runtime *rt = NULL;
	nbg_error le;
	nbg_code lc = nbg_runtime_open(&o, &rt, &le);
	const char *libpath = rt ? nbg_runtime_library_path(rt) : NULL;
	int has_flush = nbg_runtime_has_flush(rt);
	int ready = p.nbg_capable && lc == NBG_OK;

	if (json) {
		json_t *doc = json_object();
		json_object_set_new(doc, "device_root", json_string(p.device_root));
		json_t *nodes = json_array();
		for (int i = 0; i < NBG_RT_PROBE_NODES; i++) {
			const nbg_rt_probe_node *n = &p.nodes[i];
			json_t *jn = json_object();
			json_object_set_new(jn, "name", json_string(n->name));
			json_object_set_new(jn, "path", json_string(n->path));
			json_object_set_new(jn, "present", json_boolean(n->present));
			json_object_set_new(jn, "char_device", json_boolean(n->is_char_device));
			json_object_set_new(jn, "backend", json_integer(n->backend));
			json_object_set_new(jn, "backend_name", json_string(nbg_rt_backend_name(n->backend)));
			json_array_append_new(nodes, jn);
		}
		json_object_set_new(doc, "nodes", nodes);
		json_object_set_new(doc, "backend", json_integer(p.backend));
		json_object_set_new(doc, "backend_name", json_string(nbg_rt_backend_name(p.backend)));
		json_object_set_new(doc, "npu_present", json_boolean(p.npu_present));
		json_object_set_new(doc, "nbg_capable", json_boolean(p.nbg_capable));
		json_t *lib = json_object();
		json_object_set_new(lib, "loaded", json_boolean(lc == NBG_OK));
		if (lc == NBG_OK) {
			json_object_set_new(lib, "path", json_string(libpath));
			json_object_set_new(lib, "flush", json_boolean(has_flush));
		} else {
			json_object_set_new(lib, "error", json_string(nbg_code_name(lc)));
			json_object_set_new(lib, "message", json_string(le.message));
		}
		json_object_set_new(doc, "library", lib);
		json_object_set_new(doc, "ready", json_boolean(ready));
		char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		json_decref(doc);
		if (s)
			puts(s);
		free(s);
	} else {
		printf("device root: %s\n", p.device_root);
		for (int i = 0; i < NBG_RT_PROBE_NODES; i++) {
			const nbg_rt_probe_node *n = &p.nodes[i];
			printf("  %-8s %-8s backend %d (%s)%s\n", n->name,
			       n->present ? "present" : "absent", n->backend,
			       nbg_rt_backend_name(n->backend),
			       n->present && !n->is_char_device ? ", not a character device" : "");
		}
		if (p.backend == NBG_RT_BACKEND_NONE || p.backend == NBG_RT_BACKEND_GPU)
			printf("NPU: none found under %s%s\n", p.device_root,
			       p.backend == NBG_RT_BACKEND_GPU ? " (mali0 is a GPU; libnnsdk would "
								 "use its TFLite delegate)" : "");
		else
			printf("NPU: backend %d (%s)%s\n", p.backend, nbg_rt_backend_name(p.backend),
			       p.nbg_capable ? "" : ", which does not run VeriSilicon NBG files");
		if (lc == NBG_OK)
			printf("libnnsdk: %s loaded, all entry points resolved, flush %s\n", libpath,
			       has_flush ? "available" : "absent");
		else
			printf("libnnsdk: %s: %s\n", nbg_code_name(lc), le.message);
		printf("ready to run NBG files: %s\n", ready ? "yes" : "no");
	}
	nbg_runtime_close(rt);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "nbg probe: cannot write the report\n");
		return NBG_EXIT_IO;
	}
	if (!p.npu_present)
		fprintf(stderr, "nbg probe: no NPU device found under %s\n", p.device_root);
	return ready ? NBG_EXIT_OK : NBG_EXIT_RUNTIME;
}

/* -------------------------------------------------------------- run */

typedef struct run_args {
	const char *model;
	const char **inputs;
	size_t input_count;
	const char **goldens;
	size_t golden_count;
	const char *output_dir;
	const char *nnsdk;
	const char *device_root;
	unsigned long loops;
	double tolerance;
	int tolerance_given;
	int float32_outputs;
	int input_kind_given;
	uint32_t input_kind;
} run_args;

/* A file written under a temporary name in the output directory. */
typedef struct staged_file {
	char tmp[NBG_RT_PATH_MAX];
	char final[NBG_RT_PATH_MAX];
	int written;  /* tmp exists */
	int renamed;  /* final exists (ours) */
} staged_file;

static const char run_usage[] =
	"usage: nbg run MODEL.nb --input FILE... --output-dir DIR [--loops N]\n"
	"               [--golden FILE... [--tolerance X]] [--nnsdk PATH]\n"
	"               [--device-root DIR] [--float32-outputs] [--input-kind N]\n";

static int run_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("nbg run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs(run_usage, stderr);
	return NBG_EXIT_USAGE;
}

/* Collects the values after a list option (up to the next option). */
static int take_list(int argc, char **argv, int *i, const char ***list, size_t *count)
{
	int start = *i + 1, end = start;
	while (end < argc && !(argv[end][0] == '-' && argv[end][1]))
		end++;
	if (end == start)
		return -1;
	const char **grown = realloc(*list, (*count + (size_t)(end - start)) * sizeof(**list));
	if (!grown)
		return -2;
	*list = grown;
	for (int k = start; k < end; k++)
		(*list)[(*count)++] = argv[k];
	*i = end - 1;
	return 0;
}

static int parse_run_args(int argc, char **argv, run_args *a)
{
	memset(a, 0, sizeof(*a));
	a->loops = 1;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		int r;
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			fputs(run_usage, stdout);
			return -1;
		} else if (!strcmp(s, "--input")) {
			if ((r = take_list(argc, argv, &i, &a->inputs, &a->input_count)) != 0)
				return r == -2 ? NBG_EXIT_IO : run_usage_error("%s needs at least one file", s);
		} else if (!strcmp(s, "--golden")) {
			if ((r = take_list(argc, argv, &i, &a->goldens, &a->golden_count)) != 0)
				return r == -2 ? NBG_EXIT_IO : run_usage_error("%s needs at least one file", s);
		} else if (!strcmp(s, "--float32-outputs")) {
			a->float32_outputs = 1;
		} else if (!strcmp(s, "--output-dir") || !strcmp(s, "--loops") ||
			   !strcmp(s, "--tolerance") || !strcmp(s, "--nnsdk") ||
			   !strcmp(s, "--device-root") || !strcmp(s, "--input-kind")) {
			if (i + 1 >= argc)
				return run_usage_error("%s needs a value", s);
			const char *v = argv[++i];
			if (!strcmp(s, "--output-dir")) {
				a->output_dir = v;
			} else if (!strcmp(s, "--nnsdk")) {
				a->nnsdk = v;
			} else if (!strcmp(s, "--device-root")) {
				a->device_root = v;
			} else if (!strcmp(s, "--loops")) {
				char *end;
				errno = 0;
				unsigned long n = strtoul(v, &end, 10);
				if (errno || *end || !*v || v[0] == '-' || n < 1 || n > 1000000)
					return run_usage_error("--loops wants an integer 1..1000000, got '%s'", v);
				a->loops = n;
			} else if (!strcmp(s, "--input-kind")) {
				char *end;
				errno = 0;
				unsigned long k = strtoul(v, &end, 0);
				if (errno || *end || !*v || v[0] == '-' || k > 255)
					return run_usage_error("--input-kind wants an integer 0..255, got '%s'", v);
				a->input_kind = (uint32_t)k;
				a->input_kind_given = 1;
			} else {
				char *end;
				errno = 0;
				double t = strtod(v, &end);
				if (errno || *end || !*v || !isfinite(t) || t < 0)
					return run_usage_error("--tolerance wants a number >= 0, got '%s'", v);
				a->tolerance = t;
				a->tolerance_given = 1;
			}
		} else if (s[0] == '-' && s[1]) {
			return run_usage_error("unknown option '%s'", s);
		} else if (!a->model) {
			a->model = s;
		} else {
			return run_usage_error("one model at a time (got '%s' too; inputs follow --input)", s);
		}
	}
	if (!a->model)
		return run_usage_error("%s", "no model given");
	if (!a->input_count)
		return run_usage_error("%s", "no --input given (one raw file per model input)");
	if (!a->output_dir)
		return run_usage_error("%s", "no --output-dir given");
	if (a->tolerance_given && !a->golden_count)
		return run_usage_error("%s", "--tolerance only applies with --golden");
	return 0;
}

static int ensure_dir(const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "nbg run: cannot create output directory %s: %s\n", dir, strerror(errno));
		return NBG_EXIT_IO;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nbg run: %s is not a directory\n", dir);
		return NBG_EXIT_IO;
	}
	return 0;
}

/* Writes data to a new temporary file next to DIR/name. */
static int stage_file(const char *dir, const char *name, const void *data, size_t size,
		      staged_file *f)
{
	memset(f, 0, sizeof(*f));
	int n1 = snprintf(f->final, sizeof(f->final), "%s/%s", dir, name);
	int n2 = snprintf(f->tmp, sizeof(f->tmp), "%s/.%s.tmp.XXXXXX", dir, name);
	if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof(f->final) || (size_t)n2 >= sizeof(f->tmp)) {
		fprintf(stderr, "nbg run: output path under %s is too long\n", dir);
		return NBG_EXIT_IO;
	}
	int fd = mkstemp(f->tmp);
	if (fd < 0) {
		fprintf(stderr, "nbg run: cannot create a file in %s: %s\n", dir, strerror(errno));
		return NBG_EXIT_IO;
	}
	f->written = 1;
	const uint8_t *p = data;
	size_t left = size;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "nbg run: cannot write %s: %s\n", f->tmp,
				w < 0 ? strerror(errno) : "short write");
			close(fd);
			return NBG_EXIT_IO;
		}
		p += w;
		left -= (size_t)w;
	}
	/* mkstemp makes 0600 files; give outputs the usual umask-governed mode. */
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um) != 0 || fsync(fd) != 0 || close(fd) != 0) {
		fprintf(stderr, "nbg run: cannot finish %s: %s\n", f->tmp, strerror(errno));
		return NBG_EXIT_IO;
	}
	return 0;
}

/* Removes every temporary and every file this run already renamed. */
static void discard_staged(staged_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (files[i].written)
			unlink(files[i].tmp);
		if (files[i].renamed)
			unlink(files[i].final);
		files[i].written = files[i].renamed = 0;
	}
}

static int commit_staged(staged_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (rename(files[i].tmp, files[i].final) != 0) {
			fprintf(stderr, "nbg run: cannot rename %s to %s: %s\n", files[i].tmp,
				files[i].final, strerror(errno));
			discard_staged(files, n);
			return NBG_EXIT_IO;
		}
		files[i].written = 0;
		files[i].renamed = 1;
	}
	return 0;
}

typedef struct stat_acc {
	double first, min, max, sum;
	unsigned long n;
} stat_acc;

static void stat_add(stat_acc *s, double v)
{
	if (s->n == 0)
		s->first = s->min = s->max = v;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->sum += v;
	s->n++;
}

static json_t *stat_json(const stat_acc *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "first", json_real(s->first));
	json_object_set_new(o, "min", json_real(s->min));
	json_object_set_new(o, "mean", json_real(s->n ? s->sum / (double)s->n : 0));
	json_object_set_new(o, "max", json_real(s->max));
	return o;
}

static int rt_exit(const char *cmd, const nbg_error *e)
{
	print_rt_error(cmd, e);
	if (e->code == NBG_E_MODEL_INVALID)
		fprintf(stderr, "nbg %s: parser: %s at offset %llu, field %s\n", cmd,
			nbg_code_name(e->cause), (unsigned long long)e->offset,
			e->field[0] ? e->field : "-");
	return nbg_code_exit(e->code);
}

/* Everything one nbg run holds, released by run_cleanup(). */
typedef struct run_state {
	run_args a;
	nbg_loaded model;
	const nbg_model *m;
	size_t n_in, n_out;
	nbg_mapping *in_maps, *gold_maps;
	nbg_rt_buffer *bufs;
	nbg_rt_output *outs, *kept; /* kept: outs after destroy (digests, sizes; no data) */
	nbg_rt_compare_result *cmp;
	uint8_t (*first_digest)[32];
	int *stable;
	staged_file *staged;
	size_t staged_count;
	nbg_runtime *rt;
	const nbg_rt_probe *pr;
	nbg_rt_graph *g;
	json_t *summary;
	nbg_error e;
	int golden_ok, committed;
	double create_ms, destroy_ms;
	stat_acc st_set, st_run, st_get;
} run_state;

/* Inputs: count and sizes against the NBG records, mapped. */
static int run_inputs(run_state *s)
{
	int rc = NBG_EXIT_OK;

	/* 2. Inputs: count and sizes against the NBG records. */
	if (s->a.input_count != s->n_in) {
		fprintf(stderr, "nbg run: input-count-mismatch: %zu --input file%s given; %s declares %zu input%s\n",
			s->a.input_count, s->a.input_count == 1 ? "" : "s", s->a.model, s->n_in, s->n_in == 1 ? "" : "s");
		rc = nbg_code_exit(NBG_E_INPUT_COUNT_MISMATCH);
		return rc;
	}
	if (s->a.golden_count && s->a.golden_count != s->n_out) {
		fprintf(stderr, "nbg run: %zu --golden file%s given; %s declares %zu output%s\n",
			s->a.golden_count, s->a.golden_count == 1 ? "" : "s", s->a.model, s->n_out, s->n_out == 1 ? "" : "s");
		rc = NBG_EXIT_USAGE;
		return rc;
	}
	s->in_maps = calloc(s->n_in ? s->n_in : 1, sizeof(*s->in_maps));
	s->bufs = calloc(s->n_in ? s->n_in : 1, sizeof(*s->bufs));
	s->gold_maps = calloc(s->n_out ? s->n_out : 1, sizeof(*s->gold_maps));
	s->outs = calloc(s->n_out ? s->n_out : 1, sizeof(*s->outs));
	s->cmp = calloc(s->n_out ? s->n_out : 1, sizeof(*s->cmp));
	s->first_digest = calloc(s->n_out ? s->n_out : 1, sizeof(*s->first_digest));
	s->stable = calloc(s->n_out ? s->n_out : 1, sizeof(*s->stable));
	s->staged = calloc(s->n_out + 1, sizeof(*s->staged));
	if (!s->in_maps || !s->bufs || !s->gold_maps || !s->outs || !s->cmp || !s->first_digest || !s->stable || !s->staged) {
		fprintf(stderr, "nbg run: out of memory\n");
		rc = NBG_EXIT_RUNTIME;
		return rc;
	}
	for (size_t i = 0; i < s->n_in; i++) {
		nbg_error ferr;
		if (nbg_map_file(s->a.inputs[i], &s->in_maps[i], &ferr) != 0) {
			fprintf(stderr, "nbg run: %s\n", ferr.message);
			rc = NBG_EXIT_IO;
			return rc;
		}
		const nbg_io *io = &s->m->inputs[i];
		if (!io->byte_size_known) {
			fprintf(stderr, "nbg run: io-size-unknown: input %zu has data format %u, whose byte size is not known\n",
				i, io->data_format);
			rc = NBG_EXIT_INVALID;
			return rc;
		}
		if (s->in_maps[i].size != io->byte_size) {
			fprintf(stderr, "nbg run: input-size-mismatch: %s has %zu bytes; input %zu (%s ",
				s->a.inputs[i], s->in_maps[i].size, i, format_name(io->data_format));
			print_shape(stderr, io);
			fprintf(stderr, ") needs %llu\n", (unsigned long long)io->byte_size);
			rc = nbg_code_exit(NBG_E_INPUT_SIZE_MISMATCH);
			return rc;
		}
		s->bufs[i].data = s->in_maps[i].data;
		s->bufs[i].size = s->in_maps[i].size;
	}
	return rc;
}

/* The runtime, the graph, the goldens and the output directory. */
static int run_create(run_state *s)
{
	int rc = NBG_EXIT_OK;

	/* 3. The runtime: probe, library, graph. */
	nbg_rt_options o = { .size = sizeof(o), .nnsdk_path = s->a.nnsdk, .device_root = s->a.device_root,
			     .float32_outputs = s->a.float32_outputs, .input_kind = s->a.input_kind,
			     .flags = s->a.input_kind_given ? NBG_RT_OPEN_INPUT_KIND : 0 };
	if (nbg_runtime_open(&o, &s->rt, &s->e) != NBG_OK) {
		return rt_exit("run", &s->e);
	}
	double t0 = now_ms();
	if (nbg_rt_graph_create(s->rt, s->model.map.data, s->model.map.size, &s->g, &s->e) != NBG_OK) {
		return rt_exit("run", &s->e);
	}
	s->create_ms = now_ms() - t0;

	/* 4. Goldens: count, size and format checked before the first run. */
	for (size_t i = 0; i < s->a.golden_count; i++) {
		nbg_error ferr;
		if (nbg_map_file(s->a.goldens[i], &s->gold_maps[i], &ferr) != 0) {
			fprintf(stderr, "nbg run: %s\n", ferr.message);
			rc = NBG_EXIT_IO;
			return rc;
		}
		size_t want = nbg_rt_graph_output_size(s->g, i);
		if (s->gold_maps[i].size != want) {
			fprintf(stderr, "nbg run: golden %s has %zu bytes; output %zu has %zu (%s)\n",
				s->a.goldens[i], s->gold_maps[i].size, i, want,
				format_name(nbg_rt_graph_output_format(s->g, i)));
			rc = NBG_EXIT_USAGE;
			return rc;
		}
		nbg_rt_compare_result probe_cmp;
		if (nbg_rt_compare(s->gold_maps[i].data, s->gold_maps[i].data, 0, nbg_rt_graph_output_format(s->g, i),
				   s->a.tolerance, &probe_cmp, &s->e) != NBG_OK) {
			return rt_exit("run", &s->e);
		}
	}

	rc = ensure_dir(s->a.output_dir);
	if (rc)
		return rc;
	return rc;
}

/* The loops; timings and output digests per loop. */
static int run_loops(run_state *s)
{
	int rc = NBG_EXIT_OK;

	/* 5. Loops: set inputs, execute (perfMode 1), retrieve (perfMode 2). */
	for (unsigned long loop = 0; loop < s->a.loops; loop++) {
		double t1 = now_ms();
		if (nbg_rt_graph_set_inputs(s->g, s->bufs, s->n_in, &s->e) != NBG_OK)
			return rt_exit("run", &s->e);
		double t2 = now_ms();
		if (nbg_rt_graph_execute(s->g, &s->e) != NBG_OK)
			return rt_exit("run", &s->e);
		double t3 = now_ms();
		if (nbg_rt_graph_retrieve(s->g, s->outs, s->n_out, &s->e) != NBG_OK)
			return rt_exit("run", &s->e);
		double t4 = now_ms();
		stat_add(&s->st_set, t2 - t1);
		stat_add(&s->st_run, t3 - t2);
		stat_add(&s->st_get, t4 - t3);
		for (size_t i = 0; i < s->n_out; i++) {
			if (loop == 0) {
				memcpy(s->first_digest[i], s->outs[i].sha256, 32);
				s->stable[i] = 1;
			} else if (memcmp(s->first_digest[i], s->outs[i].sha256, 32) != 0) {
				s->stable[i] = 0;
			}
		}
	}
	return rc;
}

/* Outputs staged and compared, then the graph destroyed. */
static int run_outputs(run_state *s)
{
	int rc = NBG_EXIT_OK;

	/* 6. Outputs of the last loop, staged before the vendor memory goes away. */
	for (size_t i = 0; i < s->n_out; i++) {
		char name[64];
		snprintf(name, sizeof(name), "output_%zu.bin", i);
		rc = stage_file(s->a.output_dir, name, s->outs[i].data, s->outs[i].size, &s->staged[s->staged_count]);
		s->staged_count++;
		if (rc)
			return rc;
		if (s->a.golden_count) {
			if (nbg_rt_compare(s->outs[i].data, s->gold_maps[i].data, s->outs[i].size,
					   s->outs[i].data_format, s->a.tolerance, &s->cmp[i], &s->e) != NBG_OK) {
				return rt_exit("run", &s->e);
			}
			if (s->cmp[i].mismatches)
				s->golden_ok = 0;
		}
	}

	/* 7. Destroy before committing anything: a failed destroy fails the run. */
	s->kept = s->outs;
	for (size_t i = 0; i < s->n_out; i++)
		s->kept[i].data = NULL;
	double t0 = now_ms();
	if (nbg_rt_graph_destroy(&s->g, &s->e) != NBG_OK) {
		return rt_exit("run", &s->e);
	}
	s->destroy_ms = now_ms() - t0;
	return rc;
}

/* summary.json: model, runtime, inputs, outputs, timings, goldens. */
static json_t *summary_json(const run_state *s)
{
	/* 8. summary.json, then the renames. */
	json_t *summary = json_object();
	json_object_set_new(summary, "nbgkit_version", json_string(nbg_version_string()));
	json_t *jm = json_object();
	json_object_set_new(jm, "path", json_string(s->a.model));
	json_object_set_new(jm, "bytes", json_integer((json_int_t)s->model.map.size));
	json_object_set_new(jm, "sha256", json_hex32(s->m->file_sha256));
	json_object_set_new(jm, "version", json_hex_u32(s->m->version));
	json_object_set_new(jm, "target", json_hex_u32(s->m->target));
	json_object_set_new(summary, "model", jm);
	json_t *jr = json_object();
	json_object_set_new(jr, "library", json_string(nbg_runtime_library_path(s->rt)));
	json_object_set_new(jr, "device_root", json_string(s->pr->device_root));
	json_object_set_new(jr, "backend", json_integer(s->pr->backend));
	json_object_set_new(jr, "backend_name", json_string(nbg_rt_backend_name(s->pr->backend)));
	json_object_set_new(jr, "flush", json_boolean(nbg_runtime_has_flush(s->rt)));
	json_object_set_new(jr, "output_format", json_string(s->a.float32_outputs ? "float32" : "raw"));
	json_object_set_new(jr, "input_kind", json_integer(nbg_runtime_input_kind(s->rt)));
	json_object_set_new(summary, "runtime", jr);
	json_object_set_new(summary, "loops", json_integer((json_int_t)s->a.loops));
	json_t *ji = json_array();
	for (size_t i = 0; i < s->n_in; i++) {
		uint8_t d[32];
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		json_object_set_new(x, "file", json_string(s->a.inputs[i]));
		json_object_set_new(x, "shape", json_shape(&s->m->inputs[i]));
		json_object_set_new(x, "format", json_string(format_name(s->m->inputs[i].data_format)));
		json_object_set_new(x, "bytes", json_integer((json_int_t)s->in_maps[i].size));
		if (nbg_rt_sha256(s->in_maps[i].data, s->in_maps[i].size, d) == NBG_OK)
			json_object_set_new(x, "sha256", json_hex32(d));
		json_array_append_new(ji, x);
	}
	json_object_set_new(summary, "inputs", ji);
	json_t *jo = json_array();
	for (size_t i = 0; i < s->n_out; i++) {
		const nbg_rt_output *op = &s->kept[i];
		json_t *x = json_object();
		const char *slash = strrchr(s->staged[i].final, '/');
		json_object_set_new(x, "index", json_integer((json_int_t)i));
		if (s->m->outputs[i].has_name)
			json_object_set_new(x, "name", json_text(s->m->outputs[i].name));
		json_object_set_new(x, "file", json_text(slash ? slash + 1 : s->staged[i].final));
		json_object_set_new(x, "shape", json_shape(&s->m->outputs[i]));
		json_object_set_new(x, "format", json_string(format_name(op->data_format)));
		json_object_set_new(x, "bytes", json_integer((json_int_t)op->size));
		json_object_set_new(x, "reported_bytes", json_integer(op->reported_size));
		json_object_set_new(x, "sha256", json_hex32(op->sha256));
		json_object_set_new(x, "stable_across_loops", json_boolean(s->stable[i]));
		json_array_append_new(jo, x);
	}
	json_object_set_new(summary, "outputs", jo);
	json_t *jt = json_object();
	json_object_set_new(jt, "create", json_real(s->create_ms));
	json_object_set_new(jt, "input_set", stat_json(&s->st_set));
	json_object_set_new(jt, "run", stat_json(&s->st_run));
	json_object_set_new(jt, "retrieve", stat_json(&s->st_get));
	json_object_set_new(jt, "destroy", json_real(s->destroy_ms));
	json_object_set_new(summary, "timings_ms", jt);
	if (s->a.golden_count) {
		json_t *jg = json_object();
		json_object_set_new(jg, "tolerance", json_real(s->a.tolerance));
		json_object_set_new(jg, "match", json_boolean(s->golden_ok));
		json_t *ja = json_array();
		for (size_t i = 0; i < s->n_out; i++) {
			json_t *x = json_object();
			json_object_set_new(x, "index", json_integer((json_int_t)i));
			json_object_set_new(x, "file", json_string(s->a.goldens[i]));
			json_object_set_new(x, "format", json_string(format_name(s->kept[i].data_format)));
			json_object_set_new(x, "elements", json_integer((json_int_t)s->cmp[i].elements));
			json_object_set_new(x, "mismatches", json_integer((json_int_t)s->cmp[i].mismatches));
			json_object_set_new(x, "first_mismatch", s->cmp[i].mismatches
				? json_integer((json_int_t)s->cmp[i].first_mismatch) : json_null());
			json_object_set_new(x, "max_abs_diff", json_finite(s->cmp[i].max_abs_diff));
			json_object_set_new(x, "match", json_boolean(s->cmp[i].mismatches == 0));
			json_array_append_new(ja, x);
		}
		json_object_set_new(jg, "outputs", ja);
		json_object_set_new(summary, "golden", jg);
	}
	json_object_set_new(summary, "result", json_string(s->golden_ok ? "ok" : "golden-mismatch"));
	return summary;
}

/* summary.json staged, then every staged file renamed into place. */
static int run_commit(run_state *s)
{
	int rc;

	char *text = json_dumps(s->summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text) {
		fprintf(stderr, "nbg run: out of memory writing summary.json\n");
		rc = NBG_EXIT_IO;
		return rc;
	}
	size_t tl = strlen(text);
	text[tl] = '\n'; /* the file ends with a newline: it takes the NUL's byte */
	rc = stage_file(s->a.output_dir, "summary.json", text, tl + 1, &s->staged[s->staged_count]);
	free(text);
	s->staged_count++;
	if (rc)
		return rc;
	rc = commit_staged(s->staged, s->staged_count);
	if (rc)
		return rc;
	s->committed = 1;
	return rc;
}

/* What the run did, on stdout. */
static int run_report(run_state *s, int rc)
{
	/* 9. Report. */
	printf("model: %s (target 0x%08x), %lu loop%s on %s via %s\n", s->a.model, s->m->target, s->a.loops,
	       s->a.loops == 1 ? "" : "s", nbg_rt_backend_name(s->pr->backend), nbg_runtime_library_path(s->rt));
	printf("times: create %.3f ms, run %.3f ms (mean), retrieve %.3f ms (mean), destroy %.3f ms\n",
	       s->create_ms, s->st_run.sum / (double)s->st_run.n, s->st_get.sum / (double)s->st_get.n, s->destroy_ms);
	for (size_t i = 0; i < s->n_out; i++) {
		char h[65];
		hex32(s->kept[i].sha256, h);
		printf("output %zu: %s ", i, format_name(s->kept[i].data_format));
		print_shape(stdout, &s->m->outputs[i]);
		printf(" %zu bytes sha256 %s -> %s%s\n", s->kept[i].size, h, s->staged[i].final,
		       s->stable[i] ? "" : " (differs between loops)");
		if (s->a.golden_count)
			printf("  golden %s: %s, %llu/%llu elements beyond %g, max abs diff %g\n",
			       s->a.goldens[i], s->cmp[i].mismatches ? "MISMATCH" : "match",
			       (unsigned long long)s->cmp[i].mismatches, (unsigned long long)s->cmp[i].elements,
			       s->a.tolerance, s->cmp[i].max_abs_diff);
	}
	printf("summary: %s\n", s->staged[s->staged_count - 1].final);
	if (!s->golden_ok) {
		fprintf(stderr, "nbg run: golden mismatch (see summary.json)\n");
		rc = NBG_EXIT_INVALID;
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = rc ? rc : NBG_EXIT_IO;
	return rc;
}

static int run_cleanup(run_state *s, int rc)
{
	if (s->staged && !s->committed)
		discard_staged(s->staged, s->staged_count);
	if (s->g) {
		nbg_error de;
		if (nbg_rt_graph_destroy(&s->g, &de) != NBG_OK) {
			print_rt_error("run", &de);
			if (rc == NBG_EXIT_OK)
				rc = NBG_EXIT_RUNTIME;
		}
	}
	nbg_runtime_close(s->rt);
	json_decref(s->summary);
	if (s->in_maps)
		for (size_t i = 0; i < s->n_in; i++)
			nbg_unmap_file(&s->in_maps[i]);
	if (s->gold_maps)
		for (size_t i = 0; i < s->n_out; i++)
			nbg_unmap_file(&s->gold_maps[i]);
	free(s->in_maps);
	free(s->gold_maps);
	free(s->bufs);
	free(s->outs);
	free(s->cmp);
	free(s->first_digest);
	free(s->stable);
	free(s->staged);
	nbg_loaded_free(&s->model);
	free(s->a.inputs);
	free(s->a.goldens);
	return rc;
}

int nbg_cmd_run(int argc, char **argv)
{
	run_state st, *s = &st;
	int rc;

	memset(s, 0, sizeof(*s));
	s->golden_ok = 1;
	rc = parse_run_args(argc, argv, &s->a);
	if (rc != 0) {
		free(s->a.inputs);
		free(s->a.goldens);
		return rc < 0 ? NBG_EXIT_OK : rc;
	}

	/* 1. The model: validated before anything touches the device. */
	rc = nbg_load(s->a.model, NULL, &s->model);
	if (rc != NBG_EXIT_OK) {
		nbg_print_error(s->a.model, &s->model);
		if (rc == NBG_EXIT_INVALID)
			fprintf(stderr, "nbg run: model-invalid: refusing to run a file that fails validation\n");
		nbg_loaded_free(&s->model);
		free(s->a.inputs);
		free(s->a.goldens);
		return rc;
	}
	s->m = s->model.model;
	s->n_in = s->m->input_count;
	s->n_out = s->m->output_count;

	if ((rc = run_inputs(s)) == NBG_EXIT_OK && (rc = run_create(s)) == NBG_EXIT_OK &&
	    (rc = run_loops(s)) == NBG_EXIT_OK && (rc = run_outputs(s)) == NBG_EXIT_OK) {
		s->pr = nbg_runtime_probe(s->rt);
		s->summary = summary_json(s);
		if ((rc = run_commit(s)) == NBG_EXIT_OK)
			rc = run_report(s, rc);
	}
	return run_cleanup(s, rc);
}

/*
 * cmd_corpus.c - `nbg corpus`: corpus-wide invariants, one record per file,
 * manifests and mergeable parts (doc/corpus.md).
 *
 *   nbg corpus [--json] [--quiet] [--jobs N] [--records FILE|-]
 *              [--write-manifest FILE] [--follow] PATH...
 *   nbg corpus --merge [--json] PART.json...
 *
 * The files of every PATH (a file, a directory walked for *.nb, or a
 * manifest in sha256sum format) are listed first, in walk order, then
 * measured on N threads into a corpus aggregate of libnbg (nbg/corpus.h),
 * which holds the tables and prints them.  This file is the command:
 * arguments, the order of the steps, the report and the exit code.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "corpus_cli.h"

typedef struct opts {
	int json, quiet, follow, merge, jobs;
	const char *records, *manifest;
	char **paths;
	int npaths;
} opts;

static int usage(const char *why, const char *what)
{
	if (why)
		fprintf(stderr, "nbg corpus: %s%s%s%s\n", why, what ? " '" : "", what ? nbg_esc(what) : "",
			what ? "'" : "");
	fprintf(stderr,
		"usage: nbg corpus [--json] [--quiet] [--jobs N] [--records FILE|-]\n"
		"                  [--write-manifest FILE] [--follow] PATH...\n"
		"       nbg corpus --merge [--json] PART.json...\n");
	return NBG_EXIT_USAGE;
}

static int default_jobs(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)(n < 256 ? n : 256) : 1;
}

/* "--name VALUE" or "--name=VALUE"; NULL when argv[*i] is not --name. */
static const char *value_of(int argc, char **argv, int *i, const char *name, int *missing)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

static int parse_args(int argc, char **argv, opts *o)
{
	int dashdash = 0;

	memset(o, 0, sizeof(*o));
	o->paths = calloc((size_t)argc, sizeof(*o->paths));
	if (!o->paths)
		return usage("out of memory", NULL);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int missing = 0;
		if (dashdash || a[0] != '-' || !a[1])
			o->paths[o->npaths++] = argv[i];
		else if (!strcmp(a, "--"))
			dashdash = 1;
		else if (!strcmp(a, "--json"))
			o->json = 1;
		else if (!strcmp(a, "--quiet"))
			o->quiet = 1;
		else if (!strcmp(a, "--follow"))
			o->follow = 1;
		else if (!strcmp(a, "--merge"))
			o->merge = 1;
		else if ((v = value_of(argc, argv, &i, "--records", &missing)))
			o->records = v;
		else if ((v = value_of(argc, argv, &i, "--write-manifest", &missing)))
			o->manifest = v;
		else if ((v = value_of(argc, argv, &i, "--jobs", &missing))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 1 || n > 256)
				return usage("--jobs takes a number from 1 to 256, not", v);
			o->jobs = (int)n;
		} else
			return usage(missing ? "a value is missing after" : "unknown option", a);
	}
	if (!o->npaths)
		return usage(o->merge ? "--merge needs at least one part" : "no PATH given", NULL);
	if (o->merge && (o->records || o->manifest || o->jobs || o->follow))
		return usage("--merge combines parts; it takes only --json and --quiet", NULL);
	/* "-", /dev/stdout, /dev/fd/1 or the file standard output goes to */
	if (o->json && o->records && cli_out_is_stdout(o->records))
		return usage("--json and --records both want standard output:", o->records);
	if (o->json && o->manifest && cli_out_is_stdout(o->manifest))
		return usage("--json and --write-manifest both want standard output:", o->manifest);
	return NBG_EXIT_OK;
}

/* The report to `out`; 0, or NBG_EXIT_IO with a message when it could not
 * be written. */
static int report(const nbg_corpus *c, int json, FILE *out)
{
	int failed, e = 0;

	errno = 0;
	if (json) {
		char *s = nbg_corpus_json(c);
		if (!s) {
			corpus_warn("out of memory for the JSON report");
			return NBG_EXIT_IO;
		}
		failed = fputs(s, out) == EOF || fputc('\n', out) == EOF;
		free(s);
	} else {
		nbg_text_corpus(out, c);
		failed = ferror(out);
	}
	e = errno;
	if (fflush(out) != 0 || failed || ferror(out)) {
		corpus_warn("cannot write the report to %s: %s",
			    out == stdout ? "standard output" : "standard error",
			    strerror(errno ? errno : e ? e : EIO));
		return NBG_EXIT_IO;
	}
	return NBG_EXIT_OK;
}

static int worst(int a, int b)
{
	return a > b ? a : b; /* 3 (cannot read/write) > 1 (invalid) > 0 */
}

static int cmd_merge(const opts *o)
{
	nbg_corpus *all = nbg_corpus_new();
	int rc = all ? NBG_EXIT_OK : NBG_EXIT_IO;

	for (int i = 0; i < o->npaths && rc == NBG_EXIT_OK; i++) {
		char *text;
		size_t len;
		nbg_corpus *part = NULL;
		nbg_error err;
		int e = corpus_read_file(o->paths[i], &text, &len);
		if (e) {
			corpus_warn("cannot read part %s: %s", o->paths[i],
				    e == EINVAL ? "not a regular file" : strerror(e));
			rc = NBG_EXIT_IO;
			break;
		}
		if (nbg_corpus_from_json(text, len, o->paths[i], &part, &err) != NBG_OK) {
			corpus_warn("%s: %s", nbg_code_name(err.code), err.message);
			rc = nbg_code_exit(err.code);
		} else if ((e = nbg_corpus_merge(all, part)) == NBG_E_CORPUS_PART) {
			corpus_warn("%s: %s: counts do not add up: with the parts before it a count "
				    "passes 2^64-1", nbg_code_name(NBG_E_CORPUS_PART), o->paths[i]);
			rc = nbg_code_exit(NBG_E_CORPUS_PART);
		} else if (e != NBG_OK) {
			corpus_warn("out of memory merging %s", o->paths[i]);
			rc = NBG_EXIT_IO;
		}
		nbg_corpus_free(part);
		free(text);
	}
	if (rc == NBG_EXIT_OK)
		rc = worst(report(all, o->json, stdout), nbg_corpus_exit(all));
	nbg_corpus_free(all);
	return rc;
}

/* The records and manifest files, staged; the same file twice (by device
 * and inode, as cp compares: "x" and "./x", a link and its file, standard
 * output twice) is refused before anything is measured. */
static int open_outputs(const opts *o, cli_out *records, cli_out *manifest)
{
	int rc = 0;

	if (o->records)
		rc = cli_out_open(records, "corpus", o->records, CLI_OUT_STDOUT);
	if (!rc && o->manifest)
		rc = cli_out_open(manifest, "corpus", o->manifest, CLI_OUT_STDOUT);
	if (!rc && o->records && o->manifest && cli_out_same(records, manifest))
		rc = usage("--records and --write-manifest name the same file:", o->manifest);
	return rc;
}

/* The outputs renamed into place together when the run succeeded (and, when
 * a write to one failed, the failure reported and both removed); removed
 * otherwise. */
static int close_outputs(int rc, cli_out *records, cli_out *manifest)
{
	cli_out *outs[2];
	size_t n = 0;

	if (records->name)
		outs[n++] = records;
	if (manifest->name)
		outs[n++] = manifest;
	if (rc == NBG_EXIT_OK || records->err || manifest->err)
		rc = worst(rc, cli_out_commit_all(outs, n));
	cli_out_free(records);
	cli_out_free(manifest);
	return rc;
}

static int cmd_run(const opts *o)
{
	corpus_list list;
	cli_out records, manifest;
	nbg_corpus *agg = nbg_corpus_new();
	int rc, to_stdout;

	memset(&list, 0, sizeof(list));
	memset(&records, 0, sizeof(records));
	memset(&manifest, 0, sizeof(manifest));
	records.fd = manifest.fd = -1;
	records.slot = manifest.slot = -1;
	if (!agg) {
		corpus_warn("out of memory");
		return NBG_EXIT_IO;
	}
	if ((rc = open_outputs(o, &records, &manifest)) != 0) {
		cli_out_free(&records);
		cli_out_free(&manifest);
		nbg_corpus_free(agg);
		return rc;
	}
	/* an output on standard output sends the text report to stderr */
	to_stdout = records.to_stdout || manifest.to_stdout;
	corpus_walk w = { &list, agg, o->follow, o->quiet };
	for (int i = 0; i < o->npaths; i++)
		corpus_walk_path(&w, o->paths[i]);
	corpus_run run = { &list, o->jobs ? o->jobs : default_jobs(), o->quiet,
			   !o->quiet && isatty(STDERR_FILENO), o->records ? &records : NULL,
			   o->manifest ? &manifest : NULL, agg, nbg_env_limit("NBG_MAX_FILE_SIZE"),
			   nbg_env_limit("NBG_MAX_UNDESCRIBED") };
	rc = corpus_run_files(&run);
	rc = close_outputs(rc, &records, &manifest);
	if (rc == NBG_EXIT_OK)
		rc = worst(report(agg, o->json, to_stdout ? stderr : stdout), nbg_corpus_exit(agg));
	corpus_list_free(&list);
	nbg_corpus_free(agg);
	return rc;
}

int nbg_cmd_corpus(int argc, char **argv)
{
	opts o;
	int rc = parse_args(argc, argv, &o);

	if (rc == NBG_EXIT_OK)
		rc = o.merge ? cmd_merge(&o) : cmd_run(&o);
	free(o.paths);
	return rc;
}

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
 * measured on N threads into a corpus aggregate (corpus/corpus.h),
 * which holds the tables and prints them.  This file is the command:
 * arguments, the order of the steps, the report and the exit code.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "corpus_cli.h"

typedef cli_corpus_opts opts;

/* "nbg corpus: WHY 'WHAT'" and the synopsis; NBG_EXIT_USAGE. */
static int usage(const char *why, const char *what)
{
	if (what)
		return cli_usage("corpus", "%s '%s'", why, cli_esc(what));
	return cli_usage("corpus", "%s", why);
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

static int parse_args(int argc, char **argv, opts *o)
{
	int rc;

	memset(o, 0, sizeof(*o));
	rc = cli_parse_operands("corpus", argc, argv, o, &o->paths, &o->npaths);
	if (rc != NBG_EXIT_OK)
		return rc;
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
static int report(const corpus_agg *c, int json, FILE *out)
{
	int failed, e = 0;

	errno = 0;
	if (json) {
		char *s = corpus_json(c);
		if (!s) {
			corpus_warn("out of memory for the JSON report");
			return NBG_EXIT_IO;
		}
		failed = fputs(s, out) == EOF || fputc('\n', out) == EOF;
		free(s);
	} else {
		corpus_text(out, c);
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
	corpus_agg *all = corpus_agg_new();
	int rc = all ? NBG_EXIT_OK : NBG_EXIT_IO;

	for (int i = 0; i < o->npaths && rc == NBG_EXIT_OK; i++) {
		char *text;
		size_t len;
		corpus_agg *part = NULL;
		nbg_error err;
		int e = corpus_read_file(o->paths[i], &text, &len);
		if (e) {
			corpus_warn("cannot read part %s: %s", cli_esc(o->paths[i]),
				    e == EINVAL ? "not a regular file" : strerror(e));
			rc = NBG_EXIT_IO;
			break;
		}
		if (corpus_from_json(text, len, o->paths[i], &part, &err) != NBG_OK) {
			corpus_warn("%s: %s", nbg_code_name(err.code), err.message);
			rc = nbg_code_exit(err.code);
		} else if ((e = corpus_merge(all, part)) == NBG_E_CORPUS_PART) {
			corpus_warn("%s: %s: counts do not add up: with the parts before it a count "
				    "passes 2^64-1", nbg_code_name(NBG_E_CORPUS_PART), cli_esc(o->paths[i]));
			rc = nbg_code_exit(NBG_E_CORPUS_PART);
		} else if (e != NBG_OK) {
			corpus_warn("out of memory merging %s", cli_esc(o->paths[i]));
			rc = NBG_EXIT_IO;
		}
		corpus_agg_free(part);
		free(text);
	}
	if (rc == NBG_EXIT_OK)
		rc = worst(report(all, o->json, stdout), corpus_exit(all));
	corpus_agg_free(all);
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
	corpus_agg *agg = corpus_agg_new();
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
		corpus_agg_free(agg);
		return rc;
	}
	/* an output on standard output sends the text report to stderr */
	to_stdout = records.to_stdout || manifest.to_stdout;
	corpus_walk w = { &list, agg, o->follow, o->quiet };
	for (int i = 0; i < o->npaths; i++)
		corpus_walk_path(&w, o->paths[i]);
	corpus_run run = { &list, o->jobs ? (int)o->jobs : default_jobs(), o->quiet,
			   !o->quiet && isatty(STDERR_FILENO), o->records ? &records : NULL,
			   o->manifest ? &manifest : NULL, agg, cli_env_limit("NBG_MAX_FILE_SIZE"),
			   cli_env_limit("NBG_MAX_UNDESCRIBED") };
	rc = corpus_run_files(&run);
	rc = close_outputs(rc, &records, &manifest);
	if (rc == NBG_EXIT_OK)
		rc = worst(report(agg, o->json, to_stdout ? stderr : stdout), corpus_exit(agg));
	corpus_list_free(&list);
	corpus_agg_free(agg);
	return rc;
}

int cli_cmd_corpus(int argc, char **argv)
{
	opts o;
	int rc = parse_args(argc, argv, &o);

	if (rc == NBG_EXIT_OK)
		rc = o.merge ? cmd_merge(&o) : cmd_run(&o);
	free(o.paths);
	return rc;
}

/*
 * run_batch.c - `nbg run --batch DIR`: many runs of one model, which is
 * read, validated and (--backend cpu) planned once, its weights decoded
 * once.  Each regular file of DIR is one run of a single-input model; each
 * folder of DIR one run of a model with several inputs, its files in name
 * order the inputs in order.  Entries go in name order (bytes); names
 * starting with '.' and entries of the other kind are skipped and counted.
 * Entry NAME's outputs go to OUTDIR/NAME/, written whole or not at all as
 * a single run writes them; an entry that fails is reported and the next
 * one runs.  --jobs N forks N processes once the plan is built: each runs
 * every Nth entry on its copy-on-write copy of the plan (nothing is
 * shared between them but read-only pages), and sends its lines back
 * through a pipe (doc/runtime.md, "Many inputs").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_internal.h"

typedef struct batch {
	run_state base;     /* the model and plan every entry borrows */
	char **names;       /* the entries, in name order */
	size_t count, skipped;
	int folders;        /* one folder per run (several inputs) */
	struct stat out_st; /* OUTDIR, never an entry itself */
	int *rc;            /* each entry's exit code, -1 while not reported */
	double ms;          /* run time, summed over entries that ran */
	size_t done;
} batch;

/* What a worker sends back per entry, then len bytes of its report. */
typedef struct entry_msg {
	uint32_t index;
	int32_t rc;
	double ms;
	uint32_t len;
} entry_msg;

static int has_control(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 1;
	return 0;
}

/* The entries of dir that are of the kind a run takes (files, or folders
 * other than OUTDIR), into b->names sorted; the others counted. */
static int list_entries(const char *dir, batch *b)
{
	DIR *d = opendir(dir);
	size_t cap = 0;
	int oom = 0;
	if (!d) {
		fprintf(stderr, "nbg run: cannot read --batch %s: %s\n", cli_esc(dir), strerror(errno));
		return NBG_EXIT_IO;
	}
	for (struct dirent *de; (de = readdir(d));) {
		struct stat st;
		if (cli_dot_name(de->d_name))
			continue;
		int ok = de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
			 (b->folders ? S_ISDIR(st.st_mode) && (st.st_dev != b->out_st.st_dev ||
								st.st_ino != b->out_st.st_ino)
				     : S_ISREG(st.st_mode));
		if (!ok) {
			b->skipped++;
			continue;
		}
		if (b->count == cap) {
			cap = cap ? 2 * cap : 64;
			char **grown = realloc(b->names, cap * sizeof(*grown));
			if (!grown && (oom = 1))
				break;
			b->names = grown;
		}
		if (!(b->names[b->count] = strdup(de->d_name)) && (oom = 1))
			break;
		b->count++;
	}
	closedir(d);
	if (oom) {
		fprintf(stderr, "nbg run: out of memory listing %s\n", cli_esc(dir));
		return NBG_EXIT_IO;
	}
	if (b->count)
		qsort(b->names, b->count, sizeof(*b->names), cli_name_order);
	return 0;
}

/* The files of an entry's folder, in name order, as its inputs. */
static int folder_inputs(const char *path, char ***files, size_t *n)
{
	batch f = { 0 };
	int rc = list_entries(path, &f);
	*files = f.names;
	*n = f.count;
	for (size_t i = 0; rc == 0 && i < f.count; i++) {
		char *full = NULL;
		if (asprintf(&full, "%s/%s", path, f.names[i]) < 0)
			return NBG_EXIT_IO;
		free(f.names[i]);
		f.names[i] = full;
	}
	return rc;
}

/* Entry k run (its report in *line, malloc'ed); the exit code. */
static int run_entry(batch *b, size_t k, char **line, double *ms)
{
	const char *name = b->names[k];
	char *path = NULL, *out = NULL, **files = NULL;
	size_t nfiles = 0;
	int rc = 0, mismatch, made = 0;
	*line = NULL;
	*ms = 0;
	if (has_control(name)) {
		fprintf(stderr, "nbg run: %s: --batch entry %s has control characters in its name: "
				"no output folder is made for it; rename it\n",
			nbg_code_name(NBG_E_BATCH_NAME_INVALID), cli_esc(name));
		return nbg_code_exit(NBG_E_BATCH_NAME_INVALID);
	}
	if (asprintf(&path, "%s/%s", b->base.a.batch, name) < 0 ||
	    asprintf(&out, "%s/%s", b->base.a.output_dir, name) < 0) {
		free(path);
		return NBG_EXIT_IO;
	}
	if (b->folders)
		rc = folder_inputs(path, &files, &nfiles);
	run_state st = b->base;
	st.a.inputs = b->folders ? (const char **)files : (const char **)&path;
	st.a.input_count = b->folders ? nfiles : 1;
	st.a.output_dir = out;
	st.a.quiet = 1;
	st.borrowed = 1;
	made = access(out, F_OK) != 0;
	if (rc == 0)
		rc = run_loaded(&st, &mismatch);
	if (rc == 0) {
		const nbg_rt_session_info *r = nbg_rt_session_info_of(st.res);
		*ms = r->run.sum / (double)r->run.n;
		*line = st.line;
		st.line = NULL;
	} else if (made) {
		rmdir(out); /* the folder this entry made, if it is still empty */
	}
	run_cleanup(&st, rc);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	free(path);
	free(out);
	return rc;
}

/* On a terminal only: "[done/count] name", the cursor back at the line's
 * start, so that a message about the entry overwrites it. */
static void progress(const batch *b, size_t k)
{
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K[%zu/%zu] %s\r", b->done, b->count, cli_esc(b->names[k]));
}

/* An entry's result recorded and its report printed. */
static void report_entry(batch *b, size_t k, int rc, double ms, const char *line)
{
	if (k >= b->count || b->rc[k] != -1)
		return;
	b->rc[k] = rc;
	b->done++;
	b->ms += ms;
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (rc == 0)
		fputs(line ? line : "", stdout);
	else
		printf("%s: FAILED (exit %d; the reason is on standard error)\n",
		       cli_esc(b->names[k]), rc);
	fflush(stdout);
	progress(b, k);
}

/* A worker: entries j, j + jobs, ... each sent through fd. */
static void worker(batch *b, size_t j, size_t jobs, int fd)
{
	for (size_t k = j; k < b->count; k += jobs) {
		char *line;
		entry_msg m = { .index = (uint32_t)k };
		m.rc = run_entry(b, k, &line, &m.ms);
		m.len = line ? (uint32_t)strlen(line) : 0;
		if (cli_write_all(fd, &m, sizeof(m)) || cli_write_all(fd, line ? line : "", m.len))
			_exit(3);
		free(line);
	}
	_exit(0);
}

static int read_all(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* One worker's message read and reported; -1 at its end. */
static int take_message(batch *b, int fd)
{
	entry_msg m;
	if (read_all(fd, &m, sizeof(m)))
		return -1;
	char *line = malloc((size_t)m.len + 1);
	if (!line || read_all(fd, line, m.len)) {
		free(line);
		return -1;
	}
	line[m.len] = '\0';
	report_entry(b, m.index, m.rc, m.ms, line);
	free(line);
	return 0;
}

/* --jobs N: N workers forked after the plan was built; their lines read as
 * they come.  An entry a worker never reported (it died) fails. */
static void run_forked(batch *b, size_t jobs)
{
	struct pollfd *p = calloc(jobs, sizeof(*p));
	pid_t *pid = calloc(jobs, sizeof(*pid));
	size_t open_fds = 0;
	fflush(NULL);
	for (size_t j = 0; p && pid && j < jobs; j++) {
		int fds[2];
		p[j].fd = -1;
		if (pipe(fds))
			break;
		pid[j] = fork();
		if (pid[j] == 0) {
			close(fds[0]);
			for (size_t i = 0; i < j; i++)
				close(p[i].fd);
			worker(b, j, jobs, fds[1]);
		}
		close(fds[1]);
		if (pid[j] < 0) {
			close(fds[0]);
			break;
		}
		p[j] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		open_fds++;
	}
	while (open_fds) {
		if (poll(p, jobs, -1) < 0 && errno != EINTR)
			break;
		for (size_t j = 0; j < jobs; j++)
			if (p[j].fd >= 0 && p[j].revents && take_message(b, p[j].fd)) {
				close(p[j].fd);
				p[j].fd = -1;
				open_fds--;
			}
	}
	for (size_t j = 0; pid && j < jobs; j++)
		if (pid[j] > 0)
			waitpid(pid[j], NULL, 0);
	for (size_t k = 0; k < b->count; k++)
		if (b->rc[k] == -1) {
			fprintf(stderr, "nbg run: --batch entry %s: its worker process ended before "
					"reporting it\n", cli_esc(b->names[k]));
			report_entry(b, k, NBG_EXIT_IO, 0, NULL);
		}
	free(p);
	free(pid);
}

/* The summary line; the exit code: 0 when every entry ran, else the first
 * failed entry's (in name order). */
static int summary(const batch *b)
{
	size_t failed = 0;
	int rc = 0;
	for (size_t k = 0; k < b->count; k++)
		if (b->rc[k]) {
			failed++;
			rc = rc ? rc : b->rc[k];
		}
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	printf("batch: %zu %s%s: %zu ran, %zu failed, %zu skipped (hidden, or not a %s); "
	       "outputs in %s/<name>/",
	       b->count, b->folders ? "folder" : "file", b->count == 1 ? "" : "s", b->count - failed,
	       failed, b->skipped, b->folders ? "folder" : "file", cli_esc(b->base.a.output_dir));
	if (b->count > failed)
		printf(", %.3f ms a run (mean)", b->ms / (double)(b->count - failed));
	printf("\n");
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = rc ? rc : NBG_EXIT_IO;
	return rc;
}

int run_batch(const run_args *a)
{
	batch b;
	memset(&b, 0, sizeof(b));
	int rc = run_load(&b.base, a);
	if (rc)
		return rc;
	b.folders = b.base.n_in != 1;
	if ((rc = run_ensure_dir(a->output_dir)) == 0 && stat(a->output_dir, &b.out_st) != 0)
		rc = NBG_EXIT_IO;
	if (rc == 0 && a->jobs > 1 && a->backend != NBG_RT_SELECT_CPU)
		rc = cli_usage("run", "--jobs N runs the CPU backend in N processes; give --backend "
			       "cpu (a device runs one network at a time)");
	if (rc == 0)
		rc = list_entries(a->batch, &b);
	if (rc == 0)
		run_cpu_plan(&b.base); /* once, for every entry */
	b.rc = rc == 0 ? malloc((b.count + 1) * sizeof(*b.rc)) : NULL;
	if (rc == 0 && !b.rc)
		rc = NBG_EXIT_IO;
	for (size_t k = 0; rc == 0 && k < b.count; k++)
		b.rc[k] = -1;
	size_t jobs = a->jobs > 1 ? (a->jobs < b.count ? a->jobs : b.count) : 1;
	if (rc == 0 && jobs > 1)
		run_forked(&b, jobs);
	for (size_t k = 0; rc == 0 && jobs <= 1 && k < b.count; k++) {
		char *line;
		double ms;
		progress(&b, k);
		int r = run_entry(&b, k, &line, &ms);
		report_entry(&b, k, r, ms, line);
		free(line);
	}
	if (rc == 0)
		rc = summary(&b);
	for (size_t k = 0; k < b.count; k++)
		free(b.names[k]);
	free(b.names);
	free(b.rc);
	return run_cleanup(&b.base, rc);
}

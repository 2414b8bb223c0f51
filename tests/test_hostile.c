/*
 * test_hostile.c - a hostile environment, not hostile file contents: device
 * nodes, FIFOs and links where files are expected, huge sparse files, file
 * names built to forge output or drive the terminal, signals during a
 * write, a full disk on standard output, files truncated while mapped, long
 * names and paths that are not UTF-8.  One test per promise of
 * doc/security.md ("The file system and the terminal").
 *
 * The nbg command runs without a shell (argv as given, so any byte can be
 * in a name); expected escapes are written out by hand from the rules of
 * doc/security.md, never taken from the program's output.
 */
#define NBG_STATIC_LINKING_ONLY /* nbg_digest_counts */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "exe_wrapper.h"
#include "fixture.h"
#include "nbg/nbg.h"
#include "rt_models.h"
#include "runtime/lp64.h"
#include "seeds.h"

#define SAMPLE NBG_SOURCE_DIR "/samples/sample.nb"
/* its one input, UINT8 [1,28,28,1] (tests/sample_model.c) */
#define SAMPLE_INPUT_BYTES (28 * 28)
#define TB5 ((off_t)5 << 40)

/* The size of the "huge" sparse files: 5 TB, far over every limit.  Under
 * qemu-user (an exe wrapper: the cross build) 65 GiB instead, the smallest
 * whole GiB over NBG_DEFAULT_MAX_FILE_SIZE: qemu 7.2 keeps flags for every
 * page of a guest mapping, so mapping 5 TB takes more host memory than the
 * machine has (it was killed for it on a 24 GB machine), while 65 GiB takes
 * about 0.4 GB.  The same limits are crossed either way. */
static off_t huge_size(void)
{
	return nbg_exe_wrapper() ? (off_t)65 << 30 : TB5;
}

static char work[96], base[sizeof(work)];
static uint8_t *sample;
/* The model nbg run runs: synthesized with the real face detector's
 * inputs and outputs (one INT16 [1,128,128,3] input, INT16 outputs of
 * 28,672 and 1,792 bytes), or in the corpus part the real file. */
static rt_models models;
static const char *run_model;
static size_t sample_size;

/* ------------------------------------------------------------ plumbing */

static const char *in_work(const char *name)
{
	static char ring[8][4096];
	static unsigned k;
	char *p = ring[k++ % 8];
	snprintf(p, 4096, "%s/%s", work, name);
	return p;
}

static void put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

typedef struct run_result {
	int status; /* exit status; -1 killed by a signal; 124 still running after 30 s */
	char *out, *err;
	size_t out_len;
	long maxrss_kb; /* the process's peak resident size */
} run_result;

static char *slurp(const char *path, size_t *len)
{
	size_t n = 0;
	uint8_t *b = fx_read_file(path, &n);
	char *s = malloc(n + 1);
	assert_non_null(s);
	if (b)
		memcpy(s, b, n);
	s[n] = '\0';
	free(b);
	if (len)
		*len = n;
	return s;
}

/* Runs $NBG_BIN with argv[] (NULL-terminated) in `work`, standard input
 * from `in` (NULL: /dev/null) and standard output to `out` (NULL: captured);
 * env: "NAME=VALUE" or NULL.  A run still going after 30 s is killed and
 * reported as 124: a hang is a failure, not a stuck suite. */
static run_result run_env(const char *env, const char *in, const char *out, const char **argv)
{
	const char *bin = getenv("NBG_BIN");
	const char *args[64];
	char out_path[128], err_path[128];
	int n = 0;
	run_result r = { -1, NULL, NULL, 0, 0 };

	assert_non_null(bin);
	args[n++] = bin;
	for (int i = 0; argv[i] && n < 63; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	snprintf(out_path, sizeof(out_path), "%s/.stdout", work);
	snprintf(err_path, sizeof(err_path), "%s/.stderr", work);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fi = open(in ? in : "/dev/null", O_RDONLY);
		int fo = open(out ? out : out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fi < 0 || fo < 0 || fe < 0 || chdir(work) != 0)
			_exit(127);
		dup2(fi, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		setsid(); /* no controlling terminal: /dev/tty cannot be one */
		if (env) {
			char name[64];
			const char *eq = strchr(env, '=');
			snprintf(name, sizeof(name), "%.*s", (int)(eq - env), env);
			setenv(name, eq + 1, 1);
		}
		nbg_execv(bin, (char *const *)args);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	for (int waited = 0;; waited++) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (waited > 30000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			r.status = 124;
			break;
		}
		usleep(1000);
	}
	if (r.status != 124)
		r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r.maxrss_kb = ru.ru_maxrss;
	r.out = out ? strdup("") : slurp(out_path, &r.out_len);
	r.err = slurp(err_path, NULL);
	return r;
}

static run_result run(const char **argv)
{
	return run_env(NULL, NULL, NULL, argv);
}

static void run_free(run_result *r)
{
	free(r->out);
	free(r->err);
}

static void expect(const run_result *r, int status)
{
	if (r->status != status)
		print_error("exit %d (wanted %d)\nstdout:\n%s\nstderr:\n%s\n", r->status, status,
			    r->out, r->err);
	assert_int_equal(r->status, status);
}

/* Entries of `work` whose name starts with `prefix` (temporaries). */
static int count_prefix(const char *prefix)
{
	DIR *d = opendir(work);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static int has_byte(const char *s, char c)
{
	return strchr(s, c) != NULL;
}

static int same_as_sample(const char *path)
{
	size_t n = 0;
	uint8_t *b = fx_read_file(path, &n);
	int same = b && n == sample_size && !memcmp(b, sample, n);
	free(b);
	return same;
}

static int setup(void **state)
{
	(void)state;
	snprintf(work, sizeof(work), "/tmp/nbghostile.XXXXXX");
	assert_non_null(mkdtemp(work));
	sample = fx_read_file(SAMPLE, &sample_size);
	assert_non_null(sample);
	put_file(in_work("sample.nb"), sample, sample_size);
	memcpy(base, work, sizeof(base));
	assert_int_equal(rt_models_synthesize(&models), 0);
	run_model = models.int16;
	return 0;
}

/* A corpus case: the real model, in a fresh directory of its own, so a
 * run of every part in one process does not meet the files of another. */
static int use_real(void **state)
{
	static char real[1024];
	static unsigned k;
	(void)state;
	int w = snprintf(work, sizeof(work), "%s/real%u", base, k++);
	assert_true(w > 0 && (size_t)w < sizeof(work));
	assert_int_equal(mkdir(work, 0755), 0);
	put_file(in_work("sample.nb"), sample, sample_size);
	snprintf(real, sizeof(real), "%s/v2/face_detector_nbg_int16.nb", NBG_CORPUS_DIR);
	run_model = real;
	return 0;
}

static int use_synthesized(void **state)
{
	(void)state;
	memcpy(work, base, sizeof(work));
	run_model = models.int16;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	(void)!system(cmd);
	free(sample);
	rt_models_close(&models);
	return 0;
}

/* ------------------------------------- 1. what OUT may be */

static void test_out_device_node(void **state)
{
	struct stat st;
	(void)state;

	if (geteuid() != 0)
		skip(); /* mknod needs root: the device-node case is not tested here */
	assert_int_equal(mknod(in_work("devnull"), S_IFCHR | 0666, makedev(1, 3)), 0);
	const char *reemit[] = { "reemit", "sample.nb", "devnull", NULL };
	run_result r = run(reemit);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "not-regular-file"));
	assert_non_null(strstr(r.err, "devnull is a character device"));
	run_free(&r);
	const char *map[] = { "map", "sample.nb", "--svg", "devnull", NULL };
	r = run(map);
	expect(&r, 3);
	run_free(&r);
	const char *graph[] = { "graph", "sample.nb", "--dot", "devnull", NULL };
	r = run(graph);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "devnull is a character device"));
	run_free(&r);
	/* a link to the device is refused too, and both are left as they are */
	assert_int_equal(symlink("devnull", in_work("to-dev")), 0);
	const char *via[] = { "reemit", "sample.nb", "to-dev", NULL };
	r = run(via);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "symbolic link to a character device"));
	run_free(&r);
	assert_int_equal(lstat(in_work("devnull"), &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(1, 3));
	assert_int_equal(lstat(in_work("to-dev"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(count_prefix(".devnull"), 0);
	unlink(in_work("to-dev"));
	unlink(in_work("devnull"));
}

static void test_out_special_and_links(void **state)
{
	struct stat st, st2;
	(void)state;

	/* FIFO and directory: refused, never opened (no hang), left alone */
	assert_int_equal(mkfifo(in_work("fifo.out"), 0644), 0);
	assert_int_equal(mkdir(in_work("dir.out"), 0755), 0);
	const char *f[] = { "reemit", "sample.nb", "fifo.out", NULL };
	run_result r = run(f);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "fifo.out is a FIFO"));
	run_free(&r);
	/* (map --svg DIR draws into the directory, a documented form) */
	const char *d[] = { "reemit", "sample.nb", "dir.out", NULL };
	r = run(d);
	expect(&r, 3);
	run_free(&r);
	const char *mf[] = { "map", "sample.nb", "--svg", "fifo.out", NULL };
	r = run(mf);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "fifo.out is a FIFO"));
	run_free(&r);
	const char *gf[] = { "graph", "sample.nb", "--dot", "fifo.out", NULL };
	r = run(gf);
	expect(&r, 3);
	run_free(&r);
	assert_int_equal(lstat(in_work("fifo.out"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* a regular OUT: replaced, its mode kept */
	put_file(in_work("mode.nb"), "old", 3);
	assert_int_equal(chmod(in_work("mode.nb"), 0604), 0);
	const char *m[] = { "reemit", "sample.nb", "mode.nb", NULL };
	r = run(m);
	expect(&r, 0);
	run_free(&r);
	assert_true(same_as_sample(in_work("mode.nb")));
	assert_int_equal(stat(in_work("mode.nb"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);

	/* a link to a regular file: written through, the link stays */
	put_file(in_work("target.nb"), "old", 3);
	assert_int_equal(chmod(in_work("target.nb"), 0640), 0);
	assert_int_equal(symlink("target.nb", in_work("link.nb")), 0);
	const char *l[] = { "reemit", "sample.nb", "link.nb", NULL };
	r = run(l);
	expect(&r, 0);
	run_free(&r);
	assert_int_equal(lstat(in_work("link.nb"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_true(same_as_sample(in_work("target.nb")));
	assert_int_equal(stat(in_work("target.nb"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);

	/* a dangling link: refused, nothing created where it points */
	assert_int_equal(symlink("nowhere.nb", in_work("dangling.nb")), 0);
	const char *g[] = { "reemit", "sample.nb", "dangling.nb", NULL };
	r = run(g);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "symbolic link to nothing"));
	run_free(&r);
	assert_int_equal(access(in_work("nowhere.nb"), F_OK), -1);

	/* a hard link: the name given gets the new file, the other keeps the old */
	put_file(in_work("hard1.nb"), "old", 3);
	assert_int_equal(link(in_work("hard1.nb"), in_work("hard2.nb")), 0);
	const char *h[] = { "reemit", "sample.nb", "hard1.nb", NULL };
	r = run(h);
	expect(&r, 0);
	run_free(&r);
	assert_true(same_as_sample(in_work("hard1.nb")));
	assert_int_equal(stat(in_work("hard1.nb"), &st), 0);
	assert_int_equal(stat(in_work("hard2.nb"), &st2), 0);
	assert_int_equal(st2.st_size, 3);
	assert_true(st.st_ino != st2.st_ino);

	/* "-": the file on standard output, the summary on standard error */
	const char *s[] = { "reemit", "sample.nb", "-", NULL };
	r = run_env(NULL, NULL, in_work("stdout.nb"), s);
	expect(&r, 0);
	assert_non_null(strstr(r.err, "(identical)"));
	run_free(&r);
	assert_true(same_as_sample(in_work("stdout.nb")));
	const char *ds[] = { "reemit", "sample.nb", "/dev/stdout", NULL };
	r = run_env(NULL, NULL, in_work("devstdout.nb"), ds);
	expect(&r, 0);
	run_free(&r);
	assert_true(same_as_sample(in_work("devstdout.nb")));
	assert_int_equal(count_prefix(".devstdout.nb."), 0);
	assert_int_equal(count_prefix(".mode.nb."), 0);
	assert_int_equal(count_prefix(".target.nb."), 0);
	assert_int_equal(count_prefix(".hard1.nb."), 0);
}

/* ------------------------------------- 3. FIFOs and devices as input */

static void test_input_not_regular(void **state)
{
	(void)state;
	assert_int_equal(mkdir(in_work("walk"), 0755), 0);
	assert_int_equal(mkfifo(in_work("walk/fifo.nb"), 0644), 0);
	assert_int_equal(symlink("/dev/tty", in_work("walk/tty.nb")), 0);
	put_file(in_work("walk/good.nb"), sample, sample_size);

	/* Each command refuses the FIFO at once (a blocked open would hang). */
	const char *cmds[][5] = {
		{ "verify", "walk/fifo.nb", NULL },
		{ "inspect", "walk/fifo.nb", NULL },
		{ "ledger", "walk/fifo.nb", NULL },
		{ "diff", "walk/fifo.nb", "sample.nb", NULL },
		{ "reemit", "walk/fifo.nb", "x.nb", NULL },
		{ "verify", "walk/tty.nb", NULL },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		run_result r = run(cmds[i]);
		/* nbg diff says "trouble" with 2, as cmp does (doc/diff.md) */
		expect(&r, strcmp(cmds[i][0], "diff") ? 3 : 2);
		assert_true(strstr(r.out, "not a regular file") || strstr(r.err, "not a regular file"));
		run_free(&r);
	}
	const char *v[] = { "verify", "walk/tty.nb", NULL };
	run_result r = run(v);
	assert_non_null(strstr(r.out, "walk/tty.nb is a character device"));
	run_free(&r);

	/* A walk meets both, reports them and goes on with the regular file. */
	const char *c[] = { "corpus", "walk", NULL };
	r = run(c);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "walk/fifo.nb is a FIFO"));
	assert_non_null(strstr(r.err, "walk/tty.nb is a character device"));
	assert_non_null(strstr(r.out, "Corpus: 3 files, 1 valid"));
	run_free(&r);

	/* "-" is standard input, read into memory, bounded */
	const char *s[] = { "verify", "-", NULL };
	r = run_env(NULL, SAMPLE, NULL, s);
	expect(&r, 0);
	assert_non_null(strstr(r.out, "-: OK v2"));
	run_free(&r);
	r = run_env("NBG_MAX_STDIN=1K", SAMPLE, NULL, s);
	expect(&r, 3);
	assert_non_null(strstr(r.out, "more than 1024 bytes"));
	run_free(&r);
}

/* ------------------------------------- 4. no hashing before the structure passed */

static nbg_code parse_counted(const char *path, const nbg_parse_options *o, uint64_t *hashed,
			      nbg_error *err)
{
	nbg_mapping map;
	nbg_model *m = NULL;
	nbg_code rc;

	assert_int_equal(nbg_map_file(path, &map, err), NBG_OK);
	uint64_t sha0, crc0, sha1, crc1;
	nbg_digest_counts(&sha0, &crc0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = nbg_parse(map.data, map.size, o, &m, err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	nbg_digest_counts(&sha1, &crc1);
	*hashed = (sha1 - sha0) + (crc1 - crc0);
	print_message("%s: %s, %zu bytes, %llu hashed, %.3f ms\n", strrchr(path, '/') + 1,
		      nbg_code_name(rc), map.size, (unsigned long long)*hashed,
		      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	nbg_model_free(m);
	nbg_unmap_file(&map);
	return rc;
}

static void make_sparse(const char *path, const uint8_t *head, size_t n, off_t size)
{
	put_file(path, head, n);
	assert_int_equal(truncate(path, size), 0);
}

/* A build whose address space is smaller than the huge files (32-bit)
 * cannot map them: nbg_map_file refuses with io-error (EFBIG) before a byte
 * is read, and nbg verify says so (exit 3).  The parse checks on them are
 * then the 64-bit builds' only. */
static int huge_mappable(void)
{
	return (uint64_t)huge_size() <= (uint64_t)SIZE_MAX;
}

static void expect_unmappable(const char *name)
{
	nbg_mapping map;
	nbg_error err;
	assert_int_equal(nbg_map_file(in_work(name), &map, &err), NBG_E_IO);
	assert_int_equal(err.sys_errno, EFBIG);
	const char *v[] = { "verify", name, NULL };
	run_result r = run(v);
	expect(&r, 3);
	if (!strstr(r.out, "File too large") && !strstr(r.err, "File too large"))
		fail_msg("nbg verify %s does not say why:\n%s%s", name, r.out, r.err);
	run_free(&r);
	print_message("%s: %llu bytes, more than this %zu-bit build can map: io-error\n", name,
		      (unsigned long long)huge_size(), sizeof(void *) * 8);
}

static void test_sparse_refused_unhashed(void **state)
{
	nbg_error err;
	uint64_t hashed;
	(void)state;

	/* The counter counts: a valid file is hashed at least once in full. */
	assert_int_equal(parse_counted(in_work("sample.nb"), NULL, &hashed, &err), NBG_OK);
	assert_true(hashed >= sample_size);

	/* v2 declaring its real size, extended to 5 TB (huge_size): over the file-size
	 * limit; with the limit off, the header proves it invalid.  Neither
	 * hashes anything. */
	nbg_parse_options nolimit = { .size = sizeof(nolimit), .max_file_size = UINT64_MAX };
	make_sparse(in_work("mismatch5t.nb"), sample, sample_size, huge_size());
	if (!huge_mappable()) {
		expect_unmappable("mismatch5t.nb");
	} else {
		assert_int_equal(parse_counted(in_work("mismatch5t.nb"), NULL, &hashed, &err),
				 NBG_E_WORK_LIMIT);
		assert_int_equal(hashed, 0);
		assert_int_equal(parse_counted(in_work("mismatch5t.nb"), &nolimit, &hashed, &err),
				 NBG_E_FILE_SIZE_MISMATCH);
		assert_int_equal(hashed, 0);
	}

	/* v2 declaring 5 TB (header words 0x10, 0x14), sections in the first
	 * 5 KB: structurally sound, 5 TB undescribed -> the limit, unhashed. */
	uint8_t *b = malloc(sample_size);
	assert_non_null(b);
	memcpy(b, sample, sample_size);
	fx_put32(b + 0x10, (uint32_t)((uint64_t)huge_size() & 0xffffffffu));
	fx_put32(b + 0x14, (uint32_t)((uint64_t)huge_size() >> 32));
	make_sparse(in_work("declared5t.nb"), b, sample_size, huge_size());
	if (!huge_mappable()) {
		expect_unmappable("declared5t.nb");
	} else {
		assert_int_equal(parse_counted(in_work("declared5t.nb"), &nolimit, &hashed, &err),
				 NBG_E_WORK_LIMIT);
		assert_int_equal(hashed, 0);
		assert_string_equal(err.field, "undescribed_bytes");
		assert_true(err.offset <= sample_size);
	}
	free(b);

	/* The file-size limit, lowered: refused before anything is hashed. */
	nbg_parse_options o = { .size = sizeof(o), .max_file_size = 1000 };
	assert_int_equal(parse_counted(in_work("sample.nb"), &o, &hashed, &err), NBG_E_WORK_LIMIT);
	assert_int_equal(hashed, 0);

	/* A directory entry past the end: refused by the directory, unhashed. */
	b = malloc(sample_size);
	memcpy(b, sample, sample_size);
	size_t e = fx_dir_entry(b, sample_size, 24 /* COEF_DATA */);
	assert_true(e > 0);
	fx_put32(b + e + 0x0c, 0x7fffffffu); /* sd_size_low */
	put_file(in_work("oob.nb"), b, sample_size);
	free(b);
	assert_int_equal(parse_counted(in_work("oob.nb"), NULL, &hashed, &err),
			 NBG_E_SECTION_OUT_OF_BOUNDS);
	assert_int_equal(hashed, 0);

	/* The command line: a benchmark figure, not a timed assertion. */
	const char *lim[] = { "verify", "sample.nb", NULL };
	run_result r = run_env("NBG_MAX_FILE_SIZE=1K", NULL, NULL, lim);
	expect(&r, 1);
	assert_non_null(strstr(r.out, "FAIL work-limit"));
	run_free(&r);
	if (!huge_mappable()) {
		unlink(in_work("mismatch5t.nb"));
		unlink(in_work("declared5t.nb"));
		return;
	}
	struct timespec t0, t1;
	const char *v[] = { "verify", "declared5t.nb", "mismatch5t.nb", NULL };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = run(v);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	expect(&r, 1);
	assert_non_null(strstr(r.out, "declared5t.nb: FAIL work-limit"));
	assert_non_null(strstr(r.out, "mismatch5t.nb: FAIL work-limit"));
	print_message("nbg verify of two %llu GiB sparse files: %.3f s\n",
		      (unsigned long long)(huge_size() >> 30),
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	run_free(&r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = run_env("NBG_MAX_FILE_SIZE=none", NULL, NULL, v);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	expect(&r, 1);
	assert_non_null(strstr(r.out, "declared5t.nb: FAIL work-limit"));
	assert_non_null(strstr(r.out, "mismatch5t.nb: FAIL file-size-mismatch"));
	print_message("the same with no file-size limit: %.3f s\n",
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	run_free(&r);
	unlink(in_work("mismatch5t.nb"));
	unlink(in_work("declared5t.nb"));
}

/* A v1 file declares no total size: 5 TB of trailer is structurally valid. */
/* v1 is a synthesized file (fuzz/seeds.c) or a real one. */
static void sparse_v1_trailer(uint8_t *v1, size_t n)
{
	nbg_error err;
	uint64_t hashed;

	put_file(in_work("v1.nb"), v1, n);
	assert_int_equal(parse_counted(in_work("v1.nb"), NULL, &hashed, &err), NBG_OK);

	make_sparse(in_work("v1-5t.nb"), v1, n, huge_size());
	if (!huge_mappable()) {
		expect_unmappable("v1-5t.nb");
	} else {
		assert_int_equal(parse_counted(in_work("v1-5t.nb"), NULL, &hashed, &err),
				 NBG_E_WORK_LIMIT);
		assert_int_equal(hashed, 0);
		nbg_parse_options nolimit = { .size = sizeof(nolimit), .max_file_size = UINT64_MAX };
		assert_int_equal(parse_counted(in_work("v1-5t.nb"), &nolimit, &hashed, &err),
				 NBG_E_WORK_LIMIT);
		assert_int_equal(hashed, 0);
		assert_string_equal(err.field, "undescribed_bytes");
		assert_true(err.offset <= n);
	}

	/* 1 MiB of trailer: under the default, over a lowered limit, and
	 * accepted again when the limit is raised. */
	make_sparse(in_work("v1-1m.nb"), v1, n, (off_t)n + (1 << 20));
	assert_int_equal(parse_counted(in_work("v1-1m.nb"), NULL, &hashed, &err), NBG_OK);
	nbg_parse_options o = { .size = sizeof(o), .max_undescribed = 64 << 10 };
	assert_int_equal(parse_counted(in_work("v1-1m.nb"), &o, &hashed, &err), NBG_E_WORK_LIMIT);
	assert_int_equal(hashed, 0);
	o.max_undescribed = UINT64_MAX;
	assert_int_equal(parse_counted(in_work("v1-1m.nb"), &o, &hashed, &err), NBG_OK);
	const char *v[] = { "verify", "v1-1m.nb", NULL };
	run_result r = run_env("NBG_MAX_UNDESCRIBED=64K", NULL, NULL, v);
	expect(&r, 1);
	assert_non_null(strstr(r.out, "FAIL work-limit"));
	run_free(&r);
	unlink(in_work("v1-5t.nb"));
	unlink(in_work("v1-1m.nb"));
	unlink(in_work("v1.nb"));
	free(v1);
}

static void test_sparse_v1_trailer(void **state)
{
	size_t n;
	uint8_t *v1 = seed_v1_build(0x10003, 0, &n);
	(void)state;
	assert_non_null(v1);
	sparse_v1_trailer(v1, n);
}

static void test_sparse_v1_trailer_corpus(void **state)
{
	char path[1024];
	size_t n;
	(void)state;
	snprintf(path, sizeof(path), "%s/v1/10003_88_face_age_88.nb", NBG_CORPUS_DIR);
	uint8_t *v1 = fx_read_file(path, &n);
	if (!v1)
		fail_msg("%s is missing: the corpus is incomplete", path);
	sparse_v1_trailer(v1, n);
}

/* ------------------------------------- 5. names that forge output or drive the terminal */

#define FORGED "a\nmodel.nb: OK v2 forged"
#define FORGED_SHOWN "a\\nmodel.nb: OK v2 forged"
#define OSC "esc\033]0;pwned\007.nb"
#define OSC_SHOWN "esc\\033]0;pwned\\a.nb"
#define OSC_XNN "esc\\x1b]0;pwned\\x07.nb"
#define RAW "\xff\xfe.nb"
#define RAW_SHOWN "\\377\\376.nb"

static void no_terminal_bytes(const run_result *r)
{
	for (const char *s = r->out; *s; s++)
		assert_true(*s == '\n' || (unsigned char)*s >= 0x20);
	assert_false(has_byte(r->err, '\033'));
	assert_false(has_byte(r->err, '\007'));
	assert_false(has_byte(r->out, '\033'));
}

static void test_forged_names(void **state)
{
	(void)state;
	put_file(in_work(FORGED), sample, sample_size);
	put_file(in_work(OSC), sample, sample_size);
	put_file(in_work(RAW), sample, sample_size);

	/* verify: one line per file, escaped names marked with a backslash */
	const char *v[] = { "verify", FORGED, OSC, RAW, NULL };
	run_result r = run(v);
	expect(&r, 0);
	no_terminal_bytes(&r);
	size_t lines = 0;
	for (const char *s = r.out; *s; s++)
		lines += *s == '\n';
	assert_int_equal(lines, 3);
	assert_memory_equal(r.out, "\\" FORGED_SHOWN ": OK v2 0x", strlen(FORGED_SHOWN) + 11);
	assert_non_null(strstr(r.out, "\n\\" OSC_SHOWN ": OK v2"));
	assert_non_null(strstr(r.out, "\n\\" RAW_SHOWN ": OK v2"));
	run_free(&r);

	const char *cmds[][9] = {
		{ "inspect", OSC, NULL },
		{ "inspect", "--layers", OSC, NULL },
		{ "ledger", OSC, NULL },
		{ "diff", OSC, "sample.nb", NULL },
		{ "reemit", "sample.nb", OSC ".out", NULL },
		{ "verify", "/nonexistent/" OSC, NULL },
		{ "inspect", "/nonexistent/" OSC, NULL },
		{ "corpus", OSC, "/nonexistent/" OSC, NULL },
		{ "tensor", "--model", "sample.nb", "--input", "0", "/nonexistent/" OSC, "-o", "t.bin",
		  NULL },
		{ "run", "sample.nb", "--input", "/nonexistent/" OSC, "--output-dir", "o", NULL },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = run(cmds[i]);
		no_terminal_bytes(&r);
		/* diff and corpus write names as \xNN, the form used for names
		 * inside files; the others as ls -b does */
		assert_true(strstr(r.out, OSC_SHOWN) || strstr(r.err, OSC_SHOWN) ||
			    strstr(r.out, OSC_XNN) || strstr(r.err, OSC_XNN));
		run_free(&r);
	}
	unlink(in_work(OSC ".out"));

	/* An invalid file under such a name: the failure line escapes it too. */
	uint8_t *bad = malloc(sample_size);
	memcpy(bad, sample, sample_size);
	bad[sample_size - 100] ^= 1;
	put_file(in_work("bad" OSC), bad, sample_size);
	free(bad);
	const char *c[] = { "corpus", "bad" OSC, NULL };
	r = run(c);
	expect(&r, 1);
	no_terminal_bytes(&r);
	assert_true(strstr(r.err, "bad" OSC_SHOWN) || strstr(r.err, "bad" OSC_XNN));
	run_free(&r);
}

/* ------------------------------------- 6. a signal during a write */

/* nbg with argv (argv[0] "nbg") in `work`, its output thrown away; the pid. */
static pid_t spawn_quiet(char *const *args)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The signal tests need the default dispositions: a suite started
		 * in the background of a script (SIGINT ignored) or under nohup
		 * (SIGHUP ignored) hands its ignores down, and nbg rightly keeps
		 * an ignored signal ignored. */
		const int term[] = { SIGINT, SIGTERM, SIGHUP };
		for (int i = 0; i < 3; i++)
			signal(term[i], SIG_DFL);
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		dup2(nul, 2);
		if (chdir(work) != 0)
			_exit(127);
		nbg_execv(getenv("NBG_BIN"), args);
		_exit(127);
	}
	return pid;
}

static void test_signal_during_write(void **state)
{
	(void)state;
	fx_spec *s = fx_default();
	fx_section *coef = fx_find(s, 24);
	assert_non_null(coef);
	fx_resize(coef, (size_t)96 << 20);
	size_t n;
	uint8_t *big = fx_build(s, &n);
	fx_free(s);
	put_file(in_work("big.nb"), big, n);
	free(big);
	put_file(in_work("keep.nb"), "previous", 8);

	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	int caught = 0;
	for (int attempt = 0; attempt < 12 && caught < 3; attempt++) {
		int sig = sigs[caught];
		char *const args[] = { "nbg", "reemit", "big.nb", "keep.nb", NULL };
		pid_t pid = spawn_quiet(args);
		int seen = 0, st;
		for (int k = 0; k < 200000 && !seen; k++) {
			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
			seen = count_prefix(".keep.nb.") > 0;
			if (!seen)
				usleep(50);
		}
		if (seen) {
			kill(pid, sig);
			assert_int_equal(waitpid(pid, &st, 0), pid);
			assert_true(WIFSIGNALED(st));
			assert_int_equal(WTERMSIG(st), sig);
			caught++;
		} else if (!WIFEXITED(st)) {
			waitpid(pid, &st, 0);
		}
		/* whatever happened: no temporary left, OUT whole (old or new) */
		assert_int_equal(count_prefix(".keep.nb."), 0);
		size_t kn;
		uint8_t *k = fx_read_file(in_work("keep.nb"), &kn);
		assert_non_null(k);
		assert_true(kn == 8 || kn == n);
		free(k);
		if (kn != 8)
			put_file(in_work("keep.nb"), "previous", 8);
	}
	print_message("signals delivered during the write: %d of 3\n", caught);
	assert_int_equal(caught, 3);
	unlink(in_work("big.nb"));
}

/* ------------------------------------- 7. a full disk on standard output */

static void test_stdout_full(void **state)
{
	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip(); /* no /dev/full on this system */
	put_file(in_work("walk2.nb"), sample, sample_size);
	const char *cmds[][5] = {
		{ "verify", "sample.nb", NULL },
		{ "inspect", "sample.nb", NULL },
		{ "inspect", "--json", "sample.nb", NULL },
		{ "ledger", "sample.nb", NULL },
		{ "ledger", "--json", "sample.nb", NULL },
		{ "fields", NULL },
		{ "fields", "--json", NULL },
		{ "codes", NULL },
		{ "corpus", "sample.nb", NULL },
		{ "corpus", "--json", "sample.nb", NULL },
		{ "diff", "sample.nb", "walk2.nb", NULL },
		{ "diff", "--json", "sample.nb", "walk2.nb", NULL },
		{ "reemit", "sample.nb", "-", NULL },
		{ "help", NULL },
		{ "help", "run", NULL },
		{ "version", NULL },
		{ "codes", "--markdown", NULL },
		{ "targets", NULL },
		{ "targets", "--json", NULL },
		{ "inspect", "--format", "meta", "sample.nb", NULL },
		{ "inspect", "--format", "vpm", "sample.nb", NULL },
		{ "inspect", "--memory", "sample.nb", NULL },
		{ "graph", "sample.nb", NULL },
		{ "tensor", "--model", "sample.nb", NULL },
#if NBG_TEST_NNSDK_ABI /* elsewhere libnnsdk is refused before a report */
		{ "probe", "--nnsdk", TD_LIB, NULL },
		{ "probe", "--json", "--nnsdk", TD_LIB, NULL },
#endif
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		run_result r = run_env(NULL, NULL, "/dev/full", cmds[i]);
		/* nbg diff says "trouble" with 2, as cmp does */
		int want = strcmp(cmds[i][0], "diff") ? 3 : 2;
		if (r.status != want)
			print_error("nbg %s %s\n", cmds[i][0], cmds[i][1] ? cmds[i][1] : "");
		expect(&r, want);
		assert_true(strstr(r.err, "cannot write to standard output") ||
			    strstr(r.err, "standard output"));
		run_free(&r);
	}
}

/* ------------------------------------- 8. truncated while mapped */

/* Skips the calling test where SIGBUS addresses are wrong
 * (fx_sigbus_address_error). */
static void needs_sigbus_address(void)
{
	long d = fx_sigbus_address_error();
	assert_true(d != LONG_MIN);
	if (d) {
		print_message("skipped: this machine reports a SIGBUS address %ld bytes from the "
			      "one that faulted (qemu-arm 7.2 does), which the guard cannot work "
			      "with; a kernel reports it exactly\n", d);
		skip();
	}
}

static void test_truncated_while_mapped(void **state)
{
	nbg_mapping map;
	nbg_model *m = NULL;
	nbg_error err;
	(void)state;
	needs_sigbus_address();

	/* 8 MiB so the whole-file hash runs on its own thread and faults there */
	fx_spec *s = fx_default();
	fx_resize(fx_find(s, 24), (size_t)8 << 20);
	size_t n;
	uint8_t *b = fx_build(s, &n);
	fx_free(s);
	put_file(in_work("trunc.nb"), b, n);
	free(b);

	assert_int_equal(nbg_install_signal_guards(), NBG_OK);
	assert_int_equal(nbg_map_file(in_work("trunc.nb"), &map, &err), NBG_OK);
	assert_int_equal(nbg_mapping_changed(&map), 0);
	assert_int_equal(truncate(in_work("trunc.nb"), 4096), 0);
	/* Without the guard this parse dies of SIGBUS. */
	nbg_code rc = nbg_parse(map.data, map.size, NULL, &m, &err);
	print_message("parse of the truncated mapping: %s\n", nbg_code_name(rc));
	assert_int_equal(nbg_mapping_changed(&map), 1);
	nbg_model_free(m);
	nbg_unmap_file(&map);

	/* An untouched mapping stays unchanged. */
	assert_int_equal(nbg_map_file(in_work("sample.nb"), &map, &err), NBG_OK);
	assert_int_equal(nbg_parse(map.data, map.size, NULL, &m, &err), NBG_OK);
	assert_int_equal(nbg_mapping_changed(&map), 0);
	nbg_model_free(m);
	nbg_unmap_file(&map);
}

/* The command line, with a shim that truncates *shrink.nb right after nbg
 * maps it: the file is its own failure, the run goes on. */
static void test_truncated_cli(void **state)
{
	char env[1024];
	(void)state;
	needs_sigbus_address();

	snprintf(env, sizeof(env), "LD_PRELOAD=%s", SHRINK_PRELOAD);
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=1", 1);
	assert_int_equal(mkdir(in_work("tw"), 0755), 0);
	put_file(in_work("tw/a.nb"), sample, sample_size);
	put_file(in_work("tw/shrink.nb"), sample, sample_size);
	put_file(in_work("tw/z.nb"), sample, sample_size);
	/* (nbg corpus reads files its own way; doc/corpus.md) */
	const char *v[] = { "verify", "tw/a.nb", "tw/shrink.nb", "tw/z.nb", NULL };
	run_result r = run_env(env, NULL, NULL, v);
	expect(&r, 3);
	assert_non_null(strstr(r.out, "tw/a.nb: OK v2"));
	assert_non_null(strstr(r.out, "tw/shrink.nb: ERROR tw/shrink.nb shrank"));
	assert_non_null(strstr(r.out, "tw/z.nb: OK v2"));
	run_free(&r);

	/* nbg corpus maps a file over 1 MiB (so that its header comes first):
	 * cut under the mapping, it is `changed` and the walk goes on */
	fx_spec *sp = fx_default();
	fx_resize(fx_find(sp, 24), (size_t)2 << 20);
	size_t bn;
	uint8_t *big = fx_build(sp, &bn);
	fx_free(sp);
	put_file(in_work("tw/big-shrink.nb"), big, bn);
	free(big);
	unlink(in_work("tw/shrink.nb"));
	const char *c[] = { "corpus", "--records", "-", "tw", NULL };
	r = run_env(env, NULL, NULL, c);
	expect(&r, 3);
	assert_non_null(strstr(r.out, "big-shrink.nb\",\"size\":"));
	assert_non_null(strstr(r.out, "\"status\":\"changed\""));
	assert_non_null(strstr(r.err, "Corpus: 3 files, 2 valid"));
	run_free(&r);
	unsetenv("ASAN_OPTIONS");
}

/* ------------------------------------- 9. paths that are not UTF-8, in JSON */

static json_t *json_of(const run_result *r)
{
	json_error_t je;
	json_t *j = json_loads(r->out, 0, &je);
	if (!j)
		print_error("not JSON (%s):\n%s\n", je.text, r->out);
	assert_non_null(j);
	return j;
}

/* The JSON forms of a path (doc/security.md): UTF-8 as it is, any other
 * escaped as every printed name is (\ooo per byte that is not UTF-8);
 * written out by hand here. */
#define UTF "caf\xc3\xa9"
#define BAD "\xff\xfe"
#define BAD_JSON "\\377\\376"

static void want_str(json_t *j, const char *what, const char *want)
{
	const char *s = json_string_value(j);
	if (!s || strcmp(s, want))
		fail_msg("%s: %s (wanted %s)", what, s ? s : "(missing)", want);
}

static json_t *run_json(const char **argv, int status)
{
	run_result r = run(argv);
	expect(&r, status);
	json_t *j = json_of(&r);
	run_free(&r);
	return j;
}

/* No string anywhere in j holds `needle` (a document that holds no path). */
static void no_string_with(json_t *j, const char *needle)
{
	char *s = json_dumps(j, JSON_ENSURE_ASCII);
	assert_non_null(s);
	assert_null(strstr(s, needle));
	free(s);
}

/* How many members named `key` anywhere in j are the string `want`. */
static int count_values(json_t *j, const char *key, const char *want)
{
	int n = 0;
	const char *k;
	json_t *v;
	size_t i;
	if (json_is_object(j)) {
		json_object_foreach(j, k, v) {
			if (!strcmp(k, key) && json_is_string(v) && !strcmp(json_string_value(v), want))
				n++;
			n += count_values(v, key, want);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			n += count_values(v, key, want);
	}
	return n;
}

static uint8_t *corpus_model(size_t *n)
{
	uint8_t *b = fx_read_file(run_model, n);
	if (!b)
		fail_msg("%s is not readable (in the corpus part: the corpus is incomplete)",
			 run_model);
	return b;
}

/* summary.json of nbg run, by the command line and by a sample.txt. */
static void json_paths_of_run(void)
{
	size_t n;
	uint8_t *mb = corpus_model(&n);
	put_file(in_work("m" BAD ".nb"), mb, n);
	free(mb);
	uint8_t *in = calloc(98304, 1);
	put_file(in_work("in" UTF ".bin"), in, 98304);
	put_file(in_work("g" BAD "0.bin"), in, 28672);
	put_file(in_work("g" UTF "1.bin"), in, 1792);
	free(in);
	assert_int_equal(symlink(TD_LIB, in_work("lib" BAD ".so")), 0);
	const char *rr[] = { "run", "m" BAD ".nb", "--input", "in" UTF ".bin", "--golden",
			     "g" BAD "0.bin", "g" UTF "1.bin", "--output-dir", "out", "--nnsdk",
			     "./lib" BAD ".so", "--device-root", "dev" BAD, NULL };
	run_result r = run(rr);
	assert_true(r.status == 0 || r.status == 1); /* the goldens are zeros: may mismatch */
	run_free(&r);
	json_error_t je;
	json_t *j = json_load_file(in_work("out/summary.json"), 0, &je);
	assert_non_null(j);
	want_str(json_object_get(json_object_get(j, "model"), "path"), "model", "m" BAD_JSON ".nb");
	json_t *rt = json_object_get(j, "runtime");
	want_str(json_object_get(rt, "device_root"), "device_root", "dev" BAD_JSON);
	want_str(json_object_get(rt, "library"), "library", "./lib" BAD_JSON ".so");
	want_str(json_object_get(json_array_get(json_object_get(j, "inputs"), 0), "file"), "input",
		 "in" UTF ".bin");
	json_t *g = json_object_get(json_object_get(j, "golden"), "outputs");
	want_str(json_object_get(json_array_get(g, 0), "file"), "golden 0", "g" BAD_JSON "0.bin");
	want_str(json_object_get(json_array_get(g, 1), "file"), "golden 1", "g" UTF "1.bin");
	json_decref(j);

	/* output names from a sample.txt's [output] */
	FILE *f = fopen(in_work("sample.txt"), "w");
	assert_non_null(f);
	fprintf(f, "[network]\nm" BAD ".nb\n[input]\nin" UTF ".bin\n[output]\no" BAD ".dat\n"
		   "o" UTF ".dat\n");
	assert_int_equal(fclose(f), 0);
	const char *rs[] = { "run", "--sample", "sample.txt", "--output-dir", "out2", "--nnsdk",
			     TD_LIB, "--device-root", "dev" BAD, NULL };
	r = run(rs);
	expect(&r, 0);
	run_free(&r);
	j = json_load_file(in_work("out2/summary.json"), 0, &je);
	assert_non_null(j);
	json_t *o = json_object_get(j, "outputs");
	want_str(json_object_get(json_array_get(o, 0), "file"), "output 0", "o" BAD_JSON ".dat");
	want_str(json_object_get(json_array_get(o, 1), "file"), "output 1", "o" UTF ".dat");
	json_decref(j);
}

/* summary.json under raw names, with the real model. */
static void test_json_paths_of_run(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	assert_int_equal(mkdir(in_work("dev" BAD), 0755), 0);
	put_file(in_work("dev" BAD "/galcore"), "", 0);
	json_paths_of_run();
}

/* Every JSON document nbg writes keeps a path that is not UTF-8 (as \xNN)
 * and one that is (as it is); none drops one. */
static void test_json_paths_everywhere(void **state)
{
	(void)state;
	put_file(in_work(BAD ".nb"), sample, sample_size);
	put_file(in_work(UTF ".nb"), sample, sample_size);

	const char *i1[] = { "inspect", "--json", BAD ".nb", NULL };
	json_t *j = run_json(i1, 0);
	want_str(json_object_get(j, "path"), "inspect", BAD_JSON ".nb");
	json_decref(j);
	const char *i2[] = { "inspect", "--json", "--memory", BAD ".nb", UTF ".nb", NULL };
	j = run_json(i2, 0);
	want_str(json_object_get(json_array_get(j, 0), "path"), "inspect[0]", BAD_JSON ".nb");
	want_str(json_object_get(json_array_get(j, 1), "path"), "inspect[1]", UTF ".nb");
	json_decref(j);
	/* the failure document of an invalid file */
	uint8_t bad[64] = { 'V', 'P', 'M', 'N' };
	put_file(in_work("\xfd.nb"), bad, sizeof(bad));
	const char *e[] = { "inspect", "--json", "\xfd.nb", NULL };
	j = run_json(e, 1);
	want_str(json_object_get(j, "path"), "failure", "\\375.nb");
	json_decref(j);
	/* --format meta holds no path at all */
	const char *m[] = { "inspect", "--format", "meta", BAD ".nb", UTF ".nb", NULL };
	j = run_json(m, 0);
	assert_int_equal(json_array_size(j), 2);
	no_string_with(j, "\\u00e9.nb");
	no_string_with(j, "fe.nb");
	json_decref(j);

	const char *l[] = { "ledger", "--json", BAD ".nb", NULL };
	j = run_json(l, 0);
	want_str(json_object_get(j, "path"), "ledger", BAD_JSON ".nb");
	json_decref(j);
	const char *d[] = { "diff", "--json", BAD ".nb", UTF ".nb", NULL };
	j = run_json(d, 0);
	want_str(json_object_get(json_object_get(j, "a"), "path"), "diff a", BAD_JSON ".nb");
	want_str(json_object_get(json_object_get(j, "b"), "path"), "diff b", UTF ".nb");
	json_decref(j);
	const char *de[] = { "diff", "--json", BAD ".nb", "\xfd.nb", NULL };
	j = run_json(de, 2);
	want_str(json_object_get(json_object_get(j, "error"), "path"), "diff error", "\\375.nb");
	json_decref(j);

	/* corpus: the records name each file; the summary names none */
	const char *c[] = { "corpus", "--quiet", "--records", "-", BAD ".nb", UTF ".nb", NULL };
	run_result r = run(c);
	expect(&r, 0);
	char *nl = strchr(r.out, '\n');
	assert_non_null(nl);
	json_t *r0 = json_loadb(r.out, (size_t)(nl - r.out), 0, NULL);
	json_t *r1 = json_loads(nl + 1, 0, NULL);
	assert_non_null(r0);
	assert_non_null(r1);
	want_str(json_object_get(r0, "path"), "record 0", BAD_JSON ".nb");
	want_str(json_object_get(r1, "path"), "record 1", UTF ".nb");
	json_decref(r0);
	json_decref(r1);
	run_free(&r);
	const char *cj[] = { "corpus", "--json", BAD ".nb", UTF ".nb", NULL };
	j = run_json(cj, 0);
	assert_int_equal(json_integer_value(json_object_get(j, "files")), 2);
	no_string_with(j, "\\u00e9.nb");
	no_string_with(j, "fe.nb");
	json_decref(j);

	/* probe: the device root, each node's path, the library (a path with
	 * a slash, or dlopen would search the library path for it) */
	NEEDS_NNSDK_ABI(); /* the rest runs libnnsdk's double */
	assert_int_equal(mkdir(in_work("dev" BAD), 0755), 0);
	put_file(in_work("dev" BAD "/galcore"), "", 0);
	assert_int_equal(symlink(TD_LIB, in_work(UTF ".so")), 0);
	const char *p[] = { "probe", "--json", "--device-root", "dev" BAD, "--nnsdk",
			    "./" UTF ".so", NULL };
	j = run_json(p, 0);
	want_str(json_object_get(j, "device_root"), "device_root", "dev" BAD_JSON);
	want_str(json_object_get(json_array_get(json_object_get(j, "nodes"), 0), "path"), "node",
		 "dev" BAD_JSON "/galcore");
	assert_int_equal(count_values(j, "library", "./" UTF ".so"), 2); /* report and selection */
	json_decref(j);

	json_paths_of_run();
}

/* ------------------------------------- nbg run: paths, shrinking inputs, OUT, exits */

#define ESC_M "m\033]0;pwned\007.nb"
#define ESC_M_SHOWN "m\\033]0;pwned\\a.nb"

/* The model nbg run runs under `name` in work, and a zero input for it. */
static void run_fixture(const char *name, const char *input)
{
	size_t n;
	uint8_t *mb = corpus_model(&n);
	put_file(in_work(name), mb, n);
	free(mb);
	uint8_t *in = calloc(98304, 1);
	assert_non_null(in);
	put_file(in_work(input), in, 98304);
	free(in);
	if (access(in_work("dev"), F_OK) != 0) {
		assert_int_equal(mkdir(in_work("dev"), 0755), 0);
		put_file(in_work("dev/galcore"), "", 0);
	}
}

/* Entries of directory `dir` under work (-1: it does not exist). */
static int entries_in(const char *dir)
{
	DIR *d = opendir(in_work(dir));
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Every path nbg run prints -- model, inputs, goldens, output directory
 * and files, sample.txt entries -- is escaped once, as ls -b does. */
static void test_run_paths_escaped(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture(ESC_M, "in\033[2J.bin");
	uint8_t *z = calloc(28672, 1);
	put_file(in_work("g\033[1m0.bin"), z, 28672);
	put_file(in_work("g1.bin"), z, 1792);
	free(z);
	const char *a[] = { "run", ESC_M, "--input", "in\033[2J.bin", "--golden", "g\033[1m0.bin",
			    "g1.bin", "--output-dir", "o\033d", "--nnsdk", TD_LIB,
			    "--device-root", "dev", NULL };
	run_result r = run(a);
	assert_true(r.status == 0 || r.status == 1); /* zero goldens may mismatch */
	no_terminal_bytes(&r);
	assert_non_null(strstr(r.out, "model: " ESC_M_SHOWN " (target"));
	assert_non_null(strstr(r.out, "-> o\\033d/output_0.bin"));
	assert_non_null(strstr(r.out, "golden g\\033[1m0.bin: "));
	assert_non_null(strstr(r.out, "summary: o\\033d/summary.json"));
	run_free(&r);

	/* a library message names the path escaped already: not twice */
	const char *b[] = { "run", ESC_M, "--input", "no\033such.bin", "--output-dir", "o2",
			    "--nnsdk", TD_LIB, "--device-root", "dev", NULL };
	r = run(b);
	expect(&r, 3);
	no_terminal_bytes(&r);
	assert_non_null(strstr(r.err, "cannot open no\\033such.bin: "));
	assert_null(strstr(r.err, "\\x5c"));
	assert_null(strstr(r.err, "\\\\"));
	run_free(&r);

	/* a sample.txt: its model, input and output names */
	FILE *f = fopen(in_work("esc.txt"), "w");
	assert_non_null(f);
	fprintf(f, "[network]\n" ESC_M "\n[input]\nin\033[2J.bin\n[output]\nr\033[5m.dat\nc.dat\n"
		   "[network]\nno\033[3J.nb\n[input]\nin\033[2J.bin\n");
	assert_int_equal(fclose(f), 0);
	const char *c[] = { "run", "--sample", "esc.txt", "--output-dir", "o3", "--nnsdk", TD_LIB,
			    "--device-root", "dev", NULL };
	r = run(c);
	expect(&r, 3); /* the second model does not exist */
	no_terminal_bytes(&r);
	assert_non_null(strstr(r.out, "network 1 of 2: " ESC_M_SHOWN "\n"));
	assert_non_null(strstr(r.out, "-> o3/network_0/r\\033[5m.dat\n"));
	assert_non_null(strstr(r.out, "network 2 of 2: no\\033[3J.nb\n"));
	assert_non_null(strstr(r.err, "no\\033[3J.nb"));
	run_free(&r);
	/* usage errors quote the argument escaped */
	const char *d[] = { "run", ESC_M, "--loops", "x\033[1m", NULL };
	r = run(d);
	expect(&r, 2);
	no_terminal_bytes(&r);
	assert_non_null(strstr(r.err, "not 'x\\033[1m'"));
	run_free(&r);
}

/* An input, a golden or the model cut while nbg run reads it: file-changed
 * (exit 3), nothing run on the zeros and nothing written (the preloaded
 * shim truncates *shrink.nb right after nbg maps it). */
static void test_run_input_changed(void **state)
{
	char env[1024];
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture("m.nb", "in-shrink.nb");
	snprintf(env, sizeof(env), "LD_PRELOAD=%s", SHRINK_PRELOAD);
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=1", 1);
	uint8_t *z = calloc(98304, 1);
	put_file(in_work("in.bin"), z, 98304);
	put_file(in_work("g-shrink.nb"), z, 28672);
	put_file(in_work("g1.bin"), z, 1792);
	free(z);
	size_t n;
	uint8_t *mb = corpus_model(&n);
	put_file(in_work("m-shrink.nb"), mb, n);
	free(mb);
	static const struct {
		const char *model, *input, *golden, *what;
	} cases[] = {
		{ "m.nb", "in-shrink.nb", NULL, "file-changed: input in-shrink.nb shrank" },
		{ "m.nb", "in.bin", "g-shrink.nb", "file-changed: golden g-shrink.nb shrank" },
		{ "m-shrink.nb", "in.bin", NULL, "m-shrink.nb shrank" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *a[] = { "run", cases[i].model, "--input", cases[i].input,
				    "--output-dir", "oc", "--nnsdk", TD_LIB, "--device-root", "dev",
				    cases[i].golden ? "--golden" : NULL, cases[i].golden, "g1.bin",
				    NULL };
		run_result r = run_env(env, NULL, NULL, a);
		expect(&r, 3);
		assert_non_null(strstr(r.err, cases[i].what));
		run_free(&r);
		assert_true(entries_in("oc") <= 0); /* absent or empty */
		/* the shim cut it: put it back for the next case */
		z = calloc(98304, 1);
		put_file(in_work("in-shrink.nb"), z, 98304);
		put_file(in_work("g-shrink.nb"), z, 28672);
		free(z);
		mb = corpus_model(&n);
		put_file(in_work("m-shrink.nb"), mb, n);
		free(mb);
	}
	unsetenv("ASAN_OPTIONS");
}

/* The files nbg run writes follow the OUT rules of every output: a FIFO
 * (or, as root, a device node) is refused and left alone, a link to a
 * regular file is written through with the file's mode kept. */
static void test_run_outputs(void **state)
{
	struct stat st;
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture("m.nb", "in.bin");
	const char *ok[] = { "run", "m.nb", "--input", "in.bin", "--output-dir", "plain", "--nnsdk",
			     TD_LIB, "--device-root", "dev", NULL };
	run_result r = run(ok);
	expect(&r, 0);
	run_free(&r);

	assert_int_equal(mkdir(in_work("of"), 0755), 0);
	assert_int_equal(mkfifo(in_work("of/output_1.bin"), 0644), 0);
	const char *a[] = { "run", "m.nb", "--input", "in.bin", "--output-dir", "of", "--nnsdk",
			    TD_LIB, "--device-root", "dev", NULL };
	r = run(a);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "not-regular-file: of/output_1.bin is a FIFO"));
	run_free(&r);
	assert_int_equal(entries_in("of"), 1); /* the FIFO alone: no output, no temporary */
	assert_int_equal(lstat(in_work("of/output_1.bin"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	if (geteuid() == 0) {
		assert_int_equal(unlink(in_work("of/output_1.bin")), 0);
		assert_int_equal(mknod(in_work("of/output_0.npy"), S_IFCHR | 0666, makedev(1, 3)), 0);
		r = run(a);
		expect(&r, 3);
		assert_non_null(strstr(r.err, "of/output_0.npy is a character device"));
		run_free(&r);
		assert_int_equal(lstat(in_work("of/output_0.npy"), &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		assert_int_equal(st.st_rdev, makedev(1, 3));
		assert_int_equal(entries_in("of"), 1);
	}

	assert_int_equal(mkdir(in_work("ol"), 0755), 0);
	put_file(in_work("kept.bin"), "old", 3);
	assert_int_equal(chmod(in_work("kept.bin"), 0640), 0);
	assert_int_equal(symlink("../kept.bin", in_work("ol/output_1.bin")), 0);
	const char *l[] = { "run", "m.nb", "--input", "in.bin", "--output-dir", "ol", "--nnsdk",
			    TD_LIB, "--device-root", "dev", NULL };
	r = run(l);
	expect(&r, 0);
	run_free(&r);
	assert_int_equal(lstat(in_work("ol/output_1.bin"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(in_work("kept.bin"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	size_t n1, n2;
	uint8_t *want = fx_read_file(in_work("plain/output_1.bin"), &n1);
	uint8_t *got = fx_read_file(in_work("kept.bin"), &n2);
	assert_non_null(want);
	assert_non_null(got);
	assert_int_equal(n1, 1792);
	assert_int_equal(n2, n1);
	assert_memory_equal(got, want, n1);
	free(want);
	free(got);
	assert_int_equal(entries_in("ol"), 5); /* 2 x (bin, npy), summary.json: no temporary */
	assert_int_equal(count_prefix(".kept.bin."), 0);
}

/* nbg run's exits: a wrong input is a failed check (1), not a usage error. */
static void test_run_exit_codes(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture("m.nb", "in.bin");
	put_file(in_work("short.bin"), sample, 100);
	assert_int_equal(mkfifo(in_work("in.fifo"), 0644), 0);
	static const struct {
		const char *input, *extra, *code;
		int status;
	} cases[] = {
		{ "short.bin", NULL, "input-size-mismatch", 1 },
		{ "in.bin", "in.bin", "input-count-mismatch", 1 },
		{ "missing.bin", NULL, "No such file", 3 },
		{ "in.fifo", NULL, "is a FIFO", 3 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *a[] = { "run", "m.nb", "--output-dir", "ox", "--nnsdk", TD_LIB,
				    "--device-root", "dev", "--input", cases[i].input, cases[i].extra,
				    NULL };
		run_result r = run(a);
		expect(&r, cases[i].status);
		assert_non_null(strstr(r.err, cases[i].code));
		run_free(&r);
		assert_true(entries_in("ox") <= 0);
	}
	const char *u[] = { "run", "m.nb", "--input", "in.bin", NULL };
	run_result r = run(u);
	expect(&r, 2);
	run_free(&r);
	assert_int_equal(mkdir(in_work("nodev"), 0755), 0);
	const char *nd[] = { "run", "m.nb", "--input", "in.bin", "--output-dir", "ox", "--nnsdk",
			     TD_LIB, "--device-root", "nodev", NULL };
	r = run(nd);
	expect(&r, 4);
	assert_non_null(strstr(r.err, "no-device"));
	run_free(&r);
}

/* A sample.txt, written as given. */
static void put_sample(const char *name, const char *text)
{
	put_file(in_work(name), text, strlen(text));
}

/* sample.txt [output] names that collide -- two equal names, a name nbg
 * run writes itself (summary.json, output_<i>.npy) -- lost outputs with
 * exit 0, and summary.json listed files that held something else.  They are
 * refused (sample-invalid) before anything runs; two names that are links
 * to one file are refused before anything is renamed. */
static void test_run_sample_names(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture("m.nb", "in.bin");
	static const char *const clashes[] = {
		"[output]\nsame.bin\nsame.bin\n",
		"[output]\nsummary.json\nb.bin\n",
		"[output]\na.bin\noutput_0.npy\n",
		"[output]\nx/dup.bin\ny/dup.bin\n", /* directories are dropped */
	};
	for (size_t i = 0; i < sizeof(clashes) / sizeof(clashes[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "[network]\nm.nb\n[input]\nin.bin\n%s", clashes[i]);
		put_sample("clash.txt", text);
		const char *a[] = { "run", "--sample", "clash.txt", "--output-dir", "oc", "--nnsdk",
				    TD_LIB, "--device-root", "dev", NULL };
		run_result r = run(a);
		if (r.status != 2)
			print_error("[output] case %zu\n", i);
		expect(&r, 2);
		assert_non_null(strstr(r.err, "sample-invalid"));
		assert_non_null(strstr(r.err, "nothing is run"));
		run_free(&r);
		assert_true(entries_in("oc") <= 0); /* absent or empty */
	}
	/* a name for output 0 that is output 1's own raw file */
	put_sample("clash.txt", "[network]\nm.nb\n[input]\nin.bin\n[output]\noutput_1.bin\n");
	const char *b[] = { "run", "--sample", "clash.txt", "--output-dir", "oc", "--nnsdk", TD_LIB,
			    "--device-root", "dev", NULL };
	run_result r = run(b);
	expect(&r, 2);
	run_free(&r);

	/* two names, one file: b.bin is a link to a.bin */
	assert_int_equal(mkdir(in_work("ol2"), 0755), 0);
	put_file(in_work("ol2/a.bin"), "old", 3);
	assert_int_equal(symlink("a.bin", in_work("ol2/b.bin")), 0);
	put_sample("alias.txt", "[network]\nm.nb\n[input]\nin.bin\n[output]\na.bin\nb.bin\n");
	const char *c[] = { "run", "--sample", "alias.txt", "--output-dir", "ol2", "--nnsdk", TD_LIB,
			    "--device-root", "dev", NULL };
	r = run(c);
	expect(&r, 3);
	assert_non_null(strstr(r.err, "are the same file"));
	run_free(&r);
	size_t n;
	char *old = slurp(in_work("ol2/a.bin"), &n);
	assert_int_equal(n, 3);
	free(old);
	assert_int_equal(entries_in("ol2"), 2); /* a.bin and the link: no temporary */
}

/* A failure of a network that has [golden] files, other than a golden
 * mismatch (here input-size-mismatch, exit 1 too), did not stop the next
 * network: only a golden mismatch lets the run go on. */
static void test_run_sample_stops(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture("m.nb", "in.bin");
	put_file(in_work("short.bin"), sample, 100);
	uint8_t *z = calloc(28672, 1);
	put_file(in_work("g0.bin"), z, 28672);
	put_file(in_work("g1.bin"), z, 1792);
	free(z);
	put_sample("stops.txt", "[network]\nm.nb\n[input]\nshort.bin\n[golden]\ng0.bin\ng1.bin\n"
				"[network]\nm.nb\n[input]\nin.bin\n");
	const char *a[] = { "run", "--sample", "stops.txt", "--output-dir", "os", "--nnsdk", TD_LIB,
			    "--device-root", "dev", NULL };
	run_result r = run(a);
	expect(&r, 1);
	assert_non_null(strstr(r.err, "input-size-mismatch"));
	assert_null(strstr(r.out, "network 2 of 2"));
	run_free(&r);
	assert_int_equal(access(in_work("os/network_1"), F_OK), -1);

	/* a golden mismatch does not stop it: both networks run, exit 1 */
	uint8_t *o = malloc(28672);
	memset(o, 0x55, 28672);
	put_file(in_work("g0.bin"), o, 28672);
	free(o);
	put_sample("goes.txt", "[network]\nm.nb\n[input]\nin.bin\n[golden]\ng0.bin\ng1.bin\n"
			       "[network]\nm.nb\n[input]\nin.bin\n");
	const char *b[] = { "run", "--sample", "goes.txt", "--output-dir", "og", "--nnsdk", TD_LIB,
			    "--device-root", "dev", NULL };
	r = run(b);
	expect(&r, 1);
	assert_non_null(strstr(r.err, "golden mismatch"));
	assert_non_null(strstr(r.out, "network 2 of 2"));
	run_free(&r);
	assert_int_equal(access(in_work("og/network_1/summary.json"), F_OK), 0);
}

/* A 71 KB model declaring one 1 GiB FP16 output made nbg run hold 7.3 GB
 * and write 3 GB (the cap was 4 GiB per output, no total).  What a run may
 * write and hold is capped (--max-output 1 GiB, --max-memory 2 GiB by
 * default) and checked from the declared records before anything is read,
 * allocated or run. */
static void test_run_output_cap(void **state)
{
	(void)state;
	NEEDS_NNSDK_ABI();
	run_fixture("m.nb", "in.bin");
	/* the sample with output 0 declared FP16 of 512 Mi elements: 1 GiB */
	uint8_t *b = malloc(sample_size);
	memcpy(b, sample, sample_size);
	uint8_t *out0 = memmem(b, sample_size, "uid_4_out_0", 11);
	assert_non_null(out0);
	uint8_t *rec = out0 - 0x30; /* the name is at +0x30 of the 112-byte record */
	uint32_t dims[3] = { 1024, 1024, 512 };
	fx_put32(rec, 3);           /* dim_count */
	for (int d = 0; d < 3; d++)
		fx_put32(rec + 4 + 4 * d, dims[d]);
	fx_put32(rec + 0x1c, 1);    /* FP16 */
	fx_put32(rec + 0x24, 0);    /* not quantized */
	fx_refresh(b, sample_size);
	put_file(in_work("huge.nb"), b, sample_size);
	free(b);
	/* what a refusal at the same point costs for the small model: nbg
	 * itself (under ASan a few hundred MB) */
	const char *a0[] = { "run", "m.nb", "--input", "in.bin", "--output-dir", "oh", "--nnsdk",
			     TD_LIB, "--device-root", "dev", "--max-output", "1K", NULL };
	run_result r = run(a0);
	expect(&r, 1);
	long base_kb = r.maxrss_kb;
	run_free(&r);
	const char *a[] = { "run", "huge.nb", "--input", "in.bin", "--output-dir", "oh", "--nnsdk",
			    TD_LIB, "--device-root", "dev", NULL };
	r = run(a);
	expect(&r, 1);
	assert_non_null(strstr(r.err, "work-limit"));
	assert_non_null(strstr(r.err, "over --max-output 1073741824"));
	print_message("a 1 GiB output refused: peak RSS %ld KiB (the small model's refusal: %ld "
		      "KiB)\n", r.maxrss_kb, base_kb);
	assert_true(r.maxrss_kb < base_kb + 64 * 1024); /* nothing of the 7 GB allocated */
	run_free(&r);
	assert_true(entries_in("oh") <= 0);

	/* the limits on the model nbg run does run: its outputs are 28,672 and
	 * 1,792 bytes (INT16 and FP16 of 14,336 and 896 elements) */
	static const struct {
		const char *opt, *val;
		int status;
	} lim[] = {
		{ "--max-output", "64K", 1 },  { "--max-output", "1M", 0 },
		{ "--max-output", "none", 0 }, { "--max-memory", "64K", 1 },
		{ "--max-memory", "4M", 0 },   { "--max-output", "12Q", 2 },
	};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		const char *c[] = { "run", "m.nb", "--input", "in.bin", "--output-dir", "ol3",
				    "--nnsdk", TD_LIB, "--device-root", "dev", lim[i].opt, lim[i].val,
				    NULL };
		r = run(c);
		if (r.status != lim[i].status)
			print_error("%s %s\n", lim[i].opt, lim[i].val);
		expect(&r, lim[i].status);
		if (lim[i].status == 1)
			assert_non_null(strstr(r.err, lim[i].opt));
		run_free(&r);
	}
}

/* ------------------------------------- arguments quoted in messages */

/* A usage error quotes the argument it refuses: escaped, like any path. */
static void test_args_escaped(void **state)
{
	(void)state;
	const char *cmds[][7] = {
		{ "inspect", "--" OSC, NULL },
		{ "inspect", "--format", OSC, "sample.nb", NULL },
		{ "inspect", "--expect-target", OSC, "sample.nb", NULL },
		{ "verify", "--" OSC, NULL },
		{ "diff", "sample.nb", "sample.nb", OSC, NULL },
		{ "diff", "--" OSC, "sample.nb", "sample.nb", NULL },
		{ "ledger", "--" OSC, NULL },
		{ "reemit", "sample.nb", "x.nb", OSC, NULL },
		{ "reemit", "--" OSC, "sample.nb", "x.nb", NULL },
		{ "map", "--" OSC, NULL },
		{ "map", "sample.nb", "sample.nb", "--svg", OSC, NULL },
		{ "graph", "sample.nb", OSC, NULL },
		{ "graph", "--" OSC, NULL },
		{ "probe", "--" OSC, NULL },
		{ "corpus", "--jobs", OSC, "sample.nb", NULL },
		{ "run", "sample.nb", OSC, NULL },
		{ "help", OSC, NULL },
		{ OSC, NULL },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		run_result r = run(cmds[i]);
		if (r.status != 2)
			print_error("nbg %s %s\n", cmds[i][0], cmds[i][1] ? cmds[i][1] : "");
		expect(&r, 2);
		no_terminal_bytes(&r);
		if (!strstr(r.err, OSC_SHOWN))
			fail_msg("nbg %s %s: the argument is not quoted escaped:\n%s", cmds[i][0],
				 cmds[i][1] ? cmds[i][1] : "", r.err);
		run_free(&r);
	}
}

/* ------------------------------------- 10. long names */

static void test_long_names(void **state)
{
	char name[256];
	(void)state;

	for (size_t len = 250; len <= 255; len += 5) {
		memset(name, 'n', len);
		memcpy(name + len - 3, ".nb", 3);
		name[len] = '\0';
		const char *c[] = { "reemit", "sample.nb", name, NULL };
		run_result r = run(c);
		expect(&r, 0);
		run_free(&r);
		assert_true(same_as_sample(in_work(name)));
		const char *m[] = { "map", "sample.nb", "--svg", name, NULL };
		r = run(m);
		expect(&r, 0);
		run_free(&r);
		const char *g[] = { "graph", "sample.nb", "--dot", name, NULL };
		r = run(g);
		expect(&r, 0);
		run_free(&r);
		unlink(in_work(name));
	}
	assert_int_equal(count_prefix(".nnn"), 0);
}

/* ------------------------------------- second sweep: names drawn by Graphviz */

/* 1 when `prog` is on PATH. */
static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char cand[4096];

	for (const char *p = path; p && *p;) {
		const char *end = strchr(p, ':');
		int len = end ? (int)(end - p) : (int)strlen(p);
		snprintf(cand, sizeof(cand), "%.*s/%s", len, p, prog);
		if (len && access(cand, X_OK) == 0)
			return 1;
		p = end ? end + 1 : p + len;
	}
	return 0;
}

/* Text that is well-formed XML as far as bytes go: no control byte but tab,
 * newline and carriage return, and no character reference to one (XML 1.0
 * allows neither). */
static void xml_chars_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		assert_true(ch >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r');
		if (ch == '&' && i + 2 < n && s[i + 1] == '#') {
			int hex = s[i + 2] == 'x';
			unsigned long v = strtoul(s + i + 2 + hex, NULL, hex ? 16 : 10);
			if (!(v >= 0x20 || v == 9 || v == 10 || v == 13))
				fail_msg("a character reference to U+%04lX at byte %zu", v, i);
		}
	}
}

/* Graphviz decodes entities in labels: a file, layer or I/O name holding
 * "&#x1b;" or "&#1;" became a raw ESC or 0x01 in the SVG (not XML, and
 * `--svg -` sent ESC to the terminal).  '&' is written as &amp;. */
static void test_graph_entities(void **state)
{
	(void)state;
	uint8_t *b = malloc(sample_size);
	memcpy(b, sample, sample_size);
	uint8_t *name = memmem(b, sample_size, "input/output[0]", 15);
	assert_non_null(name);
	memcpy(name, "in&#27;&#x9b;", 14); /* the record's 64-byte name, NUL-padded */
	fx_refresh(b, sample_size);
#define ENT "g&#x1b;[2J&#1;.nb"
	put_file(in_work(ENT), b, sample_size);
	free(b);
	const char *d[] = { "graph", ENT, "--dot", "-", NULL };
	run_result r = run(d);
	expect(&r, 0);
	/* every '&' of the names is "&amp;", so no entity is left to decode */
	assert_null(strstr(r.out, "&#"));
	assert_non_null(strstr(r.out, "g&amp;#x1b;[2J&amp;#1;.nb"));
	assert_non_null(strstr(r.out, "in&amp;#27;&amp;#x9b;"));
	run_free(&r);
	if (!on_path("dot")) {
		print_message("Graphviz's dot is not installed: the SVG half is not checked\n");
	} else {
		const char *v[] = { "graph", ENT, "--svg", "-", NULL };
		r = run(v);
		expect(&r, 0);
		assert_non_null(strstr(r.out, "</svg>"));
		xml_chars_only(r.out, r.out_len);
		assert_non_null(strstr(r.out, "g&amp;#x1b;[2J&amp;#1;.nb"));
		assert_non_null(strstr(r.out, "in&amp;#27;&amp;#x9b;"));
		run_free(&r);
	}
	unlink(in_work(ENT));
#undef ENT
}

/* ------------------------------------- second sweep: one output policy */

/* The commands that write a file, each with OUT where "OUT" stands. */
static const char *const writers[][12] = {
	{ "reemit", "sample.nb", "OUT", NULL },
	{ "map", "sample.nb", "--svg", "OUT", NULL },
	{ "graph", "sample.nb", "--dot", "OUT", NULL },
	{ "graph", "sample.nb", "--svg", "OUT", NULL },
	{ "tensor", "--model", "sample.nb", "--input", "0", "zero.bin", "-o", "OUT", NULL },
	{ "corpus", "--records", "OUT", "sample.nb", NULL },
	{ "corpus", "--write-manifest", "OUT", "sample.nb", NULL },
};
#define WRITERS (sizeof(writers) / sizeof(writers[0]))

/* Runs writer k with OUT `out`; 0 when it was skipped (graph --svg without
 * Graphviz). */
static int run_writer(size_t k, const char *out, int status)
{
	const char *argv[12];
	int svg = 0;
	for (int i = 0; i < 12; i++) {
		argv[i] = writers[k][i] && !strcmp(writers[k][i], "OUT") ? out : writers[k][i];
		svg |= writers[k][i] && !strcmp(writers[k][i], "--svg");
	}
	if (svg && !strcmp(argv[0], "graph") && !on_path("dot"))
		return 0;
	run_result r = run(argv);
	if (r.status != status)
		print_error("nbg %s %s -> %s\n", argv[0], argv[1], out);
	expect(&r, status);
	run_free(&r);
	return 1;
}

/* `nbg graph --dot/--svg` made every output 0644: an existing 0600 file of
 * another user became world-readable and root's, and new files ignored the
 * umask.  Every command now keeps the mode (and, as root, the owner and
 * group) of the file it replaces and gives a new one 0666 less the umask. */
static void test_out_mode_owner_umask(void **state)
{
	struct stat st;
	int root = geteuid() == 0;
	(void)state;
	uint8_t *z = calloc(SAMPLE_INPUT_BYTES, 1);
	put_file(in_work("zero.bin"), z, SAMPLE_INPUT_BYTES);
	free(z);
	if (!root)
		print_message("not root: another user's file cannot be made here; the owner is "
			      "not checked\n");
	for (size_t k = 0; k < WRITERS; k++) {
		/* a new file under umask 027 */
		unlink(in_work("new.out"));
		mode_t old = umask(027);
		int ran = run_writer(k, "new.out", 0);
		umask(old);
		if (!ran)
			continue;
		assert_int_equal(stat(in_work("new.out"), &st), 0);
		if ((st.st_mode & 07777) != 0640)
			fail_msg("nbg %s %s: a new file has mode %o under umask 027", writers[k][0],
				 writers[k][1], st.st_mode & 07777);
		/* another user's 0600 file */
		put_file(in_work("theirs.out"), "old", 3);
		assert_int_equal(chmod(in_work("theirs.out"), 0600), 0);
		if (root)
			assert_int_equal(chown(in_work("theirs.out"), 65534, 65533), 0);
		run_writer(k, "theirs.out", 0);
		assert_int_equal(stat(in_work("theirs.out"), &st), 0);
		assert_true(st.st_size > 3);
		if ((st.st_mode & 07777) != 0600)
			fail_msg("nbg %s %s: the file replaced had mode 0600, it has %o",
				 writers[k][0], writers[k][1], st.st_mode & 07777);
		if (root && (st.st_uid != 65534 || st.st_gid != 65533))
			fail_msg("nbg %s %s: the file replaced was 65534:65533's, it is %u:%u's",
				 writers[k][0], writers[k][1], (unsigned)st.st_uid,
				 (unsigned)st.st_gid);
	}
	unlink(in_work("new.out"));
	unlink(in_work("theirs.out"));
	assert_int_equal(count_prefix(".theirs.out."), 0);
	assert_int_equal(count_prefix(".new.out."), 0);
}

/* ------------------------------------- second sweep: merge parts */

/* `nbg corpus --json sample.nb` as a jansson document. */
static json_t *sample_part(void)
{
	const char *a[] = { "corpus", "--json", "sample.nb", NULL };
	run_result r = run(a);
	expect(&r, 0);
	json_t *j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	run_free(&r);
	return j;
}

static void write_part(const char *name, json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	assert_non_null(text);
	put_file(in_work(name), text, strlen(text));
	free(text);
	json_decref(j);
}

/* A part is untrusted: note ids from one were printed raw by the text
 * report (an ESC]0;...BEL ESC[2J reached the terminal), and its counts
 * added up modulo 2^64 (0 files = 2^64-1 valid + 1 invalid passed). */
static void test_merge_hostile_parts(void **state)
{
	(void)state;
	json_t *j = sample_part();
	json_t *notes = json_object_get(j, "notes");
	assert_non_null(notes);
	json_object_set_new(notes, "x\033]0;pwned\007\033[2J", json_integer(1));
	write_part("esc-part.json", j);
	const char *m[] = { "corpus", "--merge", "esc-part.json", NULL };
	run_result r = run(m);
	expect(&r, 2);
	no_terminal_bytes(&r);
	assert_non_null(strstr(r.err, "corpus-part"));
	assert_non_null(strstr(r.err, "note id"));
	run_free(&r);

	/* 0 files = (2^64 - 1) valid + 1 invalid, modulo 2^64 */
	j = sample_part();
	json_object_set_new(j, "files", json_integer(0));
	json_object_set_new(j, "valid", json_string("18446744073709551615"));
	json_object_set_new(json_object_get(j, "v2"), "files", json_string("18446744073709551615"));
	json_object_set_new(json_object_get(j, "invalid_by_code"), "bad-magic", json_integer(1));
	write_part("wrap-part.json", j);
	const char *w[] = { "corpus", "--merge", "wrap-part.json", NULL };
	r = run(w);
	expect(&r, 2);
	assert_non_null(strstr(r.err, "counts do not add up"));
	assert_string_equal(r.out, "");
	run_free(&r);

	/* two parts that are each consistent, whose sum wraps */
	j = sample_part();
	json_object_set_new(j, "files", json_string("9223372036854775808"));
	json_object_set_new(j, "valid", json_string("9223372036854775808"));
	json_object_set_new(json_object_get(j, "v2"), "files", json_string("9223372036854775808"));
	write_part("half-part.json", j);
	const char *h[] = { "corpus", "--merge", "half-part.json", "half-part.json", NULL };
	r = run(h);
	expect(&r, 2);
	assert_non_null(strstr(r.err, "passes 2^64-1"));
	assert_string_equal(r.out, "");
	run_free(&r);
	unlink(in_work("esc-part.json"));
	unlink(in_work("wrap-part.json"));
	unlink(in_work("half-part.json"));
}

/* ------------------------------------- second sweep: a sparse file in a walk */

/* nbg corpus read every walked *.nb whole before parsing it: a 2 GiB sparse
 * file whose header proves it invalid took 8 s and 2.1 GB of memory (nbg
 * verify: 0.00 s, 2.4 MB).  The size limit and the header come first: the
 * file is refused without being read or hashed. */
static void test_corpus_sparse_unread(void **state)
{
	(void)state;
	if (sizeof(void *) < 8) {
		print_message("skipped: a %zu-bit build cannot map the 2 GiB file\n",
			      sizeof(void *) * 8);
		skip();
	}
	assert_int_equal(mkdir(in_work("sparse"), 0755), 0);
	/* the peak RSS of the same command over the 5 KB sample: what nbg
	 * itself takes (under ASan a few hundred MB) */
	const char *c0[] = { "corpus", "--records", "r.jsonl", "sample.nb", NULL };
	run_result r = run(c0);
	expect(&r, 0);
	long base_kb = r.maxrss_kb;
	run_free(&r);
	/* the sample's header, declaring its 5140 bytes, in front of 2 GiB */
	make_sparse(in_work("sparse/big.nb"), sample, sample_size, (off_t)2 << 30);
	const char *c[] = { "corpus", "--records", "r.jsonl", "--write-manifest", "m.sha256",
			    "sparse", NULL };
	r = run(c);
	expect(&r, 1);
	print_message("nbg corpus over a 2 GiB sparse file: peak RSS %ld KiB (over the 5 KB "
		      "sample: %ld KiB)\n", r.maxrss_kb, base_kb);
	/* the file's bytes never came into memory: the file is 2048 MiB */
	assert_true(r.maxrss_kb < base_kb + 64 * 1024);
	run_free(&r);
	size_t n;
	char *rec = slurp(in_work("r.jsonl"), &n);
	json_t *j = json_loads(rec, 0, NULL);
	assert_non_null(j);
	want_str(json_object_get(j, "status"), "status", "invalid");
	want_str(json_object_get(j, "failure_code"), "failure_code", "file-size-mismatch");
	assert_true(json_is_null(json_object_get(j, "sha256"))); /* not read, not hashed */
	json_decref(j);
	free(rec);
	/* not read whole: not in the manifest */
	assert_int_equal(access(in_work("m.sha256"), F_OK), 0);
	char *man = slurp(in_work("m.sha256"), &n);
	assert_int_equal(n, 0);
	free(man);

	/* the size limit before anything: NBG_MAX_FILE_SIZE applies to a walk */
	const char *c2[] = { "corpus", "--records", "r.jsonl", "sparse", NULL };
	r = run_env("NBG_MAX_FILE_SIZE=1G", NULL, NULL, c2);
	expect(&r, 1);
	assert_true(r.maxrss_kb < base_kb + 64 * 1024);
	run_free(&r);
	rec = slurp(in_work("r.jsonl"), &n);
	j = json_loads(rec, 0, NULL);
	want_str(json_object_get(j, "failure_code"), "failure_code", "work-limit");
	json_decref(j);
	free(rec);
	unlink(in_work("r.jsonl"));
	unlink(in_work("m.sha256"));
	unlink(in_work("sparse/big.nb"));
	rmdir(in_work("sparse"));
}

/* ------------------------------------- second sweep: corpus outputs */

/* nbg corpus made its --records and --write-manifest temporaries with a
 * plain mkstemp, registered with nothing: after SIGTERM .r.jsonl.XXXXXX and
 * .m.sha256.XXXXXX stayed behind.  Each signal now removes both, and the
 * process still dies by it. */
static void test_signal_during_corpus(void **state)
{
	(void)state;
	fx_spec *sp = fx_default();
	fx_resize(fx_find(sp, 24), (size_t)32 << 20);
	size_t n;
	uint8_t *big = fx_build(sp, &n);
	fx_free(sp);
	assert_int_equal(mkdir(in_work("slow"), 0755), 0);
	put_file(in_work("slow/f000.nb"), big, n);
	free(big);
	for (int i = 1; i < 64; i++) { /* a minute of hashing would be needed to end */
		char name[64];
		snprintf(name, sizeof(name), "slow/f%03d.nb", i);
		assert_int_equal(link(in_work("slow/f000.nb"), in_work(name)), 0);
	}
	unlink(in_work("r.jsonl"));
	unlink(in_work("m.sha256"));
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (int k = 0; k < 3; k++) {
		char *const args[] = { "nbg", "corpus", "--jobs", "1", "--records", "r.jsonl",
				       "--write-manifest", "m.sha256", "slow", NULL };
		pid_t pid = spawn_quiet(args);
		int st, seen = 0;
		for (int t = 0; t < 200000 && !seen; t++) {
			seen = count_prefix(".r.jsonl.") > 0 && count_prefix(".m.sha256.") > 0;
			if (!seen)
				usleep(50);
		}
		assert_true(seen);
		usleep(100 * 1000); /* into the measuring */
		kill(pid, sigs[k]);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), sigs[k]);
		assert_int_equal(count_prefix(".r.jsonl."), 0);
		assert_int_equal(count_prefix(".m.sha256."), 0);
		assert_int_equal(access(in_work("r.jsonl"), F_OK), -1);
		assert_int_equal(access(in_work("m.sha256"), F_OK), -1);
	}
	for (int i = 0; i < 64; i++) {
		char name[64];
		snprintf(name, sizeof(name), "slow/f%03d.nb", i);
		unlink(in_work(name));
	}
	rmdir(in_work("slow"));
}

/* corpus --records followed policies of its own: a FIFO there blocked
 * forever (opened without O_NONBLOCK), a 250-byte name failed "File name too
 * long" (the temporary's name was not cut to NAME_MAX), and a symbolic link
 * to a file was replaced by a regular file instead of written through. */
static void test_corpus_records_out(void **state)
{
	struct stat st;
	(void)state;
	assert_int_equal(mkfifo(in_work("rec.fifo"), 0644), 0);
	const char *f[] = { "corpus", "--records", "rec.fifo", "sample.nb", NULL };
	run_result r = run(f); /* 124 when it hangs */
	expect(&r, 3);
	assert_non_null(strstr(r.err, "not-regular-file: rec.fifo is a FIFO"));
	run_free(&r);
	assert_int_equal(lstat(in_work("rec.fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(in_work("rec.fifo"));

	char name[256];
	memset(name, 'r', 250);
	strcpy(name + 244, ".jsonl");
	const char *l[] = { "corpus", "--records", name, "--write-manifest", "m.sha256", "sample.nb",
			    NULL };
	r = run(l);
	expect(&r, 0);
	run_free(&r);
	char *rec = slurp(in_work(name), NULL);
	assert_non_null(strstr(rec, "\"path\":\"sample.nb\""));
	free(rec);
	unlink(in_work(name));
	unlink(in_work("m.sha256"));
	assert_int_equal(count_prefix(".rrrr"), 0);

	put_file(in_work("target.jsonl"), "old", 3);
	assert_int_equal(chmod(in_work("target.jsonl"), 0640), 0);
	assert_int_equal(symlink("target.jsonl", in_work("link.jsonl")), 0);
	const char *k[] = { "corpus", "--records", "link.jsonl", "sample.nb", NULL };
	r = run(k);
	expect(&r, 0);
	run_free(&r);
	assert_int_equal(lstat(in_work("link.jsonl"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(in_work("target.jsonl"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	rec = slurp(in_work("target.jsonl"), NULL);
	assert_non_null(strstr(rec, "\"path\":\"sample.nb\""));
	free(rec);
	unlink(in_work("link.jsonl"));
	unlink(in_work("target.jsonl"));
	assert_int_equal(count_prefix(".target.jsonl."), 0);
}

/* "Same file" was a string comparison: --records same.out --write-manifest
 * ./same.out lost the records with exit 0, and --json --records /dev/stdout
 * passed the refusal of "-".  Outputs are compared by device and inode (by
 * directory and name for new files), and standard output by what it is. */
static void test_same_file_outputs(void **state)
{
	(void)state;
	const char *a[] = { "corpus", "--records", "same.out", "--write-manifest", "./same.out",
			    "sample.nb", NULL };
	run_result r = run(a);
	expect(&r, 2);
	assert_non_null(strstr(r.err, "name the same file"));
	run_free(&r);
	assert_int_equal(access(in_work("same.out"), F_OK), -1);
	assert_int_equal(count_prefix(".same.out."), 0);

	/* a link to the other one, existing */
	put_file(in_work("exists.out"), "old", 3);
	assert_int_equal(symlink("exists.out", in_work("alias.out")), 0);
	const char *b[] = { "corpus", "--records", "exists.out", "--write-manifest", "alias.out",
			    "sample.nb", NULL };
	r = run(b);
	expect(&r, 2);
	run_free(&r);
	size_t n;
	char *old = slurp(in_work("exists.out"), &n);
	assert_int_equal(n, 3);
	free(old);
	unlink(in_work("alias.out"));
	unlink(in_work("exists.out"));

	/* standard output by any of its names, or the file it goes to */
	const char *stdouts[] = { "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", ".stdout" };
	for (size_t i = 0; i < sizeof(stdouts) / sizeof(stdouts[0]); i++) {
		const char *c[] = { "corpus", "--json", "--records", stdouts[i], "sample.nb", NULL };
		r = run(c);
		if (r.status != 2)
			print_error("--records %s\n", stdouts[i]);
		expect(&r, 2);
		assert_non_null(strstr(r.err, "both want standard output"));
		run_free(&r);
	}
	/* without --json the records go there and the report to stderr */
	const char *d[] = { "corpus", "--records", "/dev/stdout", "sample.nb", NULL };
	r = run(d);
	expect(&r, 0);
	assert_memory_equal(r.out, "{\"path\":\"sample.nb\"", 19);
	assert_non_null(strstr(r.err, "Corpus: 1 files, 1 valid"));
	run_free(&r);

	/* nbg tensor -o /dev/stdout is standard output too: the data there, the
	 * line that says what was done on stderr (defect 9's other name) */
	uint8_t *z = calloc(SAMPLE_INPUT_BYTES, 1);
	put_file(in_work("zero.bin"), z, SAMPLE_INPUT_BYTES);
	free(z);
	const char *t[] = { "tensor", "--model", "sample.nb", "--input", "0", "zero.bin", "-o",
			    "/dev/stdout", NULL };
	r = run(t);
	expect(&r, 0);
	assert_int_equal(r.out_len, SAMPLE_INPUT_BYTES);
	assert_non_null(strstr(r.err, "-> standard output (raw, 784 bytes)"));
	run_free(&r);
}

/* ------------------------------------- the escaper itself */

static void test_escape_rules(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain name.nb", "plain name.nb" },
		{ "back\\slash", "back\\\\slash" },
		{ "t\tn\nr\r", "t\\tn\\nr\\r" },
		{ "\033[2J", "\\033[2J" },
		{ "del\177", "del\\177" },
		{ "caf\xc3\xa9.nb", "caf\xc3\xa9.nb" },           /* UTF-8 kept */
		{ "\xc3(", "\\303(" },                             /* cut sequence */
		{ "\xc0\xaf", "\\300\\257" },                      /* overlong '/' */
		{ "\xed\xa0\x80", "\\355\\240\\200" },             /* surrogate */
		{ "\xc2\x9b" "31m", "\\302\\23331m" },             /* C1 CSI */
		{ "a\xe2\x80\xae" "b", "a\\342\\200\\256b" },      /* RIGHT-TO-LEFT OVERRIDE */
		{ "\xe2\x80\xa8", "\\342\\200\\250" },             /* LINE SEPARATOR */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = nbg_path_escape(cases[i].in);
		assert_non_null(e);
		assert_string_equal(e, cases[i].out);
		assert_int_equal(nbg_path_needs_escape(cases[i].in),
				 strcmp(cases[i].in, cases[i].out) != 0);
		free(e);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_rules),
		cmocka_unit_test(test_out_device_node),
		cmocka_unit_test(test_out_special_and_links),
		cmocka_unit_test(test_input_not_regular),
		cmocka_unit_test(test_sparse_refused_unhashed),
		cmocka_unit_test(test_sparse_v1_trailer),
		cmocka_unit_test(test_forged_names),
		cmocka_unit_test(test_signal_during_write),
		cmocka_unit_test(test_stdout_full),
		cmocka_unit_test(test_truncated_while_mapped),
		cmocka_unit_test(test_truncated_cli),
		cmocka_unit_test(test_json_paths_everywhere),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_run_paths_escaped),
		cmocka_unit_test(test_run_input_changed),
		cmocka_unit_test(test_run_outputs),
		cmocka_unit_test(test_run_exit_codes),
		cmocka_unit_test(test_args_escaped),
		cmocka_unit_test(test_graph_entities),
		cmocka_unit_test(test_out_mode_owner_umask),
		cmocka_unit_test(test_merge_hostile_parts),
		cmocka_unit_test(test_corpus_sparse_unread),
		cmocka_unit_test(test_signal_during_corpus),
		cmocka_unit_test(test_corpus_records_out),
		cmocka_unit_test(test_same_file_outputs),
		cmocka_unit_test(test_run_sample_names),
		cmocka_unit_test(test_run_sample_stops),
		cmocka_unit_test(test_run_output_cap),
	};
	/* The v1 trailer and nbg run on the real files. */
#define REAL(t) cmocka_unit_test_setup_teardown(t, use_real, use_synthesized)
	const struct CMUnitTest corpus[] = {
		REAL(test_sparse_v1_trailer_corpus), REAL(test_json_paths_of_run),
		REAL(test_run_paths_escaped),        REAL(test_run_input_changed),
		REAL(test_run_outputs),              REAL(test_run_exit_codes),
	};
	return tc_main(argc, argv, "test_hostile", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), setup, teardown);
}

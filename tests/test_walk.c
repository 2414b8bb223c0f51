/*
 * test_walk.c - the directory walk of `nbg corpus` in a hostile tree
 * (doc/security.md, "Directory walks"): loops of `up -> ..` links with and
 * without --follow, a tree deeper than PATH_MAX, entries nbg may not read
 * (with their reason), and a tree of nothing but symbolic links into the
 * real corpus, with a FIFO, /dev/tty and a dangling link beside them.
 *
 * Expected values come from the trees built here (how many files, links
 * and loops they hold), from stat() and from OpenSSL's SHA-256 of the files
 * the links name; never from the program's own output.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/sha.h>

#include "corpus.h"
#include "fixture.h"

#define SAMPLE NBG_SOURCE_DIR "/samples/sample.nb"

static char *tmpdir(void)
{
	return fx_tmpdir("nbgwalk");
}

static void rmtree(const char *dir)
{
	assert_int_equal(fx_rmtree(dir), 0);
}

static void copy_sample(const char *to)
{
	size_t n;
	uint8_t *b = fx_read_file(SAMPLE, &n);
	assert_non_null(b);
	FILE *f = fopen(to, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	free(b);
}

/* A text file, NUL-terminated (NULL when absent). */
static char *text_of(const char *path)
{
	size_t n;
	char *t = (char *)fx_read_file(path, &n);
	if (t)
		t[n] = '\0'; /* fx_read_file leaves room for it */
	return t;
}

/* The integer `key` of the summary document, or of its member `group`. */
static json_int_t count_at(json_t *j, const char *group, const char *key)
{
	json_t *v = json_object_get(group ? json_object_get(j, group) : j, key);
	if (!json_is_integer(v))
		fail_msg("no integer %s%s%s", group ? group : "", group ? "." : "", key);
	return json_integer_value(v);
}

static json_t *json_doc(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	if (!j)
		fail_msg("not JSON (%s): %.200s", je.text, text);
	return j;
}

/* One JSON object per line. */
static json_t *records(const char *text)
{
	json_t *all = json_array();
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		json_error_t je;
		json_t *o = json_loadb(p, (size_t)(nl - p), 0, &je);
		if (!o)
			fail_msg("record is not JSON (%s): %.200s", je.text, p);
		json_array_append_new(all, o);
		p = nl + 1;
	}
	return all;
}

static const char *rstr(json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));
	if (!s)
		fail_msg("record without a string %s", key);
	return s;
}

static json_t *record_named(json_t *all, const char *suffix)
{
	size_t i, b = strlen(suffix);
	json_t *r;
	json_array_foreach(all, i, r) {
		const char *p = rstr(r, "path");
		size_t a = strlen(p);
		if (a >= b && !strcmp(p + a - b, suffix))
			return r;
	}
	fail_msg("no record for %s", suffix);
	return NULL;
}

static size_t count_lines(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* ------------------------------------------------ loops of up -> .. links */

/* One file and five links back to its directory: with a depth cap alone
 * the links made 97,656 paths to that one file. */
static void test_up_links(void **state)
{
	char *dir = tmpdir(), p[700];
	(void)state;
	snprintf(p, sizeof(p), "%s/one.nb", dir);
	copy_sample(p);
	snprintf(p, sizeof(p), "%s/d", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	for (int i = 1; i <= 5; i++) {
		snprintf(p, sizeof(p), "%s/d/up%d", dir, i);
		assert_int_equal(symlink("..", p), 0);
	}

	/* not followed: each link reported once, with what to do */
	fx_run_result r = fx_run_nbg(NULL, "corpus --json '%s'", dir);
	assert_int_equal(r.status, 0);
	json_t *j = json_doc(r.out);
	assert_int_equal(count_at(j, NULL, "files"), 1);
	assert_int_equal(count_at(j, NULL, "valid"), 1);
	assert_int_equal(count_at(j, "skipped", "directory-symlink"), 5);
	assert_int_equal(count_at(j, "skipped", "directory-revisited"), 0);
	json_decref(j);
	assert_int_equal(count_lines(r.err, "symbolic link to a directory, not followed "
					   "(--follow follows)"), 5);
	fx_run_free(&r);

	/* --follow: each link leads back to a directory already walked */
	r = fx_run_nbg(NULL, "corpus --follow --json --records '%s/r.jsonl' '%s'", dir, dir);
	assert_int_equal(r.status, 0);
	j = json_doc(r.out);
	assert_int_equal(count_at(j, NULL, "files"), 1);
	assert_int_equal(count_at(j, "skipped", "directory-symlink"), 0);
	assert_int_equal(count_at(j, "skipped", "directory-revisited"), 5);
	json_decref(j);
	assert_int_equal(count_lines(r.err, "directory already walked"), 5);
	fx_run_free(&r);
	snprintf(p, sizeof(p), "%s/r.jsonl", dir);
	char *text = text_of(p);
	assert_non_null(text);
	json_t *all = records(text);
	assert_int_equal(json_array_size(all), 1);
	assert_string_equal(rstr(json_array_get(all, 0), "path") + strlen(dir), "/one.nb");
	json_decref(all);
	free(text);
	rmtree(dir);
	free(dir);
}

/* ------------------------------------------------ deeper than PATH_MAX */

/* No depth cap: a file 100 levels down is measured; where the path outgrows
 * PATH_MAX the walk says so, with the reason, and the run fails (exit 3). */
static void test_deeper_than_path_max(void **state)
{
	char *dir = tmpdir(), here[PATH_MAX];
	const int levels = PATH_MAX / 3 + 40; /* "/zz" per level */
	(void)state;

	assert_non_null(getcwd(here, sizeof(here)));
	assert_int_equal(chdir(dir), 0);
	for (int i = 1; i <= levels; i++) {
		assert_int_equal(mkdir("zz", 0755), 0);
		assert_int_equal(chdir("zz"), 0);
		if (i == 100 || i == levels)
			copy_sample("deep.nb");
	}
	assert_int_equal(chdir(here), 0);

	fx_run_result r = fx_run_nbg(NULL, "corpus --json '%s'", dir);
	assert_int_equal(r.status, 3);
	json_t *j = json_doc(r.out);
	assert_int_equal(count_at(j, NULL, "files"), 1); /* the file at level 100 */
	assert_int_equal(count_at(j, NULL, "valid"), 1);
	/* the first directory whose path does not fit; the ones below it are
	 * never listed */
	assert_int_equal(count_at(j, "skipped", "unreadable"), 1);
	json_decref(j);
	/* (lstat of the entry fails first: "cannot examine PATH: REASON") */
	assert_true(strstr(r.err, "cannot examine ") || strstr(r.err, "cannot open directory "));
	assert_non_null(strstr(r.err, strerror(ENAMETOOLONG)));
	assert_int_equal(count_lines(r.err, "\n"), 1);
	fx_run_free(&r);
	rmtree(dir);
	free(dir);
}

/* ------------------------------------------------ entries nbg may not read */

/* Permissions do not bind root: as root the command runs as nobody. */
static const char *as_unprivileged(void)
{
	if (geteuid() != 0)
		return "";
	if (access("/usr/bin/setpriv", X_OK) == 0)
		return "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups";
	return NULL;
}

static void test_unreadable_entries(void **state)
{
	char *dir = tmpdir(), p[700], want[800];
	const char *prefix = as_unprivileged();
	(void)state;
	if (!prefix) {
		print_message("skipped: running as root without setpriv to drop privileges\n");
		skip();
	}
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/ok.nb", dir);
	copy_sample(p);
	snprintf(p, sizeof(p), "%s/secret.nb", dir);
	copy_sample(p);
	assert_int_equal(chmod(p, 0), 0);
	snprintf(p, sizeof(p), "%s/closed", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/closed/inside.nb", dir);
	copy_sample(p);
	snprintf(p, sizeof(p), "%s/closed", dir);
	assert_int_equal(chmod(p, 0), 0);

	fx_run_result r = fx_run_nbg(prefix, "corpus --json '%s'", dir);
	assert_int_equal(r.status, 3);
	json_t *j = json_doc(r.out);
	assert_int_equal(count_at(j, NULL, "files"), 2);
	assert_int_equal(count_at(j, NULL, "valid"), 1);
	assert_int_equal(count_at(j, "not_measured", "unreadable"), 1);
	assert_int_equal(count_at(j, "skipped", "unreadable"), 1);
	json_decref(j);
	const char *denied = strerror(EACCES);
	snprintf(want, sizeof(want), "cannot open directory %s/closed: %s", dir, denied);
	assert_non_null(strstr(r.err, want));
	snprintf(want, sizeof(want), "%s/secret.nb", dir);
	assert_non_null(strstr(r.err, want));
	assert_int_equal(count_lines(r.err, denied), 2);
	fx_run_free(&r);
	rmtree(dir);
	free(dir);
}

/* ------------------------------------------------ links into the real corpus */

typedef struct real_file {
	char link[1400], real[1400], sha[65];
	long long size;
	int family;
} real_file;

/* Links TREE/files/SUB-NAME to every NAME.nb of the corpus's SUB, with
 * each file's size, SHA-256 (OpenSSL) and family (its version word). */
static size_t link_family(const char *tree, const char *sub, real_file *f, size_t at,
			  size_t cap)
{
	char d[600];
	struct dirent **names;
	snprintf(d, sizeof(d), "%s/%s", NBG_CORPUS_DIR, sub);
	int n = scandir(d, &names, NULL, alphasort);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		size_t len = strlen(nm), sz;
		if (len > 3 && !strcmp(nm + len - 3, ".nb") && at < cap) {
			real_file *r = &f[at++];
			uint8_t digest[32], *b;
			snprintf(r->real, sizeof(r->real), "%s/%s", d, nm);
			snprintf(r->link, sizeof(r->link), "%s/files/%s-%s", tree, sub, nm);
			assert_int_equal(symlink(r->real, r->link), 0);
			b = fx_read_file(r->real, &sz);
			assert_non_null(b);
			r->size = (long long)sz;
			SHA256(b, sz, digest);
			for (int k = 0; k < 32; k++)
				sprintf(r->sha + 2 * k, "%02x", digest[k]);
			/* v2's version word is 0x00020000, v1's 0x0001xxxx */
			r->family = sz >= 8 && b[6] == 2 && b[7] == 0 ? 2 : 1;
			free(b);
		}
		free(names[i]);
	}
	free(names);
	return at;
}

/* A copy-free tree: nothing in it but links into the corpus directory, a
 * directory link, a link back up, and three entries that are not files. */
static void test_links_into_corpus(void **state)
{
	char *tree, p[1400];
	(void)state;
	tree = tmpdir();
	snprintf(p, sizeof(p), "%s/files", tree);
	assert_int_equal(mkdir(p, 0755), 0);
	real_file *f = calloc(256, sizeof(*f));
	assert_non_null(f);
	size_t n1 = link_family(tree, "v1", f, 0, 256);
	size_t n = link_family(tree, "v2", f, n1, 256), n2 = n - n1;
	assert_true(n1 > 0 && n2 > 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(f[i].family, i < n1 ? 1 : 2);
	snprintf(p, sizeof(p), "%s/v2", tree);
	assert_int_equal(symlink(NBG_CORPUS_DIR "/v2", p), 0);
	snprintf(p, sizeof(p), "%s/files/up", tree);
	assert_int_equal(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/fifo.nb", tree);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/tty.nb", tree);
	assert_int_equal(symlink("/dev/tty", p), 0);
	snprintf(p, sizeof(p), "%s/gone.nb", tree);
	assert_int_equal(symlink("nowhere/gone.nb", p), 0);

	/* bounded by timeout: opening the FIFO or the terminal would block */
	fx_run_result r = fx_run_nbg("timeout 300", "corpus --json --records '%s.jsonl' '%s'",
				     tree, tree);
	assert_int_equal(r.status, 3);
	json_t *j = json_doc(r.out);
	assert_int_equal(count_at(j, NULL, "files"), (json_int_t)n + 3);
	assert_int_equal(count_at(j, NULL, "valid"), (json_int_t)n);
	assert_int_equal(count_at(j, "not_measured", "not-regular"), 2);
	assert_int_equal(count_at(j, "not_measured", "vanished"), 1);
	assert_int_equal(count_at(j, "skipped", "directory-symlink"), 2);
	assert_int_equal(count_at(j, "v1", "files"), (json_int_t)n1);
	assert_int_equal(count_at(j, "v2", "files"), (json_int_t)n2);
	json_decref(j);
	assert_non_null(strstr(r.err, "tty.nb is a character device"));
	assert_non_null(strstr(r.err, "fifo.nb is a FIFO"));
	fx_run_free(&r);
	snprintf(p, sizeof(p), "%s.jsonl", tree);
	char *text = text_of(p);
	assert_non_null(text);
	unlink(p);
	json_t *all = records(text);
	free(text);
	assert_int_equal(json_array_size(all), n + 3);
	for (size_t i = 0; i < n; i++) {
		json_t *rec = record_named(all, strrchr(f[i].link, '/'));
		assert_string_equal(rstr(rec, "path"), f[i].link);
		assert_string_equal(rstr(rec, "status"), "valid");
		assert_string_equal(rstr(rec, "sha256"), f[i].sha);
		assert_int_equal(json_integer_value(json_object_get(rec, "size")), f[i].size);
		assert_int_equal(json_integer_value(json_object_get(rec, "family")), f[i].family);
	}
	assert_string_equal(rstr(record_named(all, "/fifo.nb"), "status"), "not-regular");
	assert_string_equal(rstr(record_named(all, "/tty.nb"), "status"), "not-regular");
	assert_string_equal(rstr(record_named(all, "/gone.nb"), "status"), "vanished");
	json_decref(all);

	/* --follow: the directory link adds the v2 files a second time (by
	 * their real names), the link back up is a directory already walked */
	r = fx_run_nbg("timeout 300", "corpus --follow --quiet --json '%s'", tree);
	assert_int_equal(r.status, 3);
	j = json_doc(r.out);
	assert_int_equal(count_at(j, NULL, "files"), (json_int_t)(n + n2) + 3);
	assert_int_equal(count_at(j, NULL, "valid"), (json_int_t)(n + n2));
	assert_int_equal(count_at(j, "skipped", "directory-symlink"), 0);
	assert_int_equal(count_at(j, "skipped", "directory-revisited"), 1);
	json_decref(j);
	fx_run_free(&r);
	/* nothing was copied: every entry of files/ is still a link */
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		assert_int_equal(lstat(f[i].link, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	print_message("%zu v1 and %zu v2 corpus files walked through links\n", n1, n2);
	free(f);
	rmtree(tree);
	free(tree);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_up_links),
		cmocka_unit_test(test_deeper_than_path_max),
		cmocka_unit_test(test_unreadable_entries),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_links_into_corpus),
	};
	return tc_main(argc, argv, "test_walk", tests, TC_COUNT(tests), corpus, TC_COUNT(corpus),
		       NULL, NULL);
}

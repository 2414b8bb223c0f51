/*
 * test_ledger_cli.c - `nbg ledger`, `nbg reemit` and `nbg map` as a user runs
 * them: exit codes, the refusal and its code on stderr, and that no failure
 * ever leaves an output or temporary file behind.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "exe_wrapper.h"
#include "fixture.h"

#define REAL NBG_CORPUS_DIR "/v2/face_detector_nbg_int16.nb"
#define REAL_V1 NBG_CORPUS_DIR "/v1/1000f_7d_face_age_7d.nb"

static char tmpdir[] = "/tmp/nbgledgercli-XXXXXX";

static char *slurp(const char *path)
{
	size_t n;
	char *s = (char *)fx_read_file(path, &n);
	if (s)
		s[n] = '\0';
	return s;
}

static char *tmp(const char *name)
{
	static char p[8][600];
	static int k;
	char *s = p[k++ % 8];
	snprintf(s, sizeof(p[0]), "%s/%s", tmpdir, name);
	return s;
}

static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int same_file(const char *a, const char *b)
{
	size_t na, nb;
	uint8_t *x = fx_read_file(a, &na), *y = fx_read_file(b, &nb);
	int same = x && y && na == nb && !memcmp(x, y, na);
	free(x);
	free(y);
	return same;
}

static void test_ledger_table(void **state)
{
	fx_run_result r = fx_run_nbg(NULL, "ledger '%s'", REAL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	/* its 37 int16 kernel streams decoded: one range each, where the
	 * coefficient data was one preserved range */
	assert_non_null(strstr(r.out, "74 owner ranges tile [0, 237840): no gap, no overlap"));
	assert_non_null(strstr(r.out, "0x000064c8  0x00006500          56  alignment"));
	assert_non_null(strstr(r.out, "section-covered-view  0x00039f10         512      512"));
	assert_non_null(strstr(r.out, "alignment                    2           248"));
	assert_non_null(strstr(r.out, "total                       74        237840  100.000%"));
	fx_run_free(&r);
}

static void test_ledger_failures(void **state)
{
	fx_run_result r = fx_run_nbg(NULL, "ledger");
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "ledger '%s'", tmp("missing.nb"));
	assert_int_equal(r.status, 3);
	fx_run_free(&r);
	/* not an NBG: exit 1 with the parser's code */
	FILE *f = fopen(tmp("junk.nb"), "wb");
	fputs("this is not an NBG file at all", f);
	fclose(f);
	r = fx_run_nbg(NULL, "ledger '%s'", tmp("junk.nb"));
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "bad-magic"));
	fx_run_free(&r);
	unlink(tmp("junk.nb"));
}

static void test_ledger_json(void **state)
{
	const char *files[] = { REAL, REAL_V1 };
	for (int k = 0; k < 2; k++) {
		fx_run_result r = fx_run_nbg(NULL, "ledger --json '%s'", files[k]);
		json_error_t je;
		size_t i;
		json_t *e, *j;
		uint64_t cur = 0, sum = 0;

		assert_int_equal(r.status, 0);
		j = json_loads(r.out, 0, &je);
		assert_non_null(j);
		assert_string_equal(json_string_value(json_object_get(j, "invariant")), "holds");
		json_array_foreach(json_object_get(j, "ranges"), i, e) {
			assert_int_equal(json_integer_value(json_object_get(e, "offset")), cur);
			cur += (uint64_t)json_integer_value(json_object_get(e, "size"));
		}
		assert_int_equal(cur, json_integer_value(json_object_get(j, "file_size")));
		const char *key;
		json_object_foreach(json_object_get(j, "totals"), key, e)
			sum += (uint64_t)json_integer_value(json_object_get(e, "bytes"));
		assert_int_equal(sum, cur);
		json_decref(j);
		fx_run_free(&r);
	}
}

static void test_reemit_identical(void **state)
{
	fx_run_result r = fx_run_nbg(NULL, "reemit '%s' '%s'", REAL, tmp("out.nb"));
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "(identical)"));
	assert_true(same_file(REAL, tmp("out.nb")));
	fx_run_free(&r);
	/* over an existing file, too */
	r = fx_run_nbg(NULL, "reemit '%s' '%s'", REAL_V1, tmp("out.nb"));
	assert_int_equal(r.status, 0);
	assert_true(same_file(REAL_V1, tmp("out.nb")));
	fx_run_free(&r);
	unlink(tmp("out.nb"));
	assert_int_equal(dir_entries(tmpdir), 0);
	r = fx_run_nbg(NULL, "reemit '%s'", REAL);
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
}

/* The ledger of the original, a copy with one byte changed: refused, exit 1,
 * the code on stderr, no output and no temporary file. */
static void test_reemit_refused(void **state)
{
	fx_run_result r;
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "%s'%s' ledger --json '%s' > '%s'", nbg_exe_wrapper_prefix(),
		 getenv("NBG_BIN"), REAL, tmp("orig.ledger.json"));
	assert_int_equal(system(cmd), 0);

	size_t n;
	uint8_t *buf = fx_read_file(REAL, &n);
	buf[0x6500 + 1000] ^= 0x01; /* one coefficient byte */
	FILE *f = fopen(tmp("changed.nb"), "wb");
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
	free(buf);

	r = fx_run_nbg(NULL, "reemit '%s' '%s' --ledger '%s'", tmp("changed.nb"), tmp("out.nb"),
		    tmp("orig.ledger.json"));
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "semantic-change-refused"));
	assert_non_null(strstr(r.err, "offset 25856 (0x6500)"));
	/* the byte is in operation 1's int16 kernel stream, [0x6500, 0x7380) */
	assert_non_null(strstr(r.err, "kernel stream of operation 1"));
	assert_false(exists(tmp("out.nb")));
	assert_int_equal(dir_entries(tmpdir), 2); /* only the two inputs */
	fx_run_free(&r);

	/* the unchanged original passes against the same ledger */
	r = fx_run_nbg(NULL, "reemit '%s' '%s' --ledger '%s'", REAL, tmp("out.nb"),
		    tmp("orig.ledger.json"));
	assert_int_equal(r.status, 0);
	assert_true(same_file(REAL, tmp("out.nb")));
	fx_run_free(&r);
	/* a ledger document that is not one */
	f = fopen(tmp("bad.json"), "wb");
	fputs("{\"family\": 2}", f);
	fclose(f);
	r = fx_run_nbg(NULL, "reemit '%s' '%s' --ledger '%s'", REAL, tmp("out2.nb"), tmp("bad.json"));
	assert_int_equal(r.status, 1);
	assert_false(exists(tmp("out2.nb")));
	fx_run_free(&r);
	unlink(tmp("bad.json"));
	unlink(tmp("out.nb"));
	unlink(tmp("changed.nb"));
	unlink(tmp("orig.ledger.json"));
	assert_int_equal(dir_entries(tmpdir), 0);
}

/* Output that cannot be written: exit 3 and nothing left behind. */
static void test_reemit_unwritable(void **state)
{
	fx_run_result r;

	/* a directory that does not exist */
	r = fx_run_nbg(NULL, "reemit '%s' '%s'", REAL, tmp("nodir/out.nb"));
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "io-error"));
	fx_run_free(&r);

	/* a read-only directory (mode bits stop everyone but root; /proc stops root) */
	assert_int_equal(mkdir(tmp("ro"), 0555), 0);
	if (geteuid() != 0) {
		r = fx_run_nbg(NULL, "reemit '%s' '%s'", REAL, tmp("ro/out.nb"));
		assert_int_equal(r.status, 3);
		fx_run_free(&r);
	}
	assert_int_equal(dir_entries(tmp("ro")), 0);
	rmdir(tmp("ro"));
	r = fx_run_nbg(NULL, "reemit '%s' /proc/nbgkit-reemit-test.nb", REAL);
	assert_int_equal(r.status, 3);
	assert_false(exists("/proc/nbgkit-reemit-test.nb"));
	fx_run_free(&r);

	/* a write that fails half-way (file-size limit of 16 KiB): the partial
	 * temporary file is removed and OUT never appears */
	char args[2048];
	snprintf(args, sizeof(args), "reemit '%s' '%s'", REAL, tmp("big.nb"));
	r = fx_run_nbg("ulimit -f 32;", "%s", args);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "io-error"));
	assert_false(exists(tmp("big.nb")));
	assert_int_equal(dir_entries(tmpdir), 0);
	fx_run_free(&r);

	/* the map goes through the same path */
	r = fx_run_nbg(NULL, "map '%s' --svg '%s'", REAL, tmp("nodir/m.svg"));
	assert_int_equal(r.status, 3);
	fx_run_free(&r);
	assert_int_equal(dir_entries(tmpdir), 0);
}

static void test_map(void **state)
{
	fx_run_result r = fx_run_nbg(NULL, "map '%s' --svg '%s'", REAL, tmp("m.svg"));
	assert_int_equal(r.status, 0);
	char *svg = slurp(tmp("m.svg"));
	assert_non_null(svg);
	assert_non_null(strstr(svg, "face_detector_nbg_int16.nb"));
	assert_non_null(strstr(svg, "section 24 COEF_DATA"));
	assert_non_null(strstr(svg, "section-covered-view"));
	free(svg);
	fx_run_free(&r);
	unlink(tmp("m.svg"));
	r = fx_run_nbg(NULL, "map '%s'", REAL);
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "map '%s' --png '%s'", REAL, tmp("m.png"));
	assert_int_equal(r.status, 2);
	assert_false(exists(tmp("m.png")));
	fx_run_free(&r);
	assert_int_equal(dir_entries(tmpdir), 0);
}

/* doc/ledger.md shows real output of `nbg ledger`; it must stay the output.
 * NBG_REGEN_GOLDEN=1 rewrites the block after an intended change.  The doc
 * names the file by the default corpus path relative to the checkout, so the
 * command runs where that path leads to the configured corpus, wherever it
 * is: TMP/src, with TMP/shared/corpus a link to it. */
static void test_doc_block(void **state)
{
	static const char begin[] =
		"<!-- BEGIN nbg ledger ../shared/corpus/v2/face_detector_nbg_int16.nb -->\n";
	static const char end[] =
		"<!-- END nbg ledger ../shared/corpus/v2/face_detector_nbg_int16.nb -->\n";
	const char *doc_path = NBG_SOURCE_DIR "/doc/ledger.md";
	char prefix[700];
	assert_int_equal(mkdir(tmp("src"), 0755), 0);
	assert_int_equal(mkdir(tmp("shared"), 0755), 0);
	assert_int_equal(symlink(NBG_CORPUS_DIR, tmp("shared/corpus")), 0);
	snprintf(prefix, sizeof(prefix), "cd '%s' &&", tmp("src"));
	fx_run_result r = fx_run_nbg(prefix,
				     "ledger ../shared/corpus/v2/face_detector_nbg_int16.nb");
	assert_int_equal(unlink(tmp("shared/corpus")), 0);
	assert_int_equal(rmdir(tmp("shared")), 0);
	assert_int_equal(rmdir(tmp("src")), 0);
	char *doc = slurp(doc_path), *b, *e, *want;
	size_t n;

	assert_int_equal(r.status, 0);
	assert_non_null(doc);
	b = strstr(doc, begin);
	assert_non_null(b);
	b += strlen(begin);
	e = strstr(b, end);
	assert_non_null(e);
	n = strlen(r.out) + 16;
	want = malloc(n);
	snprintf(want, n, "```\n%s```\n", r.out);
	if (getenv("NBG_REGEN_GOLDEN")) {
		FILE *f = fopen(doc_path, "w");
		assert_non_null(f);
		fwrite(doc, 1, (size_t)(b - doc), f);
		fputs(want, f);
		fputs(e, f);
		fclose(f);
	} else if (strlen(want) != (size_t)(e - b) || memcmp(want, b, (size_t)(e - b))) {
		fail_msg("doc/ledger.md's output block is stale (NBG_REGEN_GOLDEN=1 rewrites it):\n%s",
			 want);
	}
	free(want);
	free(doc);
	fx_run_free(&r);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	return rmdir(tmpdir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ledger_failures),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_ledger_table),
		cmocka_unit_test(test_ledger_json),
		cmocka_unit_test(test_reemit_identical),
		cmocka_unit_test(test_reemit_refused),
		cmocka_unit_test(test_reemit_unwritable),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_doc_block),
	};
	if (!getenv("NBG_BIN")) {
		fprintf(stderr, "NBG_BIN is not set (run through meson test)\n");
		return 1;
	}
	return tc_main(argc, argv, "test_ledger_cli", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), setup, teardown);
}

/*
 * test_corpus_cmd.c - `nbg corpus` over the real corpus: its totals equal
 * values computed here independently from the raw bytes (file counts by
 * family, I/O record counts from the headers, distinct final-512 SHA-256
 * values, v2 checksum records, dynamic-I/O entries); invalid and unreadable
 * inputs give the documented exit codes.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/sha.h>

#include "corpus.h"
#include "fixture.h"

typedef struct expect {
	int files, v1, v2, io_records, checksum_records, dyn_files, dyn_entries;
	uint8_t (*tails)[32];
	int ntails, cap;
} expect;

static void scan_file(expect *e, const char *path)
{
	size_t n;
	uint8_t *b = fx_read_file(path, &n), d[32];
	assert_non_null(b);
	e->files++;
	SHA256(b + n - 512, 512, d);
	int seen = 0;
	for (int i = 0; i < e->ntails; i++)
		seen |= !memcmp(e->tails[i], d, 32);
	if (!seen) {
		if (e->ntails == e->cap) {
			e->cap = e->cap ? 2 * e->cap : 64;
			e->tails = realloc(e->tails, (size_t)e->cap * 32);
			assert_non_null(e->tails);
		}
		memcpy(e->tails[e->ntails++], d, 32);
	}
	if (fx_get32(b + 4) == 0x00020000) {
		e->v2++;
		uint32_t dir = fx_get32(b + 48), cnt = fx_get32(b + 56);
		for (uint32_t i = 0; i < cnt; i++) {
			const uint8_t *r = b + dir + 44 * i;
			uint32_t type = fx_get32(r), off = fx_get32(r + 4), size = fx_get32(r + 12);
			if (type == 35)
				e->io_records += (int)(fx_get32(b + off + 0x40) + fx_get32(b + off + 0x44));
			if (type == 40)
				e->checksum_records += (int)(size / 8);
			if (type == 26) {
				e->dyn_files++;
				e->dyn_entries += (int)(size / 8);
			}
		}
	} else {
		e->v1++;
		e->io_records += (int)(fx_get32(b + 84) + fx_get32(b + 88)); /* doc/format-v1.md */
	}
	free(b);
}

static void scan_dir(expect *e, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l > 3 && !strcmp(de->d_name + l - 3, ".nb")) {
			char p[1024];
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			scan_file(e, p);
		}
	}
	closedir(d);
}

static int run(const char *args, char **out)
{
	fx_run_result r = fx_run_nbg(FX_IN_SOURCE, "%s", args);
	*out = r.out;
	free(r.err);
	return r.status;
}

static json_int_t geti(json_t *o, const char *a, const char *b)
{
	json_t *x = json_object_get(o, a);
	return json_integer_value(b ? json_object_get(x, b) : x);
}

static void test_corpus_totals(void **state)
{
	expect e, e2;
	char *out, line[128];
	memset(&e, 0, sizeof(e));
	memset(&e2, 0, sizeof(e2));
	scan_dir(&e, NBG_CORPUS_DIR "/v1");
	scan_dir(&e, NBG_CORPUS_DIR "/v2");
	scan_dir(&e2, NBG_CORPUS_DIR "/v2");
	/* the files scanned are the ones the corpus's manifest lists */
	assert_int_equal(e.v1, tc_manifest_files("v1"));
	assert_int_equal(e.v2, tc_manifest_files("v2"));

	assert_int_equal(run("corpus --json " NBG_CORPUS_DIR, &out), 0);
	json_t *j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(geti(j, "files", NULL), e.files);
	assert_int_equal(geti(j, "valid", NULL), e.files);
	json_t *v2 = json_object_get(j, "v2");
	assert_int_equal(geti(v2, "files", NULL), e.v2);
	assert_int_equal(geti(json_object_get(j, "v1"), "files", NULL), e.v1);
	assert_int_equal(geti(v2, "section_checksums", "records"), e.checksum_records);
	assert_int_equal(geti(v2, "section_checksums", "match"), e.checksum_records);
	assert_int_equal(geti(v2, "file_checksums", "match"), e.v2);
	assert_int_equal(geti(v2, "dynamic_io", "paired_files"), e.dyn_files);
	assert_int_equal(geti(v2, "dynamic_io", "entries"), e.dyn_entries);
	assert_int_equal(geti(v2, "operation_count_plus_3", "holds"), e.v2);
	assert_int_equal(geti(j, "io_records", "count"), e.io_records);
	assert_int_equal(geti(j, "connection_tails", "distinct_sha256"), e.ntails);
	json_decref(j);
	free(out);

	/* the human form says the same, on v2/ alone */
	assert_int_equal(run("corpus " NBG_CORPUS_DIR "/v2", &out), 0);
	snprintf(line, sizeof(line), "Corpus: %d files, %d valid,", e2.files, e2.files);
	if (!strstr(out, line))
		fail_msg("no \"%s\" in:\n%s", line, out);
	snprintf(line, sizeof(line), "section checksums              %d records, %d match\n",
		 e2.checksum_records, e2.checksum_records);
	if (!strstr(out, line))
		fail_msg("no \"%s\" in:\n%s", line, out);
	free(out);
	free(e.tails);
	free(e2.tails);
}

static void test_corpus_failures(void **state)
{
	char dir[] = "/tmp/nbgcorpus-dirXXXXXX", path[512], args[600], *out;
	assert_non_null(mkdtemp(dir));
	size_t n;
	uint8_t *b = fx_read_file(NBG_SOURCE_DIR "/samples/sample.nb", &n);
	snprintf(path, sizeof(path), "%s/good.nb", dir);
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
	b[0] = 'X';
	snprintf(path, sizeof(path), "%s/bad.nb", dir);
	f = fopen(path, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
	free(b);

	snprintf(args, sizeof(args), "corpus --json %s", dir);
	assert_int_equal(run(args, &out), 1);
	json_t *j = json_loads(out, 0, NULL);
	assert_int_equal(geti(j, "files", NULL), 2);
	assert_int_equal(geti(j, "valid", NULL), 1);
	assert_int_equal(geti(j, "invalid_by_code", "bad-magic"), 1);
	json_decref(j);
	free(out);

	snprintf(args, sizeof(args), "corpus %s /nonexistent-dir", dir);
	assert_int_equal(run(args, &out), 3);
	free(out);
	assert_int_equal(run("corpus", &out), 2);
	free(out);

	snprintf(path, sizeof(path), "%s/good.nb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bad.nb", dir);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_failures),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_totals),
	};
	return tc_main(argc, argv, "test_corpus_cmd", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}

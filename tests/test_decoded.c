/*
 * test_decoded.c - nbg_decoded, the decoded model: each part is decoded
 * once (the same pointer on every call; after the first call, a change to
 * the model behind it changes nothing, so nothing was decoded again), a
 * failure is kept (the same code and error, still after the cause is
 * removed), a part whose input failed returns that failure, and every part
 * equals what the direct calls give (nbg_graph_decode, nbg_commands_decode,
 * nbg_weights_decode, nbg_mem_analyze, nbg_ledger_build_weights: the
 * independent derivation, each part compared through its JSON document,
 * which holds every record and the SHA-256 of every decoded array), asked
 * for in an order other than the chain's.  On synthesized files (a sound
 * one, one parsed without the section digests, whose ledger the library
 * refuses, and one whose model is cut short by hand so that its graph does
 * not decode) and, the part --corpus, on every real file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/model.h"
#include "corpus.h"
#include "fixture.h"
#include "nbg/decoded.h"
#include "nbg/report.h"
#include "report/report_internal.h"

/* a and b (malloc'd documents) the same text; frees both. */
static void same_doc(char *a, char *b, const char *what, const char *name)
{
	if (!a || !b)
		fail_msg("%s: no %s document (out of memory)", name, what);
	if (strcmp(a, b) != 0)
		fail_msg("%s: the decoded model's %s differs from the direct calls'", name, what);
	free(a);
	free(b);
}

/* One part of the JSON document written from the parts given, by the
 * library's own part writers (report_internal.h; this test links libnbg.a),
 * so the decoded model's parts and the direct calls' go through the same
 * bytes-out code; NULL when memory runs out. */
enum part { PART_GRAPH, PART_COMMANDS, PART_WEIGHTS, PART_MEMORY };
static char *part_doc(enum part which, const nbg_model *m, const nbg_graph *g,
		      const nbg_commands *c, const nbg_weights *w, const nbg_mem_report *r)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	nbg_jw jw;

	if (!f)
		return NULL;
	nbg_jw_init(&jw, f);
	nbg_jw_object(&jw, NULL);
	if (which == PART_GRAPH)
		nbg_graph_json_write(&jw, m, g, NBG_GRAPH_JSON_ALL, NULL);
	else if (which == PART_COMMANDS)
		nbg_commands_json_write(&jw, m, g, c);
	else if (which == PART_WEIGHTS)
		nbg_weights_json_write(&jw, m, g, c, w);
	else
		nbg_mem_json_write(&jw, m, g, r);
	nbg_jw_end(&jw);
	if (nbg_jw_status(&jw, NULL) != NBG_OK || fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* Two outcomes the same: code, and for a failure every member of the error. */
static void same_outcome(nbg_code ra, const nbg_error *ea, nbg_code rb, const nbg_error *eb,
			 const char *what, const char *name)
{
	if (ra != rb)
		fail_msg("%s: %s: %s, the direct calls %s", name, what, nbg_code_name(ra),
			 nbg_code_name(rb));
	if (ra != NBG_OK && (ea->offset != eb->offset || strcmp(ea->field, eb->field) ||
			     strcmp(ea->message, eb->message)))
		fail_msg("%s: %s: \"%s\", the direct calls \"%s\"", name, what, ea->message,
			 eb->message);
}

/* The direct calls, as the chains the decoded model replaced made them. */
typedef struct direct {
	nbg_graph *g;
	nbg_commands *c;
	nbg_weights *w;
	nbg_mem_report *r;
	nbg_ledger *l;
	nbg_code lrc;
	nbg_error lerr;
} direct;

static void direct_decode(const nbg_model *m, direct *x, const char *name)
{
	nbg_error err;

	memset(x, 0, sizeof(*x));
	if (nbg_graph_decode(m, &x->g, &err) != NBG_OK ||
	    nbg_commands_decode(m, x->g, &x->c, &err) != NBG_OK ||
	    nbg_weights_decode(m, x->g, x->c, &x->w, &err) != NBG_OK ||
	    nbg_mem_analyze(m, x->g, &x->r, &err) != NBG_OK)
		fail_msg("%s: the direct calls fail: %s", name, err.message);
	x->lrc = nbg_ledger_build_weights(m, x->w, &x->l, &x->lerr);
}

static void direct_free(direct *x)
{
	nbg_ledger_free(x->l);
	nbg_mem_free(x->r);
	nbg_weights_free(x->w);
	nbg_commands_free(x->c);
	nbg_graph_free(x->g);
}

/* Every part of m through a decoded model against the direct calls; the
 * ledger first (it decodes the graph, commands and weights), then memory,
 * then the others, each asked for twice.  Returns 1 when m has a ledger. */
static int compare_model(const nbg_model *m, const char *name)
{
	nbg_decoded *d = NULL;
	const nbg_graph *g, *g2;
	const nbg_commands *c, *c2;
	const nbg_weights *w, *w2;
	const nbg_mem_report *r, *r2;
	const nbg_ledger *l, *l2;
	nbg_error e1, e2;
	nbg_code lrc, lrc2;
	direct x;

	assert_int_equal(nbg_decoded_new(m, &d, NULL), NBG_OK);
	assert_ptr_equal(nbg_decoded_model(d), m);
	direct_decode(m, &x, name);
	lrc = nbg_decoded_ledger(d, &l, &e1);
	lrc2 = nbg_decoded_ledger(d, &l2, &e2);
	same_outcome(lrc, &e1, x.lrc, &x.lerr, "ledger", name);
	same_outcome(lrc2, &e2, lrc, &e1, "ledger asked again", name);
	assert_ptr_equal(l, l2);
	assert_int_equal(nbg_decoded_memory(d, &r, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_memory(d, &r2, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_weights(d, &w, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_weights(d, &w2, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_commands(d, &c, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_commands(d, &c2, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_graph(d, &g, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_graph(d, &g2, NULL), NBG_OK);
	assert_true(g == g2 && c == c2 && w == w2 && r == r2);
	same_doc(part_doc(PART_GRAPH, m, g, c, w, r), part_doc(PART_GRAPH, m, x.g, x.c, x.w, x.r),
		 "graph", name);
	same_doc(part_doc(PART_COMMANDS, m, g, c, w, r),
		 part_doc(PART_COMMANDS, m, x.g, x.c, x.w, x.r), "commands", name);
	same_doc(part_doc(PART_WEIGHTS, m, g, c, w, r),
		 part_doc(PART_WEIGHTS, m, x.g, x.c, x.w, x.r), "weights", name);
	same_doc(part_doc(PART_MEMORY, m, g, c, w, r), part_doc(PART_MEMORY, m, x.g, x.c, x.w, x.r),
		 "memory report", name);
	if (lrc == NBG_OK)
		same_doc(nbg_ledger_json(l, name), nbg_ledger_json(x.l, name), "ledger", name);
	else
		assert_null(l);
	direct_free(&x);
	nbg_decoded_free(d);
	return lrc == NBG_OK;
}

static uint8_t *fixture_file(size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *b = fx_build(s, size);

	fx_free(s);
	assert_non_null(b);
	return b;
}

/* The fixture, and the fixture parsed without the section digests, whose
 * ledger the library refuses (the failure the decoded model keeps). */
static void test_parts(void **state)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_SECTION_SHA256 };
	nbg_model *m = NULL;
	size_t size;
	uint8_t *b = fixture_file(&size);

	(void)state;
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	assert_int_equal(compare_model(m, "the fixture"), 1);
	nbg_model_free(m);
	assert_int_equal(nbg_parse(b, size, &o, &m, NULL), NBG_OK);
	assert_int_equal(compare_model(m, "the fixture without section digests"), 0);
	nbg_model_free(m);
	free(b);
}

/* Decoded once: after the first call the model is cut short by hand (a
 * section then lies past its end, which nbg_graph_decode refuses); every
 * part asked for again is still the one decoded before. */
static void test_once(void **state)
{
	nbg_model *m = NULL;
	nbg_decoded *d = NULL;
	const nbg_graph *g, *g2;
	const nbg_ledger *l, *l2;
	nbg_graph *refused = NULL;
	size_t size;
	uint8_t *b = fixture_file(&size);
	uint64_t whole;

	(void)state;
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_new(m, &d, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_graph(d, &g, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_ledger(d, &l, NULL), NBG_OK);
	whole = m->file_size;
	m->file_size = 16;
	/* the direct call sees the damage: the decoded model does not look again */
	assert_int_equal(nbg_graph_decode(m, &refused, NULL), NBG_E_SECTION_OUT_OF_BOUNDS);
	assert_int_equal(nbg_decoded_graph(d, &g2, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_ledger(d, &l2, NULL), NBG_OK);
	assert_ptr_equal(g, g2);
	assert_ptr_equal(l, l2);
	m->file_size = whole;
	nbg_decoded_free(d);
	nbg_model_free(m);
	free(b);
}

/* A failure kept: the model cut short before the first call, so its graph
 * does not decode; every part returns the graph's failure, the direct
 * call's, and returns it again once the model is whole (no second decode). */
static void test_failure_kept(void **state)
{
	nbg_model *m = NULL;
	nbg_decoded *d = NULL;
	nbg_graph *refused = NULL;
	nbg_error want, e1, e2;
	const nbg_graph *g = NULL;
	const nbg_commands *c = NULL;
	const nbg_weights *w = NULL;
	const nbg_mem_report *r = NULL;
	const nbg_ledger *l = NULL;
	size_t size;
	uint8_t *b = fixture_file(&size);
	uint64_t whole;

	(void)state;
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	whole = m->file_size;
	m->file_size = 16;
	assert_int_equal(nbg_graph_decode(m, &refused, &want), NBG_E_SECTION_OUT_OF_BOUNDS);
	assert_int_equal(nbg_decoded_new(m, &d, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_graph(d, &g, &e1), NBG_E_SECTION_OUT_OF_BOUNDS);
	same_outcome(e1.code, &e1, want.code, &want, "graph", "the model cut short");
	m->file_size = whole; /* whole again: a second decode would pass */
	assert_int_equal(nbg_decoded_graph(d, &g, &e2), NBG_E_SECTION_OUT_OF_BOUNDS);
	same_outcome(e2.code, &e2, want.code, &want, "graph asked again", "the model cut short");
	assert_int_equal(nbg_decoded_commands(d, &c, &e2), NBG_E_SECTION_OUT_OF_BOUNDS);
	same_outcome(e2.code, &e2, want.code, &want, "commands", "the model cut short");
	assert_int_equal(nbg_decoded_weights(d, &w, &e2), NBG_E_SECTION_OUT_OF_BOUNDS);
	same_outcome(e2.code, &e2, want.code, &want, "weights", "the model cut short");
	assert_int_equal(nbg_decoded_memory(d, &r, &e2), NBG_E_SECTION_OUT_OF_BOUNDS);
	same_outcome(e2.code, &e2, want.code, &want, "memory", "the model cut short");
	assert_int_equal(nbg_decoded_ledger(d, &l, &e2), NBG_E_SECTION_OUT_OF_BOUNDS);
	same_outcome(e2.code, &e2, want.code, &want, "ledger", "the model cut short");
	assert_true(!g && !c && !w && !r && !l);
	nbg_decoded_free(d);
	nbg_model_free(m);
	free(b);
}

/* The reports written from a decoded model whose parts were decoded
 * before, in another order, are the reports of the model alone. */
static void test_reports(void **state)
{
	const unsigned what = NBG_GRAPH_JSON_ALL | NBG_JSON_DOC_COMMANDS | NBG_JSON_DOC_MEMORY |
			      NBG_JSON_DOC_WEIGHTS;
	nbg_model *m = NULL;
	nbg_decoded *d = NULL;
	const nbg_weights *w;
	char *a = NULL, *t = NULL;
	size_t na = 0, nt = 0, size;
	uint8_t *b = fixture_file(&size);
	FILE *f;

	(void)state;
	assert_int_equal(nbg_parse(b, size, NULL, &m, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_new(m, &d, NULL), NBG_OK);
	assert_int_equal(nbg_decoded_weights(d, &w, NULL), NBG_OK);
	assert_non_null(f = open_memstream(&a, &na));
	assert_int_equal(nbg_json_document_write_decoded(f, d, "f.nb", what, NULL), NBG_OK);
	nbg_text_report_decoded(f, d, "f.nb");
	assert_int_equal(fclose(f), 0);
	assert_non_null(f = open_memstream(&t, &nt));
	assert_int_equal(nbg_json_document_write(f, m, "f.nb", what, NULL), NBG_OK);
	nbg_text_report(f, m, "f.nb");
	assert_int_equal(fclose(f), 0);
	assert_true(na > 0 && na == nt);
	assert_memory_equal(a, t, na);
	free(a);
	free(t);
	nbg_decoded_free(d);
	nbg_model_free(m);
	free(b);
}

/* ------------------------------------------------------------ corpus */

typedef struct tally {
	unsigned files, ledgers, not_judged;
} tally;

static void corpus_one(const char *path, void *arg)
{
	tally *t = arg;
	nbg_model *m = NULL;
	nbg_error err;
	size_t size;
	uint8_t *b = fx_read_file(path, &size);

	assert_non_null(b);
	t->files++;
	if (nbg_parse(b, size, NULL, &m, &err) != NBG_OK) {
		print_message("%s: not judged: it does not parse (%s: %s)\n", path,
			      nbg_code_name(err.code), err.message);
		t->not_judged++;
	} else {
		t->ledgers += (unsigned)compare_model(m, path);
	}
	nbg_model_free(m);
	free(b);
}

static void test_corpus(void **state)
{
	tally t = { 0 };

	(void)state;
	tc_each_corpus_file("v1", corpus_one, &t);
	tc_each_corpus_file("v2", corpus_one, &t);
	print_message("%u real files: every part of %u the same as the direct calls' (%u with "
		      "a ledger), %u not judged\n", t.files, t.files - t.not_judged, t.ledgers,
		      t.not_judged);
	assert_true(t.files > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_failure_kept),
		cmocka_unit_test(test_reports),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus),
	};
	return tc_main(argc, argv, "test_decoded", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}

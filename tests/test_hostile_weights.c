/*
 * test_hostile_weights.c - the third hostile-input sweep's cases on the
 * weights decoder, its export, files that change after the parse and the
 * text reports (doc/security.md, "The third sweep"): each file is
 * synthesized here with tests/fixture.c and tests/coef_encode.c, each case
 * fails on the build before its fix.  Work is compared at two sizes (CPU
 * time ratios, as test_mutation's test_bounds_linear does), never against
 * an absolute time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "corpus.h"
#include "fixture.h"
#include "nbg/commands.h"
#include "nbg/graph.h"
#include "nbg/nbg.h"
#include "nbg/report.h"

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Linear: 8 times the records may cost at most 20 times as long (64 times
 * is quadratic); `floor_ms` keeps a tiny first figure from making the bound
 * meaningless on a shared machine. */
static void assert_linear(const char *what, size_t n, double t1, double t8, double floor_ms)
{
	print_message("%s: %zu records %.2f ms, %zu records %.2f ms (x%.1f)\n", what, n, t1,
		      8 * n, t8, t8 / (t1 > 0.01 ? t1 : 0.01));
	assert_true(t8 < 20 * (t1 > floor_ms ? t1 : floor_ms));
}

/* ------------------------------------------------ text reports (item 13) */

/* The fixture's graph `groups` times over (NN, SH and NT operations, an
 * output edge each). */
static uint8_t *many_records(size_t groups, size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *b;

	fx_many_records(s, groups);
	b = fx_build(s, size);
	fx_free(s);
	return b;
}

/* CPU time of `nbg inspect --commands`'s text report (the default report
 * with its per-layer summary, then the operations table), the fastest of
 * three. */
static double commands_report_ms(const uint8_t *b, size_t size)
{
	nbg_model *m = NULL;
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_error err;
	double best = 1e30;
	FILE *null = fopen("/dev/null", "w");

	assert_non_null(null);
	assert_int_equal(nbg_parse(b, size, NULL, &m, &err), NBG_OK);
	assert_int_equal(nbg_graph_decode(m, &g, &err), NBG_OK);
	assert_int_equal(nbg_commands_decode(m, g, &c, &err), NBG_OK);
	assert_true(nbg_commands_op_count(c) > 0 && nbg_commands_edge_count(c) > 0);
	for (int k = 0; k < 3; k++) {
		double t0 = cpu_ms(), t;
		nbg_text_report(null, m, "m.nb");
		nbg_text_commands(null, m, g, c);
		t = cpu_ms() - t0;
		best = t < best ? t : best;
	}
	nbg_commands_free(c);
	nbg_graph_free(g);
	nbg_model_free(m);
	fclose(null);
	return best;
}

/* `inspect --commands` text of 40,000 NN and 40,000 TP records took 15-25 s
 * (every operation's line scanned every edge; the summary every operation
 * per layer). */
static void test_commands_report_linear(void **state)
{
	size_t s1, s8, n = 1024;
	uint8_t *b1 = many_records(n, &s1), *b8 = many_records(8 * n, &s8);

	(void)state;
	assert_linear("inspect --commands text", 3 * n, commands_report_ms(b1, s1),
		      commands_report_ms(b8, s8), 10.0);
	free(b1);
	free(b8);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_report_linear),
	};

	return tc_main(argc, argv, "test_hostile_weights", tests, TC_COUNT(tests), NULL, 0, NULL,
		       NULL);
}

/*
 * test_cpu_limits.c - the CPU backend's limits on a whole plan
 * (doc/cpu-backend.md, "Limits"; doc/security.md, "The third sweep"):
 * the hostile models of tests/cpu_hostile.c planned through the public API
 * and through `nbg run --backend cpu` (--check, a run, nbg probe), each
 * refused before anything runs, with the figure, the limit and the way to
 * raise it, and accepted once the limit is raised.  The figures the test
 * expects come from the models' shapes (cpu_hostile.h), not from the plan.
 * Nothing here runs a hostile model: what the test runs is refused first
 * (the commands carry --timeout, so a build that runs them fails rather than
 * hangs).  Suite quick: synthesized files, a few seconds under ASan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nbg/cpu.h"

#include "cpu_hostile.h"
#include "fixture.h"

static nbg_cpu_plan *plan(const uint8_t *b, size_t n, const nbg_cpu_options *o)
{
	nbg_cpu_plan *p = NULL;
	nbg_error e;
	if (nbg_cpu_plan_build_opts(b, n, o, &p, &e) != NBG_OK)
		fail_msg("the synthesized model does not plan: %s", e.message);
	return p;
}

/* The file written into dir as name (a path in the static buffer). */
static const char *put(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	static char path[4][512];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return p;
}

static void expect_in(const char *text, const char *want, const char *what)
{
	if (!text || !strstr(text, want))
		fail_msg("%s: expected \"%s\" in: %s", what, want, text ? text : "(nothing)");
}

/* The step a run of the plan would refuse, from the run itself: nothing
 * computed, the code and sentence nbg_cpu_plan_check gives. */
static void run_refused(const nbg_cpu_plan *p, nbg_code want, const char *field)
{
	nbg_error check, run;
	nbg_cpu_state *st = NULL;
	assert_int_equal(nbg_cpu_plan_check(p, SIZE_MAX, &check), want);
	/* the inputs do not matter: the plan's refusal comes first */
	assert_int_equal(nbg_cpu_run(p, NULL, 0, SIZE_MAX, &st, &run), want);
	assert_null(st);
	assert_string_equal(run.message, check.message);
	if (field)
		assert_string_equal(check.field, field);
}

/* Item 1: 32 records naming one convolution of CH_CONV_MACS each. */
static void test_total_work(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = ch_shared_conv(32, &n);
	nbg_cpu_plan *p = plan(b, n, NULL);
	assert_int_equal(nbg_cpu_plan_count(p), 32);
	/* each one alone is within the per-operation bound */
	assert_int_equal(nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE), 32);
	const nbg_cpu_totals *t = nbg_cpu_plan_totals(p);
	assert_true(t->work >= 32 * CH_CONV_MACS);
	assert_int_equal(t->limits.max_work, NBG_CPU_DEFAULT_MAX_WORK);
	run_refused(p, NBG_E_WORK_LIMIT, "max_work");
	nbg_error e;
	nbg_cpu_plan_check(p, SIZE_MAX, &e);
	char figure[32];
	snprintf(figure, sizeof(figure), "%llu", (unsigned long long)t->work);
	expect_in(e.message, figure, "the figure");
	expect_in(e.message, "68719476736", "the limit");
	expect_in(e.message, "--max-work", "how to raise it");
	/* a run of the first operations stays within it: the budget is the
	 * work of what runs */
	uint64_t each = t->work / 32, fit = NBG_CPU_DEFAULT_MAX_WORK / each;
	assert_int_equal(nbg_cpu_plan_check(p, (size_t)fit, NULL), NBG_OK);
	assert_int_equal(nbg_cpu_plan_check(p, (size_t)fit + 1, NULL), NBG_E_WORK_LIMIT);
	nbg_cpu_plan_free(p);
	/* raised, and lifted */
	nbg_cpu_options o = { .size = sizeof(o), .max_work = 32 * each };
	p = plan(b, n, &o);
	assert_int_equal(nbg_cpu_plan_check(p, SIZE_MAX, NULL), NBG_OK);
	nbg_cpu_plan_free(p);
	o.max_work = UINT64_MAX;
	p = plan(b, n, &o);
	assert_int_equal(nbg_cpu_plan_check(p, SIZE_MAX, NULL), NBG_OK);
	nbg_cpu_plan_free(p);

	/* the command: --check, a run, the overrides, nbg probe */
	char *dir = fx_tmpdir("nbg-cpu-work");
	const char *f = put(dir, "work.nb", b, n), *in = put(dir, "in.bin", (const uint8_t[64]){ 0 }, 64);
	fx_run_result r = fx_run_nbg(NULL, "run --backend cpu --check '%s'", f);
	assert_int_equal(r.status, 1);
	expect_in(r.out, "verdict: the CPU backend cannot run this model: work-limit: ", "--check");
	fx_run_free(&r);
	double t0 = fx_wall_ms();
	r = fx_run_nbg(NULL, "run --backend cpu '%s' --input '%s' --output-dir '%s/out' --timeout 60", f, in, dir);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "nbg run: work-limit: ", "the run");
	expect_in(r.err, "over the limit of 68719476736", "the run");
	fx_run_free(&r);
	print_message("the run refused in %.0f ms\n", fx_wall_ms() - t0);
	r = fx_run_nbg(NULL, "run --backend cpu --check '%s' --max-work none", f);
	assert_int_equal(r.status, 0);
	expect_in(r.out, "verdict: the CPU backend runs every operation of this model", "--max-work none");
	fx_run_free(&r);
	r = fx_run_nbg("NBG_MAX_CPU_WORK=80G", "run --backend cpu --check '%s'", f);
	assert_int_equal(r.status, 0);
	fx_run_free(&r);
	r = fx_run_nbg("NBG_MAX_CPU_WORK=80G", "run --backend cpu --check '%s' --max-work 64G", f);
	assert_int_equal(r.status, 1); /* the option over the variable */
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "run --backend auto --check '%s' --max-work none", f);
	assert_int_equal(r.status, 2);
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "probe --device-root '%s' '%s'", dir, f);
	expect_in(r.out, "refused whole: work-limit: ", "nbg probe");
	fx_run_free(&r);
	fx_rmtree(dir);
	free(dir);
	free(b);
}

/*
 * Item 2: a TP pooling that writes nothing and walks z x 65535 tile rows
 * (window rows -32768..32767, 2-row tiles a row apart: 65535 of them; a
 * 1-pixel-wide window holds no 2-pixel tile).  Refused before the walk,
 * the loop turns (z for the slices, then a row of tiles per slice) in the
 * sentence.
 */
static void test_tp_walk(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = ch_tp_walk(65535, &n);
	double t0 = fx_cpu_ms();
	nbg_cpu_plan *p = plan(b, n, NULL);
	double ms = fx_cpu_ms() - t0;
	print_message("planned in %.1f ms\n", ms);
	assert_true(ms < 2000);
	const nbg_cpu_step *s = nbg_cpu_plan_at(p, 0);
	assert_int_equal(s->verdict, NBG_CPU_REFUSED);
	assert_string_equal(s->reason_id, "work-limit");
	char turns[64];
	snprintf(turns, sizeof(turns), "%llu loop turns", 65535ull * (1 + 65535));
	expect_in(s->reason, turns, "the walk's turns");
	run_refused(p, NBG_E_UNSUPPORTED_OPERATION, NULL);
	nbg_cpu_plan_free(p);
	/* --check runs nothing and ends as quickly; so does nbg probe */
	char *dir = fx_tmpdir("nbg-cpu-walk");
	const char *f = put(dir, "walk.nb", b, n);
	fx_run_result r = fx_run_nbg("timeout 60", "run --backend cpu --check '%s'", f);
	assert_int_equal(r.status, 4);
	expect_in(r.out, turns, "--check");
	fx_run_free(&r);
	r = fx_run_nbg("timeout 60", "probe --device-root '%s' '%s'", dir, f);
	expect_in(r.out, "refuses op 0 of 1 first (work-limit)", "nbg probe");
	fx_run_free(&r);
	fx_rmtree(dir);
	free(dir);
	free(b);
}

/*
 * The planners' budget: 16 records naming a TP copy of 1024 x 1024 pixels
 * in one tile, each walked once at plan time (2^20 elements, 3 loop turns,
 * 2 tiles counted), under a budget of 2^23 steps: seven fit (eight would
 * need 8 x (2^20 + 5)), the rest are refused before their walk, whatever
 * their number.
 */
static void test_plan_steps(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = ch_tp_copies(1024, 16, &n);
	nbg_cpu_options o = { .size = sizeof(o), .max_plan_steps = 1u << 23 };
	nbg_cpu_plan *p = plan(b, n, &o);
	const nbg_cpu_totals *t = nbg_cpu_plan_totals(p);
	size_t ran = nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE);
	print_message("%zu of 16 walks planned in %llu steps\n", ran, (unsigned long long)t->plan_steps);
	assert_int_equal(ran, 7);
	/* and each of the other nine counted its 2 tiles before its walk was refused */
	assert_int_equal(t->plan_steps, 7 * ((1u << 20) + 5) + 9 * 2);
	const nbg_cpu_step *s = nbg_cpu_plan_first_refused(p);
	assert_non_null(s);
	assert_int_equal(s->operation, ran);
	assert_string_equal(s->reason_id, "work-limit");
	expect_in(s->reason, "8388608", "the limit");
	expect_in(s->reason, "--max-plan-steps", "how to raise it");
	nbg_cpu_plan_free(p);
	/* the default budget plans all of them */
	p = plan(b, n, NULL);
	assert_int_equal(nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE), 16);
	nbg_cpu_plan_free(p);
	char *dir = fx_tmpdir("nbg-cpu-steps");
	const char *f = put(dir, "copies.nb", b, n);
	fx_run_result r = fx_run_nbg(NULL, "run --backend cpu --check '%s' --max-plan-steps 8M", f);
	assert_int_equal(r.status, 4);
	expect_in(r.out, "refused work-limit: planning it would take", "--max-plan-steps");
	fx_run_free(&r);
	r = fx_run_nbg("NBG_MAX_CPU_PLAN_STEPS=8M", "run --backend cpu --check '%s'", f);
	assert_int_equal(r.status, 4);
	fx_run_free(&r);
	fx_rmtree(dir);
	free(dir);
	free(b);
}

/*
 * Item 3: a 1x1x1 -> side x side x 64 convolution whose output record is
 * 2 KB: its run holds a byte per output position in the planes and another
 * in the written stage (2 x side^2 x 64), which --max-memory now bounds.
 */
static void test_scratch(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = ch_scratch(2048, &n);
	nbg_cpu_plan *p = plan(b, n, NULL);
	const nbg_cpu_step *s = nbg_cpu_plan_at(p, 0);
	assert_int_equal(s->verdict, NBG_CPU_EXECUTE);
	assert_true(s->scratch >= 2ull * 2048 * 2048 * 64);
	assert_true(nbg_cpu_plan_totals(p)->buffers < 4096); /* a 1-byte input, a 2 KB output */
	assert_int_equal(nbg_cpu_plan_check(p, SIZE_MAX, NULL), NBG_OK);
	nbg_cpu_plan_free(p);
	nbg_cpu_options o = { .size = sizeof(o), .max_memory = 256u << 20 };
	p = plan(b, n, &o);
	run_refused(p, NBG_E_WORK_LIMIT, "max_memory");
	nbg_error e;
	nbg_cpu_plan_check(p, SIZE_MAX, &e);
	expect_in(e.message, "over the limit of 268435456", "the limit");
	expect_in(e.message, "--max-memory", "how to raise it");
	nbg_cpu_plan_free(p);
	char *dir = fx_tmpdir("nbg-cpu-scratch");
	const char *f = put(dir, "scratch.nb", b, n), *in = put(dir, "in.bin", (const uint8_t[1]){ 7 }, 1);
	fx_run_result r = fx_run_nbg(NULL, "run --backend cpu '%s' --input '%s' --output-dir '%s/out' "
				     "--max-memory 256M --timeout 60", f, in, dir);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "nbg run: work-limit: a run would hold ", "the run");
	fx_run_free(&r);
	free(b);
	/* 4096 x 4096 x 64: over the default of 2 GiB */
	b = ch_scratch(4096, &n);
	f = put(dir, "scratch4096.nb", b, n);
	r = fx_run_nbg(NULL, "run --backend cpu --check '%s'", f);
	assert_int_equal(r.status, 1);
	expect_in(r.out, "over the limit of 2147483648", "--check");
	fx_run_free(&r);
	fx_rmtree(dir);
	free(dir);
	free(b);
}

/* --check's verdict and a run's refusal of one file: the same exit code
 * and the same sentence. */
static void check_is_run(const char *dir, const char *f, int status, const char *want)
{
	fx_run_result c = fx_run_nbg(NULL, "run --backend cpu --check '%s'", f);
	fx_run_result j = fx_run_nbg(NULL, "run --backend cpu --check --json '%s'", f);
	fx_run_result r = fx_run_nbg(NULL, "run --backend cpu '%s' --input '%s/in.bin' --output-dir '%s/out' "
				     "--timeout 60", f, dir, dir);
	assert_int_equal(c.status, status);
	assert_int_equal(j.status, status);
	assert_int_equal(r.status, status);
	expect_in(c.out, want, "--check");
	expect_in(r.err, want, "the run");
	/* the sentence after the code, as the run says it */
	const char *run_says = strstr(r.err, want);
	char sentence[200];
	snprintf(sentence, sizeof(sentence), "%.150s", run_says);
	expect_in(c.out, sentence, "--check says what the run says");
	expect_in(j.out, "\"runs_whole\": false", "--check --json");
	expect_in(j.out, "\"refusal\": {", "--check --json");
	fx_run_free(&c);
	fx_run_free(&j);
	fx_run_free(&r);
}

/*
 * Item 10: --check said the model runs whole while the run refused it: a
 * memory pool of 3 GiB no operation uses (the run: out-of-memory), 65
 * output records (the run: runtime-io-mismatch after computing
 * everything).  Now both come from one verdict.
 */
static void test_check_is_the_run(void **state)
{
	(void)state;
	char *dir = fx_tmpdir("nbg-cpu-check");
	size_t n;
	put(dir, "in.bin", (const uint8_t[16]){ 1, 2, 3 }, 16);
	uint8_t *b = ch_copy(1, 3ull << 30, 0, &n);
	check_is_run(dir, put(dir, "pool.nb", b, n), 1, "work-limit: a run would hold 3221225");
	free(b);
	b = ch_copy(65, 0, 0, &n);
	check_is_run(dir, put(dir, "outputs.nb", b, n), 4, "runtime-io-mismatch: the model has 1 input and "
		     "65 output records");
	free(b);
	/* 64 output records run, and the copy is its input */
	b = ch_copy(64, 0, 0, &n);
	const char *f = put(dir, "outputs64.nb", b, n);
	fx_run_result r = fx_run_nbg(NULL, "run --backend cpu --check '%s'", f);
	assert_int_equal(r.status, 0);
	fx_run_free(&r);
	r = fx_run_nbg(NULL, "run --backend cpu '%s' --input '%s/in.bin' --output-dir '%s/out64' --timeout 60", f,
		       dir, dir);
	assert_int_equal(r.status, 0);
	fx_run_free(&r);
	char path[600];
	snprintf(path, sizeof(path), "%s/out64/output_0.bin", dir);
	size_t got_n = 0;
	uint8_t *got = fx_read_file(path, &got_n);
	assert_non_null(got);
	assert_int_equal(got_n, 16);
	assert_memory_equal(got, ((const uint8_t[16]){ 1, 2, 3 }), 16);
	free(got);
	free(b);
	fx_rmtree(dir);
	free(dir);
}

static double plan_ms(uint32_t records)
{
	size_t n;
	uint8_t *b = ch_records(records, &n);
	double best = 1e30;
	for (int k = 0; k < 3; k++) {
		double t0 = fx_cpu_ms();
		nbg_cpu_plan *p = plan(b, n, NULL);
		double t = fx_cpu_ms() - t0;
		assert_int_equal(nbg_cpu_plan_verdict_count(p, NBG_CPU_EXECUTE), 2 * (size_t)records);
		nbg_cpu_plan_free(p);
		best = t < best ? t : best;
	}
	free(b);
	return best;
}

/* Item 12: a plan of 8 times the records may take at most ~20 times as
 * long (quadratic would be 64 times; each TP operation scanned every
 * weights record), as the parse's linearity tests measure it. */
static void test_linear_plan(void **state)
{
	(void)state;
	double t1 = plan_ms(2000), t8 = plan_ms(16000);
	print_message("plan of 2 x 2000 records %.1f ms, 2 x 16000 %.1f ms (x%.1f)\n", t1, t8,
		      t8 / (t1 > 0.01 ? t1 : 0.01));
	assert_true(t8 < 20 * (t1 > 0.5 ? t1 : 0.5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_total_work),
		cmocka_unit_test(test_tp_walk),
		cmocka_unit_test(test_plan_steps),
		cmocka_unit_test(test_scratch),
		cmocka_unit_test(test_check_is_the_run),
		cmocka_unit_test(test_linear_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_null_args.c - every function the public headers declare, called with
 * every argument 0 or NULL (the table is generated from the headers of include/nbg/ by
 * tests/gen_null_calls.py at build time, so a new function is never left
 * out; tests/check_exports.sh proves the headers declare exactly what
 * libnbg exports).  Each call runs in a child process:
 *  - no call may crash or hang;
 *  - a function that returns an nbg_code and takes a pointer returns
 *    NBG_E_INVALID_ARGUMENT (doc/api.md, "Errors"), except where NULL for
 *    every pointer is documented as valid input (the table below says why).
 */
#define NBG_STATIC_LINKING_ONLY
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

enum { NULL_CODE, NULL_VOID, NULL_VALUE };
typedef struct null_entry {
	const char *name, *header;
	int kind;
	int pointers; /* parameters that are pointers or arrays */
	int (*call)(void);
} null_entry;

#include "null_calls.h"

/* nbg_code functions for which all-NULL arguments are a valid call, and
 * what they return then. */
static const struct {
	const char *name;
	int code;
	const char *why;
} allowed[] = {
	{ "nbg_ledger_check_tiling", NBG_OK, "no ranges tile a file of 0 bytes exactly" },
	{ "nbg_rt_graph_destroy", NBG_OK, "destroying no graph is a no-op, as free(NULL)" },
};

static int expected(const null_entry *e)
{
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcmp(allowed[i].name, e->name))
			return allowed[i].code;
	return NBG_E_INVALID_ARGUMENT;
}

/* Runs e in a child: 0 and *code on a normal return, else the signal. */
static int run_child(const null_entry *e, int *code)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		/* cmocka catches these to report a test as failed: here they
		 * must end the child, to be seen by the parent */
		static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGALRM };
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		alarm(20);
		int c = e->call();
		if (write(fd[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
			_exit(3);
		_exit(0);
	}
	close(fd[1]);
	ssize_t n = read(fd[0], code, sizeof(*code));
	close(fd[0]);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFSIGNALED(st))
		return WTERMSIG(st);
	return n == (ssize_t)sizeof(*code) && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void test_every_entry_point(void **state)
{
	size_t n = sizeof(null_entries) / sizeof(null_entries[0]), failures = 0, coded = 0;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const null_entry *e = &null_entries[i];
		int code = 0;
		int r = run_child(e, &code);
		if (r != 0) {
			printf("FAIL %s (%s): %s %d with NULL arguments\n", e->name, e->header,
			       r > 0 ? "killed by signal" : "child failed", r);
			failures++;
			continue;
		}
		if (e->kind != NULL_CODE || e->pointers == 0)
			continue;
		coded++;
		if (code != expected(e)) {
			printf("FAIL %s (%s): returned %s, want %s\n", e->name, e->header,
			       nbg_code_name((nbg_code)code) ? nbg_code_name((nbg_code)code) : "?",
			       nbg_code_name((nbg_code)expected(e)));
			failures++;
		}
	}
	printf("%zu functions called with NULL arguments, %zu of them checked for "
	       "invalid-argument; %zu failures\n", n, coded, failures);
	assert_true(n > 200); /* the table was generated from every header */
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

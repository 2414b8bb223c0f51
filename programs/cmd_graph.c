/*
 * cmd_graph.c - `nbg graph FILE [--dot OUT.dot | --svg OUT.svg] [--title T]`:
 * the network recovered from the NN / TP commands (layers as boxes with
 * their operations and shapes, input and output records, edges from the
 * chained images) as a Graphviz DOT document, on standard output or in a
 * file, or drawn as SVG by Graphviz's `dot` program when it is installed
 * (Debian package graphviz; nbgkit does not need it to build).
 *
 * OUT is written through the one output writer (cli_out.c, the rules of
 * doc/security.md): whole or not at all, its mode and owner kept, a device,
 * FIFO or directory refused, a link to a regular file written through; "-"
 * is standard output.  For --svg, Graphviz draws into OUT's temporary from
 * a DOT document in a scratch file beside it; both are removed when a
 * signal ends the process.
 */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_out.h"
#include "cmd_graph.h"
#include "nbg/commands.h"
#include "nbg/decoded.h"

extern char **environ;

/* The `dot` program on PATH, or NULL. */
static char *find_dot(void)
{
	const char *path = getenv("PATH");

	for (const char *p = path; p && *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *cand = malloc(len + 5);
		if (!cand)
			return NULL;
		snprintf(cand, len + 5, "%.*s/dot", (int)len, p);
		if (len && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		p = end ? end + 1 : p + len;
	}
	return NULL;
}

/* Runs `dot -Tsvg -o SVG DOT` (out NULL: `dot -Tsvg DOT`, onto standard
 * output); 0 when it succeeded. */
static int run_dot(const char *dot, const char *in, const char *out)
{
	char *argv[] = { (char *)"dot", (char *)"-Tsvg", (char *)"-o", (char *)out, (char *)in,
			 NULL };
	if (!out) {
		argv[2] = (char *)in;
		argv[3] = NULL;
	}
	pid_t pid;
	int st;

	if (posix_spawn(&pid, dot, NULL, NULL, argv, environ) != 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The DOT document in a scratch file beside `beside` for Graphviz to read
 * (registered with the signal guards); 0, or -1 with errno. */
static int dot_scratch(nbg_decoded *d, const char *title, const char *beside, char **name, int *slot)
{
	int fd = cli_scratch_create(beside, "dot", name, slot), e = 0;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		e = errno;
		if (fd >= 0)
			close(fd);
	} else {
		e = nbg_commands_dot(f, d, title) != 0 ? EIO : 0;
		if (fclose(f) != 0 && !e)
			e = errno ? errno : EIO;
	}
	if (e) {
		cli_scratch_remove(*name, *slot);
		*name = NULL;
		errno = e;
		return -1;
	}
	return 0;
}

/* `--svg OUT`: Graphviz's dot draws the DOT document into OUT's temporary
 * (or onto standard output), which is then committed like any output. */
static int svg_out(nbg_decoded *d, const char *title, cli_out *o)
{
	const char *tmpdir = getenv("TMPDIR");
	char beside[4096], *in = NULL, *dot = find_dot();
	int slot = -1;

	if (!dot) {
		fprintf(stderr, "nbg graph: Graphviz's dot program is not installed (Debian: "
				"apt-get install graphviz); use --dot %s.dot for the DOT "
				"document, which any Graphviz viewer draws\n",
			o->to_stdout ? "OUT" : cli_esc(o->name));
		cli_out_discard(o);
		return NBG_EXIT_IO;
	}
	/* for standard output the DOT document waits under $TMPDIR (the
	 * working directory may be read-only), else beside OUT */
	snprintf(beside, sizeof(beside), "%s/nbg-graph", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (dot_scratch(d, title, o->to_stdout ? beside : o->target, &in, &slot) != 0) {
		fprintf(stderr, "nbg graph: cannot write a temporary file beside %s: %s\n",
			cli_esc(o->to_stdout ? beside : o->target), strerror(errno));
		cli_out_discard(o);
		free(dot);
		return NBG_EXIT_IO;
	}
	int x = run_dot(dot, in, o->to_stdout ? NULL : o->tmp);
	cli_scratch_remove(in, slot);
	if (x != 0) {
		fprintf(stderr, "nbg graph: %s failed to draw the network; the DOT document "
				"is still available with --dot\n", dot);
		cli_out_discard(o);
		free(dot);
		return NBG_EXIT_IO;
	}
	free(dot);
	return cli_out_commit(o);
}

static int draw(const nbg_model *m, const char *in, const char *title, const char *dot,
		const char *svg)
{
	nbg_decoded *d = NULL;
	const nbg_network *net = NULL;
	nbg_error err;
	cli_out o;
	int x;

	/* decoded before the output is opened: a failure leaves no file */
	if (nbg_decoded_new(m, &d, &err) != NBG_OK || nbg_decoded_network(d, &net, &err) != NBG_OK) {
		fprintf(stderr, "nbg: %s: %s\n", cli_esc(in), err.message);
		nbg_decoded_free(d);
		return NBG_EXIT_IO;
	}
	/* without --dot or --svg the DOT document goes to standard output */
	x = cli_out_open(&o, "graph", svg ? svg : dot ? dot : "-", CLI_OUT_STDOUT);
	if (x) {
		/* refused: the reason is printed */
	} else if (svg) {
		x = svg_out(d, title, &o);
	} else {
		FILE *f = cli_out_stream(&o);
		if (f && nbg_commands_dot(f, d, title) != 0 && !o.err)
			o.err = EIO;
		x = cli_out_commit(&o);
	}
	cli_out_free(&o);
	nbg_decoded_free(d);
	return x;
}

int cli_cmd_graph(int argc, char **argv)
{
	cli_graph_opts o = { 0 };
	const char **ops, *in;
	cli_loaded ld;
	int n, x = cli_parse_operands("graph", argc, argv, &o, &ops, &n);

	if (x == NBG_EXIT_OK && n != 1)
		x = n ? cli_usage("graph", "one file at a time; also got '%s'", cli_esc(ops[1]))
		      : cli_usage("graph", "no FILE given (- reads standard input)");
	else if (x == NBG_EXIT_OK && o.svg && o.dot)
		x = cli_usage("graph", "--dot and --svg each name the one output: give one of them "
				       "(the SVG is drawn from the DOT)");
	in = x == NBG_EXIT_OK ? ops[0] : NULL;
	free(ops);
	if (x != NBG_EXIT_OK)
		return x;
	x = cli_load(in, NULL, &ld);
	if (x != NBG_EXIT_OK) {
		cli_print_error(in, &ld);
	} else {
		const char *base = strrchr(in, '/');
		x = draw(ld.model, in, o.title ? o.title : base ? base + 1 : in, o.dot, o.svg);
	}
	cli_loaded_free(&ld);
	return x;
}

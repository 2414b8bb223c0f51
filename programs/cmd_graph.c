/*
 * cmd_graph.c - `nbg graph FILE [--dot OUT.dot | --svg OUT.svg] [--title T]`:
 * the network recovered from the NN / TP commands (layers as boxes with
 * their operations and shapes, input and output records, edges from the
 * chained images) as a Graphviz DOT document, on standard output or in a
 * file, or drawn as SVG by Graphviz's `dot` program when it is installed
 * (Debian package graphviz; nbgkit does not need it to build).
 *
 * Output files appear whole or not at all: everything is written to a hidden
 * file beside the target, which is renamed over it only when complete.  OUT
 * follows the rules of doc/security.md (nbg_output_target): a device, FIFO
 * or directory is refused, a link to a regular file is written through; the
 * temporaries fit NAME_MAX and are removed when a signal ends the process.
 * "-" as OUT is standard output.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_graph.h"
#include "nbg/commands.h"

extern char **environ;

/* The temporaries' registrations for removal if a signal ends the process
 * (until the command ends: by then each temporary is renamed or removed). */
static int temp_slots[4], temp_count;

static int temp_create(char *tmp)
{
	int slot, fd = nbg_temp_create(tmp, &slot);

	if (fd >= 0 && temp_count < 4)
		temp_slots[temp_count++] = slot;
	return fd;
}

/* Writes the DOT document to a new temporary file beside `target`; returns
 * its name (malloc'd) or NULL with errno set. */
static char *write_dot_temp(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
			    const char *title, const char *target)
{
	char *tmp = nbg_temp_beside(target, "dot");
	int fd, e;
	FILE *f;

	if (!tmp)
		return NULL;
	fd = temp_create(tmp);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		errno = e;
		return NULL;
	}
	e = nbg_commands_dot(f, m, g, c, title) != 0 ? EIO : 0;
	if (fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (e) {
		unlink(tmp);
		free(tmp);
		errno = e;
		return NULL;
	}
	return tmp;
}

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

/* `--svg -`: dot draws onto our standard output; the DOT document waits in
 * a temporary file under $TMPDIR (the working directory may be read-only). */
static int svg_stdout(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		      const char *title, const char *dot)
{
	const char *tmpdir = getenv("TMPDIR");
	char beside[4096], *in;
	int x = NBG_EXIT_IO;

	snprintf(beside, sizeof(beside), "%s/nbg-graph", tmpdir && *tmpdir ? tmpdir : "/tmp");
	in = write_dot_temp(m, g, c, title, beside);
	if (!in) {
		fprintf(stderr, "nbg graph: cannot write a temporary file in %s: %s\n",
			nbg_esc(tmpdir && *tmpdir ? tmpdir : "/tmp"), strerror(errno));
		return NBG_EXIT_IO;
	}
	if (fflush(stdout) != 0)
		fprintf(stderr, "nbg graph: cannot write to standard output\n");
	else if (run_dot(dot, in, NULL) != 0)
		fprintf(stderr, "nbg graph: %s failed to draw the network; the DOT document "
				"is still available with --dot\n", dot);
	else
		x = NBG_EXIT_OK;
	unlink(in);
	free(in);
	return x;
}

static int svg_file(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		    const char *title, const char *out)
{
	char *dot = find_dot(), *in = NULL, *svg = NULL;
	int x = NBG_EXIT_IO, fd;

	if (!dot) {
		fprintf(stderr, "nbg graph: Graphviz's dot program is not installed (Debian: "
				"apt-get install graphviz); use --dot %s.dot for the DOT "
				"document, which any Graphviz viewer draws\n",
			strcmp(out, "-") ? nbg_esc(out) : "OUT");
		return NBG_EXIT_IO;
	}
	if (!strcmp(out, "-")) {
		x = svg_stdout(m, g, c, title, dot);
		free(dot);
		return x;
	}
	in = write_dot_temp(m, g, c, title, out);
	svg = nbg_temp_beside(out, "svg");
	if (!in || !svg || (fd = temp_create(svg)) < 0) {
		fprintf(stderr, "nbg graph: cannot write beside %s: %s\n", nbg_esc(out),
			strerror(errno));
		free(svg);
		svg = NULL;
		goto done;
	}
	close(fd);
	if (run_dot(dot, in, svg) != 0) {
		fprintf(stderr, "nbg graph: %s failed to draw the network; the DOT document "
				"is still available with --dot\n", dot);
	} else if (chmod(svg, 0644) != 0 || rename(svg, out) != 0) {
		fprintf(stderr, "nbg graph: cannot write %s: %s\n", nbg_esc(out), strerror(errno));
	} else {
		x = NBG_EXIT_OK;
		free(svg);
		svg = NULL;
	}
done:
	if (svg)
		unlink(svg);
	if (in)
		unlink(in);
	free(svg);
	free(in);
	free(dot);
	return x;
}

static int dot_file(const nbg_model *m, const nbg_graph *g, const nbg_commands *c,
		    const char *title, const char *out)
{
	char *tmp = write_dot_temp(m, g, c, title, out);

	if (!tmp || chmod(tmp, 0644) != 0 || rename(tmp, out) != 0) {
		fprintf(stderr, "nbg graph: cannot write %s: %s\n", nbg_esc(out), strerror(errno));
		if (tmp)
			unlink(tmp);
		free(tmp);
		return NBG_EXIT_IO;
	}
	free(tmp);
	return NBG_EXIT_OK;
}

static int draw(const nbg_model *m, const char *in, const char *title, const char *dot,
		const char *svg)
{
	nbg_graph *g = NULL;
	nbg_commands *c = NULL;
	nbg_error err;
	int x;

	if (nbg_graph_decode(m, &g, &err) != NBG_OK || nbg_commands_decode(m, g, &c, &err) != NBG_OK) {
		fprintf(stderr, "nbg: %s: %s\n", nbg_esc(in), err.message);
		nbg_graph_free(g);
		return NBG_EXIT_IO;
	}
	if (dot && !strcmp(dot, "-"))
		dot = NULL; /* standard output, as without --dot */
	if (svg)
		x = svg_file(m, g, c, title, svg);
	else if (dot)
		x = dot_file(m, g, c, title, dot);
	else
		x = nbg_commands_dot(stdout, m, g, c, title) == 0 && fflush(stdout) == 0
			? NBG_EXIT_OK : NBG_EXIT_IO;
	if (x == NBG_EXIT_IO && !svg && !dot)
		fprintf(stderr, "nbg graph: cannot write the DOT document\n");
	nbg_commands_free(c);
	nbg_graph_free(g);
	return x;
}

int nbg_cmd_graph(int argc, char **argv)
{
	const char *in = NULL, *svg = NULL, *dot = NULL, *title = NULL;
	nbg_loaded ld;
	int x;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--svg") && i + 1 < argc)
			svg = argv[++i];
		else if (!strcmp(argv[i], "--dot") && i + 1 < argc)
			dot = argv[++i];
		else if (!strcmp(argv[i], "--title") && i + 1 < argc)
			title = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "nbg graph: unknown option '%s'\n", nbg_esc(argv[i]));
			return NBG_EXIT_USAGE;
		} else if (!in)
			in = argv[i];
		else {
			fprintf(stderr, "nbg graph: one file at a time (got '%s' too)\n", nbg_esc(argv[i]));
			return NBG_EXIT_USAGE;
		}
	}
	if (!in || (svg && dot)) {
		fprintf(stderr, "usage: nbg graph FILE [--dot OUT.dot | --svg OUT.svg] "
				"[--title TEXT]\n");
		return NBG_EXIT_USAGE;
	}
	signal(SIGXFSZ, SIG_IGN);
	/* OUT: a regular file, a new name or a link to a regular file (then
	 * the file it names is replaced); anything else is refused as is. */
	char *target = NULL;
	nbg_error oerr;
	if ((svg || dot) && nbg_output_target(svg ? svg : dot, &target, &oerr) != NBG_OK) {
		fprintf(stderr, "nbg graph: %s\n", oerr.message);
		return nbg_code_exit(oerr.code);
	}
	x = nbg_load(in, NULL, &ld);
	if (x != NBG_EXIT_OK) {
		nbg_print_error(in, &ld);
	} else {
		const char *base = strrchr(in, '/');
		x = draw(ld.model, in, title ? title : base ? base + 1 : in, dot ? target : NULL,
			 svg ? target : NULL);
	}
	nbg_loaded_free(&ld);
	for (int i = 0; i < temp_count; i++)
		nbg_temp_unregister(temp_slots[i]);
	free(target);
	return x;
}

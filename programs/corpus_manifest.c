/*
 * corpus_manifest.c - manifests as `nbg corpus` reads them: a file whose
 * first line is a sha256sum line is a manifest, and every line lists one
 * file with its digest (manifest.c parses the lines).  Paths are relative
 * to the current directory, as for sha256sum -c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus_cli.h"
#include "manifest.h"

int corpus_manifest_sniff(const char *path)
{
	char buf[67];
	uint8_t d[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	return buf[0] == '\\' ? manifest_head(buf + 1, (size_t)n - 1, d) : manifest_head(buf, (size_t)n, d);
}

static void bad_line(corpus_walk *w, const char *path, size_t line)
{
	nbg_corpus_add_skipped(w->agg, NBG_CORPUS_SKIP_MANIFEST_LINE);
	if (!w->quiet)
		corpus_warn("%s line %zu: not \"<sha256>  <path>\" as sha256sum writes it; skipped",
			    path, line);
}

typedef struct reading {
	corpus_walk *w;
	const char *path;
} reading;

/* One line (without its line end): adds the file it lists, or reports it. */
static void manifest_entry(void *ctx, size_t no, char *p, size_t n)
{
	reading *rd = ctx;
	uint8_t d[32];
	char *name;
	size_t len;
	struct stat st;

	if (!manifest_line_parse(p, n, d, &name, &len)) {
		bad_line(rd->w, rd->path, no);
		return;
	}
	int known = stat(name, &st) == 0 && S_ISREG(st.st_mode);
	uint64_t size = known ? (uint64_t)st.st_size : 0;
	if (!corpus_list_add(rd->w->list, name, len, known ? &size : NULL, d)) {
		nbg_corpus_add_skipped(rd->w->agg, NBG_CORPUS_SKIP_UNREADABLE);
		corpus_warn("%s line %zu: out of memory for the file list", rd->path, no);
	}
}

void corpus_manifest_read(corpus_walk *w, const char *path)
{
	char *data;
	size_t len;
	int e = corpus_read_file(path, &data, &len);

	if (e) {
		nbg_corpus_add_skipped(w->agg, NBG_CORPUS_SKIP_UNREADABLE);
		if (!w->quiet)
			corpus_warn("cannot read manifest %s: %s", path, strerror(e));
		return;
	}
	reading rd = { w, path };
	manifest_each_line(data, len, manifest_entry, &rd);
	free(data);
}


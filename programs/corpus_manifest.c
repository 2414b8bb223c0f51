/*
 * corpus_manifest.c - `nbg corpus` and manifests (manifest.c reads and
 * writes their lines): recognizing one among the operands and listing the
 * files it names.  Paths are relative to the current directory,
 * as for sha256sum -c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
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
	return buf[0] == '\\' ? cli_manifest_head(buf + 1, (size_t)n - 1, d)
			      : cli_manifest_head(buf, (size_t)n, d);
}

/* What a manifest's lines are checked against while it is read. */
typedef struct manifest_read {
	corpus_walk *w;
	const char *path;
} manifest_read;

static void bad_line(void *ctx, size_t line)
{
	const manifest_read *r = ctx;

	corpus_add_skipped(r->w->agg, CORPUS_SKIP_MANIFEST_LINE);
	if (!r->w->quiet)
		corpus_warn("%s line %zu: not \"<sha256>  <path>\" as sha256sum writes it; skipped",
			    cli_esc(r->path), line);
}

void corpus_manifest_read(corpus_walk *w, const char *path)
{
	manifest_read r = { w, path };
	cli_manifest mf;
	int e = cli_manifest_load(path, &mf, bad_line, &r);

	if (e) {
		corpus_add_skipped(w->agg, CORPUS_SKIP_UNREADABLE);
		if (!w->quiet)
			corpus_warn("cannot read manifest %s: %s", cli_esc(path), strerror(e));
		return;
	}
	for (size_t i = 0; i < mf.count; i++) {
		const cli_manifest_entry *en = &mf.entries[i];
		struct stat st;
		int known = stat(en->name, &st) == 0 && S_ISREG(st.st_mode);
		uint64_t size = known ? (uint64_t)st.st_size : 0;

		if (!corpus_list_add(w->list, en->name, strlen(en->name), known ? &size : NULL,
				     en->sha256)) {
			corpus_add_skipped(w->agg, CORPUS_SKIP_UNREADABLE);
			corpus_warn("%s: out of memory for the file list", cli_esc(path));
		}
	}
	cli_manifest_free(&mf);
}

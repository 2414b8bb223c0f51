/*
 * corpus_walk.c - the directory walk of `nbg corpus`: iterative (a stack of
 * sorted directory listings, no recursion and no depth limit), in name
 * order, so the file list and every output are the same on every run.
 *
 * The rules: every directory is identified by device and inode and walked
 * once (a loop or a second link to it is reported, not followed again);
 * symbolic links to directories are reported and not followed unless
 * --follow; entries whose names start with '.' are passed over; an entry
 * that cannot be examined or a directory that cannot be read is reported
 * with its reason and counted; files are only examined with lstat/stat here
 * (never opened: corpus_measure opens regular files only).  Command-line
 * PATHs are followed when they are links, as a user who names a link means
 * what it points to.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "corpus_cli.h"

typedef struct frame {
	char *dir;
	char **names;
	size_t n, i;
} frame;

/* The directories walked: an open-addressing set of (device, inode). */
typedef struct dirset {
	struct devino {
		dev_t dev;
		ino_t ino;
	} *d;
	size_t count, cap;
} dirset;

typedef struct walker {
	corpus_walk *w;
	frame *stack;
	size_t depth, cap;
	dirset seen;
} walker;

static void skip(corpus_walk *w, corpus_skip why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void skip(corpus_walk *w, corpus_skip why, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	corpus_add_skipped(w->agg, why);
	if (w->quiet)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	corpus_warn("%s", msg ? msg : "out of memory");
	free(msg);
}

static size_t dev_slot(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t k = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)ino;
	k ^= k >> 31;
	k *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(k ^ (k >> 29)) & (cap - 1);
}

/* 1 when added, 0 when already there, -1 out of memory. */
static int dirset_add(dirset *s, dev_t dev, ino_t ino)
{
	if (2 * (s->count + 1) > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct devino *d = calloc(cap, sizeof(*d));
		if (!d)
			return -1;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->d[i].ino)
				continue;
			size_t j = dev_slot(s->d[i].dev, s->d[i].ino, cap);
			while (d[j].ino)
				j = (j + 1) & (cap - 1);
			d[j] = s->d[i];
		}
		free(s->d);
		s->d = d;
		s->cap = cap;
	}
	size_t j = dev_slot(dev, ino, s->cap);
	for (; s->d[j].ino; j = (j + 1) & (s->cap - 1))
		if (s->d[j].dev == dev && s->d[j].ino == ino)
			return 0;
	s->d[j].dev = dev;
	s->d[j].ino = ino ? ino : (ino_t)-1; /* inode 0 marks an empty slot */
	s->count++;
	return 1;
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	while (a > 1 && dir[a - 1] == '/')
		a--;
	char *p = malloc(a + b + 2);
	if (p) {
		memcpy(p, dir, a);
		p[a] = '/';
		memcpy(p + a + 1, name, b + 1);
	}
	return p;
}

/* The sorted names of the directory open as fd (closed here); NULL with
 * errno on failure. */
static char **read_names(int fd, size_t *count)
{
	DIR *d = fdopendir(fd);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	if (!d) {
		close(fd);
		return NULL;
	}
	for (;;) {
		errno = 0;
		if (!(e = readdir(d)))
			break;
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				goto fail;
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			goto fail;
		n++;
	}
	if (errno)
		goto fail;
	closedir(d);
	qsort(names, n, sizeof(*names), cli_name_order);
	*count = n;
	return names ? names : calloc(1, sizeof(*names));
fail : {
	int err = errno ? errno : ENOMEM;
	while (n)
		free(names[--n]);
	free(names);
	closedir(d);
	errno = err;
	return NULL;
}
}

/* Opens, identifies and lists a directory, then pushes it on the stack. */
static void push_dir(walker *k, const char *path, int nofollow)
{
	struct stat st;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC |
				    (nofollow ? O_NOFOLLOW : 0));

	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		skip(k->w, CORPUS_SKIP_UNREADABLE, "cannot open directory %s: %s", path,
		     strerror(e));
		return;
	}
	int added = dirset_add(&k->seen, st.st_dev, st.st_ino);
	if (added < 0) {
		close(fd);
		skip(k->w, CORPUS_SKIP_UNREADABLE, "%s: out of memory for the set of "
		     "directories walked", path);
		return;
	}
	if (added == 0) {
		close(fd);
		skip(k->w, CORPUS_SKIP_REVISITED, "%s: directory already walked (same device "
		     "and inode: a loop or a second link to it), not walked again", path);
		return;
	}
	char **names = read_names(fd, &n);
	if (!names) {
		skip(k->w, CORPUS_SKIP_UNREADABLE, "cannot read directory %s: %s", path,
		     strerror(errno));
		return;
	}
	char *dir = strdup(path);
	if (dir && k->depth == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		frame *f = realloc(k->stack, cap * sizeof(*f));
		if (f) {
			k->stack = f;
			k->cap = cap;
		}
	}
	if (!dir || k->depth == k->cap) {
		free(dir);
		while (n)
			free(names[--n]);
		free(names);
		skip(k->w, CORPUS_SKIP_UNREADABLE, "%s: out of memory for the walk", path);
		return;
	}
	k->stack[k->depth++] = (frame){ dir, names, n, 0 };
}


static void add_file(corpus_walk *w, const char *path, const struct stat *st)
{
	uint64_t size = st && S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	if (!corpus_list_add(w->list, path, strlen(path), st && S_ISREG(st->st_mode) ? &size : NULL,
			     NULL))
		skip(w, CORPUS_SKIP_UNREADABLE, "%s: %s", cli_esc(path), "out of memory for the file list");
}

/* One directory entry: a file to measure, a directory to walk, or neither. */
static void visit(walker *k, const char *path, const char *name)
{
	struct stat st, target;

	if (lstat(path, &st) != 0) {
		skip(k->w, CORPUS_SKIP_UNREADABLE, "cannot examine %s: %s", path,
		     strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		push_dir(k, path, 1);
	} else if (!S_ISLNK(st.st_mode)) {
		if (cli_has_suffix(name, ".nb"))
			add_file(k->w, path, &st);
	} else if (stat(path, &target) != 0) {
		/* a dangling link: measured, it is reported as vanished */
		if (cli_has_suffix(name, ".nb"))
			add_file(k->w, path, NULL);
	} else if (!S_ISDIR(target.st_mode)) {
		if (cli_has_suffix(name, ".nb"))
			add_file(k->w, path, &target);
	} else if (k->w->follow) {
		push_dir(k, path, 0);
	} else {
		skip(k->w, CORPUS_SKIP_SYMLINK, "%s: symbolic link to a directory, not "
		     "followed (--follow follows)", path);
	}
}

static void walk_dir(corpus_walk *w, const char *root)
{
	walker k = { w, NULL, 0, 0, { NULL, 0, 0 } };

	push_dir(&k, root, 0);
	while (k.depth) {
		frame *f = &k.stack[k.depth - 1];
		if (f->i == f->n) {
			free(f->names);
			free(f->dir);
			k.depth--;
			continue;
		}
		char *name = f->names[f->i++];
		char *path = join(f->dir, name);
		if (!path)
			skip(w, CORPUS_SKIP_UNREADABLE, "%s/%s: out of memory", cli_esc(f->dir), cli_esc(name));
		else
			visit(&k, path, name); /* may grow the stack: f is not used after */
		free(path);
		free(name);
	}
	free(k.stack);
	free(k.seen.d);
}

void corpus_walk_path(corpus_walk *w, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		int e = errno;
		skip(w, CORPUS_SKIP_UNREADABLE, "cannot read %s: %s", cli_esc(path),
		     lstat(path, &st) == 0 ? "symbolic link to nothing" : strerror(e));
	} else if (S_ISDIR(st.st_mode)) {
		walk_dir(w, path);
	} else if (S_ISREG(st.st_mode) && corpus_manifest_sniff(path)) {
		corpus_manifest_read(w, path);
	} else {
		add_file(w, path, &st);
	}
}

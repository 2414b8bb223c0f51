/*
 * mkseeds.c - writes the fuzz seed corpus: every synthesized seed, and a
 * shrunk copy of each real file found in the corpus directories given
 * (generated at run time into an ignored directory; the real files are
 * never copied into the project).
 *
 *   nbg-fuzz-seeds OUTDIR [CORPUS_DIR...]
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "seeds.h"

static int write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "nbg-fuzz-seeds: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int shrink_dir(const char *out, const char *dir, size_t *written)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "nbg-fuzz-seeds: %s: %s (skipped)\n", dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		char path[4096], name[512];
		size_t n, sn;
		uint8_t *buf, *s;
		size_t len = strlen(e->d_name);

		if (len < 3 || strcmp(e->d_name + len - 3, ".nb") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		buf = seed_read_file(path, &n);
		if (!buf)
			continue;
		/* Two caps: payloads cut to 64 bytes (structure only) and 512. */
		for (size_t cap = 64; cap <= 512; cap *= 8) {
			s = seed_shrink(buf, n, cap, &sn);
			if (s) {
				snprintf(name, sizeof(name), "shrunk%zu-%s", cap, e->d_name);
				rc |= write_file(out, name, s, sn);
				(*written)++;
			}
			free(s);
		}
		free(buf);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count, written = 0;
	seed_file *s;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: nbg-fuzz-seeds OUTDIR [CORPUS_DIR...]\n");
		return 2;
	}
	if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "nbg-fuzz-seeds: %s: %s\n", argv[1], strerror(errno));
		return 3;
	}
	s = seed_synth_all(&count);
	for (size_t i = 0; i < count; i++) {
		char name[80];
		snprintf(name, sizeof(name), "%s.nb", s[i].name);
		rc |= write_file(argv[1], name, s[i].data, s[i].size);
		written++;
	}
	seed_free_all(s, count);
	/* files carrying kernel streams, and the raw streams of the coef
	 * harness (other harnesses refuse them at the magic) */
	for (size_t i = 0; i < seed_coef_count(); i++) {
		char name[80];
		size_t size;
		uint8_t *b = seed_coef_file(i, name, sizeof(name) - 4, &size);
		strcat(name, ".nb");
		rc |= write_file(argv[1], name, b, size);
		free(b);
		b = seed_coef_raw(i, name, sizeof(name) - 4, &size);
		strcat(name, ".bin");
		rc |= write_file(argv[1], name, b, size);
		written += 2;
		free(b);
	}
	for (int i = 2; i < argc; i++)
		rc |= shrink_dir(argv[1], argv[i], &written);
	printf("nbg-fuzz-seeds: %zu seeds in %s\n", written, argv[1]);
	return rc ? 3 : 0;
}

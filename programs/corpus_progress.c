/*
 * corpus_progress.c - what `nbg corpus` writes to stderr: warnings, each
 * escaped (paths and messages may hold any byte), and, when stderr is a
 * terminal, one progress line rewritten in place (files done of total,
 * bytes, rate, time left) and cleared at the end.  Used from the main
 * thread only.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "corpus_cli.h"

static struct {
	int on;
	size_t files;
	uint64_t bytes;
	double start, last;
	size_t shown;           /* width of the line on screen, 0 when none */
	size_t files_done;
	uint64_t bytes_done;
} P;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void clear_line(void)
{
	if (!P.shown)
		return;
	fprintf(stderr, "\r%*s\r", (int)P.shown, "");
	fflush(stderr);
	P.shown = 0;
}

void corpus_warn(const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;

	/* paths arrive escaped (cli_esc); a control byte left in the text
	 * escapes the whole of it */
	va_start(ap, fmt);
	if (vasprintf(&buf, fmt, ap) < 0)
		buf = NULL;
	va_end(ap);
	clear_line();
	fprintf(stderr, "nbg corpus: %s\n", buf ? cli_esc_msg(buf) : "(out of memory)");
	free(buf);
	P.last = 0; /* redraw at the next update */
}

void corpus_progress_start(int on, size_t files, uint64_t bytes)
{
	memset(&P, 0, sizeof(P));
	P.on = on;
	P.files = files;
	P.bytes = bytes;
	P.start = now();
}

static void human(char *buf, size_t n, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

static void draw(void)
{
	double t = now() - P.start, rate = t > 0 ? (double)P.bytes_done / t : 0;
	double frac = P.bytes ? (double)P.bytes_done / (double)P.bytes
			      : P.files ? (double)P.files_done / (double)P.files : 1;
	char done[24], total[24], speed[24], eta[32] = "", line[160];

	human(done, sizeof(done), (double)P.bytes_done);
	human(total, sizeof(total), (double)P.bytes);
	human(speed, sizeof(speed), rate);
	if (frac > 0 && frac < 1 && t > 1) {
		long left = (long)(t / frac - t);
		snprintf(eta, sizeof(eta), ", ETA %ld:%02ld:%02ld", left / 3600, left / 60 % 60,
			 left % 60);
	}
	int len = snprintf(line, sizeof(line), "%zu/%zu files, %s of %s, %s/s%s", P.files_done,
			   P.files, done, total, speed, eta);
	size_t w = len > 0 ? (size_t)len : 0;
	fprintf(stderr, "\r%s%*s", line, P.shown > w ? (int)(P.shown - w) : 0, "");
	fflush(stderr);
	P.shown = w;
}

void corpus_progress_update(size_t files_done, uint64_t bytes_done)
{
	double t;

	P.files_done = files_done;
	P.bytes_done = bytes_done;
	if (!P.on)
		return;
	t = now();
	if (t - P.last < 0.1 && files_done < P.files)
		return;
	P.last = t;
	draw();
}

void corpus_progress_end(void)
{
	clear_line();
	P.on = 0;
}

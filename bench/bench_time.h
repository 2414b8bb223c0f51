/*
 * bench_time.h - the clocks and the median ordering every benchmark
 * program uses (static inline: each program is one file).
 */
#ifndef NBG_BENCH_TIME_H
#define NBG_BENCH_TIME_H

#include <time.h>

/* Seconds of wall time and of this process's CPU time. */
static inline double bench_wall(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline double bench_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* qsort order of doubles, for medians. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif

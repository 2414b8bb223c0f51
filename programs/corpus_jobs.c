/*
 * corpus_jobs.c - the parallel run of `nbg corpus`: worker threads claim
 * files of the list in order and measure them, each into its own aggregate
 * (merged at the end; the aggregate's output is canonical, so the result is
 * the same for any number of threads); the main thread takes the finished
 * files strictly in list order from a bounded window of slots and writes
 * the records, manifest lines and messages, so they too are the same for
 * any number of threads, and memory does not grow with the number of files.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "corpus_cli.h"
#include "manifest.h"

#define WINDOW_PER_JOB 32

/* One finished file, waiting for the main thread. */
typedef struct slot {
	int ready;
	uint64_t bytes;
	char *record;           /* the record line, when records are written */
	char *message;          /* the message for stderr, when the file is not valid */
	char *manifest;         /* the manifest line, when a manifest is written */
	int oom;                /* a record or manifest line could not be made */
} slot;

typedef struct pool {
	corpus_run *run;
	size_t n, next, consumed, window;
	slot *slots;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	int stop;
} pool;

typedef struct worker {
	pool *p;
	corpus_agg *agg;
	pthread_t tid;
	int started;
	int oom;                /* no memory for the worker's item */
} worker;

/* On a job's thread: the path escaped with nbg_path_escape, not the
 * main thread's cli_esc. */
static char *message_for(const corpus_item *it, const char *raw)
{
	char *m = NULL, *path = nbg_path_escape(raw);
	int r;

	if (!path)
		return NULL;

	const nbg_error *err = corpus_item_error(it);
	corpus_status st = corpus_item_status(it);

	if (st == CORPUS_INVALID)
		r = asprintf(&m, "%s: %s at offset %" PRIu64 ": %s", path, nbg_code_name(err->code),
			     err->offset, err->message);
	else
		r = asprintf(&m, "%s: %s", corpus_status_name(st), err->message);
	free(path);
	return r < 0 ? NULL : m;
}

/* What the main thread needs of a measured file. */
static void fill_slot(slot *s, const corpus_run *r, const corpus_item *it, const char *path)
{
	corpus_status st = corpus_item_status(it);
	uint8_t sha[32];

	memset(s, 0, sizeof(*s));
	corpus_item_size(it, &s->bytes);
	if (r->records && !(s->record = corpus_record_json(it, cli_json_path(path))))
		s->oom = 1;
	if (st != CORPUS_VALID && !r->quiet)
		s->message = message_for(it, path);
	if (r->manifest && corpus_item_sha256(it, sha) &&
	    (st == CORPUS_VALID || st == CORPUS_INVALID) &&
	    !(s->manifest = cli_manifest_line(sha, path)))
		s->oom = 1;
}

static void *work(void *arg)
{
	worker *w = arg;
	pool *p = w->p;
	corpus_item *it = corpus_item_new();

	if (!it) { /* the run cannot go on: stop it rather than leave a file unmeasured */
		pthread_mutex_lock(&p->mu);
		w->oom = p->stop = 1;
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->stop && p->next < p->n && p->next >= p->consumed + p->window)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		size_t i = p->next++;
		pthread_mutex_unlock(&p->mu);

		const corpus_entry *e = &p->run->list->e[i];
		const char *path = corpus_list_path(p->run->list, i);
		/* main installed the signal guards: large files are mapped */
		corpus_expect exp = { .has_size = e->has_size, .file_size = e->size,
				      .has_sha256 = e->has_sha256,
				      .max_file_size = p->run->max_file_size,
				      .max_undescribed = p->run->max_undescribed, .map_large = 1 };
		memcpy(exp.sha256, e->sha256, 32);
		corpus_measure(it, path, &exp);
		corpus_add_item(w->agg, it);
		slot s;
		fill_slot(&s, p->run, it, path);

		pthread_mutex_lock(&p->mu);
		p->slots[i % p->window] = s;
		p->slots[i % p->window].ready = 1;
		pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->mu);
	}
	corpus_item_free(it);
	return NULL;
}

/* Waits for file k, showing progress meanwhile; 0 when the pool stopped
 * (a worker ran out of memory) before file k was done. */
static int take(pool *p, size_t k, slot *out, size_t files_done, uint64_t bytes_done)
{
	slot *s = &p->slots[k % p->window];

	pthread_mutex_lock(&p->mu);
	while (!s->ready && !p->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_cond_timedwait(&p->done, &p->mu, &ts) == ETIMEDOUT) {
			pthread_mutex_unlock(&p->mu);
			corpus_progress_update(files_done, bytes_done);
			pthread_mutex_lock(&p->mu);
		}
	}
	if (!s->ready) {
		pthread_mutex_unlock(&p->mu);
		return 0;
	}
	*out = *s;
	s->ready = 0;
	p->consumed = k + 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	return 1;
}

static void free_slot(slot *s)
{
	free(s->record);
	free(s->message);
	free(s->manifest);
}

/* The main thread's side: every file in list order.  Returns 0 or
 * NBG_EXIT_IO when an output failed or memory ran out. */
static int consume(pool *p)
{
	corpus_run *r = p->run;
	uint64_t bytes = 0;

	for (size_t k = 0; k < p->n; k++) {
		slot s;
		if (!take(p, k, &s, k, bytes)) {
			corpus_warn("out of memory for a job: the run stopped at %s",
				    cli_esc(corpus_list_path(r->list, k)));
			return NBG_EXIT_IO;
		}
		bytes += s.bytes;
		int oom = s.oom;
		if (s.message)
			corpus_warn("%s", s.message);
		if (r->records && s.record) {
			cli_out_write(r->records, s.record, strlen(s.record));
			cli_out_write(r->records, "\n", 1);
		}
		if (r->manifest && s.manifest)
			cli_out_write(r->manifest, s.manifest, strlen(s.manifest));
		free_slot(&s);
		corpus_progress_update(k + 1, bytes);
		if (oom || (r->records && r->records->err) || (r->manifest && r->manifest->err)) {
			if (oom)
				corpus_warn("out of memory for the record or manifest line of %s",
					    cli_esc(corpus_list_path(r->list, k)));
			return NBG_EXIT_IO;
		}
	}
	return 0;
}

static int start(pool *p, worker *w, int jobs)
{
	for (int t = 0; t < jobs; t++) {
		w[t].p = p;
		if (!(w[t].agg = corpus_agg_new())) {
			corpus_warn("out of memory for %d jobs", jobs);
			return 0;
		}
		int e = pthread_create(&w[t].tid, NULL, work, &w[t]);
		if (e) {
			corpus_warn("cannot start job %d of %d: %s", t + 1, jobs, strerror(e));
			return 0;
		}
		w[t].started = 1;
	}
	return 1;
}

/* Stops the workers, joins them and merges their aggregates. */
static int finish(pool *p, worker *w, int jobs, int rc)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (int t = 0; t < jobs; t++) {
		if (w[t].started)
			pthread_join(w[t].tid, NULL);
		if (w[t].agg && corpus_merge(p->run->agg, w[t].agg) != NBG_OK && !rc) {
			corpus_warn("out of memory merging the results of the jobs");
			rc = NBG_EXIT_IO;
		}
		corpus_agg_free(w[t].agg);
	}
	for (size_t i = 0; i < p->window; i++)
		if (p->slots[i].ready)
			free_slot(&p->slots[i]);
	return rc;
}

int corpus_run_files(corpus_run *r)
{
	int jobs = r->jobs < 1 ? 1 : r->jobs, rc;
	pool p;
	worker *w;

	memset(&p, 0, sizeof(p));
	p.run = r;
	p.n = r->list->n;
	if ((size_t)jobs > p.n && p.n)
		jobs = (int)p.n;
	p.window = (size_t)jobs * WINDOW_PER_JOB;
	p.slots = calloc(p.window, sizeof(*p.slots));
	w = calloc((size_t)jobs, sizeof(*w));
	if (!p.slots || !w) {
		free(p.slots);
		free(w);
		corpus_warn("out of memory for %d jobs", jobs);
		return NBG_EXIT_IO;
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.work, NULL);
	pthread_cond_init(&p.done, NULL);
	corpus_progress_start(r->progress, p.n, r->list->bytes);
	rc = start(&p, w, jobs) ? consume(&p) : NBG_EXIT_IO;
	rc = finish(&p, w, jobs, rc);
	corpus_progress_end();
	pthread_cond_destroy(&p.done);
	pthread_cond_destroy(&p.work);
	pthread_mutex_destroy(&p.mu);
	free(p.slots);
	free(w);
	return rc;
}

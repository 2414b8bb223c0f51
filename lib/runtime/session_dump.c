/*
 * session_dump.c - a CPU backend run that keeps every executed operation's
 * output (nbg_cpu_run_dump), isolated as a session is: the run happens in
 * a child process (nbg_rt_isolate) that writes the tensors and the outputs
 * into a block shared with the caller, sized from the plan's dump list
 * before anything runs.  The Python package's Model.run(dump=True) is its
 * caller (doc/python.md); `nbg run --dump` writes files instead
 * (doc/debugging.md).
 */
#include <stdlib.h>
#include <string.h>

#include "nbg/cpu.h"
#include "nbg/graph.h"
#include "nbg/session.h"
#include "runtime/runtime_internal.h"

/* The block: the head, then the tensors and the outputs, each at a
 * multiple of 64 bytes. */
#define DUMP_ALIGN 64u
#define DUMP_DATA ((sizeof(nbg_rt_shared_head) + DUMP_ALIGN - 1) / DUMP_ALIGN * DUMP_ALIGN)

typedef struct dump_arg {
	const nbg_cpu_plan *p;
	const nbg_model *m;
	const nbg_rt_buffer *inputs;
	size_t count;                /* inputs */
	const nbg_cpu_tensor *list;
	size_t n;                    /* tensors */
	const uint64_t *off;         /* n tensors' then every output's offset in the block */
	uint8_t *base;               /* the block (the child's view) */
	size_t got;                  /* tensors received */
} dump_arg;

static uint64_t aligned(uint64_t v)
{
	return (v + DUMP_ALIGN - 1) / DUMP_ALIGN * DUMP_ALIGN;
}

/* The run's hook: tensor got's bytes into its place in the block. */
static nbg_code dump_hook(void *ctx, const nbg_cpu_tensor *t)
{
	dump_arg *a = ctx;
	if (a->got >= a->n || t->bytes != a->list[a->got].bytes)
		return NBG_E_RUNTIME_IO_MISMATCH;
	memcpy(a->base + a->off[a->got], t->data, (size_t)t->bytes);
	a->got++;
	return NBG_OK;
}

/* In the child: the dumping run, then the output records' bytes. */
static void dump_child(nbg_rt_shared_head *h, void *varg)
{
	dump_arg *a = varg;
	nbg_cpu_state *st = NULL;
	a->base = (uint8_t *)h;
	nbg_code rc = nbg_cpu_run_dump(a->p, a->inputs, a->count, SIZE_MAX, dump_hook, a, &st, &h->err);
	if (rc == NBG_E_RUNTIME_IO_MISMATCH || (rc == NBG_OK && a->got != a->n))
		rc = nbg_rt_fail(&h->err, NBG_E_RUNTIME_IO_MISMATCH, -1,
				 "the run gave %zu tensors where its plan lists %zu", a->got, a->n);
	for (size_t i = 0; rc == NBG_OK && i < nbg_model_output_count(a->m); i++) {
		size_t size = 0;
		const nbg_io *io = nbg_model_output_at(a->m, i);
		const uint8_t *d = nbg_cpu_state_buffer(st, NBG_GRAPH_SRC_OUTPUT, (int32_t)i, &size);
		if (!d || size < io->byte_size)
			rc = nbg_rt_fail(&h->err, NBG_E_RUNTIME_IO_MISMATCH, (int32_t)i,
					 "output %zu has no buffer of its record's size", i);
		else
			memcpy(a->base + a->off[a->n + i], d, (size_t)io->byte_size);
	}
	nbg_cpu_state_free(st);
	h->rc = rc;
	h->done = 1;
}

/* The offsets of the tensors and outputs, and the block's size, against
 * max_bytes (the tensors' bytes): NBG_OK or WORK_LIMIT. */
static nbg_code dump_layout(const nbg_model *m, const nbg_cpu_tensor *list, size_t n, uint64_t max_bytes,
			    uint64_t *off, uint64_t *total, nbg_error *err)
{
	uint64_t at = DUMP_DATA, tensors = 0;
	for (size_t i = 0; i < n; i++) {
		if (list[i].bytes > max_bytes - tensors)
			return nbg_rt_fail(err, NBG_E_WORK_LIMIT, -1,
					   "the dump of %zu tensors holds more than %llu bytes (the limit): "
					   "refused before anything ran; raise the dump limit",
					   n, (unsigned long long)max_bytes);
		tensors += list[i].bytes;
		off[i] = at;
		at = aligned(at + list[i].bytes);
	}
	for (size_t i = 0; i < nbg_model_output_count(m); i++) {
		const nbg_io *io = nbg_model_output_at(m, i);
		if (!io->byte_size_known || io->byte_size > SIZE_MAX / 4)
			return nbg_rt_fail(err, NBG_E_IO_SIZE_UNKNOWN, (int32_t)i,
					   "output %zu has no usable byte size", i);
		off[n + i] = at;
		at = aligned(at + io->byte_size);
	}
	if (at > SIZE_MAX / 2)
		return nbg_rt_fail(err, NBG_E_WORK_LIMIT, -1, "the dump's block of %llu bytes is too large",
				   (unsigned long long)at);
	*total = at;
	return NBG_OK;
}

/* The result over the block h (which it takes): NBG_OK or OUT_OF_MEMORY. */
static nbg_code dump_collect(nbg_rt_shared_head *h, size_t total, const nbg_model *m, nbg_cpu_tensor *list,
			     size_t n, const uint64_t *off, nbg_rt_dump_result **out, nbg_error *err)
{
	nbg_rt_dump_result *r = calloc(1, sizeof(*r));
	nbg_rt_buffer *o = calloc(nbg_model_output_count(m) + 1, sizeof(*o));
	if (!r || !o) {
		free(r);
		free(o);
		nbg_rt_shared_free(h, total);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		list[i].data = (const uint8_t *)h + off[i];
	for (size_t i = 0; i < nbg_model_output_count(m); i++) {
		o[i].data = (const uint8_t *)h + off[n + i];
		o[i].size = (size_t)nbg_model_output_at(m, i)->byte_size;
	}
	r->count = n;
	r->tensors = list;
	r->output_count = nbg_model_output_count(m);
	r->outputs = o;
	r->priv = h;
	r->priv_size = total;
	*out = r;
	return NBG_OK;
}

nbg_code nbg_rt_cpu_dump_run(const nbg_rt_session_options *o, const nbg_rt_buffer *inputs, size_t count,
			     uint64_t max_bytes, nbg_rt_dump_result **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!out || !o || o->size < sizeof(*o) || !o->parsed || !o->cpu_plan || (count && !inputs))
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1,
				   "dump run: NULL pointer, no model or plan, or options size not "
				   "sizeof(nbg_rt_session_options)");
	*out = NULL;
	const nbg_model *m = o->parsed;
	nbg_cpu_tensor *list = NULL;
	size_t n = 0;
	nbg_code rc = nbg_cpu_dump_list(o->cpu_plan, SIZE_MAX, &list, &n, err);
	if (rc != NBG_OK)
		return rc;
	/* what the run refuses, before the block is mapped */
	rc = nbg_cpu_plan_check(o->cpu_plan, SIZE_MAX, err);
	uint64_t *off = rc == NBG_OK ? calloc(n + nbg_model_output_count(m) + 1, sizeof(*off)) : NULL;
	uint64_t total = 0;
	if (rc == NBG_OK && !off)
		rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	if (rc == NBG_OK)
		rc = dump_layout(m, list, n, max_bytes, off, &total, err);
	nbg_rt_shared_head *h = NULL;
	dump_arg a = { o->cpu_plan, m, inputs, count, list, n, off, NULL, 0 };
	if (rc == NBG_OK)
		rc = nbg_rt_isolate(!(o->flags & NBG_RT_SESSION_NO_ISOLATE), (size_t)total, o->timeout_ms,
				    (nbg_rt_stop){ o->stop, o->stop_ctx }, dump_child, &a, &h, err);
	if (rc == NBG_OK && h->rc != NBG_OK) {
		rc = h->rc;
		if (err)
			*err = h->err;
	}
	if (rc == NBG_OK) {
		rc = dump_collect(h, (size_t)total, m, list, n, off, out, err);
		if (rc == NBG_OK)
			list = NULL; /* the result's */
	} else if (h) {
		nbg_rt_shared_free(h, (size_t)total);
	}
	free(off);
	free(list);
	return rc;
}

void nbg_rt_dump_result_free(nbg_rt_dump_result *r)
{
	if (!r)
		return;
	nbg_rt_shared_free(r->priv, r->priv_size);
	free(r->tensors);
	free(r->outputs);
	free(r);
}

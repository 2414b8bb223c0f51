/*
 * dump.c - what each executed operation wrote, as a tensor (nbg_cpu_tensor,
 * `nbg run --dump`): the image each kind of operation writes, read back
 * from the machine's buffers right after the operation ran, through the
 * output's circular buffer where it has one; a TP walk's elements where
 * the walk wrote them (ops/tp.c); and the tiles of a layer stacked into
 * the whole layer's tensor.  The run is nbg_cpu_run's, with a hook after
 * each executed operation (run.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/ring.h"
#include "runtime/errors.h"

/* NBG data formats of the elements the backend writes (nbg_data_format_name). */
#define DUMP_FP16 1u
#define DUMP_UINT8 2u
#define DUMP_INT8 3u
#define DUMP_INT16 5u
#define DUMP_INT32 8u

/* Where an operation's tensor lies: z images of y rows of x elements of
 * elem bytes, at base of region with row and slice strides, through the
 * ring [ring_lo, ring_lo + ring_size) (size 0: none); or, walk, the
 * elements of a TP walk (tp). */
typedef struct cpu_view {
	size_t region;
	uint64_t base, row, slice, ring_lo, ring_size;
	uint32_t x, y, z, elem;
	const cpu_tp *tp;
	int record;             /* a walk's elements are its region's bytes, whole */
} cpu_view;

const char *nbg_cpu_step_kind(const nbg_cpu_plan *p, size_t i)
{
	if (!p || i >= p->count || p->steps[i].verdict != NBG_CPU_EXECUTE)
		return NULL;
	int k = p->ops[i].kind;
	return k > CPU_OP_NONE && k < CPU_OP__COUNT && nbg_cpu_ops[k] ? nbg_cpu_ops[k]->name : NULL;
}

static void view_image(cpu_view *v, size_t region, uint64_t base, uint32_t x, uint32_t y, uint32_t z,
		       uint64_t row, uint64_t slice)
{
	v->region = region;
	v->base = base;
	v->x = x;
	v->y = y;
	v->z = z;
	v->row = row;
	v->slice = slice;
}

/* The image a shader kind writes (ops/shader.h); 0 when it writes none. */
static int view_ref(const cpu_ref *r, cpu_view *v, nbg_cpu_tensor *t)
{
	switch (r->kind) {
	case CPU_REF_SOFTMAX: {
		uint32_t g = r->group ? r->group : r->width;
		view_image(v, r->out_region, r->out_base, g ? r->width / g * g : 0, 1, 1, 0, 0);
		v->elem = 2;
		t->data_format = DUMP_FP16;
		return 1;
	}
	case CPU_REF_POOL:
		view_image(v, r->out_region, r->out_base, 1, 1, r->rows, 0, r->out_stride);
		return 1;
	case CPU_REF_MEAN:
		view_image(v, r->out_region, r->out_base, r->group ? r->width : 1, r->rows, r->group ? 1 : r->kx,
			   r->out_stride, r->out_slice);
		v->elem = 2;
		t->data_format = DUMP_FP16;
		return 1;
	case CPU_REF_DWCONV:
		view_image(v, r->out_region, r->out_base, 1, 1, r->rows, 0, r->out_slice);
		return 1;
	case CPU_REF_MAXPOOL:
		view_image(v, r->out_region, r->out_base, r->mp.out_w, r->mp.out_h, r->kx, r->out_stride,
			   r->out_slice);
		t->data_format = r->in_flip ? DUMP_INT8 : DUMP_UINT8;
		return 1;
	case CPU_REF_ADD:
	case CPU_REF_UPSAMPLE: {
		uint32_t k = r->kind == CPU_REF_UPSAMPLE ? 2 : 1;
		view_image(v, r->elt.region[2], r->elt.base[2], k * r->elt.x, k * r->elt.y, r->elt.z,
			   r->elt.row[2], r->elt.slice[2]);
		t->data_format = r->elt.s8 ? DUMP_INT8 : DUMP_UINT8;
		return 1;
	}
	case CPU_REF_SUB:
		view_image(v, r->elt.region[2], r->elt.base[2], r->elt.x, r->elt.y, r->elt.z, r->elt.row[2],
			   r->elt.slice[2]);
		v->elem = 2;
		t->data_format = r->elt.zpo ? DUMP_INT16 : DUMP_FP16;
		return 1;
	case CPU_REF_PAD: /* rows of width bytes, elements of kx bytes in the NBG format group */
		view_image(v, r->elt.region[2], r->elt.base[2], r->width / r->kx, r->rows, 1, r->elt.row[2], 0);
		v->elem = r->kx;
		t->data_format = r->group;
		return 1;
	case CPU_REF_RESIZE:
		view_image(v, r->elt.region[2], r->elt.base[2], 2 * r->elt.x, 2 * r->elt.y, r->elt.z, r->elt.row[2],
			   r->elt.slice[2]);
		v->elem = 2;
		t->data_format = DUMP_INT16;
		return 1;
	case CPU_REF_DWCONV16:
		view_image(v, r->elt.region[2], r->elt.base[2], r->conv.ow, r->conv.p, r->conv.c, r->elt.row[2],
			   r->elt.slice[2]);
		v->elem = 2;
		t->data_format = DUMP_FP16;
		return 1;
	case CPU_REF_IM2COL: /* p rows of k fp16 values; GEMM: n rows of p */
	case CPU_REF_GEMM:
		view_image(v, r->elt.region[2], r->elt.base[2], r->kind == CPU_REF_GEMM ? r->conv.p : r->conv.k,
			   r->kind == CPU_REF_GEMM ? r->conv.n : r->conv.p, 1, r->elt.row[2], 0);
		v->elem = 2;
		t->data_format = DUMP_FP16;
		return 1;
	default:
		return 0; /* an SP step of a softmax another step computes */
	}
}

/* An int16 NN-engine operation's written image (ops/nn16.c): its output
 * after pooling, int16 (grouped: as stored); a transpose's in_y x in_x
 * elements of its size. */
static void view_nn16(const cpu_nn16 *n, cpu_view *v, nbg_cpu_tensor *t)
{
	if (n->kind == CPU_NN16_TRANSPOSE) {
		view_image(v, n->out_region, n->out_base, n->in_y, n->in_x, 1, n->out_row, 0);
		v->elem = n->esize;
		t->data_format = n->esize == 2 ? DUMP_INT16 : n->esize == 4 ? DUMP_INT32 : DUMP_UINT8;
	} else {
		/* an image in groups of 16 channels (ops/nn16.c): its bytes, z / 16
		 * groups of rows of 16 channels a pixel */
		uint32_t g = n->out_grouped ? 16 : 1;
		view_image(v, n->out_region, n->out_base, g * n->pool_x, n->pool_y, n->out_z / g, n->out_row,
			   n->out_slice);
		v->elem = 2;
		t->data_format = n->kind >= CPU_NN16_F16_MAXPOOL ? DUMP_FP16 : DUMP_INT16;
		t->zero_point_known = n->kind < CPU_NN16_F16_MAXPOOL;
	}
	v->ring_lo = n->out_ring_lo;
	v->ring_size = n->out_ring_size;
}

/* Elements a TP walk writes (ops/tp.c), and whether they are the whole
 * [0, n) range; -1 when out of memory. */
static int64_t walk_count(const cpu_tp *tp, int *dense)
{
	uint64_t n = 0, c = 0;
	uint8_t *mark = nbg_cpu_tp_written(tp, &n);
	if (!mark)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		c += mark[i];
	free(mark);
	*dense = c == n;
	return (int64_t)c;
}

static int view_walk(const nbg_cpu_plan *p, size_t i, const cpu_tp *tp, cpu_view *v, nbg_cpu_tensor *t)
{
	int dense = 0;
	int64_t c = walk_count(tp, &dense);
	if (c < 0)
		return -1;
	v->tp = tp;
	v->region = tp->out_region;
	v->base = tp->out_base;
	v->ring_lo = tp->out_ring_lo;
	v->ring_size = tp->out_ring_size;
	v->elem = tp->f16_out ? 2 : 1;
	t->data_format = tp->f16_out ? DUMP_FP16 : tp->flip ? DUMP_INT8 : DUMP_UINT8;
	const nbg_cmd_op *cop = nbg_commands_op_of(p->c, i);
	uint64_t img = cop ? (uint64_t)cop->out[0] * cop->out[1] * cop->out[2] : 0;
	if (img && img == (uint64_t)c) {
		t->ndim = 3;
		t->shape[0] = cop->out[2];
		t->shape[1] = cop->out[1];
		t->shape[2] = cop->out[0];
	} else {
		t->ndim = 1;
		t->shape[0] = (uint64_t)c;
	}
	t->bytes = (uint64_t)c * v->elem;
	/* the walk's elements are the record's bytes, whole */
	v->record = dense && !v->base && t->bytes == p->regions[v->region].size;
	return 1;
}

/* Step i's view and tensor (data NULL): 1; 0 when it writes nothing; -1
 * when out of memory. */
static int view_of(const nbg_cpu_plan *p, size_t i, cpu_view *v, nbg_cpu_tensor *t)
{
	const nbg_cpu_step *s = &p->steps[i];
	const cpu_op *op = &p->ops[i];
	memset(v, 0, sizeof(*v));
	memset(t, 0, sizeof(*t));
	t->operation = i;
	t->layer_id = s->layer_id;
	t->layer = s->layer;
	t->kind = nbg_cpu_step_kind(p, i);
	t->output_record = -1;
	t->data_format = DUMP_UINT8;
	v->elem = 1;
	int r = 1;
	if (op->kind == CPU_OP_CONV) {
		const cpu_conv *cv = &op->u.conv;
		view_image(v, cv->out_region, cv->out_base, cv->pool_x, cv->pool_y, cv->out_z, cv->out_row,
			   cv->out_slice);
		v->ring_lo = cv->out_ring_lo;
		v->ring_size = cv->out_ring_size;
		t->zero_point_known = 1;
		t->zero_point = (int32_t)cv->out_zp;
		t->data_format = cv->sgn ? DUMP_INT8 : DUMP_UINT8;
	} else if (op->kind == CPU_OP_TPFC) {
		const cpu_tpfc *fc = &op->u.tpfc;
		view_image(v, fc->out_region, fc->out_base, fc->nout, 1, 1, fc->nout, fc->nout);
		t->zero_point_known = 1;
		t->zero_point = (int32_t)fc->out_zp;
	} else if (op->kind == CPU_OP_TP) {
		r = view_walk(p, i, &op->u.tp, v, t);
	} else if (op->kind == CPU_OP_NN16) {
		view_nn16(&op->u.nn16, v, t);
	} else {
		r = view_ref(&op->u.ref, v, t);
	}
	if (r <= 0 || v->tp) {
		if (r > 0 && v->record && p->regions[v->region].source_type == NBG_GRAPH_SRC_OUTPUT)
			t->output_record = p->regions[v->region].index;
		return r;
	}
	t->ndim = 3;
	t->shape[0] = v->z;
	t->shape[1] = v->y;
	t->shape[2] = v->x;
	/* saturated: a product past 64 bits is refused as too large to hold */
	if (__builtin_mul_overflow((uint64_t)v->x * v->y, (uint64_t)v->z * v->elem, &t->bytes))
		t->bytes = UINT64_MAX;
	const cpu_region *g = &p->regions[v->region];
	uint64_t line = (uint64_t)v->x * v->elem;
	if (g->source_type == NBG_GRAPH_SRC_OUTPUT && !v->base && !v->ring_size && t->bytes == g->size &&
	    (v->y < 2 || v->row == line) && (v->z < 2 || v->slice == line * v->y))
		t->output_record = g->index;
	return 1;
}

/* The view's elements out of the buffers into d (t->bytes of them); -1
 * when out of memory. */
static int gather(const cpu_view *v, uint8_t *const *buf, uint8_t *d)
{
	const uint8_t *b = buf[v->region];
	if (v->tp) {
		uint64_t n = 0;
		uint8_t *mark = nbg_cpu_tp_written(v->tp, &n);
		if (!mark)
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (mark[i]) {
				nbg_cpu_ring_read(d, b, v->base + i * v->elem, v->elem, 1, v->ring_lo, v->ring_size);
				d += v->elem;
			}
		free(mark);
		return 0;
	}
	uint64_t line = (uint64_t)v->x * v->elem;
	for (uint32_t z = 0; z < v->z; z++)
		for (uint32_t y = 0; y < v->y; y++, d += line)
			nbg_cpu_ring_read(d, b, v->base + z * v->slice + y * v->row, line, 1, v->ring_lo,
					  v->ring_size);
	return 0;
}

/* The tensors of a dumping run, and per tensor the whole-layer entry it is
 * a tile of (-1: none). */
typedef struct dump_list {
	nbg_cpu_tensor *t;
	int64_t *whole;
	size_t n, cap;
} dump_list;

static int list_add(dump_list *l, const nbg_cpu_tensor *t)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		nbg_cpu_tensor *nt = realloc(l->t, cap * sizeof(*nt));
		if (nt)
			l->t = nt;
		int64_t *nw = nt ? realloc(l->whole, cap * sizeof(*nw)) : NULL;
		if (!nw)
			return -1;
		l->whole = nw;
		l->cap = cap;
	}
	l->t[l->n] = *t;
	l->whole[l->n++] = -1;
	return 0;
}

static void list_free(dump_list *l)
{
	free(l->t);
	free(l->whole);
	memset(l, 0, sizeof(*l));
}

/* The axis a layer's tiles are stacked along: a convolution's rows (1), a
 * TP fully connected layer's outputs (2); 0 for another kind. */
static int tile_axis(const nbg_cpu_plan *p, const nbg_cpu_tensor *t)
{
	int k = p->ops[t->operation].kind;
	return k == CPU_OP_CONV ? 1 : k == CPU_OP_TPFC ? 2 : 0;
}

/* Whether entry j of the steps' tensors is a tile of a layer (its layer's
 * tensors are two or more of one kind that stacks, equal but along its
 * axis), and *last whether no later entry is of its layer; the length of
 * the stacked axis into *len. */
static int tile_of(const nbg_cpu_plan *p, const dump_list *st, size_t j, int *last, uint64_t *len)
{
	const nbg_cpu_tensor *t = &st->t[j];
	int axis = tile_axis(p, t);
	size_t count = 0;
	*last = 1;
	*len = 0;
	for (size_t k = 0; k < st->n && axis; k++) {
		const nbg_cpu_tensor *u = &st->t[k];
		if (u->layer_id != t->layer_id)
			continue;
		if (tile_axis(p, u) != axis || u->shape[0] != t->shape[0] ||
		    (axis == 1 ? u->shape[2] != t->shape[2] : u->shape[1] != t->shape[1]))
			return 0;
		count++;
		*len += u->shape[axis];
		*last = *last && k <= j;
	}
	return count > 1;
}

/* The OUTPUT record a whole layer's tensor is, byte for byte: its tiles
 * (entries of `layer`) write it whole, one after the other from its start;
 * else -1. */
static int32_t whole_record(const nbg_cpu_plan *p, const dump_list *l, uint32_t layer, uint64_t bytes)
{
	uint64_t next = 0;
	size_t region = SIZE_MAX;
	for (size_t k = 0; k < l->n; k++) {
		cpu_view v;
		nbg_cpu_tensor t;
		if (l->t[k].layer_id != layer || l->t[k].whole_layer)
			continue;
		if (view_of(p, l->t[k].operation, &v, &t) <= 0 || v.ring_size || v.base != next ||
		    (region != SIZE_MAX && v.region != region) || (v.z > 1 && v.y > 1))
			return -1;
		region = v.region;
		next = v.base + t.bytes;
	}
	const cpu_region *g = region < p->region_count ? &p->regions[region] : NULL;
	return g && g->source_type == NBG_GRAPH_SRC_OUTPUT && next == bytes && bytes == g->size ? g->index : -1;
}

/* The steps' tensors in order, each tiled layer's whole tensor after its
 * last tile (the tiles stacked along their axis in the order they ran). */
static int list_whole(const nbg_cpu_plan *p, const dump_list *st, dump_list *l)
{
	for (size_t j = 0; j < st->n; j++) {
		int last;
		uint64_t len;
		if (list_add(l, &st->t[j]))
			return -1;
		if (!tile_of(p, st, j, &last, &len) || !last)
			continue;
		nbg_cpu_tensor w = st->t[j];
		w.whole_layer = 1;
		w.tiles = 0;
		w.shape[tile_axis(p, &w)] = len;
		if (__builtin_mul_overflow(w.shape[0] * w.shape[2], w.shape[1], &w.bytes))
			w.bytes = UINT64_MAX;
		w.output_record = whole_record(p, l, w.layer_id, w.bytes);
		for (size_t k = 0; k < l->n; k++)
			if (l->t[k].layer_id == w.layer_id && !l->t[k].whole_layer) {
				l->whole[k] = (int64_t)l->n;
				w.tiles++;
			}
		if (list_add(l, &w))
			return -1;
	}
	return 0;
}

static nbg_code list_build(const nbg_cpu_plan *p, size_t stop_before, dump_list *l, nbg_error *err)
{
	size_t end = stop_before < p->count ? stop_before : p->count;
	dump_list st;
	memset(&st, 0, sizeof(st));
	memset(l, 0, sizeof(*l));
	int bad = 0;
	for (size_t i = 0; i < end && !bad; i++) {
		cpu_view v;
		nbg_cpu_tensor t;
		int r = p->steps[i].verdict == NBG_CPU_EXECUTE ? view_of(p, i, &v, &t) : 0;
		bad = r < 0 || (r > 0 && list_add(&st, &t));
	}
	bad = bad || list_whole(p, &st, l);
	list_free(&st);
	if (bad) {
		list_free(l);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	return NBG_OK;
}

nbg_code nbg_cpu_dump_list(const nbg_cpu_plan *p, size_t stop_before, nbg_cpu_tensor **out, size_t *count,
			   nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!p || !out || !count)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu dump list: NULL argument");
	dump_list l;
	nbg_code rc = list_build(p, stop_before, &l, err);
	if (rc != NBG_OK)
		return rc;
	free(l.whole);
	*out = l.t;
	*count = l.n;
	return NBG_OK;
}

/* A dumping run: the list, where the run is in it, per whole-layer entry
 * the tensor being stacked and its rows filled. */
typedef struct dump_run {
	const nbg_cpu_plan *p;
	dump_list l;
	size_t at;
	uint8_t **whole;
	uint64_t *rows;
	nbg_cpu_dump_fn hook;
	void *ctx;
} dump_run;

/* Tile t into whole-layer entry k being stacked: its rows (each channel's
 * after the earlier tiles'), or a TP fully connected layer's outputs after
 * the earlier ones. */
static int stack_tile(dump_run *d, size_t k, const nbg_cpu_tensor *t)
{
	const nbg_cpu_tensor *w = &d->l.t[k];
	if (!d->whole[k] && !(d->whole[k] = malloc(w->bytes ? (size_t)w->bytes : 1)))
		return -1;
	if (tile_axis(d->p, t) == 2) {
		memcpy(d->whole[k] + d->rows[k], t->data, (size_t)t->bytes);
		d->rows[k] += t->bytes;
		return 0;
	}
	uint64_t x = t->shape[2];
	for (uint64_t z = 0; z < t->shape[0]; z++)
		memcpy(d->whole[k] + (z * w->shape[1] + d->rows[k]) * x, t->data + z * t->shape[1] * x,
		       (size_t)(t->shape[1] * x));
	d->rows[k] += t->shape[1];
	return 0;
}

/* Entry d->at, step i's tensor, gathered (a tile stacked into its layer's)
 * and given to the hook; a whole layer's as stacked. */
static nbg_code dump_entry(dump_run *d, size_t i, uint8_t *const *buf, nbg_error *err)
{
	size_t k = d->at;
	nbg_cpu_tensor t = d->l.t[k];
	cpu_view v;
	uint8_t *data = NULL;
	/* what a size_t cannot hold cannot be allocated either (32-bit hosts) */
	if (t.bytes >= SIZE_MAX || (d->l.whole[k] >= 0 && d->l.t[d->l.whole[k]].bytes >= SIZE_MAX))
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory: operation %zu's tensor is "
				   "%llu bytes", i, (unsigned long long)t.bytes);
	if (t.whole_layer) {
		t.data = d->whole[k];
	} else if (view_of(d->p, i, &v, &t) < 0 || !(data = malloc(t.bytes ? (size_t)t.bytes : 1)) ||
		   gather(&v, buf, data) ||
		   (t.data = data, d->l.whole[k] >= 0 && stack_tile(d, (size_t)d->l.whole[k], &t))) {
		free(data);
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	}
	nbg_code rc = d->hook(d->ctx, &t);
	free(data);
	free(d->whole[k]);
	d->whole[k] = NULL;
	if (rc != NBG_OK)
		return nbg_rt_fail(err, rc, -1, "the dump stopped the run after operation %zu", i);
	return NBG_OK;
}

static nbg_code dump_after(void *ctx, size_t i, uint8_t *const *buf, nbg_error *err)
{
	dump_run *d = ctx;
	nbg_code rc = NBG_OK;
	for (; rc == NBG_OK && d->at < d->l.n && d->l.t[d->at].operation == i; d->at++)
		rc = dump_entry(d, i, buf, err);
	return rc;
}

/* The caller bounds what the hook receives by nbg_cpu_dump_list's bytes
 * (nbg run's --dump-limit): each tensor is gathered into memory of its own. */
nbg_code nbg_cpu_run_dump(const nbg_cpu_plan *p, const nbg_rt_buffer *inputs, size_t count, size_t stop_before,
			  nbg_cpu_dump_fn hook, void *ctx, nbg_cpu_state **out, nbg_error *err)
{
	if (err)
		nbg_rt_error_clear(err);
	if (!p || !hook || !out)
		return nbg_rt_fail(err, NBG_E_INVALID_ARGUMENT, -1, "cpu dump run: NULL argument");
	dump_run d = { .p = p, .hook = hook, .ctx = ctx };
	nbg_code rc = list_build(p, stop_before, &d.l, err);
	if (rc != NBG_OK)
		return rc;
	d.whole = calloc(d.l.n + 1, sizeof(*d.whole));
	d.rows = calloc(d.l.n + 1, sizeof(*d.rows));
	if (!d.whole || !d.rows)
		rc = nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1, "out of memory");
	else
		rc = nbg_cpu_run_hooked(p, inputs, count, stop_before, dump_after, &d, out, err);
	for (size_t k = 0; d.whole && k < d.l.n; k++)
		free(d.whole[k]);
	free(d.whole);
	free(d.rows);
	list_free(&d.l);
	return rc;
}

/*
 * common.c - what every planner of the CPU backend shares: refusing a
 * step with a reason, finding the buffer an address lands in, checking
 * that an image lies inside it, and reading an SH operation's shader
 * uniforms from its state buffer (through analysis/graph/uniforms.c, which the
 * data flow shares; cpu_internal.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis/graph/commands_lib.h"
#include "cpu/budget.h"
#include "cpu/cpu_internal.h"
#include "cpu/ops/nn16.h"

void nbg_cpu_refuse(nbg_cpu_step *s, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	s->verdict = NBG_CPU_REFUSED;
	s->reason_id = id;
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
}

int nbg_cpu_rounding(nbg_cpu_step *s, const char *id, const char *what, const char *field, uint32_t mode,
		     int *even)
{
	if (mode <= 1) {
		*even = (int)mode;
		return 1;
	}
	nbg_cpu_refuse(s, id, "%s with %s %u (the vendor's %s): executed are 0, rounded half away from zero, "
		       "and 1, to nearest with ties to even", what, field, mode,
		       mode == 2 ? "round toward zero" : "RTNI");
	return 0;
}

/* The region an address reference lands in, or -1 (with the step refused). */
long nbg_cpu_find_region(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what,
			 const nbg_cmd_ref *r)
{
	if (!r->patched) {
		nbg_cpu_refuse(s, "address-not-relocated",
			       "its %s address is relocated by no patch, so where it lies is not known",
			       what);
		return -1;
	}
	for (size_t i = 0; i < p->region_count; i++) {
		const cpu_region *g = &p->regions[i];
		if (g->source_type != r->source_type)
			continue;
		if ((g->source_type == NBG_GRAPH_SRC_INPUT ||
		     g->source_type == NBG_GRAPH_SRC_OUTPUT ||
		     g->source_type == NBG_GRAPH_SRC_MISC_DYNA_OUTPUT ||
		     g->source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT) &&
		    g->index != r->index)
			continue;
		return (long)i;
	}
	const char *name = nbg_graph_source_type_name(r->source_type);
	nbg_cpu_refuse(s, "memory-unsupported",
		       "its %s address is in %s %d, a memory the CPU backend does not model", what,
		       name ? name : "source type", name ? r->index : (int32_t)r->source_type);
	return -1;
}

/* The regions of an operation's input and output references; 0 with the
 * step refused when one lands in none. */
int nbg_cpu_find_io(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd_op *op, size_t *in, size_t *out)
{
	long ri = nbg_cpu_find_region(p, s, "input", &op->in_ref);
	long ro = ri < 0 ? -1 : nbg_cpu_find_region(p, s, "output", &op->out_ref);
	if (ri < 0 || ro < 0)
		return 0;
	*in = (size_t)ri;
	*out = (size_t)ro;
	return 1;
}

/* The last byte of an image x*y*z at base with its strides lies inside the region. */
int nbg_cpu_image_fits(const nbg_cpu_plan *p, size_t region, uint64_t base, uint64_t x, uint64_t y,
		       uint64_t z, uint64_t row, uint64_t slice, uint64_t *last)
{
	/* x, y below 2^13, z below 2^20, the strides bounded: no sum below overflows */
	if (row >= (1ull << 32) || slice >= (1ull << 40) || z > (1ull << 20))
		return 0;
	*last = base + (z - 1) * slice + (y - 1) * row + (x - 1);
	return *last < p->regions[region].size;
}

/* The patch of this operation that relocates the state word at byte `at`:
 * its reference, the offset the stored word gives by the data flow's rule
 * (nbg_command_patched_offset: before 0x10009 the word is the address and
 * the patch's source offset its buffer's base). */
int nbg_cpu_patched_ref(const nbg_cpu_plan *p, size_t operation, uint32_t at, uint32_t value,
			nbg_cmd_ref *r)
{
	const nbg_graph_operation *go = nbg_graph_operation_at(p->g, operation);
	memset(r, 0, sizeof(*r));
	for (uint32_t k = 0; k < go->patch_count; k++) {
		size_t pi = (size_t)go->patch_index + k;
		const nbg_graph_patch *pt = nbg_graph_patch_at(p->g, pi);
		if (!pt || pt->type != 0 || pt->dest_offset != at)
			continue;
		r->patched = 1;
		r->patch = pi;
		r->source_type = pt->source_type;
		r->index = pt->index;
		r->src_offset = pt->src_offset;
		r->offset = nbg_command_patched_offset(p->m->version, pt->src_offset, value);
		return 1;
	}
	return 0;
}

/* The bytes a state word relocated into a constant table points at: the
 * patch of this operation that relocates the word at byte `at` names an
 * entry of the table its source selects (MISC_DYNA_INPUT: the LCDT of a v1
 * file; MISC_DYNA_GENERIC: the COEF_DATA_TABLE of a v2 file, the LCDT of a
 * v1 file, which has no COEF_DATA_TABLE, as the memory report reads it),
 * and `need` bytes from the patched offset lie inside that entry; NULL
 * otherwise. */
const uint8_t *nbg_cpu_table_bytes(const nbg_cpu_plan *p, size_t operation, uint32_t at, uint32_t value,
				   uint32_t source_type, uint64_t need)
{
	nbg_cmd_ref k;
	size_t tid = source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT ||
				 !nbg_graph_table_at(p->g, NBG_GRAPH_TABLE_COEF_DATA)->decoded
			     ? NBG_GRAPH_TABLE_LCD
			     : NBG_GRAPH_TABLE_COEF_DATA;
	const nbg_graph_table *t = nbg_graph_table_at(p->g, tid);
	const nbg_graph_table_entry *e = NULL;
	if ((source_type == NBG_GRAPH_SRC_MISC_DYNA_INPUT || source_type == NBG_GRAPH_SRC_MISC_DYNA_GENERIC) &&
	    nbg_cpu_patched_ref(p, operation, at, value, &k) && k.source_type == source_type && k.index >= 0 &&
	    t && t->present && t->decoded && t->data_present)
		e = nbg_graph_table_entry_at(p->g, tid, (size_t)k.index);
	if (!e || !e->in_bounds || t->data_offset > p->m->file_size ||
	    e->offset > p->m->file_size - t->data_offset ||
	    e->size > p->m->file_size - t->data_offset - e->offset || k.offset > e->size ||
	    need > e->size - k.offset)
		return NULL;
	return p->m->data + t->data_offset + e->offset + k.offset;
}

/* The constant image at uniform j (cpu_internal.h). */
const uint8_t *nbg_cpu_const_bytes(const nbg_cpu_plan *p, size_t operation, const cpu_uniforms *u, unsigned j,
				   uint64_t need)
{
	const uint8_t *b = nbg_cpu_table_bytes(p, operation, u->at[j], u->value[j], NBG_GRAPH_SRC_MISC_DYNA_INPUT,
					       need);
	return b ? b : nbg_cpu_table_bytes(p, operation, u->at[j], u->value[j], NBG_GRAPH_SRC_MISC_DYNA_GENERIC,
					   need);
}

/* The input (uniform 0x36000) and output (uniform index ou) image
 * addresses through their patches into *in, *out and the regions *ri, *ro;
 * 0 with the step refused when one is not relocated or in no region. */
int nbg_cpu_locate_io(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const cpu_uniforms *u, size_t ou,
		      const char *what, nbg_cmd_ref *in, nbg_cmd_ref *out, long *ri, long *ro)
{
	if (!nbg_cpu_patched_ref(p, operation, u->at[0], u->value[0], in) ||
	    !nbg_cpu_patched_ref(p, operation, u->at[ou], u->value[ou], out)) {
		nbg_cpu_refuse(s, "address-not-relocated", "a %s (layer %s) whose %s image address "
			       "(uniform 0x%05x) is relocated by no patch of the operation", what, s->layer,
			       in->patched ? "output" : "input",
			       (unsigned)(CPU_UNIFORM_BASE + (in->patched ? 4 * ou : 0)));
		return 0;
	}
	*ri = nbg_cpu_find_region(p, s, "input", in);
	*ro = *ri < 0 ? -1 : nbg_cpu_find_region(p, s, "output", out);
	return *ri >= 0 && *ro >= 0;
}

/* The uniforms of operation `operation`'s state buffer into *u; 0 with
 * the step refused when the buffer is missing or cut short. */
int nbg_cpu_load_uniforms(nbg_cpu_plan *p, nbg_cpu_step *s, size_t operation, const char *what,
			  cpu_uniforms *u)
{
	nbg_sh_uniforms_cut cut;
	switch (nbg_sh_uniforms_load(p->m, p->g, operation, u, &cut)) {
	case NBG_SHU_OK:
		return 1;
	case NBG_SHU_NO_BUFFER:
		nbg_cpu_refuse(s, "state-buffer-missing", "a %s (layer %s) whose state buffer (state_id "
			       "%u) is not an in-bounds table entry of 1 to %u bytes, so its I/O is not "
			       "known", what, s->layer, nbg_graph_operation_at(p->g, operation)->state_id,
			       CPU_MAX_STATE_BYTES);
		return 0;
	case NBG_SHU_TRUNCATED:
		break;
	}
	nbg_cpu_refuse(s, "state-buffer-truncated", "the LOAD_STATE word 0x%08x at byte %llu of its "
		       "state buffer loads %u values past the buffer's %llu bytes", cut.word,
		       (unsigned long long)cut.at, cut.count, (unsigned long long)cut.size);
	return 0;
}

int nbg_cpu_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what, uint32_t size_units, unsigned word,
		 uint64_t raw, size_t region, uint64_t base, uint64_t *lo, uint64_t *ring_size)
{
	*lo = *ring_size = 0;
	uint64_t size;
	nbg_cmd_ref e;
	if (!nbg_command_ring(p->g, s->operation, size_units, word, raw, &size, &e))
		return 1;
	if (!e.patched) {
		nbg_cpu_refuse(s, "address-not-relocated", "its %s circular buffer end is relocated by no patch, "
			       "so where the buffer lies is not known", what);
		return 0;
	}
	const cpu_region *g = &p->regions[region];
	if (e.source_type != g->source_type ||
	    ((g->source_type == NBG_GRAPH_SRC_INPUT || g->source_type == NBG_GRAPH_SRC_OUTPUT) &&
	     e.index != g->index)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its %s circular buffer's end is relocated into "
			       "another memory than its image's", what);
		return 0;
	}
	uint64_t end = e.offset;
	if (end < size || base < end - size || base >= end || base >= g->size) {
		nbg_cpu_refuse(s, "address-outside-memory", "its %s image at 0x%llx does not start inside "
			       "both its circular buffer of %llu bytes ending at 0x%llx and that memory's %llu "
			       "bytes", what, (unsigned long long)base, (unsigned long long)size,
			       (unsigned long long)end, (unsigned long long)g->size);
		return 0;
	}
	/* A buffer that ends past its memory's end: an image inside the memory
	 * never reaches the buffer's end, so it never wraps; the caller then
	 * bounds the image by the memory alone (no ring). */
	if (end > g->size)
		return 1;
	*lo = end - size;
	*ring_size = size;
	return 1;
}

/* The circular buffer an NN image is read or written through (its size
 * field, 64-byte units, and its end field, as the TP planner and the
 * dataflow analysis read them): nbg_cpu_ring. */
int nbg_cpu_nn_ring(const nbg_cpu_plan *p, nbg_cpu_step *s, const nbg_cmd *cmd, const char *what, int out,
		    size_t region, uint64_t base, uint64_t *lo, uint64_t *size)
{
	enum nbg_nn_fid size_f = out ? NBG_NNF_OUT_IMAGE_CIRCULAR_BUF_SIZE : NBG_NNF_IN_IMAGE_CIRCULAR_BUF_SIZE;
	enum nbg_nn_fid end_f = out ? NBG_NNF_OUT_IMAGE_CIRCULAR_BUF_END_ADDR_PLUS_1
				    : NBG_NNF_IN_IMAGE_CIRCULAR_BUF_END_ADDR_PLUS_1;
	*lo = *size = 0;
	return nbg_cpu_ring(p, s, what, nbg_cmd_nn(cmd, size_f),
			    nbg_command_fields(NBG_CMD_NN, NULL)[end_f].word, nbg_cmd_nn(cmd, end_f), region, base, lo,
			    size);
}

int nbg_cpu_image_in(const nbg_cpu_plan *p, size_t region, uint64_t base, uint64_t x, uint64_t y, uint64_t z,
		     uint64_t row, uint64_t slice, uint64_t ring_lo, uint64_t ring_size, uint64_t *last)
{
	uint64_t l;
	if (!last)
		last = &l;
	if (!ring_size)
		return nbg_cpu_image_fits(p, region, base, x, y, z, row, slice, last);
	*last = base;
	if (row >= (1ull << 32) || slice >= (1ull << 40) || z > (1ull << 20) || x > (1ull << 20) ||
	    y > (1ull << 20) || x * y * z > CPU_MAX_SCRATCH)
		return 0;
	*last = base + (z - 1) * slice + (y - 1) * row + (x - 1);
	return *last - ring_lo < 2 * ring_size;
}

void nbg_cpu_ref_executed(nbg_cpu_step *s, cpu_op *op, int kind, int ref_kind)
{
	op->u.ref.kind = ref_kind;
	s->verdict = NBG_CPU_EXECUTE;
	s->reason_id = "";
	s->reference = 1;
	op->kind = kind;
}

int nbg_cpu_tp_fields_ok(nbg_cpu_step *s, const nbg_cmd *cmd, const cpu_tp_field *t, size_t n,
			 const char *id, const char *what, const char *basis)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t v = nbg_cmd_tp(cmd, t[i].f);
		if (v != t[i].want) {
			const char *name = nbg_command_fields(NBG_CMD_TP, NULL)[t[i].f].key;
			nbg_cpu_refuse(s, id, "%s with %s %u: executed is %s %u, %s", what, name, v, name,
				       t[i].want, basis);
			return 0;
		}
	}
	return 1;
}

int nbg_cpu_input_interleaved(const nbg_cpu_plan *p, const nbg_cmd_op *op, uint32_t z, uint32_t x, uint32_t y,
			      uint32_t esize)
{
	if (op->in_ref.source_type != NBG_GRAPH_SRC_INPUT || op->in_ref.index < 0 ||
	    (size_t)op->in_ref.index >= p->m->input_count || z < 2)
		return 0;
	const nbg_io *io = nbg_model_input_at(p->m, (size_t)op->in_ref.index);
	if (!io || io->dim_count < 3 || io->dim_count > 6)
		return 0;
	for (uint32_t i = 3; i < io->dim_count; i++)
		if (io->dims[i] != 1)
			return 0;
	return io->dims[0] == z && io->dims[0] != io->dims[1] && (uint64_t)io->dims[1] * esize == op->in_row_stride &&
	       io->dims[1] >= x && io->dims[2] >= y;
}

/* An int16 image whose slice stride field is the power of two just above
 * its dense plane (rows x row bytes): 32,768 for 96 rows of 192 bytes and
 * 8,192 for 48 of 96, which would place it past its memory's end, is
 * stored in groups of 16 channels, each group's rows holding its 16
 * channels pixel by pixel (doc/cpu-backend.md, "int16 data"). */
int nbg_cpu_nn16_grouped(uint64_t field, uint64_t row, uint64_t rows)
{
	uint64_t plane = row * rows;
	return plane && field > plane && field < 2 * plane && !(field & (field - 1));
}

/* Where an int16 or fp16 NN-engine operation (ops/nn16.c, ops/nnf16.c)
 * reads and writes: regions, strides, circular buffers; every byte inside
 * its buffer.  x_bytes: the bytes of an input row from its first pixel;
 * out_x_bytes likewise for the output. */
int nbg_cpu_nn16_addressing(nbg_cpu_plan *p, nbg_cpu_step *s, cpu_nn16 *n, const nbg_cmd_op *op,
			    const nbg_cmd *cmd, uint64_t x_bytes, uint32_t rows, uint32_t slices, uint64_t out_x_bytes,
			   uint32_t out_rows, uint32_t out_slices)
{
	if (!nbg_cpu_find_io(p, s, op, &n->in_region, &n->out_region) ||
	    !nbg_cpu_nn_ring(p, s, cmd, "input", 0, n->in_region, n->in_base, &n->in_ring_lo, &n->in_ring_size) ||
	    !nbg_cpu_nn_ring(p, s, cmd, "output", 1, n->out_region, n->out_base, &n->out_ring_lo,
			     &n->out_ring_size))
		return 0;
	if (!nbg_cpu_image_in(p, n->in_region, n->in_base, x_bytes, rows, slices, n->in_row, n->in_slice,
			      n->in_ring_lo, n->in_ring_size, NULL) ||
	    !nbg_cpu_image_in(p, n->out_region, n->out_base, out_x_bytes, out_rows, out_slices, n->out_row,
			      n->out_slice, n->out_ring_lo, n->out_ring_size, NULL)) {
		nbg_cpu_refuse(s, "address-outside-memory", "its input (%llu bytes a row, %u rows, %u slices at "
			       "%s+0x%llx) or its output (%llu bytes a row, %u rows, %u slices at %s+0x%llx) does not "
			       "lie inside its memory or circular buffer", (unsigned long long)x_bytes, rows, slices,
			       nbg_graph_source_type_name(op->in_ref.source_type), (unsigned long long)n->in_base,
			       (unsigned long long)out_x_bytes, out_rows, out_slices,
			       nbg_graph_source_type_name(op->out_ref.source_type), (unsigned long long)n->out_base);
		return 0;
	}
	return 1;
}

/*
 * cpu_common.c - what every planner of the CPU backend shares: refusing a
 * step with a reason, finding the buffer an address lands in, and checking
 * that an image lies inside it (cpu_internal.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "analysis/commands_internal.h"
#include "runtime/cpu/cpu_internal.h"

void nbg_cpu_refuse(nbg_cpu_step *s, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	s->verdict = NBG_CPU_REFUSED;
	s->reason_id = id;
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
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
		     g->source_type == NBG_GRAPH_SRC_OUTPUT) &&
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

/* The reference a COMMAND patch of the step's operation gives the stored
 * value of its command word `word`, as the commands decoder reads every
 * patched address; 0 when no patch targets that word. */
int nbg_cpu_word_ref(const nbg_cpu_plan *p, const nbg_cpu_step *s, unsigned word, uint64_t value,
		     nbg_cmd_ref *r)
{
	const nbg_graph_operation *o = nbg_graph_operation_at(p->g, s->operation);
	uint64_t end = o ? (uint64_t)o->patch_index + o->patch_count : 0;
	for (uint64_t i = o ? o->patch_index : 0; i < end && i < p->g->sum.patch_count; i++) {
		const nbg_graph_patch *x = nbg_graph_patch_at(p->g, (size_t)i);
		if (x->type == 1 && x->dest_offset == 4u * word) {
			*r = (nbg_cmd_ref){ 1, (size_t)i, x->source_type, x->index, x->src_offset,
				nbg_command_patched_offset(p->g->sum.version, x->src_offset, value) };
			return 1;
		}
	}
	return 0;
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

/* The offset the patch of the operation's command word `word` gives its
 * stored value, as the commands decoder reads every patched address; 0
 * with the step refused when no patch targets it. */
int nbg_cpu_patched(const nbg_cpu_plan *p, nbg_cpu_step *s, const char *what, unsigned word,
		    uint64_t value, uint64_t *offset)
{
	nbg_cmd_ref r;
	if (nbg_cpu_word_ref(p, s, word, value, &r)) {
		*offset = r.offset;
		return 1;
	}
	nbg_cpu_refuse(s, "address-not-relocated", "its %s circular buffer end is relocated by no patch, "
		       "so where the buffer lies is not known", what);
	return 0;
}

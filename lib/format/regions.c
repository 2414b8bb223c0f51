/*
 * regions.c - where the fixed structures lie, and who owns the final 512
 * bytes.
 */
#include <stdlib.h>

#include "common/hash.h"
#include "format/regions.h"

size_t nbg_fixed_regions(const nbg_model *m, nbg_region out[NBG_FIXED_REGIONS_MAX])
{
	size_t n = 0;

#define REGION(off, end, name, opq)                                                        \
	do {                                                                               \
		uint64_t o_ = (off), e_ = (end);                                           \
		if (e_ > o_)                                                               \
			out[n++] = (nbg_region){ o_, e_ - o_, (name), (opq) };             \
	} while (0)
	if (m->family == 2) {
		REGION(0, NBG_V2_HEADER_SIZE, "header", 0);
		REGION(m->header.sub_header_offset,
		       (uint64_t)m->header.sub_header_offset + NBG_V2_SUB_HEADER_SIZE, "sub-header", 0);
		REGION(m->header.section_headers_offset,
		       m->header.section_headers_offset +
			       (uint64_t)m->header.section_header_count * NBG_V2_SECTION_HEADER_SIZE,
		       "directory", 0);
	} else {
		const nbg_v1_info *v1 = &m->v1;
		uint64_t header_end = v1->has_feature_db ? v1->feature_db_offset : v1->memory_offset;
		REGION(0, header_end, "header", 0);
		if (v1->has_feature_db)
			REGION(v1->feature_db_offset, v1->memory_offset, "feature database", 0);
		REGION(v1->memory_offset, v1->entries_offset, "memory requirements", 0);
		REGION(v1->entries_offset, v1->prefix_end, "entry table", 0);
		REGION(v1->opaque_offset, v1->opaque_offset + v1->opaque_size,
		       "opaque fixed extension", 1);
	}
#undef REGION
	return n;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

uint64_t nbg_owned_bytes(const nbg_model *m, uint64_t lo, uint64_t hi)
{
	nbg_region fixed[NBG_FIXED_REGIONS_MAX];
	size_t nf = nbg_fixed_regions(m, fixed), n = 0;
	uint64_t (*r)[2] = malloc((m->section_count + nf + 1) * sizeof(*r));
	uint64_t covered = 0, cur = lo;

	if (!r)
		return UINT64_MAX;
	for (size_t i = 0; i < m->section_count + nf; i++) {
		uint64_t a, b;
		if (i < m->section_count) {
			a = m->sections[i].offset;
			b = a + m->sections[i].size;
		} else {
			a = fixed[i - m->section_count].offset;
			b = a + fixed[i - m->section_count].size;
		}
		if (b <= lo || a >= hi || b == a)
			continue;
		r[n][0] = a < lo ? lo : a;
		r[n][1] = b > hi ? hi : b;
		n++;
	}
	qsort(r, n, sizeof(*r), cmp_range);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = r[i][0] < cur ? cur : r[i][0];
		if (r[i][1] > a) {
			covered += r[i][1] - a;
			cur = r[i][1];
		}
	}
	free(r);
	return covered;
}

bool nbg_tail_view(nbg_model *m, const uint8_t *data, uint64_t size)
{
	nbg_tail *t = &m->tail;
	uint64_t covered;

	memset(t, 0, sizeof(*t));
	if (size < NBG_TAIL_SIZE)
		return true;
	t->offset = size - NBG_TAIL_SIZE;
	t->size = NBG_TAIL_SIZE;
	nbg_region_sha256(m, data + t->offset, NBG_TAIL_SIZE, t->sha256);
	/* The tail owns bytes only where nothing else does. */
	covered = nbg_owned_bytes(m, t->offset, size);
	if (covered == UINT64_MAX)
		return false;
	t->covered_bytes = covered;
	t->cover = covered == 0 ? NBG_TAIL_UNCOVERED
		 : covered == NBG_TAIL_SIZE ? NBG_TAIL_COVERED : NBG_TAIL_PARTIAL;
	return true;
}

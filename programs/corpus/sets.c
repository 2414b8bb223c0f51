/*
 * sets.c - the containers of a corpus aggregate: value multisets and
 * digest sets (open-addressing tables, so adding stays constant-time however
 * many distinct values a corpus has), ranges and note counts, each read out
 * sorted so that output never depends on the order files were added in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_internal.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int vs_grow(corpus_valset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 8;
	uint64_t *v = calloc(cap, sizeof(*v)), *n = calloc(cap, sizeof(*n));

	if (!v || !n) {
		free(v);
		free(n);
		return 0;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->n[i])
			continue;
		size_t j = slot_of(s->v[i], cap);
		while (n[j])
			j = (j + 1) & (cap - 1);
		v[j] = s->v[i];
		n[j] = s->n[i];
	}
	free(s->v);
	free(s->n);
	s->v = v;
	s->n = n;
	s->cap = cap;
	return 1;
}

nbg_code corpus_valset_add(corpus_agg *c, corpus_valset *s, uint64_t v, uint64_t n)
{
	if (!n)
		return NBG_OK;
	if (s->cap) {
		for (size_t j = slot_of(v, s->cap); s->n[j]; j = (j + 1) & (s->cap - 1))
			if (s->v[j] == v) {
				corpus_count(c, &s->n[j], n);
				return NBG_OK;
			}
	}
	if (2 * (s->count + 1) > s->cap && !vs_grow(s)) {
		c->oom = 1;
		return NBG_E_OUT_OF_MEMORY;
	}
	size_t j = slot_of(v, s->cap);
	while (s->n[j])
		j = (j + 1) & (s->cap - 1);
	s->v[j] = v;
	s->n[j] = n;
	s->count++;
	return NBG_OK;
}

static int cmp_pair(const void *a, const void *b)
{
	uint64_t x = ((const corpus_vs_pair *)a)->v, y = ((const corpus_vs_pair *)b)->v;
	return x < y ? -1 : x > y;
}

corpus_vs_pair *corpus_valset_sorted(const corpus_valset *s, size_t *count)
{
	corpus_vs_pair *p;
	size_t k = 0;

	*count = 0;
	if (!s->count)
		return NULL;
	if (!(p = malloc(s->count * sizeof(*p)))) {
		*count = SIZE_MAX;
		return NULL;
	}
	for (size_t i = 0; i < s->cap; i++)
		if (s->n[i])
			p[k++] = (corpus_vs_pair){ s->v[i], s->n[i] };
	qsort(p, k, sizeof(*p), cmp_pair);
	*count = k;
	return p;
}

void corpus_range_add(corpus_range *r, uint64_t lo, uint64_t hi)
{
	if (!r->seen || lo < r->lo)
		r->lo = lo;
	if (!r->seen || hi > r->hi)
		r->hi = hi;
	r->seen = 1;
}

static int sha_grow(corpus_shaset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	uint8_t(*d)[32] = cap < SIZE_MAX / 64 ? calloc(cap, 32) : NULL;
	uint8_t *used = calloc(cap, 1);

	if (!d || !used) {
		free(d);
		free(used);
		return 0;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->used[i])
			continue;
		uint64_t key;
		memcpy(&key, s->d[i], 8);
		size_t j = slot_of(key, cap);
		while (used[j])
			j = (j + 1) & (cap - 1);
		memcpy(d[j], s->d[i], 32);
		used[j] = 1;
	}
	free(s->d);
	free(s->used);
	s->d = d;
	s->used = used;
	s->cap = cap;
	return 1;
}

nbg_code corpus_shaset_add(corpus_agg *c, corpus_shaset *s, const uint8_t d[32])
{
	uint64_t key;

	memcpy(&key, d, 8);
	if (s->cap) {
		for (size_t j = slot_of(key, s->cap); s->used[j]; j = (j + 1) & (s->cap - 1))
			if (!memcmp(s->d[j], d, 32))
				return NBG_OK;
	}
	if (2 * (s->count + 1) > s->cap && !sha_grow(s)) {
		c->oom = 1;
		return NBG_E_OUT_OF_MEMORY;
	}
	size_t j = slot_of(key, s->cap);
	while (s->used[j])
		j = (j + 1) & (s->cap - 1);
	memcpy(s->d[j], d, 32);
	s->used[j] = 1;
	s->count++;
	return NBG_OK;
}

static int cmp_sha(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

uint8_t (*corpus_shaset_sorted(const corpus_shaset *s, size_t *count))[32]
{
	uint8_t(*d)[32];
	size_t k = 0;

	*count = 0;
	if (!s->count)
		return NULL;
	if (!(d = malloc(s->count * 32))) {
		*count = SIZE_MAX;
		return NULL;
	}
	for (size_t i = 0; i < s->cap; i++)
		if (s->used[i])
			memcpy(d[k++], s->d[i], 32);
	qsort(d, k, 32, cmp_sha);
	*count = k;
	return d;
}

nbg_code corpus_note_add(corpus_agg *c, const char *id, uint64_t n)
{
	for (size_t i = 0; i < c->note_kinds; i++)
		if (!strcmp(c->notes[i].id, id)) {
			corpus_count(c, &c->notes[i].n, n);
			return NBG_OK;
		}
	if (c->note_kinds == c->note_cap) {
		size_t cap = c->note_cap ? c->note_cap * 2 : 16;
		corpus_note_count *p = realloc(c->notes, cap * sizeof(*p));
		if (!p) {
			c->oom = 1;
			return NBG_E_OUT_OF_MEMORY;
		}
		c->notes = p;
		c->note_cap = cap;
	}
	snprintf(c->notes[c->note_kinds].id, sizeof(c->notes[0].id), "%s", id);
	c->notes[c->note_kinds++].n = n;
	return NBG_OK;
}

static int cmp_note(const void *a, const void *b)
{
	return strcmp(((const corpus_note_count *)a)->id, ((const corpus_note_count *)b)->id);
}

corpus_note_count *corpus_notes_sorted(const corpus_agg *c, size_t *count)
{
	corpus_note_count *p;

	*count = 0;
	if (!c->note_kinds)
		return NULL;
	if (!(p = malloc(c->note_kinds * sizeof(*p)))) {
		*count = SIZE_MAX;
		return NULL;
	}
	memcpy(p, c->notes, c->note_kinds * sizeof(*p));
	qsort(p, c->note_kinds, sizeof(*p), cmp_note);
	*count = c->note_kinds;
	return p;
}

/*
 * filehash.c - the whole-file SHA-256 and the work limits checked before it.
 * The family parsers (v1.c, v2.c) call nbg_structure_checked() once the
 * header and directory are sound; nbg_parse (parse.c) ends the hash.
 */
#include <pthread.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/internal.h"
#include "format/regions.h"

/* The whole-file SHA-256 is independent of the structure walk, which hashes
 * and CRCs each section: on large files it runs on a second thread, so a
 * parse costs about one pass of SHA-256 instead of two.  It starts only
 * once the header and directory passed (nbg_structure_checked) and is
 * cancelled when a later rule fails, so a file the structure refuses costs
 * constant time whatever its size. */
#define NBG_PARALLEL_SHA_MIN ((size_t)1 << 20)
#define NBG_SHA_CHUNK ((size_t)8 << 20)

typedef struct nbg_file_hash {
	const uint8_t *data;
	size_t size;
	uint8_t *out;
	pthread_t thread;
	int threaded;
	int cancel; /* atomic: set by the parser when the file failed */
} nbg_file_hash;

static void *file_sha_thread(void *arg)
{
	nbg_file_hash *j = arg;
	nbg_sha256_ctx s;

	nbg_sha256_begin(&s);
	for (size_t at = 0; at < j->size; at += NBG_SHA_CHUNK) {
		if (__atomic_load_n(&j->cancel, __ATOMIC_RELAXED))
			break;
		size_t k = j->size - at < NBG_SHA_CHUNK ? j->size - at : NBG_SHA_CHUNK;
		nbg_sha256_update(&s, j->data + at, k);
	}
	nbg_sha256_end(&s, j->out);
	return NULL;
}

/* The first byte past every owned region: where trailing bytes start. */
static uint64_t owned_end(const nbg_model *m)
{
	nbg_region fixed[NBG_FIXED_REGIONS_MAX];
	size_t nf = nbg_fixed_regions(m, fixed);
	uint64_t end = 0;

	for (size_t i = 0; i < nf; i++)
		if (fixed[i].offset + fixed[i].size > end)
			end = fixed[i].offset + fixed[i].size;
	for (size_t i = 0; i < m->section_count; i++)
		if (m->sections[i].offset + m->sections[i].size > end)
			end = m->sections[i].offset + m->sections[i].size;
	return end;
}

nbg_code nbg_structure_checked(nbg_ctx *c)
{
	uint64_t owned = nbg_owned_bytes(c->m, 0, c->size);
	nbg_file_hash *j;

	if (owned == UINT64_MAX)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	if (c->size - owned > c->max_undescribed)
		return nbg_fail(c, NBG_E_WORK_LIMIT, owned_end(c->m), "undescribed_bytes",
				"%llu of the file's %llu bytes belong to no header, directory "
				"or section (limit %llu): refused before hashing; raise the "
				"limit (NBG_MAX_UNDESCRIBED, doc/security.md) to read it",
				(unsigned long long)(c->size - owned), (unsigned long long)c->size,
				(unsigned long long)c->max_undescribed);
	c->structure_passed = 1; /* from here on the file's bytes are read */
	if (c->file_hash)
		return NBG_OK; /* started already */
	if (c->flags & NBG_PARSE_NO_FILE_SHA256)
		return NBG_OK; /* not wanted (nbg verify) */
	j = calloc(1, sizeof(*j));
	if (!j)
		return nbg_fail(c, NBG_E_OUT_OF_MEMORY, 0, "memory", "out of memory");
	j->data = c->data;
	j->size = (size_t)c->size;
	j->out = c->m->file_sha256;
	j->threaded = j->size >= NBG_PARALLEL_SHA_MIN && !(c->flags & NBG_PARSE_ONE_THREAD) &&
		      pthread_create(&j->thread, NULL, file_sha_thread, j) == 0;
	c->file_hash = j;
	c->hash_thread = j->threaded;
	return NBG_OK;
}

/* Ends the whole-file hash: cancelled after a failure, else completed (on
 * this thread when none was started). */
void nbg_file_hash_finish(nbg_ctx *c, nbg_code rc)
{
	nbg_file_hash *j = c->file_hash;

	if (!j)
		return;
	if (rc != NBG_OK)
		__atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
	if (j->threaded)
		pthread_join(j->thread, NULL);
	else if (rc == NBG_OK)
		file_sha_thread(j);
	free(j);
	c->file_hash = NULL;
	c->hash_thread = 0;
}


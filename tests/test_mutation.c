/*
 * test_mutation.c - hostile input in the normal suite: thousands of
 * deterministic mutations of real corpus files (v2 and v1, full size and
 * shrunk), and of synthesized files.  Every result must be a success or a
 * named failure code with a filled error; a success must satisfy every model
 * invariant (fuzz/fuzz_common.c); with the CRC check on, a v2 file with a
 * changed byte inside a section payload must fail; a truncated or extended v2
 * file must fail.  The failure codes the mutations produce are counted, and
 * every code of the list must have been produced (except the ones only the
 * ledger can produce, listed below).
 *
 * Then resource bounds: counts taken from the file never drive an allocation
 * or a loop beyond what the file's size allows (a directory declaring 2^32-1
 * records fails fast, before allocating; large tables parse in linear time).
 *
 * NBG_MUTATION_SCALE (default 1.0) scales the number of mutations of the
 * full-size real files and of the random flips; the structural sweeps of the
 * shrunk and synthesized files always run in full.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "corpus.h"
#include "exe_wrapper.h"
#include "fixture.h"
#include "fuzz_common.h"
#include "nbg/nbg.h"
#include "nbg/diff.h"
#include "nbg/graph.h"
#include "nbg/ledger.h"
#include "seeds.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Codes this test does not require, each with the reason.  Every other code
 * must come out of some mutation: semantic-change-refused from re-emitting
 * mutated files against their original's ledger (test_reemit), the v1 codes
 * from mutated v1 files, out-of-memory from a parse under an address-space
 * limit (test_bounds_out_of_memory), which ASan's shadow memory rules out. */
static const struct {
	nbg_code code;
	const char *why;
} excluded_codes[] = {
#ifdef UNDER_ASAN
	{ NBG_E_OUT_OF_MEMORY, "needs RLIMIT_AS, not usable under ASan" },
#endif
	/* Codes no file content can produce in the parser or re-emission: the
	 * ledger's own invariant, I/O and the NPU runtime (their own tests). */
	{ NBG_E_LEDGER_INVARIANT, "ledger invariant (tests/test_ledger.c)" },
	{ NBG_E_IO, "I/O (tests/test_ledger.c, the CLI tests)" },
	{ NBG_E_RESOURCE, "ledger documents (tests/test_ledger.c)" },
#define RUNTIME_CODE(sym) { NBG_E_##sym, "runtime (tests/runtime/)" },
	RUNTIME_CODE(INVALID_ARGUMENT) RUNTIME_CODE(ABI_UNSUPPORTED) RUNTIME_CODE(NO_DEVICE)
	RUNTIME_CODE(BACKEND_UNSUPPORTED) RUNTIME_CODE(LIBRARY_MISSING) RUNTIME_CODE(SYMBOL_MISSING)
	RUNTIME_CODE(RUNTIME_CONFLICT) RUNTIME_CODE(MODEL_INVALID) RUNTIME_CODE(MODEL_TOO_LARGE)
	RUNTIME_CODE(IO_SIZE_UNKNOWN) RUNTIME_CODE(CREATE_FAILED) RUNTIME_CODE(INPUT_COUNT_MISMATCH)
	RUNTIME_CODE(INPUT_SIZE_MISMATCH) RUNTIME_CODE(INPUT_SET_FAILED) RUNTIME_CODE(BAD_STATE)
	RUNTIME_CODE(RUN_FAILED) RUNTIME_CODE(OUTPUT_NULL) RUNTIME_CODE(OUTPUT_DATA_NULL)
	RUNTIME_CODE(OUTPUT_INVALID) RUNTIME_CODE(DESTROY_FAILED) RUNTIME_CODE(GOLDEN_FORMAT)
	RUNTIME_CODE(TARGET_MISMATCH) RUNTIME_CODE(RUNTIME_CRASHED) RUNTIME_CODE(DESCRIPTOR_INVALID)
	RUNTIME_CODE(INIT_FAILED) RUNTIME_CODE(QUERY_FAILED) RUNTIME_CODE(PREPARE_FAILED)
	RUNTIME_CODE(BUFFER_FAILED) RUNTIME_CODE(RUN_TIMEOUT) RUNTIME_CODE(RUNTIME_IO_MISMATCH)
#undef RUNTIME_CODE
#define TENSOR_CODE(sym) { NBG_E_##sym, "tensors (tests/test_tensor.c)" },
	TENSOR_CODE(NPY_INVALID) TENSOR_CODE(TENSOR_SHAPE_MISMATCH) TENSOR_CODE(TENSOR_TYPE_MISMATCH)
	TENSOR_CODE(TENSOR_TEXT_INVALID) TENSOR_CODE(TENSOR_FORMAT_UNSUPPORTED)
	TENSOR_CODE(SAMPLE_INVALID)
#undef TENSOR_CODE
	/* corpus runs: files and parts, not file content (tests/test_corpus_scale.c) */
	{ NBG_E_FILE_CHANGED, "corpus runs (tests/test_corpus_scale.c)" },
	{ NBG_E_DIGEST_MISMATCH, "corpus manifests (tests/test_corpus_scale.c)" },
	{ NBG_E_NOT_REGULAR_FILE, "corpus walks (tests/test_corpus_scale.c)" },
	{ NBG_E_CORPUS_PART, "corpus parts (tests/test_corpus_scale.c)" },
	/* work limits and standard input: no mutation of a small file
	 * reaches them (tests/test_hostile.c) */
	{ NBG_E_WORK_LIMIT, "sparse huge files (tests/test_hostile.c)" },
	{ NBG_E_INPUT_TOO_LARGE, "standard input bound (tests/test_hostile.c)" },
	/* verify's own checks: options, not file content (tests/test_integrity.c) */
	{ NBG_E_NOT_IN_MANIFEST, "verify --manifest (tests/test_integrity.c)" },
	/* the CPU backend's refusals: a run, not the parser (tests/check_cpu.py) */
	{ NBG_E_UNSUPPORTED_OPERATION, "the CPU backend (tests/check_cpu.py)" },
	{ NBG_E_INTEGRITY_UNVERIFIED, "verify --require-checksum (tests/test_integrity.c)" },
	/* a signal or the caller stopping a run (tests/runtime/, tests/python/) */
	{ NBG_E_INTERRUPTED, "a stopped run (tests/runtime/, tests/python/)" },
	/* nbg run --dump and nbg compare: a directory, not the parser (tests/check_dump.py) */
	{ NBG_E_OUTPUT_EXISTS, "nbg run --dump DIR (tests/check_dump.py)" },
	{ NBG_E_DUMP_INVALID, "nbg compare of dumps (tests/check_dump.py)" },
	/* nbg run's image inputs and --batch: other files than the model */
	{ NBG_E_IMAGE_INVALID, "nbg run's images (tests/check_run_inputs.py)" },
	{ NBG_E_IMAGE_TOO_LARGE, "nbg run's images (tests/check_run_inputs.py)" },
	{ NBG_E_BATCH_NAME_INVALID, "nbg run --batch (tests/check_run_inputs.py)" },
	{ NBG_OK, NULL },
};

/* qemu-user, the exe wrapper of a cross build, accepts RLIMIT_AS and does not
 * apply it (it would bound the emulator's own memory). */
#define OOM_UNDER_WRAPPER "needs RLIMIT_AS, which qemu-user does not apply"

static unsigned long code_count[NBG_E__COUNT];
static unsigned long n_mutants, n_parses, n_ok, n_crc_property, n_size_property;
static double scale = 1.0;

/* ------------------------------------------------------------ plumbing */

static uint64_t rng_state;

static void rng_seed(const char *name)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the input's name */
	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 1099511628211ull;
	rng_state = h ? h : 1;
}

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t rng_below(uint64_t n)
{
	return n ? rng() % n : 0;
}

static uint32_t get32(const uint8_t *p)
{
	return fx_get32(p);
}

/* Parses and checks the result's form; returns the code. */
static nbg_code parse_checked(const uint8_t *buf, size_t size, int crc_check)
{
	nbg_parse_options o = { .size = sizeof(o), .flags = crc_check ? 0u : NBG_PARSE_NO_CRC_CHECK };
	nbg_model *m = (nbg_model *)&o; /* must be reset to NULL on failure */
	nbg_error err;
	nbg_code rc = nbg_parse(buf, size, &o, &m, &err);

	n_parses++;
	assert_true((unsigned)rc < NBG_E__COUNT);
	assert_non_null(nbg_code_name(rc));
	code_count[rc]++;
	if (rc != NBG_OK) {
		assert_null(m);
		assert_int_equal(err.code, rc);
		assert_true(fz_terminated(err.message, sizeof(err.message)));
		assert_true(fz_terminated(err.field, sizeof(err.field)));
		assert_true(strlen(err.message) > 10);
		return rc;
	}
	n_ok++;
	fz_check_model(m, buf, size);
	if (crc_check && nbg_model_family(m) == 2) {
		/* one strict result: a success never carries a mismatch */
		assert_int_equal(nbg_model_file_checksum(m)->recorded, nbg_model_file_checksum(m)->computed);
		for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++)
			assert_int_equal(nbg_model_checksum_record_at(m, i)->stored,
					 nbg_model_checksum_record_at(m, i)->computed);
	}
	nbg_model_free(m);
	return rc;
}

/* ---------------------------------------------------------- mutations */

enum mkind { M_FIELD, M_FLIP, M_BYTE, M_TRUNC, M_EXTEND };

typedef struct mutation {
	enum mkind kind;
	uint64_t off;  /* byte offset (FIELD: of the u32), or the new size (TRUNC) */
	uint32_t val;  /* FIELD: new word; FLIP: bit; BYTE: new byte; EXTEND: bytes */
} mutation;

typedef struct mlist {
	mutation *v;
	size_t n, cap;
} mlist;

static void add(mlist *l, enum mkind k, uint64_t off, uint32_t val)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->n].kind = k;
	l->v[l->n].off = off;
	l->v[l->n].val = val;
	l->n++;
}

/* The value set tried on every structural word: the edges of the type, the
 * neighbours of the current value (off by one, by a record, by a word), the
 * file size and its neighbours. */
static void add_field(mlist *l, const uint8_t *buf, size_t size, uint64_t off)
{
	uint32_t v, vals[24];
	size_t n = 0;

	if (off + 4 > size)
		return;
	v = get32(buf + off);
	vals[n++] = 0;
	vals[n++] = 1;
	vals[n++] = 0xffffffffu;
	vals[n++] = 0x7fffffffu;
	vals[n++] = 0x80000000u;
	vals[n++] = v + 1;
	vals[n++] = v - 1;
	vals[n++] = v + 4;
	vals[n++] = v - 4;
	vals[n++] = v + 8;
	vals[n++] = v - 8;
	vals[n++] = v + 44;
	vals[n++] = v + 64;
	vals[n++] = v - 64;
	vals[n++] = v * 2;
	vals[n++] = (uint32_t)size;
	vals[n++] = (uint32_t)size - 1;
	vals[n++] = (uint32_t)size + 1;
	for (size_t i = 0; i < n; i++)
		if (vals[i] != v)
			add(l, M_FIELD, off, vals[i]);
}

static void add_value(mlist *l, const uint8_t *buf, size_t size, uint64_t off, uint32_t val)
{
	if (off + 4 <= size && get32(buf + off) != val)
		add(l, M_FIELD, off, val);
}

/* Ranges of one input, from a parse of the unmutated bytes. */
typedef struct layout {
	int family;
	size_t nsec;
	uint64_t off[48], len[48], rec[48];
	uint32_t type[48];
} layout;

static void v2_candidates(mlist *l, const uint8_t *buf, size_t size, const layout *lay)
{
	uint32_t sub = get32(buf + 0x18);

	for (uint64_t o = 0; o < 48; o += 4)
		add_field(l, buf, size, o);
	for (uint64_t o = 0; o < 12; o += 4)
		add_field(l, buf, size, (uint64_t)sub + o);
	for (size_t i = 0; i < lay->nsec; i++) {
		uint64_t r = lay->rec[i];
		for (uint64_t o = 0; o < 44; o += 4)
			add_field(l, buf, size, r + o);
		/* a type repeated, overlaps with every neighbour, the header, the
		 * sub-header and the directory */
		for (size_t j = 0; j < lay->nsec; j++) {
			if (j == i)
				continue;
			add_value(l, buf, size, r, lay->type[j]);
			add_value(l, buf, size, r + 4, (uint32_t)lay->off[j]);
			if (lay->off[j] > lay->off[i] && lay->off[j] - lay->off[i] < lay->len[i] + 64)
				add_value(l, buf, size, r + 12,
					  (uint32_t)(lay->off[j] - lay->off[i] + 1));
		}
		add_value(l, buf, size, r + 4, 0);
		add_value(l, buf, size, r + 4, 40);
		add_value(l, buf, size, r + 4, sub);
		add_value(l, buf, size, r + 4, (uint32_t)lay->rec[0]);
		add_value(l, buf, size, r + 0x1c, 3);
		add_value(l, buf, size, r + 0x1c, 0x1000);

		/* the records the parser decodes */
		uint64_t p = lay->off[i], n = lay->len[i];
		switch (lay->type[i]) {
		case NBG_SEC_INPUT:
		case NBG_SEC_OUTPUT:
			for (uint64_t k = 0; k < n && k < 3 * 112; k += 112)
				for (uint64_t o = 0; o < 48; o += 4)
					add_field(l, buf, size, p + k + o);
			break;
		case NBG_SEC_NETWORK_INFO:
			for (uint64_t o = 0x40; o < 0x60; o += 4)
				add_field(l, buf, size, p + o);
			break;
		case NBG_SEC_MEMORY_POOL:
		case NBG_SEC_VIP_SRAM:
		case NBG_SEC_AXI_SRAM:
			add_field(l, buf, size, p);
			break;
		case NBG_SEC_CHECKSUM:
			for (uint64_t k = 0; k + 8 <= n; k += 8) {
				add_field(l, buf, size, p + k);
				add_field(l, buf, size, p + k + 4);
				for (size_t j = 0; j < lay->nsec; j++)
					add_value(l, buf, size, p + k, lay->type[j]);
			}
			break;
		case NBG_SEC_DYNAIO_TABLE:
			for (uint64_t k = 0; k + 8 <= n && k < 8 * 8; k += 8) {
				add_field(l, buf, size, p + k);
				add_field(l, buf, size, p + k + 4);
			}
			break;
		case NBG_SEC_DYNAIO: {
			/* each byte no entry maps (a gap or the trailing padding) */
			size_t t = 0;
			while (t < lay->nsec && lay->type[t] != NBG_SEC_DYNAIO_TABLE)
				t++;
			if (t == lay->nsec)
				break;
			uint64_t pos = 0;
			for (uint64_t k = 0; k + 8 <= lay->len[t]; k += 8) {
				uint32_t eo = get32(buf + lay->off[t] + k);
				uint32_t es = get32(buf + lay->off[t] + k + 4);
				if (eo > pos)
					add(l, M_BYTE, p + pos, 0x5a);
				pos = (uint64_t)eo + es;
			}
			if (pos < n)
				add(l, M_BYTE, p + n - 1, 0x01);
			break;
		}
		default:
			break;
		}
	}
}

static void v1_candidates(mlist *l, const uint8_t *buf, size_t size, const layout *lay)
{
	uint32_t v = get32(buf + 4), es = seed_v1_entries_offset(v);
	seed_v1_strides st;

	seed_v1_strides_of(v, &st);
	for (uint64_t o = 4; o < 12; o += 4)
		add_field(l, buf, size, o);
	for (uint64_t o = 0x4c; o < 0x5c; o += 4)
		add_field(l, buf, size, o);
	if (v >= 0x10003u) {
		add_field(l, buf, size, 92);      /* feature word 0 */
		add_field(l, buf, size, 92 + 16); /* nbg_crc_sum */
	}
	for (uint64_t o = es - 28; o < es; o += 4)
		add_field(l, buf, size, o);
	for (size_t i = 0; i < lay->nsec; i++) {
		uint64_t r = lay->rec[i];
		add_field(l, buf, size, r);
		add_field(l, buf, size, r + 4);
		for (size_t j = 0; j < lay->nsec; j += 5)
			add_value(l, buf, size, r, (uint32_t)lay->off[j]);
		/* offset + size overflowing 32 bits, one past the end */
		add_value(l, buf, size, r, 0xffffffffu - (uint32_t)lay->len[i] / 2);
		if (lay->off[i] < size)
			add_value(l, buf, size, r + 4, (uint32_t)(size - lay->off[i] + 1));
	}
	/* the I/O records and the first patch record */
	for (size_t i = 0; i < 2 && i < lay->nsec; i++)
		for (uint64_t k = 0; k < lay->len[i] && k < 2 * st.io; k += st.io)
			for (uint64_t o = 0; o < 48; o += 4)
				add_field(l, buf, size, lay->off[i] + k + o);
	if (lay->nsec > 9 && lay->len[9] >= 40)
		for (uint64_t o = 0; o < 40; o += 4)
			add_field(l, buf, size, lay->off[9] + o);
}

static void boundary_truncations(mlist *l, size_t size, const layout *lay)
{
	for (uint64_t n = 0; n < 96 && n < size; n++)
		add(l, M_TRUNC, n, 0);
	for (size_t i = 0; i < lay->nsec; i++) {
		uint64_t cut[4] = { lay->off[i], lay->off[i] + 1, lay->off[i] + lay->len[i],
				    lay->off[i] + lay->len[i] - 1 };
		for (int k = 0; k < 4; k++)
			if (cut[k] < size)
				add(l, M_TRUNC, cut[k], 0);
	}
	if (size)
		add(l, M_TRUNC, size - 1, 0);
	add(l, M_EXTEND, 0, 1);
	add(l, M_EXTEND, 0, 8);
	add(l, M_EXTEND, 0, 512);
}

static void random_mutations(mlist *l, size_t size, size_t flips)
{
	for (size_t i = 0; i < flips && size; i++) {
		/* half in the first 4 KiB, where the structures are */
		uint64_t off = (i & 1) ? rng_below(size < 4096 ? size : 4096) : rng_below(size);
		add(l, M_FLIP, off, (uint32_t)rng_below(8));
	}
	for (size_t i = 0; i < flips / 4 && size; i++)
		add(l, M_BYTE, rng_below(size), (uint32_t)rng_below(256));
	for (size_t i = 0; i < 16 && size; i++)
		add(l, M_TRUNC, rng_below(size), 0);
}

static int in_payload(const layout *lay, uint64_t off, uint64_t len)
{
	for (size_t i = 0; i < lay->nsec; i++)
		if (lay->len[i] && off < lay->off[i] + lay->len[i] && off + len > lay->off[i])
			return 1;
	return 0;
}

static void get_layout(const uint8_t *buf, size_t size, layout *lay)
{
	nbg_model *m = NULL;
	nbg_error err;
	nbg_code rc = nbg_parse(buf, size, NULL, &m, &err);

	if (rc != NBG_OK)
		print_error("base input does not parse: %s: %s\n", nbg_code_name(rc), err.message);
	assert_int_equal(rc, NBG_OK);
	memset(lay, 0, sizeof(*lay));
	lay->family = (int)nbg_model_family(m);
	lay->nsec = nbg_model_section_count(m) < 48 ? nbg_model_section_count(m) : 48;
	for (size_t i = 0; i < lay->nsec; i++) {
		lay->off[i] = nbg_model_section_at(m, i)->offset;
		lay->len[i] = nbg_model_section_at(m, i)->size;
		lay->rec[i] = nbg_model_section_at(m, i)->record_offset;
		lay->type[i] = nbg_model_section_at(m, i)->type;
	}
	nbg_model_free(m);
}

/* Runs one mutation of `work` (a private exact-size copy of base). */
static void run_mutation(uint8_t *work, const uint8_t *base, size_t size, const layout *lay,
			 const mutation *mu)
{
	uint8_t saved[4];
	int v2 = lay->family == 2, payload_changed = 0;
	nbg_code on, off;

	n_mutants++;
	switch (mu->kind) {
	case M_TRUNC:
	case M_EXTEND: {
		size_t n = mu->kind == M_TRUNC ? (size_t)mu->off : size + mu->val;
		uint8_t *b = malloc(n ? n : 1);
		assert_non_null(b);
		memcpy(b, base, n < size ? n : size);
		if (n > size)
			memset(b + size, 0, n - size);
		on = parse_checked(b, n, 1);
		off = parse_checked(b, n, 0);
		if (v2) {
			/* the header declares the size: any other size fails */
			assert_int_not_equal(on, NBG_OK);
			assert_int_not_equal(off, NBG_OK);
			n_size_property++;
		}
		free(b);
		return;
	}
	case M_FIELD:
		memcpy(saved, work + mu->off, 4);
		fx_put32(work + mu->off, mu->val);
		payload_changed = in_payload(lay, mu->off, 4);
		break;
	case M_FLIP:
		saved[0] = work[mu->off];
		work[mu->off] ^= (uint8_t)(1u << mu->val);
		payload_changed = in_payload(lay, mu->off, 1);
		break;
	case M_BYTE:
		saved[0] = work[mu->off];
		if (work[mu->off] == (uint8_t)mu->val)
			return;
		work[mu->off] = (uint8_t)mu->val;
		payload_changed = in_payload(lay, mu->off, 1);
		break;
	}
	on = parse_checked(work, size, 1);
	off = parse_checked(work, size, 0);
	if (v2 && payload_changed) {
		/* every byte of every section is covered by a CRC: the section's
		 * checksum record and/or the header file checksum */
		if (on == NBG_OK)
			print_error("changed section byte at %llu parsed with the CRC check on\n",
				    (unsigned long long)mu->off);
		assert_int_not_equal(on, NBG_OK);
		n_crc_property++;
		/* with the checksums made to match again, the structural rule
		 * behind the change (if any) must show with the CRC check on */
		if (off != NBG_OK || (mu->off & 7) == 0) {
			uint8_t *b = malloc(size);
			assert_non_null(b);
			memcpy(b, work, size);
			fx_refresh(b, size);
			parse_checked(b, size, 1);
			free(b);
		}
	}
	/* 0x1001e: nbg_crc_sum is the CRC-32 of the whole file with the word
	 * read as zero (doc/format-v1.md), enforced.  Every mutation here
	 * changes at most 4 adjacent bytes, a burst CRC-32 always detects: the
	 * file must fail, unless the word itself became 0 (no checksum). */
	if (!v2 && size > 112 && fx_get32(work + 4) == 0x1001e && fx_get32(base + 108) &&
	    fx_get32(work + 108)) {
		if (on == NBG_OK)
			print_error("changed byte at %llu of a 0x1001e file parsed with the CRC "
				    "check on\n", (unsigned long long)mu->off);
		assert_int_not_equal(on, NBG_OK);
		n_crc_property++;
	}
	(void)off;
	if (mu->kind == M_FIELD)
		memcpy(work + mu->off, saved, 4);
	else
		work[mu->off] = saved[0];
}

/* Every structural candidate, then random flips; `budget` (0: all) keeps a
 * deterministic sample of that many. */
static void mutate_input(const char *name, const uint8_t *base, size_t size, size_t flips,
			 size_t budget)
{
	layout lay;
	mlist l = { 0 };
	uint8_t *work = malloc(size ? size : 1);

	assert_non_null(work);
	memcpy(work, base, size);
	rng_seed(name);
	get_layout(base, size, &lay);
	if (lay.family == 2)
		v2_candidates(&l, base, size, &lay);
	else
		v1_candidates(&l, base, size, &lay);
	boundary_truncations(&l, size, &lay);
	random_mutations(&l, size, flips);
	if (budget && budget < l.n) {
		for (size_t i = 0; i < budget; i++) { /* partial Fisher-Yates */
			size_t j = i + (size_t)rng_below(l.n - i);
			mutation t = l.v[i];
			l.v[i] = l.v[j];
			l.v[j] = t;
		}
		l.n = budget;
	}
	for (size_t i = 0; i < l.n; i++)
		run_mutation(work, base, size, &lay, &l.v[i]);
	/* the work copy is back to the original bytes */
	assert_memory_equal(work, base, size);
	free(l.v);
	free(work);
}

/* ------------------------------------------------------------- inputs */

static char **list_corpus(const char *sub, size_t *count)
{
	char dir[4096];
	DIR *d;
	struct dirent *e;
	char **v = NULL;
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s/%s", NBG_CORPUS_DIR, sub);
	d = opendir(dir);
	if (!d)
		print_error("cannot open %s: %s\n", dir, strerror(errno));
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 3 || strcmp(e->d_name + len - 3, ".nb") != 0)
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n] = malloc(strlen(dir) + len + 2);
		sprintf(v[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	for (size_t i = 1; i < n; i++) /* sorted: the same order everywhere */
		for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*count = n;
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Full-size real files: a sample sized so each file costs about the same
 * number of bytes parsed; then the complete sweep of shrunk copies. */
static void corpus_family(const char *sub, double bytes_per_file, int shrunk_caps)
{
	size_t n;
	char **files = list_corpus(sub, &n);
	unsigned long before = n_mutants;

	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		size_t size, ssize;
		uint8_t *buf = seed_read_file(files[i], &size);
		assert_non_null(buf);
		double want = bytes_per_file * scale / (double)size / 2.0;
		size_t budget = want < 40 ? 40 : want > 4000 ? 4000 : (size_t)want;
		mutate_input(files[i], buf, size, 400, budget);
		for (size_t cap = 64; cap <= 512 && shrunk_caps; cap *= 8, shrunk_caps--) {
			uint8_t *s = seed_shrink(buf, size, cap, &ssize);
			char name[4200];
			assert_non_null(s);
			snprintf(name, sizeof(name), "%s#%zu", files[i], cap);
			mutate_input(name, s, ssize, (size_t)(200 * scale), 0);
			free(s);
		}
		free(buf);
	}
	print_message("%s: %zu files, %lu mutants\n", sub, n, n_mutants - before);
	free_list(files, n);
}

static void test_mutate_corpus_v2(void **state)
{
	(void)state;
	corpus_family("v2", 600e6, 2);
}

static void test_mutate_corpus_v1(void **state)
{
	(void)state;
	corpus_family("v1", 40e6, 1);
}

static void test_mutate_synthesized(void **state)
{
	size_t n;
	seed_file *s = seed_synth_all(&n);
	unsigned long before = n_mutants;

	(void)state;
	for (size_t i = 0; i < n; i++)
		mutate_input(s[i].name, s[i].data, s[i].size, (size_t)(300 * scale), 0);
	print_message("synthesized: %zu files, %lu mutants\n", n, n_mutants - before);
	seed_free_all(s, n);
}

/* Inputs no mutation of a valid file reaches by chance. */
static void test_targeted(void **state)
{
	static const uint8_t junk[16] = "NOT AN NBG FILE";
	uint8_t b[64];

	(void)state;
	parse_checked(junk, 0, 1);
	parse_checked(junk, 3, 1);
	parse_checked(junk, sizeof(junk), 1);
	static const uint32_t versions[] = { 0, 0x10000, 0x30000, 0xffffffffu, 0x00020001 };
	memcpy(b, "VPMN", 4);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		memset(b + 4, 0, sizeof(b) - 4);
		fx_put32(b + 4, versions[i]);
		parse_checked(b, 11, 1);
		parse_checked(b, sizeof(b), 1);
	}
}


/* ----------------------------------------------------------- re-emission */

static unsigned long n_reemit_cli, n_reemit_refused;

static void write_whole(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Runs the nbg binary with up to 5 arguments, output discarded; returns its
 * exit code (a signal fails the test). */
static int run_nbg(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5)
{
	const char *bin = getenv("NBG_BIN");
	char *argv[7] = { (char *)bin, (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5,
			  NULL };
	int status = 0;
	pid_t pid;

	assert_non_null(bin);
	pid = nbg_spawn_quiet(bin, argv);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		print_error("nbg %s %s %s: killed by signal %d\n", a1, a2, a3 ? a3 : "",
			    WIFSIGNALED(status) ? WTERMSIG(status) : -1);
	assert_true(WIFEXITED(status));
	n_reemit_cli++;
	return WEXITSTATUS(status);
}

/* `nbg reemit IN OUT` on one (mutated) file: success means an identical
 * copy and nothing else; any failure leaves the output directory empty. */
static void reemit_one(const char *dir, const uint8_t *buf, size_t size, const char *ledger_doc,
		       int expect_refusal)
{
	char in[4200], outdir[4200], out[4300];
	int x;

	snprintf(in, sizeof(in), "%s/in.nb", dir);
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	snprintf(out, sizeof(out), "%s/copy.nb", outdir);
	write_whole(in, buf, size);
	x = ledger_doc ? run_nbg("reemit", "--ledger", ledger_doc, in, out)
		       : run_nbg("reemit", in, out, NULL, NULL);
	assert_true(x == NBG_EXIT_OK || x == NBG_EXIT_INVALID || x == NBG_EXIT_IO);
	if (x == NBG_EXIT_OK) {
		size_t n;
		uint8_t *copy = seed_read_file(out, &n);
		assert_false(expect_refusal);
		assert_non_null(copy);
		assert_int_equal(n, size);
		assert_memory_equal(copy, buf, size);
		free(copy);
		assert_int_equal(dir_entries(outdir), 1);
		assert_int_equal(unlink(out), 0);
	} else {
		if (expect_refusal)
			assert_int_equal(x, NBG_EXIT_INVALID);
		if (dir_entries(outdir))
			print_error("nbg reemit failed (exit %d) and left a file behind\n", x);
		assert_int_equal(dir_entries(outdir), 0);
	}
}

/* One base file: its ledger, then a handful of mutants through the library
 * check and the CLI, with the ledger built from the file itself and with
 * the ledger document of the original. */
static void reemit_base(const char *dir, const char *name, const uint8_t *base, size_t size)
{
	char doc_path[4200];
	nbg_model *m = NULL;
	nbg_ledger *l = NULL;
	nbg_error err;
	layout lay;
	uint8_t *b = malloc(size);
	char *doc;

	assert_int_equal(nbg_parse(base, size, NULL, &m, &err), NBG_OK);
	assert_int_equal(nbg_ledger_build(m, &l, &err), NBG_OK);
	nbg_model_free(m);
	doc = nbg_ledger_json(l, name);
	assert_non_null(doc);
	snprintf(doc_path, sizeof(doc_path), "%s/ledger.json", dir);
	write_whole(doc_path, doc, strlen(doc));
	free(doc);
	get_layout(base, size, &lay);
	rng_seed(name);

	/* unchanged: identical copy, with either ledger */
	reemit_one(dir, base, size, NULL, 0);
	reemit_one(dir, base, size, doc_path, 0);
	assert_int_equal(nbg_reemit_check(l, base, size, &err), NBG_OK);

	for (int k = 0; k < 4; k++) {
		size_t n = size;
		memcpy(b, base, size);
		if (k == 0) { /* a byte inside a section payload (or anywhere) */
			size_t i = (size_t)rng_below(lay.nsec), tries = 0;
			while (lay.len[i] == 0 && ++tries < lay.nsec)
				i = (i + 1) % lay.nsec;
			if (lay.len[i])
				b[lay.off[i] + rng_below(lay.len[i])] ^= 0x10;
			else
				b[rng_below(size)] ^= 0x10;
		} else if (k == 1) { /* a header / prefix word */
			b[8 + 4 * rng_below(3)] ^= 0x01;
		} else if (k == 2) { /* a directory / entry-table word */
			b[lay.rec[rng_below(lay.nsec)] + 4 * rng_below(2)] ^= 0x80;
		} else { /* cut short */
			n = (size_t)rng_below(size);
		}
		nbg_code rc = nbg_reemit_check(l, b, n, &err);
		assert_int_equal(rc, NBG_E_SEMANTIC_CHANGE_REFUSED);
		code_count[rc]++;
		n_reemit_refused++;
		reemit_one(dir, b, n, NULL, 0);
		reemit_one(dir, b, n, doc_path, 1);
	}
	nbg_ledger_free(l);
	free(b);
}

/* The synthesized seeds, or (real) shrunk copies of the real files. */
static void reemit_inputs(int real)
{
	char dir[] = "/tmp/nbg-mutation-XXXXXX", sub[64], path[4200];
	size_t n, nfiles;
	seed_file *s = seed_synth_all(&n);
	unsigned long before = n_reemit_cli;

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/out", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	for (size_t i = 0; i < n && !real; i++)
		reemit_base(dir, s[i].name, s[i].data, s[i].size);
	seed_free_all(s, n);
	for (int fam = 1; fam <= 2 && real; fam++) {
		char **files = list_corpus(fam == 1 ? "v1" : "v2", &nfiles);
		for (size_t i = 0; i < nfiles; i++) {
			size_t size, ssize;
			uint8_t *buf = seed_read_file(files[i], &size);
			uint8_t *sh = seed_shrink(buf, size, 64, &ssize);
			assert_non_null(sh);
			reemit_base(dir, files[i], sh, ssize);
			free(sh);
			free(buf);
		}
		free_list(files, nfiles);
	}
	/* a valid file into a directory that does not exist: exit 3, and the
	 * temporary file it could not create is nowhere */
	char in[4200];
	snprintf(in, sizeof(in), "%s/in.nb", dir);
	s = seed_synth_all(&n);
	write_whole(in, s[0].data, s[0].size);
	seed_free_all(s, n);
	snprintf(path, sizeof(path), "%s/missing/copy.nb", dir);
	assert_int_equal(run_nbg("reemit", in, path, NULL, NULL), NBG_EXIT_IO);
	unlink(in);
	snprintf(path, sizeof(path), "%s/ledger.json", dir);
	unlink(path);
	assert_int_equal(dir_entries(sub), 0);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
	print_message("re-emission: %lu nbg reemit runs, %lu refusals checked\n",
		      n_reemit_cli - before, n_reemit_refused);
}

static void test_reemit(void **state)
{
	(void)state;
	reemit_inputs(0);
}

static void test_reemit_corpus(void **state)
{
	(void)state;
	reemit_inputs(1);
}

static void test_codes_covered(void **state)
{
	int missing = 0;

	(void)state;
	print_message("%lu mutants, %lu parses (%lu ok), %lu CRC-property and %lu size-property "
		      "checks\n", n_mutants, n_parses, n_ok, n_crc_property, n_size_property);
	for (int c = 0; c < NBG_E__COUNT; c++) {
		const char *excluded = NULL;
		for (size_t k = 0; excluded_codes[k].why; k++)
			if (excluded_codes[k].code == (nbg_code)c)
				excluded = excluded_codes[k].why;
		if (c == NBG_E_OUT_OF_MEMORY && nbg_exe_wrapper())
			excluded = OOM_UNDER_WRAPPER;
		print_message("  %-34s %8lu%s%s\n", nbg_code_name((nbg_code)c), code_count[c],
			      excluded ? "  not required: " : "", excluded ? excluded : "");
		if (!excluded && code_count[c] == 0) {
			print_error("no mutation produced %s\n", nbg_code_name((nbg_code)c));
			missing++;
		}
	}
	assert_int_equal(missing, 0);
	assert_true(n_mutants >= 5000);
}

/* ----------------------------------------------------- resource bounds */

/* The child side of parse_limited: a fresh process (this binary again, so
 * no memory freed by earlier tests is there to be reused) reads the file,
 * caps its address space at what it uses plus `extra_mb`, parses, and writes
 * the code and the error field to stdout. */
static int limited_parse_child(const char *path, const char *extra_mb)
{
	size_t size;
	uint8_t *buf = seed_read_file(path, &size);
	unsigned long vm_pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	struct rlimit r;
	nbg_model *m = NULL;
	nbg_error err;
	nbg_code rc;

	/* libnbg loads OpenSSL at its first SHA-256: one parse of a small
	 * valid file first, so that the limit below bounds the model alone */
	size_t nseeds;
	seed_file *seeds = seed_synth_all(&nseeds);
	if (!nseeds || nbg_parse(seeds[0].data, seeds[0].size, NULL, &m, &err) != NBG_OK)
		return 96;
	nbg_model_free(m);
	m = NULL;
	seed_free_all(seeds, nseeds);
	if (!buf || !f || fscanf(f, "%lu", &vm_pages) != 1)
		return 99;
	fclose(f);
	r.rlim_cur = r.rlim_max = vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) +
				  (rlim_t)strtoul(extra_mb, NULL, 10) * 1024 * 1024;
	if (setrlimit(RLIMIT_AS, &r) != 0)
		return 98;
	memset(&err, 0, sizeof(err));
	rc = nbg_parse(buf, size, NULL, &m, &err);
	nbg_model_free(m);
	if (fwrite(&rc, sizeof(rc), 1, stdout) != 1 || fwrite(err.field, 64, 1, stdout) != 1)
		return 97;
	return 0;
}

/* Parses in a child whose address space may grow by at most `extra_mb`
 * (in-process under ASan, whose shadow memory needs terabytes of address
 * space).  Returns the code, and the error field through `field`. */
static nbg_code parse_limited(const uint8_t *buf, size_t size, size_t extra_mb, char field[64])
{
	nbg_code rc;
#ifndef UNDER_ASAN
	char path[] = "/tmp/nbg-limited-XXXXXX", mb[32];
	int fds[2], status = 0, fd = mkstemp(path);
	pid_t pid;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	assert_int_equal(close(fd), 0);
	snprintf(mb, sizeof(mb), "%zu", extra_mb);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "test_mutation", "--limited-parse", path, mb, NULL };
		dup2(fds[1], 1);
		close(fds[0]);
		nbg_exec_self(argv);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &rc, sizeof(rc)), sizeof(rc));
	assert_int_equal(read(fds[0], field, 64), 64);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unlink(path);
	return rc;
#else
	nbg_model *m = NULL;
	nbg_error err;
	(void)extra_mb;
	rc = nbg_parse(buf, size, NULL, &m, &err);
	nbg_model_free(m);
	memcpy(field, err.field, 64);
	return rc;
#endif
}

static uint8_t *build_default(size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

/* A directory declaring 2^32-1 records: the extent is checked against the
 * file before anything is allocated, and the failure is the truncation of
 * the directory, not an out-of-memory report. */
static void test_bounds_directory_count(void **state)
{
	size_t size;
	uint8_t *b = build_default(&size);
	char field[64];
	double t0;

	static const uint32_t counts[] = { 0xffffffffu, 0x80000000u, 0x05d1745du, 1u << 24 };

	(void)state;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		fx_put32(b + 56, counts[i]);
		t0 = fx_wall_ms();
		nbg_code rc = parse_limited(b, size, 16, field);
		assert_int_equal(rc, NBG_E_TRUNCATED);
		assert_string_equal(field, "section_headers_offset");
		assert_true(fx_wall_ms() - t0 < 2000);
	}
	free(b);
}

/* A directory of 2^18 records that all lie inside the file: more records
 * than there are section types, so one repeats; that is found before the
 * ~60 MB a model of that many sections would take is allocated. */
static void test_bounds_directory_in_file(void **state)
{
	const uint32_t n = 1u << 18;
	size_t size = 60 + (size_t)n * 44;
	uint8_t *b = calloc(1, size);
	char field[64];

	(void)state;
	memcpy(b, "VPMN", 4);
	fx_put32(b + 4, 0x00020000);
	fx_put32(b + 0x10, (uint32_t)size);
	fx_put32(b + 0x18, 48);
	fx_put32(b + 0x1c, 12);
	fx_put32(b + 0x20, 1);
	fx_put32(b + 48, 60);
	fx_put32(b + 52, 44);
	fx_put32(b + 56, n);
	for (uint32_t i = 0; i < n; i++)
		fx_put32(b + 60 + 44 * (size_t)i, i % 41); /* type; empty sections */
	assert_int_equal(parse_limited(b, size, 16, field), NBG_E_DUPLICATE_SECTION);
	assert_string_equal(field, "type");
	fx_put32(b + 60 + 44 * 7, 41);
	assert_int_equal(parse_limited(b, size, 16, field), NBG_E_UNKNOWN_SECTION_TYPE);
	free(b);
}

/* v1 header counts of 2^32-1 and an entry table the input-table rule makes
 * huge: the counts are compared with the tables' sizes (which the file
 * bounds) before any record array is allocated. */
static void test_bounds_v1_counts(void **state)
{
	size_t size;
	uint8_t *b = seed_v1_build(0x1000e, 0, &size);
	char field[64];
	uint32_t es = seed_v1_entries_offset(0x1000e);

	(void)state;
	for (uint32_t at = 0x4c; at <= 0x58; at += 4) {
		uint32_t saved = get32(b + at);
		fx_put32(b + at, 0xffffffffu);
		assert_int_equal(parse_limited(b, size, 16, field), NBG_E_V1_COUNT_MISMATCH);
		fx_put32(b + at, saved);
	}
	free(b);
	/* a version with no sample: the entry count comes from the input offset */
	b = seed_v1_build(0x10020, 0, &size);
	es = seed_v1_entries_offset(0x10020);
	fx_put32(b + es, 0xfffffff0u);
	assert_int_equal(parse_limited(b, size, 16, field), NBG_E_TRUNCATED);
	assert_string_equal(field, "entries");
	free(b);
}

/* Time of the fastest of three parses. */
static double parse_ms(const uint8_t *b, size_t size, nbg_code want)
{
	double best = 1e30;
	for (int k = 0; k < 3; k++) {
		nbg_model *m = NULL;
		nbg_error err;
		double t0 = fx_cpu_ms();
		nbg_code rc = nbg_parse(b, size, NULL, &m, &err);
		double t = fx_cpu_ms() - t0;
		if (rc != want)
			print_error("%s: %s\n", nbg_code_name(rc), err.message);
		assert_int_equal(rc, want);
		nbg_model_free(m);
		if (t < best)
			best = t;
	}
	return best;
}

/* A v2 file whose DYNAIO_TABLE has `n` entries (region n * 64 bytes). */
static uint8_t *build_dynaio(uint32_t n, size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *tab = malloc((size_t)n * 8), *reg = calloc(n, 64);
	for (uint32_t i = 0; i < n; i++) {
		fx_put32(tab + 8 * i, 64 * i);
		fx_put32(tab + 8 * i + 4, 1 + i % 64);
		reg[64 * (size_t)i] = (uint8_t)(i | 1);
	}
	fx_set(s, 26, tab, (size_t)n * 8, 0, 8);
	fx_set(s, 20, reg, (size_t)n * 64, 0, 1);
	free(tab);
	free(reg);
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

/* A v2 file with `n` input records (NETWORK_INFO agreeing). */
static uint8_t *build_inputs(uint32_t n, size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *rec = malloc((size_t)n * 112);
	uint32_t d[4] = { 3, 8, 8, 1 };
	for (uint32_t i = 0; i < n; i++)
		fx_io_record(rec + 112 * (size_t)i, 4, d, i % 20, i % 4, 7, 0, "in");
	fx_set(s, 1, rec, (size_t)n * 112, 0, 112);
	fx_put32(fx_find(s, 35)->data + 0x40, n);
	free(rec);
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

/* A v2 file with n layers, n operations (one per layer, one patch each) and
 * n patches: the graph's relations all hold. */
static uint8_t *build_graph(uint32_t n, size_t *size)
{
	fx_spec *s = fx_default();
	uint8_t *ops = calloc(n, 32), *pat = calloc(n, 28), *lay = calloc(n, 76);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *o = ops + 32 * (size_t)i;
		fx_put32(o, 2);          /* NN */
		fx_put32(o + 4, i);      /* index */
		fx_put32(o + 8, i);      /* layer_id */
		fx_put32(o + 16, i);     /* patch_index */
		fx_put32(o + 20, 1);     /* patch_count */
		fx_put32(o + 28, i);     /* abs_op_id */
		fx_put32(pat + 28 * (size_t)i, 1);
		fx_put32(pat + 28 * (size_t)i + 8, 3);
		fx_put32(lay + 76 * (size_t)i + 64, i);
		fx_put32(lay + 76 * (size_t)i + 68, 1);
	}
	fx_set(s, 4, ops, (size_t)n * 32, 0, 32);
	fx_set(s, 10, pat, (size_t)n * 28, 0, 28);
	fx_set(s, 3, lay, (size_t)n * 76, 0, 76);
	free(ops);
	free(pat);
	free(lay);
	uint8_t *b = fx_build(s, size);
	fx_free(s);
	return b;
}

enum stage { ST_PARSE, ST_LEDGER, ST_GRAPH, ST_DIFF };
static const char *const stage_names[] = { "parse", "ledger", "graph", "diff" };

/* Time of the fastest of three runs of one stage on a file. */
static double stage_ms(const uint8_t *b, size_t size, enum stage st)
{
	double best = 1e30;
	nbg_model *m = NULL, *m2 = NULL;
	nbg_error err;
	uint8_t *c = NULL;

	if (st == ST_PARSE)
		return parse_ms(b, size, NBG_OK);
	assert_int_equal(nbg_parse(b, size, NULL, &m, &err), NBG_OK);
	if (st == ST_DIFF) { /* against the same file with its last byte changed */
		nbg_parse_options o = { .size = sizeof(o), .flags = NBG_PARSE_NO_CRC_CHECK };
		c = malloc(size);
		memcpy(c, b, size);
		c[size - 1] ^= 1;
		assert_int_equal(nbg_parse(c, size, &o, &m2, &err), NBG_OK);
	}
	for (int k = 0; k < 3; k++) {
		double t0 = fx_cpu_ms(), t;
		if (st == ST_LEDGER) {
			nbg_ledger *l = NULL;
			assert_int_equal(nbg_ledger_build(m, &l, &err), NBG_OK);
			t = fx_cpu_ms() - t0;
			nbg_ledger_free(l);
		} else if (st == ST_GRAPH) {
			nbg_graph *g = NULL;
			assert_int_equal(nbg_graph_decode(m, &g, &err), NBG_OK);
			t = fx_cpu_ms() - t0;
			nbg_graph_free(g);
		} else {
			nbg_diff *d = NULL;
			assert_int_equal(nbg_diff_models(m, m2, &d, &err), NBG_OK);
			t = fx_cpu_ms() - t0;
			nbg_diff_free(d);
		}
		if (t < best)
			best = t;
	}
	nbg_model_free(m);
	nbg_model_free(m2);
	free(c);
	return best;
}

/* Linear time in the table sizes: 8 times the entries may cost at most ~20
 * times as long (quadratic would be 64 times); generous for a shared machine. */
static void check_linear(uint8_t *(*build)(uint32_t, size_t *), uint32_t n, const char *what,
			 enum stage st)
{
	size_t s1, s8;
	uint8_t *b1 = build(n, &s1), *b8 = build(8 * n, &s8);
	double t1 = stage_ms(b1, s1, st), t8 = stage_ms(b8, s8, st);

	print_message("%s of %s: %u entries %.2f ms, %u entries %.2f ms (x%.1f)\n",
		      stage_names[st], what, n, t1, 8 * n, t8, t8 / (t1 > 0.01 ? t1 : 0.01));
	assert_true(t8 < 20 * (t1 > 0.05 ? t1 : 0.05));
	free(b1);
	free(b8);
}

static void test_bounds_linear(void **state)
{
	(void)state;
	check_linear(build_dynaio, 1u << 14, "a dynamic-I/O table", ST_PARSE);
	check_linear(build_inputs, 1u << 12, "input records", ST_PARSE);
	check_linear(build_dynaio, 1u << 12, "a dynamic-I/O table", ST_LEDGER);
	check_linear(build_dynaio, 1u << 12, "a dynamic-I/O table", ST_DIFF);
	check_linear(build_graph, 1u << 11, "operations and patches", ST_GRAPH);
}

/* Notes are capped: a file that earns one note per record does not grow
 * the model without bound. */
static void test_bounds_notes(void **state)
{
	size_t size;
	uint8_t *b = build_inputs(1u << 14, &size);
	nbg_model *m = NULL;
	nbg_error err;

	(void)state;
	assert_int_equal(nbg_parse(b, size, NULL, &m, &err), NBG_OK);
	assert_true(nbg_model_note_count(m) > 1000 && nbg_model_note_count(m) <= 4096);
	nbg_model_free(m);
	free(b);
}

/* Out of memory is a named failure, not a crash: a file whose 2^17 input
 * records need ~25 MB of model, parsed with 4 MB of address space to spare. */
static void test_bounds_out_of_memory(void **state)
{
#ifndef UNDER_ASAN
	if (nbg_exe_wrapper()) {
		print_message("skipped: %s\n", OOM_UNDER_WRAPPER);
		skip();
		return;
	}
	size_t size;
	uint8_t *b = build_inputs(1u << 17, &size);
	char field[64];
	nbg_code rc;

	(void)state;
	rc = parse_limited(b, size, 4, field);
	code_count[rc]++;
	if (rc != NBG_E_OUT_OF_MEMORY)
		print_error("%s (field %s)\n", nbg_code_name(rc), field);
	assert_int_equal(rc, NBG_E_OUT_OF_MEMORY);
	/* with room, the same file parses */
	rc = parse_limited(b, size, 512, field);
	assert_int_equal(rc, NBG_OK);
	free(b);
#else
	(void)state;
	skip();
#endif
}

int main(int argc, char **argv)
{
	const char *sc = getenv("NBG_MUTATION_SCALE");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutate_synthesized),
		cmocka_unit_test(test_targeted),
		cmocka_unit_test(test_reemit),
		cmocka_unit_test(test_bounds_directory_count),
		cmocka_unit_test(test_bounds_directory_in_file),
		cmocka_unit_test(test_bounds_v1_counts),
		cmocka_unit_test(test_bounds_linear),
		cmocka_unit_test(test_bounds_notes),
		cmocka_unit_test(test_bounds_out_of_memory),
		cmocka_unit_test(test_codes_covered),
	};
	/* Each group must produce every code on its own; out-of-memory only comes
	 * from the address-space limit, so that case runs in both. */
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_mutate_corpus_v2),
		cmocka_unit_test(test_mutate_corpus_v1),
		cmocka_unit_test(test_reemit_corpus),
		cmocka_unit_test(test_bounds_out_of_memory),
		cmocka_unit_test(test_codes_covered),
	};

	if (argc == 4 && !strcmp(argv[1], "--limited-parse"))
		return limited_parse_child(argv[2], argv[3]);
	if (sc && atof(sc) > 0)
		scale = atof(sc);

	return tc_main(argc, argv, "test_mutation", tests, TC_COUNT(tests), corpus,
		       TC_COUNT(corpus), NULL, NULL);
}

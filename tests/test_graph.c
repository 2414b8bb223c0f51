/*
 * test_graph.c - layers, operations, patches and the (offset, size) tables:
 * every real file (v1 and v2) decodes with the header / NETWORK_INFO counts
 * and every failing relation reported; synthesized v2 files with real field
 * values decode without findings, and one broken reference at a time gives
 * its named finding; `nbg inspect --layers --operations` prints rows read off
 * the files by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "corpus.h"
#include "exe_wrapper.h"
#include "fixture.h"
#include "nbg/nbg.h"
#include "nbg/graph.h"
#include "nbg/report.h"
#include "common/model.h" /* a tampered model: the library refuses it */

#define V1_DIR NBG_CORPUS_DIR "/v1"
#define V2_DIR NBG_CORPUS_DIR "/v2"

/* ----------------------------------------------------------------- helpers */

typedef struct loaded {
	uint8_t *buf;
	size_t size;
	nbg_model *m;
	nbg_graph *g;
} loaded;

static void load_buf(loaded *l)
{
	nbg_error err;
	nbg_code rc = nbg_parse(l->buf, l->size, NULL, &l->m, &err);
	if (rc != NBG_OK)
		fail_msg("parse failed: %s at %llu: %s", nbg_code_name(rc),
			 (unsigned long long)err.offset, err.message);
	rc = nbg_graph_decode(l->m, &l->g, &err);
	if (rc != NBG_OK)
		fail_msg("graph decode failed: %s: %s", nbg_code_name(rc), err.message);
	assert_non_null(l->g);
}

static loaded load_file(const char *path)
{
	loaded l = { 0 };
	l.buf = fx_read_file(path, &l.size);
	if (!l.buf)
		fail_msg("cannot read %s", path);
	load_buf(&l);
	return l;
}

static void unload(loaded *l)
{
	nbg_graph_free(l->g);
	nbg_model_free(l->m);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

static size_t count_findings(const nbg_graph *g, const char *id)
{
	size_t n = 0;
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++)
		n += !strcmp(nbg_graph_finding_at(g, i)->id, id);
	return n;
}

static const nbg_graph_relation *relation(const nbg_graph *g, const char *id)
{
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++)
		if (!strcmp(nbg_graph_relation_at(g, r)->id, id))
			return nbg_graph_relation_at(g, r);
	fail_msg("no relation %s", id);
	return NULL;
}

static void print_findings(const nbg_graph *g)
{
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++)
		print_message("  finding %s @%llu %s\n", nbg_graph_finding_at(g, i)->id,
			      (unsigned long long)nbg_graph_finding_at(g, i)->offset, nbg_graph_finding_at(g, i)->text);
}

/* Every relation that does not hold has at least one finding of its id. */
static void assert_failures_reported(const nbg_graph *g)
{
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++) {
		const nbg_graph_relation *x = nbg_graph_relation_at(g, r);
		assert_true(x->held <= x->checked);
		if (x->held < x->checked && !nbg_graph_summary_of(g)->findings_dropped && !count_findings(g, x->id))
			fail_msg("relation %s fails %llu times without a finding", x->id,
				 (unsigned long long)(x->checked - x->held));
	}
}

/* ---------------------------------------------------------- real files */

typedef struct corpus_totals {
	size_t files, layers, operations, patches, findings, table_entries;
} corpus_totals;

/* What holds on every real file, whatever its family. */
static void check_common(const char *path, const loaded *l, corpus_totals *t)
{
	const nbg_graph *g = l->g;

	assert_true(nbg_graph_summary_of(g)->layer_records.decoded);
	assert_true(nbg_graph_summary_of(g)->operation_records.decoded);
	assert_int_equal(nbg_graph_summary_of(g)->layer_records.trailing_bytes, 0);
	assert_int_equal(nbg_graph_summary_of(g)->operation_records.trailing_bytes, 0);
	for (size_t i = 0; i < nbg_graph_summary_of(g)->layer_count; i++)
		if (!nbg_graph_layer_at(g, i)->name_printable)
			fail_msg("%s: layer %zu name not printable", path, i);
	assert_int_equal(relation(g, "layer-name-unprintable")->held, nbg_graph_summary_of(g)->layer_count);
	/* Counts equal the section sizes over the record size (never a guess). */
	assert_int_equal(nbg_graph_summary_of(g)->operation_count,
			 nbg_graph_summary_of(g)->operation_records.size / nbg_graph_summary_of(g)->operation_records.record_size);
	assert_int_equal(nbg_graph_summary_of(g)->layer_count, nbg_graph_summary_of(g)->layer_records.size / nbg_graph_summary_of(g)->layer_records.record_size);
	if (nbg_graph_summary_of(g)->patch_records.present)
		assert_int_equal(nbg_graph_summary_of(g)->patch_count,
				 nbg_graph_summary_of(g)->patch_records.size / nbg_graph_summary_of(g)->patch_records.record_size);
	for (int i = 0; i < NBG_GRAPH_TABLE_COUNT; i++) {
		assert_int_equal(nbg_graph_table_at(g, i)->out_of_bounds, 0);
		assert_int_equal(nbg_graph_table_at(g, i)->covered_bytes + nbg_graph_table_at(g, i)->uncovered_bytes,
				 nbg_graph_table_at(g, i)->data_size);
		t->table_entries += nbg_graph_table_at(g, i)->entry_count;
	}
	assert_failures_reported(g);
	assert_int_equal(nbg_graph_summary_of(g)->findings_dropped, 0);
	/* The JSON parses and carries the arrays with one element per record. */
	char *s = fx_document(l->m, NULL, NBG_JSON_DOC_NO_CORE | NBG_GRAPH_JSON_ALL);
	assert_non_null(s);
	json_t *j = json_loads(s, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "layers")), nbg_graph_summary_of(g)->layer_count);
	assert_int_equal(json_array_size(json_object_get(j, "operations")), nbg_graph_summary_of(g)->operation_count);
	assert_int_equal(json_array_size(json_object_get(j, "patches")), nbg_graph_summary_of(g)->patch_count);
	assert_int_equal(json_array_size(json_object_get(j, "graph_findings")), nbg_graph_summary_of(g)->finding_count);
	json_decref(j);
	free(s);
	t->files++;
	t->layers += nbg_graph_summary_of(g)->layer_count;
	t->operations += nbg_graph_summary_of(g)->operation_count;
	t->patches += nbg_graph_summary_of(g)->patch_count;
	t->findings += nbg_graph_summary_of(g)->finding_count;
}

static void v2_file(const char *path, void *ctx)
{
	loaded l = load_file(path);
	const nbg_graph *g = l.g;
	const nbg_network_info *ni = nbg_model_network_info(l.m);

	check_common(path, &l, ctx);
	assert_true(ni->present);
	/* LAYER entries == NETWORK_INFO layer_count; operation_count counts run
	 * instructions: OPERATIONS entries + 3 on every file. */
	assert_int_equal(nbg_graph_summary_of(g)->layer_count, ni->layer_count);
	assert_int_equal(ni->operation_count, nbg_graph_summary_of(g)->operation_count + 3);
	assert_int_equal(nbg_graph_summary_of(g)->abs_op_ids, ni->absolute_operation_count);
	assert_int_equal(nbg_graph_summary_of(g)->operation_records.record_size, 32);
	assert_int_equal(nbg_graph_summary_of(g)->layer_records.record_size, 76);
	assert_int_equal(nbg_graph_summary_of(g)->ops_by_type[10], 1); /* one INIT */
	assert_int_equal(nbg_graph_operation_at(g, 0)->type, NBG_GRAPH_OP_INIT);
	assert_int_equal(nbg_graph_summary_of(g)->patches_unreferenced, 0);
	assert_int_equal(nbg_graph_summary_of(g)->patches_shared, 0);
	assert_int_equal(nbg_graph_summary_of(g)->state_table, NBG_GRAPH_TABLE_LOADSTATE);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_LOADSTATE)->entry_count, nbg_graph_summary_of(g)->operation_count);
	/* Every relation holds on the v2 corpus. */
	if (nbg_graph_summary_of(g)->finding_count) {
		print_findings(g);
		fail_msg("%s: %zu findings", path, nbg_graph_summary_of(g)->finding_count);
	}
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++)
		assert_int_equal(nbg_graph_relation_at(g, r)->held, nbg_graph_relation_at(g, r)->checked);
	assert_true(relation(g, "operation-layer-missing")->checked >= nbg_graph_summary_of(g)->operation_count - 1);
	assert_int_equal(relation(g, "operation-state-missing")->checked, nbg_graph_summary_of(g)->operation_count);
	assert_int_equal(relation(g, "layer-operation-count-mismatch")->checked, nbg_graph_summary_of(g)->layer_count);
	unload(&l);
}

static void test_v2_corpus(void **state)
{
	corpus_totals t = { 0 };
	assert_int_equal(tc_each_corpus_file("v2", v2_file, &t), tc_manifest_files("v2"));
	print_message("v2: %zu files, %zu layers, %zu operations, %zu patches, %zu table "
		      "entries, %zu findings\n", t.files, t.layers, t.operations, t.patches,
		      t.table_entries, t.findings);
	assert_int_equal(t.findings, 0);
}

static void v1_file(const char *path, void *ctx)
{
	loaded l = load_file(path);
	const nbg_graph *g = l.g;
	const nbg_v1_info *v1 = nbg_model_v1(l.m);

	check_common(path, &l, ctx);
	assert_int_equal(nbg_graph_summary_of(g)->layer_count, v1->layer_count);
	assert_int_equal(nbg_graph_summary_of(g)->operation_count, v1->operation_count);
	assert_int_equal(nbg_graph_summary_of(g)->layer_records.record_size, v1->layer_stride);
	assert_int_equal(nbg_graph_summary_of(g)->operation_records.record_size, v1->operation_stride);
	assert_int_equal(nbg_graph_summary_of(g)->patch_records.record_size, v1->patch_stride);
	assert_int_equal(nbg_graph_operation_at(g, 0)->type, NBG_GRAPH_OP_INIT);
	assert_int_equal(nbg_graph_layer_at(g, 0)->has_uid, nbg_model_version(l.m) >= 0x10008);
	assert_int_equal(nbg_graph_operation_at(g, 0)->has_abs_op_id, nbg_model_version(l.m) >= 0x10017);
	assert_true(nbg_graph_summary_of(g)->state_table >= 0);
	/* Only the per-layer record count may differ (one operation can span
	 * several records, e.g. TP split); every reference holds. */
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++)
		if (strcmp(nbg_graph_finding_at(g, i)->id, "layer-operation-records-differ")) {
			print_findings(g);
			fail_msg("%s: unexpected finding %s", path, nbg_graph_finding_at(g, i)->id);
		}
	unload(&l);
}

static void test_v1_corpus(void **state)
{
	corpus_totals t = { 0 };
	assert_int_equal(tc_each_corpus_file("v1", v1_file, &t), tc_manifest_files("v1"));
	print_message("v1: %zu files, %zu layers, %zu operations, %zu patches, %zu table "
		      "entries, %zu findings (layer-operation-records-differ)\n", t.files,
		      t.layers, t.operations, t.patches, t.table_entries, t.findings);
}

/* Values read off the files by hand (hex dump / a separate script). */
static void test_known_values(void **state)
{
	loaded l = load_file(V2_DIR "/face_detector_nbg_int16.nb");
	const nbg_graph *g = l.g;

	assert_int_equal(nbg_graph_summary_of(g)->layer_count, 55);
	assert_int_equal(nbg_graph_summary_of(g)->operation_count, 57);
	assert_int_equal(nbg_graph_summary_of(g)->patch_count, 315);
	assert_int_equal(nbg_graph_summary_of(g)->sh_count, 11);
	assert_string_equal(nbg_graph_layer_at(g, 0)->name, "ConvolutionReluPoolingLayer2");
	assert_int_equal(nbg_graph_layer_at(g, 0)->record_offset, 1408);
	assert_int_equal(nbg_graph_layer_at(g, 0)->node_id, 208);
	assert_int_equal(nbg_graph_layer_at(g, 0)->operation_count, 1);
	assert_int_equal(nbg_graph_layer_at(g, 0)->uid, 2);
	assert_string_equal(nbg_graph_layer_at(g, 54)->name, "TensorTranspose");
	assert_int_equal(nbg_graph_layer_at(g, 54)->uid, 97);
	/* INIT: [0xFFFF, 0xFFFF, 0xFFFFFFFF, 0, 0, 1, 0, 0xFFFFFFFF] */
	assert_int_equal(nbg_graph_operation_at(g, 0)->layer_id, 0xFFFFFFFFu);
	assert_int_equal(nbg_graph_operation_at(g, 0)->patch_count, 1);
	assert_int_equal(nbg_graph_operation_at(g, 0)->abs_op_id, 0xFFFFFFFFu);
	/* [2, 0, 0, 1, 1, 5, 0, 0] */
	assert_int_equal(nbg_graph_operation_at(g, 1)->type, NBG_GRAPH_OP_NN);
	assert_int_equal(nbg_graph_operation_at(g, 1)->state_id, 1);
	assert_int_equal(nbg_graph_operation_at(g, 1)->patch_index, 1);
	assert_int_equal(nbg_graph_operation_at(g, 1)->patch_count, 5);
	/* [1, 0, 4, 5, 23, 3, 0, 4]: the first SH operation */
	assert_int_equal(nbg_graph_operation_at(g, 5)->type, NBG_GRAPH_OP_SH);
	assert_int_equal(nbg_graph_operation_at(g, 5)->layer_id, 4);
	assert_int_equal(nbg_graph_operation_at(g, 5)->patch_index, 23);
	assert_int_equal(nbg_graph_operation_at(g, 5)->abs_op_id, 4);
	assert_int_equal(nbg_graph_summary_of(g)->ops_by_type[NBG_GRAPH_OP_NN], 40);
	assert_int_equal(nbg_graph_summary_of(g)->ops_by_type[NBG_GRAPH_OP_SH], 11);
	assert_int_equal(nbg_graph_summary_of(g)->ops_by_type[NBG_GRAPH_OP_NT], 5);
	/* patch 3: [1, 28, 8, -1, 98304, 0, 0] */
	assert_int_equal(nbg_graph_patch_at(g, 3)->type, 1);
	assert_int_equal(nbg_graph_patch_at(g, 3)->dest_offset, 28);
	assert_int_equal(nbg_graph_patch_at(g, 3)->source_type, NBG_GRAPH_SRC_VIP_SRAM);
	assert_int_equal(nbg_graph_patch_at(g, 3)->index, -1);
	assert_int_equal(nbg_graph_patch_at(g, 3)->src_offset, 98304);
	assert_int_equal(nbg_graph_patch_at(g, 3)->operation, 1);
	assert_true(nbg_graph_patch_at(g, 3)->has_name);
	assert_false(nbg_graph_patch_at(g, 3)->has_high);
	/* PPU_INSTR_TABLE: 11 entries of 320 bytes at 512-byte steps in 5632 bytes */
	const nbg_graph_table *pt = nbg_graph_table_at(g, NBG_GRAPH_TABLE_PPU_INSTR);
	assert_int_equal(pt->entry_count, 11);
	assert_int_equal(pt->entries[1].offset, 512);
	assert_int_equal(pt->entries[1].size, 320);
	assert_int_equal(pt->uncovered_bytes, 2112);
	assert_int_equal(pt->uncovered_ranges, 11);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_COEF_DATA)->entry_count, 37);
	unload(&l);

	/* v1 0x10003: 24-byte operations, LCDT holds the load states */
	l = load_file(V1_DIR "/10003_88_face_age_88.nb");
	g = l.g;
	assert_int_equal(nbg_graph_summary_of(g)->layer_count, 66);
	assert_int_equal(nbg_graph_summary_of(g)->layer_records.record_size, 72);
	assert_int_equal(nbg_graph_summary_of(g)->operation_count, 93);
	assert_int_equal(nbg_graph_summary_of(g)->operation_records.record_size, 24);
	assert_false(nbg_graph_operation_at(g, 1)->has_preempt);
	/* [3, 0, 0, 43, 2, 4] */
	assert_int_equal(nbg_graph_operation_at(g, 1)->type, NBG_GRAPH_OP_TP);
	assert_int_equal(nbg_graph_operation_at(g, 1)->state_id, 43);
	assert_int_equal(nbg_graph_operation_at(g, 1)->patch_index, 2);
	assert_int_equal(nbg_graph_operation_at(g, 1)->patch_count, 4);
	assert_int_equal(nbg_graph_operation_at(g, 92)->type, NBG_GRAPH_OP_END);
	assert_int_equal(nbg_graph_summary_of(g)->state_table, NBG_GRAPH_TABLE_LCD);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_LCD)->entry_count, 252);
	assert_int_equal(nbg_graph_summary_of(g)->patch_records.record_size, 24);
	/* Layer 2 (ActivationLayer) declares 1 operation; 4 TP records name it. */
	assert_int_equal(nbg_graph_layer_at(g, 2)->operation_count, 1);
	assert_int_equal(nbg_graph_layer_at(g, 2)->operation_records, 4);
	assert_int_equal(count_findings(g, "layer-operation-records-differ"), 8);
	unload(&l);

	/* v1 0x1001E: 32-byte operations with abs_op_id, 40-byte patches */
	l = load_file(V1_DIR "/1001e_ba_conv2d_relu_maxpool2d_fp32.nb");
	g = l.g;
	assert_int_equal(nbg_graph_summary_of(g)->layer_count, 3);
	assert_string_equal(nbg_graph_layer_at(g, 2)->name, "Max Pooling");
	assert_int_equal(nbg_graph_summary_of(g)->operation_count, 5);
	assert_true(nbg_graph_operation_at(g, 1)->has_abs_op_id);
	assert_int_equal(nbg_graph_summary_of(g)->patch_count, 15);
	assert_true(nbg_graph_patch_at(g, 0)->has_high);
	assert_int_equal(nbg_graph_summary_of(g)->state_table, NBG_GRAPH_TABLE_LOADSTATE);
	assert_int_equal(nbg_graph_summary_of(g)->instr_table, NBG_GRAPH_TABLE_PPU_INSTR);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_LOADSTATE)->entry_count, 5);
	assert_int_equal(nbg_graph_summary_of(g)->finding_count, 0);
	unload(&l);
}

/* ----------------------------------------------------- synthesized files */

/* The fixture's default model (the bundled sample) carries a graph whose
 * records agree: INIT + an NN, an SH and an NT operation over 3 layers,
 * 5 patches, load states, coefficient and PPU tables (tests/fixture.c). */
static fx_spec *graph_spec(void)
{
	return fx_default();
}

static loaded load_spec(const fx_spec *s)
{
	loaded l = { 0 };
	l.buf = fx_build(s, &l.size);
	load_buf(&l);
	return l;
}

static void test_synth_valid(void **state)
{
	fx_spec *s = graph_spec();
	loaded l = load_spec(s);
	const nbg_graph *g = l.g;

	if (nbg_graph_summary_of(g)->finding_count)
		print_findings(g);
	assert_int_equal(nbg_graph_summary_of(g)->finding_count, 0);
	assert_int_equal(nbg_graph_summary_of(g)->layer_count, 3);
	assert_int_equal(nbg_graph_summary_of(g)->operation_count, 4);
	assert_int_equal(nbg_graph_summary_of(g)->patch_count, 5);
	assert_int_equal(nbg_graph_summary_of(g)->sh_count, 1);
	assert_string_equal(nbg_graph_layer_at(g, 1)->name, "TensorPadOperation2");
	assert_int_equal(nbg_graph_layer_at(g, 2)->uid, 97);
	assert_int_equal(nbg_graph_operation_at(g, 3)->type, NBG_GRAPH_OP_NT);
	assert_int_equal(nbg_graph_operation_at(g, 3)->abs_op_id, 2);
	assert_int_equal(nbg_graph_patch_at(g, 3)->source_type, NBG_GRAPH_SRC_MISC_DYNA_GENERIC);
	assert_int_equal(nbg_graph_patch_at(g, 3)->operation, 2);
	assert_int_equal(nbg_graph_patch_at(g, 0)->operation, 0);
	assert_int_equal(nbg_graph_summary_of(g)->patches_unreferenced, 0);
	assert_int_equal(nbg_graph_summary_of(g)->abs_op_ids, 3);
	/* coverage: LOADSTATE 600 - 240 covered; COEF_DATA 1000 - 900 in 2 ranges */
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_LOADSTATE)->uncovered_bytes, 360);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_COEF_DATA)->uncovered_bytes, 100);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_COEF_DATA)->uncovered_ranges, 2);
	assert_int_equal(nbg_graph_table_at(g, NBG_GRAPH_TABLE_PPU_INSTR)->covered_bytes, 672);
	/* every relation was exercised */
	for (size_t r = 0; r < nbg_graph_summary_of(g)->relation_count; r++) {
		const nbg_graph_relation *x = nbg_graph_relation_at(g, r);
		if (!strcmp(x->id, "operation-count-mismatch") ||
		    !strcmp(x->id, "layer-operation-records-differ") ||
		    !strncmp(x->id, "hw-init", 7) || !strcmp(x->id, "sh-ppu-param-missing"))
			continue;
		if (!x->checked)
			fail_msg("relation %s not checked", x->id);
		assert_int_equal(x->held, x->checked);
	}
	unload(&l);
	fx_free(s);
}

/* One change to the valid graph gives exactly the named finding. */
typedef void (*mutator)(fx_spec *s);

static void expect_finding(mutator mut, const char *id)
{
	fx_spec *s = graph_spec();
	mut(s);
	loaded l = load_spec(s);
	const nbg_graph *g = l.g;

	if (!count_findings(g, id)) {
		print_findings(g);
		fail_msg("no %s finding", id);
	}
	for (size_t i = 0; i < nbg_graph_summary_of(g)->finding_count; i++) {
		if (strcmp(nbg_graph_finding_at(g, i)->id, id)) {
			print_findings(g);
			fail_msg("wanted only %s, got %s", id, nbg_graph_finding_at(g, i)->id);
		}
		assert_true(strlen(nbg_graph_finding_at(g, i)->text) > 10);
		assert_true(nbg_graph_finding_at(g, i)->offset > 0 && nbg_graph_finding_at(g, i)->offset < l.size);
	}
	assert_failures_reported(g);
	assert_true(relation(g, id)->held < relation(g, id)->checked);
	unload(&l);
	fx_free(s);
}

static uint8_t *op_rec(fx_spec *s, size_t i)
{
	return fx_find(s, NBG_SEC_OPERATIONS)->data + 32 * i;
}

static uint8_t *patch_rec(fx_spec *s, size_t i)
{
	return fx_find(s, NBG_SEC_PATCH)->data + 28 * i;
}

static void m_layer_id(fx_spec *s)
{
	fx_put32(op_rec(s, 2) + 8, 7);
	fx_put32(fx_find(s, NBG_SEC_LAYER)->data + 76 + 68, 0); /* layer 1 keeps its count */
}
static void m_patch_range(fx_spec *s) { fx_put32(op_rec(s, 3) + 20, 5); }
static void m_state_id(fx_spec *s) { fx_put32(op_rec(s, 1) + 12, 9); }
static void m_index(fx_spec *s) { fx_put32(op_rec(s, 3) + 4, 2); }
static void m_op_type(fx_spec *s) { fx_put32(op_rec(s, 3), 0x1234); }
/* abs_op_id 5 with abs_op_count 3 (still three distinct values) */
static void m_abs_op_id(fx_spec *s) { fx_put32(op_rec(s, 3) + 28, 5); }
static void m_layer_ops(fx_spec *s) { fx_put32(fx_find(s, NBG_SEC_LAYER)->data + 68, 2); }
static void m_layer_count(fx_spec *s) { fx_put32(fx_find(s, NBG_SEC_NETWORK_INFO)->data + 0x48, 4); }
static void m_layer_name(fx_spec *s) { fx_find(s, NBG_SEC_LAYER)->data[76 + 3] = 0x01; }
static void m_patch_type(fx_spec *s) { fx_put32(patch_rec(s, 4), 7); }
static void m_patch_source(fx_spec *s) { fx_put32(patch_rec(s, 0) + 8, 55); }
static void m_patch_io(fx_spec *s) { fx_put32(patch_rec(s, 2) + 12, 3); }
static void m_patch_dyna(fx_spec *s) { fx_put32(patch_rec(s, 3) + 12, 2); }
static void m_patch_dest(fx_spec *s) { fx_put32(patch_rec(s, 1) + 4, 30); }
static void m_sh_instr(fx_spec *s) { fx_put32(fx_find(s, NBG_SEC_SH)->data, 1); }
static void m_table_entry(fx_spec *s)
{
	fx_put32(fx_find(s, NBG_SEC_COEF_DATA_TABLE)->data + 8, 900);
	fx_put32(fx_find(s, NBG_SEC_COEF_DATA_TABLE)->data + 12, 200);
}

static void test_synth_broken_references(void **state)
{
	expect_finding(m_layer_id, "operation-layer-missing");
	expect_finding(m_patch_range, "operation-patch-range");
	expect_finding(m_state_id, "operation-state-missing");
	expect_finding(m_index, "operation-index-out-of-range");
	expect_finding(m_op_type, "operation-type-unknown");
	expect_finding(m_abs_op_id, "abs-op-id-out-of-range");
	expect_finding(m_layer_ops, "layer-operation-count-mismatch");
	expect_finding(m_layer_count, "layer-count-mismatch");
	expect_finding(m_layer_name, "layer-name-unprintable");
	expect_finding(m_patch_type, "patch-type-unknown");
	expect_finding(m_patch_source, "patch-source-type-unknown");
	expect_finding(m_patch_io, "patch-io-index-out-of-range");
	expect_finding(m_patch_dyna, "patch-dyna-index-out-of-range");
	expect_finding(m_patch_dest, "patch-dest-outside-state");
	expect_finding(m_sh_instr, "sh-instr-missing");
	expect_finding(m_table_entry, "table-entry-out-of-bounds");
}

static void test_synth_unknown_values_kept(void **state)
{
	fx_spec *s = graph_spec();
	m_op_type(s);
	m_patch_source(s);
	loaded l = load_spec(s);
	assert_int_equal(nbg_graph_operation_at(l.g, 3)->type, 0x1234);
	assert_null(nbg_graph_op_type_name(nbg_graph_operation_at(l.g, 3)->type));
	assert_int_equal(nbg_graph_summary_of(l.g)->ops_by_type[11], 1);
	assert_int_equal(nbg_graph_patch_at(l.g, 0)->source_type, 55);
	char *js = fx_document(l.m, NULL, NBG_JSON_DOC_NO_CORE | NBG_GRAPH_JSON_OPERATIONS |
						   NBG_GRAPH_JSON_PATCHES);
	json_t *j = json_loads(js, 0, NULL);
	json_t *op = json_array_get(json_object_get(j, "operations"), 3);
	assert_int_equal(json_integer_value(json_object_get(op, "type")), 0x1234);
	assert_true(json_is_null(json_object_get(op, "type_name")));
	json_t *p0 = json_array_get(json_object_get(j, "patches"), 0);
	assert_int_equal(json_integer_value(json_object_get(p0, "source_type")), 55);
	assert_null(json_object_get(j, "layers")); /* not selected */
	json_decref(j);
	free(js);
	unload(&l);
	fx_free(s);
}

/* Record sizes come from sd_entsize: older layouts decode with fewer fields. */
static void test_synth_record_sizes(void **state)
{
	fx_spec *s = graph_spec();
	uint8_t ops24[4 * 24], patches40[5 * 40], layers72[3 * 72];
	fx_section *o = fx_find(s, NBG_SEC_OPERATIONS), *p = fx_find(s, NBG_SEC_PATCH),
		   *ly = fx_find(s, NBG_SEC_LAYER);

	for (int i = 0; i < 4; i++)
		memcpy(ops24 + 24 * i, o->data + 32 * i, 24);
	memset(patches40, 0, sizeof(patches40));
	for (int i = 0; i < 5; i++) {
		memcpy(patches40 + 40 * i, p->data + 28 * i, 28);
		fx_put32(patches40 + 40 * i + 36, 0xff);
	}
	for (int i = 0; i < 3; i++)
		memcpy(layers72 + 72 * i, ly->data + 76 * i, 72);
	fx_set(s, NBG_SEC_OPERATIONS, ops24, sizeof(ops24), 0, 24);
	fx_set(s, NBG_SEC_PATCH, patches40, sizeof(patches40), 0, 40);
	fx_set(s, NBG_SEC_LAYER, layers72, sizeof(layers72), 0, 72);
	loaded l = load_spec(s);
	const nbg_graph *g = l.g;
	if (nbg_graph_summary_of(g)->finding_count)
		print_findings(g);
	assert_int_equal(nbg_graph_summary_of(g)->finding_count, 0);
	assert_int_equal(nbg_graph_summary_of(g)->operation_count, 4);
	assert_false(nbg_graph_operation_at(g, 1)->has_preempt);
	assert_false(nbg_graph_operation_at(g, 1)->has_abs_op_id);
	assert_int_equal(nbg_graph_operation_at(g, 3)->patch_index, 4);
	assert_true(nbg_graph_patch_at(g, 2)->has_high);
	assert_int_equal(nbg_graph_patch_at(g, 2)->mask_h, 0xff);
	assert_int_equal(nbg_graph_patch_at(g, 2)->source_type, NBG_GRAPH_SRC_INPUT);
	assert_false(nbg_graph_layer_at(g, 0)->has_uid);
	assert_string_equal(nbg_graph_layer_at(g, 0)->name, "ConvolutionReluPoolingLayer2");
	/* without abs_op_id the layer relation counts records */
	assert_int_equal(relation(g, "layer-operation-records-differ")->checked, 3);
	assert_int_equal(relation(g, "layer-operation-count-mismatch")->checked, 0);
	unload(&l);
	fx_free(s);
}

/* Short, odd and unusable sections are findings; records stay inside. */
static void test_synth_odd_sections(void **state)
{
	fx_spec *s = graph_spec();
	fx_section *ly = fx_find(s, NBG_SEC_LAYER);
	uint8_t big[3 * 76 + 10];

	memcpy(big, ly->data, 3 * 76);
	memset(big + 3 * 76, 0x41, 10);
	fx_set(s, NBG_SEC_LAYER, big, sizeof(big), 0, 76);
	loaded l = load_spec(s);
	assert_int_equal(nbg_graph_summary_of(l.g)->layer_count, 3);
	assert_int_equal(nbg_graph_summary_of(l.g)->layer_records.trailing_bytes, 10);
	assert_int_equal(count_findings(l.g, "section-size-not-multiple"), 1);
	assert_int_equal(nbg_graph_summary_of(l.g)->finding_count, 1);
	unload(&l);
	fx_free(s);

	/* entsize too small for the public layout: not decoded, references reported */
	s = graph_spec();
	fx_find(s, NBG_SEC_LAYER)->entsize = 40;
	l = load_spec(s);
	assert_false(nbg_graph_summary_of(l.g)->layer_records.decoded);
	assert_int_equal(nbg_graph_summary_of(l.g)->layer_count, 0);
	assert_int_equal(count_findings(l.g, "record-size-unusable"), 1);
	assert_true(count_findings(l.g, "operation-layer-missing") >= 3);
	unload(&l);
	fx_free(s);

	/* a record size no public layout has: fields that fit decoded */
	s = graph_spec();
	{
		uint8_t ops36[4 * 36];
		fx_section *o = fx_find(s, NBG_SEC_OPERATIONS);
		memset(ops36, 0, sizeof(ops36));
		for (int i = 0; i < 4; i++)
			memcpy(ops36 + 36 * i, o->data + 32 * i, 32);
		fx_set(s, NBG_SEC_OPERATIONS, ops36, sizeof(ops36), 0, 36);
	}
	l = load_spec(s);
	assert_int_equal(nbg_graph_summary_of(l.g)->operation_count, 4);
	assert_true(nbg_graph_operation_at(l.g, 2)->has_abs_op_id);
	assert_int_equal(nbg_graph_operation_at(l.g, 2)->abs_op_id, 1);
	assert_int_equal(count_findings(l.g, "record-size-unexpected"), 1);
	assert_int_equal(nbg_graph_summary_of(l.g)->finding_count, 1);
	unload(&l);
	fx_free(s);

	/* no PATCH section: every operation's patch range is reported */
	s = graph_spec();
	fx_remove(s, NBG_SEC_PATCH);
	l = load_spec(s);
	assert_int_equal(count_findings(l.g, "operation-patch-range"), 4);
	unload(&l);
	fx_free(s);

	/* a table whose data section is missing */
	s = graph_spec();
	fx_remove(s, NBG_SEC_PPU_INSTR);
	fx_set(s, NBG_SEC_CHECKSUM, NULL, 24, 0, 8); /* one CRC-checked section fewer */
	l = load_spec(s);
	assert_int_equal(nbg_graph_table_at(l.g, NBG_GRAPH_TABLE_PPU_INSTR)->out_of_bounds, 1);
	assert_int_equal(count_findings(l.g, "table-entry-out-of-bounds"), 1);
	unload(&l);
	fx_free(s);
}

/* A hand-made model whose section lies outside its data is refused. */
static void test_decode_refuses_bad_model(void **state)
{
	fx_spec *s = graph_spec();
	loaded l = load_spec(s);
	nbg_graph *g = (nbg_graph *)1;
	nbg_error err;
	nbg_section saved = l.m->sections[0];

	l.m->sections[0].size = l.size + 1;
	assert_int_equal(nbg_graph_decode(l.m, &g, &err), NBG_E_SECTION_OUT_OF_BOUNDS);
	assert_null(g);
	assert_int_equal(err.code, NBG_E_SECTION_OUT_OF_BOUNDS);
	l.m->sections[0] = saved;
	assert_int_equal(nbg_graph_decode(NULL, &g, &err), NBG_E_INVALID_ARGUMENT);
	nbg_graph_free(NULL);
	unload(&l);
	fx_free(s);
}

static void test_names(void **state)
{
	assert_string_equal(nbg_graph_op_type_name(1), "SH");
	assert_string_equal(nbg_graph_op_type_name(7), "NN_LUT");
	assert_string_equal(nbg_graph_op_type_name(0xFFFE), "END");
	assert_string_equal(nbg_graph_op_type_name(0xFFFF), "INIT");
	assert_null(nbg_graph_op_type_name(9));
	assert_string_equal(nbg_graph_patch_type_name(2), "KERNEL");
	assert_null(nbg_graph_patch_type_name(3));
	assert_string_equal(nbg_graph_source_type_name(4), "AXI_SRAM");
	assert_string_equal(nbg_graph_source_type_name(8), "VIP_SRAM");
	assert_string_equal(nbg_graph_source_type_name(101), "MULTIVIP_SYNC_CMDS");
	assert_null(nbg_graph_source_type_name(11));
}

/* ------------------------------------------------------------------- CLI */

static char *run(const char *args, int *status)
{
	char cmd[2048];
	const char *bin = getenv("NBG_BIN");
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);
	FILE *p;

	assert_non_null(bin);
	snprintf(cmd, sizeof(cmd), "%s'%s' %s 2>/dev/null", nbg_exe_wrapper_prefix(), bin, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (;;) {
		if (n + 4096 > cap)
			out = realloc(out, cap *= 2);
		size_t r = fread(out + n, 1, 4096, p);
		if (r == 0)
			break;
		n += r;
	}
	out[n] = '\0';
	*status = pclose(p);
	return out;
}

/* The output with every run of spaces squeezed to one. */
static char *squeeze(const char *s)
{
	char *o = malloc(strlen(s) + 1), *w = o;
	for (; *s; s++)
		if (!(*s == ' ' && w > o && w[-1] == ' '))
			*w++ = *s;
	*w = '\0';
	return o;
}

static void test_cli_tables(void **state)
{
	int st;
	char *out = run("inspect --layers --operations " V2_DIR "/face_detector_nbg_int16.nb", &st);
	char *sq = squeeze(out);
	assert_int_equal(st, 0);
	assert_non_null(strstr(sq, "Layers (55 records of 76 bytes at offset 1408):"));
	assert_non_null(strstr(sq, "[ 0] ConvolutionReluPoolingLayer2 208 1 1 2\n"));
	assert_non_null(strstr(sq, "[ 54] TensorTranspose 185 1 1 97\n"));
	assert_non_null(strstr(sq, "Operations (57 records of 32 bytes at offset 5588):"));
	assert_non_null(strstr(sq, "[ 0] INIT - - 0 0+1 0 - \n"));
	assert_non_null(strstr(sq, "[ 1] NN 0 0 1 1+5 0 0 ConvolutionReluPoolingLayer2\n"));
	assert_non_null(strstr(sq, "[ 5] SH 0 4 5 23+3 0 4 TensorPadOperation2\n"));
	assert_non_null(strstr(sq, "SH operations (11 records of 8 bytes"));
	assert_non_null(strstr(sq, "PPU_INSTR_TABLE 11 entries -> PPU_INSTR 5632 bytes: 0 out of "
				   "bounds, 2112 bytes uncovered in 11 ranges"));
	assert_non_null(strstr(sq, " 0 do not hold\n"));
	assert_null(strstr(sq, "Patches ("));
	assert_null(strstr(sq, "Graph findings"));
	free(sq);
	free(out);

	out = run("inspect --operations --patches " V1_DIR "/10003_88_face_age_88.nb", &st);
	sq = squeeze(out);
	assert_int_equal(st, 0);
	assert_non_null(strstr(sq, "Operations (93 records of 24 bytes"));
	assert_non_null(strstr(sq, "[ 1] TP 0 0 43 2+4 - - TensorTranspose\n"));
	assert_non_null(strstr(sq, "[ 92] END - - 165 - - - \n"));
	/* patch 2: [0, 12, 0, 0, 20110144, 1], first of operation 1 (2+4) */
	assert_non_null(strstr(sq, "Patches (670 records of 24 bytes"));
	assert_non_null(strstr(sq, "[ 2] 1 STATE 12 COMMAND 0 20110144 1 -\n"));
	assert_non_null(strstr(sq, "Graph findings (8, not failures):"));
	assert_non_null(strstr(sq, "layer-operation-records-differ"));
	assert_null(strstr(sq, "Layers ("));
	free(sq);
	free(out);
}

static void test_cli_json(void **state)
{
	int st;
	char *out = run("inspect --json --layers --patches " V2_DIR "/face_detector_nbg_int16.nb", &st);
	json_t *j = json_loads(out, 0, NULL);
	assert_int_equal(st, 0);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "valid")));
	assert_non_null(json_object_get(j, "sections")); /* the core report is still there */
	json_t *l0 = json_array_get(json_object_get(j, "layers"), 0);
	assert_string_equal(json_string_value(json_object_get(l0, "name")),
			    "ConvolutionReluPoolingLayer2");
	assert_int_equal(json_integer_value(json_object_get(l0, "node_id")), 208);
	assert_int_equal(json_array_size(json_object_get(j, "patches")), 315);
	assert_int_equal(json_array_size(json_object_get(j, "tables")), 3);
	assert_int_equal(json_array_size(json_object_get(j, "graph_findings")), 0);
	assert_null(json_object_get(j, "operations"));
	json_t *gr = json_object_get(j, "graph");
	assert_int_equal(json_integer_value(json_object_get(gr, "operation_count")), 57);
	json_decref(j);
	free(out);

	out = run("inspect --json " V2_DIR "/face_detector_nbg_int16.nb", &st);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_null(json_object_get(j, "layers"));
	assert_null(json_object_get(j, "graph"));
	json_decref(j);
	free(out);
}

static void test_cli_summary(void **state)
{
	int st;
	char *out = run("inspect " V2_DIR "/face_detector_nbg_int16.nb", &st);
	char *sq = squeeze(out);
	assert_int_equal(st, 0);
	assert_non_null(strstr(sq, "\nGraph:\n"));
	assert_non_null(strstr(sq, "Layers: 55 (76-byte records)\n"));
	assert_non_null(strstr(sq, "Operations: 57 (32-byte records): SH 11, NN 40, NT 5, INIT 1\n"));
	assert_non_null(strstr(sq, "First 8 of 55 layers:"));
	assert_non_null(strstr(sq, "[ 7] Max Pooling 108 1 1 13\n"));
	/* the layer table stops at 8 (the network table, after it, lists them all) */
	*strstr(sq, "Network (") = '\0';
	assert_null(strstr(sq, "[ 8] TensorPadOperation2"));
	assert_non_null(strstr(sq, "nbg inspect --layers"));
	free(sq);
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_synth_valid),
		cmocka_unit_test(test_synth_broken_references),
		cmocka_unit_test(test_synth_unknown_values_kept),
		cmocka_unit_test(test_synth_record_sizes),
		cmocka_unit_test(test_synth_odd_sections),
		cmocka_unit_test(test_decode_refuses_bad_model),
	};
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_v2_corpus),
		cmocka_unit_test(test_v1_corpus),
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_cli_tables),
		cmocka_unit_test(test_cli_json),
		cmocka_unit_test(test_cli_summary),
	};
	return tc_main(argc, argv, "test_graph", tests, TC_COUNT(tests), corpus, TC_COUNT(corpus),
		       NULL, NULL);
}

/*
 * test_cpu_fields.c - the command fields as the CPU backend reads them: by
 * id (nbg_cmd_nn(cmd, NBG_NNF_...), nbg_cmd_tp(cmd, NBG_TPF_...),
 * analysis/graph/commands_lib.h), never by key, so that a misspelt field
 * does not compile.  Checked against the field table the library exports
 * (nbg_command_fields: the word, first bit, width and address shift of
 * each field, doc/commands.md), the independent source here:
 *
 *   - each id is the index of its own key in the table: the id list the
 *     accessors are generated from (commands_fields.h) gives, for every
 *     id, the key, word, first bit, width and shift of the table's row at
 *     that index, and nbg_command_field_index finds the key there;
 *   - reading by id returns the bits the table places: for every field of
 *     both engines, a synthesized model whose command holds all ones in
 *     that field's bits (written by this test from the table's word, first
 *     bit and width, tests/cpu_model.c) is decoded, and the accessor of
 *     that id reads all ones of its width, the accessor of every field
 *     whose bits do not overlap it reads 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nbg/commands.h"
#include "nbg/graph.h"

#include "analysis/graph/commands_lib.h"
#include "cpu_model.h"

typedef struct {
	int id;
	const char *key;
	unsigned word, bit_lo, bit_count, shift;
} id_row;

#define ROW_NN(ID, key, word, lo, n, shift, ...) { NBG_NNF_##ID, key, word, lo, n, shift },
#define ROW_TP(ID, key, word, lo, n, shift, ...) { NBG_TPF_##ID, key, word, lo, n, shift },
static const id_row nn_ids[] = { NBG_NN_FIELDS(ROW_NN) };
static const id_row tp_ids[] = { NBG_TP_FIELDS(ROW_TP) };

static void check_rows(unsigned engine, const id_row *ids, size_t n)
{
	size_t count = 0;
	const nbg_cmd_field *t = nbg_command_fields(engine, &count);
	assert_int_equal(count, n);
	for (size_t i = 0; i < n; i++) {
		const id_row *r = &ids[i];
		assert_true(r->id >= 0 && (size_t)r->id < count);
		const nbg_cmd_field *f = &t[r->id];
		if (strcmp(f->key, r->key) || f->word != r->word || f->bit_lo != r->bit_lo ||
		    f->bit_count != r->bit_count || f->shift != r->shift)
			fail_msg("engine %u id %d (%s, word %u bits %u+%u shift %u): the table's row is %s, "
				 "word %u bits %u+%u shift %u", engine, r->id, r->key, r->word, r->bit_lo,
				 r->bit_count, r->shift, f->key, f->word, f->bit_lo, f->bit_count, f->shift);
		assert_int_equal(nbg_command_field_index(engine, r->key), r->id);
	}
}

static void test_ids_index_their_rows(void **state)
{
	(void)state;
	check_rows(NBG_CMD_NN, nn_ids, sizeof(nn_ids) / sizeof(nn_ids[0]));
	check_rows(NBG_CMD_TP, tp_ids, sizeof(tp_ids) / sizeof(tp_ids[0]));
}

static int overlap(const nbg_cmd_field *a, const nbg_cmd_field *b)
{
	return a->word == b->word && a->bit_lo < b->bit_lo + b->bit_count && b->bit_lo < a->bit_lo + a->bit_count;
}

/* The decoded command of a one-operation model (NN or TP) whose field f
 * holds all ones; NULL when it does not decode.  *m, *g, *c to free. */
static const nbg_cmd *decoded(unsigned engine, const nbg_cmd_field *f, uint8_t **file, nbg_model **m,
			      nbg_graph **g, nbg_commands **c)
{
	cm_model *cm = calloc(1, sizeof(*cm));
	assert_non_null(cm);
	cm->target = 0xe8;
	cm->ins = cm->outs = 1;
	cm->in[0] = cm->out[0] = (cm_io){ { 64, 1, 1, 1 }, 1, 2 };
	cm_op *op = cm_add_op(cm, engine == NBG_CMD_NN ? NBG_GRAPH_OP_NN : NBG_GRAPH_OP_TP, "Layer");
	cm_field(op, f->key, f->bit_count >= 32 ? UINT32_MAX : (1u << f->bit_count) - 1);
	size_t size = 0;
	*file = cm_build(cm, &size);
	free(cm);
	nbg_error e;
	*g = NULL;
	*c = NULL;
	if (nbg_parse(*file, size, NULL, m, &e) != NBG_OK || nbg_graph_decode(*m, g, &e) != NBG_OK ||
	    nbg_commands_decode(*m, *g, c, &e) != NBG_OK)
		fail_msg("field %s: the synthesized model does not decode: %s", f->key, e.message);
	return nbg_commands_at(*c, engine, 0);
}

static uint32_t read_by_id(const nbg_cmd *cmd, unsigned engine, int id)
{
	return engine == NBG_CMD_NN ? nbg_cmd_nn(cmd, (enum nbg_nn_fid)id) : nbg_cmd_tp(cmd, (enum nbg_tp_fid)id);
}

static void check_reads(unsigned engine)
{
	size_t n = 0;
	const nbg_cmd_field *t = nbg_command_fields(engine, &n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *file = NULL;
		nbg_model *m = NULL;
		nbg_graph *g = NULL;
		nbg_commands *c = NULL;
		const nbg_cmd *cmd = decoded(engine, &t[i], &file, &m, &g, &c);
		assert_non_null(cmd);
		uint32_t ones = t[i].bit_count >= 32 ? UINT32_MAX : (1u << t[i].bit_count) - 1;
		if (read_by_id(cmd, engine, (int)i) != ones)
			fail_msg("%s (word %u bits %u+%u): read by id as 0x%x, written 0x%x", t[i].key, t[i].word,
				 t[i].bit_lo, t[i].bit_count, read_by_id(cmd, engine, (int)i), ones);
		for (size_t j = 0; j < n; j++)
			if (j != i && !overlap(&t[i], &t[j]) && read_by_id(cmd, engine, (int)j))
				fail_msg("%s set: %s, whose bits it does not share, reads 0x%x", t[i].key, t[j].key,
					 read_by_id(cmd, engine, (int)j));
		nbg_commands_free(c);
		nbg_graph_free(g);
		nbg_model_free(m);
		free(file);
	}
}

static void test_nn_reads(void **state)
{
	(void)state;
	check_reads(NBG_CMD_NN);
}

static void test_tp_reads(void **state)
{
	(void)state;
	check_reads(NBG_CMD_TP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_index_their_rows),
		cmocka_unit_test(test_nn_reads),
		cmocka_unit_test(test_tp_reads),
	};
	return cmocka_run_group_tests_name("cpu-fields", tests, NULL, NULL);
}

/*
 * test_lookalike.c - files that are not NBGs but are often named .nb: each
 * kind built here from its format's documented header (or, for ELF, this
 * test program itself), parsed, and the bad-magic message checked to name
 * it; near misses of each kind must not be named.  The code stays
 * bad-magic, so scripts that test for it keep working.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "nbg/nbg.h"

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Parses b and returns the bad-magic message (static buffer). */
static const char *message_of(const uint8_t *b, size_t n)
{
	static nbg_error err;
	nbg_model *m = NULL;

	assert_int_equal(nbg_parse(b, n, NULL, &m, &err), NBG_E_BAD_MAGIC);
	assert_null(m);
	assert_int_equal(err.offset, 0);
	assert_string_equal(err.field, "magic");
	assert_non_null(strstr(err.message, "this is not an NBG file"));
	return err.message;
}

static void expect(const uint8_t *b, size_t n, const char *phrase)
{
	const char *msg = message_of(b, n);
	if (!strstr(msg, phrase))
		fail_msg("message lacks \"%s\": %s", phrase, msg);
}

static void expect_none(const uint8_t *b, size_t n)
{
	const char *msg = message_of(b, n);
	if (strstr(msg, "appears to be"))
		fail_msg("a near miss was named: %s", msg);
}

/* PKWARE APPNOTE 4.3.7: local file header, signature 0x04034b50, then
 * version, flags, method, time, date, CRC-32, sizes (all little-endian),
 * name length at +26, extra length at +28, the name at +30. */
static void test_zip(void **state)
{
	static const char name[] = "archive/data.pkl";
	uint8_t b[128] = { 'P', 'K', 3, 4, 20, 0 };
	put16(b + 26, sizeof(name) - 1);
	memcpy(b + 30, name, sizeof(name) - 1);
	expect(b, sizeof(b), "appears to be a ZIP archive (first entry \"archive/data.pkl\")");

	/* a name with a control byte and a quote is shown escaped */
	b[30] = 0x1b;
	b[31] = '"';
	expect(b, sizeof(b), "(first entry \"\\x1b\\x22chive/data.pkl\")");

	/* the end-of-central-directory record alone: an empty archive */
	uint8_t e[22] = { 'P', 'K', 5, 6 };
	expect(e, sizeof(e), "appears to be an empty ZIP archive");

	/* a name length past the end still names the archive, without a name */
	put16(b + 26, 1000);
	const char *msg = message_of(b, sizeof(b));
	assert_non_null(strstr(msg, "appears to be a ZIP archive;"));
	assert_null(strstr(msg, "first entry"));
	(void)state;
}

/* ELF (System V gABI): this test program is a real one. */
static void test_elf(void **state)
{
	size_t n;
	uint8_t *b = fx_read_file("/proc/self/exe", &n);
	assert_non_null(b);
	assert_memory_equal(b, "\x7f" "ELF", 4);
	/* e_ident[EI_CLASS] 2, [EI_DATA] 1 on x86-64; e_machine 62 */
	const char *want = b[4] == 2 ? "appears to be an ELF 64-bit little-endian"
				     : "appears to be an ELF 32-bit";
	expect(b, n, want);
	if (b[18] == 62 && b[19] == 0)
		expect(b, n, "for x86-64: a program or library");
	/* a shared object for AArch64, built by hand: e_type 3, e_machine 183 */
	uint8_t so[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	put16(so + 16, 3);
	put16(so + 18, 183);
	expect(so, sizeof(so), "appears to be an ELF 64-bit little-endian shared object for "
			       "AArch64");
	free(b);
	(void)state;
}

/* TensorFlow Lite: FlatBuffer root offset (u32) at 0, file identifier
 * "TFL3" at 4 (schema.fbs: file_identifier "TFL3"). */
static void test_tflite(void **state)
{
	uint8_t b[64] = { 0x1c, 0, 0, 0, 'T', 'F', 'L', '3' };
	expect(b, sizeof(b), "appears to be a TensorFlow Lite model");
	/* root offset outside the file: not a FlatBuffer */
	b[0] = 0xff;
	b[1] = 0xff;
	expect_none(b, sizeof(b));
	(void)state;
}

/* ONNX: a ModelProto written field by field as protobuf (onnx.proto):
 * ir_version = 8 (field 1, varint), producer_name = "pytorch" (2),
 * producer_version = "2.1" (3), graph (7) holding a name (GraphProto field
 * 2), opset_import (8) holding version 17 (OperatorSetIdProto field 2). */
static void test_onnx(void **state)
{
	static const uint8_t b[] = { 0x08, 0x08, 0x12, 7, 'p', 'y', 't', 'o', 'r', 'c', 'h',
				     0x1a, 3, '2', '.', '1', 0x3a, 3, 0x12, 1, 'g',
				     0x42, 2, 0x10, 17 };
	expect(b, sizeof(b), "appears to be an ONNX model (protobuf ModelProto, ir_version 8, "
			     "producer \"pytorch\")");

	uint8_t c[sizeof(b)];
	/* field 9 is no ModelProto field */
	memcpy(c, b, sizeof(b));
	c[2] = 9 << 3 | 2;
	expect_none(c, sizeof(c));
	/* producer_name's length past the end */
	memcpy(c, b, sizeof(b));
	c[3] = 100;
	expect_none(c, sizeof(c));
	/* ir_version 0 */
	memcpy(c, b, sizeof(b));
	c[1] = 0;
	expect_none(c, sizeof(c));
	/* no graph and no opset_import: only strings, not enough */
	expect_none(b, 16);
	(void)state;
}

/* RKNN: magic "RKNN"; an embedded NBG is located by its "VPMN". */
static void test_rknn(void **state)
{
	uint8_t b[256] = { 'R', 'K', 'N', 'N', 1, 0, 0, 0 };
	expect(b, sizeof(b), "appears to be an RKNN model (Rockchip's format, magic \"RKNN\"), "
			     "which nbgkit does not read");
	memcpy(b + 100, "VPMN", 4);
	expect(b, sizeof(b), "\"VPMN\" at offset 100 may begin an NBG embedded in it");
	expect(b, sizeof(b), "(tail -c +101)");
	(void)state;
}

/* Paddle-Lite's combined model (model_parser.cc, "Binary structure of
 * naive_buffer model"): u16 meta_version, char[16] opt_version, u64
 * topo_size, topo_data, param_data. */
static void test_paddle(void **state)
{
	uint8_t b[128] = { 0 };
	put16(b, 2);
	memcpy(b + 2, "v2.10", 5);
	b[18] = 64; /* topology: 64 of the 102 bytes after the 26-byte header */
	expect(b, sizeof(b), "appears to be a Paddle-Lite model (the .nb that Paddle-Lite's "
			     "opt tool writes: meta version 2, opt version \"v2.10\")");
	put16(b, 0);
	expect(b, sizeof(b), "meta version 0, opt version \"v2.10\"");

	/* near misses: meta version 3, a topology larger than the file, a
	 * version string without a digit or with a control byte */
	put16(b, 3);
	expect_none(b, sizeof(b));
	put16(b, 0);
	b[18] = 103;
	expect_none(b, sizeof(b));
	b[18] = 64;
	memcpy(b + 2, "vx.yz", 5);
	expect_none(b, sizeof(b));
	memcpy(b + 2, "v2\x01" "10", 5);
	expect_none(b, sizeof(b));
	(void)state;
}

/* Text and random-looking bytes are named nothing. */
static void test_unknown(void **state)
{
	static const char text[] = "project('nbgkit', 'c',\n  version : '0.1.0')\n";
	expect_none((const uint8_t *)text, sizeof(text) - 1);
	uint8_t b[512];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(b); i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
	b[0] = 0xee; /* not a magic of any kind, not a small meta version */
	b[1] = 0xee;
	expect_none(b, sizeof(b));
	(void)state;
}

/* The command line: same code and exit status, the kind named on stderr;
 * and the .adla hint, which comes from the name only (no public description
 * of the ADLA header exists to recognize its bytes by). */
static void put_bytes(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void test_cli(void **state)
{
	char dir[] = "/tmp/nbglook-XXXXXX", path[600];
	uint8_t b[128] = { 'P', 'K', 3, 4 };
	fx_run_result r;

	assert_non_null(mkdtemp(dir));
	put16(b + 26, 4);
	memcpy(b + 30, "x.nb", 4);
	snprintf(path, sizeof(path), "%s/model.nb", dir);
	put_bytes(path, b, sizeof(b));
	r = fx_run_nbg("", "inspect %s", path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "bad-magic at offset 0"));
	assert_non_null(strstr(r.err, "appears to be a ZIP archive (first entry \"x.nb\")"));
	fx_run_free(&r);
	r = fx_run_nbg("", "verify %s", path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, ": FAIL bad-magic at offset 0"));
	fx_run_free(&r);

	memset(b, 0x5a, sizeof(b));
	snprintf(path, sizeof(path), "%s/model.adla", dir);
	put_bytes(path, b, sizeof(b));
	r = fx_run_nbg("", "inspect %s", path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "bad-magic at offset 0"));
	assert_non_null(strstr(r.err, "the name ends in .adla"));
	assert_null(strstr(r.err, "appears to be"));
	fx_run_free(&r);
	/* the same bytes under another name: nothing is claimed */
	snprintf(path, sizeof(path), "%s/model.nb", dir);
	put_bytes(path, b, sizeof(b));
	r = fx_run_nbg("", "inspect %s", path);
	assert_int_equal(r.status, 1);
	assert_null(strstr(r.err, "adla"));
	fx_run_free(&r);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zip),    cmocka_unit_test(test_elf),
		cmocka_unit_test(test_tflite), cmocka_unit_test(test_onnx),
		cmocka_unit_test(test_rknn),   cmocka_unit_test(test_paddle),
		cmocka_unit_test(test_unknown), cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

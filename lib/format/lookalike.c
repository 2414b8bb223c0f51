/*
 * lookalike.c - what a file that is not an NBG appears to be.  Files named
 * *.nb that are not NBGs reach nbgkit every day: Paddle-Lite models, RKNN
 * models, and archives, programs, TensorFlow Lite and ONNX models passed by
 * mistake.  Each kind is recognized from its own documented header, never
 * from a guess, so the bad-magic message can name it (doc/lookalikes.md).
 */
#include <stdio.h>

#include "format/lookalike.h"

#define NAME_MAX_SHOWN 48

static uint16_t get16(const uint8_t *p, int big)
{
	return big ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Bytes from the file as text: printable ASCII but '\' and '"' kept, any
 * other byte as \xNN; at most NAME_MAX_SHOWN bytes, "..." after a cut. */
static void escape(char *out, size_t cap, const uint8_t *s, size_t n)
{
	size_t o = 0, shown = n > NAME_MAX_SHOWN ? NAME_MAX_SHOWN : n;

	for (size_t i = 0; i < shown && o + 5 < cap; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\' && s[i] != '"')
			out[o++] = (char)s[i];
		else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", s[i]);
	}
	if (shown < n && o + 4 < cap)
		o += (size_t)snprintf(out + o, cap - o, "...");
	out[o < cap ? o : cap - 1] = '\0';
}

/* RKNN (Rockchip): magic "RKNN".  RKNN v1 precompiled models carry an NBG
 * for the VeriSilicon core of the RK1808 / RK3399Pro: say where "VPMN" is. */
static int rknn(const uint8_t *d, size_t n, char *buf, size_t cap)
{
	const uint8_t *v;

	if (n < 4 || memcmp(d, "RKNN", 4))
		return 0;
	v = memmem(d + 4, n - 4, "VPMN", 4);
	if (!v)
		snprintf(buf, cap, "an RKNN model (Rockchip's format, magic \"RKNN\"), which "
				   "nbgkit does not read");
	else
		snprintf(buf, cap, "an RKNN model (Rockchip's format, magic \"RKNN\"); \"VPMN\" "
				   "at offset %zu may begin an NBG embedded in it (RKNN v1 "
				   "precompiled models carry one): cut the file from there "
				   "(tail -c +%zu) to inspect that part",
			 (size_t)(v - d), (size_t)(v - d) + 1);
	return 1;
}

/* ZIP (PKWARE APPNOTE 4.3.7): a local file header "PK\3\4" whose file name
 * length is at +26 and name at +30; "PK\5\6" is an empty archive's end. */
static int zip(const uint8_t *d, size_t n, char *buf, size_t cap)
{
	char name[4 * NAME_MAX_SHOWN + 8];

	if (n >= 22 && !memcmp(d, "PK\5\6", 4)) {
		snprintf(buf, cap, "an empty ZIP archive");
		return 1;
	}
	if (n < 30 || memcmp(d, "PK\3\4", 4))
		return 0;
	size_t len = get16(d + 26, 0);
	if (len && len <= n - 30) {
		escape(name, sizeof(name), d + 30, len);
		snprintf(buf, cap, "a ZIP archive (first entry \"%s\"); PyTorch .pt, Keras .keras "
				   "and Android .apk files are ZIP archives: an NBG inside one "
				   "is one of its entries", name);
	} else {
		snprintf(buf, cap, "a ZIP archive; PyTorch .pt, Keras .keras and Android .apk "
				   "files are ZIP archives: an NBG inside one is one of its entries");
	}
	return 1;
}

static const char *elf_machine(unsigned m)
{
	switch (m) {
	case 3: return "x86";
	case 8: return "MIPS";
	case 40: return "ARM";
	case 62: return "x86-64";
	case 183: return "AArch64";
	case 243: return "RISC-V";
	default: return NULL;
	}
}

/* ELF (System V gABI): "\x7fELF", class at 4 (1: 32-bit, 2: 64-bit), byte
 * order at 5 (1: little, 2: big), e_type at 16 and e_machine at 18. */
static int elf(const uint8_t *d, size_t n, char *buf, size_t cap)
{
	static const char *const types[] = { "file", "relocatable object", "executable",
					     "shared object", "core dump" };
	char mach[32] = "";

	if (n < 4 || memcmp(d, "\x7f" "ELF", 4))
		return 0;
	if (n < 20 || (d[4] != 1 && d[4] != 2) || (d[5] != 1 && d[5] != 2)) {
		snprintf(buf, cap, "an ELF file (a program or library), not a model");
		return 1;
	}
	unsigned type = get16(d + 16, d[5] == 2), machine = get16(d + 18, d[5] == 2);
	const char *mn = elf_machine(machine);
	if (mn)
		snprintf(mach, sizeof(mach), " for %s", mn);
	else
		snprintf(mach, sizeof(mach), " for machine %u", machine);
	snprintf(buf, cap, "an ELF %s-bit %s-endian %s%s: a program or library (such as a "
			   "vendor runtime library), not a model",
		 d[4] == 1 ? "32" : "64", d[5] == 1 ? "little" : "big",
		 type < 5 ? types[type] : "file", mach);
	return 1;
}

/* TensorFlow Lite: a FlatBuffer whose file identifier, bytes 4-7, is
 * "TFL3" (schema.fbs), after a root-table offset inside the file. */
static int tflite(const uint8_t *d, size_t n, char *buf, size_t cap)
{
	if (n < 8 || memcmp(d + 4, "TFL3", 4) || le32(d) < 8 || le32(d) >= n)
		return 0;
	snprintf(buf, cap, "a TensorFlow Lite model (FlatBuffer identifier \"TFL3\" at offset "
			   "4): an NBG is what the NPU vendor's compiler makes from such a model");
	return 1;
}

/*
 * Paddle-Lite's combined model, the *.nb that its opt tool writes
 * (lite/model_parser/model_parser.cc): u16 meta_version (0 naive buffer,
 * 1 and 2 flatbuffers), char[16] opt_version (the Paddle-Lite version
 * string), u64 topology size, the topology, the parameters.  Recognized
 * when the meta version is 0-2, the version is printable text with a digit
 * and the topology fits in the file.
 */
static int paddle(const uint8_t *d, size_t n, char *buf, size_t cap)
{
	char ver[4 * 16 + 8];
	size_t len = 0;
	int digit = 0;

	if (n < 26 || get16(d, 0) > 2)
		return 0;
	while (len < 16 && d[2 + len]) {
		if (d[2 + len] < 0x20 || d[2 + len] >= 0x7f)
			return 0;
		digit |= d[2 + len] >= '0' && d[2 + len] <= '9';
		len++;
	}
	uint64_t topo = get64(d + 18);
	if (len < 2 || !digit || topo == 0 || topo > n - 26)
		return 0;
	escape(ver, sizeof(ver), d + 2, len);
	snprintf(buf, cap, "a Paddle-Lite model (the .nb that Paddle-Lite's opt tool writes: meta "
			   "version %u, opt version \"%s\"), not a VeriSilicon NBG",
		 get16(d, 0), ver);
	return 1;
}

/* One protobuf varint at *pos (at most 10 bytes); 0 when it runs past n. */
static int varint(const uint8_t *d, size_t n, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*pos >= n)
			return 0;
		uint8_t b = d[(*pos)++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 1;
		}
	}
	return 0;
}

/* The wire type of each ModelProto field (onnx.proto), -1 for numbers it
 * does not define. */
static int onnx_wire_type(uint64_t field)
{
	switch (field) {
	case 1: case 5: return 0;  /* ir_version, model_version */
	case 2: case 3: case 4: case 6: case 7: case 8: case 14: case 20: case 25: return 2;
	default: return -1;
	}
}

/*
 * ONNX: a protobuf ModelProto.  Recognized conservatively: the first field
 * is ir_version (field 1, a varint of 1 to 15), and every field up to the
 * graph (field 7) or at most 64 fields is a ModelProto field with its wire
 * type and a length inside the file; a graph or an opset_import (field 8)
 * must be among them.
 */
static int onnx(const uint8_t *d, size_t n, char *buf, size_t cap)
{
	size_t pos = 1, prod_len = 0;
	const uint8_t *prod = NULL;
	uint64_t ir, tag, v;
	int structure = 0;
	char name[4 * NAME_MAX_SHOWN + 8];

	if (n < 2 || d[0] != 0x08 || !varint(d, n, &pos, &ir) || ir < 1 || ir > 15)
		return 0;
	for (int fields = 0; fields < 64 && pos < n; fields++) {
		if (!varint(d, n, &pos, &tag) || onnx_wire_type(tag >> 3) != (int)(tag & 7))
			return 0;
		if (!varint(d, n, &pos, &v))
			return 0;
		if ((tag & 7) == 0)
			continue;
		if (v > n - pos)
			return 0;
		if (tag >> 3 == 2) {
			prod = d + pos;
			prod_len = (size_t)v;
		}
		structure |= tag >> 3 == 7 || tag >> 3 == 8;
		pos += (size_t)v;
		if (tag >> 3 == 7)
			break;
	}
	if (!structure)
		return 0;
	if (prod && prod_len) {
		escape(name, sizeof(name), prod, prod_len);
		snprintf(buf, cap, "an ONNX model (protobuf ModelProto, ir_version %u, producer "
				   "\"%s\"): an NBG is what the NPU vendor's compiler makes from "
				   "such a model", (unsigned)ir, name);
	} else {
		snprintf(buf, cap, "an ONNX model (protobuf ModelProto, ir_version %u): an NBG "
				   "is what the NPU vendor's compiler makes from such a model",
			 (unsigned)ir);
	}
	return 1;
}

nbg_lookalike_kind nbg_lookalike(const uint8_t *data, size_t size, char *buf, size_t bufsize)
{
	if (!buf || !bufsize)
		return NBG_LOOKALIKE_NONE;
	buf[0] = '\0';
	if (!data)
		return NBG_LOOKALIKE_NONE;
	if (rknn(data, size, buf, bufsize))
		return NBG_LOOKALIKE_RKNN;
	if (zip(data, size, buf, bufsize))
		return NBG_LOOKALIKE_ZIP;
	if (elf(data, size, buf, bufsize))
		return NBG_LOOKALIKE_ELF;
	if (tflite(data, size, buf, bufsize))
		return NBG_LOOKALIKE_TFLITE;
	if (paddle(data, size, buf, bufsize))
		return NBG_LOOKALIKE_PADDLE;
	if (onnx(data, size, buf, bufsize))
		return NBG_LOOKALIKE_ONNX;
	buf[0] = '\0';
	return NBG_LOOKALIKE_NONE;
}

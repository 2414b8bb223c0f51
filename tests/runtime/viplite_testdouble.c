/*
 * viplite_testdouble.c - a TEST DOUBLE standing in for VIPLite
 * (libVIPlite.so / libNBGlinker.so) on machines without an NPU.  Not vendor
 * code: it exports the vip_* entry points with the documented types,
 * enforces the lifecycle (init before use, prepare before binding, every
 * buffer destroyed before its network, the network before vip_destroy),
 * checks each 48-byte buffer-create struct against the NBG's own records
 * (it parses the model with libnbg) and aborts on any violation.
 *
 * Outputs: byte j of output k is (j * 7 + k + sum of all input bytes) & 0xff.
 * VIPLITE_TD (comma list) picks failures: init-fail, hw-fail, create-fail
 * (status from VIPLITE_TD_STATUS, default -4), prepare-fail, buffer-fail,
 * map-null, run-timeout, invalidate-fail, io-count, crash-run (SIGSEGV inside
 * vip_run_network), hang-run (vip_run_network never returns).
 * VIPLITE_TD_READY=PATH: hang-run first writes "PID\n" (its process id) to
 * PATH (a FIFO the test reads), so a test knows the run is inside
 * vip_run_network and which process holds it.
 * VIPLITE_TD_CID sets the CID (default 0x1000003b).  vip_query_hardware
 * reports 1 device with 1 core.
 * VIPLITE_TD_STATE=FILE: after every call that takes or releases something,
 * FILE is rewritten with what is held ("init=I net=N buffers=B mapped=M"),
 * so a test sees after the run that everything taken was given back.
 * -DTD_OMIT_PREPARE builds a variant without vip_prepare_network;
 * -DTD_VERSION=0x00010d00u one that reports VIPLite 1.13's version word
 * (default 0x00020003, 2.0.3).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbg/nbg.h"

#define X __attribute__((visibility("default")))

static int inited, prepared, ran, bound_in, bound_out;
static nbg_model *model;
static uint8_t *model_copy;
static int live_buffers, live_net, live_maps;
static uint64_t input_sum;

typedef struct tbuf {
	uint32_t magic, size;
	int is_out;
	uint32_t index;
	int mapped;
	uint8_t *data;
} tbuf;

static void violation(const char *what)
{
	fprintf(stderr, "viplite-testdouble: violation: %s\n", what);
	abort();
}

/* What is held, for the test (VIPLITE_TD_STATE above). */
static void record(void)
{
	const char *path = getenv("VIPLITE_TD_STATE");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "w");
	if (!f)
		violation("VIPLITE_TD_STATE cannot be written");
	fprintf(f, "init=%d net=%d buffers=%d mapped=%d\n", inited, live_net, live_buffers, live_maps);
	if (fclose(f) != 0)
		violation("VIPLITE_TD_STATE cannot be written");
}

/* VIPLITE_TD_READY above: a handshake, never a failure of the double. */
static void say_ready(void)
{
	const char *path = getenv("VIPLITE_TD_READY");
	int fd = path && *path ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "viplite-testdouble: VIPLITE_TD_READY not written\n");
	close(fd);
}

static int mode(const char *m)
{
	const char *v = getenv("VIPLITE_TD");
	size_t n = strlen(m);
	for (const char *p = v; p && (p = strstr(p, m)) != NULL; p += n)
		if ((p == v || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

#ifndef TD_VERSION
#define TD_VERSION 0x00020003u
#endif

X uint32_t vip_get_version(void);
uint32_t vip_get_version(void) { return TD_VERSION; }

X int32_t vip_init(void);
int32_t vip_init(void)
{
	if (inited)
		violation("vip_init twice");
	if (mode("init-fail"))
		return -2;
	inited = 1;
	record();
	return 0;
}

X int32_t vip_destroy(void);
int32_t vip_destroy(void)
{
	if (!inited)
		violation("vip_destroy without vip_init");
	if (live_buffers || live_net)
		violation("vip_destroy with live buffers or a live network");
	inited = 0;
	record();
	return 0;
}

X int32_t vip_query_hardware(int32_t prop, uint32_t size, void *out);
int32_t vip_query_hardware(int32_t prop, uint32_t size, void *out)
{
	if (!inited || !out)
		violation("vip_query_hardware before init or without a result");
	if (mode("hw-fail"))
		return -11;
	const char *c = getenv("VIPLITE_TD_CID");
	uint32_t v = prop == 0 ? (c ? (uint32_t)strtoul(c, NULL, 0) : 0x1000003bu) : 1;
	if (size < 4 || prop > 2)
		violation("vip_query_hardware: bad property or size");
	memcpy(out, &v, 4);
	return 0;
}

X int32_t vip_create_network(const void *data, uint32_t size, int32_t type, void **net);
int32_t vip_create_network(const void *data, uint32_t size, int32_t type, void **net)
{
	if (!inited || !data || !net || type != 2)
		violation("vip_create_network: not initialized, NULL or not from memory");
	if (mode("create-fail")) {
		const char *s = getenv("VIPLITE_TD_STATUS");
		return s ? (int32_t)strtol(s, NULL, 0) : -4;
	}
	model_copy = malloc(size);
	memcpy(model_copy, data, size);
	nbg_error e;
	if (nbg_parse(model_copy, size, NULL, &model, &e) != NBG_OK)
		violation("vip_create_network: the bytes are not a valid NBG");
	live_net = 1;
	*net = &live_net;
	record();
	return 0;
}

static void check_net(void *net, const char *fn)
{
	if (net != &live_net || !live_net) {
		fprintf(stderr, "%s: ", fn);
		violation("not the live network");
	}
}

X int32_t vip_query_network(void *net, int32_t prop, void *out);
int32_t vip_query_network(void *net, int32_t prop, void *out)
{
	check_net(net, "vip_query_network");
	uint32_t v = 0;
	if (prop == 1)
		v = (uint32_t)nbg_model_input_count(model) + (mode("io-count") ? 1u : 0u);
	else if (prop == 2)
		v = (uint32_t)nbg_model_output_count(model);
	else if (prop == 7) {
		uint32_t prof[2] = { 1234, 567890 };
		if (!ran)
			violation("profiling queried before a run");
		memcpy(out, prof, 8);
		return 0;
	} else
		violation("vip_query_network: unexpected property");
	memcpy(out, &v, 4);
	return 0;
}

X int32_t vip_set_network(void *net, int32_t prop, void *value);
int32_t vip_set_network(void *net, int32_t prop, void *value)
{
	check_net(net, "vip_set_network");
	if (prepared || prop != 68 || !value)
		violation("vip_set_network after prepare or not the time-out");
	return 0;
}

#ifndef TD_OMIT_PREPARE
X int32_t vip_prepare_network(void *net);
int32_t vip_prepare_network(void *net)
{
	check_net(net, "vip_prepare_network");
	if (mode("prepare-fail"))
		return -7;
	prepared = 1;
	return 0;
}
#endif

static const nbg_io *rec(int out, uint32_t i)
{
	if (i >= (out ? nbg_model_output_count(model) : nbg_model_input_count(model)))
		violation("index out of range");
	return out ? nbg_model_output_at(model, i) : nbg_model_input_at(model, i);
}

static int32_t query_io(int out, void *net, uint32_t i, int32_t prop, void *v)
{
	check_net(net, "vip_query_input/output");
	if (!prepared)
		violation("tensor queried before prepare");
	const nbg_io *io = rec(out, i);
	if (prop == 1)
		memcpy(v, &io->dim_count, 4);
	else if (prop == 2)
		memcpy(v, io->dims, 6 * 4);
	else if (prop == 3)
		memcpy(v, &io->data_format, 4);
	else
		violation("unexpected tensor property");
	return 0;
}

X int32_t vip_query_input(void *net, uint32_t i, int32_t prop, void *v);
int32_t vip_query_input(void *net, uint32_t i, int32_t prop, void *v) { return query_io(0, net, i, prop, v); }
X int32_t vip_query_output(void *net, uint32_t i, int32_t prop, void *v);
int32_t vip_query_output(void *net, uint32_t i, int32_t prop, void *v) { return query_io(1, net, i, prop, v); }

/* The 48-byte params must describe some input or output record exactly. */
X int32_t vip_create_buffer(const uint8_t *p, uint32_t size, void **out);
int32_t vip_create_buffer(const uint8_t *p, uint32_t size, void **out)
{
	if (!inited || !p || !out || size != 48)
		violation("vip_create_buffer: params size is not 48");
	if (mode("buffer-fail"))
		return -5;
	uint32_t w[12];
	memcpy(w, p, 48);
	for (int out_side = 0; out_side < 2; out_side++)
		for (uint32_t i = 0; i < (out_side ? nbg_model_output_count(model) : nbg_model_input_count(model)); i++) {
			const nbg_io *io = rec(out_side, i);
			int same = w[0] == io->dim_count && w[7] == io->data_format && w[8] == io->quant_format &&
				   w[11] == 0;
			for (uint32_t d = 0; same && d < 6; d++)
				same = w[1 + d] == (d < io->dim_count ? io->dims[d] : 0);
			if (same && io->quant_format == 1)
				same = (int32_t)w[9] == io->fixed_point_pos;
			if (!same)
				continue;
			tbuf *b = calloc(1, sizeof(*b));
			b->magic = 0x42554654u;
			b->size = (uint32_t)io->byte_size;
			b->data = calloc(1, b->size + 1);
			live_buffers++;
			*out = b;
			record();
			return 0;
		}
	violation("vip_create_buffer: the params match no I/O record of the NBG");
	return -3;
}

static tbuf *buf(void *b)
{
	tbuf *t = b;
	if (!t || t->magic != 0x42554654u)
		violation("not a live buffer");
	return t;
}

X uint32_t vip_get_buffer_size(void *b);
uint32_t vip_get_buffer_size(void *b) { return buf(b)->size; }
X void *vip_map_buffer(void *b);
void *vip_map_buffer(void *b)
{
	if (mode("map-null"))
		return NULL; /* not mapped */
	if (!buf(b)->mapped)
		live_maps++;
	buf(b)->mapped = 1;
	record();
	return buf(b)->data;
}
X int32_t vip_unmap_buffer(void *b);
int32_t vip_unmap_buffer(void *b)
{
	if (!buf(b)->mapped)
		violation("unmap of a buffer that is not mapped");
	buf(b)->mapped = 0;
	live_maps--;
	record();
	return 0;
}
X int32_t vip_destroy_buffer(void *b);
int32_t vip_destroy_buffer(void *b)
{
	tbuf *t = buf(b);
	if (t->mapped)
		violation("destroy of a mapped buffer");
	t->magic = 0;
	free(t->data);
	free(t);
	live_buffers--;
	record();
	return 0;
}

X int32_t vip_flush_buffer(void *b, int32_t op);
int32_t vip_flush_buffer(void *b, int32_t op)
{
	tbuf *t = buf(b);
	if (op != 1 && op != 2)
		violation("flush operation is neither 1 nor 2");
	if (op == 2 && mode("invalidate-fail"))
		return -2;
	if (op == 1)
		for (uint32_t j = 0; j < t->size; j++)
			input_sum += t->data[j];
	return 0;
}

static tbuf *out_bufs[16];

static int32_t set_io(void *net, uint32_t i, void *b, int out)
{
	check_net(net, "vip_set_input/output");
	if (!prepared)
		violation("buffer bound before prepare");
	tbuf *t = buf(b);
	t->is_out = out;
	t->index = i;
	if (out && i < 16)
		out_bufs[i] = t;
	if (out)
		bound_out++;
	else
		bound_in++;
	return 0;
}

X int32_t vip_set_input(void *net, uint32_t i, void *b);
int32_t vip_set_input(void *net, uint32_t i, void *b) { return set_io(net, i, b, 0); }
X int32_t vip_set_output(void *net, uint32_t i, void *b);
int32_t vip_set_output(void *net, uint32_t i, void *b) { return set_io(net, i, b, 1); }

X int32_t vip_run_network(void *net);
int32_t vip_run_network(void *net)
{
	check_net(net, "vip_run_network");
	if (!prepared || (size_t)bound_in != nbg_model_input_count(model) || (size_t)bound_out != nbg_model_output_count(model))
		violation("run before prepare or before every input and output was bound");
	if (mode("crash-run"))
		raise(SIGSEGV);
	if (mode("hang-run"))
		say_ready();
	while (mode("hang-run"))
		sleep(1); /* a driver that never answers: only the caller's time-out ends this */
	if (mode("run-timeout"))
		return -1;
	ran = 1;
	for (uint32_t k = 0; k < nbg_model_output_count(model) && k < 16; k++)
		for (uint32_t j = 0; j < out_bufs[k]->size; j++)
			out_bufs[k]->data[j] = (uint8_t)(j * 7 + k + input_sum);
	return 0;
}

X int32_t vip_finish_network(void *net);
int32_t vip_finish_network(void *net)
{
	check_net(net, "vip_finish_network");
	return 0;
}

X int32_t vip_destroy_network(void *net);
int32_t vip_destroy_network(void *net)
{
	check_net(net, "vip_destroy_network");
	if (live_buffers)
		violation("network destroyed before its buffers");
	live_net = 0;
	nbg_model_free(model);
	free(model_copy);
	model = NULL;
	record();
	return 0;
}

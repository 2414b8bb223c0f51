/*
 * report_text.h - the look of the human reports, shared by the v2, v1 and
 * graph parts: aligned "  Key:  value" lines, file text shown as printable
 * ASCII with every other byte as \xNN.
 */
#ifndef NBG_REPORT_TEXT_H
#define NBG_REPORT_TEXT_H

#include <stdio.h>

#include "common/model.h"
#include "nbg/decoded.h"
#include "nbg/graph.h"

/* The graph and the network parts of the default report, from a decoded
 * model (text_graph.c, text_commands.c); nbg_text_graph_summary and
 * nbg_text_commands_summary print them for a model. */
void nbg_text_graph_summary_decoded(FILE *out, nbg_decoded *d)
	__attribute__((visibility("hidden")));
void nbg_text_commands_summary_decoded(FILE *out, nbg_decoded *d)
	__attribute__((visibility("hidden")));
/* The Network table of the network view (text_network.c). */
void nbg_text_network_decoded(FILE *out, nbg_decoded *d) __attribute__((visibility("hidden")));
/* part(out, d) with d a decoded model of m made for it alone (without one,
 * out of memory, the part says it decoded nothing). */
static inline void nbg_text_decoded_part(FILE *out, const nbg_model *m,
					 void (*part)(FILE *, nbg_decoded *))
{
	nbg_decoded *d = NULL;

	nbg_decoded_new(m, &d, NULL);
	part(out, d);
	nbg_decoded_free(d);
}

/* The per-operation sizes table printed after the operations (text_memory.c). */
void nbg_text_graph_sizes(FILE *out, const nbg_model *m, const nbg_graph *g)
	__attribute__((visibility("hidden")));

/* The parts of nbg_text_report (report.h) after the header: the v1 part
 * (prefix, strides, opaque bytes; text_v1.c), the graph summary (counts,
 * tables, relation totals and the first layers; text_graph.c) and the
 * per-layer summary of the commands (text_commands.c).  The last two
 * decode what they need themselves. */
void nbg_text_v1(FILE *out, const nbg_model *m) __attribute__((visibility("hidden")));
void nbg_text_graph_summary(FILE *out, const nbg_model *m) __attribute__((visibility("hidden")));
void nbg_text_commands_summary(FILE *out, const nbg_model *m)
	__attribute__((visibility("hidden")));

/* Two spaces, key and colon padded to 27 columns, the value. */
#define KV(out, key, ...)                          \
	do {                                       \
		fprintf(out, "  %-26s ", key ":"); \
		fprintf(out, __VA_ARGS__);         \
		fputc('\n', out);                  \
	} while (0)

static inline void nbg_text_put(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f)
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

#endif

/*
 * decoded.h - one decoded model: the graph, the commands, the weights, the
 * memory report and the ledger of a parsed model, each decoded the first
 * time it is asked for and kept (doc/api.md, "The decoded model").
 *
 * The decoders beneath (nbg_graph_decode, nbg_commands_decode,
 * nbg_weights_decode, nbg_mem_analyze, nbg_ledger_build_weights) build on
 * one another: the commands need the graph, the weights the graph and the
 * commands, the memory report the graph, the ledger the weights.  A getter
 * runs what its part needs, once: a second call returns the same pointer,
 * and a part that failed returns the same code and error again without
 * decoding anything.  A part whose input failed fails with that input's
 * error (the weights of a model whose graph is not decoded return the
 * graph's failure), as the chain of calls would.
 *
 * Ownership: the decoded model borrows the parsed model, which must outlive
 * it (and the bytes the model was parsed from, which the decoders read);
 * every result a getter returns belongs to the decoded model and stays
 * valid until nbg_decoded_free.  nbg_decoded_free reads neither the model
 * nor its bytes: it may come after them (a binding whose results outlive
 * the model they came from frees it last).
 *
 * Thread safety: a getter may decode and so writes to the object: one
 * thread at a time per decoded model (the results it returned may be read
 * from several threads at once).  Distinct decoded models are independent.
 */
#ifndef NBG_DECODED_H
#define NBG_DECODED_H

#include "nbg.h"
#include "commands.h"
#include "graph.h"
#include "ledger.h"
#include "memory.h"
#include "weights.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbg_decoded nbg_decoded;

/* A decoded model over m, nothing decoded yet.  Returns NBG_OK and the new
 * object in *out (free it with nbg_decoded_free), NBG_E_INVALID_ARGUMENT
 * without a model, or NBG_E_OUT_OF_MEMORY. */
NBG_API nbg_code nbg_decoded_new(const nbg_model *m, nbg_decoded **out, nbg_error *err);
/* Frees d and every result it kept; NULL does nothing. */
NBG_API void nbg_decoded_free(nbg_decoded *d);
/* The parsed model d decodes; NULL for NULL. */
NBG_API const nbg_model *nbg_decoded_model(const nbg_decoded *d);

/* Each getter: NBG_OK and the result in *out, or the failure of the
 * decoder (and of the first failing input) with *out NULL and err filled;
 * err may be NULL. */
/* nbg_graph_decode */
NBG_API nbg_code nbg_decoded_graph(nbg_decoded *d, const nbg_graph **out, nbg_error *err);
/* nbg_commands_decode on the graph */
NBG_API nbg_code nbg_decoded_commands(nbg_decoded *d, const nbg_commands **out,
				      nbg_error *err);
/* nbg_weights_decode on the graph and the commands */
NBG_API nbg_code nbg_decoded_weights(nbg_decoded *d, const nbg_weights **out, nbg_error *err);
/* nbg_mem_analyze on the graph */
NBG_API nbg_code nbg_decoded_memory(nbg_decoded *d, const nbg_mem_report **out,
				    nbg_error *err);
/* nbg_ledger_build_weights on the weights: the ledger `nbg ledger`, `nbg
 * reemit` and `nbg map` use, with the bytes of the decoded kernel streams as
 * decoded-coefficients.  A model whose weights do not decode has no ledger
 * here (the weights' failure); nbg_ledger_build makes the one without them. */
NBG_API nbg_code nbg_decoded_ledger(nbg_decoded *d, const nbg_ledger **out, nbg_error *err);

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_DECODED_H_STATIC_LINKING_ONLY)
#define NBG_DECODED_H_STATIC_LINKING_ONLY
#include "layers.h"
#ifdef __cplusplus
extern "C" {
#endif
/* nbg_network_build on the graph and the commands (nbg/layers.h). */
NBG_API nbg_code nbg_decoded_network(nbg_decoded *d, const nbg_network **out, nbg_error *err);
#ifdef __cplusplus
}
#endif
#endif

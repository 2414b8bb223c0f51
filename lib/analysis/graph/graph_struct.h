/*
 * graph_struct.h - the definition of the opaque nbg_graph (nbg/graph.h).
 * Callers outside libnbg use the nbg_graph_* accessors.  Never installed.
 */
#ifndef NBG_GRAPH_STRUCT_H
#define NBG_GRAPH_STRUCT_H

#include "nbg/graph.h"

struct nbg_graph {
	nbg_graph_summary sum;   /* counts and record geometry */

	nbg_graph_layer *layers;
	nbg_graph_operation *operations;
	nbg_graph_patch *patches;
	nbg_graph_sh_operation *sh_operations;
	nbg_graph_sw_operation *sw_operations;
	nbg_graph_hw_init *hw_inits;
	nbg_graph_ppu_param *ppu_params;

	nbg_graph_table tables[NBG_GRAPH_TABLE_COUNT];
	nbg_graph_relation relations[NBG_GRAPH_RELATION_MAX];
	nbg_graph_finding *findings;
};

#endif

/*
 * cmd_graph.h - `nbg graph`: the recovered network as DOT or SVG.
 */
#ifndef NBG_CMD_GRAPH_H
#define NBG_CMD_GRAPH_H

int cli_cmd_graph(int argc, char **argv);

#endif

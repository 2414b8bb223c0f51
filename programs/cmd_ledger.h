/*
 * cmd_ledger.h - `nbg ledger`, `nbg reemit` and `nbg map` (doc/ledger.md).
 */
#ifndef NBG_CMD_LEDGER_H
#define NBG_CMD_LEDGER_H

/* nbg ledger FILE [--json]: the byte-ownership table, views and totals. */
int cli_cmd_ledger(int argc, char **argv);
/* nbg reemit FILE OUT [--ledger LEDGER.json]: lossless re-emission, or refusal. */
int cli_cmd_reemit(int argc, char **argv);
/* nbg map FILE --svg OUT.svg [--title TEXT]: a picture of the file. */
int cli_cmd_map(int argc, char **argv);

#endif

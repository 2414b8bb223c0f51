/*
 * cmd_tensor.h - `nbg tensor`: tensor files converted with a model's own
 * I/O records, on any machine (no runtime, no device).
 */
#ifndef NBG_CMD_TENSOR_H
#define NBG_CMD_TENSOR_H

/* `nbg tensor --model M.nb (--input N | --output N) FILE -o OUT
 *  [--from raw|npy|text] [--to raw|npy|text] [--keep-dtype]`, or
 * `nbg tensor --model M.nb` to list the records.  argv[0] is the
 * subcommand name.  Returns 0 ok, 1 invalid model or a tensor file that
 * does not fit the record, 2 usage, 3 file I/O. */
int cli_cmd_tensor(int argc, char **argv);

#endif

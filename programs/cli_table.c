/*
 * cli_table.c - the one table of nbg's commands and options: each option's
 * name, value, help and destination.  cli_args.c parses every command's
 * arguments from it; the top-level help, `nbg COMMAND --help`, the man page
 * nbg(1) and the bash completion are printed from it (commands.c; doc/nbg.1
 * and completion/nbg are generated files, checked by
 * tests/check_cli_help.py).
 */
#include "cli.h"
#include "cli_opts.h"
#include "nbg/report.h"

/* Shorthands for the table below. */
#define FLAG(name, help, type, field) CLI_OPT_FLAG(name, NULL, help, type, field)
#define BITS(name, help, type, field, b) CLI_OPT_BITS(name, help, type, field, b)
#define STRING(name, arg, help, type, field) CLI_OPT_STRING(name, NULL, arg, help, type, field)
#define CHOICE(name, arg, help, type, field) CLI_OPT_CHOICE(name, arg, help, type, field)
#define TARGET(type)                                                                      \
	CLI_OPT_CUSTOM("--expect-target", "VALUE|NAME", "fail unless compiled for this target", \
		       type, target, cli_target_arg)

static const cli_command commands[] = {
	{ "inspect", "FILE...", "decode and validate files: human or JSON report",
	  "Decodes every structure of an NBG file (v1 or v2), checks every rule and checksum, "
	  "and prints the report: header, inputs and outputs, sections, notes and a summary "
	  "of the graph.  The table options (and --memory: the video and system memory a "
	  "runtime needs, per figure with its rule, input / memory-pool sharing, the "
	  "largest layers) add their tables after the report; --only "
	  "prints the tables alone.  Several files give one report each, in order, each "
	  "headed by its name (with --json, one array); the exit code is the worst.  "
	  "--format meta|vpm|jevois prints the inputs and outputs as ACUITY's "
	  "nbg_meta.json, vpm_run's lines or JeVois-Pro tensor specs (doc/export.md).  "
	  "--expect-target fails a file compiled for another target (target-mismatch, "
	  "exit 1) before it is parsed; VALUE is a number, NAME one that nbg targets "
	  "lists.  FILE - is standard input.  Exit 1 when a file is not a valid NBG.",
	  { FLAG("--json", "one JSON document (an array for several files)", cli_inspect_opts,
		 json),
	    BITS("--layers", "add the layer table", cli_inspect_opts, graph,
		 NBG_TEXT_GRAPH_LAYERS),
	    BITS("--operations", "add the operation table and SH/SW/hardware-init records",
		 cli_inspect_opts, graph, NBG_TEXT_GRAPH_OPERATIONS),
	    BITS("--patches", "add the patch table", cli_inspect_opts, graph,
		 NBG_TEXT_GRAPH_PATCHES),
	    FLAG("--commands", "add what each NN and TP operation computes", cli_inspect_opts,
		 commands),
	    FLAG("--network", "add the network's layers, whole tensors and edges with their "
		 "evidence", cli_inspect_opts, network),
	    FLAG("--memory", "add the memory a runtime needs, figure by figure",
		 cli_inspect_opts, memory),
	    FLAG("--weights", "add what each NN operation's kernel stream decodes to",
		 cli_inspect_opts, weights),
	    FLAG("--only", "the tables asked for without the report", cli_inspect_opts, only),
	    CHOICE("--format", "meta|vpm|jevois", "only the I/O records, as other tools read them",
		   cli_inspect_opts, format),
	    TARGET(cli_inspect_opts) } },
	{ "verify", "FILE...", "integrity check, one line per file",
	  "Checks structure and every checksum the format carries (section CRCs, the "
	  "header's file checksum, the v1 nbg_crc_sum where its version's rule is known) "
	  "and nothing else; one line per file, every mismatching checksum listed, and "
	  "in brackets what proved the bytes: \"verified: ...\" when checksums matched, "
	  "\"structure only: ...\" when the version carries no checksum, \"checksum "
	  "present, algorithm unknown: not checked\" otherwise.  --sha256-expect and "
	  "--manifest verify any version by its whole-file SHA-256.  FILE - is standard "
	  "input.  Exit 1 when any file fails.",
	  { CLI_OPT_FLAG("--quiet", "-q", "no line for a file that passes (also -q)",
			 cli_verify_opts, quiet),
	    FLAG("--status", "print nothing; the exit code says it", cli_verify_opts, status),
	    FLAG("--sha256", "also compute the whole-file SHA-256 and print it on the line",
		 cli_verify_opts, sha),
	    CLI_OPT_CUSTOM("--sha256-expect", "HEX",
			   "fail unless the file's SHA-256 is HEX (one FILE)", cli_verify_opts,
			   expect, cli_digest_arg),
	    STRING("--manifest", "FILE",
		   "fail unless each file's SHA-256 is the one this sha256sum manifest lists; "
		   "with no FILE operand, every file it lists",
		   cli_verify_opts, manifest_path),
	    FLAG("--require-checksum", "fail a file that no checksum (in the file or expected) proved",
		 cli_verify_opts, require),
	    TARGET(cli_verify_opts) } },
	{ "targets", "", "the known NPU targets: value, configuration, SoC",
	  "Lists the header target values that public sources name: the VeriSilicon "
	  "configuration name and the SoC or board where a source states it (unknown "
	  "otherwise).  inspect shows the same names beside a file's target.",
	  { FLAG("--json", "as a JSON array", cli_json_opts, json) } },
	{ "fields", "", "the field map: offsets, keys, evidence codes",
	  "Prints every field nbgkit decodes: structure, offset, width, public name, parser "
	  "key and the evidence behind it.",
	  { FLAG("--json", "as a JSON array", cli_json_opts, json) } },
	{ "codes", "", "every error code, its exit code and the rule behind it",
	  "Prints the stable error codes, the exit code each one gives and the rule it "
	  "stands for.",
	  { FLAG("--markdown", "as a Markdown table", cli_codes_opts, markdown) } },
	{ "diff", "A B", "what changed between two files, and whether it is explained",
	  "Compares two NBG files field by field and owner range by owner range, locates "
	  "each changed byte inside its structure, and tests whether B is exactly A with "
	  "dynamic-I/O payloads substituted (in memory; nothing is written).  The summary "
	  "comes first.  Exit as cmp: 0 identical, 1 different, 2 trouble (usage, a file "
	  "unreadable or invalid, a failed write); a file whose only failures are its "
	  "checksums is compared.",
	  { FLAG("--json", "one JSON document instead of text", cli_json_opts, json) } },
	{ "compare", "A B", "two tensors, dumps or run outputs: where they differ",
	  "Measures two tensors against each other: max |diff| of the stored values and of the "
	  "dequantized ones (where a scale is known), mean |diff|, cosine similarity and top-k "
	  "agreement.  A and B are two .npy files; two files of any kind nbg tensor reads (raw, "
	  ".npy, .tensor text, vpm_run's .dat) with --model and the record that gives them a "
	  "shape and type; two dumps of nbg run --dump (every tensor in execution order, and "
	  "the first operation that diverges beyond the tolerance); or two nbg run output "
	  "directories (output_<i>.npy).  --tolerance X is in stored units (codes), X% a "
	  "percentage of B's range.  Exit as cmp: 0 equal within the tolerance, 1 different, 2 "
	  "trouble (usage, a file unreadable or malformed, shapes that differ).",
	  { FLAG("--json", "one JSON document instead of text", cli_compare_opts, json),
	    STRING("--tolerance", "X|X%", "largest accepted difference, stored units or % of B's "
		   "range (default 0)", cli_compare_opts, tolerance),
	    STRING("--model", "MODEL.nb", "the model whose record gives two files their shape and type",
		   cli_compare_opts, model),
	    CLI_OPT_CUSTOM("--input", "N", "with --model: input record N", cli_compare_opts, input,
			   cli_record_arg),
	    CLI_OPT_CUSTOM("--output", "N", "with --model: output record N", cli_compare_opts,
			   output, cli_record_arg),
	    CLI_OPT_UINT("--top", "K", "the k of the top-k agreement (default 5)", cli_compare_opts,
			 top, 1, 1000) } },
	{ "corpus", "PATH...", "invariants across many files, one record each",
	  "Walks files, directories (for *.nb) and sha256sum manifests, measures every file "
	  "on N threads and aggregates the field map's corpus tables: families, versions, "
	  "targets, section sets, value ranges, failures by code.  The --json document is a "
	  "part that --merge combines with others into what one run over all their files "
	  "gives.  Exit 1 when a file is invalid, 3 when one cannot be read.",
	  { FLAG("--json", "one JSON document (a mergeable part) instead of text",
		 cli_corpus_opts, json),
	    FLAG("--quiet", "no line per file and no progress: only the report", cli_corpus_opts,
		 quiet),
	    CLI_OPT_UINT("--jobs", "N", "measure files on N threads (default: the CPUs)",
			 cli_corpus_opts, jobs, 1, 256),
	    STRING("--records", "FILE", "one JSON line per file (- for standard output)",
		   cli_corpus_opts, records),
	    STRING("--write-manifest", "FILE", "a sha256sum manifest of the files measured",
		   cli_corpus_opts, manifest),
	    FLAG("--follow", "follow symbolic links to directories", cli_corpus_opts, follow),
	    FLAG("--merge", "combine parts (PART.json...) written by --json", cli_corpus_opts,
		 merge) } },
	{ "weights", "FILE", "the weights and biases decoded from the kernel streams",
	  "Decodes every NN-engine operation's kernel (coefficient) stream, and every TP fully "
	  "connected layer's, with the format of its target (v7, v8a, v8b: Mesa etnaviv's "
	  "encoders and what the data shows beyond them; tp-fc, doc/weights.md) and prints per operation its kernel shape, whether its stream "
	  "decoded (or why not: the check that failed and its bit offset), the zero point, the "
	  "range of the stored codes and the share of zero weights.  --out DIR writes, per "
	  "decoded operation N, opN_weights.npy (the stored codes, [out, z, ky, kx]), "
	  "opN_bias.npy (int32, the zero-point correction undone), opN_scale.npy where the "
	  "stream carries per-channel floats, and DIR/weights.json (an operation sharing the "
	  "stream of one before it names that one's files), as one set: staged beside DIR and "
	  "put in its place whole, or nothing written (DIR new, empty or an earlier export).  "
	  "FILE - is standard input.  Exit 1 when the file is not a valid NBG, or when "
	  "--op names an operation whose stream did not decode.",
	  { STRING("--out", "DIR", "write the arrays as .npy files and weights.json into DIR",
		   cli_weights_opts, out),
	    FLAG("--json", "the weights document instead of the table", cli_weights_opts, json),
	    CLI_OPT_CUSTOM("--op", "N", "only operation N (its OPERATIONS record)",
			   cli_weights_opts, op, cli_op_arg),
	    FLAG("--float", "with --out: float32 (q - zp) x scale where a scale is known",
		 cli_weights_opts, dequantize) } },
	{ "ledger", "FILE...", "who owns every byte: class, owner, SHA-256",
	  "Splits a valid file into owner ranges that tile it with no gap and no overlap, "
	  "each with its class, owner and SHA-256, plus the views that own no bytes.  "
	  "Several files give one ledger each (with --json, one array).",
	  { FLAG("--json", "the ledger document (input of reemit --ledger)", cli_json_opts, json) } },
	{ "reemit", "FILE OUT", "rewrite FILE from its ledger, byte-identical",
	  "Writes OUT from the ledger's ranges after every range and the whole output hash "
	  "to what the ledger recorded; OUT appears complete or not at all (OUT - is "
	  "standard output, never a terminal) and is read back from the device before it "
	  "replaces anything.  A changed byte is refused (semantic-change-refused, exit 1).",
	  { STRING("--ledger", "L.json", "check against a ledger saved from the original",
		   cli_reemit_opts, ledger),
	    FLAG("--no-readback", "skip reading OUT back from the device (fsync and the write's "
		 "checks stay)", cli_reemit_opts, no_readback) } },
	{ "map", "FILE...", "a picture of the file's owner ranges (SVG)",
	  "Draws the ledger: one band to scale, one log-scaled band where small structures "
	  "stay visible, colored by class, labeled by owner.  One FILE: --svg OUT (- for "
	  "standard output).  Several: --svg DIR, an existing directory, where each is drawn "
	  "into NAME.svg (NAME.nb's name).",
	  { STRING("--svg", "OUT.svg|DIR", "where to write the picture (required)", cli_map_opts,
		   svg),
	    STRING("--title", "TEXT", "the picture's title", cli_map_opts, title),
	    FLAG("--png", "refused: convert the SVG with any converter", cli_map_opts, png) } },
	{ "graph", "FILE", "the network the NN and TP commands compute (DOT, SVG)",
	  "Draws the recovered network: layers as boxes with their operation types and shapes, "
	  "edges from the chained images.  DOT on standard output by default; SVG through "
	  "Graphviz's dot program.  OUT - is standard output.",
	  { STRING("--dot", "OUT.dot", "write the DOT document to OUT.dot", cli_graph_opts, dot),
	    STRING("--svg", "OUT.svg", "draw it with Graphviz's dot into OUT.svg (not with --dot)",
		   cli_graph_opts, svg),
	    STRING("--title", "TEXT", "the picture's title", cli_graph_opts, title) } },
	{ "probe", "[MODEL...]", "which NPU device and runtime this machine has",
	  "Looks for the NPU device nodes and, for each vendor runtime (libnnsdk, VIPLite 2.x "
	  "libNBGlinker.so, VIPLite 1.x libVIPlite.so), whether its library loads, its version, "
	  "the entry points resolved, vip_init's result, devices, cores and CID; then names the "
	  "runtime nbg run would choose.  Exit 4 when that runtime is not usable.  The CPU "
	  "backend needs no device: for each MODEL given, one line says whether it runs every "
	  "operation and, if not, the first one it refuses (nbg run --backend cpu --check MODEL "
	  "lists them all).  A MODEL that cannot be read or parsed sets the exit code as in "
	  "nbg inspect.",
	  { FLAG("--json", "one JSON document instead of text", cli_probe_opts, json),
	    STRING("--device-root", "DIR", "look for device nodes under DIR instead of /dev",
		   cli_probe_opts, device_root),
	    STRING("--nnsdk", "PATH", "the libnnsdk.so to load", cli_probe_opts, nnsdk),
	    STRING("--viplite", "PATH", "the one VIPLite library to load instead of both defaults",
		   cli_probe_opts, viplite),
	    FLAG("--no-isolate", "call the vendor libraries in this process", cli_probe_opts,
		 no_isolate) } },
	{ "run", "MODEL", "run a model on the NPU through the vendor runtime",
	  "Validates the model, checks its target against the device, runs it through NNSDK "
	  "or VIPLite (vendor calls in a child process), writes output_<i>.bin, "
	  "output_<i>.npy and summary.json, and compares goldens.",
	  { CLI_OPT_LIST("--input", "FILE...", "one input per NBG input: raw, .npy or .tensor",
			 cli_run_opts, inputs),
	    STRING("--output-dir", "DIR", "where outputs and summary.json go (required)",
		   cli_run_opts, output_dir),
	    CLI_OPT_UINT("--loops", "N", "run N times (timings, output stability)", cli_run_opts,
			 loops, 1, 1000000),
	    CLI_OPT_LIST("--golden", "FILE...", "expected outputs, compared in float", cli_run_opts,
			 goldens),
	    CLI_OPT_CUSTOM("--tolerance", "X", "largest accepted difference from a golden",
			   cli_run_opts, tolerance, cli_tolerance_arg),
	    CLI_OPT_UINT("--top", "N", "print the N largest values of each output", cli_run_opts,
			 top, 1, 1000),
	    CHOICE("--backend", "auto|nnsdk|viplite|cpu",
		   "which runtime: a vendor one, or cpu (no board)", cli_run_opts, backend),
	    STRING("--lib", "PATH", "the chosen backend's library", cli_run_opts, lib),
	    STRING("--nnsdk", "PATH", "the libnnsdk.so to load when libnnsdk runs (never VIPLite)",
		   cli_run_opts, nnsdk),
	    FLAG("--force-target", "run even when the model's target is not the device's",
		 cli_run_opts, force_target),
	    STRING("--device-root", "DIR", "look for device nodes under DIR instead of /dev",
		   cli_run_opts, device_root),
	    CLI_OPT_UINT("--timeout", "SECONDS", "give up on a vendor call after this long",
			 cli_run_opts, timeout, 1, 86400),
	    FLAG("--float32-outputs", "ask the runtime for float32 outputs", cli_run_opts,
		 float32_outputs),
	    CHOICE("--layout", "nchw|nhwc",
		   "a 4-D .npy input's layout, transposed to the model's when they differ",
		   cli_run_opts, layout),
	    CLI_OPT_CUSTOM("--input-kind", "N", "the NNSDK input descriptor kind", cli_run_opts,
			   input_kind, cli_input_kind_arg),
	    FLAG("--no-isolate", "call the vendor library in this process", cli_run_opts,
		 no_isolate),
	    FLAG("--check", "with --backend cpu: list what it would run and refuse, run nothing",
		 cli_run_opts, check),
	    FLAG("--json", "with --check: the plan as one JSON document", cli_run_opts, json),
	    STRING("--sample", "sample.txt", "read inputs, goldens and outputs from vpm_run's file",
		   cli_run_opts, sample),
	    CLI_OPT_CUSTOM("--max-output", "SIZE",
			   "most bytes the run may write (default 1G; K M G T, none)", cli_run_opts,
			   max_output, cli_size_arg),
	    CLI_OPT_CUSTOM("--max-memory", "SIZE",
			   "most bytes of tensors it may hold, and the CPU backend's buffers and scratch "
			   "(default 2G; none)", cli_run_opts, max_memory, cli_size_arg),
	    CLI_OPT_CUSTOM("--max-work", "N",
			   "with --backend cpu: most steps of work a run may take, multiply-accumulates "
			   "and the like (default 64G; none)", cli_run_opts, max_work, cli_count_arg),
	    CLI_OPT_CUSTOM("--max-plan-steps", "N",
			   "with --backend cpu: most steps its planning may take (default 1G; none)",
			   cli_run_opts, max_plan_steps, cli_count_arg),
	    STRING("--dump", "DIR", "with --backend cpu: every operation's output as .npy, and "
		   "DIR/dump.json (DIR must be new)", cli_run_opts, dump),
	    FLAG("--dump-float", "with --dump: a float32 .npy beside each whose scale is known",
		 cli_run_opts, dump_float),
	    CLI_OPT_CUSTOM("--dump-limit", "SIZE", "most bytes --dump may write (default 1G; none)",
			   cli_run_opts, dump_limit, cli_size_arg),
	    CLI_OPT_CUSTOM("--mean", "X[,X,X]",
			   "an image input's pixels (0-255) minus this, per channel (default 0)",
			   cli_run_opts, mean, cli_channels_arg),
	    CLI_OPT_CUSTOM("--scale", "X[,X,X]",
			   "then times this, per channel (default 1), then quantized as the input's",
			   cli_run_opts, scale, cli_channels_arg),
	    CHOICE("--channel-order", "rgb|bgr|gray",
		   "an image input's channels as the model takes them (default rgb; gray for one)",
		   cli_run_opts, channel_order),
	    STRING("--batch", "DIR",
		   "run every file of DIR (a folder per run for several inputs) into DIR-named folders",
		   cli_run_opts, batch),
	    CLI_OPT_UINT("--jobs", "N", "with --batch: N processes over the one plan (default 1)",
			 cli_run_opts, jobs, 1, 256),
	    CLI_OPT_UINT("--threads", "N",
			 "with --backend cpu: threads one operation may use, the same bytes for any N "
			 "(default: the online CPUs, shared among --jobs)", cli_run_opts, threads, 1, 64),
	    CHOICE("--kernels", "auto|portable",
		   "with --backend cpu: the CPU's vector instructions where it has them, or the "
		   "portable C kernels alone, the reference (default auto)", cli_run_opts, kernels),
	    STRING("--labels", "FILE", "class names, one a line, for --top (default --top 5)",
		   cli_run_opts, labels) } },
	{ "tensor", "FILE", "convert tensors with a model's I/O record",
	  "Converts between NumPy .npy, vpm_run's .tensor text and raw bytes with one of the "
	  "model's input or output records: .npy or text to the exact bytes the record needs "
	  "(quantized with its own parameters), or raw outputs to float32 .npy (outermost "
	  "dimension first) or text.  FILE and OUT are read and written by their extension "
	  "(.npy: NumPy; .tensor or .txt: one number per line; .png, .jpg: an image, converted "
	  "as nbg run converts it; anything else: raw) unless --from or --to says otherwise.  Without --input or --output it lists the records.",
	  { STRING("--model", "MODEL.nb", "the model whose records describe the tensor (required)",
		   cli_tensor_opts, model),
	    CLI_OPT_CUSTOM("--input", "N", "convert with input record N", cli_tensor_opts, input,
			   cli_record_arg),
	    CLI_OPT_CUSTOM("--output", "N", "convert with output record N", cli_tensor_opts,
			   output, cli_record_arg),
	    CLI_OPT_STRING("--out", "-o", "OUT", "where to write the result (also -o), all or nothing",
			   cli_tensor_opts, out),
	    CHOICE("--from", "raw|npy|text", "how FILE is read, instead of by its extension",
		   cli_tensor_opts, from),
	    CHOICE("--to", "raw|npy|text", "how OUT is written, instead of by its extension",
		   cli_tensor_opts, to),
	    CHOICE("--layout", "nchw|nhwc",
		   "a 4-D .npy FILE's layout, transposed to the model's when they differ",
		   cli_tensor_opts, layout),
	    FLAG("--keep-dtype", ".npy in the record's own dtype instead of float32",
		 cli_tensor_opts, keep_dtype),
	    CLI_OPT_CUSTOM("--mean", "X[,X,X]", "an image FILE's pixels minus this (as nbg run's)",
			   cli_tensor_opts, mean, cli_channels_arg),
	    CLI_OPT_CUSTOM("--scale", "X[,X,X]", "then times this (as nbg run's)", cli_tensor_opts,
			   scale, cli_channels_arg),
	    CHOICE("--channel-order", "rgb|bgr|gray", "an image FILE's channels (as nbg run's)",
		   cli_tensor_opts, channel_order) } },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

size_t cli_command_count(void)
{
	return NCOMMANDS;
}

const cli_command *cli_command_at(size_t i)
{
	return i < NCOMMANDS ? &commands[i] : NULL;
}

const cli_command *cli_command_find(const char *name)
{
	long i = CLI_LOOKUP(commands, name);
	return i < 0 ? NULL : &commands[i];
}


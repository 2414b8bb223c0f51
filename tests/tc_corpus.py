"""tc_corpus.py - the real NBG files the Python checks read, and what a
check does without them (the same rules as tests/corpus.h).

A check that reads real files takes `--corpus DIR` (DIR is the meson option
corpus_dir); when DIR does not exist it prints why and how to get the files
and exits 77, which meson reports as SKIP.  Its synthesized half, if it has
one, runs without the option (or with `--synthesized`) on any clone.
"""
import os
import sys

SKIP = 77

# The sentence of tests/corpus.h (TC_CORPUS_SKIP).
CORPUS_SKIP = ("%s: %s skipped: %s does not exist. Get the files with "
               "`sh scripts/fetch-corpus.sh %s` (it downloads them from their public "
               "repositories and checks each SHA-256), or point the build at a copy: "
               "`meson configure BUILD -Dcorpus_dir=DIR`.")


def need(program, what, corpus):
    """Exit 77 with the reason when the corpus directory is absent."""
    if not os.path.isdir(corpus):
        print(CORPUS_SKIP % (program, what, corpus, corpus))
        sys.stdout.flush()
        sys.exit(SKIP)


def corpus_paths(program, args):
    """args, with a leading `--corpus DIR` replaced by DIR/v2 and DIR/v1
    (exit 77 when DIR is absent)."""
    if len(args) >= 2 and args[0] == "--corpus":
        need(program, "real-file checks", args[1])
        return [os.path.join(args[1], "v2"), os.path.join(args[1], "v1")] + args[2:]
    return args

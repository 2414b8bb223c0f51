#!/usr/bin/env python3
"""crossings.py SOURCE_ROOT [--check DOC] - which folders' headers each
folder of the tree includes, and every include that crosses a layer's door
(doc/architecture.md, "What may include what").

Read from the `#include "..."` lines of the C files of lib/, programs/,
python/ and web/.  A header of lib/ is private to its folder (the directory
it is in, with that directory's sub-folders) when its name ends in
_internal.h or _struct.h; any other header of lib/ is the folder's
interface to the folders above it.  Every directory of lib/ is a folder:
lib/analysis/graph and lib/analysis/ledger are two, and neither may
include the other's private headers; lib/cpu/ops may include those of
lib/cpu, not the other way.  A crossing is a file of lib/ including a
private header of a folder that is neither its own nor one above it, or a file of programs/, python/ or web/ (clients
of the library) including any header of lib/ rather than a public one of
include/nbg/.  tests/ and fuzz/ test the internals and may include
anything; they are not listed.

Prints the block scripts/gen-docs.sh writes into doc/architecture.md; with
--check DOC, exits 1 naming the first difference when DOC's block is not
what the tree says (the test architecture-doc).
"""
import os
import re
import sys

SCANNED = ("lib", "programs", "python", "web")
CLIENTS = ("programs", "python", "web")
MARK = "crossings"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def directory(rel):
    """A file's folder, as the include table shows it: its directory in
    lib/ (lib/cpu/ops apart from lib/cpu, lib/analysis/graph apart
    from lib/analysis/ledger), the top directory outside lib/."""
    return os.path.dirname(rel) if rel.startswith("lib/") else rel.split("/")[0]


def sees(src, owner):
    """Whether a file of folder src may include the private headers of
    folder owner: its own folder's, or those of a folder above it."""
    return src == owner or src.startswith(owner + "/")


def private(header):
    return header.endswith(("_internal.h", "_struct.h"))


def resolve(root, rel, name):
    """The tree path of an included header, or None (a system or generated one)."""
    for base in (os.path.dirname(rel), "lib", "include"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def scan(root):
    uses, crossings = {}, []
    for top in SCANNED:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x != "node_modules")
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                rel = os.path.relpath(os.path.join(d, f), root)
                src = directory(rel)
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        m = INCLUDE.match(line)
                        h = resolve(root, rel, m.group(1)) if m else None
                        if not h or h.startswith("include/") or directory(h) == directory(rel):
                            continue
                        uses.setdefault(directory(rel), set()).add(directory(h))
                        if (src in CLIENTS) or (private(h) and not sees(src, directory(h))):
                            crossings.append((rel, h))
    return uses, crossings


def block(root):
    """The generated block, and how many crossings it names."""
    uses, crossings = scan(root)
    out = ["| folder | includes headers of (besides `include/nbg/`) |", "|---|---|"]
    for src in sorted(uses):
        out.append("| `%s/` | %s |" % (src, ", ".join("`%s/`" % u for u in sorted(uses[src]))))
    out += ["", "%d crossings: a file including another folder's private header (or, "
            "outside `lib/`, any header of `lib/`):" % len(crossings), ""]
    if crossings:
        out += ["| file | includes |", "|---|---|"]
        out += ["| `%s` | `%s` |" % c for c in sorted(crossings)]
    return "\n".join(out) + "\n", len(crossings)


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--check"):
        sys.exit("usage: crossings.py SOURCE_ROOT [--check DOC]")
    want, n = block(args[0])
    if len(args) == 1:
        sys.stdout.write(want)
        return 0
    text = open(args[2], encoding="utf-8").read()
    begin, end = "<!-- BEGIN %s -->\n" % MARK, "<!-- END %s -->" % MARK
    if begin not in text or end not in text:
        print("FAIL: %s has no %s block" % (args[2], MARK))
        return 1
    have = text.split(begin, 1)[1].split(end, 1)[0]
    if have != want:
        hl, wl = have.splitlines(), want.splitlines()
        hl += ["(none)"] * (len(wl) - len(hl))
        wl += ["(none)"] * (len(hl) - len(wl))
        i = next((i for i, (a, b) in enumerate(zip(hl, wl)) if a != b), len(hl) - 1)
        print("FAIL: %s's include table is stale at line %d of its block:\n  doc:  %s\n"
              "  tree: %s\nrun scripts/gen-docs.sh" % (args[2], i + 1, hl[i], wl[i]))
        return 1
    print("ok: %s names the %d crossings the includes have" % (args[2], n))
    return 0


if __name__ == "__main__":
    sys.exit(main())

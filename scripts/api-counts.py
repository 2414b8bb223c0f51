#!/usr/bin/env python3
"""api-counts.py SOURCE_ROOT [--check DOC | --declared] - the functions the
public headers declare, stable or static-linking-only (doc/api.md, "How the
API grows"), counted per header.

A function is declared by an NBG_API line of include/nbg/*.h; it is
static-linking-only when the line is inside a block opened by
`#if defined(NBG_STATIC_LINKING_ONLY)`, stable otherwise.

Prints the block scripts/gen-docs.sh writes into doc/api.md; with --check
DOC, exits 1 naming the first difference when DOC's block is not what the
headers say (the test api-doc); with --declared, prints one line per
function, "stable NAME" or "static NAME", sorted (what
tests/check_exports.sh compares with the library's exports and with
tests/abi-stable.txt).
"""
import glob
import os
import re
import sys

MARK = "api counts"
SLO_OPEN = re.compile(r"^#if defined\(NBG_STATIC_LINKING_ONLY\)")
IF = re.compile(r"^#\s*if")
ENDIF = re.compile(r"^#\s*endif")
NAME = re.compile(r"(nbg_[a-z0-9_]+)\(")


def declarations(path):
    """(kind, name) of each NBG_API declaration of one header, kind
    "stable" or "static"."""
    depth = 0
    for line in open(path, encoding="utf-8"):
        if SLO_OPEN.match(line):
            depth = 1
            continue
        if depth and IF.match(line):
            depth += 1
        elif depth and ENDIF.match(line):
            depth -= 1
            continue
        if "NBG_API" in line and "#define" not in line:
            m = NAME.search(line)
            if m:
                yield ("static" if depth else "stable"), m.group(1)


def headers(root):
    return sorted(glob.glob(os.path.join(root, "include", "nbg", "*.h")))


def block(root):
    rows = ["| header | stable | static-linking-only |", "|---|---|---|"]
    total = {"stable": 0, "static": 0}
    for h in headers(root):
        n = {"stable": 0, "static": 0}
        for kind, _ in declarations(h):
            n[kind] += 1
        if n["stable"] + n["static"] == 0:
            continue
        for k in n:
            total[k] += n[k]
        rows.append("| `nbg/%s` | %d | %d |" % (os.path.basename(h), n["stable"], n["static"]))
    rows.append("| all (%d exported) | %d | %d |" % (total["stable"] + total["static"],
                                                  total["stable"], total["static"]))
    return "\n".join(rows) + "\n"


def check(root, doc):
    text = open(doc, encoding="utf-8").read()
    begin, end = "<!-- BEGIN %s -->\n" % MARK, "<!-- END %s -->" % MARK
    if begin not in text or end not in text:
        print("FAIL: %s has no %s block" % (doc, MARK))
        return 1
    have = text.split(begin, 1)[1].split(end, 1)[0]
    want = block(root)
    if have == want:
        print("%s: the API counts are the headers'" % doc)
        return 0
    hl, wl = have.splitlines(), want.splitlines()
    hl += ["(none)"] * (len(wl) - len(hl))
    wl += ["(none)"] * (len(hl) - len(wl))
    for a, b in zip(hl, wl):
        if a != b:
            print("FAIL: %s's API counts are stale (run scripts/gen-docs.sh):\n"
                  "  doc:     %s\n  headers: %s" % (doc, a, b))
            break
    return 1


def main():
    args = sys.argv[1:]
    if not args or len(args) > 3:
        sys.exit("usage: api-counts.py SOURCE_ROOT [--check DOC | --declared]")
    root = args[0]
    if args[1:2] == ["--check"] and len(args) == 3:
        return check(root, args[2])
    if args[1:] == ["--declared"]:
        names = sorted({"%s %s" % d for h in headers(root) for d in declarations(h)})
        sys.stdout.write("".join(n + "\n" for n in names))
        return 0
    if len(args) != 1:
        sys.exit("usage: api-counts.py SOURCE_ROOT [--check DOC | --declared]")
    sys.stdout.write(block(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())

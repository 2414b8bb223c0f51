#!/usr/bin/env python3
"""cpu-coverage.py NBG CORPUS_DIR - doc/cpu-coverage.md's table of what the
CPU backend runs in each corpus file, from `nbg probe --json MODEL...` (the
plan of `nbg run --backend cpu --check`).  scripts/gen-docs.sh writes it
into doc/cpu-coverage.md; the test cpu-coverage-doc fails when that copy
is stale.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from exe_wrapper import command  # noqa: E402


def table(nbg, corpus):
    files = []
    for sub in ("v1", "v2"):
        d = os.path.join(corpus, sub)
        if os.path.isdir(d):
            files += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".nb")]
    env = dict(os.environ, LC_ALL="C")
    p = subprocess.run(command(nbg) + ["probe", "--json", "--device-root", "/nonexistent"] + files,
                       capture_output=True, text=True, env=env)
    models = json.loads(p.stdout)["cpu_backend"]["models"]
    whole = sum(1 for m in models if m.get("runs_whole"))
    first = {}
    for m in models:
        if m.get("first_refused"):
            r = m["first_refused"]["reason_id"]
            first[r] = first.get(r, 0) + 1
    ops = sum(m.get("operations", 0) for m in models)
    ex = sum(m.get("executed", 0) for m in models)
    out = ["%d of the %d corpus files run whole on the CPU backend; %d of their %d operations are "
           "executed (`nbg probe MODEL...`, `nbg run --backend cpu --check MODEL`)." %
           (whole, len(models), ex, ops)]
    if first:
        out.append("The first refused operation's reason, by file: " +
                   ", ".join("`%s` %d" % (k, v) for k, v in sorted(first.items(), key=lambda kv: (-kv[1], kv[0]))) + ".")
    out += ["", "| file | operations | executed | nothing to compute | refused | first refused |",
            "|---|---|---|---|---|---|"]
    for m in models:
        name = os.path.relpath(m["path"], corpus)
        if "error" in m:
            out.append("| %s | - | - | - | - | not planned: %s |" % (name, m["error"]))
            continue
        f = m.get("first_refused")
        out.append("| %s | %d | %d | %d | %d | %s |" % (
            name, m["operations"], m["executed"], m["nothing"], m["refused"],
            "op %d `%s`" % (f["operation"], f["reason_id"]) if f else "runs whole"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: cpu-coverage.py NBG CORPUS_DIR")
    sys.stdout.write(table(sys.argv[1], sys.argv[2]))

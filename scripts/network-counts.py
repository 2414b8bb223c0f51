#!/usr/bin/env python3
"""network-counts.py - the network view's shape bases over a corpus, per
file and per operator, and its single-producer edges (equal shapes,
channel slices, shapes differ), from `nbg inspect --json --network`.
What drives the rules of lib/analysis/network/network_shape.c (doc/commands.md,
"Whole tensors"); test `network-corpus` prints and checks the totals.

usage: network-counts.py NBG CORPUS_DIR   (CORPUS_DIR holds v1/ and v2/)
"""
import collections
import json
import os
import subprocess
import sys


def main():
    nbg, corpus = sys.argv[1], sys.argv[2]
    basis, per_file, per_op, edges = (collections.Counter() for _ in range(4))
    for sub in ("v2", "v1"):
        d = os.path.join(corpus, sub)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not name.endswith(".nb"):
                continue
            r = subprocess.run([nbg, "inspect", "--json", "--only", "--network", os.path.join(d, name)],
                               capture_output=True, text=True, check=True)
            net = json.loads(r.stdout)["network"]
            layers = net["layers"]
            for l in layers:
                for side in ("input", "output"):
                    basis[l[side]["basis"]] += 1
                    if l[side]["basis"] == "engine view":
                        per_file[name] += 1
                        per_op["%s %s" % (l["operator"], side)] += 1
            producers = collections.defaultdict(set)
            for e in net["edges"]:
                if not e["backward"] and "node" in e["to"]:
                    producers[e["to"]["node"]].add(json.dumps(e["from"]))
            for e in net["edges"]:
                if e["backward"] or "node" not in e["from"] or "node" not in e["to"] or \
                   len(producers[e["to"]["node"]]) != 1:
                    continue
                a, b = layers[e["from"]["node"]]["output"], layers[e["to"]["node"]]["input"]
                edges["a shape unknown" if a["shape"] is None or b["shape"] is None else
                      "equal shapes" if a["shape"] == b["shape"] else
                      "a channel slice" if "slice_of_channels" in e else "shapes differ"] += 1
    print("shapes by basis:", ", ".join("%s %d" % kv for kv in basis.most_common()))
    print("single-producer edges:", ", ".join("%s %d" % kv for kv in edges.most_common()))
    print("engine views per file:")
    for name, count in per_file.most_common():
        print("  %5d %s" % (count, name))
    print("engine views per operator and side:")
    for op, count in per_op.most_common():
        print("  %5d %s" % (count, op))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""check_graph_svg.py - `nbg graph` draws the network its commands compute.

For each file (every *.nb under the directories given, plus single files):
- `nbg graph FILE --dot OUT` writes a DOT document with one box per layer
  that has operations in the data flow (the layers of the NN / TP and other
  operations of `nbg inspect --json --commands`), one ellipse per input and
  output record, and edges between existing nodes, each labelled with the
  bytes that flow (a positive count), dashed and marked "inferred" exactly
  where the JSON network view (`--network`) says the edge is inferred, one
  per edge of that view that is not backward (tile interleaving), and no
  cycle among them; the title carries the legend, and the data-flow banner
  exactly when the view lists failing data-flow checks; every output record is reached from
  an input record and every input record reaches an output (the data flow
  leaves no output floating and no input unused), on the real files
  (--corpus) and on the bundled sample, whose network is coherent;
- with Graphviz's dot installed, `nbg graph FILE --svg OUT` writes SVG that
  parses as XML with an <svg> root and holds one node per box and ellipse,
  one edge per DOT edge, and every box's "layer N" title in visible text;
- without dot on PATH the SVG request fails with exit 3, names the graphviz
  package, and leaves no file (checked for every file, dot installed or not).

usage: check_graph_svg.py NBG_BIN [--artifacts OUTDIR] [--corpus DIR] PATH...
--artifacts keeps each file's SVG in OUTDIR (FILE.svg), to look at.
--corpus DIR adds DIR/v2 and DIR/v1 (the real corpus); when DIR does not
exist the check is skipped: exit 77 with the reason and how to get the files.
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import tc_corpus
from exe_wrapper import command

SVG = "{http://www.w3.org/2000/svg}"


def files_of(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".nb"):
                        yield os.path.join(root, n)
        elif os.path.exists(p):
            yield p


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env)


def check(nbg, path, tmp, have_dot):
    doc = json.loads(run([*nbg, "inspect", "--json", "--commands", "--network", path]).stdout)
    ops = doc["commands"]["operations"]
    layers = len(doc.get("layers", [])) or doc["layer_count"]
    boxes = set()
    for o in ops + doc["commands"]["other_operations"]:
        boxes.add(("L", o["layer_id"]) if o["layer_id"] < layers else ("op", o["operation"]))
    dot_path = os.path.join(tmp, "g.dot")
    r = run([*nbg, "graph", path, "--dot", dot_path])
    if r.returncode != 0:
        return "--dot exit %d: %s" % (r.returncode, r.stderr)
    text = open(dot_path, encoding="ascii").read()
    nodes = re.findall(r"^  (\w+) \[label=", text, re.M)
    # an edge's label: its bytes, "inferred" first where it is, and on a
    # channel slice "channels of N" on a second line
    found = re.findall(r'^  (\w+) -> (\w+) \[label="(inferred )?(\d+) (B|KiB|MiB)'
                       r'(?:\\nchannels of (\d+))?"(, style=dashed)?\];$', text, re.M)
    labelled = [(a, b, m, n, u, d) for a, b, m, n, u, _, d in found]
    slices = {(a, b): int(c) for a, b, _, _, _, c, _ in found if c}
    edges = [(a, b) for a, b, *_ in labelled]
    if len(edges) != len(re.findall(r"^  \w+ -> \w+", text, re.M)):
        return "an edge without its byte label"
    if any(int(n) <= 0 for _, _, _, n, _, _ in labelled):
        return "an edge carries no bytes"
    problem = network_checks(doc, text, labelled, slices)
    if problem:
        return problem
    want = {"%s%d" % b for b in boxes}
    want |= {"in%d" % i for i in range(doc["input_count"])}
    want |= {"out%d" % i for i in range(doc["output_count"])}
    if sorted(nodes) != sorted(want):
        return "DOT nodes %s, expected %s" % (sorted(nodes)[:5], sorted(want)[:5])
    if any(a not in want or b not in want or a == b for a, b in edges):
        return "an edge names a missing node or loops"
    if len(set(edges)) != len(edges):
        return "duplicate edges"
    nxt = {}
    for a, b in edges:
        nxt.setdefault(a, set()).add(b)

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for b in nxt.get(todo.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen
    ins = ["in%d" % i for i in range(doc["input_count"])]
    outs = ["out%d" % i for i in range(doc["output_count"])]
    reached = set().union(*[reach(i) for i in ins]) if ins else set()
    for o in outs:
        if o not in reached:
            return "%s is reached from no input" % o
    for i in ins:
        if not reach(i) & set(outs):
            return "%s reaches no output" % i
    return svg_checks(nbg, path, tmp, have_dot, want, edges, boxes)


def dot_name(net, end):
    """The DOT node of an end of a JSON network edge."""
    if "input" in end:
        return "in%d" % end["input"]
    if "output" in end:
        return "out%d" % end["output"]
    layer = net["layers"][end["node"]]
    if layer["layer"] is not None:
        return "L%d" % layer["layer"]
    return "op%d" % layer["first_operation"]


def network_checks(doc, text, labelled, slices):
    """The drawn edges against the JSON network view: one per edge that is
    not backward, dashed and marked exactly where it is inferred, labelled
    "channels of N" exactly where it is a channel slice of N channels; no
    cycle; the legend, and the banner exactly when data-flow checks fail."""
    net = doc["network"]
    want = {}
    want_slices = {}
    for e in net["edges"]:
        if not e["backward"]:
            want[(dot_name(net, e["from"]), dot_name(net, e["to"]))] = e["basis"]
            if "slice_of_channels" in e:
                want_slices[(dot_name(net, e["from"]), dot_name(net, e["to"]))] = e["slice_of_channels"]
    if slices != want_slices:
        return "channel slices drawn %s, the network view's %s" % (sorted(slices.items())[:3],
                                                                 sorted(want_slices.items())[:3])
    got = {}
    for a, b, marked, _, _, dashed in labelled:
        if bool(marked) != bool(dashed):
            return "edge %s -> %s: marked inferred %s but dashed %s" % (a, b, bool(marked),
                                                                      bool(dashed))
        got[(a, b)] = "inferred" if marked else "proven"
    if got != want:
        diff = sorted(set(got.items()) ^ set(want.items()))[:3]
        return "drawn edges differ from the network view's: %s" % diff
    state = {}

    def cyclic(node, nxt):
        state[node] = 1
        for b in nxt.get(node, ()):
            if state.get(b) == 1 or (b not in state and cyclic(b, nxt)):
                return True
        state[node] = 2
        return False
    nxt = {}
    for a, b in got:
        nxt.setdefault(a, []).append(b)
    if any(n not in state and cyclic(n, nxt) for n in list(nxt)):
        return "the drawn layer graph has a cycle"
    title = re.search(r'^  label="(.*)";$', text, re.M).group(1)
    if "edges: the bytes that flow; solid: proven" not in title:
        return "the title has no legend"
    if ("DATA FLOW UNRELIABLE" in title) != bool(net["data_flow_warnings"]):
        return "banner %s, data-flow warnings %d" % ("DATA FLOW UNRELIABLE" in title,
                                                     len(net["data_flow_warnings"]))
    return None


def svg_checks(nbg, path, tmp, have_dot, want, edges, boxes):
    svg_path = os.path.join(tmp, "g.svg")
    # Without dot on PATH: exit 3, a sentence naming the package, no file.
    r = run([*nbg, "graph", path, "--svg", svg_path], env={"PATH": "/nonexistent"})
    if r.returncode != 3 or "graphviz" not in r.stderr or os.listdir(tmp) != ["g.dot"]:
        return "without dot: exit %d, %r, files %s" % (r.returncode, r.stderr, os.listdir(tmp))
    if not have_dot:
        return None
    r = run([*nbg, "graph", path, "--svg", svg_path])
    if r.returncode != 0:
        return "--svg exit %d: %s" % (r.returncode, r.stderr)
    root = ET.parse(svg_path).getroot()
    if root.tag != SVG + "svg":
        return "root element is %s" % root.tag
    gs = list(root.iter(SVG + "g"))
    n_nodes = sum(1 for g in gs if g.get("class") == "node")
    n_edges = sum(1 for g in gs if g.get("class") == "edge")
    if n_nodes != len(want) or n_edges != len(edges):
        return "SVG has %d nodes, %d edges; DOT %d, %d" % (n_nodes, n_edges, len(want), len(edges))
    alltext = "\n".join("".join(t.itertext()) for t in root.iter(SVG + "text"))
    for kind, v in boxes:
        if kind == "L" and ("layer %d " % v) not in alltext:
            return "layer %d has no visible title" % v
    if sorted(os.listdir(tmp)) != ["g.dot", "g.svg"]:
        return "files left behind: %s" % os.listdir(tmp)
    return None


def main():
    nbg, paths = command(sys.argv[1]), sys.argv[2:]
    artifacts = None
    if paths[:1] == ["--artifacts"]:
        artifacts, paths = paths[1], paths[2:]
        os.makedirs(artifacts, exist_ok=True)
    paths = tc_corpus.corpus_paths("check_graph_svg.py", paths)
    have_dot = shutil.which("dot") is not None
    print("Graphviz dot: %s" % ("found, SVG drawn and parsed" if have_dot
                                else "not installed, only the DOT document is checked"))
    passed = failed = 0
    for path in files_of(paths):
        with tempfile.TemporaryDirectory() as tmp:
            why = check(nbg, path, tmp, have_dot)
            # the pictures, to look at (BUILD/graph-artifacts)
            svg = os.path.join(tmp, "g.svg")
            if artifacts and os.path.exists(svg):
                shutil.copyfile(svg, os.path.join(artifacts, os.path.basename(path) + ".svg"))
        if why:
            failed += 1
            print("FAIL %s: %s" % (path, why))
        else:
            passed += 1
    # An output directory that does not exist: exit 3, nothing written.
    with tempfile.TemporaryDirectory() as tmp:
        for flag in ("--dot", "--svg"):
            out = os.path.join(tmp, "missing", "g.out")
            r = run([*nbg, "graph", paths[-1], flag, out])
            if r.returncode != 3 or os.listdir(tmp):
                failed += 1
                print("FAIL %s into a missing directory: exit %d" % (flag, r.returncode))
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed < 3 else 0


if __name__ == "__main__":
    sys.exit(main())

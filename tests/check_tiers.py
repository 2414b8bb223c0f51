#!/usr/bin/env python3
"""check_tiers.py BUILD_DIR SOURCE_ROOT - every test of the build is in
exactly one tier (the meson suites quick, corpus and slow that
scripts/test.sh runs), and doc/testing.md's table of tiers names each test
with the tier meson gives it: no test runs in no tier or in two, and the
page a developer reads to choose what to run cannot drift from the build.

The table is the one under the heading "## Every test and its tier": rows
`| NAMES | TIER | why |`, NAMES a comma-separated list of test names in
backquotes, where an upper-case word stands for any lower-case name part
(`fuzz-replay-HARNESS`), the most specific name deciding.  A row that matches no test fails too, so a
renamed or removed test leaves no stale row.

check_tiers.py BUILD_DIR SOURCE_ROOT NAME... - the same where the build
leaves out the tests NAME... (meson says why: the Python package's tests in
a cross build, say): a row naming only those is not stale."""
import json
import os
import re
import sys

TIERS = ("quick", "corpus", "slow")
HEADING = "## Every test and its tier"


def meson_tiers(build):
    with open(os.path.join(build, "meson-info", "intro-tests.json"), encoding="utf-8") as f:
        tests = json.load(f)
    out, bad = {}, []
    for t in tests:
        tiers = [s.split(":")[-1] for s in t["suite"] if s.split(":")[-1] in TIERS]
        if len(tiers) != 1:
            bad.append("test %s is in %s of the tiers %s (suites %s): give it exactly one"
                       % (t["name"], len(tiers) and " and ".join(tiers) or "none",
                          "/".join(TIERS), t["suite"]))
        else:
            out[t["name"]] = tiers[0]
    return out, bad


def doc_rows(path):
    text = open(path, encoding="utf-8").read()
    if HEADING not in text:
        return None
    body = text.split(HEADING, 1)[1]
    body = body.split("\n## ", 1)[0]
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.startswith("|") or set(cells[0]) <= set("- :"):
            continue
        names = re.findall(r"`([^`]+)`", cells[0])
        if not names or cells[1] not in TIERS:
            continue
        rows.append((names, cells[1], line))
    return rows


def pattern(name):
    return re.compile("^" + re.sub(r"[A-Z]+", "[a-z0-9-]+", re.escape(name)) + "$")


def main():
    build, root = sys.argv[1:3]
    not_built = set(sys.argv[3:])
    tiers, failures = meson_tiers(build)
    doc = os.path.join(root, "doc", "testing.md")
    rows = doc_rows(doc)
    if rows is None:
        print("FAIL doc/testing.md has no section '%s'" % HEADING)
        return 1
    # test -> (specificity, tier): an exact name or a pattern with more of
    # its own letters wins over a looser pattern (`fuzz-replay-HARNESS-corpus`
    # over `fuzz-replay-HARNESS`)
    documented = {}
    for names, tier, line in rows:
        for n in names:
            pat = pattern(n)
            spec = len(re.sub(r"[A-Z]+", "", n)) + (1000 if n == n.lower() else 0)
            hits = [t for t in tiers if pat.match(t)]
            if not hits and n not in not_built:
                failures.append("doc/testing.md names `%s`, which is no test of this build" % n)
            for t in hits:
                have = documented.get(t)
                if have and have[0] == spec and have[1] != tier:
                    failures.append("doc/testing.md gives %s two tiers" % t)
                if not have or have[0] < spec:
                    documented[t] = (spec, tier)
    documented = {t: v[1] for t, v in documented.items()}
    for t, tier in sorted(tiers.items()):
        if t not in documented:
            failures.append("test %s (tier %s) is not in doc/testing.md's table" % (t, tier))
        elif documented[t] != tier:
            failures.append("test %s is in tier %s, doc/testing.md says %s" % (t, tier, documented[t]))
    for f in failures:
        print("FAIL " + f)
    if failures:
        return 1
    count = {k: sum(1 for v in tiers.values() if v == k) for k in TIERS}
    print("ok: %d tests, each in one tier (%s), each in doc/testing.md"
          % (len(tiers), ", ".join("%s %d" % (k, count[k]) for k in TIERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every file of the tree that the documentation and the code's comments name
exists.

Reads README.md, doc/*.md and the source files (C, Python, shell, meson)
for paths of the source tree (`lib/...`,
`programs/...`, `tests/...`, `include/...`, `doc/...`, `fuzz/...`,
`scripts/...`, `bench/...`, `samples/...`, `completion/...`, ending in a
file name or '/'), with an optional ':LINE' or ':LINE-LINE', and relative
Markdown links in the documents; fails naming each one that does not exist.
Not checked: paths of an install (after `$prefix/`, `/usr/`), placeholders
in capitals (`fuzz/corpus/HARNESS/`), what a run creates (`fuzz/out/`,
`build/`) and what the build makes (a name a meson.build of its directory or
of the root quotes: `fuzz/nbg-fuzz-seeds`, `include/nbg/version.h`).
Usage: check_doc_paths.py SOURCE_ROOT
"""
import glob
import os
import re
import subprocess
import sys

root = sys.argv[1]
TOP = r'(?:lib|programs|tests|doc|include|fuzz|scripts|bench|samples|completion|python|web|\.ci)'
tree_path = re.compile(r'(?<![\w./$-])(' + TOP + r'/[A-Za-z0-9_.*/-]*[A-Za-z0-9_/])')
link = re.compile(r'\]\(([^)#\s]+)(?:#[^)]*)?\)')
# What a build or a run makes, and install paths shown in doc/building.md's
# table of an install (relative to the prefix, below `prefix`).
CREATED = ('fuzz/out/', 'build/', 'lib/x86_64-linux-gnu/', 'lib/aarch64-linux-gnu/')

CODE = ('.c', '.h', '.py', '.sh', 'meson.build', 'meson_options.txt', 'meson.options')


def built(p):
    """A name the build makes: quoted by its directory's or the root's meson.build."""
    name = os.path.basename(p.rstrip('/'))
    for build in {os.path.join(root, os.path.dirname(p), 'meson.build'),
                  os.path.join(root, 'meson.build')}:
        if os.path.exists(build) and re.search(r"'%s'" % re.escape(name), open(build).read()):
            return True
    return False


def sources():
    try:
        listed = subprocess.run(['git', '-C', root, 'ls-files'], capture_output=True,
                                text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs]
    return sorted(os.path.join(root, f) for f in listed
                  if f.endswith(CODE) and not f.startswith(('fuzz/corpus/', 'build')))


bad = []
docs = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'doc', '*.md')))
named = 0
for doc in docs + sources():
    rel = os.path.relpath(doc, root)
    try:
        lines = open(doc, encoding='utf-8').readlines()
    except (UnicodeDecodeError, FileNotFoundError):
        continue
    for n, line in enumerate(lines, 1):
        for m in tree_path.finditer(line):
            p = m.group(1)
            if p.startswith(CREATED) or re.search(r'[A-Z]{4,}', p) or '*' in p or \
                    re.match(r'-?[$%{]', line[m.end():]):  # a name made by a variable
                continue
            if not os.path.exists(os.path.join(root, p)) and built(p):
                continue
            named += 1
            if not os.path.exists(os.path.join(root, p)):
                bad.append('%s:%d names %s, which does not exist' % (rel, n, p))
        for m in link.finditer(line) if doc.endswith('.md') else ():
            p = m.group(1)
            if re.match(r'[a-z]+:', p):
                continue
            named += 1
            if not os.path.exists(os.path.join(os.path.dirname(doc), p)):
                bad.append('%s:%d links %s, which does not exist' % (rel, n, p))
for b in bad:
    print(b)
print('%d documents and the sources: %d paths and links named; %d missing'
      % (len(docs), named, len(bad)))
sys.exit(1 if bad else 0)

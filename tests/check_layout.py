#!/usr/bin/env python3
"""The shape of the code, checked: no file-level dependency cycle between the
object files of libnbg or of the nbg program, and no function longer than
150 lines in lib/ or programs/.

A file depends on another when it references a symbol the other defines
(read from each object's symbol table with nm, so the check sees what the
linker sees, not what the includes say).  Usage:
    check_layout.py NM SOURCE_ROOT OBJDIR...
"""
import os
import re
import subprocess
import sys

MAX_LINES = 150


def symbols(nm, objs):
    """{object: (defined, used)} of every object, from one nm run (a process
    per object cost most of the test's time on a loaded machine)."""
    out = subprocess.run([nm, *objs], check=True, capture_output=True, text=True).stdout
    info = {o: (set(), set()) for o in objs}
    cur = info[objs[0]] if len(objs) == 1 else None  # nm names files only when several
    for line in out.splitlines():
        if line.endswith(':') and line[:-1] in info:
            cur = info[line[:-1]]
            continue
        parts = line.split()
        if cur is None:
            continue
        if len(parts) == 2 and parts[0] == 'U':
            cur[1].add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBRVWGS':
            cur[0].add(parts[2])
    return info


def source_name(obj):
    # meson names objects after their source path, '/' replaced by '_'
    return os.path.basename(obj)[:-len('.o')]


def cycles(nm, objdir):
    objs = sorted(os.path.join(objdir, f) for f in os.listdir(objdir) if f.endswith('.o'))
    info = {source_name(o): v for o, v in (symbols(nm, objs) if objs else {}).items()}
    owner = {}
    for name, (defined, _) in info.items():
        for s in defined:
            owner[s] = name
    edges = {name: sorted({owner[s] for s in used if s in owner and owner[s] != name})
             for name, (_, used) in info.items()}
    # Tarjan's strongly connected components
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return len(objs), sccs, edges


FUNC_START = re.compile(r'^[A-Za-z_][^;]*\)\s*$|^[A-Za-z_][^;]*,\s*$')


def long_functions(path):
    """Top-level function bodies: a definition line at column 0, the body's
    braces at column 0 (the project's style, enforced by .clang-format)."""
    found = []
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    start = None
    for i, line in enumerate(lines):
        if start is None and line == '{':
            j = i - 1
            while j > 0 and lines[j - 1] and not lines[j - 1].startswith(('}', '#', '/', ' *')) \
                    and lines[j][:1] in ('\t', ' ') :
                j -= 1
            start = j
            name = lines[j].split('(')[0].split()[-1].lstrip('*') if '(' in lines[j] else lines[j]
        elif start is not None and line == '}':
            n = i - start + 1
            if n > MAX_LINES:
                found.append((path, start + 1, name, n))
            start = None
    return found


def main():
    nm, root, objdirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = 0
    for d in objdirs:
        n, sccs, _ = cycles(nm, d)
        print(f'{d}: {n} object files')
        for comp in sccs:
            print('  dependency cycle: ' + ' <-> '.join(comp))
            bad += 1
        if n == 0:
            print('  no object files found')
            bad += 1
    total = 0
    for top in ('lib', 'programs'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith('.c'):
                    total += 1
                    for path, line, name, n in long_functions(os.path.join(dirpath, f)):
                        print(f'  {os.path.relpath(path, root)}:{line}: {name}: {n} lines '
                              f'(at most {MAX_LINES})')
                        bad += 1
    print(f'{total} source files checked for function length')
    if bad:
        print(f'FAIL: {bad} problem(s)')
        return 1
    print('no cycles, no function over %d lines' % MAX_LINES)
    return 0


if __name__ == '__main__':
    sys.exit(main())

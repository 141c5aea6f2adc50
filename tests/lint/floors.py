#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/lint/floors.py [SRC]: no include or call circle between files.

STYLE.md's floors: a file may use the files below it, never one that
uses it back, directly or around a ring.  Two graphs over src/*.[ch]:
  includes: file -> each "header.h" it includes;
  calls:    file.c -> the .c file that defines each function it calls
            (a definition is a name at the start of a line followed by
            "(", the style every file here keeps).
Each strongly connected component with more than one file is a circle,
printed with its edges; the exit status is 1 when there is one.
Python's standard library only (make lint runs it)."""

import os
import re
import sys

DEF = re.compile(r'^([A-Za-z_]\w*)\(', re.M)
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
INCLUDE = re.compile(r'^#\s*include\s+"([^"]+)"', re.M)
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def code_of(text):
    """The text without comments and string literals."""
    return STRING.sub('""', COMMENT.sub(' ', text))


def graphs(src):
    files = sorted(f for f in os.listdir(src) if f.endswith(('.c', '.h')))
    texts = {f: read(os.path.join(src, f)) for f in files}
    owner = {}
    for f in files:
        if f.endswith('.c'):
            for name in DEF.findall(code_of(texts[f])):
                owner.setdefault(name, f)
    inc = {f: set(h for h in INCLUDE.findall(texts[f]) if h in texts)
           for f in files}
    calls = {}
    for f in files:
        if not f.endswith('.c'):
            continue
        body = DEF.sub(' ', code_of(texts[f]))
        calls[f] = set(owner[n] for n in CALL.findall(body)
                       if n in owner and owner[n] != f)
    return inc, calls


def circles(graph):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def report(kind, graph):
    found = circles(graph)
    for comp in found:
        print(f'{kind} circle: {" ".join(comp)}')
        for a in comp:
            for b in sorted(graph.get(a, ())):
                if b in comp:
                    print(f'  {a} -> {b}')
    return len(found)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else 'src'
    inc, calls = graphs(src)
    n = report('include', inc) + report('call', calls)
    if n:
        print(f'floors: {n} circle(s) in {src}/', file=sys.stderr)
        return 1
    print(f'floors: no include or call circle in {src}/')
    return 0


if __name__ == '__main__':
    sys.exit(main())

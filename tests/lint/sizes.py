#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/lint/sizes.py [SRC]: functions short enough to read at once.

STYLE.md: no function over 60 lines (from its opening brace to its
closing one, which sit at the start of a line in every file here) and no
file over 500 lines, except the generated scripts-sha.h.  Prints each
one over and exits 1 when there is one."""

import os
import re
import sys

MAX_FUNCTION = 60
MAX_FILE = 500
GENERATED = {'scripts-sha.h'}
NAME = re.compile(r'^([A-Za-z_]\w*)\(')


def functions(lines):
    """(name, length) of every function definition."""
    i = 0
    while i < len(lines):
        m = NAME.match(lines[i])
        if m:
            j = i
            while j < len(lines) and lines[j] != '{' and \
                    not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j] == '{':
                k = j
                while k < len(lines) and lines[k] != '}':
                    k += 1
                yield m.group(1), k - j + 1
                i = k
        i += 1


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else 'src'
    bad = 0
    for f in sorted(os.listdir(src)):
        if not f.endswith(('.c', '.h')) or f in GENERATED:
            continue
        with open(os.path.join(src, f), encoding='utf-8') as fh:
            lines = fh.read().split('\n')
        if len(lines) - 1 > MAX_FILE:
            print(f'{src}/{f}: {len(lines) - 1} lines (at most {MAX_FILE})')
            bad += 1
        for name, n in functions(lines):
            if n > MAX_FUNCTION:
                print(f'{src}/{f}: {name}() is {n} lines '
                      f'(at most {MAX_FUNCTION})')
                bad += 1
    if bad:
        return 1
    print(f'sizes: every file of {src}/ within {MAX_FILE} lines, '
          f'every function within {MAX_FUNCTION}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

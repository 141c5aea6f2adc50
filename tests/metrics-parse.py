#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/metrics-parse.py: a strict reader of run --metrics-file's files,
for tests/metrics.bats (Python's standard library only).

  metrics-parse.py FILE
      check FILE: Prometheus's text format (0.0.4), each metric's HELP and
      TYPE once and before its samples, a metric's samples together, label
      values with only the three escapes (\\\\ \\" \\n), no sample twice,
      and all six metrics of redlock-cli there; exit 1 with the reason.
  metrics-parse.py FILE NAME KEY [OUTCOME]
      the same check, then print the value of that sample (exit 2 if none)
  metrics-parse.py --loop FILE STOP
      read and check FILE over and over until the file STOP exists; print
      how many reads; exit 1 at the first read that fails the check, with
      the reason and the text read
"""

import os
import re
import sys

METRICS = {
    'redlock_last_run_timestamp_seconds': 'gauge',
    'redlock_last_success_timestamp_seconds': 'gauge',
    'redlock_last_exit_status': 'gauge',
    'redlock_last_wait_seconds': 'gauge',
    'redlock_last_held_seconds': 'gauge',
    'redlock_runs_total': 'counter',
}
NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r'^(' + NAME + r')(?:\{(' + LABEL + r'(?:,' + LABEL +
                    r')*)?\})? ([^ ]+)$')
VALUE = re.compile(r'^[+-]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|'
                   r'Inf|NaN)$')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: '\n' if m.group(1) == 'n' else
                  m.group(1), v)


def parse(text):
    """{(name, ((label, value), ...)): value}, or raise ValueError."""
    if text == '' or not text.endswith('\n'):
        raise ValueError('empty, or no newline at the end')
    helps, types, seen, samples = set(), {}, set(), {}
    current = None
    for n, line in enumerate(text[:-1].split('\n'), 1):
        where = 'line %d: %r' % (n, line)
        m = re.match(r'^# (HELP|TYPE) (' + NAME + r') (.*)$', line)
        s = SAMPLE.match(line)
        if m:
            kind, name, rest = m.groups()
        elif s and VALUE.match(s.group(s.lastindex)):
            kind, name = 'sample', s.group(1)
        else:
            raise ValueError(where + ': neither HELP, TYPE nor a sample')
        if name != current:
            if name in seen:
                raise ValueError(where + ': its metric is not together')
            seen.add(name)
            current = name
        if kind == 'HELP':
            if name in helps or name in types:
                raise ValueError(where + ': a second or late HELP')
            helps.add(name)
        elif kind == 'TYPE':
            if name in types or rest not in ('gauge', 'counter'):
                raise ValueError(where + ': a second or bad TYPE')
            types[name] = rest
        else:
            if name not in types:
                raise ValueError(where + ': a sample before its TYPE')
            labels = tuple(sorted((k, unescape(v)) for k, v in
                                  re.findall(LABEL, s.group(2) or '')))
            if len(set(k for k, _ in labels)) != len(labels):
                raise ValueError(where + ': a label twice')
            if (name, labels) in samples:
                raise ValueError(where + ': a sample twice')
            samples[(name, labels)] = s.group(s.lastindex)
    for name, kind in METRICS.items():
        if name not in helps or types.get(name) != kind:
            raise ValueError('no HELP or TYPE %s of %s' % (kind, name))
    return samples


def value(samples, name, key, outcome=None):
    labels = [('key', key)] + ([('outcome', outcome)] if outcome else [])
    return samples.get((name, tuple(sorted(labels))))


def loop(path, stop):
    reads = 0
    while not os.path.exists(stop):
        with open(path) as f:
            text = f.read()
        try:
            parse(text)
        except ValueError as e:
            print('read %d: %s\n%s' % (reads + 1, e, text))
            return 1
        reads += 1
    print(reads)
    return 0


def main(argv):
    if argv[1] == '--loop':
        return loop(argv[2], argv[3])
    with open(argv[1]) as f:
        text = f.read()
    try:
        samples = parse(text)
    except ValueError as e:
        print('%s: %s' % (argv[1], e))
        return 1
    if len(argv) > 3:
        v = value(samples, argv[2], argv[3], *argv[4:5])
        if v is None:
            return 2
        print(v)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

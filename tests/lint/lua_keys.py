#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lua_keys.py FILE.lua...: every key a script touches is declared.

Redis and Valkey ask that a script touch only the keys passed in KEYS, so
that the server (a Cluster, a proxy, Dragonfly, which refuses the rest)
knows them before the script runs.  This reads each script as the server
gets it (src/tools/script-sha --dump) and checks, for every redis.call()
and redis.pcall(), that the command is a string literal this table knows
and that every argument in a key position is KEYS[...], or a local name
whose every assignment is KEYS[...].  A key built from ARGV, read from a
reply or passed in as a function's parameter fails, naming the file, the
line and the call.  Prints nothing and exits 0 when all is well, else one
line per call and exits 1.
"""

import re
import sys

# Where the keys are among a command's arguments (after its name):
# 'first', 'all', or 'none'.
KEY_POSITIONS = {
    'DEL': 'all', 'EXISTS': 'all', 'UNLINK': 'all', 'MGET': 'all',
    'TIME': 'none',
}
FIRST_KEY = {
    'GET', 'SET', 'INCR', 'INCRBY', 'PEXPIRE', 'PTTL', 'TYPE',
    'HDEL', 'HGET', 'HGETALL', 'HMGET', 'HSET', 'HSETNX',
    'XADD', 'XREVRANGE',
    'ZADD', 'ZCARD', 'ZCOUNT', 'ZRANGE', 'ZRANGEBYSCORE', 'ZREM',
    'ZREMRANGEBYSCORE', 'ZSCORE',
}


def strip_comments(src):
    """The source with its comments blanked, strings kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c in '\'"':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith('--', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def split_args(src, start):
    """The arguments of the call whose '(' is at start, and its end."""
    args, depth, i, cur = [], 0, start + 1, start + 1
    while i < len(src):
        c = src[i]
        if c in '\'"':
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == '\\' else 1
            i = j
        elif c in '([{':
            depth += 1
        elif c in ')]}':
            if depth == 0:
                args.append(src[cur:i].strip())
                return args, i
            depth -= 1
        elif c == ',' and depth == 0:
            args.append(src[cur:i].strip())
            cur = i + 1
        i += 1
    raise ValueError('unbalanced call at offset %d' % start)


def is_keys_ref(expr):
    """Whether expr is exactly KEYS[...]."""
    if not expr.startswith('KEYS['):
        return False
    depth = 0
    for i, c in enumerate(expr):
        if c == '[':
            depth += 1
        elif c == ']':
            depth -= 1
            if depth == 0:
                return i == len(expr) - 1
    return False


def key_aliases(src):
    """Local names whose every assignment in src is KEYS[...]."""
    assigned = {}
    for m in re.finditer(r'\b(?:local\s+)?([A-Za-z_]\w*)\s*=(?!=)\s*([^\n]*)',
                         src):
        rhs = m.group(2).strip()
        assigned.setdefault(m.group(1), []).append(rhs)
    return {name for name, rhss in assigned.items()
            if all(is_keys_ref(r) for r in rhss)}


def check(path):
    src = strip_comments(open(path, encoding='utf-8').read())
    aliases = key_aliases(src)
    bad = []
    for m in re.finditer(r'redis\.p?call\s*\(', src):
        args, _ = split_args(src, m.end() - 1)
        line = src.count('\n', 0, m.start()) + 1
        cmd = re.fullmatch(r"'([A-Z]+)'", args[0])
        where = '%s:%d: %s' % (path, line, src[m.start():m.end() + 40]
                               .split('\n')[0])
        if cmd is None:
            bad.append('%s: the command is not a literal' % where)
            continue
        name = cmd.group(1)
        pos = KEY_POSITIONS.get(name, 'first' if name in FIRST_KEY else None)
        if pos is None:
            bad.append('%s: %s is not in lua_keys.py\'s table' % (where, name))
            continue
        keys = {'none': [], 'first': args[1:2], 'all': args[1:]}[pos]
        for k in keys:
            if not (is_keys_ref(k) or k in aliases):
                bad.append('%s: key %s is not declared in KEYS' % (where, k))
    return bad


def main(paths):
    bad = []
    for p in paths:
        bad.extend(check(p))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

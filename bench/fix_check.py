#!/usr/bin/env python3
"""fix_check.py SRC OUT: how the migrated copy OUT of SRC reads to Python.

Prints one JSON line: Python files changed by the migration, those that parsed before and no
longer parse (with the first few), and names the migration left undefined (pyflakes'
"undefined name" in the copy, not in the original), when pyflakes is installed.
"""
import ast
import collections
import json
import os
import sys
import warnings

warnings.simplefilter("ignore")
try:
    from pyflakes import checker, messages
except ImportError:  # the figure is then left out, not guessed
    checker = None


def undefined(tree):
    w = checker.Checker(tree)
    return collections.Counter(
        m.message_args[0] for m in w.messages if isinstance(m, messages.UndefinedName))


src, out = sys.argv[1:3]
changed, broken, undef, examples = 0, 0, 0, []
for d, _, files in os.walk(out):
    for f in files:
        if not f.endswith(".py"):
            continue
        q = os.path.join(d, f)
        rel = os.path.relpath(q, out)
        try:
            before = open(os.path.join(src, rel), "rb").read()
            after = open(q, "rb").read()
        except OSError:
            continue
        if before == after:
            continue
        changed += 1
        try:
            t0 = ast.parse(before)
        except (SyntaxError, ValueError):
            continue
        try:
            t1 = ast.parse(after)
        except (SyntaxError, ValueError) as e:
            broken += 1
            examples.append(f"{rel}: {e}")
            continue
        if checker:
            new = undefined(t1) - undefined(t0)
            if new:
                undef += sum(new.values())
                examples.append(f"{rel}: undefined {', '.join(sorted(new))}")
print(json.dumps({"changed": changed, "broken": broken,
                  "undefined": undef if checker else None, "examples": examples[:5]}))

#!/usr/bin/env python3
"""Generate N mixed, distinct lanser batch requests over a Python project (deterministic).

Usage: batch_requests.py WORKSPACE N > requests.jsonl

Selectors are `path@L<line>:<name>` for the first occurrence of an identifier on its line, read
with Python's own tokenizer (not with lanser). The mix: def 30%, hover 20%, refs 15%,
type-def 10%, locate 10%, symbols FILE 8%, diag FILE 4%, symbols --query 3%.
"""
import io
import json
import keyword
import os
import random
import sys
import tokenize

SKIP = {".git", "__pycache__", ".venv", "venv", "build", "dist", "node_modules"}


def files(root):
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP and not x.startswith("."))
        out += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith(".py")]
    return sorted(out)


def names(root, rel):
    """(line, name) of the first whole-word occurrence of each identifier on a line."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        src = f.read()
    seen, out = set(), []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type != tokenize.NAME or keyword.iskeyword(tok.string):
                continue
            line = tok.start[0]
            if (line, tok.string) in seen:
                continue
            seen.add((line, tok.string))
            out.append((line, tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(20250101)
    fs = files(root)
    pool = [(rel, line, name) for rel in fs for (line, name) in names(root, rel)]
    rng.shuffle(pool)
    mix = [("def", 30), ("hover", 20), ("refs", 15), ("type-def", 10), ("locate", 10),
           ("symbols-file", 8), ("diag", 4), ("symbols-query", 3)]
    kinds = [k for k, w in mix for _ in range(w)]
    queries = sorted({name for (_, _, name) in pool if len(name) > 3})
    out, seen, i = [], set(), 0
    while len(out) < n and i < 10 * n + len(pool):
        kind = kinds[rng.randrange(len(kinds))]
        rel, line, name = pool[i % len(pool)]
        i += 1
        if kind == "symbols-file":
            req = {"cmd": "symbols", "args": {"file": rel}}
        elif kind == "diag":
            req = {"cmd": "diag", "args": {"targets": [rel]}}
        elif kind == "symbols-query":
            req = {"cmd": "symbols", "args": {"query": queries[rng.randrange(len(queries))]}}
        else:
            req = {"cmd": kind, "selector": f"{rel}@L{line}:{name}"}
        key = json.dumps(req, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append(req)
    for k, req in enumerate(out):
        print(json.dumps({"id": k + 1, **req}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""module_deps.py - the dependency graph of lanser's top-level modules, and its cycles.

A top-level module is a file or directory directly under src/ (`cli`, `daemon`, `workspace`,
...). Module A depends on B when any file of A names `crate::B` (in a `use` or a path), or
`super::B` from A's top file. Test code (`#[cfg(test)] mod tests { ... }` to the end of the
file, and files named tests.rs) is left out: tests may reach anywhere.

Usage:
  python3 scripts/module_deps.py            # the strongly connected components with > 1 module
  python3 scripts/module_deps.py --edges    # every edge A -> B, with one file that makes it
  python3 scripts/module_deps.py --check    # exit 1 when there is any cycle
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
NAME = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def top_modules():
    mods = {}
    for p in sorted(SRC.iterdir()):
        if p.name in ("main.rs", "lib.rs"):
            continue
        if p.is_dir():
            mods[p.name] = sorted(p.rglob("*.rs"))
        elif p.suffix == ".rs":
            mods[p.stem] = [p]
    return mods


def code_of(path: Path) -> str:
    text = path.read_text()
    if path.name == "tests.rs":
        return ""
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    # Comments do not make dependencies.
    return "\n".join(l.split("//")[0] for l in text.splitlines())


def edges():
    mods = top_modules()
    out = {m: {} for m in mods}
    for m, files in mods.items():
        for f in files:
            for dep in NAME.findall(code_of(f)):
                if dep in mods and dep != m:
                    out[m].setdefault(dep, f.relative_to(SRC.parent).as_posix())
    return out


def sccs(graph):
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted((c for c in comps if len(c) > 1), key=lambda c: (-len(c), c))


def main():
    g = edges()
    if "--edges" in sys.argv:
        for a in sorted(g):
            for b, f in sorted(g[a].items()):
                print(f"{a} -> {b}   ({f})")
        return 0
    cycles = sccs(g)
    total = len(g)
    if not cycles:
        print(f"no dependency cycle among {total} top-level modules")
        return 0
    covered = sum(len(c) for c in cycles)
    print(f"{len(cycles)} cycle(s) covering {covered} of {total} top-level modules:")
    for c in cycles:
        print("  {" + ", ".join(c) + "}")
    return 1 if "--check" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())

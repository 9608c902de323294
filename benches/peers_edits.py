"""peers_edits.py - the symbol edits of benches/peers.py: lanser `edit --replace-body` and
`edit --delete` (previews: nothing written) against agent-lsp `replace_symbol_body` and
`safe_delete_symbol` (they write; each file is put back after the check), at the same
definitions, every answer checked against the files with `ast`:

- replace a body: the file parses, the function's body is the given statements (its docstring
  may stay), and nothing else in the module changed. Each body is given twice: at column 0 (as
  a model writes a snippet) and already indented as the function's body is in the file;
- safe delete of a function nothing uses (its name appears once in the whole project, in its
  `def`): the module is the old one without it;
- safe delete of a function that is used (a reference target of peers_ast, three or more uses in
  two or more files): refused, the file untouched.

The picks are seeded; only functions and methods whose name is bound once in their scope, on an
ASCII `def` line, are taken.
"""
import ast
import re
from collections import Counter

import peers_ast as pa

# The new body of every replace: a nested block, so its inner level must land right too.
BODY = "value = None\nif value is None:\n    return value\nreturn value\n"


def functions(mod: pa.Module):
    """(qualname, node) of the module's top-level functions and its top-level classes'
    methods, each bound once in its scope."""
    def once(body):
        names = Counter(n.name for n in body
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        return [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and names[n.name] == 1 and mod.ascii_line(n.lineno)]
    out = [(f.name, f) for f in once(mod.tree.body)]
    for cls in mod.tree.body:
        if isinstance(cls, ast.ClassDef) and mod.ascii_line(cls.lineno):
            out += [(f"{cls.name}.{f.name}", f) for f in once(cls.body)]
    return out


def find(tree, qualname):
    """The function node at `qualname` (`f` or `Class.f`) in a module's tree, or None."""
    body = tree.body
    *outer, name = qualname.split(".")
    for c in outer:
        body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == c), [])
    return next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == name), None)


def plan(proj: pa.Project, n, seed):
    """{"replace": [...], "unused": [...], "used": [...]}: (Definition, qualname) each, in
    distinct files (a write to one file never changes what the next pick sees)."""
    words = Counter()
    for m in proj.modules.values():
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.text))
    every, taken = [], set()
    for m in proj.modules.values():
        for q, f in functions(m):
            if not f.name.startswith("__") and len(f.body) > 0:
                every.append((m.definition(f), q))
    used_names = {d.name for d, occ in proj.reference_targets().items()
                  if len(occ) >= 3 and len({p.path for p in occ}) >= 2}
    kinds = {
        "replace": every,
        "unused": [(d, q) for d, q in every if words[d.name] == 1],
        "used": [(d, q) for d, q in every if d.name in used_names and "." not in q],
    }
    out = {}
    for k, (kind, items) in enumerate(kinds.items()):
        items = [(d, q) for d, q in items if d.at.path not in taken]
        seen, picked = set(), []
        for d, q in pa.pick(items, 4 * n, seed + k):
            if d.at.path not in seen and len(picked) < n:
                seen.add(d.at.path)
                picked.append((d, q))
        taken |= seen
        out[kind] = picked
    return out


def body_indent(lines, node):
    """The leading blanks of the function's first body line."""
    first = lines[node.body[0].lineno - 1]
    return first[:len(first) - len(first.lstrip())]


def _strip_body(tree, qualname):
    fn = find(tree, qualname)
    fn.body = []
    return ast.dump(tree)


def replaced(old, new, qualname, body):
    """`right` when `new` is `old` with the function's body replaced by `body`'s statements (the
    old docstring may stay), `broken` when it does not parse, else `wrong`."""
    try:
        tree = ast.parse(new)
    except SyntaxError:
        return "broken"
    fn = find(tree, qualname)
    if fn is None:
        return "wrong"
    want = [ast.dump(s) for s in ast.parse(body).body]
    got = [ast.dump(s) for s in fn.body]
    old_fn = find(ast.parse(old), qualname)
    doc = [ast.dump(old_fn.body[0])] if ast.get_docstring(old_fn) is not None else []
    if got not in (want, doc + want):
        return "wrong"
    same = _strip_body(tree, qualname) == _strip_body(ast.parse(old), qualname)
    return "right" if same else "wrong"


def deleted(old, new, qualname):
    """`right` when `new` is `old` without the function, `untouched` when unchanged, `broken`
    when it does not parse, else `wrong`."""
    if new == old:
        return "untouched"
    try:
        tree = ast.parse(new)
    except SyntaxError:
        return "broken"
    want = ast.parse(old)
    *outer, name = qualname.split(".")
    body = want.body
    for c in outer:
        body = next(n.body for n in body if isinstance(n, ast.ClassDef) and n.name == c)
    body.remove(find(want, qualname))
    return "right" if ast.dump(tree) == ast.dump(want) else "wrong"


def apply_edits(text, edits):
    """`text` with lanser's workspaceEdit edits of one file (code-point ranges) applied."""
    lines = text.split("\n")
    starts = [0]
    for l in lines:
        starts.append(starts[-1] + len(l) + 1)

    def at(line, col):
        return starts[line] + col if line < len(lines) else len(text)
    for e in sorted(edits, key=lambda e: e["range"], reverse=True):
        r = e["range"]
        text = text[:at(r[0], r[1])] + e["newText"] + text[at(r[2], r[3]):]
    return text


def describe(p):
    return {k: [f"{d.at.path}:{d.at.line}:{d.at.col} {q}" for d, q in v] for k, v in p.items()}


async def run(server, s, ws, p, timed, size, med):
    """Every pick of `p` through `server` (its `replace_body` and `delete`), checked; the
    medians of latency and text size per kind."""
    out = {}
    for kind in ("used", "unused"):
        rows = []
        for d, q in p[kind]:
            path = ws / d.at.path
            old = path.read_text(encoding="utf-8")
            ms, res, new, err = await timed(server.delete(s, d, q, ws))
            on_disk = path.read_text(encoding="utf-8")
            path.write_text(old, encoding="utf-8")
            v = deleted(old, new if new is not None else on_disk, q)
            if kind == "used":
                v = "refused" if v == "untouched" and on_disk == old else v
            rows.append({"at": f"{d.at.path}:{d.at.line}", "qualname": q, "verdict": v,
                         "ms": ms, "text_bytes": size(res) if res else 0, "error": err})
        out[kind] = rows
    for form in ("col0", "indented"):
        rows = []
        for d, q in p["replace"]:
            path = ws / d.at.path
            old = path.read_text(encoding="utf-8")
            node = find(ast.parse(old), q)
            body = BODY if form == "col0" else "".join(
                body_indent(old.split("\n"), node) + l + "\n" for l in BODY.splitlines())
            ms, res, new, err = await timed(server.replace_body(s, d, q, body, ws))
            on_disk = path.read_text(encoding="utf-8")
            path.write_text(old, encoding="utf-8")
            v = replaced(old, new if new is not None else on_disk, q, BODY)
            rows.append({"at": f"{d.at.path}:{d.at.line}", "qualname": q, "verdict": v,
                         "ms": ms, "text_bytes": size(res) if res else 0, "error": err})
        out[f"replace_{form}"] = rows
    return {k: {"n": len(rows), "right": sum(r["verdict"] in ("right", "refused") for r in rows),
                "ms": med([r["ms"] for r in rows]),
                "text_bytes": med([r["text_bytes"] for r in rows]), "rows": rows}
            for k, rows in out.items()}

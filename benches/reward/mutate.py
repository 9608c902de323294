"""Patch families of the reward validity benchmark: deterministic source mutations found
with `ast` and applied as single-line text edits (so every patch is a small, valid diff).

Each operator takes a module's text and returns every candidate edit as
`(line_index, old_line, new_line_or_None)` — `None` deletes the line; a candidate is applied
by `apply`. Operators never look at anything but the text, so the same text gives the same
candidates in the same order.
"""
from __future__ import annotations

import ast
import difflib
import io
import keyword
import tokenize

Edit = tuple  # (line_index, old_line, new_line | None) or ("swap", i, j) for reorders


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _module_functions(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _in_functions(tree: ast.AST):
    """Nodes inside function bodies, with each node once."""
    seen = set()
    for f in _functions(tree):
        for stmt in f.body:
            for node in ast.walk(stmt):
                if id(node) not in seen:
                    seen.add(id(node))
                    yield node


def _replace(lines, node, new_src):
    """Replace a single-line node's source segment; None when it spans lines."""
    if node.lineno != node.end_lineno:
        return None
    i = node.lineno - 1
    line = lines[i]
    b = line.encode()
    seg_start, seg_end = node.col_offset, node.end_col_offset
    new = (b[:seg_start] + new_src.encode() + b[seg_end:]).decode()
    return (i, line, new)


def _src(lines, node) -> str:
    return lines[node.lineno - 1].encode()[node.col_offset:node.end_col_offset].decode()


# --- breakages a diagnostics count can see -------------------------------------------------

def misspell_callee(text: str):
    tree, lines = ast.parse(text), _lines(text)
    names = _module_functions(tree)
    out = []
    for n in _in_functions(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names:
            wrong = n.func.id[:-1] + n.func.id[-1] * 2
            if wrong not in names:
                e = _replace(lines, n.func, wrong)
                if e:
                    out.append(e)
    return out


def wrong_arity(text: str):
    tree, lines = ast.parse(text), _lines(text)
    names = _module_functions(tree)
    out = []
    for n in _in_functions(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
                and n.args and not n.keywords and n.lineno == n.end_lineno
                and not any(isinstance(a, ast.Starred) for a in n.args)):
            kept = ", ".join(_src(lines, a) for a in n.args[:-1])
            e = _replace(lines, n, f"{n.func.id}({kept})")
            if e:
                out.append(e)
    return out


def drop_import(text: str):
    tree, lines = ast.parse(text), _lines(text)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    out = []
    for n in tree.body:
        if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno == n.end_lineno:
            bound = {(a.asname or a.name).split(".")[0] for a in n.names}
            if bound & used and not (isinstance(n, ast.ImportFrom) and n.module == "__future__"):
                out.append((n.lineno - 1, lines[n.lineno - 1], None))
    return out


def remove_public(text: str):
    tree, lines = ast.parse(text), _lines(text)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    out = []
    for n in tree.body:
        if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")
                and n.name in used and not n.decorator_list):
            i = n.lineno - 1
            line = lines[i]
            if f"def {n.name}(" in line:
                out.append((i, line, line.replace(f"def {n.name}(", f"def _{n.name}_removed(", 1)))
    return out


# --- breakages it cannot see ------------------------------------------------------------------

def negate_condition(text: str):
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for n in _in_functions(tree):
        if isinstance(n, (ast.If, ast.While)) and n.test.lineno == n.test.end_lineno:
            e = _replace(lines, n.test, f"not ({_src(lines, n.test)})")
            if e:
                out.append(e)
    return out


def off_by_one(text: str):
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for n in _in_functions(tree):
        if isinstance(n, (ast.Compare, ast.Slice)) or (
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "range"):
            for c in ast.walk(n):
                if isinstance(c, ast.Constant) and type(c.value) is int:
                    e = _replace(lines, c, str(c.value + 1))
                    if e:
                        out.append(e)
    return sorted(set(out))


def swap_args(text: str):
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for n in _in_functions(tree):
        if (isinstance(n, ast.Call) and len(n.args) >= 2 and all(isinstance(a, ast.Name) for a in n.args[:2])
                and n.args[0].id != n.args[1].id and n.lineno == n.end_lineno):
            a, b = n.args[0], n.args[1]
            line = lines[n.lineno - 1].encode()
            new = (line[:a.col_offset] + b.id.encode() + line[a.end_col_offset:b.col_offset]
                   + a.id.encode() + line[b.end_col_offset:]).decode()
            out.append((n.lineno - 1, lines[n.lineno - 1], new))
    return out


def delete_statement(text: str):
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for f in _functions(tree):
        body = [s for s in f.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        for s in body[:-1]:
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.Expr)) and s.lineno == s.end_lineno:
                out.append((s.lineno - 1, lines[s.lineno - 1], None))
    return out


def change_return_constant(text: str):
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for n in _in_functions(tree):
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Constant):
            v = n.value.value
            if isinstance(v, bool):
                new = str(not v)
            elif isinstance(v, int):
                new = str(v + 1)
            else:
                continue
            e = _replace(lines, n.value, new)
            if e:
                out.append(e)
    return out


# --- behaviour-preserving edits ---------------------------------------------------------------

def rename_local(text: str):
    """Every line of one function renamed at once: returns ("multi", [(i, old, new), ...])."""
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for f in _functions(tree):
        if f.lineno == f.end_lineno:
            continue
        assigned = sorted({t.id for s in ast.walk(f) if isinstance(s, ast.Assign)
                           for t in s.targets if isinstance(t, ast.Name)})
        kw = {k.arg for k in ast.walk(f) if isinstance(k, ast.keyword)}
        fstr = {n.id for j in ast.walk(f) if isinstance(j, ast.JoinedStr)
                for n in ast.walk(j) if isinstance(n, ast.Name)}
        glob = {x for s in ast.walk(f) if isinstance(s, (ast.Global, ast.Nonlocal)) for x in s.names}
        for var in assigned:
            if var in kw or var in fstr or var in glob or keyword.iskeyword(var + "_"):
                continue
            edits = _rename_tokens(lines, f.lineno, f.end_lineno, var, var + "_")
            if edits:
                out.append(("multi", edits))
                break
    return out


def _rename_tokens(lines, first, last, old, new):
    src = "".join(lines[first - 1:last])
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    hits = {}
    for k, t in enumerate(toks):
        if t.type == tokenize.NAME and t.string == old:
            prev = toks[k - 1].string if k else ""
            if prev == ".":
                return None
            hits.setdefault(t.start[0], []).append(t.start[1])
    edits = []
    for row, cols in sorted(hits.items()):
        i = first - 1 + row - 1
        line = lines[i]
        for c in sorted(cols, reverse=True):
            line = line[:c] + new + line[c + len(old):]
        edits.append((i, lines[i], line))
    return edits


def add_docstring(text: str):
    tree, lines = ast.parse(text), _lines(text)
    out = []
    for f in _functions(tree):
        first = f.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            continue
        if first.lineno <= f.lineno:
            continue
        i = first.lineno - 1
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        if not indent:
            continue
        out.append(("insert", i, f'{indent}"""{f.name}, as before."""\n'))
    return out


def reorder_imports(text: str):
    tree, lines = ast.parse(text), _lines(text)
    body = tree.body
    out = []
    for a, b in zip(body, body[1:]):
        if (isinstance(a, (ast.Import, ast.ImportFrom)) and isinstance(b, (ast.Import, ast.ImportFrom))
                and a.lineno == a.end_lineno and b.lineno == b.end_lineno and b.lineno == a.lineno + 1
                and not any(isinstance(x, ast.ImportFrom) and x.module == "__future__" for x in (a, b))):
            out.append(("swap", a.lineno - 1, b.lineno - 1))
    return out


VISIBLE = {"misspell_callee": misspell_callee, "wrong_arity": wrong_arity,
           "drop_import": drop_import, "remove_public": remove_public}
INVISIBLE = {"negate_condition": negate_condition, "off_by_one": off_by_one,
             "swap_args": swap_args, "delete_statement": delete_statement,
             "change_return_constant": change_return_constant}
NEUTRAL = {"rename_local": rename_local, "add_docstring": add_docstring,
           "reorder_imports": reorder_imports}


def apply(text: str, edit) -> str:
    lines = _lines(text)
    if edit[0] == "swap":
        _, i, j = edit
        lines[i], lines[j] = lines[j], lines[i]
    elif edit[0] == "insert":
        _, i, new = edit
        lines.insert(i, new)
    elif edit[0] == "multi":
        for i, old, new in edit[1]:
            assert lines[i] == old
            lines[i] = new
    else:
        i, old, new = edit
        assert lines[i] == old, (lines[i], old)
        if new is None:
            del lines[i]
        else:
            lines[i] = new
    return "".join(lines)


def lines_of(edit) -> set[int]:
    if edit[0] in ("swap",):
        return {edit[1], edit[2]}
    if edit[0] == "insert":
        return {edit[1]}
    if edit[0] == "multi":
        return {i for i, _, _ in edit[1]}
    return {edit[0]}


def diff(rel: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(_lines(old), _lines(new), f"a/{rel}", f"b/{rel}", n=3))


def compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec")
        return True
    except SyntaxError:
        return False

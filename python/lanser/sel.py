"""Selector helpers: each returns the canonical selector string (what `resolution.original`
echoes), percent-encoding what the DSL reserves. docs/selectors.md has the grammar."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

_PATH = {"#": "%23", "?": "%3F", "%": "%25", '"': "%22", " ": "%20", "@": "%40"}
_SNIPPET = {"#": "%23", "?": "%3F", "%": "%25", '"': "%22", " ": "%20", "\\": "%5C"}


def _enc(text: str, table: dict) -> str:
    return "".join(table.get(c, c) for c in text)


def cursor(path: str, line: int, col: int) -> str:
    """Line `line`, column `col` (1-based; columns in the --index-io unit)."""
    return f"{_enc(path, _PATH)}@L{line}:C{col}"


def name(path: str, line: int, ident: str, n: Optional[int] = None) -> str:
    """The `n`th (1-based) whole-word `ident` on line `line`."""
    return f"{_enc(path, _PATH)}@L{line}:{ident}" + (f"#{n}" if n and n > 1 else "")


def span(path: str, start: Tuple[int, int], end: Tuple[int, int]) -> str:
    """The range from (line, col) to (line, col), 1-based."""
    return f"{_enc(path, _PATH)}@R({start[0]},{start[1]}->{end[0]},{end[1]})"


def symbol(module: str, qualname: str, role: Optional[str] = None,
           overload: Optional[int] = None) -> str:
    """A definition by module and qualified name; role `def` (default), `sig`, `body`, `doc`."""
    s = f"py://{module}#{qualname}"
    if role and role != "def":
        s += f":{role}"
    if overload is not None:
        s += f"?overload={overload}"
    return s


def sym(path: str, qualname: str, role: Optional[str] = None) -> str:
    """A definition by file and qualified name, in any language with an outline
    (`sym("web/app.ts", "Store.add")`, `sym("store/store.go", "Store.Add", "body")`)."""
    s = f"sym://{_enc(path, _PATH)}#{qualname}"
    return s + (f":{role}" if role else "")


def ast_file(path: str, steps: Sequence[Tuple[str, str]] = (),
             node: Optional[Tuple[str, int]] = None) -> str:
    """As `ast`, from a file of any language with an outline instead of a Python module."""
    s = f"ast://[file={_enc(path, {**_PATH, ']': '%5D'})}]"
    s += "".join(f"/[{k}={v}]" for k, v in steps)
    if node:
        s += f"/{node[0]}[{node[1]}]"
    return s


def ast(module: str, steps: Sequence[Tuple[str, str]] = (), node: Optional[Tuple[str, int]] = None) -> str:
    """A construct by kind (`[("class", "C"), ("def", "f")]`), then optionally the Nth
    tree-sitter node of a kind (`("call", 1)`)."""
    s = f"ast://[module={module}]" + "".join(f"/[{k}={v}]" for k, v in steps)
    if node:
        s += f"/{node[0]}[{node[1]}]"
    return s


def anchor(path: str, snippet: str, ctx: Optional[int] = None, hash: Optional[str] = None) -> str:
    """A snippet of text in `path` (`hash`: sha1 of its context window, `sha1:<hex>`)."""
    s = f'anchor://{_enc(path, _PATH)}#"{_enc(snippet, _SNIPPET)}"'
    query = [f"ctx={ctx}"] if ctx is not None else []
    if hash:
        query.append(f"hash={hash}")
    return s + ("?" + "&".join(query) if query else "")

#!/usr/bin/env python3
"""Write the seed corpus of every fuzz target into tests/fuzz/corpus/<target>/ (gitignored).

Seeds come from the fixtures (their Python sources, selectors naming them, diffs between
them, their pyproject.toml), from seeds/trace.jsonl (a real trace recorded with --trace-file
on fixtures/srcpkg, also cut into LSP frames) and from a few hand-written hostile cases.
Usage: python3 tests/fuzz/make_seeds.py   (idempotent; libFuzzer adds its finds next to them)
"""
import hashlib
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = REPO / "fixtures"
CORPUS = HERE / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / ("seed-" + hashlib.sha1(data).hexdigest()[:16])).write_bytes(data)


def main():
    sources = sorted(p for p in FIXTURES.rglob("*.py"))
    texts = [p.read_bytes() for p in sources]
    rels = [str(p.relative_to(FIXTURES)) for p in sources]

    for t in texts:
        put("text", t)
        put("workspace_edit", bytes([0, 1, 2, 1, 4, 1, 7, 2, 1, 2, 0x78, 0x79]) + t)
    put("text", "a\r\nb\rc\n😀é\u2028x\r")
    put("workspace_edit", bytes([1, 2, 3]) + "x = \"😀😀\"; y = x\r\n".encode())

    for a, b in zip(texts, texts[1:]):
        put("patch", b"\x01" + a + b"\x00" + b)
    diff = (
        "--- a/src/shapes/units.py\n+++ b/src/shapes/units.py\n"
        "@@ -1,2 +1,2 @@\n-import math\n+import cmath\n \n\\ No newline at end of file\n"
    )
    put("patch", b"\x00" + texts[0] + b"\x00" + diff.encode())
    put("patch", b"\x01a\nb\nc\x00a\nB\nc")

    selectors = []
    for rel in rels:
        selectors += [f"{rel}@L1:C1", f"{rel}@R(1,1->2,3)", f"{rel}@L2:name#2"]
    selectors += [
        "py://shapes.units#convert:sig",
        "py://shapes.geometry#Circle.area?overload=0",
        "ast://[module=shapes.geometry]/[class=Circle]/[def=area]/Return[1]",
        "sym://web/app.ts#Greeter.$greet:body",
        "ast://[file=src/a%5Db.rs]/[class=Counter]/[def=add]/identifier[1]",
        'anchor://src/shapes/units.py#"def convert%28"?ctx=2',
        "file:///C:/x%20y.py@L3:C4?docVersion=sha256:" + "0" * 64,
    ]
    for s in selectors:
        put("selector", s)
        put("batch_line", json.dumps({"id": 1, "cmd": "def", "selector": s}))
    for spec in [
        {"kind": "cursor", "path": "src/shapes/units.py", "line": 13, "col": 5},
        {"kind": "cursor", "path": "a b.py", "line": 2, "name": "x", "occurrence": 2,
         "indexing": "utf-16"},
        {"kind": "anchor", "path": "src/shapes/units.py", "snippet": "def convert(", "ctx": 2},
        {"kind": "range", "path": "a.py", "start": [1, 1], "end": [2, 3]},
        {"kind": "symbol", "qualname": "shapes.units:convert", "role": "def"},
        {"kind": "symbol", "module": "shapes.geometry", "qualname": "Circle.area"},
    ]:
        put("selector_json", json.dumps(spec))
        put("batch_line", json.dumps({"cmd": "hover", "selector": spec}))
    for line in [
        {"cmd": "symbols", "args": {"file": "src/shapes/geometry.py"}},
        {"cmd": "diag", "args": {"paths": ["src"], "json": True}},
        {"cmd": "rename", "selector": "a.py@L1:C1", "args": {"new-name": "b", "apply": False}},
        {"cmd": "check", "args": {"patch": "x.diff"}},
        {"cmd": "nope"},
    ]:
        put("batch_line", json.dumps(line))

    for p in FIXTURES.rglob("*.toml"):
        put("config", p.read_bytes())
    put("config", '''server = "mypyright"
[servers.basedpyright.settings.basedpyright.analysis]
typeCheckingMode = "strict"
[servers.mypyright]
command = "pyright-langserver"
args = ["--stdio"]
file_types = ["py", "pyi"]
root_markers = ["pyproject.toml"]
version = "1.1.406"
provision = "npm"
package = "pyright"
''')

    trace = (HERE / "seeds" / "trace.jsonl").read_bytes()
    put("trace", trace)
    lines = trace.splitlines()
    put("trace", b"\n".join(lines[:1] + lines[-3:]))
    for line in lines:
        rec = json.loads(line)
        if rec.get("type") == "rpc":
            body = json.dumps(rec["body"]).encode()
            put("lsp_frame", b"Content-Length: %d\r\n\r\n" % len(body) + body)
    put("lsp_frame", b"noise\nContent-Length: 2\r\nContent-Type: x\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]")


if __name__ == "__main__":
    main()

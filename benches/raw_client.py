#!/usr/bin/env python3
"""A minimal raw LSP client: the baseline lanser's batch throughput is measured against.

Usage: raw_client.py WORKSPACE REQUESTS.jsonl [server command...]

Starts Pyright (default: lanser's managed install) in WORKSPACE with the settings lanser sends,
then issues the same requests as `lanser batch` would, strictly one at a time in one session:
didOpen on first use of a file, then the request, then wait for its answer. `locate` needs no
server and is skipped; refs, diag and workspace symbols first wait for Pyright's "Found N
source files" (as lanser does, since Pyright answers them partially before). type-def also waits
for it and pulls the file's diagnostics first (as lanser does: before the file is checked,
Pyright answers a module's type definition with nothing). Prints one JSON line: requests sent
(the diagnostics pulled before a type-def included), seconds, errors. With RAW_STATS=1, per
method counts and seconds waited for answers go to stderr.
"""
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from urllib.parse import quote

ws = os.path.realpath(sys.argv[1])
reqs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
cmd = sys.argv[3:] or ["node", os.path.expanduser(
    "~/.cache/lanser/pyright/1.1.407/node_modules/pyright/langserver.index.js"), "--stdio"]


CAPS = {"workspace": {"configuration": True, "workspaceFolders": True},
        "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                         "documentSymbol": {"hierarchicalDocumentSymbolSupport": True}}}
if os.environ.get("RAW_CAPS"):
    CAPS = json.loads(os.environ["RAW_CAPS"])


def uri(rel):
    return "file://" + quote(os.path.join(ws, rel))


def main():
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    out, inp = p.stdout, p.stdin
    state = {"id": 0, "ready": False}
    stats = defaultdict(lambda: [0, 0.0])
    python = subprocess.run(["sh", "-c", "command -v python3"], capture_output=True,
                            text=True).stdout.strip()
    settings = {"python": {"analysis": {"diagnosticMode": "openFilesOnly",
                                        "autoSearchPaths": True,
                                        "useLibraryCodeForTypes": True},
                           "pythonPath": python}, "pyright": {}}

    def send(msg):
        body = json.dumps(msg).encode()
        inp.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        inp.flush()

    def read():
        length = None
        while True:
            line = out.readline()
            if not line:
                raise SystemExit("server exited")
            line = line.strip()
            if not line:
                if length is not None:
                    return json.loads(out.read(length))
                continue
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])

    def handle(msg):
        """Answer server requests; note readiness."""
        if "method" in msg and "id" in msg:
            if msg["method"] == "workspace/configuration":
                res = []
                for it in msg["params"]["items"]:
                    cur = settings
                    for part in (it.get("section") or "").split("."):
                        cur = cur.get(part) if part and isinstance(cur, dict) else cur
                    res.append(cur)
                send({"jsonrpc": "2.0", "id": msg["id"], "result": res})
            else:
                send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif msg.get("method") == "window/logMessage":
            text = msg["params"]["message"]
            if text.startswith("Found ") and " source file" in text or \
                    text.startswith("No source files found"):
                state["ready"] = True

    def request(method, params):
        state["id"] += 1
        rid = state["id"]
        t = time.perf_counter()
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = read()
            if msg.get("id") == rid and "method" not in msg:
                stats[method][0] += 1
                stats[method][1] += time.perf_counter() - t
                return msg
            handle(msg)

    def wait_ready():
        t = time.perf_counter()
        while not state["ready"]:
            handle(read())
        stats["(wait for the project load)"][1] += time.perf_counter() - t

    root = "file://" + quote(ws)
    request("initialize", {"processId": os.getpid(), "rootUri": root, "rootPath": ws,
                           "workspaceFolders": [{"uri": root, "name": "root"}],
                           "capabilities": CAPS})
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
          "params": {"settings": settings}})
    opened, sent, errors = set(), 0, 0

    def open_doc(rel):
        if rel not in opened:
            opened.add(rel)
            with open(os.path.join(ws, rel), encoding="utf-8") as f:
                text = f.read()
            send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                "textDocument": {"uri": uri(rel), "languageId": "python", "version": 1,
                                 "text": text}}})

    def position(sel):
        rel, rest = sel.split("@L")
        line, name = rest.split(":")
        text = open(os.path.join(ws, rel), encoding="utf-8").read().split("\n")[int(line) - 1]
        i = 0
        while True:
            i = text.index(name, i)
            before = text[i - 1] if i else " "
            after = text[i + len(name)] if i + len(name) < len(text) else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                break
            i += 1
        col = len(text[:i].encode("utf-16-le")) // 2
        return rel, {"line": int(line) - 1, "character": col}

    for r in reqs:
        c, args = r["cmd"], r.get("args", {})
        if c == "locate":
            continue
        if c in ("def", "hover", "refs", "type-def"):
            rel, pos = position(r["selector"])
            open_doc(rel)
            if c in ("refs", "type-def"):
                wait_ready()
            if c == "type-def":
                msg = request("textDocument/diagnostic", {"textDocument": {"uri": uri(rel)}})
                sent += 1
                errors += "error" in msg
            method = {"def": "textDocument/definition", "hover": "textDocument/hover",
                      "refs": "textDocument/references",
                      "type-def": "textDocument/typeDefinition"}[c]
            params = {"textDocument": {"uri": uri(rel)}, "position": pos}
            if c == "refs":
                params["context"] = {"includeDeclaration": True}
        elif c == "symbols" and "file" in args:
            open_doc(args["file"])
            method, params = "textDocument/documentSymbol", {"textDocument": {"uri": uri(args["file"])}}
        elif c == "symbols":
            wait_ready()
            method, params = "workspace/symbol", {"query": args["query"]}
        elif c == "diag":
            wait_ready()
            method = "textDocument/diagnostic"
            params = {"textDocument": {"uri": uri(args["targets"][0])}}
        else:
            continue
        msg = request(method, params)
        sent += 1
        errors += "error" in msg
    request("shutdown", None)
    send({"jsonrpc": "2.0", "method": "exit"})
    p.wait(timeout=10)
    if os.environ.get("RAW_STATS"):
        for m, (n, secs) in sorted(stats.items()):
            print(f"RAW {m:<40} {n:6} {secs:9.3f} s", file=sys.stderr)
    print(json.dumps({"requests": sent, "seconds": round(time.perf_counter() - t0, 3),
                      "errors": errors}))


main()

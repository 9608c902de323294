#!/usr/bin/env python3
"""A deliberately broken language server for lanser's fault tests.

Real Pyright answers the happy path in every other test; this one plays only what a real server
cannot be made to do on demand. It speaks just enough LSP (initialize, shutdown, exit) and, on
the first textDocument/* request, misbehaves according to MODE:

  crash     write a line to stderr and exit 3 without answering
  diestart  at start, before reading anything: write a reason to stderr, then a Rust-style
            backtrace (as rustup's proxy without its component does), and exit 1
  hang      never answer (lanser must time out)
  cancel    answer with RequestCancelled (-32800)
  modified  answer with ContentModified (-32801)
  garbage   write a frame with a malformed Content-Length header, then wait
  badjson   answer with a well-framed body that is not JSON, then go on serving
  notlsp    answer with JSON that is no LSP message (a reply with neither result nor
            error), then go on serving
  noisy     print stray text on stdout before every frame, and answer null

  diagfail  say the project is loaded and answer pull diagnostics with no items, except for a
            file whose name contains "deep": an internal error (-32603) "Maximum call stack
            size exceeded", as a parser overflowing on deep nesting answers

  slow      say the project is loaded; hold every textDocument/definition for 10 s, unless a
            $/cancelRequest names it first: then answer RequestCancelled at once and append
            "cancelled <id>" to the file $FAKE_LSP_LOG

  slowdiag  as slow, for pull diagnostics: declare them, and hold every
            textDocument/diagnostic for 60 s (then an empty report), unless a $/cancelRequest
            names it first: then answer RequestCancelled and append "cancelled <id>" to
            $FAKE_LSP_LOG. Other requests are answered null at once.

  silent    publish nothing, begin no progress, answer every textDocument/* request null: a
            server that never says it is ready (lanser must mark its answers)

  importfail  say, as jdtls does when a Maven project's build plugins are not in the local
              repository, that the project import failed (`language/status` `Error` "Failed to
              import projects", then `ProjectStatus` `WARNING`), then that it is loaded, and
              answer every textDocument/* request null

  lintslow  say the project is loaded; publish the diagnostics of each document it is sent
            (one error on its first line, for the version sent) 3 s later, as a linter on a
            loaded machine does

and one cooperative mode, for the path Pyright does not take:

  willrename  advertise workspace.fileOperations.willRename/didRename, say the project is
              loaded, and answer workspace/willRenameFiles with one edit to
              tests/test_units.py (line 3 becomes "import shapes.sub.units  # by the server")
"""
import json
import os
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "crash"
out = sys.stdout.buffer


SENDING = threading.Lock()


def send(msg):
    body = json.dumps(msg).encode()
    with SENDING:
        if MODE == "noisy":
            out.write(b"debug: stray output on stdout\n")
        out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        out.flush()


def publish_later(doc):
    """lintslow: one error on the document's first line, for its version, 3 s from now."""
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    params = {"uri": doc["uri"], "version": doc["version"],
              "diagnostics": [{"range": rng, "severity": 1, "message": "slow lint"}]}
    note = {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}
    threading.Timer(3.0, send, (note,)).start()


def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sys.stdin.buffer.read(length))


def slow_mode():
    """Messages come from a reader thread, so a held request can be answered later."""
    import queue
    import threading

    inbox = queue.Queue()

    def reader():
        while True:
            inbox.put(read())

    threading.Thread(target=reader, daemon=True).start()
    held = {}
    while True:
        now = time.time()
        for mid, (due, result) in list(held.items()):
            if due <= now:
                del held[mid]
                send({"jsonrpc": "2.0", "id": mid, "result": result})
        try:
            msg = inbox.get(timeout=0.05)
        except queue.Empty:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            caps = {"definitionProvider": True, "hoverProvider": True}
            if MODE == "slowdiag":
                caps["diagnosticProvider"] = {"interFileDependencies": True,
                                              "workspaceDiagnostics": False}
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "capabilities": caps,
                "serverInfo": {"name": "fake-lsp", "version": "0.0.1"}}})
        elif method == "initialized":
            send({"jsonrpc": "2.0", "method": "window/logMessage",
                  "params": {"type": 3, "message": "Found 1 source file"}})
        elif method == "$/cancelRequest":
            cid = msg["params"]["id"]
            if cid in held:
                del held[cid]
                send({"jsonrpc": "2.0", "id": cid, "error": {"code": -32800, "message": "cancelled"}})
                with open(os.environ["FAKE_LSP_LOG"], "a") as f:
                    f.write(f"cancelled {cid}\n")
        elif method == "textDocument/definition" and MODE == "slow":
            held[mid] = (time.time() + 10, None)
        elif method == "textDocument/diagnostic" and MODE == "slowdiag":
            held[mid] = (time.time() + 60, {"kind": "full", "items": []})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": mid, "result": None})
        elif method == "exit":
            sys.exit(0)
        elif mid is not None:
            send({"jsonrpc": "2.0", "id": mid, "result": None})


if MODE == "diestart":
    sys.stderr.write("fake-lsp: cannot start: the component is missing; run `fake-setup` to add it\n"
                     "\nStack backtrace:\n   0: fake::main\n  15: <unknown>\n")
    sys.exit(1)

if MODE in ("slow", "slowdiag"):
    slow_mode()

while True:
    msg = read()
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        root = msg["params"]["rootUri"]
        caps = {"definitionProvider": True, "hoverProvider": True}
        if MODE == "willrename":
            ops = {"filters": [{"pattern": {"glob": "**/*.py"}}]}
            caps["workspace"] = {"fileOperations": {"willRename": ops, "didRename": ops}}
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "capabilities": caps,
            "serverInfo": {"name": "fake-lsp", "version": "0.0.1"}}})
    elif method == "initialized" and MODE == "importfail":
        for kind, text in (("Error", "Failed to import projects"), ("ProjectStatus", "WARNING")):
            send({"jsonrpc": "2.0", "method": "language/status",
                  "params": {"type": kind, "message": text}})
        send({"jsonrpc": "2.0", "method": "window/logMessage",
              "params": {"type": 3, "message": "Found 1 source file"}})
    elif method in ("textDocument/didOpen", "textDocument/didChange") and MODE == "lintslow":
        publish_later(msg["params"]["textDocument"])
    elif method == "initialized" and MODE in ("willrename", "diagfail", "lintslow"):
        send({"jsonrpc": "2.0", "method": "window/logMessage",
              "params": {"type": 3, "message": "Found 1 source file"}})
    elif method == "workspace/willRenameFiles":
        rng = {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 19}}
        send({"jsonrpc": "2.0", "id": mid, "result": {"changes": {
            root + "/tests/test_units.py": [
                {"range": rng, "newText": "import shapes.sub.units  # by the server"}]}}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": mid, "result": None})
    elif method == "exit":
        sys.exit(0)
    elif mid is not None and method == "textDocument/diagnostic" and MODE == "diagfail":
        if "deep" in msg["params"]["textDocument"]["uri"]:
            send({"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32603, "message": "RangeError: Maximum call stack size exceeded\n    at parse"}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {"kind": "full", "items": []}})
    elif mid is not None and method.startswith("textDocument/"):
        if MODE == "crash":
            sys.stderr.write("fake-lsp: simulated crash\n")
            sys.stderr.flush()
            sys.exit(3)
        elif MODE == "hang":
            time.sleep(3600)
        elif MODE == "cancel":
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32800, "message": "cancelled"}})
        elif MODE == "modified":
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32801, "message": "content modified"}})
        elif MODE == "badjson":
            body = b'{"jsonrpc": "2.0", "id": %d, "result": nul' % mid
            out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            out.flush()
        elif MODE == "notlsp":
            send({"jsonrpc": "2.0", "id": mid})
        elif MODE == "garbage":
            out.write(b"Content-Length: twelve\r\n\r\n{}")
            out.flush()
            time.sleep(3600)
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": None})

#!/usr/bin/env python3
"""first_answer.py - issue 31: lanser's first answer on a large Python project next to
agent-lsp's, and whether Pyright's on-demand answers before the project load equal those after.

Project: Django 5.1.4's sdist from PyPI (bench_monorepo.fetch_django: `pip download --no-deps
--no-binary :all: django==5.1.4`, 2,700+ Python files), served by the pinned Pyright 1.1.407.
Target: the first call of `resolve_url` in django/contrib/auth/views.py (defined in
django/shortcuts.py, imported from there).

  - lanser: a cold `lanser CMD SEL --workspace DJANGO --json` process (no daemon), wall clock
    from its start to its bundle on stdout, for def, hover and signature; median of --runs.
  - agent-lsp 0.23.5 (PyPI: `pip install agent-lsp==0.23.5` into a venv, given by --agent-lsp),
    run as `agent-lsp python:pyright-langserver,--stdio` with the same Pyright on PATH: from its
    spawn, MCP initialize, `start_lsp` at the root, `go_to_definition` at the same position, to
    its answer; median of --runs.
  - Same answers: one `lanser batch`: def, hover, signature (on demand, before the load),
    refs (waits for "Found N source files"), then def, hover, signature again; the facts of
    each pair must be equal.

Usage (after `cargo build --release`): nice python3 benches/first_answer.py
    --agent-lsp /path/to/venv/bin/agent-lsp [--runs 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_monorepo  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
LANSER = os.environ.get("LANSER_BIN", str(REPO / "target" / "release" / "lanser"))
PYRIGHT_BIN = Path.home() / ".cache/lanser/pyright/1.1.407/node_modules/.bin"
FILE = "django/contrib/auth/views.py"
NAME = "resolve_url"


def target(root: Path) -> tuple[int, int]:
    """1-based line and column of the first call of NAME in FILE (not its import)."""
    for n, line in enumerate((root / FILE).read_text().splitlines(), 1):
        col = line.find(NAME + "(")
        if col >= 0 and "import" not in line:
            return n, col + 1
    raise SystemExit(f"no call of {NAME} in {FILE}")


def lanser_first(root: Path, cmd: str, sel: str) -> tuple[float, dict]:
    env = dict(os.environ, LANSER_NO_DAEMON="1")
    start = time.perf_counter()
    p = subprocess.Popen([LANSER, cmd, sel, "--workspace", str(root), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    line = p.stdout.readline()
    ms = (time.perf_counter() - start) * 1000
    p.wait()
    return ms, json.loads(line)


class Mcp:
    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.next = 0

    def call(self, method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next += 1
            msg["id"] = self.next
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while not notify:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"agent-lsp ended during {method}")
            m = json.loads(line)
            if m.get("id") == self.next:
                return m

    def close(self):
        self.p.kill()
        self.p.wait()


def agent_first(agent: str, root: Path, line: int, col: int) -> tuple[float, str]:
    env = dict(os.environ, PATH=f"{PYRIGHT_BIN}:{os.environ['PATH']}")
    start = time.perf_counter()
    m = Mcp([agent, "python:pyright-langserver,--stdio"], env)
    m.call("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "0"}})
    m.call("notifications/initialized", notify=True)
    m.call("tools/call", {"name": "start_lsp", "arguments": {"root_dir": str(root)}})
    r = m.call("tools/call", {"name": "go_to_definition", "arguments": {
        "file_path": str(root / FILE), "line": line, "column": col}})
    ms = (time.perf_counter() - start) * 1000
    m.close()
    text = json.dumps(r.get("result", r.get("error")))
    return ms, text


def same_answers(root: Path, sel: str, call: str) -> list[tuple[str, bool]]:
    ops = [("def", sel), ("hover", sel), ("signature", call)]
    ask = [json.dumps({"cmd": c, "selector": s}) for c, s in ops]
    lines = ask + [json.dumps({"cmd": "refs", "selector": sel})] + ask
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    out = subprocess.run([LANSER, "batch", "--in", f.name, "--out", "-", "--workspace",
                          str(root)], capture_output=True, text=True,
                         env=dict(os.environ, LANSER_NO_DAEMON="1"), check=True)
    b = [json.loads(x) for x in out.stdout.splitlines()]
    return [(c, b[i]["facts"] == b[i + 4]["facts"] and bool(b[i]["facts"]))
            for i, (c, _) in enumerate(ops)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent-lsp", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    root = bench_monorepo.fetch_django()
    line, col = target(root)
    sel = f"{FILE}@L{line}:{NAME}"
    call = f"{FILE}@L{line}:C{col + len(NAME) + 1}"
    print(f"Django 5.1.4 at {root}; {sel}")
    for cmd, s in [("def", sel), ("hover", sel), ("signature", call)]:
        times, bundle = [], None
        for _ in range(a.runs):
            ms, bundle = lanser_first(root, cmd, s)
            times.append(ms)
        print(f"lanser {cmd}: median {statistics.median(times):,.0f} ms "
              f"(min {min(times):,.0f}, max {max(times):,.0f}); "
              f"{json.dumps(bundle['facts'])[:160]}")
    times, answer = [], ""
    for _ in range(a.runs):
        ms, answer = agent_first(a.agent_lsp, root, line, col)
        times.append(ms)
    print(f"agent-lsp go_to_definition: median {statistics.median(times):,.0f} ms "
          f"(min {min(times):,.0f}, max {max(times):,.0f}); {answer[:160]}")
    for cmd, same in same_answers(root, sel, call):
        print(f"{cmd}: before the load == after the load: {same}")


if __name__ == "__main__":
    main()

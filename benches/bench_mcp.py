#!/usr/bin/env python3
"""bench_mcp.py - `lanser mcp` against the CLI, in one run, on requests 2.32.3 (real code).

Prints (medians of --runs):
  - a warm `definition` call inside one MCP session (the official Python SDK over stdio) vs a
    warm `lanser def --json` process through the same workspace daemon (whole process), and
    their ratio;
  - the size of a `references` answer's text content (what a model reads) vs its JSON bundle
    (structuredContent), for a symbol with many references, and the ratio.

Usage (after `cargo build --release`), with the test environment's python, which has the
pinned `mcp` (tests/python_env.py makes it on first use):
  "$(python3 tests/python_env.py)" benches/bench_mcp.py [--runs 20] [--lanser target/release/lanser]
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent


def workspace() -> Path:
    out = subprocess.run(["bash", str(REPO / "benches" / "fetch-thirdparty.sh")], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    return Path(out[-1])


def line_of(path: Path, needle: str) -> int:
    for i, l in enumerate(path.read_text().split("\n")):
        if needle in l:
            return i + 1
    raise SystemExit(f"{needle!r} not in {path}")


async def mcp_figures(lanser, ws, sel, refs_sel, runs):
    params = StdioServerParameters(command=lanser, args=["mcp", "--workspace", str(ws)],
                                   env={k: v for k, v in os.environ.items() if k != "LANSER_NO_DAEMON"})
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for _ in range(3):
                await s.call_tool("definition", {"selector": sel})
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                res = await s.call_tool("definition", {"selector": sel})
                times.append((time.perf_counter() - t) * 1000)
                assert not res.is_error, res.content
            refs = await s.call_tool("references", {"selector": refs_sel})
            text = refs.content[0].text
            jcs = json.dumps(refs.structured_content, separators=(",", ":"), ensure_ascii=False)
            n = len(refs.structured_content["facts"]["references"])
            return statistics.median(times), len(text.encode()), len(jcs.encode()), n


def raw_ms(lanser, ws, sel, runs):
    """The same call from a minimal JSON-RPC client (no SDK validation): lanser's own cost."""
    env = {k: v for k, v in os.environ.items() if k != "LANSER_NO_DAEMON"}
    p = subprocess.Popen([lanser, "mcp", "--workspace", str(ws)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env)

    def rpc(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i:
                return m

    rpc(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "0"}})
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    p.stdin.flush()
    times = []
    for i in range(runs + 3):
        t = time.perf_counter()
        rpc(i + 1, "tools/call", {"name": "definition", "arguments": {"selector": sel}})
        if i >= 3:
            times.append((time.perf_counter() - t) * 1000)
    p.stdin.close()
    p.wait()
    return statistics.median(times)


def cli_ms(lanser, ws, sel, runs):
    env = {k: v for k, v in os.environ.items() if k != "LANSER_NO_DAEMON"}
    argv = [lanser, "def", sel, "--json", "--workspace", str(ws)]
    for _ in range(3):
        subprocess.run(argv, check=True, capture_output=True, env=env)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--lanser", default=str(REPO / "target" / "release" / "lanser"))
    a = ap.parse_args()
    ws = workspace()
    api = ws / "src/requests/api.py"
    sel = f"src/requests/api.py@L{line_of(api, 'return request(')}:request"
    compat = ws / "src/requests/compat.py"
    refs_sel = f"src/requests/compat.py@L{line_of(compat, 'builtin_str = str')}:builtin_str"
    cli = cli_ms(a.lanser, ws, sel, a.runs)
    mcp, text, jcs, n = asyncio.run(mcp_figures(a.lanser, ws, sel, refs_sel, a.runs))
    raw = raw_ms(a.lanser, ws, sel, a.runs)
    subprocess.run([a.lanser, "daemon", "stop", "--workspace", str(ws)], capture_output=True)
    print(f"warm definition, requests 2.32.3, median of {a.runs}:")
    print(f"  lanser def process (daemon): {cli:.1f} ms")
    print(f"  MCP call, official Python SDK client: {mcp:.1f} ms ({cli / mcp:.2f}x the process's speed)")
    print(f"  MCP call, minimal JSON-RPC client:    {raw:.1f} ms ({cli / raw:.2f}x)")
    print(f"references ({n} of them): text {text} bytes vs JSON bundle {jcs} bytes: "
          f"{jcs / text:.1f}x smaller")


if __name__ == "__main__":
    main()

"""Fixtures for driving `lanser mcp` with the official MCP Python SDK, over stdio or (`serve_http`,
`http_session`) streamable HTTP.

Each test gets a git-committed copy of a fixture project, its own LANSER_HOME (the pinned
Pyright and TypeScript servers linked in, as tests/cli/daemon.rs does) and a daemon that is stopped at the end.
LANSER_BIN names the binary (tests/cli/mcp.rs sets it to the one cargo built).
"""
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import threading
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("LANSER_BIN", str(REPO / "target" / "debug" / "lanser"))


def real_home() -> Path:
    if os.environ.get("LANSER_HOME"):
        return Path(os.environ["LANSER_HOME"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "lanser"
    return Path.home() / ".cache" / "lanser"


class Workspace:
    def __init__(self, root: Path, home: Path):
        self.root = root
        self.home = home
        self.env = {k: v for k, v in os.environ.items() if k not in ("LANSER_NO_DAEMON", "LANSER_SERVER_CMD")}
        self.env["LANSER_HOME"] = str(home)
        self.env["LANSER_DAEMON_IDLE"] = "300"

    def cli(self, *args, stdin=None, daemon=False):
        """`lanser ARGS --workspace ROOT`, in-process unless `daemon`."""
        env = dict(self.env)
        if not daemon:
            env["LANSER_NO_DAEMON"] = "1"
        return subprocess.run([BIN, *args, "--workspace", str(self.root)], input=stdin,
                              capture_output=True, text=True, env=env, timeout=300)

    def bundle(self, *args, stdin=None) -> dict:
        out = self.cli(*args, "--json", stdin=stdin)
        return json.loads(out.stdout)

    def files(self) -> dict:
        snap = {}
        for p in sorted(self.root.rglob("*")):
            if ".git" in p.parts or not p.is_file():
                continue
            snap[p.relative_to(self.root).as_posix()] = p.read_bytes()
        return snap

    def line_of(self, rel: str, needle: str) -> int:
        for i, l in enumerate((self.root / rel).read_text().split("\n")):
            if needle in l:
                return i + 1
        raise AssertionError(f"{needle!r} not in {rel}")

    @asynccontextmanager
    async def session(self, *extra):
        params = StdioServerParameters(command=BIN, args=["mcp", "--workspace", str(self.root), *extra],
                                       env=self.env)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s

    @contextmanager
    def serve_http(self, addr="127.0.0.1:0", *extra, env=None):
        """`lanser mcp --http ADDR` on this workspace; yields (the endpoint URL it printed on
        stderr, with 0.0.0.0 as 127.0.0.1; the Popen), and stops it with SIGTERM (exit 0)."""
        p = subprocess.Popen([BIN, "mcp", "--workspace", str(self.root), "--http", addr, *extra],
                             env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url, seen = None, []
        for line in p.stderr:
            seen.append(line)
            m = re.search(r"serving .* at (http://\S+)", line)
            if m:
                url = m.group(1).replace("//0.0.0.0:", "//127.0.0.1:")
                break
        # Drain the rest, so the server never blocks on a full pipe.
        threading.Thread(target=lambda: seen.extend(p.stderr), daemon=True).start()
        try:
            assert url, f"no address on stderr (exit {p.poll()}): {''.join(seen)}"
            yield url, p
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=120) == 0, "".join(seen)

    @asynccontextmanager
    async def http_session(self, url, token=None):
        """An initialized official-SDK session over streamable HTTP, with the bearer token."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as c:
            async with streamable_http_client(url, http_client=c) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    yield s

    def run(self, coro_fn):
        return asyncio.run(coro_fn())


def git(root: Path, *args):
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


@pytest.fixture
def make_ws(tmp_path):
    made = []

    def make(name: str) -> Workspace:
        home = tmp_path / f"home-{len(made)}"
        home.mkdir()
        (real_home() / "pyright").mkdir(parents=True, exist_ok=True)
        # Pyright, and the TypeScript server where it is installed (`lanser setup --server`).
        for server in ("pyright", "typescript-language-server"):
            if (real_home() / server).is_dir():
                os.symlink(real_home() / server, home / server)
        root = tmp_path / f"ws-{len(made)}" / name
        shutil.copytree(REPO / "fixtures" / name, root)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "fixture")
        ws = Workspace(root.resolve(), home)
        made.append(ws)
        return ws

    yield make
    for ws in made:
        ws.cli("daemon", "stop", daemon=True)

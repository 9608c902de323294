"""`lanser mcp --http ADDR` driven by the official MCP Python SDK's streamable HTTP client
(`mcp.client.streamable_http.streamable_http_client`), on fixture projects with the real pinned
Pyright: the same tools and the same bundles as over stdio, several clients at once through the
workspace's one warm daemon, loopback unless a bearer token guards the server."""
import asyncio
import json
import subprocess

import httpx2
import pytest

from conftest import BIN

UNITS = "src/shapes/units.py"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_tools_are_listed_as_over_stdio(make_ws):
    ws = make_ws("demo")

    async def go():
        async with ws.session() as s:
            stdio = (await s.list_tools()).tools
        with ws.serve_http(":0") as (url, _):
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
            assert not url.startswith("http://127.0.0.1:0/"), url
            async with ws.http_session(url) as s:
                http = (await s.list_tools()).tools
        return stdio, http

    stdio, http = ws.run(go)
    assert "def" in [t.name for t in http]
    assert [t.model_dump() for t in http] == [t.model_dump() for t in stdio]


def test_http_structured_content_is_the_cli_bundle(make_ws):
    ws = make_ws("srcpkg")
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    sel = f"src/shapes/intl.py@L{intl}:convert"

    async def go():
        with ws.serve_http() as (url, _):
            async with ws.http_session(url) as s:
                return await s.call_tool("definition", {"selector": sel})

    r = ws.run(go)
    want = ws.bundle("def", sel)
    assert r.is_error is False, r.content
    assert r.structured_content == want
    # Computed from the fixture text: the definition is the name in `def convert(` of units.py.
    line = ws.line_of(UNITS, "def convert(")
    col = (ws.root / UNITS).read_text().split("\n")[line - 1].index("convert")
    [loc] = r.structured_content["facts"]["definitions"]
    assert (loc["path"], loc["range"][:2]) == (UNITS, [line - 1, col]), loc


def test_two_http_clients_at_once_share_the_warm_daemon(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    calls = [
        ("definition", {"selector": f"src/shapes/intl.py@L{intl}:convert"}, ["def", f"src/shapes/intl.py@L{intl}:convert"]),
        ("references", {"selector": f"{UNITS}@L{conv}:convert"}, ["refs", f"{UNITS}@L{conv}:convert"]),
        ("hover", {"selector": f"{UNITS}@L{conv}:convert"}, ["hover", f"{UNITS}@L{conv}:convert"]),
    ]

    async def client(url):
        async with ws.http_session(url) as s:
            return await asyncio.gather(*(s.call_tool(t, a) for t, a, _ in calls))

    async def go():
        with ws.serve_http() as (url, _):
            return await asyncio.gather(client(url), client(url))

    first, second = ws.run(go)
    for results in (first, second):
        for (tool, _, argv), r in zip(calls, results):
            assert r.is_error is False, (tool, r.content)
            assert r.structured_content == ws.bundle(*argv), tool
    # One daemon answered every call of both sessions.
    status = json.loads(ws.cli("daemon", "status", "--json", daemon=True).stdout)
    assert status["running"] is True, status
    assert status["requests"] == 2 * len(calls), status


def test_a_non_loopback_address_is_refused_without_a_token(make_ws):
    ws = make_ws("demo")
    env = {k: v for k, v in ws.env.items() if k != "LANSER_MCP_TOKEN"}
    for extra_env in ({}, {"LANSER_MCP_TOKEN": ""}):
        out = subprocess.run([BIN, "mcp", "--workspace", str(ws.root), "--http", "0.0.0.0:0"],
                             env={**env, **extra_env}, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2, out
        assert out.stderr.startswith("lanser: E/USAGE: ") and out.stderr.count("\n") == 1, out.stderr
        assert "--token" in out.stderr and "serving MCP" not in out.stderr, out.stderr
        assert out.stdout == ""


@pytest.mark.parametrize("how", ["flag", "env"])
def test_with_a_token_only_the_right_bearer_is_answered(make_ws, how):
    ws = make_ws("srcpkg")
    token = "t0k3n-" + "x" * 20
    extra, env = (["--token", token], None) if how == "flag" else ([], {"LANSER_MCP_TOKEN": token})
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    sel = f"src/shapes/intl.py@L{intl}:convert"

    async def go():
        with ws.serve_http("0.0.0.0:0", *extra, env=env) as (url, _):
            async with httpx2.AsyncClient(timeout=60) as c:
                raw = {}
                for name, auth in [("none", None), ("wrong", "Bearer " + token[:-1] + "y"),
                                   ("short", "Bearer " + token[:-1]), ("basic", "Basic " + token),
                                   ("right", "Bearer " + token)]:
                    headers = {**ACCEPT, **({"Authorization": auth} if auth else {})}
                    raw[name] = await c.post(url, json=INITIALIZE, headers=headers)
            with pytest.raises(Exception):
                async with ws.http_session(url, token="wrong"):
                    pass
            async with ws.http_session(url, token=token) as s:
                answered = await s.call_tool("definition", {"selector": sel})
        return raw, answered

    raw, answered = ws.run(go)
    for name in ["none", "wrong", "short", "basic"]:
        assert raw[name].status_code == 401, (name, raw[name].status_code, raw[name].text)
        assert raw[name].headers["www-authenticate"] == "Bearer", name
        assert "serverInfo" not in raw[name].text, name
    assert raw["right"].status_code == 200, raw["right"].text
    assert raw["right"].headers.get("mcp-session-id"), raw["right"].headers
    assert answered.is_error is False, answered.content
    assert answered.structured_content == ws.bundle("def", sel)

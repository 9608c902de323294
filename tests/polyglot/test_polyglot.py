"""One repository of six file types (TypeScript, Vue, Python, YAML, a Dockerfile, SQL): one MCP session
(the official client) and one `lanser batch` answer each file from its own server, byte for byte
what the CLI prints for the same request. Expectations come from the fixture text."""
import json
import os
import subprocess

from mcp_conftest import BIN, real_home

# Installed once into the real lanser home (`lanser setup --server NAME`, a no-op when they
# are there) and linked into the test's LANSER_HOME beside Pyright and the TypeScript server:
# a link made before the install would point at nothing (with a fresh, empty HOME).
SERVERS = ("vue-typescript-plugin", "yaml-language-server", "dockerfile-language-server-nodejs", "sql-language-server")


def jcs(bundle: dict) -> str:
    """A bundle's bytes as the CLI prints them (JCS: sorted keys, no blanks)."""
    return json.dumps(bundle, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def col(ws, rel: str, line: int, ident: str) -> int:
    return (ws.root / rel).read_text().split("\n")[line - 1].index(ident)


def test_each_file_is_answered_by_its_own_server_through_mcp_batch_and_cli(make_ws):
    ws = make_ws("polyglot")
    env = {k: v for k, v in os.environ.items() if k not in ("LANSER_SERVER_CMD",)}
    env["LANSER_HOME"] = str(real_home())
    for s in ("typescript-language-server", *SERVERS):
        subprocess.run([BIN, "setup", "--server", s], env=env, check=True, capture_output=True)
    for s in ("typescript-language-server", *SERVERS):
        if not os.path.lexists(ws.home / s):
            os.symlink(real_home() / s, ws.home / s)
    page = ws.line_of("web/app.ts", "export const page")
    get = ws.line_of("api/views.py", "order = make_order(")
    vue = ws.line_of("web/Total.vue", "const text = render(")
    alias = ws.line_of("deploy/values.yaml", "api:") + 1
    copy = ws.line_of("Dockerfile", "--from=builder")
    # (MCP tool, its arguments, the batch line: the same request)
    cases = [
        ("definition", {"selector": f"web/app.ts@L{page}:render"},
         {"cmd": "def", "selector": f"web/app.ts@L{page}:render"}),
        ("definition", {"selector": f"web/Total.vue@L{vue}:render"},
         {"cmd": "def", "selector": f"web/Total.vue@L{vue}:render"}),
        ("definition", {"selector": f"api/views.py@L{get}:make_order"},
         {"cmd": "def", "selector": f"api/views.py@L{get}:make_order"}),
        ("definition", {"selector": f"deploy/values.yaml@L{alias}:defaults"},
         {"cmd": "def", "selector": f"deploy/values.yaml@L{alias}:defaults"}),
        ("definition", {"selector": f"Dockerfile@L{copy}:builder"},
         {"cmd": "def", "selector": f"Dockerfile@L{copy}:builder"}),
        ("diagnostics", {"files": ["db/orders.sql"]},
         {"cmd": "diag", "args": {"targets": ["db/orders.sql"]}}),
    ]
    cli = [
        ["def", f"web/app.ts@L{page}:render"],
        ["def", f"web/Total.vue@L{vue}:render"],
        ["def", f"api/views.py@L{get}:make_order"],
        ["def", f"deploy/values.yaml@L{alias}:defaults"],
        ["def", f"Dockerfile@L{copy}:builder"],
        ["diag", "db/orders.sql"],
    ]

    async def go():
        async with ws.session() as s:
            return [await s.call_tool(tool, args) for tool, args, _ in cases]

    # One route after the other (the MCP session through the workspace's daemon, then the batch
    # and the CLI in-process). Run at once — eight servers starting together on two cores — two
    # runs in six differed between routes on a TypeScript definition (not diagnosed; a bounded
    # readiness wait running out in one route only is the likely cause).
    results = ws.run(go)
    stdin = "".join(json.dumps(line) + "\n" for _, _, line in cases)
    batch = ws.cli("batch", "--in", "-", "--out", "-", stdin=stdin)
    singles = [ws.cli(*argv, "--json") for argv in cli]
    assert batch.returncode == 0, batch.stderr
    batch_lines = batch.stdout.splitlines()
    assert len(batch_lines) == len(cases), batch.stderr
    servers = []
    for (tool, args, _), r, argv, line, out in zip(cases, results, cli, batch_lines, singles):
        want = out.stdout.strip()
        assert r.is_error is False, (tool, args, r.content)
        got = r.structured_content
        assert jcs(got) == want, (tool, args, got["facts"], got["meta"], json.loads(want)["facts"],
                                  json.loads(want)["meta"])
        assert line == want, argv
        servers.append(json.loads(want)["environment"]["server"]["name"])
    # The component's server is tsserver too, with Vue's plugin (its own install and session).
    assert servers == [
        "typescript-language-server",
        "typescript-language-server",
        "pyright",
        "yaml-language-server",
        "dockerfile-language-server-nodejs",
        "sql-language-server",
    ], servers
    facts = [r.structured_content["facts"] for r in results]
    # Each answer is the fixture's: render's declaration (from app.ts and the component), make_order's
    # definition, the anchored mapping, the build stage, the lowercase keyword.
    decl = ws.line_of("web/order.ts", "export function render")
    assert [(d["path"], d["range"][0]) for d in facts[0]["definitions"]] == [("web/order.ts", decl - 1)]
    assert [(d["path"], d["range"][0]) for d in facts[1]["definitions"]] == [("web/order.ts", decl - 1)]
    make = ws.line_of("api/models.py", "def make_order")
    assert [(d["path"], d["range"][:2]) for d in facts[2]["definitions"]] == [
        ("api/models.py", [make - 1, col(ws, "api/models.py", make, "make_order")])]
    first = ws.line_of("deploy/values.yaml", "replicas: 2")
    assert [(d["path"], d["range"][:2]) for d in facts[3]["definitions"]] == [("deploy/values.yaml", [first - 1, 2])]
    stage = ws.line_of("Dockerfile", "AS builder")
    assert [(d["path"], d["range"]) for d in facts[4]["definitions"]] == [
        ("Dockerfile", [stage - 1, col(ws, "Dockerfile", stage, "builder"), stage - 1,
                        col(ws, "Dockerfile", stage, "builder") + len("builder")])]
    messages = [d["message"] for d in facts[5]["diagnostics"]]
    assert "reserved word must be uppercase" in messages, messages

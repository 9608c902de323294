"""`lanser mcp` driven by the official MCP Python SDK over stdio, on fixture projects with the
real pinned Pyright: every result's structuredContent is the bundle `lanser <cmd> --json`
prints for the same request."""
import asyncio
import json
import os
import subprocess
import sys
import time

import anyio

from conftest import BIN, REPO, git

# Each tool is named after its operation (`request.cmd`, `-` as `_`). Many calls below use the
# tools' former names (`definition`, `references`, `diagnostics`, `check_patch`, ...), which
# are still answered for one release (docs/mcp.md): those calls test that they are.
TOOLS = ["def", "type_def", "decl", "refs", "hover", "symbols", "diag",
         "impl", "calls", "highlight", "signature", "locate", "rename",
         "rename_file", "apply", "edit", "code_actions", "check", "impact", "status", "capabilities", "reload",
         "request", "complete", "types", "inlay", "format",
         # Made from the operations' catalog (no hand-written tool).
         "changes", "prepare_rename", "selection_range", "source", "tests",
         # Many request lines in one call.
         "batch"]

UNITS = "src/shapes/units.py"


def test_tools_are_listed_in_order_with_schemas_and_annotations(make_ws):
    ws = make_ws("demo")

    async def go():
        async with ws.session() as s:
            return (await s.list_tools()).tools

    tools = ws.run(go)
    assert [t.name for t in tools] == TOOLS
    by = {t.name: t for t in tools}
    for t in tools:
        assert t.input_schema["type"] == "object", t.name
        assert "bundleId" in json.dumps(t.output_schema), t.name
        assert t.description and len(t.description) > 40, t.name
    for name in ["def", "refs", "hover", "locate", "check", "diag", "impact"]:
        assert by[name].annotations.read_only_hint is True, name
        assert by[name].annotations.destructive_hint is False, name
    for name in ["rename", "rename_file", "code_actions", "apply", "edit", "format", "batch"]:
        assert by[name].annotations.read_only_hint is False, name
        assert by[name].annotations.destructive_hint is True, name
    props = by["def"].input_schema["properties"]
    assert {"selector", "file", "line", "symbol", "timeout", "index_io"} <= set(props)
    assert "py://" in by["def"].description and "anchor://" in by["def"].description


def test_structured_content_is_the_cli_bundle(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    (ws.root / UNITS).write_text((ws.root / UNITS).read_text().replace("return round(value, PRECISION)", "return round(value, PRECISION) + undefined_name"))
    patch = subprocess.run(["git", "diff"], cwd=ws.root, capture_output=True, text=True).stdout
    git(ws.root, "checkout", "-q", "--", ".")
    assert "undefined_name" in patch
    cases = [
        ("definition", {"selector": f"src/shapes/intl.py@L{intl}:convert"}, ["def", f"src/shapes/intl.py@L{intl}:convert"]),
        ("references", {"selector": f"{UNITS}@L{conv}:convert"}, ["refs", f"{UNITS}@L{conv}:convert"]),
        ("references", {"selector": f"{UNITS}@L{conv}:convert", "exclude_declaration": True},
         ["refs", f"{UNITS}@L{conv}:convert", "--exclude-declaration"]),
        ("hover", {"selector": f"src/shapes/intl.py@L{intl}:convert"}, ["hover", f"src/shapes/intl.py@L{intl}:convert"]),
        ("symbols", {"file": UNITS}, ["symbols", UNITS]),
        ("symbols", {"query": "convert"}, ["symbols", "--query", "convert"]),
        ("diagnostics", {"files": ["src/shapes/*.py"]}, ["diag", "src/shapes/*.py"]),
        ("locate", {"selector": "py://shapes.units#convert:sig"}, ["locate", "py://shapes.units#convert:sig"]),
        ("highlight", {"selector": f"{UNITS}@L{conv}:convert"}, ["highlight", f"{UNITS}@L{conv}:convert"]),
        ("call_hierarchy", {"selector": f"{UNITS}@L{conv}:convert", "direction": "incoming"},
         ["calls", f"{UNITS}@L{conv}:convert", "--incoming"]),
        ("rename", {"selector": f"{UNITS}@L{conv}:convert", "new_name": "to_unit"},
         ["rename", f"{UNITS}@L{conv}:convert", "to_unit"]),
        ("rename_file", {"path": UNITS, "new_path": "src/shapes/measure.py"},
         ["rename-file", UNITS, "src/shapes/measure.py"]),
        ("type_definition", {"selector": "src/shapes/broken.py@L6:circle"}, ["type-def", "src/shapes/broken.py@L6:circle"]),
        ("declaration", {"selector": f"src/shapes/intl.py@L{intl}:convert"}, ["decl", f"src/shapes/intl.py@L{intl}:convert"]),
        ("signature", {"selector": f"src/shapes/intl.py@L{intl}:C33"}, ["signature", f"src/shapes/intl.py@L{intl}:C33"]),
        ("code_actions", {"selector": f"{UNITS}@L{conv}:convert"}, ["code-actions", f"{UNITS}@L{conv}:convert"]),
        ("capabilities", {}, ["capabilities"]),
        # A tool made from the operations' catalog.
        ("prepare_rename", {"selector": f"{UNITS}@L{conv}:convert"},
         ["prepare-rename", f"{UNITS}@L{conv}:convert"]),
        ("source", {"selector": "py://shapes.units#convert", "signature": True},
         ["source", "py://shapes.units#convert", "--signature"]),
        ("request", {"method": "textDocument/documentSymbol", "target": UNITS},
         ["request", "textDocument/documentSymbol", UNITS]),
        ("request", {"method": "workspace/symbol", "payload": {"query": "convert"}},
         ["request", "workspace/symbol", "--payload", '{"query":"convert"}']),
    ]

    async def go():
        out = []
        async with ws.session() as s:
            for tool, args, _ in cases:
                out.append(await s.call_tool(tool, args))
            out.append(await s.call_tool("check_patch", {"patch": patch}))
            out.append(await s.call_tool("implementation", {"selector": f"{UNITS}@L{conv}:convert"}))
            out.append(await s.call_tool("status", {}))
        return out

    results = ws.run(go)
    for (tool, args, argv), r in zip(cases, results):
        want = ws.bundle(*argv)
        assert r.is_error is False, (tool, r.content)
        assert r.structured_content == want, (tool, args)
        assert r.content[0].text.strip(), tool
    implementation, status = results[-2:]
    # Pyright 1.1.407 offers no textDocument/implementation: an error bundle, as in the CLI.
    assert implementation.structured_content == ws.bundle("impl", f"{UNITS}@L{conv}:convert")
    assert implementation.is_error == (implementation.structured_content["status"] == "error")
    # `status` describes whoever answers: here the workspace's warm daemon and its session,
    # as for a `lanser batch` status line through that daemon.
    via_daemon = ws.cli("batch", "--in", "-", "--out", "-", stdin='{"cmd":"status"}\n', daemon=True)
    assert status.structured_content == json.loads(via_daemon.stdout)
    assert status.structured_content["facts"]["sessions"], status.structured_content["facts"]
    # The diff travels as the SDK sends it, a file named by its content: the same request, the
    # same bytes from the CLI, the SDK and MCP, answered by the warm daemon (no server start).
    sys.path.insert(0, str(REPO / "python"))
    from lanser.client import patch_file
    check = ws.bundle("check", "--patch", patch_file(patch))
    assert results[-3].structured_content == check
    assert check["facts"]["after"] == check["facts"]["before"] + 1, check["facts"]


def test_a_mixed_repository_is_answered_per_file_type_as_in_the_cli(make_ws):
    """TypeScript and Python tools in one MCP session, each on its file's server: the CLI's
    bundles, byte for byte (the CLI in-process, MCP through the warm daemon)."""
    ws = make_ws("mixed")
    page = ws.line_of("web/app.ts", "export const page")
    get = ws.line_of("api/views.py", "order = make_order(")
    cases = [
        ("definition", {"selector": f"web/app.ts@L{page}:render"}, ["def", f"web/app.ts@L{page}:render"]),
        ("references", {"selector": "sym://web/order.ts#render"}, ["refs", "sym://web/order.ts#render"]),
        ("hover", {"selector": "sym://web/order.ts#Order.total"}, ["hover", "sym://web/order.ts#Order.total"]),
        ("symbols", {"file": "web/order.ts"}, ["symbols", "web/order.ts"]),
        ("locate", {"selector": "ast://[file=web/order.ts]/[def=render]/template_string[1]"},
         ["locate", "ast://[file=web/order.ts]/[def=render]/template_string[1]"]),
        ("definition", {"selector": f"api/views.py@L{get}:make_order"}, ["def", f"api/views.py@L{get}:make_order"]),
    ]

    async def go():
        async with ws.session() as s:
            return [await s.call_tool(tool, args) for tool, args, _ in cases]

    results = ws.run(go)
    servers = []
    for (tool, args, argv), r in zip(cases, results):
        want = ws.bundle(*argv)
        assert r.is_error is False and want["status"] == "ok", (tool, args, r.content)
        assert r.structured_content == want, (tool, args)
        servers.append((want["environment"]["server"] or {}).get("name"))
    ts = "typescript-language-server"
    assert servers == [ts, ts, ts, ts, None, "pyright"], servers  # locate asks no server
    refs = {loc["path"] for loc in results[1].structured_content["facts"]["references"]}
    assert refs == {"web/app.ts", "web/order.ts"}, refs


def test_impact_and_pr_v2_are_the_cli_bundles(make_ws):
    ws = make_ws("srcpkg")
    sys.path.insert(0, str(REPO / "python"))
    from lanser.client import patch_file
    text = (ws.root / UNITS).read_text()
    lines = text.splitlines(keepends=True)
    i = next(k for k, l in enumerate(lines) if "PRECISION)" in l)
    patch = (f"--- a/{UNITS}\n+++ b/{UNITS}\n@@ -{i},3 +{i},3 @@\n {lines[i - 1]}"
             f"-{lines[i]}+{lines[i].replace('PRECISION)', 'PRECISION + 1)')} {lines[i + 1]}")
    conv = ws.line_of(UNITS, "def convert(")

    async def go():
        async with ws.session() as s:
            return [await s.call_tool("impact", {"patch": patch}),
                    await s.call_tool("impact", {"file": UNITS, "line": conv, "symbol": "convert", "depth": 1}),
                    await s.call_tool("check_patch", {"patch": patch, "reward": "pr-v2"}),
                    await s.call_tool("impact", {}),
                    await s.call_tool("check_patch", {"patch": patch, "reward": "pr-v3", "tests": True})]

    by_patch, by_pos, v2, neither, v3 = ws.run(go)
    f = patch_file(patch)
    assert by_patch.structured_content == ws.bundle("impact", "--patch", f)
    ids = [t["id"] for t in by_patch.structured_content["facts"]["tests"]]
    assert ids == ["tests/test_geometry.py::test_circle_area",
                   "tests/test_geometry.py::test_square_area_and_corners"]
    assert by_pos.structured_content == ws.bundle("impact", f"{UNITS}@L{conv}:convert", "--depth", "1")
    assert v2.structured_content == ws.bundle("check", "--patch", f, "--reward", "pr-v2")
    assert v2.structured_content["processReward"]["version"] == "pr-v2"
    assert neither.is_error is True
    assert v3.structured_content == ws.bundle("check", "--patch", f, "--reward", "pr-v3", "--tests", "impacted")
    assert v3.structured_content["processReward"]["version"] == "pr-v3"


def test_file_line_symbol_lands_where_the_selector_does(make_ws):
    ws = make_ws("srcpkg")
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    conv = ws.line_of(UNITS, "def convert(")

    async def go():
        async with ws.session() as s:
            a = await s.call_tool("definition", {"file": "src/shapes/intl.py", "line": intl, "symbol": "convert"})
            b = await s.call_tool("definition", {"selector": f"src/shapes/intl.py@L{intl}:convert"})
            # No symbol: the first non-blank column (`def` of `def convert(`).
            c = await s.call_tool("locate", {"file": UNITS, "line": conv + 1})
            d = await s.call_tool("locate", {"selector": f"{UNITS}@L{conv + 1}:C5"})
            return a, b, c, d

    a, b, c, d = ws.run(go)
    assert a.structured_content["bundleId"] == b.structured_content["bundleId"]
    assert a.structured_content["facts"]["definitions"][0]["path"] == UNITS
    assert c.structured_content["resolution"]["resolved"] == d.structured_content["resolution"]["resolved"]


def test_previews_write_nothing_and_apply_is_transactional_and_guarded(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    sel = f"{UNITS}@L{conv}:convert"
    before = ws.files()

    async def preview():
        async with ws.session() as s:
            r = await s.call_tool("rename", {"selector": sel, "new_name": "to_unit"})
            m = await s.call_tool("rename_file", {"path": UNITS, "new_path": "src/shapes/measure.py"})
            return r, m

    r, m = ws.run(preview)
    assert r.structured_content["edits"]["diff"] and m.structured_content["edits"]["diff"]
    assert ws.files() == before
    # A person's uncommitted change in a file the rename touches refuses the write, and nothing
    # changes (an untracked file it does not touch refuses nothing).
    (ws.root / "notes.txt").write_text("uncommitted\n")
    units = (ws.root / UNITS).read_bytes()
    (ws.root / UNITS).write_bytes(units + b"# mine\n")
    before = ws.files()

    async def apply():
        async with ws.session() as s:
            return await s.call_tool("rename", {"selector": sel, "new_name": "to_unit", "apply": True})

    refused = ws.run(apply)
    assert refused.is_error is True
    assert "uncommitted" in refused.content[0].text
    assert ws.files() == before
    # Refused exactly as the CLI refuses it.
    assert refused.structured_content == ws.bundle("rename", sel, "to_unit", "--apply")
    assert ws.files() == before
    (ws.root / UNITS).write_bytes(units)
    before = ws.files()
    done = ws.run(apply)
    assert done.is_error is False, done.content
    assert done.structured_content["facts"]["applied"] is True
    after = ws.files()
    changed = {p for p in after if after[p] != before.get(p)}
    assert UNITS in changed and "src/shapes/intl.py" in changed
    assert b"to_unit" in after[UNITS] and b"def convert(" not in after[UNITS]


def test_bad_input_is_an_error_result_and_the_next_call_works(make_ws):
    ws = make_ws("demo")

    async def go():
        async with ws.session() as s:
            out = [
                await s.call_tool("definition", {"selector": "cli.py@L17:"}),
                await s.call_tool("definition", {"selector": "missing.py@L1:C1"}),
                await s.call_tool("definition", {"file": "cli.py", "line": 100000, "symbol": "x"}),
                await s.call_tool("definition", {"file": "cli.py"}),
                await s.call_tool("definition", {"selector": 42}),
                await s.call_tool("call_hierarchy", {"selector": "cli.py@L17:add_item", "direction": "sideways"}),
                await s.call_tool("no_such_tool", {}),
            ]
            out.append(await s.call_tool("definition", {"selector": "cli.py@L17:add_item"}))
            return out

    *bad, good = ws.run(go)
    for r in bad:
        assert r.is_error is True, r
        text = r.content[0].text
        assert text and "\n" not in text.strip(), text
    assert bad[1].structured_content["error"]["code"] == "E/NOT_FOUND"
    assert "E/USAGE" in bad[3].content[0].text
    assert good.is_error is False
    assert good.structured_content == ws.bundle("def", "cli.py@L17:add_item")


def test_six_concurrent_calls_are_all_answered(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    calls = [
        ("references", {"selector": f"{UNITS}@L{conv}:convert"}),
        ("hover", {"selector": f"{UNITS}@L{conv}:convert"}),
        ("symbols", {"file": UNITS}),
        ("locate", {"selector": "py://shapes.units#convert"}),
        ("diagnostics", {"files": [UNITS]}),
        ("definition", {"selector": f"{UNITS}@L{conv + 3}:factor"}),
    ]

    async def go():
        async with ws.session() as s:
            together = await asyncio.gather(*(s.call_tool(t, a) for t, a in calls))
            alone = [await s.call_tool(t, a) for t, a in calls]
            return together, alone

    together, alone = ws.run(go)
    for (t, _), x, y in zip(calls, together, alone):
        assert x.is_error is False, (t, x.content)
        assert x.structured_content == y.structured_content, t


def test_reference_text_is_bounded_and_paged_while_the_bundle_has_all(make_ws):
    ws = make_ws("srcpkg")
    uses = "".join(f'v{i} = convert({i}.0, "cm")\n' for i in range(300))
    (ws.root / "src/shapes/many.py").write_text("from .units import convert\n\n" + uses)
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "many uses")
    conv = ws.line_of(UNITS, "def convert(")
    sel = f"{UNITS}@L{conv}:convert"

    async def go():
        async with ws.session() as s:
            first = await s.call_tool("references", {"selector": sel})
            second = await s.call_tool("references", {"selector": sel, "offset": 50, "limit": 50})
            return first, second

    first, second = ws.run(go)
    refs = first.structured_content["facts"]["references"]
    assert len(refs) >= 300
    text = first.content[0].text
    assert len(text.splitlines()) <= 52
    assert f"1-50 of {len(refs)}" in text and "offset=50" in text
    jcs = json.dumps(first.structured_content, separators=(",", ":"))
    assert len(text) * 5 < len(jcs), (len(text), len(jcs))
    page2 = second.content[0].text
    assert f"51-100 of {len(refs)}" in page2 and "offset=100" in page2
    assert page2.splitlines()[0] != text.splitlines()[0]
    assert second.structured_content == first.structured_content


def test_a_cold_call_reports_progress(make_ws):
    ws = make_ws("srcpkg")
    for i in range(300):
        (ws.root / f"src/shapes/gen_{i:03}.py").write_text(
            f"from .units import convert\n\ndef f{i}(x: float) -> float:\n    return convert(x, 'cm') + {i}\n")
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "more modules")
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async def go():
        async with ws.session() as s:
            return await s.call_tool("diagnostics", {}, progress_callback=on_progress)

    r = ws.run(go)
    assert r.is_error is False, r.content
    assert seen, "no progress notification during a cold whole-workspace diagnostics call"
    assert all(m for _, m in seen)
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)


def test_a_cancelled_call_gives_no_bundle_and_the_session_goes_on(make_ws):
    ws = make_ws("srcpkg")
    for i in range(300):
        (ws.root / f"src/shapes/gen_{i:03}.py").write_text(f"def f{i}() -> int:\n    return {i}\n")
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "more modules")

    async def go():
        async with ws.session() as s:
            started = time.monotonic()
            with anyio.move_on_after(0.5) as scope:
                await s.call_tool("diagnostics", {})
            gave_up = time.monotonic() - started
            after = await s.call_tool("locate", {"selector": "py://shapes.units#convert"})
            return scope.cancelled_caught, gave_up, after

    cancelled, gave_up, after = ws.run(go)
    assert cancelled and gave_up < 5
    assert after.is_error is False
    assert after.structured_content == ws.bundle("locate", "py://shapes.units#convert")


def test_the_server_answers_a_raw_cancel_without_the_bundle(make_ws):
    """Over raw JSON-RPC: `notifications/cancelled` for a call in flight means no bundle for
    it, and the next request is answered."""
    ws = make_ws("srcpkg")
    for i in range(300):
        (ws.root / f"src/shapes/gen_{i:03}.py").write_text(f"def f{i}() -> int:\n    return {i}\n")
    p = subprocess.Popen([BIN, "mcp", "--workspace", str(ws.root)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ws.env)

    def send(msg):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    init = json.loads(p.stdout.readline())
    assert init["result"]["protocolVersion"] == "2025-06-18"
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "diagnostics", "arguments": {}}})
    time.sleep(0.3)
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}})
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "locate", "arguments": {"selector": "py://shapes.units#convert"}}})
    answered = {}
    while 3 not in answered:
        msg = json.loads(p.stdout.readline())
        if "id" in msg:
            answered[msg["id"]] = msg
    p.stdin.close()
    p.wait(timeout=60)
    assert answered[3]["result"]["structuredContent"]["status"] == "ok"
    if 2 in answered:
        assert "structuredContent" not in answered[2].get("result", {}), answered[2]


def test_a_cancelled_call_is_cancelled_at_the_language_server(make_ws, tmp_path):
    """notifications/cancelled reaches the server as $/cancelRequest (a fake server that
    holds definitions for 10 s and logs the cancellations it gets)."""
    ws = make_ws("srcpkg")
    log = tmp_path / "fake.log"
    ws.env["FAKE_LSP_LOG"] = str(log)
    fake = f"python3 {REPO / 'tests' / 'fake_lsp.py'} slow"

    async def go():
        async with ws.session("--server-cmd", fake) as s:
            started = time.monotonic()
            with anyio.move_on_after(4) as scope:
                await s.call_tool("definition", {"selector": f"{UNITS}@L13:convert"})
            for _ in range(100):
                if log.exists():
                    break
                await anyio.sleep(0.1)
            after = await s.call_tool("locate", {"selector": "py://shapes.units#convert"})
            return scope.cancelled_caught, time.monotonic() - started, after

    cancelled, took, after = ws.run(go)
    assert cancelled and took < 10
    assert log.exists() and log.read_text().startswith("cancelled "), "the server was not told"
    assert after.is_error is False


def jcs(bundle: dict) -> str:
    """A bundle's bytes as the CLI prints them (JCS: sorted keys, no blanks)."""
    return json.dumps(bundle, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def test_batch_answers_many_lines_in_one_call_with_the_cli_bytes(make_ws):
    ws = make_ws("srcpkg")
    units = ws.root / UNITS
    text = units.read_text()
    old_sig = "def convert(value: float, unit: str) -> float:"
    assert old_sig in text
    units.write_text(text.replace(old_sig, old_sig.replace("unit: str", 'unit: str = "cm"'))
                     + '\n\ndef inches(value: float) -> float:\n    return convert(value, "in")\n')
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    lines = [
        {"cmd": "changes", "args": {"since": "HEAD"}},
        {"cmd": "source", "selector": "py://shapes.units#inches"},
        {"cmd": "def", "selector": f"src/shapes/intl.py@L{intl}:convert"},
        {"cmd": "locate", "selector": "py://shapes.units#convert:sig"},
        {"cmd": "no-such-op"},
    ]

    async def go():
        async with ws.session() as s:
            many = await s.call_tool("batch", {"requests": lines})
            one = await s.call_tool("changes", {"since": "HEAD"})
            bad = await s.call_tool("batch", {"requests": []})
            return many, one, bad

    many, one, bad = ws.run(go)
    assert many.is_error is False
    bundles = many.structured_content["bundles"]
    assert len(bundles) == len(lines)
    # Byte for byte what `lanser batch` prints for the same lines, in order.
    stdin = "".join(json.dumps(l) + "\n" for l in lines)
    out = ws.cli("batch", "--in", "-", "--out", "-", stdin=stdin)
    assert [jcs(b) for b in bundles] == out.stdout.splitlines()
    # And what the single commands print.
    assert jcs(bundles[0]) == ws.cli("changes", "--since", "HEAD", "--json").stdout.strip()
    assert jcs(bundles[2]) == ws.cli("def", f"src/shapes/intl.py@L{intl}:convert", "--json").stdout.strip()
    assert one.structured_content == bundles[0]
    changes = [(c["kind"], c["qualname"], c["aspects"]) for c in bundles[0]["facts"]["changes"]]
    assert changes == [("changed", "convert", ["signature"]), ("added", "inches", [])]
    assert "inches" in bundles[1]["facts"]["text"]
    assert [b["status"] for b in bundles] == ["ok"] * 4 + ["error"]
    # The text: a compact summary, a header per request, in order.
    text = many.content[0].text
    heads = [l for l in text.splitlines() if l.startswith("[")]
    assert heads == ["[1] changes ok", "[2] source ok", "[3] def ok", "[4] locate ok", "[5] no-such-op error"], heads
    assert "batch line 5" in bundles[4]["error"]["message"]
    assert len(text) * 3 < len(json.dumps(many.structured_content)), (len(text),)
    assert bad.is_error and "E/USAGE" in bad.content[0].text

"""The Python SDK against the CLI, on fixture projects with the real pinned Pyright."""
import asyncio
import json
import subprocess
import threading
from pathlib import Path

import pytest

import lanser
from lanser import sel
from lanser.client import patch_file
from conftest import REPO, git

UNITS = "src/shapes/units.py"


def a_patch(ws) -> str:
    p = ws.root / UNITS
    old = p.read_text()
    p.write_text(old.replace("return round(value, PRECISION)", "return round(value, PRECISION) + undefined_name"))
    diff = subprocess.run(["git", "diff"], cwd=ws.root, capture_output=True, text=True).stdout
    p.write_text(old)
    assert "undefined_name" in diff
    return diff


def test_every_method_returns_the_cli_bundle(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    intl = ws.line_of("src/shapes/intl.py", "result = convert(")
    at = f"{UNITS}@L{conv}:convert"
    call = f"src/shapes/intl.py@L{intl}:convert"
    diff = a_patch(ws)
    cases = [
        (lambda s: s.definition(call), ["def", call]),
        (lambda s: s.type_definition("src/shapes/broken.py@L6:circle"), ["type-def", "src/shapes/broken.py@L6:circle"]),
        (lambda s: s.references(at), ["refs", at]),
        (lambda s: s.references(at, exclude_declaration=True), ["refs", at, "--exclude-declaration"]),
        (lambda s: s.hover(call), ["hover", call]),
        (lambda s: s.highlight(at), ["highlight", at]),
        (lambda s: s.signature(f"src/shapes/intl.py@L{intl}:C33"), ["signature", f"src/shapes/intl.py@L{intl}:C33"]),
        (lambda s: s.calls(at, incoming=True), ["calls", at, "--incoming"]),
        (lambda s: s.locate("py://shapes.units#convert:sig", preview=True), ["locate", "py://shapes.units#convert:sig", "--preview"]),
        (lambda s: s.symbols(file=UNITS), ["symbols", UNITS]),
        (lambda s: s.symbols(query="convert"), ["symbols", "--query", "convert"]),
        (lambda s: s.diagnostics("src/shapes/*.py"), ["diag", "src/shapes/*.py"]),
        (lambda s: s.capabilities(), ["capabilities"]),
        (lambda s: s.request("textDocument/documentSymbol", target=UNITS), ["request", "textDocument/documentSymbol", UNITS]),
        (lambda s: s.request("workspace/symbol", {"query": "convert"}), ["request", "workspace/symbol", "--payload", '{"query":"convert"}']),
        (lambda s: s.rename(at, "to_unit"), ["rename", at, "to_unit"]),
        (lambda s: s.rename_file(UNITS, "src/shapes/measure.py"), ["rename-file", UNITS, "src/shapes/measure.py"]),
        (lambda s: s.code_actions(at), ["code-actions", at]),
        (lambda s: s.check_patch(diff), ["check", "--patch", patch_file(diff)]),
        (lambda s: s.implementation(at, check=False), ["impl", at]),
        # Methods made from the operations' catalog.
        (lambda s: s.decl(call), ["decl", call]),
        (lambda s: s.prepare_rename(at), ["prepare-rename", at]),
        (lambda s: s.source("py://shapes.units#convert", signature=True),
         ["source", "py://shapes.units#convert", "--signature"]),
        (lambda s: s.changes(since="HEAD"), ["changes", "--since", "HEAD"]),
    ]
    before = ws.files()
    with lanser.Lanser(ws.root) as s:
        got = [f(s) for f, _ in cases]
    for (_, argv), b in zip(cases, got):
        want = ws.bundle(*argv)
        assert b.raw == want, argv
        assert b.bundle_id == want["bundleId"]
        assert json.loads(b.line) == want
    checked = got[[argv[0] for _, argv in cases].index("check")]
    assert checked.facts["after"] == checked.facts["before"] + 1
    assert ws.files() == before  # previews and check write nothing


def test_a_mixed_repository_is_answered_per_file_type_as_in_the_cli(make_ws):
    ws = make_ws("mixed")
    page = ws.line_of("web/app.ts", "export const page")
    get = ws.line_of("api/views.py", "order = make_order(")
    cases = [
        (lambda s: s.definition(f"web/app.ts@L{page}:render"), ["def", f"web/app.ts@L{page}:render"]),
        (lambda s: s.references(sel.sym("web/order.ts", "render")), ["refs", "sym://web/order.ts#render"]),
        (lambda s: s.diagnostics("web/order.ts"), ["diag", "web/order.ts"]),
        (lambda s: s.definition(f"api/views.py@L{get}:make_order"), ["def", f"api/views.py@L{get}:make_order"]),
    ]
    with lanser.Lanser(ws.root) as s:
        got = [f(s) for f, _ in cases]
    for (_, argv), b in zip(cases, got):
        assert b.raw == ws.bundle(*argv), argv
    names = [b.raw["environment"]["server"]["name"] for b in got]
    assert names == ["typescript-language-server"] * 3 + ["pyright"], names


def test_errors_raise_with_the_documented_exit_code(make_ws):
    ws = make_ws("demo")
    with lanser.Lanser(ws.root) as s:
        with pytest.raises(lanser.LanserError) as e:
            s.definition("missing.py@L1:C1")
        assert (e.value.code, e.value.exit_code) == ("E/NOT_FOUND", 3)
        assert e.value.bundle.raw == ws.bundle("def", "missing.py@L1:C1")
        with pytest.raises(lanser.LanserError) as e:
            s.definition("cli.py@L17:")
        assert e.value.exit_code == 2 and e.value.code == "E/BAD_SELECTOR_SYNTAX"
        b = s.definition("missing.py@L1:C1", check=False)
        assert not b.ok and b.exit_code == 3
        assert s.definition("cli.py@L17:add_item").ok


def test_batch_streams_in_order(make_ws):
    ws = make_ws("demo")
    got_first = threading.Event()
    lines = [{"cmd": "locate", "selector": f"cli.py@L{n}:C1"} for n in range(1, 8)]
    lines.insert(3, {"cmd": "def", "selector": "nope.py@L1:C1"})

    def requests():
        yield lines[0]
        # The second request is written only once the first answer came back: a batch that
        # waited for its whole input would stall here.
        assert got_first.wait(120), "the first bundle did not stream back"
        yield from lines[1:]

    with lanser.Lanser(ws.root) as s:
        out = []
        for b in s.batch(requests()):
            got_first.set()
            out.append(b)
        assert len(out) == len(lines)
        for req, b in zip(lines, out):
            assert b.raw["request"]["cmd"] == req["cmd"]
            assert b.raw["resolution"] is None or b.raw["resolution"]["original"] == req["selector"]
        assert out[3].error["code"] == "E/NOT_FOUND"
        alone = [s.ask(l, check=False) for l in lines]
    assert [b.line for b in out] == [b.line for b in alone]


def test_async_client_answers_concurrent_calls(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    at = f"{UNITS}@L{conv}:convert"

    async def go():
        async with lanser.AsyncLanser(ws.root) as s:
            together = await asyncio.gather(
                s.references(at), s.hover(at), s.symbols(file=UNITS), s.locate("py://shapes.units#convert"),
                s.diagnostics(UNITS), s.definition(f"{UNITS}@L{conv + 3}:factor"))
            alone = [await s.references(at), await s.hover(at), await s.symbols(file=UNITS),
                     await s.locate("py://shapes.units#convert"), await s.diagnostics(UNITS),
                     await s.definition(f"{UNITS}@L{conv + 3}:factor")]
            with pytest.raises(lanser.LanserError):
                await s.definition("nope.py@L1:C1")
            streamed = [b async for b in s.batch([{"cmd": "hover", "selector": at}, {"cmd": "locate", "selector": at}])]
            return together, alone, streamed

    together, alone, streamed = asyncio.run(go())
    assert [b.line for b in together] == [b.line for b in alone]
    assert together[0].raw == ws.bundle("refs", at)
    assert [b.raw["request"]["cmd"] for b in streamed] == ["hover", "locate"]


def test_a_crashing_server_is_an_error_and_the_session_goes_on(make_ws):
    ws = make_ws("srcpkg")
    fake = f"python3 {REPO / 'tests' / 'fake_lsp.py'} crash"
    with lanser.Lanser(ws.root, args=["--server-cmd", fake, "--timeout", "5"]) as s:
        for _ in range(2):
            with pytest.raises(lanser.LanserError) as e:
                s.definition(f"{UNITS}@L13:convert")
            assert (e.value.code, e.value.exit_code) == ("E/LS_CRASH", 65), e.value
        assert s.locate("py://shapes.units#convert").ok


def test_selector_helpers_print_the_canonical_form(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    forms = [
        sel.cursor(UNITS, conv, 5),
        sel.name(UNITS, conv, "convert"),
        sel.name(UNITS, conv + 2, "unit", 1),
        sel.span(UNITS, (conv, 5), (conv, 12)),
        sel.symbol("shapes.units", "convert", "sig"),
        sel.symbol("shapes.units", "convert"),
        sel.ast("shapes.units", [("def", "convert")], ("call", 1)),
        sel.anchor(UNITS, "def convert("),
        sel.sym(UNITS, "convert", "sig"),
        sel.ast_file(UNITS, [("def", "convert")], ("call", 1)),
    ]
    with lanser.Lanser(ws.root) as s:
        for f in forms:
            b = s.locate(f)
            assert b.resolution["original"] == f, (f, b.resolution["original"])


def test_score_patch_and_the_trainer_tool_agree_with_check(make_ws):
    ws = make_ws("srcpkg")
    diff = a_patch(ws)
    want = ws.bundle("check", "--patch", patch_file(diff))
    score = lanser.reward.score_patch(ws.root, diff)
    assert score["bundleId"] == want["bundleId"]
    assert score["r"] == want["processReward"]["r"] and score["r"] < 0.4
    tool = lanser.reward.LanserRewardTool({"workspace": str(ws.root)})

    async def go():
        iid = await tool.create()
        text, r, meta = await tool.execute(iid, {"patch": diff})
        return text, r, meta, await tool.calc_reward(iid)

    try:
        text, r, meta, final = asyncio.run(go())
    finally:
        tool.close()
    assert r == final == score["r"] and meta["bundleId"] == want["bundleId"]
    assert "after" in text
    assert tool.get_openai_tool_schema()["function"]["parameters"]["required"] == ["patch"]


def test_impact_and_pr_v2_are_the_cli_bundles(make_ws):
    ws = make_ws("srcpkg")
    diff = a_patch(ws)
    f = patch_file(diff)
    conv = ws.line_of(UNITS, "def convert(")
    with lanser.Lanser(ws.root) as s:
        by_patch = s.impact(patch=diff)
        by_sel = s.impact(f"{UNITS}@L{conv}:convert", depth=1)
    # Byte for byte: the SDK's line is the line the CLI prints.
    assert by_patch.line == ws.cli("impact", "--patch", f, "--json").stdout.strip()
    assert by_sel.raw == ws.bundle("impact", f"{UNITS}@L{conv}:convert", "--depth", "1")
    assert [t["id"] for t in by_patch.facts["tests"]] == [
        "tests/test_geometry.py::test_circle_area",
        "tests/test_geometry.py::test_square_area_and_corners"]
    want = ws.bundle("check", "--patch", f, "--reward", "pr-v2")
    score = lanser.reward.score_patch(ws.root, diff, reward="pr-v2")
    assert score["bundleId"] == want["bundleId"]
    assert want["processReward"]["version"] == "pr-v2"
    # The undefined name is a run-time breaker that HEAD does not have.
    assert want["processReward"]["inputs"]["remaining"] == 1
    assert score["r"] == want["processReward"]["r"] < 0
    # pr-v3 with its selected tests: the daemon (score_patch) and a batch session give the
    # CLI's bytes.
    v3 = ("--reward", "pr-v3", "--tests", "impacted")
    line = ws.cli("check", "--patch", f, *v3, "--json").stdout.strip()
    assert json.loads(line)["processReward"]["version"] == "pr-v3"
    score = lanser.reward.score_patch(ws.root, diff, reward="pr-v3", tests=True)
    assert score["bundleId"] == json.loads(line)["bundleId"]
    with lanser.Lanser(ws.root, daemon=False, args=v3) as s:
        assert s.check_patch(diff, check=False).line == line


def test_every_operation_is_a_method_with_the_cli_argument_names():
    """The catalog the SDK is made from is the binary's, and every operation in it is a
    method of both clients whose parameters are the operation's own arguments."""
    import inspect
    from conftest import BIN
    from lanser.client import FORMER_NAMES, METHODS, _catalog, method_name
    live = json.loads(subprocess.run([BIN, "schema", "operations"], capture_output=True, text=True,
                                     check=True).stdout)
    assert live == _catalog(), "python/lanser/_operations.json is stale: run scripts/gen_python_types.sh"
    for op in live:
        name = method_name(op["name"])
        for cls in (lanser.Lanser, lanser.AsyncLanser):
            assert callable(getattr(cls, name, None)), f"{cls.__name__}.{name} ({op['name']})"
        params = [p for p in inspect.signature(getattr(lanser.Lanser, name)).parameters
                  if p not in ("self", "sel", "check")]
        # The operation's own arguments, and the overlay's choices (edit's `mode`).
        ids = {a["id"] for a in op["args"]} | {a["id"] for a in op["overlay"]["args"]}
        for p in params:
            assert p in ids, f"{name}({p}): {op['name']} takes {sorted(ids)}"
    assert set(METHODS) <= {op["name"] for op in live}
    # One name per operation: the method is the operation's name; a former name is the same
    # method, kept for one release.
    for op in live:
        assert method_name(op["name"]) in (op["name"].replace("-", "_"), op["name"] + "_")
    for old, new in FORMER_NAMES.items():
        assert getattr(lanser.Lanser, old) is getattr(lanser.Lanser, new), old


#: Calls of the methods as they were hand-written (each with its positional parameters and
#: former names) and the request line the hand-written method sent (`@PATCHES@`: the directory
#: of content-named diff files).
FORMER_REQUESTS = [
    ('def_', ('s',), {}, {'cmd': 'def', 'selector': 's'}),
    ('type_def', ('s',), {}, {'cmd': 'type-def', 'selector': 's'}),
    ('refs', ('s',), {}, {'cmd': 'refs', 'selector': 's'}),
    ('refs', ('s', True), {}, {'cmd': 'refs', 'selector': 's', 'args': {'exclude_declaration': True}}),
    ('refs', ('s',), {'exclude_declaration': True}, {'cmd': 'refs', 'selector': 's', 'args': {'exclude_declaration': True}}),
    ('hover', ('s',), {}, {'cmd': 'hover', 'selector': 's'}),
    ('impl', ('s',), {}, {'cmd': 'impl', 'selector': 's'}),
    ('highlight', ('s',), {}, {'cmd': 'highlight', 'selector': 's'}),
    ('signature', ('s',), {}, {'cmd': 'signature', 'selector': 's'}),
    ('calls', ('s', True), {}, {'cmd': 'calls', 'selector': 's', 'args': {'incoming': True}}),
    ('calls', ('s',), {'outgoing': True}, {'cmd': 'calls', 'selector': 's', 'args': {'outgoing': True}}),
    ('locate', ('s', True), {}, {'cmd': 'locate', 'selector': 's', 'args': {'preview': True}}),
    ('symbols', ('a.py',), {}, {'cmd': 'symbols', 'args': {'file': 'a.py'}}),
    ('symbols', (), {'query': 'x'}, {'cmd': 'symbols', 'args': {'query': 'x'}}),
    ('symbols', ('a.py', 'q'), {}, {'cmd': 'symbols', 'args': {'file': 'a.py', 'query': 'q'}}),
    ('diag', (), {}, {'cmd': 'diag'}),
    ('diag', ('a.py', 'b/*.py'), {}, {'cmd': 'diag', 'args': {'targets': ['a.py', 'b/*.py']}}),
    ('capabilities', (), {}, {'cmd': 'capabilities'}),
    ('request', ('m', {'q': 'é'}), {}, {'cmd': 'request', 'args': {'method': 'm', 'payload': '{"q":"\\u00e9"}'}}),
    ('request', ('m',), {'target': 'a.py'}, {'cmd': 'request', 'args': {'method': 'm', 'target': 'a.py'}}),
    ('request', ('m', None, 'a.py'), {}, {'cmd': 'request', 'args': {'method': 'm', 'target': 'a.py'}}),
    ('rename', ('s', 'y'), {}, {'cmd': 'rename', 'selector': 's', 'args': {'new_name': 'y'}}),
    ('rename', ('s', 'y', True, True), {}, {'cmd': 'rename', 'selector': 's', 'args': {'new_name': 'y', 'apply': True, 'allow_dirty': True}}),
    ('rename_file', ('a', 'b', True), {'allow_dirty': True}, {'cmd': 'rename-file', 'args': {'src': 'a', 'dst': 'b', 'apply': True, 'allow_dirty': True}}),
    ('code_actions', ('s',), {}, {'cmd': 'code-actions', 'selector': 's'}),
    ('code_actions', ('s', 'quickfix', 0, True, True), {}, {'cmd': 'code-actions', 'selector': 's', 'args': {'kind': 'quickfix', 'apply': '0', 'dry_run': True, 'allow_dirty': True}}),
    ('code_actions', ('s',), {'apply': 'Add import'}, {'cmd': 'code-actions', 'selector': 's', 'args': {'apply': 'Add import'}}),
    ('check', ('--- a\n',), {}, {'cmd': 'check', 'args': {'patch': '@PATCHES@/ce37ca72790a51ea83c172b0ad80082d7507efea0a1c818536a2a89f8fd96e96.diff'}}),
    ('check', (), {'diff': '--- a\n'}, {'cmd': 'check', 'args': {'patch': '@PATCHES@/ce37ca72790a51ea83c172b0ad80082d7507efea0a1c818536a2a89f8fd96e96.diff'}}),
    ('apply', ('d', True, True, True), {}, {'cmd': 'apply', 'args': {'patch': '@PATCHES@/18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4.diff', 'apply': True, 'require_clean': True, 'allow_dirty': True}}),
    ('apply', (), {'diff': 'd'}, {'cmd': 'apply', 'args': {'patch': '@PATCHES@/18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4.diff'}}),
    ('edit', ('s', 'replace_body'), {'text': 'pass'}, {'cmd': 'edit', 'selector': 's', 'args': {'replace_body': True, 'text': '@PATCHES@/d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1.diff'}}),
    ('edit', ('s', 'delete', None, True, True, True, True), {}, {'cmd': 'edit', 'selector': 's', 'args': {'delete': True, 'force': True, 'apply': True, 'require_clean': True, 'allow_dirty': True}}),
    ('edit', ('s',), {'mode': 'insert-before', 'text': 'x'}, {'cmd': 'edit', 'selector': 's', 'args': {'insert_before': True, 'text': '@PATCHES@/2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881.diff'}}),
    ('impact', ('s',), {}, {'cmd': 'impact', 'selector': 's'}),
    ('impact', (None, 'd', 2), {}, {'cmd': 'impact', 'args': {'patch': '@PATCHES@/18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4.diff', 'depth': 2}}),
    ('impact', (), {'patch': 'd'}, {'cmd': 'impact', 'args': {'patch': '@PATCHES@/18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4.diff'}}),
    ('impact', (), {'sel': 's', 'depth': 1}, {'cmd': 'impact', 'selector': 's', 'args': {'depth': 1}}),
    ('definition', ('s',), {}, {'cmd': 'def', 'selector': 's'}),
    ('check_patch', ('d',), {}, {'cmd': 'check', 'args': {'patch': '@PATCHES@/18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4.diff'}}),
    ('apply_patch', ('d',), {}, {'cmd': 'apply', 'args': {'patch': '@PATCHES@/18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4.diff'}}),
    ('diagnostics', ('a.py',), {}, {'cmd': 'diag', 'args': {'targets': ['a.py']}}),
    ('complete', ('s',), {'resolve': True}, {'cmd': 'complete', 'selector': 's', 'args': {'resolve': True}}),
    ('types', ('s',), {'subtypes': True}, {'cmd': 'types', 'selector': 's', 'args': {'subtypes': True}}),
    ('inlay', ('a.py',), {}, {'cmd': 'inlay', 'args': {'file': 'a.py'}}),
    ('format', ('a.ts',), {'tab_size': 2}, {'cmd': 'format', 'args': {'tab_size': 2, 'file': 'a.ts'}}),
    ('status', (), {}, {'cmd': 'status'}),
    ('reload', (), {}, {'cmd': 'reload'}),
    ('prepare_rename', ('s',), {}, {'cmd': 'prepare-rename', 'selector': 's'}),
    ('source', ('s',), {'signature': True}, {'cmd': 'source', 'selector': 's', 'args': {'signature': True}}),
    ('tests', ('s',), {}, {'cmd': 'tests', 'selector': 's'}),
]


def test_generated_methods_send_what_the_hand_written_ones_sent():
    """Every method is made from the catalog and its overlay, and each call the hand-written
    methods took sends the same request line, so the same bundle."""
    import tempfile
    from lanser.client import _Methods, _catalog, _op_method, method_name
    patches = str(Path(tempfile.gettempdir()) / "lanser-patches")

    class Echo(_Methods):
        def ask(self, request, check=True):
            return request

    e = Echo()
    for name, given, kw, want in FORMER_REQUESTS:
        want = json.loads(json.dumps(want).replace("@PATCHES@", patches))
        assert getattr(e, name)(*given, **kw) == want, (name, given, kw)
    # No method is written beside the generated ones: each is its operation's.
    for op in _catalog():
        assert getattr(_Methods, method_name(op["name"])).__code__ is _op_method(op).__code__, op["name"]
    with pytest.raises(ValueError, match="mode 'rewrite': use replace_body"):
        e.edit("a.py@L1:x", "rewrite")
    with pytest.raises(TypeError, match="takes 1 positional"):
        e.check("d", "e")


def test_a_catalog_method_refuses_what_its_operation_does_not_take(make_ws):
    ws = make_ws("srcpkg")
    with lanser.Lanser(ws.root) as s:
        with pytest.raises(TypeError, match="no argument 'fly'"):
            s.prepare_rename(f"{UNITS}@L1:C1", fly=True)
        with pytest.raises(TypeError, match="needs a selector"):
            s.decl()
        assert s.reload().ok


def test_the_async_client_has_the_catalog_methods(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    at = f"{UNITS}@L{conv}:convert"

    async def go():
        async with lanser.AsyncLanser(ws.root) as s:
            return await s.prepare_rename(at), await s.decl(at)

    prep, decl = asyncio.run(go())
    # status reports the process's own running sessions (the daemon's here), so only the
    # configured servers are the CLI's.
    with lanser.Lanser(ws.root) as s:
        assert s.status().facts["servers"] == ws.bundle("status")["facts"]["servers"]
    assert prep.raw == ws.bundle("prepare-rename", at)
    assert decl.raw == ws.bundle("decl", at)

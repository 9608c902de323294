"""The generated types: in sync with schemas/ (regenerated and compared), and they validate
real bundles of every kind while refusing a broken one."""
import subprocess

import pydantic
import pytest

import lanser
from conftest import REPO

UNITS = "src/shapes/units.py"


def test_the_checked_in_types_are_what_the_generator_prints(tmp_path):
    out = tmp_path / "_facts.py"
    subprocess.run(["bash", str(REPO / "scripts" / "gen_python_types.sh"), str(out)], check=True,
                   capture_output=True)
    assert out.read_text() == (REPO / "python" / "lanser" / "_facts.py").read_text(), \
        "python/lanser/_facts.py is stale: run bash scripts/gen_python_types.sh"


def test_the_types_validate_real_bundles_and_refuse_broken_ones(make_ws):
    ws = make_ws("srcpkg")
    conv = ws.line_of(UNITS, "def convert(")
    at = f"{UNITS}@L{conv}:convert"
    text = (ws.root / UNITS).read_text()
    line = text.split("\n")[conv - 1]
    patch = (f"--- a/{UNITS}\n+++ b/{UNITS}\n@@ -{conv},1 +{conv},2 @@\n {line}\n"
             f"+    \"\"\"Convert.\"\"\"\n")
    with lanser.Lanser(ws.root) as s:
        bundles = [s.definition(at), s.references(at), s.hover(at), s.symbols(file=UNITS),
                   s.diagnostics(UNITS), s.locate(at, preview=True), s.calls(at),
                   s.highlight(at), s.rename(at, "to_unit"), s.capabilities(),
                   s.rename_file(UNITS, "src/shapes/measure.py"), s.code_actions(at),
                   s.apply_patch(patch), s.check_patch(patch), s.impact(at),
                   s.edit(at, "replace_body", text="return value\n"),
                   s.definition("nope.py@L1:C1", check=False)]
    for b in bundles:
        model = b.typed()
        assert model.bundleId == b.bundle_id
        facts = b.typed_facts()
        assert (facts is None) == (not b.ok)
        if facts is not None:
            assert type(facts).__name__.endswith("Facts")
            assert facts.model_dump(mode="json", exclude_unset=True, by_alias=True) == b.facts
    broken = dict(bundles[0].raw, status="maybe")
    with pytest.raises(pydantic.ValidationError):
        type(bundles[0].typed()).model_validate(broken)
    facts = dict(bundles[1].raw["facts"], references="not a list")
    with pytest.raises(pydantic.ValidationError):
        type(bundles[1].typed_facts()).model_validate(facts)


def test_every_operation_has_the_facts_model_the_schema_names():
    """Over the whole catalog, not a chosen few: each operation's `typed_facts()` class is the
    one the bundle schema's branch for that command names (`apply` answers with WriteFacts)."""
    import json
    from lanser import _facts
    from lanser.client import facts_model

    schema = json.loads((REPO / "schemas" / "bundle.schema.json").read_text())
    named = {}
    for branch in schema["allOf"]:
        cmd = branch.get("if", {}).get("properties", {}).get("request", {}).get("properties", {}) \
            .get("cmd", {}).get("const")
        if cmd:
            named[cmd] = branch["then"]["properties"]["facts"]["$ref"].rsplit("/", 1)[1]
    from lanser.client import _catalog

    ops = [op["name"] for op in _catalog()]
    assert len(ops) >= 31 and set(ops) == set(named), set(ops) ^ set(named)
    for op in ops:
        assert facts_model(op) is getattr(_facts, named[op]), op
    assert facts_model("apply").__name__ == "WriteFacts"


def _one_request_per_operation(ws) -> dict:
    """A request for every operation of the catalog, on the mixed fixture (Python and
    TypeScript): each asked where a server that has the capability answers it."""
    import json
    from lanser.client import patch_file

    views, models, app, order = "api/views.py", "api/models.py", "web/app.ts", "web/order.ts"
    call = f"{views}@L{ws.line_of(views, 'order = make_order(')}:make_order"
    total = f"{views}@L{ws.line_of(views, 'order = make_order(')}:total"
    render = f"{app}@L{ws.line_of(app, 'render({')}:render"
    make = "py://api.models#make_order"
    at_def = f"{models}@L{ws.line_of(models, 'def make_order')}:make_order"
    line = (ws.root / models).read_text().split("\n")[ws.line_of(models, "def make_order") - 1]
    n = ws.line_of(models, "def make_order")
    diff = f"--- a/{models}\n+++ b/{models}\n@@ -{n},1 +{n},2 @@\n {line}\n+    \"\"\"Make.\"\"\"\n"
    patch = patch_file(diff)
    body = ws.root.parent / "body.py"
    body.write_text("return Order(total + 0)\n")
    hover = json.dumps({"textDocument": {"uri": (ws.root / views).as_uri()},
                        "position": {"line": 0, "character": 20}})
    return {
        "def": {"selector": call},
        "type-def": {"selector": f"{views}@L{ws.line_of(views, 'order = make_order(')}:order"},
        "refs": {"selector": at_def},
        "hover": {"selector": call},
        "impl": {"selector": render},
        "decl": {"selector": call},
        "highlight": {"selector": call},
        "signature": {"selector": total},
        "calls": {"selector": at_def},
        "locate": {"selector": make},
        "symbols": {"args": {"file": models}},
        "diag": {"args": {"targets": [views]}},
        "capabilities": {},
        "request": {"args": {"method": "textDocument/hover", "payload": hover}},
        "rename": {"selector": at_def, "args": {"new_name": "build_order"}},
        "rename-file": {"args": {"src": models, "dst": "api/orders.py"}},
        "code-actions": {"selector": call},
        "check": {"args": {"patch": patch}},
        "apply": {"args": {"patch": patch}},
        "edit": {"selector": make, "args": {"replace-body": True, "text": str(body)}},
        "impact": {"selector": at_def},
        "prepare-rename": {"selector": call},
        "complete": {"selector": call},
        "source": {"selector": make},
        "status": {},
        "reload": {},
        "changes": {},
        "tests": {"selector": at_def},
        "format": {"args": {"file": order}},
        "inlay": {"args": {"file": order}},
        "selection-range": {"selector": render},
        "types": {"selector": f"{models}@L1:Order"},
    }


def test_every_operations_bundle_reads_as_its_generated_model(make_ws):
    """Every operation of the catalog (the test fails when one is added without a request
    here), asked for real: its bundle's `typed_facts()` is the model its schema names, and
    dumps back to the bundle's facts. `types` has no server in this fixture (Pyright and
    typescript-language-server lack typeHierarchyProvider): its refusal is asserted instead."""
    from lanser.client import _catalog, facts_model

    ws = make_ws("mixed")
    asked = _one_request_per_operation(ws)
    ops = {op["name"] for op in _catalog()}
    assert set(asked) == ops, set(asked) ^ ops
    refused = {}
    with lanser.Lanser(ws.root) as s:
        for cmd, req in asked.items():
            b = s.ask({"cmd": cmd, **req}, check=False)
            if not b.ok:
                refused[cmd] = b.error["code"]
                continue
            facts = b.typed_facts()
            assert type(facts) is facts_model(cmd), cmd
            assert facts.model_dump(mode="json", exclude_unset=True, by_alias=True) == b.facts, cmd
            assert b.typed().bundleId == b.bundle_id
    assert refused == {"types": "E/UNSUPPORTED_CAP"}

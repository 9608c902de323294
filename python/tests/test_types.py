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

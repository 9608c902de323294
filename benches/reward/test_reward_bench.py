"""Offline checks of the reward benchmark's parts: the AUC and its interval on known inputs,
each mutation family on a small module, and a generator that gives the same bytes twice."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402
import mutate  # noqa: E402
import stats  # noqa: E402

MODULE = '''"""A module to mutate."""
import math
from os import path


def helper(a, b):
    total = a + b
    total = total * 2
    return total


def area(r, scale):
    if r > 0:
        x = helper(r, scale)
        return math.pi * x
    return 0


def name(p):
    items = [p, p]
    return path.basename(items[1][0:3])
'''


def test_auc_on_known_rankings():
    assert stats.auc([(1, True), (0, False)]) == 1.0
    assert stats.auc([(0, True), (1, False)]) == 0.0
    assert stats.auc([(1, True), (1, False)]) == 0.5
    xs = [(3, True), (2, False), (1, True), (0, False)]
    assert stats.auc(xs) == 0.75
    auc, lo, hi = stats.auc_ci(xs * 10, seed=1, n=200)
    assert lo <= auc <= hi
    assert stats.auc_ci(xs * 10, seed=1, n=200) == (auc, lo, hi)


def test_every_family_finds_edits_that_compile():
    for ops in (mutate.VISIBLE, mutate.INVISIBLE, mutate.NEUTRAL):
        for name, op in ops.items():
            edits = op(MODULE)
            assert edits, name
            for e in edits:
                new = mutate.apply(MODULE, e)
                assert new != MODULE and mutate.compiles(new), (name, e)


def test_operators_do_what_they_say():
    def first(op):
        return mutate.apply(MODULE, op(MODULE)[0])
    assert "helperr(r, scale)" in first(mutate.misspell_callee)
    assert "helper(r)" in first(mutate.wrong_arity)
    assert "if not (r > 0):" in first(mutate.negate_condition)
    assert "helper(scale, r)" in first(mutate.swap_args)
    assert "return 1" in first(mutate.change_return_constant)
    renamed = first(mutate.rename_local)
    assert "total_ = a + b" in renamed and "return total_" in renamed
    # A diff of a mutation applies with git and gives the mutant back.
    d = mutate.diff("m.py", MODULE, first(mutate.negate_condition))
    assert d.startswith("--- a/m.py\n+++ b/m.py\n@@ ")


def test_the_generator_gives_the_same_bytes_twice(tmp_path, monkeypatch):
    tree = tmp_path / "trees" / "demo-1"
    (tree / "demo").mkdir(parents=True)
    (tree / "demo" / "__init__.py").write_text(MODULE)
    (tree / "demo" / "more.py").write_text(MODULE.replace("helper", "assist"))

    def run(out):
        out.mkdir()
        rows = bench.generate_project("demo", tree, ["demo"], out)
        blob = json.dumps(rows, sort_keys=True).encode()
        for p in sorted(out.rglob("*.diff")):
            blob += p.read_bytes()
        return rows, hashlib.sha256(blob).hexdigest()

    rows, a = run(tmp_path / "one")
    _, b = run(tmp_path / "two")
    assert a == b
    families = {r["family"] for r in rows}
    assert {"visible", "invisible", "exact_fix", "neutral"} <= families
    # Every patch applies to its base with git.
    for r in rows:
        work = tmp_path / "apply" / r["id"].replace("/", "_")
        work.parent.mkdir(exist_ok=True)
        subprocess.run(["cp", "-r", str(tree), str(work)], check=True)
        for key in ("base", "patch"):
            if r[key]:
                subprocess.run(["git", "apply", str(tmp_path / "one" / r[key])], cwd=work, check=True)


def test_the_held_out_split_is_seeded_and_strips_what_it_hides():
    import heldout

    assert heldout.unit_of("t/test_a.py::TestX::test_y[1]", "definition") == "t/test_a.py::TestX"
    assert heldout.unit_of("t/test_a.py::test_f[2-3]", "definition") == "t/test_a.py::test_f"
    assert heldout.unit_of("t/test_a.py::TestX::test_y", "file") == "t/test_a.py"
    units = [f"u{k}" for k in range(9)]
    hidden = heldout.split_units("demo", units)
    assert len(hidden) == 4 and hidden == heldout.split_units("demo", list(reversed(units)))
    assert hidden != heldout.split_units("other", units)
    text = ("import x\n\n\nclass Base:\n    pass\n\n\n@mark\nclass TestA(Base):\n    def test_a(self):\n"
            "        pass\n\n\ndef test_b():\n    helper()\n\n\ndef helper():\n    pass\n")
    # helper is needed by a visible function: it stays visible; Base only by a hidden class.
    kept = heldout.keep_needed({"t.py": text}, {"t.py::Base", "t.py::helper", "t.py::TestA"})
    assert kept == {"t.py::Base", "t.py::TestA"}
    assert heldout.keep_needed({"t.py": text}, {"t.py::Base"}) == set()
    stripped = heldout.strip_units(text, {"TestA"})
    assert "TestA" not in stripped and "@mark" not in stripped and "def test_b" in stripped
    assert mutate.compiles(stripped)


def test_the_calibration_fit_recovers_a_known_logistic():
    import calibrate

    xs, ys = [], []
    for k in range(400):
        t = (k % 20) / 4 - 2.5
        p = calibrate.sigmoid(0.5 + 1.5 * t)
        xs.append([1.0, t, 0.0])
        ys.append((k * 7919 % 1000) / 1000 < p)
    c0, c1, _ = calibrate.fit(xs, ys, l2=1e-6)
    assert abs(c0 - 0.5) < 0.5 and abs(c1 - 1.5) < 0.6, (c0, c1)
    assert calibrate.brier([(1.0, True), (0.0, False)]) == 0.0
    reward = {"components": {"tests": 1.0, "diagnostics": 10.0, "remaining": 0.0, "structural": 0.0}}
    assert calibrate.features(reward) == [1.0, 1.0, 3.0]


def test_the_next_release_overlay_takes_test_files_only(tmp_path):
    import nextrelease

    for rel, text in {"pkg/__init__.py": "", "pkg/core.py": "X = 1\n", "conftest.py": "",
                      "tests/test_a.py": "", "tests/files/a.sql": "select 1;\n", "pkg/tests/test_b.py": "",
                      "test_top.py": "", "setup.py": "", "tests/__pycache__/x.pyc": ""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert nextrelease.test_files(tmp_path) == [
        "conftest.py", "pkg/tests/test_b.py", "test_top.py", "tests/files/a.sql", "tests/test_a.py"]


def test_the_cost_table_states_each_goal_per_project(monkeypatch):
    import heldout_report

    one = lambda w, s, su, c: {"warm": w, "oneshot": s, "suite": su, "cli": c, "load": 2.0,  # noqa: E731
                               "warmR": 1.4, "oneshotR": 1.4, "oneshotExit": 0}
    found = {"toolz": {"build": "release", "first": 9.0, "patches": [one(1, 3, 4, 6), one(2, 5, 4, 6), one(3, 4, 5, 7)]},
             "idna": {"build": "release", "first": 5.0, "patches": [one(4, 9, 2, 8)]}}
    monkeypatch.setattr(heldout_report.bench, "load", lambda name: found if name == "heldout/cost.json" else {})
    lines, result = [], {"cost": {}}
    heldout_report.cost_rows(lines, result)
    # toolz: medians 2 / 4 / 4 / 6: one-shot 1.0 x the suite (met), warm 0.2 x (met);
    # idna: one-shot 4.5 x the suite, warm 0.4 x (neither).
    assert result["cost"]["toolz"]["oneshotOverSuite"] == 1.0
    assert result["cost"]["toolz"]["warmOverSuiteCli"] == 0.2
    assert result["cost"]["idna"]["oneshotOverSuite"] == 4.5
    assert any("1 of 2 projects" in line for line in lines) and any("Warm ≤ 0.2" in line and "1 of 2" in line for line in lines)

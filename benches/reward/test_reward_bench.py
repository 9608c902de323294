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

"""`python -m lanser.distributed` on local Ray with 2 workers scores a file of patches with the
same r (and bundleIds) as one sequential session."""
import json
import os
import subprocess
import sys

import lanser
from conftest import REPO

UNITS = "src/shapes/units.py"


def patches(ws):
    p = ws.root / UNITS
    old = p.read_text()
    edits = [
        ("return round(value, PRECISION)", "return round(value, PRECISION) + undefined_name"),
        ("return round(value, PRECISION)", "return round(value)"),
        ('raise ValueError(f"unknown unit: {unit}")', "raise ValueError(missing)"),
        ("PRECISION: int = 4", 'PRECISION: int = "4"'),
        ("def convert(value: float, unit: str) -> float:", "def convert(value: float, unit: str) -> str:"),
        ("factor = _CM_PER_UNIT.get(unit)", "factor = _CM_PER_UNIT.get(unit, 1.0)"),
    ]
    out = []
    for i, (a, b) in enumerate(edits):
        assert a in old
        p.write_text(old.replace(a, b))
        diff = subprocess.run(["git", "diff"], cwd=ws.root, capture_output=True, text=True).stdout
        out.append({"id": f"p{i}", "patch": diff})
    p.write_text(old)
    return out


def test_ray_scores_equal_one_sequential_session(make_ws, tmp_path):
    ws = make_ws("srcpkg")
    rows = patches(ws)
    with lanser.Lanser(ws.root, daemon=False) as s:
        seq = {r["id"]: lanser.reward.score_patch(ws.root, r["patch"], session=s) for r in rows}
    assert len({v["r"] for v in seq.values()}) > 1, seq  # the patches score differently
    inp, out = tmp_path / "patches.jsonl", tmp_path / "scores.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), RAY_DISABLE_USAGE_STATS="1")
    run = subprocess.run([sys.executable, "-m", "lanser.distributed", "--workspace", str(ws.root),
                          "--in", str(inp), "--out", str(out), "--workers", "2", "--batch-size", "2"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = [json.loads(l) for l in out.read_text().splitlines()]
    assert [g["id"] for g in got] == [r["id"] for r in rows]
    for g in got:
        want = seq[g["id"]]
        assert (g["r"], g["bundleId"], g["status"]) == (want["r"], want["bundleId"], want["status"]), g["id"]
        assert g["components"] == want["components"]


def test_a_malformed_input_line_is_refused(make_ws, tmp_path):
    ws = make_ws("demo")
    inp = tmp_path / "bad.jsonl"
    inp.write_text('{"id": 1}\n')
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    run = subprocess.run([sys.executable, "-m", "lanser.distributed", "--workspace", str(ws.root),
                          "--in", str(inp), "--out", str(tmp_path / "o.jsonl")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 2 and "line 1" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()

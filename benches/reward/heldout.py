"""The reward benchmark's held-out mode (issue 42): does pr-v3 predict a good patch when the
label comes from tests lanser never sees?

    python3 benches/reward/heldout.py all      # split, label, score, cost, calibrate, report
    python3 benches/reward/heldout.py split    # ... or one step at a time

It reuses bench.py's projects, patches and sample (`bench.py fetch generate` first;
LANSER_REWARD_SAMPLE and LANSER_REWARD_PROJECTS as there). Each project's tests are split
into *visible* and *hidden* units (`split_units`); lanser's workspace is the project with
the hidden units removed, and a patch is labelled by the hidden units alone on the whole
project. Output: target/thirdparty/reward/heldout/*.json and benches/reward/HELDOUT.md.
"""
from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402
import calibrate  # noqa: E402
import heldout_report  # noqa: E402

OUT = bench.CACHE / "heldout"
SEED = "lanser-heldout-v1"
# A project with at least this many test files is split by file; one with fewer, by its
# top-level test classes and module-level test functions.
FILE_LEVEL_MIN = 8

# A pytest plugin (written to OUT/plugin) recording every test's outcome by node id, and a
# module that fails to import as an error of its file's node id.
PLUGIN = '''
import json, os

_out = {}


def pytest_collectreport(report):
    if report.failed:
        _out[report.nodeid or "."] = "error"


def pytest_runtest_logreport(report):
    prev = _out.get(report.nodeid)
    if report.when == "setup" and report.failed:
        _out[report.nodeid] = "error"
    elif report.when == "call":
        _out[report.nodeid] = "failed" if report.failed else "skipped" if report.skipped else "passed"
    elif report.when == "setup" and report.skipped:
        _out[report.nodeid] = "skipped"
    elif report.when == "teardown" and report.failed and prev == "passed":
        _out[report.nodeid] = "error"


def pytest_sessionfinish(session):
    with open(os.environ["LANSER_HELDOUT_OUT"], "w") as f:
        json.dump(_out, f)
'''


def unit_of(nodeid: str, level: str) -> str:
    """The split unit a test belongs to: its file, or its file and top-level class or
    function (parameters dropped)."""
    parts = nodeid.split("::")
    if level == "file" or len(parts) == 1:
        return parts[0]
    return f"{parts[0]}::{parts[1].split('[')[0]}"


def run_pytest(tree: Path, root: str, args: list[str] | None = None, timeout: float = 300) -> tuple[dict, float]:
    """Every test's outcome (node id -> passed/failed/error/skipped) of one pytest run over
    `tree`, tracebacks off, and its wall time; a run past `timeout` gives {"<timeout>": "error"}."""
    plugin = OUT / "plugin"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "lanser_heldout_outcomes.py").write_text(PLUGIN)
    out = OUT / f"run-{os.getpid()}.json"
    out.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=f"{tree / root}{os.pathsep}{plugin}", PYTHONDONTWRITEBYTECODE="1",
               LANSER_HELDOUT_OUT=str(out))
    # A module that fails to import must not stop the others' tests (pytest interrupts the
    # session on a collection error otherwise, and a side would run no test at all).
    argv = [bench.pinned_python(), "-m", "pytest", "-q", "--tb=no", "-p", "no:cacheprovider",
            "--continue-on-collection-errors",
            "-p", "lanser_heldout_outcomes", f"--rootdir={tree}", *(args or [])]
    t = time.monotonic()
    try:
        subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=timeout)
        found = json.loads(out.read_text()) if out.exists() else {"<no report>": "error"}
    except subprocess.TimeoutExpired:
        found = {"<timeout>": "error"}
    return found, time.monotonic() - t


# --- split --------------------------------------------------------------------------------

def split_units(project: str, units: list[str]) -> set[str]:
    """The hidden units: the sorted units shuffled by a generator seeded with the project's
    name, the first half (rounded down) hidden."""
    order = sorted(units)
    random.Random(f"{SEED}:{project}").shuffle(order)
    return set(order[: len(order) // 2])


def top_level(tree: ast.Module) -> dict[str, ast.stmt]:
    return {n.name: n for n in tree.body
            if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}


def names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def keep_needed(files: dict[str, str], hidden: set[str]) -> set[str]:
    """Hidden units that a visible unit or a module-level statement of their file refers to
    (a base class, a helper test function) are made visible, until none is left."""
    while True:
        moved = set()
        for rel, text in files.items():
            mod = ast.parse(text)
            defs = top_level(mod)
            for stmt in mod.body:
                name = getattr(stmt, "name", None)
                if name in defs and f"{rel}::{name}" in hidden:
                    continue
                for used in names_used(stmt) - {name}:
                    if f"{rel}::{used}" in hidden and used in defs:
                        moved.add(f"{rel}::{used}")
        if not moved:
            return hidden
        hidden = hidden - moved


def strip_units(text: str, names: set[str]) -> str:
    """The module without the top-level definitions `names` (decorators included)."""
    mod = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop = set()
    for name, node in top_level(mod).items():
        if name in names:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            drop.update(range(start - 1, node.end_lineno))
    return "".join(l for i, l in enumerate(lines) if i not in drop)


def visible_tree(name: str, version: str) -> Path:
    return OUT / "trees" / f"{name}-{version}"


def split_project(name: str, version: str, root: str) -> dict:
    """Collects the clean project's tests, splits them, and writes the visible tree (a git
    repository, HEAD the project without its hidden units)."""
    clean = bench.clean_tree(name, version)
    outcomes, _ = run_pytest(clean, root)
    ids = sorted(k for k in outcomes if "::" in k)
    files = sorted({i.split("::")[0] for i in ids})
    level = "file" if len(files) >= FILE_LEVEL_MIN else "definition"
    units = sorted({unit_of(i, level) for i in ids})
    hidden = split_units(name, units)
    if level == "definition":
        texts = {rel: (clean / rel).read_text() for rel in files}
        hidden = keep_needed(texts, hidden)
    dest = visible_tree(name, version)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(clean, dest, ignore=shutil.ignore_patterns(".git"))
    for rel in files:
        gone = {u.split("::")[1] for u in hidden if u.split("::")[0] == rel and "::" in u}
        if level == "file" and rel in hidden:
            (dest / rel).unlink()
        elif gone:
            (dest / rel).write_text(strip_units((clean / rel).read_text(), gone))
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "visible tests"]):
        bench.sh("git", *args, cwd=dest)
    seen, _ = run_pytest(dest, root)
    failing = sorted(k for k, v in seen.items() if v in ("failed", "error"))
    return {"level": level, "units": len(units), "hidden": sorted(hidden),
            "tests": len(ids), "hiddenTests": sum(unit_of(i, level) in hidden for i in ids),
            "visibleTests": sum(1 for k in seen if "::" in k),
            "cleanFailing": sorted(k for k, v in outcomes.items() if v in ("failed", "error")),
            "visibleFailing": failing}


def split():
    found = bench.load("heldout/split.json")
    for name, version, _, _, root in bench.PROJECTS:
        if name in found and (visible_tree(name, version) / ".git").exists():
            continue
        found[name] = split_project(name, version, root)
        s = found[name]
        print(f"split {name}: {s['level']}, {len(s['hidden'])} of {s['units']} units hidden, "
              f"{s['hiddenTests']} of {s['tests']} tests", file=sys.stderr)
        bench.save("heldout/split.json", {name: s})


# --- label --------------------------------------------------------------------------------

def side(outcomes: dict, row, splits: dict, hidden: bool) -> dict:
    """The outcomes of one side's tests (a module that failed to import counts on both sides
    when it holds any of that side's units)."""
    s = splits[row["project"]]
    hid = set(s["hidden"])
    out = {}
    for k, v in outcomes.items():
        if "::" not in k:
            # A module that failed to import: on its side at file level; at definition level
            # (and a run cut short, "<timeout>") on both sides.
            if s["level"] == "definition" or k.startswith("<") or (k in hid) == hidden:
                out[k] = v
        elif (unit_of(k, s["level"]) in hid) == hidden:
            out[k] = v
    return out


def bad(o: str) -> bool:
    return o in ("failed", "error")


def label():
    """Runs the whole project's tests on each patch's base (once per base) and on base +
    patch; keeps each side's counts. Good: every hidden test passes (or skips) after."""
    splits = bench.load("heldout/split.json")
    out = bench.load("heldout/labels.json")
    bases = bench.load("heldout/bases.json")
    scratch = OUT / "scratch/label"
    for row in bench.manifest():
        if row["id"] in out:
            continue
        root = bench.import_root(row)
        key = f"{row['project']}:{row['base'] or 'clean'}"
        if key not in bases:
            tree = bench.materialize(row, scratch, with_patch=False)
            bases[key] = {"outcomes": run_pytest(tree, root)[0]}
            bench.save("heldout/bases.json", {key: bases[key]})
        before = bases[key]["outcomes"]
        tree = bench.materialize(row, scratch, with_patch=True)
        after, secs = run_pytest(tree, root)
        rec = {"seconds": round(secs, 3)}
        for name, hidden in (("hidden", True), ("visible", False)):
            b, a = side(before, row, splits, hidden), side(after, row, splits, hidden)
            rec[name] = {"tests": len(a), "failingAfter": sum(bad(v) for v in a.values()),
                         "broke": sum(bad(v) and not bad(b.get(k, b.get(k.split("::")[0], "passed")))
                                      for k, v in a.items()),
                         "failingBefore": sum(bad(v) for v in b.values())}
        rec["good"] = rec["hidden"]["failingAfter"] == 0 and rec["hidden"]["tests"] > 0
        rec["failingAfterIds"] = sorted(k for k, v in after.items() if bad(v))
        out[row["id"]] = rec
        print(f"heldout label {row['id']} {row['family']:12} {'good' if rec['good'] else 'bad'} "
              f"hidden {rec['hidden']['failingAfter']} failing ({rec['hidden']['broke']} broke), "
              f"visible {rec['visible']['failingAfter']} {secs:.1f}s", file=sys.stderr)
        bench.save("heldout/labels.json", {row["id"]: rec})


# --- score --------------------------------------------------------------------------------

FLAGS = ["--timeout", "300", "--reward", "pr-v3", "--tests", "impacted"]


def materialize_visible(row, scratch: Path, fresh: bool = False) -> Path:
    """The visible tree of the row's project under `scratch` with the row's base applied
    (uncommitted); `fresh` clones a new copy at a new path."""
    version = next(p[1] for p in bench.PROJECTS if p[0] == row["project"])
    dest = scratch / (row["project"] + (f"-{row['id'].split('/')[1]}-{time.time_ns()}" if fresh else ""))
    if not (dest / ".git").exists():
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        bench.sh("git", "clone", "-q", str(visible_tree(row["project"], version)), str(dest))
    bench.sh("git", "checkout", "-q", "--", ".", cwd=dest)
    bench.sh("git", "clean", "-qfdx", cwd=dest)
    if row["base"]:
        bench.sh("git", "apply", str(bench.CACHE / "patches" / row["base"]), cwd=dest)
    return dest


def score():
    """pr-v3 with the selected tests, one warm session per base tree, on the visible tree."""
    sys.path.insert(0, str(bench.REPO / "python"))
    from lanser import Lanser

    groups = {}
    for row in bench.manifest():
        groups.setdefault((row["project"], row["base"] or ""), []).append(row)
    out = bench.load("heldout/scores.json")
    env = {"VIRTUAL_ENV": str(Path(bench.pinned_python()).parents[1])}
    for (_, _), members in sorted(groups.items()):
        todo = [r for r in members if "v3" not in out.get(r["id"], {})]
        if not todo:
            continue
        tree = materialize_visible(members[0], OUT / "scratch/score")
        with Lanser(tree, lanser_bin=bench.lanser_bin(), daemon=False, env=env, args=FLAGS) as s:
            t0 = time.monotonic()
            s.capabilities()
            start = time.monotonic() - t0
            for row in todo:
                t = time.monotonic()
                b = s.check_patch((bench.CACHE / "patches" / row["patch"]).read_text(), check=False)
                secs = time.monotonic() - t
                rec = {"v3": {"ok": b.ok, "reward": b.process_reward, "seconds": round(secs, 3),
                              "error": b.error}, "sessionStart": round(start, 3)}
                out[row["id"]] = rec
                print(f"heldout score {row['id']} r={b.process_reward and b.process_reward['r']} "
                      f"{secs:.2f}s", file=sys.stderr)
                bench.save("heldout/scores.json", {row["id"]: rec})


def visible_suite(tree: Path, root: str) -> float:
    """The wall time of the whole visible suite on `tree` as a harness runs it to judge a patch:
    one pytest process, every test (no -x), quiet, tracebacks short."""
    env = dict(os.environ, PYTHONPATH=str(tree / root))
    t = time.monotonic()
    subprocess.run([bench.pinned_python(), "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider",
                    "--continue-on-collection-errors"], cwd=tree, env=env, capture_output=True, timeout=600)
    return time.monotonic() - t


def cost(per_project: int = 3):
    """The cost of a patch four ways, per project in one period (each patch's four taken one
    after the other): the project's clean-base patches after the first, `per_project` of them.

    - warm: the patch's `check --patch` in one warm session on the visible tree (the session's
      start and its first check, of the project's first clean-base patch, timed apart);
    - one-shot: one `lanser check --patch --no-daemon` process on a fresh clone of the visible
      tree at a new path, after that first patch on the base (the collection and the coverage
      run are kept by content digest, so the copy shares them; Pyright starts cold);
    - the whole visible suite: one pytest run of every visible test on base + patch;
    - the pyright CLI over the visible tree with the patch (bench.cli_errors).
    """
    sys.path.insert(0, str(bench.REPO / "python"))
    from lanser import Lanser

    out = bench.load("heldout/cost.json")
    env = {"VIRTUAL_ENV": str(Path(bench.pinned_python()).parents[1])}
    scratch = OUT / "scratch/cost"
    build = "release" if "/release/" in bench.lanser_bin() else "debug" if "/debug/" in bench.lanser_bin() else "?"
    for name, *_, root in bench.PROJECTS:
        if name in out:
            continue
        rows = [r for r in bench.manifest() if r["project"] == name and not r["base"]][:per_project + 1]
        diff = lambda r: bench.CACHE / "patches" / r["patch"]  # noqa: E731
        tree = materialize_visible(rows[0], scratch / "warm")
        rec = {"build": build, "patches": [], "loadStart": os.getloadavg()[0]}
        with Lanser(tree, lanser_bin=bench.lanser_bin(), daemon=False, env=env, args=FLAGS) as s:
            t = time.monotonic()
            s.capabilities()
            s.check_patch(diff(rows[0]).read_text(), check=False)
            rec["first"] = round(time.monotonic() - t, 3)
            for row in rows[1:]:
                one = {"id": row["id"], "load": os.getloadavg()[0]}
                t = time.monotonic()
                b = s.check_patch(diff(row).read_text(), check=False)
                one["warm"] = round(time.monotonic() - t, 3)
                one["warmR"] = b.process_reward and b.process_reward["r"]
                fresh = materialize_visible(row, scratch / "oneshot", fresh=True)
                t = time.monotonic()
                p = subprocess.run([bench.lanser_bin(), "check", "--patch", str(diff(row)), "--workspace", str(fresh),
                                    "--no-daemon", "--json", "--timing", *FLAGS],
                                   capture_output=True, text=True, env=dict(os.environ, **env))
                one["oneshot"] = round(time.monotonic() - t, 3)
                try:
                    shot = json.loads(p.stdout.splitlines()[-1])
                    one["oneshotR"] = shot["processReward"]["r"]
                    one["oneshotTiming"] = shot["meta"].get("timing")
                except (IndexError, KeyError, ValueError, TypeError):
                    one["oneshotR"] = None
                one["oneshotExit"] = p.returncode
                shutil.rmtree(fresh, ignore_errors=True)
                judged = materialize_visible(row, scratch / "suite")
                bench.sh("git", "apply", str(diff(row)), cwd=judged)
                one["suite"] = round(visible_suite(judged, root), 3)
                one["cli"] = round(bench.cli_errors(judged)[1], 3)
                rec["patches"].append(one)
                print(f"heldout cost {row['id']} warm {one['warm']:.2f}s one-shot {one['oneshot']:.2f}s "
                      f"suite {one['suite']:.2f}s cli {one['cli']:.2f}s load {one['load']:.1f}", file=sys.stderr)
        rec["loadEnd"] = os.getloadavg()[0]
        out[name] = rec
        bench.save("heldout/cost.json", {name: rec})


def main():
    steps = {"split": split, "label": label, "score": score, "cost": cost,
             "calibrate": calibrate.main, "report": heldout_report.report}
    bench.run_steps(steps, OUT)


if __name__ == "__main__":
    main()

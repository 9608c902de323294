"""Labels from the next release's tests (issue 42, SWE-bench's kind): for a project of the
reward benchmark whose next release added tests, the tests added in version N+1 are the hidden
set for the patches on version N.

    python3 benches/reward/nextrelease.py all     # fetch, added, label, report
    python3 benches/reward/nextrelease.py added   # ... or one step at a time

After `bench.py fetch generate` and heldout.py's label and score steps (pr-v3 on the visible
tree; the whole-project runs give N's whole suite as a second baseline); where
`LANSER_REWARD_VARIANTS=v3 bench.py score` also ran on the same patches, pr-v3 with all of N's
tests visible (N's tree as it is) gets a column too. Steps:

- **fetch**: the next release's sdist (pinned by sha256 below), unpacked.
- **added**: the test node ids N+1's suite collects (on N+1's own code) that N's does not; each
  run on N's clean tree with N+1's test files laid over N's (the library stays N's). The
  *hidden set* is those that pass there: an added test N fails tests behaviour N+1 added, and
  no patch of the benchmark is meant to add it.
- **label**: each patch (on its base) with N+1's test files laid over; good when every test of
  the hidden set passes (or skips) after it, bad otherwise.
- **report**: AUC (95 % bootstrap CI) on these labels of pr-v3's r on the held-out mode's
  visible tree, of the visible suite passing after the patch, and of N's whole suite passing
  after it. Output: HELDOUT.md between its `nextrelease` markers, and
  target/thirdparty/reward/nextrelease/*.json.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402
import heldout  # noqa: E402
import stats  # noqa: E402

OUT = bench.CACHE / "nextrelease"

# name -> (version N+1, sha256 of its sdist); N is bench.PROJECTS' version.
NEXT = {
    "more-itertools": ("10.6.0", "2cd7fad1009c31cc9fb6a035108509e6547547a7a738374f10bd49a09eb3ee3b"),
    "toolz": ("1.1.0", "27a5c770d068c110d9ed9323f24f1543e83b2f300a687b7891c1a6d56b697b5b"),
    "cachetools": ("5.5.1", "70f238fbba50383ef62e55c6aff6d9673175fe59f7c6782c7a0b9e38f4a9df95"),
    "idna": ("3.11", "795dafcc9c04ed0c1fb032c2aa73654d8e8c5023a7df64a53f39190ada629902"),
    "boltons": ("25.0.0", "e110fbdc30b7b9868cb604e3f71d4722dd8f4dcb4a5ddd06028ba8f1ab0b5ace"),
    "pathspec": ("1.0.0", "9ada63a23541746b0cf7d5672a39ea77eac31dd23a80470be90df83537512131"),
    "sqlparse": ("0.5.2", "9e37b35e16d1cc652a2545f0997c1deb23ea28fa1f3eefe609eee3063c3b105f"),
}


def projects():
    return [p for p in bench.PROJECTS if p[0] in NEXT]


def next_tree(name: str) -> Path:
    return OUT / "trees" / f"{name}-{NEXT[name][0]}"


def fetch():
    import hashlib

    sdists = OUT / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    for name, *_ in projects():
        version, sha = NEXT[name]
        tree = next_tree(name)
        if tree.exists():
            continue
        found = lambda: [p for p in sdists.glob("*.tar.gz")  # noqa: E731
                         if p.name.lower().replace("_", "-").startswith(f"{name}-{version}.tar")]
        if not found():
            bench.sh(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                     f"{name}=={version}", "-d", str(sdists))
        archive = found()[0]
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != sha:
            raise SystemExit(f"{archive.name}: sha256 {digest}, pinned {sha}")
        tree.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as t:
            top = t.getnames()[0].split("/")[0]
            t.extractall(tree.parent, filter="data")
        (tree.parent / top).rename(tree)
        print(f"fetched {name} {version}", file=sys.stderr)


def test_files(tree: Path) -> list[str]:
    """The test files of a tree: conftest.py files and test_*.py / *_test.py under a tests
    directory or named so; data files under a tests directory too (sqlparse's tests/files)."""
    out = []
    for p in sorted(tree.rglob("*")):
        rel = p.relative_to(tree).as_posix()
        if not p.is_file() or "/." in f"/{rel}" or "__pycache__" in rel or rel.endswith(".pyc"):
            continue
        parts = rel.split("/")
        in_tests = any(d in ("tests", "test", "testing") for d in parts[:-1])
        if p.name == "conftest.py" or p.name.startswith("test_") and p.suffix == ".py" or in_tests:
            out.append(rel)
    return out


def overlay(dest: Path, name: str):
    """N+1's test files laid over the tree `dest` (N's, maybe patched)."""
    src = next_tree(name)
    for rel in test_files(src):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dest / rel)


def collected(tree: Path, root: str) -> set[str]:
    env = dict(__import__("os").environ, PYTHONPATH=str(tree / root), PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([bench.pinned_python(), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "--continue-on-collection-errors", f"--rootdir={tree}"],
                       cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    return {line.strip() for line in p.stdout.splitlines() if "::" in line and not line.startswith(" ")}


def added():
    found = bench.load("nextrelease/added.json")
    scratch = OUT / "scratch/added"
    for name, version, _, _, root in projects():
        if name in found:
            continue
        old = collected(bench.clean_tree(name, version), root)
        new = collected(next_tree(name), root)
        ids = sorted(new - old)
        tree = materialize(name, None, None, scratch)
        outcomes, _ = heldout.run_pytest(tree, root, args=sorted({i.split("::")[0] for i in ids}))
        hidden = sorted(i for i in ids if outcomes.get(i) in ("passed", "skipped"))
        found[name] = {"next": NEXT[name][0], "testsN": len(old), "testsNext": len(new), "added": ids,
                       "hidden": hidden,
                       "addedFailingOnN": sorted(i for i in ids if i not in hidden)}
        print(f"{name}: {len(ids)} tests added in {NEXT[name][0]}, {len(hidden)} pass on {version}",
              file=sys.stderr)
        bench.save("nextrelease/added.json", {name: found[name]})


def materialize(name: str, base: str | None, patch: str | None, scratch: Path) -> Path:
    row = {"project": name, "base": base, "patch": patch}
    tree = bench.materialize(row, scratch, with_patch=patch is not None)
    overlay(tree, name)
    return tree


def label():
    """Each patch on its base with N+1's tests over it: the hidden set's outcomes after."""
    sets = bench.load("nextrelease/added.json")
    out = bench.load("nextrelease/labels.json")
    scratch = OUT / "scratch/label"
    for row in bench.manifest():
        s = sets.get(row["project"])
        if not s or not s["hidden"] or row["id"] in out:
            continue
        root = bench.import_root(row)
        tree = materialize(row["project"], row["base"], row["patch"], scratch)
        files = sorted({i.split("::")[0] for i in s["hidden"]})
        after, secs = heldout.run_pytest(tree, root, args=files)
        errors = [k for k, v in after.items() if "::" not in k and heldout.bad(v)]
        failing = sorted(i for i in s["hidden"] if heldout.bad(after.get(i, "error" if errors else "missing")))
        rec = {"good": not failing, "failing": failing, "seconds": round(secs, 3)}
        out[row["id"]] = rec
        print(f"next label {row['id']} {row['family']:12} {'good' if rec['good'] else 'bad'} "
              f"{len(failing)} of {len(s['hidden'])} failing {secs:.1f}s", file=sys.stderr)
        bench.save("nextrelease/labels.json", {row["id"]: rec})


COLUMNS = {
    "vis": "pr-v3 r, visible tree",
    "vsuite": "visible suite passes",
    "suite": "N's whole suite passes",
    "full": "pr-v3 r, N's tree (all N's tests)",
}


def report():
    sets = bench.load("nextrelease/added.json")
    labels = bench.load("nextrelease/labels.json")
    full = bench.load("scores.json")
    vis = bench.load("heldout/scores.json")
    held = bench.load("heldout/labels.json")
    r_of = lambda found, i: ((found.get(i, {}).get("v3") or {}).get("reward") or {}).get("r")  # noqa: E731
    # pr-v3 on N's own tree only where bench.py score (v3) ran on these patches.
    cols = [k for k in COLUMNS if k != "full" or any(r_of(full, i) is not None for i in labels)]
    lines = ["| project | N → N+1 | tests added (pass on N) | n | good | " + " | ".join(COLUMNS[k] for k in cols) + " |",
             "|---|---|---|---|---|" + "---|" * len(cols)]
    result = {}
    pooled = {k: [] for k in cols}
    for name, version, *_ in projects():
        s = sets.get(name)
        if not s:
            continue
        if not s["hidden"]:
            lines.append(f"| {name} | {version} → {s['next']} | {len(s['added'])} (0) | – | – | "
                         + " | ".join("–" for _ in cols) + " |")
            continue
        rows = [r for r in bench.manifest() if r["project"] == name and r["id"] in labels and r["id"] in held
                and r_of(vis, r["id"]) is not None]
        values = {
            "full": [r_of(full, r["id"]) for r in rows],
            "suite": [float(not held[r["id"]]["failingAfterIds"]) for r in rows],
            "vis": [r_of(vis, r["id"]) for r in rows],
            "vsuite": [float(held[r["id"]]["visible"]["failingAfter"] == 0) for r in rows],
        }
        good = [labels[r["id"]]["good"] for r in rows]
        cells = []
        for k in cols:
            pairs = [(x, g) for x, g in zip(values[k], good) if x is not None]
            pooled[k] += pairs
            if len(pairs) < len(rows) or not pairs:
                cells.append(f"– ({len(pairs)} scored)")
                continue
            auc, lo, hi = stats.auc_ci(pairs, seed=42)
            result.setdefault(name, {})[k] = [auc, lo, hi, len(pairs), sum(good)]
            cells.append("–" if auc != auc else f"{auc:.2f} ({lo:.2f}–{hi:.2f})")
        lines.append(f"| {name} | {version} → {s['next']} | {len(s['added'])} ({len(s['hidden'])}) | {len(rows)} | "
                     f"{sum(good)} | " + " | ".join(cells) + " |")
    cells = []
    for k in cols:
        pairs = pooled[k]
        auc, lo, hi = stats.auc_ci(pairs, seed=42) if pairs else (float("nan"),) * 3
        result.setdefault("pooled", {})[k] = [auc, lo, hi, len(pairs)]
        cells.append("–" if auc != auc else f"{auc:.2f} ({lo:.2f}–{hi:.2f})")
    n = len(pooled["vis"])
    lines.append(f"| pooled | | | {n} | {sum(g for _, g in pooled['vis'])} | " + " | ".join(cells) + " |")
    body = "\n".join(lines) + "\n"
    notes = Path(__file__).with_name("HELDOUT.md")
    text = notes.read_text()
    a, b = "<!-- nextrelease -->", "<!-- /nextrelease -->"
    if a in text:
        text = text.split(a)[0] + a + "\n\n" + body + "\n" + b + text.split(b)[1]
        notes.write_text(text)
    (OUT / "results.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    print(body)


def main():
    bench.run_steps({"fetch": fetch, "added": added, "label": label, "report": report}, OUT)


if __name__ == "__main__":
    main()

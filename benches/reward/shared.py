"""One-shot pr-v3 checks in fresh copies, with and without a daemon shared by equal copies.

An RL rollout scores its patch in a fresh copy of the base at a new path, one process per patch.
For each selected project (LANSER_REWARD_PROJECTS; the manifest of `bench.py generate`), its
first `patches` clean-base patches, each in a new `git clone` of the clean tree at a new path,
one after the other in one period:

- one-shot: `lanser check --patch P --reward pr-v3 --tests impacted --no-daemon` (what
  heldout.py's cost table measures: Pyright starts cold in every copy);
- shared: the same command with `LANSER_SHARE_BASE=1` and the daemon allowed (docs/daemon.md):
  the copy's content names a private copy that one warm daemon serves. The project's first
  shared check (the copy made, the server started, the project analysed) is timed apart;
- the whole test suite on the copy with the patch applied, as a harness runs it to judge a patch
  (`heldout.visible_suite`: one pytest process, every test, no `-x`).

Distinct patches throughout (no memo hit). Prints one JSON line per project and writes
`shared.json` in the reward cache. Run: `python3 benches/reward/bench.py fetch`, `... generate`,
then `LANSER_REWARD_PROJECTS=toolz,cachetools python3 benches/reward/shared.py [patches]`.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402
import heldout  # noqa: E402

FLAGS = ["--timeout", "300", "--reward", "pr-v3", "--tests", "impacted", "--json"]


def fresh_copy(row, scratch: Path) -> Path:
    dest = scratch / f"{row['project']}-{time.time_ns()}"
    bench.sh("git", "clone", "-q", str(bench.tree_of(row)), str(dest))
    return dest


def check(tree: Path, patch: Path, env: dict, no_daemon: bool) -> tuple[float, dict]:
    args = [bench.lanser_bin(), "check", "--patch", str(patch), "--workspace", str(tree), *FLAGS]
    if no_daemon:
        args.append("--no-daemon")
    t = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    took = time.monotonic() - t
    try:
        b = json.loads(p.stdout.splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr[-400:]}")
    return took, b


def project(name: str, patches: int, home: Path) -> dict:
    rows = [r for r in bench.manifest() if r["project"] == name and not r["base"]][: patches + 1]
    diff = lambda r: bench.CACHE / "patches" / r["patch"]  # noqa: E731
    venv = str(Path(bench.pinned_python()).parents[1])
    base_env = dict(os.environ, VIRTUAL_ENV=venv, LANSER_HOME=str(home), LANSER_DAEMON_IDLE="600")
    base_env.pop("LANSER_NO_DAEMON", None)
    shared_env = dict(base_env, LANSER_SHARE_BASE="1")
    scratch = Path(tempfile.mkdtemp(prefix=f"shared-{name}-"))
    rec = {"project": name, "build": "release" if "/release/" in bench.lanser_bin() else "debug",
           "loadStart": os.getloadavg()[0], "rows": []}
    try:
        first = fresh_copy(rows[0], scratch)
        rec["first"] = round(check(first, diff(rows[0]), shared_env, False)[0], 3)
        for row in rows[1:]:
            one = {"id": row["id"], "load": os.getloadavg()[0]}
            a = fresh_copy(row, scratch)
            one["oneshot"], alone = check(a, diff(row), base_env, True)
            b = fresh_copy(row, scratch)
            one["shared"], together = check(b, diff(row), shared_env, False)
            one["same"] = alone.get("bundleId") == together.get("bundleId")
            bench.sh("git", "apply", str(diff(row)), cwd=b)
            one["suite"] = heldout.visible_suite(b, bench.import_root(row))
            rec["rows"].append({k: round(v, 3) if isinstance(v, float) else v for k, v in one.items()})
            print(json.dumps(one), file=sys.stderr, flush=True)
            for t in (a, b):
                shutil.rmtree(t, ignore_errors=True)
    finally:
        for base in (home / "bases").glob("*"):
            subprocess.run([bench.lanser_bin(), "daemon", "stop", "--workspace", str(base)],
                           env=base_env, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    med = lambda k: statistics.median(r[k] for r in rec["rows"])  # noqa: E731
    rec.update({"oneshotMedian": round(med("oneshot"), 3), "sharedMedian": round(med("shared"), 3),
                "suiteMedian": round(med("suite"), 3), "loadEnd": os.getloadavg()[0],
                "same": sum(r["same"] for r in rec["rows"])})
    rec["sharedOverSuite"] = round(rec["sharedMedian"] / rec["suiteMedian"], 3)
    rec["oneshotOverSuite"] = round(rec["oneshotMedian"] / rec["suiteMedian"], 3)
    return rec


def main():
    patches = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    real_home = Path(os.environ.get("LANSER_HOME", Path.home() / ".cache/lanser"))
    home = Path(tempfile.mkdtemp(prefix="lanser-shared-home-"))
    # The managed servers of the real home, linked in; the bases and daemons are this run's own.
    for entry in real_home.iterdir():
        if entry.name not in ("bases", "daemon", "locks"):
            (home / entry.name).symlink_to(entry)
    out = {}
    try:
        for name, *_ in bench.PROJECTS:
            out[name] = project(name, patches, home)
            print(json.dumps(out[name]), flush=True)
            bench.save("shared.json", {name: out[name]})
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

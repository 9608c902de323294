"""The reward validity benchmark (issue 18): does a process reward rank good patches above
bad ones, where "good" means the project's own tests pass?

    python3 benches/reward/bench.py all        # fetch, generate, label, score, report
    python3 benches/reward/bench.py generate   # ... or one step at a time
    python3 benches/reward/bench.py paired     # per-patch cost: warm checks, suite and CLI in one period

Five pinned PyPI sdists (pure Python, tests in the sdist) are fetched with pip into
target/thirdparty/reward/. `generate` writes, deterministically (same inputs, same bytes),
60 patches per project in five kinds: breakages Pyright can see, breakages it cannot,
exact fixes and partial fixes (on a broken base tree), and behaviour-preserving edits.
`label` runs each project's test suite on base + patch (good = it passes). `score` asks one
warm lanser session per base tree for `check --patch` under pr-v2 (pr-v1 and an error-count
baseline are computed from the same recorded diagnostics), and again with the test term
(`--tests impacted`). `report` prints AUC with a bootstrap interval per variant and family,
and the cost per patch.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import mutate  # noqa: E402
import stats  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("LANSER_REWARD_CACHE", REPO / "target/thirdparty/reward"))

# name, version, sha256 of the sdist, package dirs (library code), import root
PROJECTS = [
    ("more-itertools", "10.5.0", "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6",
     ["more_itertools"], "."),
    ("toolz", "1.0.0", "2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02",
     ["toolz"], "."),
    ("cachetools", "5.5.0", "2cc24fb4cbe39633fb7badd9db9ca6295d766d9c2995f245725a46715d050f2a",
     ["src/cachetools"], "src"),
    ("idna", "3.10", "12f65c9b470abda6dc35cf8e63cc574b1c52b11df2c86030af0ac09b01b13ea9",
     ["idna"], "."),
    ("boltons", "24.1.0", "4a49b7d57ee055b83a458c8682a2a6f199d263a8aa517098bda9bab813554b87",
     ["boltons"], "."),
    # Held out (issue 32): not used while pr-v3 was tuned; pure-Python sdists with their tests.
    ("pathspec", "0.12.1", "a482d51503a1ab33b1c67a6c3813a26953dbdc71c31dacaef9a838c4e29f5712",
     ["pathspec"], "."),
    ("sqlparse", "0.5.1", "bb6b4df465655ef332548e24f08e205afc81b9ab86cb1c45657a7ff173a3a00e",
     ["sqlparse"], "."),
]
HELD_OUT = {"pathspec", "sqlparse"}

# LANSER_REWARD_PROJECTS=idna,toolz runs on those projects only (a partial run).
if os.environ.get("LANSER_REWARD_PROJECTS"):
    _only = os.environ["LANSER_REWARD_PROJECTS"].split(",")
    PROJECTS = [p for p in PROJECTS if p[0] in _only]

# Per project: how many patches of each family (48 in all, 240 over the five projects).
PLAN = {"visible": 12, "invisible": 16, "exact_fix": 6, "partial_fix": 6, "neutral": 8}


def pinned_python() -> str:
    """The interpreter of tests/requirements.txt's pinned environment (pytest, coverage.py):
    it runs each project's suite for the labels, and lanser's sessions get it as $VIRTUAL_ENV,
    so pr-v3's collection and coverage run under the same pinned versions."""
    if os.environ.get("LANSER_TEST_PYTHON"):
        return os.environ["LANSER_TEST_PYTHON"]
    out = subprocess.run([sys.executable, str(REPO / "tests/python_env.py")], check=True,
                         capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


# --- fetch --------------------------------------------------------------------------------

def clean_tree(name: str, version: str) -> Path:
    return CACHE / "trees" / f"{name}-{version}"


def fetch():
    for name, version, sha, _, _ in PROJECTS:
        sdists = CACHE / "sdists"
        sdists.mkdir(parents=True, exist_ok=True)
        archive = next(sdists.glob(f"{name.replace('-', '?')}-{version}.tar.gz"), None) or \
            next(sdists.glob(f"{name.replace('-', '_')}-{version}.tar.gz"), None)
        if archive is None:
            sh(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               f"{name}=={version}", "-d", str(sdists))
            archive = next(p for p in sdists.glob("*.tar.gz") if p.name.lower().replace("_", "-").startswith(f"{name}-{version}"))
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != sha:
            raise SystemExit(f"{archive.name}: sha256 {digest}, pinned {sha}")
        tree = clean_tree(name, version)
        if (tree / ".git").exists():
            continue
        shutil.rmtree(tree, ignore_errors=True)
        tree.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as t:
            top = t.getnames()[0].split("/")[0]
            t.extractall(tree.parent, filter="data")
        (tree.parent / top).rename(tree)
        for junk in tree.glob("*.egg-info"):
            shutil.rmtree(junk)
        # A git repository: HEAD is where an episode starts (pr-v2's remaining term).
        for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "sdist"]):
            sh("git", *args, cwd=tree)
        print(f"fetched {name} {version}", file=sys.stderr)


# --- generate -----------------------------------------------------------------------------

def library_files(tree: Path, pkgs: list[str]) -> list[str]:
    out = []
    for pkg in pkgs:
        for p in sorted((tree / pkg).rglob("*.py")):
            rel = p.relative_to(tree).as_posix()
            if "/tests/" in f"/{rel}" or p.name.startswith("test_"):
                continue
            text = p.read_text()
            if text.endswith("\n") and mutate.compiles(text):
                out.append(rel)
    return out


def candidates(tree: Path, files: list[str], ops: dict) -> list[tuple]:
    """Every (family op, file, edit) in a stable order."""
    out = []
    for rel in files:
        text = (tree / rel).read_text()
        for op, fn in sorted(ops.items()):
            for e in fn(text):
                new = mutate.apply(text, e)
                if new != text and mutate.compiles(new):
                    out.append((op, rel, e))
    return out


def pick(rng: random.Random, cands: list, n: int, by_op: bool = True) -> list:
    """n candidates, spread over the operators round-robin, each operator's drawn by rng."""
    groups = {}
    for c in cands:
        groups.setdefault(c[0], []).append(c)
    for g in groups.values():
        rng.shuffle(g)
    out, ops = [], sorted(groups)
    while len(out) < n and any(groups[o] for o in ops):
        for o in ops:
            if groups[o] and len(out) < n:
                out.append(groups[o].pop())
    return out


def generate():
    out_dir = CACHE / "patches"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    manifest = []
    for name, version, _, pkgs, _ in PROJECTS:
        manifest += generate_project(name, clean_tree(name, version), pkgs, out_dir)
    lines = "".join(json.dumps(m, sort_keys=True) + "\n" for m in manifest)
    (out_dir / "manifest.jsonl").write_text(lines)
    print(f"{len(manifest)} patches, manifest sha256 {hashlib.sha256(lines.encode()).hexdigest()[:16]}")


def generate_project(name: str, tree: Path, pkgs: list[str], out_dir: Path) -> list[dict]:
    rng = random.Random(f"lanser-reward-v1:{name}")
    files = library_files(tree, pkgs)
    vis = candidates(tree, files, mutate.VISIBLE)
    inv = candidates(tree, files, mutate.INVISIBLE)
    neu = candidates(tree, files, mutate.NEUTRAL)
    rows = []

    def emit(family, op, rel, base_text, new_text, base_patch=None):
        pid = f"{name}/{len(rows):03d}"
        d = mutate.diff(rel, base_text, new_text)
        path = out_dir / f"{pid}.diff"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(d)
        base_file = None
        if base_patch is not None:
            base_file = out_dir / f"{pid}.base.diff"
            base_file.write_text(base_patch)
        rows.append({"id": pid, "project": name, "family": family, "op": op, "file": rel,
                     "patch": path.relative_to(out_dir).as_posix(),
                     "base": base_file.relative_to(out_dir).as_posix() if base_file else None})

    def text(rel):
        return (tree / rel).read_text()

    for op, rel, e in pick(rng, vis, PLAN["visible"]):
        emit("visible", op, rel, text(rel), mutate.apply(text(rel), e))
    for op, rel, e in pick(rng, inv, PLAN["invisible"]):
        emit("invisible", op, rel, text(rel), mutate.apply(text(rel), e))
    # Exact fixes: a breakage (half visible, half not) is the base; the patch reverts it.
    fixes = pick(rng, vis, PLAN["exact_fix"] // 2) + pick(rng, inv, PLAN["exact_fix"] - PLAN["exact_fix"] // 2)
    for op, rel, e in fixes:
        broken = mutate.apply(text(rel), e)
        emit("exact_fix", op, rel, broken, text(rel), base_patch=mutate.diff(rel, text(rel), broken))
    # Partial fixes: two breakages in one file (a visible one and any other, on other lines);
    # the patch reverts one of them, alternately the visible and the other.
    pairs = []
    for a in pick(rng, vis, 3 * PLAN["partial_fix"]):
        others = [b for b in vis + inv if b[1] == a[1] and not (mutate.lines_of(a[2]) & mutate.lines_of(b[2]))
                  and abs(min(mutate.lines_of(a[2])) - min(mutate.lines_of(b[2]))) > 3]
        if others:
            pairs.append((a, others[rng.randrange(len(others))]))
        if len(pairs) == PLAN["partial_fix"]:
            break
    for k, (a, b) in enumerate(pairs):
        rel, clean = a[1], text(a[1])
        # Apply the later-line edit first so the earlier one's line index still holds.
        first, second = sorted([a, b], key=lambda c: -min(mutate.lines_of(c[2])))
        both = mutate.apply(mutate.apply(clean, first[2]), second[2])
        if not mutate.compiles(both):
            continue
        keep = b if k % 2 == 0 else a  # the breakage left in place
        one = mutate.apply(clean, keep[2])
        emit("partial_fix", f"{a[0]}+{b[0]}", rel, both, one, base_patch=mutate.diff(rel, clean, both))
    for op, rel, e in pick(rng, neu, PLAN["neutral"]):
        emit("neutral", op, rel, text(rel), mutate.apply(text(rel), e))
    return rows


def sample_rank(i: int) -> int:
    """A patch's quarter by its index i within its project and family: 0, 3, 1, 2 for
    i mod 4 = 0, 3, 1, 2, so the first quarters spread over a family's order (which
    alternates the operators, and in the fix families a visible and an invisible breakage)."""
    return {0: 0, 3: 1, 1: 2, 2: 3}[i % 4]


def manifest() -> list[dict]:
    """The patches of the selected projects (LANSER_REWARD_PROJECTS), and with
    LANSER_REWARD_SAMPLE=k (1 to 4) the first k quarters of each family only (a partial run
    on a busy machine; k = 4 is every patch)."""
    names = {p[0] for p in PROJECTS}
    quarters = int(os.environ.get("LANSER_REWARD_SAMPLE", "4"))
    rows = [json.loads(l) for l in (CACHE / "patches/manifest.jsonl").read_text().splitlines()]
    seen, out = {}, []
    for r in rows:
        i = seen.get((r["project"], r["family"]), 0)
        seen[(r["project"], r["family"])] = i + 1
        if r["project"] in names and sample_rank(i) < quarters:
            out.append(r)
    return out


# --- label --------------------------------------------------------------------------------

def tree_of(row) -> Path:
    name = row["project"]
    version = next(p[1] for p in PROJECTS if p[0] == name)
    return clean_tree(name, version)


def materialize(row, scratch: Path, with_patch: bool) -> Path:
    """The project's clean tree (a git clone, HEAD the sdist) under `scratch`, reset, with the
    base patch and the patch if asked applied to the worktree (uncommitted)."""
    dest = scratch / row["project"]
    if not (dest / ".git").exists():
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        sh("git", "clone", "-q", str(tree_of(row)), str(dest))
    sh("git", "checkout", "-q", "--", ".", cwd=dest)
    sh("git", "clean", "-qfdx", cwd=dest)
    for key in ("base", "patch"):
        if row[key] and (key == "base" or with_patch):
            sh("git", "apply", str(CACHE / "patches" / row[key]), cwd=dest)
    return dest


def import_root(row) -> str:
    return next(p[4] for p in PROJECTS if p[0] == row["project"])


def run_tests(tree: Path, root: str, timeout: float = 300) -> tuple[bool, float]:
    env = dict(os.environ, PYTHONPATH=str(tree / root), PYTHONDONTWRITEBYTECODE="1")
    t = time.monotonic()
    try:
        p = subprocess.run([pinned_python(), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"],
                           cwd=tree, env=env, capture_output=True, timeout=timeout)
        ok = p.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    return ok, time.monotonic() - t


def load(name: str) -> dict:
    path = CACHE / name
    return json.loads(path.read_text()) if path.exists() else {}


def save(name: str, data: dict):
    """Writes `data` over the file's records, under a lock: two runs on different projects
    may add to the same file at once, each keeping the other's records."""
    import fcntl

    with open(CACHE / (name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = load(name)
        for key, rec in data.items():
            merged[key] = dict(merged.get(key, {}), **rec)
        data.update(merged)
        tmp = CACHE / (name + ".tmp")
        tmp.write_text(json.dumps(merged, indent=1, sort_keys=True))
        tmp.replace(CACHE / name)


def label():
    """Labels every patch of the selected projects not labelled yet (labels.json keeps the
    others: a run per project, or an interrupted one, adds to it)."""
    out = load("labels.json")
    scratch = CACHE / "scratch/label"
    for row in manifest():
        if row["id"] in out:
            continue
        tree = materialize(row, scratch, with_patch=True)
        ok, secs = run_tests(tree, import_root(row))
        out[row["id"]] = {"good": ok, "testSeconds": round(secs, 3)}
        print(f"label {row['id']} {row['family']:12} {'good' if ok else 'bad'} {secs:.1f}s", file=sys.stderr)
        save("labels.json", out)


# --- score --------------------------------------------------------------------------------

def lanser_bin() -> str:
    return os.environ.get("LANSER_BIN", str(REPO / "target/release/lanser"))


# pr-v2 without tests (and pr-v1 and the error count) come from the v2tests bundles: the same
# inputs, r less its test component (`v2_of`).
VARIANTS = (("v2tests", ["--reward", "pr-v2", "--tests", "impacted"]),
            ("v3", ["--reward", "pr-v3", "--tests", "impacted"]))


def score():
    """Scores every patch of the selected projects under each variant not scored yet
    (scores.json keeps the others), one warm session per base tree and variant."""
    sys.path.insert(0, str(REPO / "python"))
    from lanser import Lanser  # the SDK: one warm session per base tree

    groups = {}
    for row in manifest():
        key = (row["project"], row["base"])
        groups.setdefault(key, []).append(row)
    # LANSER_REWARD_SCORES names another file (a rerun kept apart; the report reads
    # scores*.json, later names over earlier ones); each variant its own scratch tree, so two
    # runs in parallel never share one.
    name = os.environ.get("LANSER_REWARD_SCORES", "scores.json")
    out = load(name)
    env = {"VIRTUAL_ENV": str(Path(pinned_python()).parents[1])}
    only = os.environ.get("LANSER_REWARD_VARIANTS")
    scratch = CACHE / (f"scratch/score-{only}" if only else "scratch/score")
    for (project, base), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        tree = None
        for variant, flags in VARIANTS:
            if os.environ.get("LANSER_REWARD_VARIANTS", variant) != variant:
                continue  # LANSER_REWARD_VARIANTS=v3: only that variant (runs in parallel)
            todo = [r for r in members if variant not in out.get(r["id"], {})]
            if not todo:
                continue
            tree = tree or materialize(members[0], scratch, with_patch=False)
            with Lanser(tree, lanser_bin=lanser_bin(), daemon=False, env=env,
                        args=["--timeout", "300", *flags]) as s:
                t0 = time.monotonic()
                s.capabilities()  # the server is started and the project loaded here
                start = time.monotonic() - t0
                for row in todo:
                    diff = (CACHE / "patches" / row["patch"]).read_text()
                    t = time.monotonic()
                    b = s.check_patch(diff, check=False)
                    secs = time.monotonic() - t
                    rec = out.setdefault(row["id"], {})
                    rec[variant] = {"ok": b.ok, "reward": b.process_reward, "seconds": round(secs, 3),
                                    "error": b.error}
                    rec.setdefault("sessionStart", round(start, 3))
                    print(f"score {row['id']} {variant} r={b.process_reward and b.process_reward['r']} "
                          f"{secs:.2f}s", file=sys.stderr)
                    save(name, out)


PYRIGHT = "1.1.407"


def pyright_cli() -> list[str]:
    home = Path(os.environ.get("LANSER_HOME", Path.home() / ".cache/lanser"))
    return ["node", str(home / f"pyright/{PYRIGHT}/node_modules/pyright/index.js"), "--outputjson"]


def cli_errors(tree: Path) -> tuple[int, float]:
    """The pinned pyright CLI over a tree: its error count and wall time. It runs on a copy
    holding an empty pyrightconfig.json (Pyright's defaults, as lanser's server gets them):
    without a config file in the tree the CLI walks up to the nearest pyproject.toml — this
    repository's — and checks everything under it."""
    copy = tree.with_name(tree.name + "-cli")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    (copy / "pyrightconfig.json").write_text("{}\n")
    t = time.monotonic()
    p = subprocess.run(pyright_cli(), cwd=copy, capture_output=True, text=True)
    secs = time.monotonic() - t
    shutil.rmtree(copy, ignore_errors=True)
    return json.loads(p.stdout)["summary"]["errorCount"], secs


def cli_agreement(per_project: int = 5) -> dict:
    """On a fixed sample, the pyright CLI's error-count delta (base → base + patch) next to
    the one lanser measured in memory (same server version)."""
    scores = json.loads((CACHE / "scores.json").read_text())
    rows = [r for r in manifest() if r["id"] in scores and (scores[r["id"]].get("v2tests") or {}).get("ok")]
    sample = []
    for name, *_ in PROJECTS:
        mine = [r for r in rows if r["project"] == name]
        sample += mine[:: max(1, len(mine) // per_project)][:per_project]
    same, out = 0, []
    scratch = CACHE / "scratch/cli"
    for r in sample:
        before, _ = cli_errors(materialize(r, scratch, with_patch=False))
        after, _ = cli_errors(materialize(r, scratch, with_patch=True))
        mine = errors_delta(v2_of(scores[r["id"]])["reward"])
        same += (before - after) == mine
        out.append({"id": r["id"], "cli": before - after, "lanser": mine})
    return {"sample": len(sample), "same": same, "rows": out}


def warm_hundred(project: str = "toolz") -> dict:
    """100 `check --patch` calls in one warm session on one project (its clean-base patches,
    cycled) against the pyright CLI over the same project (median of 3, times 100)."""
    sys.path.insert(0, str(REPO / "python"))
    from lanser import Lanser

    rows = [r for r in manifest() if r["project"] == project and not r["base"]]
    tree = materialize(rows[0], CACHE / "scratch/hundred", with_patch=False)
    cli = statistics.median(cli_errors(tree)[1] for _ in range(3))
    out = {"project": project, "cli100Seconds": round(100 * cli, 2)}
    for reward in ("pr-v1", "pr-v2"):
        with Lanser(tree, lanser_bin=lanser_bin(), daemon=False, args=["--reward", reward]) as s:
            s.capabilities()
            t = time.monotonic()
            for k in range(100):
                s.check_patch((CACHE / "patches" / rows[k % len(rows)]["patch"]).read_text())
            warm = time.monotonic() - t
        out[reward] = {"warm100Seconds": round(warm, 2), "ratio": round(warm / (100 * cli), 4)}
    return out


def paired_cost(project: str, patches: int = 4, reps: int = 3) -> dict:
    """The per-patch cost in one period: one warm session's pr-v3 checks (`--tests impacted`)
    of the project's first clean-base patches, round by round, each round followed by a
    whole-suite run and a pyright CLI run over the clean tree; the ratio of the medians. The
    session's first check (Pyright's first analysis, pytest's collection, the coverage run) is
    timed apart."""
    sys.path.insert(0, str(REPO / "python"))
    from lanser import Lanser

    rows = [r for r in manifest() if r["project"] == project and not r["base"]][:patches]
    tree = materialize(rows[0], CACHE / "scratch/paired", with_patch=False)
    env = {"VIRTUAL_ENV": str(Path(pinned_python()).parents[1])}
    flags = ["--timeout", "300", "--reward", "pr-v3", "--tests", "impacted"]
    diff = lambda r: (CACHE / "patches" / r["patch"]).read_text()  # noqa: E731
    checks, suites, clis = [], [], []
    with Lanser(tree, lanser_bin=lanser_bin(), daemon=False, env=env, args=flags) as s:
        t = time.monotonic()
        s.capabilities()
        s.check_patch(diff(rows[0]), check=False)
        first = time.monotonic() - t
        for _ in range(reps):
            for r in rows:
                t = time.monotonic()
                s.check_patch(diff(r), check=False)
                checks.append(time.monotonic() - t)
            suites.append(run_tests(tree, import_root(rows[0]))[1])
            clis.append(cli_errors(tree)[1])
    med = statistics.median
    build = "release" if "/release/" in lanser_bin() else "debug" if "/debug/" in lanser_bin() else "?"
    out = {"project": project, "build": build, "checks": len(checks), "first": round(first, 2),
           "check": round(med(checks), 3), "suite": round(med(suites), 3),
           "cli": round(med(clis), 3)}
    out["ratio"] = round(out["check"] / (out["suite"] + out["cli"]), 3)
    print(json.dumps(out), file=sys.stderr, flush=True)
    return out


def paired_all():
    """`paired_cost` for every selected project, kept in the cache for the report."""
    found = load("paired.json")
    for name, *_ in PROJECTS:
        found[name] = paired_cost(name)
        save("paired.json", {name: found[name]})
    print(json.dumps(found, indent=1, sort_keys=True))


def paired_table(lines, result):
    """The paired measurement's table (`bench.py paired`), when one was taken."""
    found = load("paired.json")
    if not found:
        return
    lines += ["", "## Cost per patch, paired in one period", "",
              paired_cost.__doc__.replace("\n    ", " ") + " `python3 benches/reward/bench.py paired`; "
              "lanser's build: " + ", ".join(sorted({f.get("build", "?") for f in found.values()})) + ".", "",
              "| project | warm pr-v3 check (median) | whole suite | pyright CLI | ratio | first check |",
              "|---|---|---|---|---|---|"]
    ratios = []
    for name, *_ in PROJECTS:
        f = found.get(name)
        if not f:
            continue
        ratios.append(f["ratio"])
        lines.append(f"| {name} | {f['check']:.2f} s ({f['checks']}) | {f['suite']:.2f} s | "
                     f"{f['cli']:.2f} s | {f['ratio']:.2f} | {f['first']:.1f} s |")
    result["paired"] = found
    lines += ["", f"Median ratio over projects: {statistics.median(ratios):.2f} (goal ≤ 0.2)."]


# --- report -------------------------------------------------------------------------------

def part(name: str, compute):
    """A slow part of the report (pyright CLI runs), kept in the cache once measured so an
    interrupted report resumes; delete report_parts.json to measure again."""
    path = CACHE / "report_parts.json"
    parts = json.loads(path.read_text()) if path.exists() else {}
    if name not in parts:
        parts[name] = compute()
        path.write_text(json.dumps(parts, indent=1, sort_keys=True))
    return parts[name]


def v1_from_v2(pr: dict) -> float:
    """pr-v1 from the same measurement: D = errors + warnings of every kind (pr-v1 of
    docs/reward.md, default weights)."""
    i = pr["inputs"]
    d = lambda t: t["runtime"] + t["error"] + t["warning"]  # noqa: E731
    return round(0.5 * (d(i["before"]) - d(i["after"])) + 0.4 * i["safety"] - 0.1 * (1 - i["confidence"]), 9)


def v2_of(rec: dict) -> dict:
    """pr-v2 without the test term, from a `--tests impacted` pr-v2 bundle: its inputs with no
    tests, r less the tests component (every other term reads the same inputs)."""
    pr = rec["v2tests"]["reward"]
    r = round(pr["r"] - pr["components"]["tests"], 9)
    return {"ok": rec["v2tests"]["ok"], "reward": dict(pr, r=r, inputs=dict(pr["inputs"], tests=None))}


def errors_delta(pr: dict) -> float:
    i = pr["inputs"]
    e = lambda t: t["runtime"] + t["error"]  # noqa: E731
    return e(i["before"]) - e(i["after"])


VARIANT_NAMES = {
    "pyright error count (Δ errors)": lambda s: errors_delta(v2_of(s)["reward"]),
    "pr-v1": lambda s: v1_from_v2(v2_of(s)["reward"]),
    "pr-v2 (no tests)": lambda s: v2_of(s)["reward"]["r"],
    "pr-v2 + impacted tests": lambda s: s["v2tests"]["reward"]["r"],
    "pr-v3 + selected tests": lambda s: s["v3"]["reward"]["r"],
}


def usable_rows(labels: dict, scores: dict) -> list[dict]:
    """The patches labelled and scored under every variant."""
    return [r for r in manifest() if r["id"] in labels and r["id"] in scores and all(
        (scores[r["id"]].get(v) or {}).get("ok") for v in ("v2tests", "v3"))]


def auc_table(rows, labels, scores, lines, result):
    lines += ["| reward | AUC | 95 % CI |", "|---|---|---|"]
    for name, f in VARIANT_NAMES.items():
        xs = [(f(scores[r["id"]]), labels[r["id"]]["good"]) for r in rows]
        auc, lo, hi = stats.auc_ci(xs, seed=18)
        result["variants"][name] = {"auc": auc, "ci": [lo, hi]}
        lines.append(f"| {name} | {auc:.3f} | {lo:.3f}–{hi:.3f} |")


def project_table(rows, labels, scores, lines, result):
    short = ["errors", "pr-v1", "pr-v2", "pr-v2+tests", "pr-v3"]
    lines += ["| project | n | good | " + " | ".join(short) + " |", "|---|---|---|" + "---|" * len(short)]
    groups = [(f"{name}{' (held out)' if name in HELD_OUT else ''}", [r for r in rows if r["project"] == name])
              for name, *_ in PROJECTS]
    groups += [("tuning corpus (5)", [r for r in rows if r["project"] not in HELD_OUT]),
               ("held out (2)", [r for r in rows if r["project"] in HELD_OUT])]
    for title, members in groups:
        if not members:
            continue
        good = sum(labels[r["id"]]["good"] for r in members)
        cells = []
        for name, f in VARIANT_NAMES.items():
            auc, lo, hi = stats.auc_ci([(f(scores[r["id"]]), labels[r["id"]]["good"]) for r in members], seed=18)
            result["projects"].setdefault(title, {})[name] = {"auc": auc, "ci": [lo, hi]}
            cells.append("–" if auc != auc else f"{auc:.2f} ({lo:.2f}–{hi:.2f})")
        lines.append(f"| {title} | {len(members)} | {good} | " + " | ".join(cells) + " |")


def family_tables(rows, labels, scores, lines, result):
    names = list(VARIANT_NAMES)
    lines += ["| family | n | good | " + " | ".join(names) + " |", "|---|---|---|" + "---|" * len(names)]
    for fam in PLAN:
        members = [r for r in rows if r["family"] == fam]
        if not members:
            continue
        good = sum(labels[r["id"]]["good"] for r in members)
        means = [statistics.mean(f(scores[r["id"]]) for r in members) for f in VARIANT_NAMES.values()]
        result["families"][fam] = {"n": len(members), "good": good, "mean": means}
        lines.append(f"| {fam} | {len(members)} | {good} | " + " | ".join(f"{m:+.2f}" for m in means) + " |")
    lines += ["", "Sign table: patches whose r is above / at / below a neutral step's r (0.4, safety "
              "only; 0 for the error count), per family and label.", "",
              "| family | label | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for fam in PLAN:
        for good in (True, False):
            members = [r for r in rows if r["family"] == fam and labels[r["id"]]["good"] == good]
            if not members:
                continue
            cells = []
            for name, f in VARIANT_NAMES.items():
                neutral = 0.0 if name.startswith("pyright") else 0.4
                vals = [f(scores[r["id"]]) for r in members]
                up = sum(v > neutral + 1e-9 for v in vals)
                down = sum(v < neutral - 1e-9 for v in vals)
                cells.append(f"{up}/{len(vals) - up - down}/{down}")
            lines.append(f"| {fam} | {'good' if good else 'bad'} ({len(members)}) | " + " | ".join(cells) + " |")


def cost(rows, labels, scores, lines, result):
    """Per project, from the score step's own timings: a warm pr-v3 check (the clean-base
    session's checks after its first, which paid pytest's collection and the coverage run),
    that first check less the warm median (collection + coverage, paid once per workspace
    state), the whole suite (the label step's runs of patches that passed: every test ran) and
    one pyright CLI run over the clean tree, timed in the same period."""
    lines += ["| project | warm pr-v3 check | warm pr-v2 + impacted | first pr-v3 check "
              "(+ collection, coverage) | whole suite | pyright CLI | pr-v3 / (suite + CLI) |",
              "|---|---|---|---|---|---|---|"]
    ratios = []
    for name, *_ in PROJECTS:
        clean = [r for r in rows if r["project"] == name and not r["base"]]
        if len(clean) < 2:
            continue
        first = min(clean, key=lambda r: r["id"])
        warm = [r for r in clean if r is not first]
        med = lambda v: statistics.median(scores[r["id"]][v]["seconds"] for r in warm)  # noqa: E731
        v3, v2t = med("v3"), med("v2tests")
        once = scores[first["id"]]["v3"]["seconds"] - v3
        suite = statistics.median(labels[r["id"]]["testSeconds"] for r in rows
                                  if r["project"] == name and labels[r["id"]]["good"])
        cli = part(f"cli:{name}", lambda: cli_errors(materialize(first, CACHE / "scratch/cli", False))[1])
        ratio = v3 / (suite + cli)
        ratios.append(ratio)
        result["cost"][name] = {"warmV3": v3, "warmV2Tests": v2t, "firstV3Extra": once,
                                "suite": suite, "cli": cli, "ratio": ratio}
        lines.append(f"| {name} | {v3:.1f} s | {v2t:.1f} s | "
                     f"+{once:.1f} s | {suite:.1f} s | {cli:.1f} s | {ratio:.2f} |")
    if ratios:
        lines += ["", f"Median ratio over projects: {statistics.median(ratios):.2f} (goal ≤ 0.2)."]


def all_scores() -> dict:
    """scores.json, with the records of any scores-*.json (reruns) over it."""
    scores = load("scores.json")
    for extra in sorted(CACHE.glob("scores-*.json")):
        for key, rec in json.loads(extra.read_text()).items():
            scores[key] = dict(scores.get(key, {}), **rec)
    return scores


NOTES = """## Notes

- **Held out**: pathspec 0.12.1 and sqlparse 0.5.1 (pure-Python sdists with their tests, suites of
  a few seconds) were not used while pr-v3 was designed and weighed; its formula, weights and
  selection rule are as they were tuned on the five. Their first pr-v3 scores showed two faults
  of lanser's test runner (not of the formula), fixed before the figures above were taken, so
  they are held out from the tuning but not unseen: pathspec's symlink tests need an earlier
  method of their class (a neutral rename scored −5.6 on seven tests the suite passes): the
  selected tests' whole files run now; sqlparse's tests read tests/files/*.sql, absent from a
  sources-only overlay (failing before and after every change): the overlay holds the data files.
- **Sample**: `LANSER_REWARD_SAMPLE=1`, the first quarter of each family per project (13 of 48
  patches: 3 visible, 4 invisible, 2 exact fixes, 2 partial fixes, 2 neutral; 91 in all), for
  time; the intervals are wide accordingly. `LANSER_REWARD_SAMPLE=4`
  completes the run (label and score resume).
- **pr-v2 without tests, pr-v1 and the error count** are recomputed from the `--tests impacted`
  pr-v2 bundles (r less its tests component; the same recorded inputs), not a third session.
- **Machine**: 2 cores shared with other jobs (load 2 to 3 during the score step of this run) and a
  debug build of lanser: every time is wall time under that load, the checks, the suites and the
  CLI runs measured in the same hours; read the ratios, not the seconds.
- **A base tree that does not import** (a fix family's base that drops an import): its test
  modules fail pytest's collection, so neither the collection nor the coverage of the base
  knows their tests. Since issue 32's collection after the change (`selection.afterChange`,
  pr-v3's `+collect`), a patch over such a base is collected again with the change applied: the
  tests of the modules it lets import are selected (each an error before), and each module
  still failing to import through a changed file counts as one erroring test. The partial fixes
  that restore the import (cachetools/034, idna/034, pathspec/034) meet the failures they
  leave, and all 12 bad partial fixes score below a neutral step (the run before: 3 of 12 above
  it). A changed line no test executed (module-level code runs at import, outside every test's
  context; an inserted line is new) selects the tests that executed any line of its innermost
  enclosing definition some test executed, else of its file (`selection.widened`, pr-v3's
  `+definition`/`+file`).
- **Cost, paired** (the table above, a release build): pytest is forked from a warm
  interpreter that has imported pytest and the installed plugins' modules, and a failing
  test's traceback is not formatted; the paired period before those two (ee12fbc) measured
  cachetools 1.48 s, idna 1.61 s, more-itertools 4.60 s, sqlparse 5.10 s per warm check,
  median 0.26x. Above 0.2x what is left is Pyright's re-check of the changed file's importers
  (toolz's `_signatures.py`, 5.5 s per pull after a change to `functoolz.py`; pathspec's
  `util.py` importers) and, on sqlparse, selections of nearly the whole suite. The period was
  noisy: boltons and pathspec measured 1.45 s and 1.42 s in the one before, and the earlier
  binary 2.4 s on pathspec in this one. The score step's timings (the table before it) are
  those of the scoring run, a debug build, before these changes. In one later period, the two
  release builds alternating per project (603b91b, daab0c6): cachetools 1.76 -> 0.68 s, idna
  1.86 -> 0.82 s, sqlparse 12.03 -> 2.96 s, more-itertools 4.39 -> 3.46 s; boltons, pathspec
  and toolz within the load's noise; median ratio 0.24 -> 0.18 (docs/reward.md has the table).
- **toolz, pathspec, sqlparse measured again** (2026-11-29, release 70b710b, nothing else
  running): the importer re-check narrowed by name (issue 43) and keyword-argument keywords no
  longer counted as uses, so a change to `functoolz.py` skips `_signatures.py` (which names
  `compose` only in `dict(compose=[…])`). Alternating with the build before it on toolz's
  four patches, 3 rounds: median 4.82 -> 2.70 s, the same r 12 of 12. sqlparse stays above
  0.2x: its selected tests (375 of 463) take 1.5-2.6 s after Pyright's 0.5-0.9 s.
- **pr-v3's selected tests split across cores** (2026-11-29, release 1aca8e0): a run of tests
  of several files goes to two pytest processes side by side (whole files each, the second at
  niceness 10) where the project's suite was found to give the same outcomes that way (checked
  once per workspace after the coverage run). Alternating with the same build in one process,
  12 distinct sqlparse patches: median 3.39 -> 2.72 s, the same processReward 12 of 12; toolz
  (Pyright-bound) pays a little: 12 distinct patches 3.88 -> 4.18 s (+7 to +19 % in two earlier
  runs). The paired rows above for toolz, pathspec and sqlparse are this build's (sqlparse 0.23
  -> 0.19).
"""


def report():
    labels = load("labels.json")
    scores = all_scores()
    rows = usable_rows(labels, scores)
    result = {"scored": len(rows), "variants": {}, "projects": {}, "families": {}, "cost": {}}
    quarters = int(os.environ.get("LANSER_REWARD_SAMPLE", "4"))
    lines = [f"{len(rows)} patches labelled and scored ({quarters} of 4 quarters of each family asked, "
             f"LANSER_REWARD_SAMPLE); {sum(labels[r['id']]['good'] for r in rows)} good by their "
             f"project's tests. Held out from tuning pr-v3: {', '.join(sorted(HELD_OUT))}. "
             "Project's interpreter: tests/requirements.txt's pinned environment (pytest, "
             "coverage.py) for the labels and for lanser's sessions.", "", "## AUC, all projects", ""]
    auc_table(rows, labels, scores, lines, result)
    lines += ["", "## AUC per project (95 % bootstrap CI)", ""]
    project_table(rows, labels, scores, lines, result)
    lines += ["", "## Per family", "", "Good/bad by the tests, and the mean r per variant.", ""]
    family_tables(rows, labels, scores, lines, result)
    lines += ["", "## Cost per patch", "", cost.__doc__.split("\n\n")[0].replace("\n    ", " ") + "", ""]
    cost(rows, labels, scores, lines, result)
    paired_table(lines, result)
    lines += ["", NOTES.rstrip()]
    (REPO / "benches/reward/RESULTS.md").write_text("# Reward validity: results\n\n" + "\n".join(lines) + "\n")
    (CACHE / "results.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    print("\n".join(lines))


def run_steps(steps: dict, out: Path | None = None):
    """Run the step named on the command line, or every step in order (`all`, the default),
    making `out` first."""
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for name, f in steps.items():
        if what in (name, "all"):
            f()


def main():
    steps = {"fetch": fetch, "generate": generate, "label": label, "score": score, "report": report}
    # Not in `all` (slow, CLI-bound; the first full run's figures are in git history, f7b2a5b):
    # the CLI's error-count delta on a sample, and 100 warm checks against 100 CLI runs.
    extra = {"agreement": lambda: print(json.dumps(cli_agreement(per_project=3))),
             "hundred": lambda: print(json.dumps({n: warm_hundred(n) for n, *_ in PROJECTS})),
             "paired": paired_all}
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in extra:
        return extra[what]()
    run_steps(steps)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench_monorepo.py - freshness at scale (issue 13): does a warm answer cost the same on a
monorepo as on a small package?

Builds, under target/thirdparty/:
  - requests-2.32.3 (the small project, benches/fetch-thirdparty.sh),
  - django-5.1.4 (the unmodified sdist from PyPI),
  - monorepo/: a copy of Django plus synthetic noise beside it: 3,000 more Python modules
    (gen/svcNN/modNNNN.py, each importing its neighbour) and 20,000 other files (assets,
    docs, a node_modules tree),
then prints, in one run (medians of --runs whole-process runs):
  - warm `lanser def` / `lanser refs` through the daemon on requests vs on the monorepo, timed
    in turn (requests, monorepo, requests, ...: a drift of a shared machine's load moves both),
    and their ratio (target <= 1.5x): of the medians, and the median of the per-pair ratios;
    with the daemon memo on (the default) and off (LANSER_DAEMON_MEMO=off: every request
    reaches Pyright);
  - 1,000 `py://` `locate` lines over Django through `lanser batch --no-daemon`, next to a
    bare tree-sitter parse of the files they name (python's tree_sitter bindings over the
    same C parser; target <= 2x), and how many resolved to the right line (target >= 99 %),
    checked against Python's own `ast`;
  - the daemon's RSS on the monorepo.
With --base BIN, the same figures for another lanser binary (the build before the change) in
the same run, for a before/after table.

Usage (after `cargo build --release`):
  python3 benches/bench_monorepo.py [--runs 10] [--base /path/to/old/lanser]
Needs: pip install tree-sitter==0.25.2 tree-sitter-python==0.25.0 (for the parse baseline).
"""
import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TP = Path(os.environ.get("LANSER_THIRDPARTY", REPO / "target" / "thirdparty"))


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def fetch_requests() -> Path:
    out = sh("bash", str(REPO / "benches" / "fetch-thirdparty.sh")).stdout.strip().splitlines()
    return Path(out[-1])


def fetch_django() -> Path:
    ws = TP / "django-5.1.4"
    if (ws / "django" / "shortcuts.py").is_file():
        return ws
    dl = TP / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    archive = dl / "Django-5.1.4.tar.gz"
    if not archive.is_file():
        sh(sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "django==5.1.4", "-d", str(dl))
    tmp = TP / ".django-extract"
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(archive) as t:
        t.extractall(tmp, filter="data")
    shutil.rmtree(ws, ignore_errors=True)
    (tmp / "Django-5.1.4").rename(ws)
    shutil.rmtree(tmp, ignore_errors=True)
    return ws


def build_monorepo(django: Path) -> Path:
    ws = TP / "monorepo"
    if (ws / ".complete").is_file():
        return ws
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(django, ws)
    for i in range(3000):
        svc, mod = divmod(i, 100)
        d = ws / "gen" / f"svc{svc:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "__init__.py").touch()
        prev = f"mod{mod - 1:04d}" if mod else None
        body = [f"from .{prev} import Model{i - 1}\n" if prev else "",
                f"class Model{i}:\n    def load(self, n: int) -> int:\n        return n + {i}\n\n",
                f"def build_{i}() -> Model{i}:\n    return Model{i}()\n"]
        (d / f"mod{mod:04d}.py").write_text("".join(body))
    for i in range(20000):
        kind = i % 4
        if kind == 0:
            p = ws / "assets" / f"a{i // 400:03d}" / f"img{i}.json"
            text = json.dumps({"id": i})
        elif kind == 1:
            p = ws / "docs" / f"d{i // 400:03d}" / f"page{i}.md"
            text = f"# page {i}\n"
        elif kind == 2:
            p = ws / "node_modules" / f"pkg{i // 200:03d}" / f"index{i}.js"
            text = f"module.exports = {i};\n"
        else:
            p = ws / "data" / f"x{i // 400:03d}" / f"row{i}.csv"
            text = f"{i},{i * 2}\n"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (ws / ".complete").touch()
    return ws


def timed(cmd, env=None, check=True) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t


def median_ms(cmd, runs, env=None, check=True) -> float:
    return statistics.median(timed(cmd, env, check) for _ in range(runs)) * 1000


def find_line(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise SystemExit(f"{needle!r} not in {path}")


def warm_figures(lanser, small, s_sel, large, l_sel, runs, memo: bool) -> dict:
    """Warm `def` and `refs` through a daemon on each workspace, the two timed in turn (small,
    large, small, large, ...) so that a drift of the shared machine's load moves both: per
    command the median of each and the median of the per-pair ratios."""
    env = dict(os.environ)
    env.pop("LANSER_NO_DAEMON", None)
    if not memo:
        env["LANSER_DAEMON_MEMO"] = "off"
    sides = {"small": (small, s_sel), "large": (large, l_sel)}
    for ws, _ in sides.values():
        subprocess.run([lanser, "daemon", "stop", "--workspace", str(ws)], capture_output=True)
        sh(lanser, "daemon", "start", "--workspace", str(ws), env=env)
    out = {"small": {}, "large": {}, "ratio": {}}
    for cmd in ("def", "refs"):
        argv = {k: [lanser, cmd, sel, "--workspace", str(ws), "--json"] for k, (ws, sel) in sides.items()}
        for _ in range(3):
            for k in sides:
                timed(argv[k], env)
        times = {k: [] for k in sides}
        for _ in range(runs):
            for k in sides:
                times[k].append(timed(argv[k], env))
        for k in sides:
            out[k][cmd] = statistics.median(times[k]) * 1000
        out["ratio"][cmd] = statistics.median(l / s for s, l in zip(times["small"], times["large"]))
    for k, (ws, _) in sides.items():
        status = json.loads(sh(lanser, "daemon", "status", "--workspace", str(ws), "--json").stdout)
        facts = status.get("facts", status)
        out[k]["rssKiB"] = facts.get("rssKiB")
        out[k]["index"] = facts.get("index")
        subprocess.run([lanser, "daemon", "stop", "--workspace", str(ws)], capture_output=True)
    return out


def locate_lines(django: Path, n=1000):
    """`py://` selectors of Django's own definitions (up to 3 per file, in path order) and the
    line Python's ast puts each name on."""
    lines, expect, files = [], [], []
    for path in sorted((django / "django").rglob("*.py")):
        rel = path.relative_to(django).as_posix()
        module = rel[:-3].replace("/", ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        picked = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                picked.append((node.name, node.lineno))
                if isinstance(node, ast.ClassDef):
                    for sub in node.body:
                        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            picked.append((f"{node.name}.{sub.name}", sub.lineno))
                            break
        # Names defined twice (conditional definitions) are ambiguous by design: skip them.
        names = [q for q, _ in picked]
        picked = [(q, l) for q, l in picked if names.count(q) == 1][:3]
        if not picked:
            continue
        files.append(path)
        for q, line in picked:
            lines.append({"id": len(lines), "cmd": "locate", "selector": f"py://{module}#{q}"})
            expect.append(line)
            if len(lines) >= n:
                return lines, expect, files
    return lines, expect, files


def parse_baseline_ms(files, runs) -> float | None:
    try:
        import tree_sitter
        import tree_sitter_python
    except ImportError:
        return None
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))

    def once():
        t = time.perf_counter()
        for f in files:
            parser.parse(f.read_bytes())
        return time.perf_counter() - t

    return statistics.median(once() for _ in range(runs)) * 1000


def batch_figures(lanser, django, lines, expect, runs) -> dict:
    bench = REPO / "target" / "bench"
    bench.mkdir(parents=True, exist_ok=True)
    inp, out = bench / "locate1000.jsonl", bench / "locate1000.out.jsonl"
    inp.write_text("".join(json.dumps(l) + "\n" for l in lines))
    argv = [lanser, "batch", "--in", str(inp), "--out", str(out), "--workspace", str(django),
            "--no-daemon"]
    subprocess.run(argv, capture_output=True)
    # A genuinely ambiguous selector makes the batch exit 4: timed all the same.
    ms = median_ms(argv, runs, check=False)
    right = 0
    for b, want in zip(out.read_text().splitlines(), expect):
        b = json.loads(b)
        r = (b.get("resolution") or {}).get("resolved") or {}
        rng = r.get("range")
        if b.get("status") == "ok" and rng and rng[0] + 1 == want:
            right += 1
    return {"ms": ms, "right": right, "of": len(lines)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--base", help="another lanser binary (before the change)")
    ap.add_argument("--lanser", default=str(REPO / "target" / "release" / "lanser"))
    a = ap.parse_args()
    small = fetch_requests()
    django = fetch_django()
    mono = build_monorepo(django)
    s_sel = f"src/requests/api.py@L{find_line(small / 'src/requests/api.py', 'return session.request(')}:request"
    m_line = find_line(mono / "django/shortcuts.py", "content = loader.render_to_string(")
    m_sel = f"django/shortcuts.py@L{m_line}:render_to_string"
    lines, expect, files = locate_lines(django)
    parse_ms = parse_baseline_ms(files, a.runs)
    report = {"parseMs": parse_ms, "files": len(files), "lines": len(lines)}
    bins = [("after", a.lanser)] + ([("before", a.base)] if a.base else [])
    for label, lanser in bins:
        r = {}
        for memo in (True, False):
            key = "memo" if memo else "nomemo"
            r[key] = warm_figures(lanser, small, s_sel, mono, m_sel, a.runs, memo)
        r["batch"] = batch_figures(lanser, django, lines, expect, max(3, a.runs // 3))
        report[label] = r
    print(json.dumps(report, indent=1))
    print()
    for label, _ in bins:
        r = report[label]
        print(f"== {label}")
        for key in ("memo", "nomemo"):
            s, l = r[key]["small"], r[key]["large"]
            for cmd in ("def", "refs"):
                print(f"  warm {cmd:4} ({key:6}): requests {s[cmd]:8.1f} ms   monorepo {l[cmd]:8.1f} ms"
                      f"   ratio of medians {l[cmd] / s[cmd]:5.2f}x, median of pair ratios "
                      f"{r[key]['ratio'][cmd]:5.2f}x (target <= 1.5x)")
            print(f"  daemon RSS ({key}): requests {s['rssKiB']} KiB, monorepo {l['rssKiB']} KiB")
        b = r["batch"]
        ratio = f"{b['ms'] / parse_ms:5.2f}x" if parse_ms else "n/a (no tree_sitter module)"
        print(f"  batch of {b['of']} py:// locate lines on Django: {b['ms']:.0f} ms; bare tree-sitter parse"
              f" of the {len(files)} files: {parse_ms or float('nan'):.0f} ms; ratio {ratio} (target <= 2x);"
              f" right line {b['right']}/{b['of']} ({100 * b['right'] / b['of']:.1f} %, target >= 99 %)")


if __name__ == "__main__":
    main()

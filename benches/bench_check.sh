#!/usr/bin/env bash
# bench_check.sh - the cost of speculative diagnostics (issue 5): on requests 2.32.3, a patch
# that introduces one type error in sessions.py, measured N times each (whole-process wall time):
#   A  lanser check --patch P --workspace WS --json     (fresh process: spawn Pyright, load the
#      project, pull diagnostics for the patched file and its importers before and after the
#      patch in memory, restore; disk untouched)
#   B  git apply P; pyright --outputjson -p WS; git apply -R P   (write the patch to disk and
#      re-run the Pyright CLI over the whole project, then revert)
# Prints median/min/max of each and the ratio A/B. No assertions.
# Usage (from the repo, after `cargo build --release`): bash benches/bench_check.sh [N]
set -euo pipefail
# One-shot processes, as measured before the daemon existed (benches/bench_daemon.sh measures it).
export LANSER_NO_DAEMON="${LANSER_NO_DAEMON:-1}"
cd "$(dirname "$0")/.."
N="${1:-5}"
LANSER="${LANSER:-$PWD/target/release/lanser}"
PYRIGHT="${PYRIGHT:-node $HOME/.cache/lanser/pyright/1.1.407/node_modules/pyright/index.js}"
[[ -x "$LANSER" ]] || { echo "no lanser binary at $LANSER (cargo build --release)" >&2; exit 2; }
SRC_WS="$(bash benches/fetch-thirdparty.sh 2>/dev/null | tail -n1)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
WS="$TMP/requests"
cp -r "$SRC_WS" "$WS"
FILE=src/requests/sessions.py
LINE="$(grep -n -F 'return self.request("GET", url, **kwargs)' "$WS/$FILE" | head -n1 | cut -d: -f1)"
OLD="$(sed -n "${LINE}p" "$WS/$FILE")"
NEW="${OLD} if len(1) else None"   # len(int): one new type error
printf -- '--- a/%s\n+++ b/%s\n@@ -%s,1 +%s,1 @@\n-%s\n+%s\n' "$FILE" "$FILE" "$LINE" "$LINE" "$OLD" "$NEW" > "$TMP/p.diff"
echo "== patch"; cat "$TMP/p.diff"
echo "== lanser's answer"
"$LANSER" check --patch "$TMP/p.diff" --workspace "$WS" | grep -E '^\s+\+|→' | head -5
python3 - "$N" "$LANSER" "$WS" "$TMP/p.diff" "$PYRIGHT" <<'PY'
import statistics, subprocess, sys, time, shlex
n, lanser, ws, patch, pyright = int(sys.argv[1]), *sys.argv[2:]
def timed(fn):
    out = []
    for _ in range(n + 1):
        t = time.perf_counter(); fn(); out.append(time.perf_counter() - t)
    return out[1:]  # the first run warms the disk cache
def a():
    subprocess.run([lanser, "check", "--patch", patch, "--workspace", ws, "--json"], check=True, capture_output=True)
def b():
    subprocess.run(["git", "apply", "--unidiff-zero", patch], check=True, cwd=ws)
    try:
        subprocess.run(shlex.split(pyright) + ["--outputjson", "-p", ws], capture_output=True)
    finally:
        subprocess.run(["git", "apply", "--unidiff-zero", "-R", patch], check=True, cwd=ws)
ta, tb = timed(a), timed(b)
for name, t in [("lanser check --patch", ta), ("write + pyright --outputjson + revert", tb)]:
    print(f"{name:40s} median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f}, n={n})")
print(f"ratio lanser/pyright-cli: {statistics.median(ta) / statistics.median(tb):.2f}")
PY

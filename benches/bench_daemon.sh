#!/usr/bin/env bash
# bench_daemon.sh - `lanser def` cold (--no-daemon) vs warm (daemon up) vs the raw warm Pyright
# request, side by side in one run, on requests 2.32.3 (benches/fetch-thirdparty.sh).
#
# What it measures (no assertions; it prints numbers and the verdict on the target):
#   cold        `lanser def src/requests/api.py@L<line>:request --workspace WS --json --no-daemon`
#               whole process: spawns Pyright, waits, answers, shuts it down, exits
#   warm        the same command with the workspace's daemon up (whole CLI process: connect,
#               send, print); the daemon memoizes bundles, so this is the repeated-query path
#   warm-nomemo the same, against a daemon started with LANSER_DAEMON_MEMO=off: every request
#               rescans the workspace's Python files by content hash and asks Pyright again
#   raw         Pyright's own warm definition latency, inside one lsp_probe.py process:
#               `open:api.py waitdiag:api.py def*20:api.py@session.request+8` (request only,
#               no process start; the floor any client can reach)
#   and the daemon's RSS and its Pyright child's (`lanser daemon status --json`).
#   Target: warm <= 0.05 x cold (medians).
#
# Usage (after `cargo build --release`):
#   bash benches/bench_daemon.sh          # N = 10 runs per command
#   bash benches/bench_daemon.sh 30
# Environment overrides: LANSER (binary), PROBE (lsp_probe.py), SERVER (raw server command),
#   LANSER_THIRDPARTY (where the workspace is fetched), BENCH_OUT (directory for JSON exports).
set -euo pipefail

cd "$(dirname "$0")/.."
N="${1:-10}"
LANSER="${LANSER:-target/release/lanser}"
PROBE="${PROBE:-$(cd .. && pwd)/shared/tools/lsp_probe.py}"
[[ -f "$PROBE" ]] || PROBE=/work/shared/tools/lsp_probe.py
PYRIGHT_DIR="${LANSER_HOME:-$HOME/.cache/lanser}/pyright/1.1.407/node_modules/pyright"
SERVER="${SERVER:-node $PYRIGHT_DIR/langserver.index.js --stdio}"
OUT="${BENCH_OUT:-target/bench}"
mkdir -p "$OUT"

[[ -x "$LANSER" ]] || { echo "no lanser binary at $LANSER (cargo build --release)" >&2; exit 2; }
WS="$(bash benches/fetch-thirdparty.sh 2>/dev/null | tail -n1)"
LINE="$(grep -n -F 'return session.request(' "$WS/src/requests/api.py" | head -n1 | cut -d: -f1)"
DEF=("$LANSER" def "src/requests/api.py@L$LINE:request" --workspace "$WS" --json)

# Whatever happens, no daemon outlives the benchmark.
trap '"$LANSER" daemon stop --workspace "$WS" >/dev/null 2>&1 || true' EXIT
"$LANSER" daemon stop --workspace "$WS" >/dev/null

echo "== setup"
echo "lanser $("$LANSER" --version | cut -d' ' -f2) ($LANSER), pyright $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$PYRIGHT_DIR/package.json"), node $(node --version), $(nproc) cores"
echo "workspace: $WS   query: src/requests/api.py@L$LINE:request   runs: $N (1 warm-up each)"

# Byte identity first: the daemon's bundle is the --no-daemon bundle.
"${DEF[@]}" --no-daemon > "$OUT/cold.json"
"${DEF[@]}" > "$OUT/warm.json"
if cmp -s "$OUT/cold.json" "$OUT/warm.json"; then ident="identical"; else ident="DIFFERENT"; fi
echo "answer: $(python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); print(b["status"], [d["selector"] for d in b["facts"]["definitions"]])' "$OUT/cold.json")"
echo "bundles cold vs warm: $ident ($(wc -c < "$OUT/cold.json") bytes)"

timeit() { # name, then the command; prints nothing, appends "name t1 t2 …" to $OUT/times
    local name="$1"; shift
    python3 - "$N" "$name" "$@" >> "$OUT/times" <<'PY'
import subprocess, sys, time
n, name, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)   # warm-up
ts = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    ts.append(time.perf_counter() - t)
print(name, *[f"{x:.6f}" for x in ts])
PY
}
: > "$OUT/times"

echo
echo "== timing (whole-process wall time)"
timeit cold "${DEF[@]}" --no-daemon
"$LANSER" daemon stop --workspace "$WS" >/dev/null
"$LANSER" daemon start --workspace "$WS" >/dev/null
timeit warm "${DEF[@]}"
"$LANSER" daemon status --workspace "$WS" --json > "$OUT/status.json"
"$LANSER" daemon stop --workspace "$WS" >/dev/null
LANSER_DAEMON_MEMO=off "$LANSER" daemon start --workspace "$WS" >/dev/null
timeit warm-nomemo "${DEF[@]}"
"$LANSER" daemon status --workspace "$WS" --json > "$OUT/status-nomemo.json"
"$LANSER" daemon stop --workspace "$WS" >/dev/null

# Pyright's own warm request: one probe process, after the file's first diagnostics.
python3 "$PROBE" "$WS" open:src/requests/api.py waitdiag:src/requests/api.py:60 \
    "def*20:src/requests/api.py@session.request+8" --server "$SERVER" > "$OUT/raw_probe.json"

echo
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
rows = {}
for line in open(f"{out}/times"):
    name, *ts = line.split()
    rows[name] = [float(t) * 1000 for t in ts]
ops = [o for o in json.load(open(f"{out}/raw_probe.json"))["runs"][0]["ops"] if o["op"] == "def"]
rows["raw"] = [o["ms"] for o in ops[1:]]  # the first one after waitdiag is still warming caches
def line(name, what):
    t = rows[name]
    return f"{name:<12} median {statistics.median(t):9.2f} ms   min {min(t):9.2f}   max {max(t):9.2f}   (n={len(t)})  {what}"
print("== summary")
print(line("cold", "lanser def --no-daemon, whole process"))
print(line("warm", "lanser def, daemon up (memo), whole process"))
print(line("warm-nomemo", "lanser def, daemon up, memo off: rescan + Pyright request, whole process"))
print(line("raw", "Pyright textDocument/definition alone, warm, in-process probe"))
cold, warm, nomemo = (statistics.median(rows[k]) for k in ("cold", "warm", "warm-nomemo"))
print(f"warm / cold        = {warm / cold:.4f}   target <= 0.05: {'met' if warm / cold <= 0.05 else 'NOT met'}  ({cold / warm:.0f}x faster)")
print(f"warm-nomemo / cold = {nomemo / cold:.4f}   target <= 0.05: {'met' if nomemo / cold <= 0.05 else 'NOT met'}  ({cold / nomemo:.0f}x faster)")
for f, label in (("status.json", "daemon"), ("status-nomemo.json", "daemon (memo off)")):
    s = json.load(open(f"{out}/{f}"))
    print(f"{label}: lanser RSS {s['rssKiB'] / 1024:.1f} MiB, Pyright RSS {(s['serverRssKiB'] or 0) / 1024:.1f} MiB, "
          f"{s['requests']} requests, {s['pythonFiles']} Python files watched, server {s['serverName']} {s['serverVersion']}")
PY

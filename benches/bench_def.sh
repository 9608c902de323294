#!/usr/bin/env bash
# bench_def.sh - one-shot `lanser def` vs a raw Pyright session, whole-process wall time.
#
# What it measures (no assertions; it only prints numbers):
#   A  lanser:  `lanser def src/requests/api.py@L<line of 'return session.request('>:request
#               --workspace WS --json`            (fresh process: spawns Pyright, answers, exits)
#   B  raw:     `python3 lsp_probe.py WS open:src/requests/api.py
#               'def:src/requests/api.py@session.request+8' --server <the same Pyright>`
#               (fresh probe process: spawn, initialize, didOpen, definition, shutdown, exit)
#   on requests 2.32.3 (benches/fetch-thirdparty.sh), N runs each after 1 warm-up run, and prints
#   median / min / max of each and the ratio lanser/raw of the medians (target <= 1.10).
#   Uses hyperfine (--shell=none, --export-json) when installed, else a Python timing loop.
#
# Usage (from /work/main, after `cargo build --release`):
#   bash benches/bench_def.sh            # N = 7
#   bash benches/bench_def.sh 15         # N = 15
# Environment overrides: LANSER (binary), PROBE (lsp_probe.py), SERVER (raw server command),
#   LANSER_THIRDPARTY (where the workspace is fetched), BENCH_OUT (directory for the JSON export).
set -euo pipefail
# One-shot processes, as measured before the daemon existed (benches/bench_daemon.sh measures it).
export LANSER_NO_DAEMON="${LANSER_NO_DAEMON:-1}"

cd "$(dirname "$0")/.."
N="${1:-7}"
LANSER="${LANSER:-target/release/lanser}"
PROBE="${PROBE:-$(cd .. && pwd)/shared/tools/lsp_probe.py}"
PYRIGHT_DIR="$HOME/.cache/lanser/pyright/1.1.407/node_modules/pyright"
SERVER="${SERVER:-node $PYRIGHT_DIR/langserver.index.js --stdio}"
OUT="${BENCH_OUT:-target/bench}"
mkdir -p "$OUT"

[[ -x "$LANSER" ]] || { echo "no lanser binary at $LANSER (cargo build --release)" >&2; exit 2; }
WS="$(bash benches/fetch-thirdparty.sh 2>/dev/null | tail -n1)"
LINE="$(grep -n -F 'return session.request(' "$WS/src/requests/api.py" | head -n1 | cut -d: -f1)"

LANSER_CMD="$LANSER def src/requests/api.py@L$LINE:request --workspace $WS --json"
RAW_CMD="python3 $PROBE $WS open:src/requests/api.py 'def:src/requests/api.py@session.request+8' --server '$SERVER'"

# ---------------------------------------------------------------- versions and a sanity look
echo "== versions"
echo "lanser:  $("$LANSER" --version)"
"$LANSER" doctor 2>/dev/null | grep -E '^(server|server version|node):' | sed 's/^/         /' || true
echo "raw:     pyright $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$PYRIGHT_DIR/package.json") via $SERVER"
echo "         probe $PROBE (sha256 $(sha256sum "$PROBE" | cut -c1-12)), $(python3 --version), node $(node --version)"
echo "hyperfine: $(command -v hyperfine >/dev/null && hyperfine --version || echo 'not installed (Python loop)')"
echo "workspace: $WS   query line: $LINE   runs: $N"
echo
echo "== what each side answers (one run, not timed)"
echo "lanser: $(eval "$LANSER_CMD" | python3 -c 'import json,sys; b=json.load(sys.stdin); print(b["status"], json.dumps(b["facts"].get("definitions")))')"
echo "raw:    $(eval "$RAW_CMD" | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; print([o["summary"] for o in r["ops"] if o["op"]=="def"][0].get("locations"))')"
echo

# ---------------------------------------------------------------- timing
JSON="$OUT/bench_def.json"
if command -v hyperfine >/dev/null; then
    echo "== hyperfine (--shell=none, 1 warm-up, $N runs each)"
    hyperfine --shell=none --warmup 1 --runs "$N" --style basic \
        --export-json "$JSON" -n lanser "$LANSER_CMD" -n raw "$RAW_CMD"
else
    echo "== Python timing loop (1 warm-up, $N runs each; hyperfine not installed)"
    python3 - "$N" "$JSON" "$LANSER_CMD" "$RAW_CMD" <<'PY'
import json, shlex, subprocess, sys, time
n, out, cmds = int(sys.argv[1]), sys.argv[2], {"lanser": sys.argv[3], "raw": sys.argv[4]}
results = []
for name, cmd in cmds.items():
    argv = shlex.split(cmd)
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)          # warm-up
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    results.append({"command": name, "times": times})
json.dump({"results": results}, open(out, "w"), indent=1)
PY
fi

# ---------------------------------------------------------------- summary
echo
echo "== summary (whole-process wall time, seconds; raw JSON: $JSON)"
python3 - "$JSON" <<'PY'
import json, statistics, sys
res = {r["command"]: r["times"] for r in json.load(open(sys.argv[1]))["results"]}
med = {}
for name in ("lanser", "raw"):
    t = res[name]
    med[name] = statistics.median(t)
    print(f"{name:<7} median {med[name]:.3f}   min {min(t):.3f}   max {max(t):.3f}   (n={len(t)})")
ratio = med["lanser"] / med["raw"]
print(f"ratio lanser/raw (medians): {ratio:.3f}   target <= 1.10: {'met' if ratio <= 1.10 else 'NOT met'}")
PY

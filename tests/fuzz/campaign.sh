#!/usr/bin/env bash
# A fuzz campaign: each target in turn (one at a time, nice 19: the machine is shared) until
# 10^7 executions or SECONDS_PER_TARGET, whichever is first; libFuzzer's final stats go to
# logs/<target>.log (gitignored) and one summary line per target to logs/summary.tsv.
# Usage: tests/fuzz/campaign.sh [seconds per target] [target...]
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-3600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir .)
fi
python3 make_seeds.py
mkdir -p logs
for t in "${targets[@]}"; do
  # text checks every offset and column, patch diffs its two halves: longer inputs only
  # cost time there.
  case "$t" in
    text) max_len=64 ;;
    patch) max_len=1024 ;;
    *) max_len=4096 ;;
  esac
  start=$(date +%s)
  nice -n 19 cargo +nightly fuzz run --fuzz-dir . -s none -a "$t" -- \
    -runs=10000000 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 >"logs/$t.log" 2>&1
  rc=$?
  end=$(date +%s)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "logs/$t.log" | tail -1 | grep -o '[0-9]*')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${runs:-?}" "${rate:-?}" "$((end - start))" "$rc" \
    "${cov:-?}" | tee -a logs/summary.tsv
done

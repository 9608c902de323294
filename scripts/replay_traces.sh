#!/usr/bin/env bash
# Replay every trace in DIR with `--verify` against the current build, with no server to be
# had: each must exit as the recorded run did (the status is in the file name) and every
# recorded bundle must come back byte-identical (meta.timing aside). Record DIR with
#   LANSER_TEST_KEEP_TRACES=DIR cargo test --test cli
# on one commit, then run this on another: the check that a refactor changed no bundle.
set -uo pipefail
shopt -s nullglob
dir="$(realpath "${1:?usage: scripts/replay_traces.sh DIR}")"
cd "$(dirname "$0")/.."
cargo build --quiet || exit 1
bin="$(realpath "${CARGO_TARGET_DIR:-target}/debug/lanser")"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
same=0 differ=0
for t in "$dir"/*.jsonl; do
  want="${t##*.exit}"
  want="${want%.jsonl}"
  err="$(PATH="" LANSER_HOME="$home" LANSER_NO_DAEMON=1 "$bin" trace replay \
    --trace-file "$t" --verify --server-cmd /nonexistent 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" = "$want" ]; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "DIFFERS $(basename "$t"): exit $rc, recorded $want: ${err%%$'\n'*}"
  fi
done
echo "replayed $((same + differ)) traces: $same as recorded, $differ differ"
[ "$differ" -eq 0 ]

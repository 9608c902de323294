#!/usr/bin/env bash
# fetch-thirdparty.sh - fetch the real third-party workspace used by benches/agree.py and
# benches/bench_def.sh: the unmodified sdist of requests 2.32.3.
#
# Usage:  bash benches/fetch-thirdparty.sh
#         LANSER_THIRDPARTY=/some/dir bash benches/fetch-thirdparty.sh
#
# Extracts to ${LANSER_THIRDPARTY:-<repo>/target/thirdparty}/requests-2.32.3.
# Idempotent: does nothing if that directory already holds the project.
# The last line printed on stdout is the workspace path (scripts capture it with `tail -n1`).
set -euo pipefail

PKG=requests
VER=2.32.3
DEST_ROOT="${LANSER_THIRDPARTY:-$(cd "$(dirname "$0")/.." && pwd)/target/thirdparty}"
WS="$DEST_ROOT/$PKG-$VER"

if [[ -f "$WS/src/requests/api.py" ]]; then
    echo "already present: $WS" >&2
    echo "$WS"
    exit 0
fi

mkdir -p "$DEST_ROOT"
DL="$(mktemp -d "$DEST_ROOT/.dl.XXXXXX")"
trap 'rm -rf "$DL"' EXIT

# The sdist, not a wheel: it carries tests/ and the src/ layout the baseline measured.
PIP=(python3 -m pip)
"${PIP[@]}" download --no-deps --no-binary :all: "$PKG==$VER" -d "$DL" >&2

ARCHIVE="$(ls "$DL"/"$PKG"-"$VER".tar.gz)"
# Extract next to the destination first, then move into place atomically, so an
# interrupted run never leaves a half-extracted workspace that looks complete.
tar -xzf "$ARCHIVE" -C "$DL"
rm -rf "$WS"
mv "$DL/$PKG-$VER" "$WS"

echo "fetched: $WS" >&2
echo "$WS"

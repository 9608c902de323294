#!/usr/bin/env bash
# rename_thirdparty.sh - issue 4's proof on a real project: a rename used across many files of
# requests 2.32.3 (`to_native_string`, 16 references in 7 files), previewed then applied by
# lanser on a throw-away git copy. Checks, failing loudly on any difference:
#   1. the preview's diff, applied by `git apply` to a second copy, gives exactly the bytes
#      `lanser rename --apply` wrote (preview == apply);
#   2. Pyright's diagnostics for the whole project (`lanser diag --json`) are unchanged
#      (same count, same messages once the old name is mapped to the new one);
#   3. the project's own import still works: `import requests` from the copy's src/ and the
#      renamed function called through its new name.
# Usage (from the repo, after `cargo build --release`): bash benches/rename_thirdparty.sh
set -euo pipefail
# One-shot processes, as measured before the daemon existed (benches/bench_daemon.sh measures it).
export LANSER_NO_DAEMON="${LANSER_NO_DAEMON:-1}"
cd "$(dirname "$0")/.."
LANSER="${LANSER:-$PWD/target/release/lanser}"
[[ -x "$LANSER" ]] || { echo "no lanser binary at $LANSER (cargo build --release)" >&2; exit 2; }
SRC_WS="$(bash benches/fetch-thirdparty.sh 2>/dev/null | tail -n1)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
copy() {
    cp -r "$SRC_WS" "$1"
    git -C "$1" init -q && git -C "$1" add -A
    git -C "$1" -c user.name=bench -c user.email=bench@example.com commit -qm base
}
copy "$TMP/a"; copy "$TMP/b"
FILE=src/requests/_internal_utils.py
LINE="$(grep -n -F 'def to_native_string(' "$SRC_WS/$FILE" | cut -d: -f1)"
SEL="$FILE@L$LINE:to_native_string"

"$LANSER" diag --workspace "$TMP/a" --json > "$TMP/before.json"
"$LANSER" rename "$SEL" to_native_str --workspace "$TMP/a" --json > "$TMP/preview.json"
"$LANSER" rename "$SEL" to_native_str --workspace "$TMP/a" --apply --json > "$TMP/applied.json"
"$LANSER" diag --workspace "$TMP/a" --json > "$TMP/after.json"

python3 - "$TMP" <<'PY'
import json, subprocess, sys, pathlib
tmp = pathlib.Path(sys.argv[1])
load = lambda n: json.loads((tmp / n).read_text())
preview, applied = load("preview.json"), load("applied.json")
f = preview["facts"]
print(f"rename: {f['editCount']} edits in {len(f['files'])} files; applied={applied['facts']['applied']}")
assert applied["facts"]["applied"] is True, applied.get("error")
subprocess.run(["git", "apply", "-"], input=preview["edits"]["diff"].encode(), cwd=tmp / "b", check=True)
def tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts}
a, b = tree(tmp / "a"), tree(tmp / "b")
assert a == b, sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
print("preview == apply: identical trees")
def diags(bundle):
    return sorted((d["path"], d["severity"], d["code"] or "", d["message"].replace("to_native_str", "to_native_string"))
                  for d in bundle["facts"]["diagnostics"])
before, after = diags(load("before.json")), diags(load("after.json"))
print(f"diagnostics: {len(before)} before, {len(after)} after ({len(load('before.json')['facts']['files'])} files)")
assert before == after, (set(before) ^ set(after))
print("diagnostics unchanged")
out = subprocess.run([sys.executable, "-c",
    "import requests, requests._internal_utils as u; print(requests.__file__); print(u.to_native_str('x'))"],
    env={"PYTHONPATH": str(tmp / "a" / "src"), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True)
path, value = out.stdout.split()
assert path.startswith(str(tmp / "a")), path
print(f"import works from the copy ({path}); to_native_str('x') = {value}")
PY

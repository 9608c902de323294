"""Score many patches on Ray Data: `python -m lanser.distributed --workspace W --in
patches.jsonl --out scores.jsonl [--address ADDR] [--workers N]`.

Input: one `{"id", "patch"}` per line (a unified diff against W). Output, in input order:
`{"id", "r", "components", "bundleId", "status"}` per line — pr-v1 of each patch, measured in
memory by `lanser check` (W is never written).

How it shards: the patches become a Ray Dataset in blocks of `--batch-size`; `map_batches`
runs them on a pool of `--workers` actors. Each actor copies W once into its own temporary
directory and holds one warm lanser session over the copy (`lanser batch`, in-process), so
the project is analysed once per worker, not once per patch; a patch's bundle does not
depend on which worker scored it (bundles name workspace-relative paths only), so `r` and
`bundleId` equal one sequential session's. Local Ray by default (`--workers` CPUs);
`--address` joins a running cluster, whose nodes each need the `lanser` wheel installed
(the binary and Node.js/Pyright come with it) and W readable at the same path (or pass a
path every node has, e.g. on shared storage).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path


class Scorer:
    """One Ray actor: a private copy of the workspace and a warm session over it."""

    def __init__(self, workspace: str, lanser_bin: str | None = None):
        from .client import Lanser

        self._dir = tempfile.mkdtemp(prefix="lanser-worker-")
        root = Path(self._dir) / Path(workspace).name
        shutil.copytree(workspace, root, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", ".lanser"))
        self.session = Lanser(root, lanser_bin=lanser_bin, daemon=False)
        self.session.__enter__()

    def __call__(self, batch: dict) -> dict:
        from .reward import score_patch

        out = {"id": [], "r": [], "components": [], "bundleId": [], "status": []}
        for pid, patch in zip(batch["id"], batch["patch"]):
            s = score_patch(None, str(patch), session=self.session)
            out["id"].append(pid)
            out["r"].append(s["r"])
            out["components"].append(json.dumps(s["components"], sort_keys=True))
            out["bundleId"].append(s["bundleId"])
            out["status"].append(s["status"])
        return out

    def __del__(self):
        try:
            self.session.close()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)


def score(workspace: str, rows: list, workers: int = 2, address: str | None = None,
          batch_size: int = 4, lanser_bin: str | None = None) -> list:
    """Score `rows` (`{"id", "patch"}` dicts); the results in input order."""
    import ray

    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    ds = ray.data.from_items([{"id": str(r["id"]), "patch": r["patch"]} for r in rows])
    scored = ds.map_batches(
        Scorer,
        fn_constructor_kwargs={"workspace": str(Path(workspace).resolve()), "lanser_bin": lanser_bin},
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
    )
    by_id = {}
    for row in scored.iter_rows():
        by_id[str(row["id"])] = {
            "id": str(row["id"]),
            "r": None if row["r"] is None else float(row["r"]),
            "components": json.loads(row["components"]),
            "bundleId": str(row["bundleId"]),
            "status": str(row["status"]),
        }
    return [by_id[str(r["id"])] for r in rows]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lanser.distributed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--in", dest="inp", required=True, help="JSONL of {\"id\", \"patch\"}")
    ap.add_argument("--out", required=True, help="JSONL of {\"id\", \"r\", \"components\", \"bundleId\", \"status\"}")
    ap.add_argument("--address", help="a running Ray cluster to join (default: local Ray)")
    ap.add_argument("--workers", type=int, default=2, help="actors, each with one warm session (default 2)")
    ap.add_argument("--batch-size", type=int, default=4)
    a = ap.parse_args(argv)
    rows = [json.loads(l) for l in Path(a.inp).read_text().splitlines() if l.strip()]
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or "id" not in r or "patch" not in r:
            print(f"lanser.distributed: line {i + 1} of {a.inp} is not {{\"id\", \"patch\"}}", file=sys.stderr)
            return 2
    results = score(a.workspace, rows, a.workers, a.address, a.batch_size)
    with open(a.out, "w") as f:
        for r in results:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

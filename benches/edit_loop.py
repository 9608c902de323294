#!/usr/bin/env python3
"""edit_loop.py - the agent's edit loop, measured: a seeded sequence of verified writes
(`lanser edit SEL ... --text FILE --apply`), one after the other, through a warm daemon, on real
PyPI sdists.

For each project the sdist is unpacked twice, each copy a fresh git repository, each with its own
warm daemon: in `fast` lanser re-checks only what a change can alter (docs/editing.md); in
`full` (`LANSER_CHECK_FULL=1`) it re-checks every importer of the changed module, as before. The
same edits go to both, in the same order, each with its own text (no memo hit). Per edit:
the wall time of the CLI call and the bundle's `meta.timing.totalMs`, whether it was written
(never refused: the agent's own earlier edits do not dirty the guard), and whether the fast and
the full bundles' diagnostics (`facts.speculativeDiagnostics`, before/after) are equal. Between
rounds, the pinned pyright CLI checks the package once, in the same period.

Edit kinds, round-robin over functions picked by the seed:
  body       a statement added to a function's body (its surface unchanged)
  comment    a comment line added to a body
  docstring  the docstring replaced (or one added)
  signature  a required keyword-only parameter added (breaks the callers)
  helper     a new sibling function inserted after one

    python benches/edit_loop.py --project httpx==0.28.1 --edits 30 [--lanser target/release/lanser]
Prints a JSON line per edit and a table per project and kind (median / p90 seconds).
"""
import argparse
import ast
import json
import os
import random
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

KINDS = ["body", "comment", "docstring", "signature", "helper"]
REPO = Path(__file__).resolve().parents[1]


def sdist(spec: str, into: Path) -> Path:
    subprocess.run(["pip", "download", "--no-binary", ":all:", "--no-deps", "-q", spec, "-d", str(into)],
                   check=True)
    [archive] = [p for p in into.iterdir() if p.name.endswith((".tar.gz", ".zip"))]
    with tarfile.open(archive) as t:
        t.extractall(into / "src")
    [root] = list((into / "src").iterdir())
    return root


def git_copy(src: Path, dst: Path):
    shutil.copytree(src, dst)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", *args], cwd=dst, check=True)


def package_dir(root: Path, spec: str) -> Path:
    name = spec.split("=")[0].lower().replace("-", "_")
    for cand in (root / name, root / "src" / name):
        if (cand / "__init__.py").is_file():
            return cand
    raise SystemExit(f"no package {name} in {root}")


def module_of(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def functions(tree: ast.Module):
    """(qualname, node, is_method) of every function at module level or directly in a class."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node, False
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{sub.name}", sub, True


def body_text(src: str, fn) -> tuple[str | None, str]:
    """(the docstring statement's source or None, the rest of the body) of `fn`, dedented."""
    lines = src.split("\n")
    doc = None
    stmts = fn.body
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(getattr(stmts[0], "value", None), ast.Constant) \
            and isinstance(stmts[0].value.value, str):
        doc = "\n".join(lines[stmts[0].lineno - 1:stmts[0].end_lineno])
        stmts = stmts[1:]
    if not stmts:
        return doc, "pass\n"
    body = "\n".join(lines[stmts[0].lineno - 1:stmts[-1].end_lineno])
    return doc, body


def dedent(text: str) -> str:
    import textwrap
    return textwrap.dedent(text)


def make_edit(kind: str, i: int, src: str, qual: str, fn, is_method: bool):
    """(mode flag, text) of edit `i` of `kind` on `fn`, or None where the kind does not apply."""
    doc, rest = body_text(src, fn)
    # lanser dedents the text and indents it to the target's level: each block is dedented.
    doc = dedent(doc) if doc else None
    rest = dedent(rest)
    head = f"{doc}\n" if doc else ""
    if kind == "body":
        return "--replace-body", f"{head}_lanser_bench_{i} = {i}\n{rest}\n"
    if kind == "comment":
        return "--replace-body", f"{head}# lanser bench {i}\n{rest}\n"
    if kind == "docstring":
        return "--replace-body", f'"""Bench {i}: a changed docstring."""\n{rest}\n'
    if kind == "signature":
        new = ast.parse(ast.unparse(fn)).body[0]
        new.args.kwonlyargs.append(ast.arg(arg=f"bench_{i}", annotation=ast.Name("int")))
        new.args.kw_defaults.append(None)
        return "--replace", ast.unparse(new) + "\n"
    if kind == "helper":
        self_ = "self, " if is_method else ""
        return "--insert-after", f"def _lanser_helper_{i}({self_}x: int) -> int:\n    return x + {i}\n"
    return None


def lanser(bin_: str, ws: Path, args: list[str], env: dict, stdin: str | None = None):
    t = time.perf_counter()
    out = subprocess.run([bin_, *args, "--workspace", str(ws)], input=stdin, capture_output=True, text=True,
                         env=env, timeout=900)
    wall = time.perf_counter() - t
    try:
        b = json.loads(out.stdout)
    except json.JSONDecodeError:
        b = {"status": "error", "error": {"message": out.stderr.strip()[-300:]}}
    return b, wall, out.returncode


def pyright_cli(pkg: Path, cwd: Path) -> float:
    home = Path(os.environ.get("LANSER_HOME") or Path.home() / ".cache" / "lanser")
    [exe] = sorted(home.glob("pyright/*/node_modules/.bin/pyright"))[-1:]
    t = time.perf_counter()
    subprocess.run([str(exe), str(pkg)], cwd=cwd, capture_output=True, timeout=900)
    return time.perf_counter() - t


def run_project(spec: str, n: int, seed: int, bin_: str, work: Path) -> list[dict]:
    root = sdist(spec, work / "dl")
    copies = {"fast": work / "fast", "full": work / "full"}
    for c in copies.values():
        git_copy(root, c)
    envs = {"fast": dict(os.environ, LANSER_DAEMON_IDLE="900"),
            "full": dict(os.environ, LANSER_DAEMON_IDLE="900", LANSER_CHECK_FULL="1")}
    envs["fast"].pop("LANSER_NO_DAEMON", None)
    envs["full"].pop("LANSER_NO_DAEMON", None)
    pkg = package_dir(copies["fast"], spec)
    rng = random.Random(seed)
    files = sorted(p for p in pkg.rglob("*.py") if "test" not in p.name)
    rows, cli = [], []
    # Warm both daemons (and Pyright's first analysis) before the first edit.
    for k, c in copies.items():
        lanser(bin_, c, ["diag", "--json"], envs[k])
    used = set()
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        for _ in range(200):
            f = rng.choice(files)
            rel = f.relative_to(copies["fast"])
            src = f.read_text()
            fns = list(functions(ast.parse(src)))
            if not fns:
                continue
            qual, fn, is_method = rng.choice(fns)
            if (rel, qual) in used or qual.split(".")[-1].startswith("__") or "_lanser" in qual:
                continue
            edit = make_edit(kind, i, src, qual, fn, is_method)
            if edit:
                break
        used.add((rel, qual))
        mode, text = edit
        sel = f"py://{module_of(copies['fast'], f)}#{qual}"
        row = {"project": spec, "i": i, "kind": kind, "selector": sel}
        bundles = {}
        # The text as a file, as an agent's tool writes it: `--text -` (stdin) is answered in the
        # CLI's own process, a file goes to the warm daemon.
        text_file = work / f"edit-{i}.py"
        text_file.write_text(text)
        for k, c in copies.items():
            b, wall, rc = lanser(bin_, c, ["edit", sel, mode, "--text", str(text_file), "--apply", "--json",
                                           "--timing"], envs[k])
            bundles[k] = b
            row[k] = {"wall": round(wall, 3), "totalMs": b.get("meta", {}).get("timing", {}).get("totalMs"),
                      "status": b.get("status"), "exit": rc,
                      "error": (b.get("error") or {}).get("message")}
        ff, fu = (bundles[k].get("facts") or {} for k in ("fast", "full"))
        row["agree"] = all(ff.get(x) == fu.get(x) for x in ("speculativeDiagnostics", "before", "after"))
        row["checked"] = ff.get("checked")
        rows.append(row)
        print(json.dumps(row), flush=True)
        if i % 10 == 9:
            cli.append(pyright_cli(package_dir(copies["fast"], spec), copies["fast"]))
    for k, c in copies.items():
        subprocess.run([bin_, "daemon", "stop", "--workspace", str(c)], capture_output=True, env=envs[k])
    cli = cli or [pyright_cli(package_dir(copies["fast"], spec), copies["fast"])]
    for r in rows:
        r["pyrightCli"] = statistics.median(cli)
    return rows


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]


def table(rows: list[dict]):
    print("| project | kind | edits | fast median / p90 | full median / p90 | pyright CLI | fast ÷ CLI | agree | refused |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in dict.fromkeys(r["project"] for r in rows):
        for kind in KINDS:
            rs = [r for r in rows if r["project"] == spec and r["kind"] == kind]
            if not rs:
                continue
            fast = [r["fast"]["wall"] for r in rs]
            full = [r["full"]["wall"] for r in rs]
            cli = rs[0]["pyrightCli"]
            refused = sum(r["fast"]["exit"] == 71 for r in rs)
            print(f"| {spec} | {kind} | {len(rs)} | {statistics.median(fast):.2f} / {p90(fast):.2f} s | "
                  f"{statistics.median(full):.2f} / {p90(full):.2f} s | {cli:.1f} s | "
                  f"{statistics.median(fast) / cli:.2f} | {sum(r['agree'] for r in rs)}/{len(rs)} | {refused} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", action="append", required=True)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lanser", default=str(REPO / "target" / "release" / "lanser"))
    args = ap.parse_args()
    rows = []
    for spec in args.project:
        with tempfile.TemporaryDirectory() as d:
            rows += run_project(spec, args.edits, args.seed, args.lanser, Path(d))
    table(rows)


if __name__ == "__main__":
    main()

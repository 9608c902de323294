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
the full bundles' diagnostics agree: each file either lists (`facts.speculativeDiagnostics`) has
the same added and removed diagnostics, a file only the full one lists (an importer the fast one
skipped and does not pull) none, and before - after is the same (where not, the row's `differ`
names the files and messages, and `cold` what a Pyright that has evaluated nothing says of
those files: a one-shot `lanser diag` of them in a fresh copy before the edit and another after,
whose delta equals the fast answer's, the full one's, both or neither). Before
each write, both daemons' background refresh of the base view (docs/daemon.md) is let finish, as
an agent's own time between edits would (the wait is recorded, not counted). Between rounds, the
pinned pyright CLI checks the package once, in the same period.

Routes (`--route`, repeatable): `cli` (one `lanser edit ... --apply` process per edit, answered by
the warm daemon) and `mcp` (one `lanser mcp` session per copy, the `edit` tool with `apply: true`,
whose write goes to the same kind of warm daemon); each route on fresh copies. With `--agent-lsp`,
agent-lsp 0.23.5's `replace_symbol_body` (pip-installed by name, as benches/peers.py does) writes
the body, comment and docstring edits' bodies at the same functions, on a copy of its own, over
lanser's pinned Pyright; its answers carry no diagnostics. With `--read-first`, each edit is
preceded by a `source` of the function on both copies (CLI or MCP, as the route), as an agent
reads what it edits; the daemon checks a file read in the background, and that refresh is waited
for like the one after a write (the row's `read` has the read's seconds).

Edit kinds, round-robin over functions picked by the seed:
  body       a statement added to a function's body (its surface unchanged)
  comment    a comment line added to a body
  docstring  the docstring replaced (or one added)
  signature  a required keyword-only parameter added (breaks the callers)
  helper     a new sibling function inserted after one

    python benches/edit_loop.py --project httpx==0.28.1 --edits 30 [--route cli --route mcp]
        [--agent-lsp] [--read-first] [--lanser target/release/lanser] [--json-out rows.jsonl]
Prints a JSON line per edit and a table per project, route and kind (median / p90 seconds). The
`mcp` route and `--agent-lsp` need the `mcp` package (the pinned test venv has it).
"""
import argparse
import ast
import asyncio
import sys
import json
import os
import random
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from collections import Counter
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
        subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", "-c", "gc.auto=0", *args],
                       cwd=dst, check=True)


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


def settle(bin_: str, ws: Path, env: dict, limit: float = 120.0) -> float:
    """Wait (up to `limit` s) until the copy's daemon has no base-view refresh left to pull, as an
    agent's own time between two edits would; the seconds waited."""
    t = time.perf_counter()
    time.sleep(0.3)
    while time.perf_counter() - t < limit:
        out = subprocess.run([bin_, "daemon", "status", "--json", "--workspace", str(ws)],
                             capture_output=True, text=True, env=env)
        try:
            r = json.loads(out.stdout).get("refresh")
        except json.JSONDecodeError:
            break
        # A daemon busy with a long pull may not answer `status` in time ({"running": false}).
        if r is not None and not r.get("pending"):
            break
        time.sleep(0.2)
    return time.perf_counter() - t


def pyright_cli(pkg: Path, cwd: Path) -> float:
    home = Path(os.environ.get("LANSER_HOME") or Path.home() / ".cache" / "lanser")
    [exe] = sorted(home.glob("pyright/*/node_modules/.bin/pyright"))[-1:]
    t = time.perf_counter()
    subprocess.run([str(exe), str(pkg)], cwd=cwd, capture_output=True, timeout=900)
    return time.perf_counter() - t


# Edits between two runs of the pyright CLI (`--cli-every`).
CLI_EVERY = 10
MODES = {"--replace-body": "replace_body", "--replace": "replace", "--insert-after": "insert_after"}


class Cli:
    """Each edit a `lanser edit ... --apply` process, answered by the copy's warm daemon."""

    def __init__(self, bin_, ws, env, work):
        self.bin, self.ws, self.env, self.work = bin_, ws, env, work

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False

    async def edit(self, i, sel, mode, text):
        # The text as a file, as an agent's tool writes it: `--text -` (stdin) is answered in the
        # CLI's own process, a file goes to the warm daemon.
        text_file = self.work / f"edit-{i}.py"
        text_file.write_text(text)
        b, wall, rc = lanser(self.bin, self.ws, ["edit", sel, mode, "--text", str(text_file), "--apply",
                                                 "--json", "--timing"], self.env)
        return b, wall, rc

    async def read(self, sel):
        """`lanser source SEL`, as an agent reads the function it is about to edit."""
        b, wall, rc = lanser(self.bin, self.ws, ["source", sel, "--json"], self.env)
        return wall


class Mcp:
    """One `lanser mcp` session over the copy; each edit its `edit` tool with `apply: true`."""

    def __init__(self, bin_, ws, env, work):
        self.bin, self.ws, self.env = bin_, ws, env

    async def __aenter__(self):
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        params = StdioServerParameters(command=self.bin, args=["mcp", "--workspace", str(self.ws)],
                                       env=self.env)
        self._client = stdio_client(params)
        r, w = await self._client.__aenter__()
        self._session = ClientSession(r, w)
        self.s = await self._session.__aenter__()
        await self.s.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(None, None, None)
        await self._client.__aexit__(None, None, None)
        return False

    async def edit(self, i, sel, mode, text):
        t = time.perf_counter()
        res = await self.s.call_tool("edit", {"selector": sel, "mode": MODES[mode], "text": text,
                                              "apply": True}, read_timeout_seconds=900)
        wall = time.perf_counter() - t
        b = res.structured_content or {}
        if not b:
            b = {"status": "error", "error": {"message": " ".join(
                c.text for c in res.content if getattr(c, "type", "") == "text")[-300:]}}
        return b, wall, 1 if res.is_error else 0

    async def read(self, sel):
        t = time.perf_counter()
        await self.s.call_tool("source", {"selector": sel}, read_timeout_seconds=900)
        return time.perf_counter() - t


def pick(rng, files, copy, used, kind, i):
    """(file, qualname, fn, is_method, (mode, text)) of edit `i`, on the copy's current text."""
    for _ in range(200):
        f = rng.choice(files)
        rel = f.relative_to(copy)
        src = f.read_text()
        fns = list(functions(ast.parse(src)))
        if not fns:
            continue
        qual, fn, is_method = rng.choice(fns)
        # A name defined twice (a property's getter and setter, overloads) is skipped: which
        # definition the selector names is not the one this text was read from.
        twice = sum(q == qual for q, _, _ in fns) > 1
        if (rel, qual) in used or qual.split(".")[-1].startswith("__") or "_lanser" in qual or twice:
            continue
        edit = make_edit(kind, i, src, qual, fn, is_method)
        if edit:
            used.add((rel, qual))
            return f, qual, edit
    raise SystemExit(f"no function to edit ({kind}, {i})")


def python_files(root: Path) -> int:
    """How many `.py` files are under `root`, `.git` left out (a commit's background
    `git gc --auto` may repack it while this walks)."""
    n = 0
    for _, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        n += sum(1 for f in files if f.endswith(".py"))
    return n


def warm_args(pkg: Path, copy: Path) -> list[str]:
    """A whole `diag` on a small project; on a large one the package's `__init__.py` (the server
    loads the project either way)."""
    if python_files(copy) < 400:
        return ["diag", "--json"]
    return ["diag", str((pkg / "__init__.py").relative_to(copy)), "--json"]


async def run_route(spec, root, n, seed, bin_, work, route, read_first=False) -> tuple[list[dict], list[dict]]:
    """The edit loop on fresh fast and full copies through `route`; the rows and the body edits
    made (for agent-lsp). With `read_first`, each edit is preceded by a `source` of the function
    on both copies (as an agent reads what it edits), and the daemons' refresh after it is waited
    for like the refresh after a write."""
    copies = {"fast": work / route / "fast", "full": work / route / "full"}
    for c in copies.values():
        git_copy(root, c)
    envs = {"fast": dict(os.environ, LANSER_DAEMON_IDLE="900"),
            "full": dict(os.environ, LANSER_DAEMON_IDLE="900", LANSER_CHECK_FULL="1")}
    for e in envs.values():
        e.pop("LANSER_NO_DAEMON", None)
    pkg = package_dir(copies["fast"], spec)
    rng = random.Random(seed)
    files = sorted(p for p in pkg.rglob("*.py") if "test" not in p.name)
    rows, cli, bodies = [], [], []
    # Warm both daemons (and Pyright's first analysis) before the first edit.
    for k, c in copies.items():
        lanser(bin_, c, warm_args(package_dir(c, spec), c), envs[k])
    kind_of = Cli if route == "cli" else Mcp
    used = set()
    async with kind_of(bin_, copies["fast"], envs["fast"], work) as fast, \
            kind_of(bin_, copies["full"], envs["full"], work) as full:
        drivers = {"fast": fast, "full": full}
        for i in range(n):
            kind = KINDS[i % len(KINDS)]
            f, qual, (mode, text) = pick(rng, files, copies["fast"], used, kind, i)
            sel = f"py://{module_of(copies['fast'], f)}#{qual}"
            row = {"project": spec, "route": route, "i": i, "kind": kind, "selector": sel,
                   "load": round(os.getloadavg()[0], 1)}
            if mode == "--replace-body":
                bodies.append({"i": i, "kind": kind, "path": str(f.relative_to(copies["fast"])),
                               "qualname": qual, "text": text})
            bundles = {}
            before = f.read_text()
            if read_first:
                row["read"] = {k: round(await drivers[k].read(sel), 3) for k in copies}
            for k in copies:
                # Each edit is measured with the other daemon's refresh done (one agent, one daemon).
                row.setdefault("settle", {})
                for other in copies:
                    row["settle"][other] = round(row["settle"].get(other, 0)
                                                 + settle(bin_, copies[other], envs[other]), 2)
                b, wall, rc = await drivers[k].edit(i, sel, mode, text)
                bundles[k] = b
                facts = b.get("facts") or {}
                row[k] = {"wall": round(wall, 3),
                          "totalMs": (b.get("meta") or {}).get("timing", {}).get("totalMs")
                          if isinstance((b.get("meta") or {}).get("timing"), dict) else None,
                          "status": b.get("status"), "exit": rc, "applied": facts.get("applied"),
                          "error": (b.get("error") or {}).get("message")}
            ff, fu = (bundles[k].get("facts") or {} for k in ("fast", "full"))
            row["agree"] = agree(ff, fu)
            if not row["agree"]:
                row["differ"] = differ(ff, fu)
                row["cold"] = arbitrate(bin_, copies["fast"], f, before, ff, fu,
                                        sorted(row["differ"]["files"]), work)
            row["checked"] = ff.get("checked")
            rows.append(row)
            print(json.dumps(row), flush=True)
            if i % CLI_EVERY == CLI_EVERY - 1:
                cli.append(pyright_cli(package_dir(copies["fast"], spec), copies["fast"]))
    for k, c in copies.items():
        subprocess.run([bin_, "daemon", "stop", "--workspace", str(c)], capture_output=True, env=envs[k])
    cli = cli or [pyright_cli(package_dir(copies["fast"], spec), copies["fast"])]
    for r in rows:
        r["pyrightCli"] = statistics.median(cli)
    return rows, bodies


def deltas(facts: dict) -> dict:
    """Each listed file's (added, removed) diagnostics in an edit's facts."""
    return {d.get("path"): (d.get("added") or [], d.get("removed") or [])
            for d in facts.get("speculativeDiagnostics") or []}


def agree(fast: dict, full: dict) -> bool:
    """Whether the fast answer is the full re-check's: each file either lists has the same added
    and removed diagnostics (a file one side does not list, a skipped importer, has none: the
    fast answer does not pull it), and the totals changed by the same amount (each side counts
    over the files it lists)."""
    a, b = deltas(fast), deltas(full)
    none = ([], [])
    if any(a.get(p, none) != b.get(p, none) for p in set(a) | set(b)):
        return False
    change = lambda f: None if f.get("before") is None else f["before"] - (f.get("after") or 0)
    return change(fast) == change(full)


def differ(fast: dict, full: dict) -> dict:
    """Where the fast and the full facts differ: the totals, and per file (of either) whose
    added or removed diagnostics differ, the counts before and after and the messages only one
    side added or removed."""
    def files(f):
        return {d.get("path"): d for d in f.get("speculativeDiagnostics") or []}
    a, b = files(fast), files(full)
    da, db = deltas(fast), deltas(full)
    out = {"before": [fast.get("before"), full.get("before")], "after": [fast.get("after"), full.get("after")],
           "files": {}}
    for path in sorted(set(a) | set(b)):
        if da.get(path, ([], [])) == db.get(path, ([], [])):
            continue
        x, y = a.get(path), b.get(path)
        msgs = lambda d, k: sorted(f"{m.get('code')}: {m.get('message', '')}" for m in (d or {}).get(k) or [])
        out["files"][path] = {
            "fast": None if x is None else [x.get("before"), x.get("after")],
            "full": None if y is None else [y.get("before"), y.get("after")],
            "addedFastOnly": sorted(set(msgs(x, "added")) - set(msgs(y, "added"))),
            "addedFullOnly": sorted(set(msgs(y, "added")) - set(msgs(x, "added"))),
            "removedFastOnly": sorted(set(msgs(x, "removed")) - set(msgs(y, "removed"))),
            "removedFullOnly": sorted(set(msgs(y, "removed")) - set(msgs(x, "removed"))),
        }
    return out


def cold_diagnostics(bin_: str, ws: Path, paths: list[str]) -> dict:
    """Each path's diagnostics as (code, message, range) by a one-shot `lanser diag` in a fresh
    process (no daemon): a Pyright that has evaluated nothing before."""
    env = dict(os.environ, LANSER_NO_DAEMON="1")
    b, wall, rc = lanser(bin_, ws, ["diag", *paths, "--json"], env)
    found = {p: [] for p in paths}
    for d in (b.get("facts") or {}).get("diagnostics") or []:
        found.setdefault(d.get("path"), []).append((d.get("code"), d.get("message"), tuple(d.get("range") or ())))
    return {"found": found, "wall": wall, "exit": rc}


def arbitrate(bin_: str, copy: Path, changed: Path, before: str, fast: dict, full: dict,
              paths: list[str], work: Path) -> dict:
    """Where the fast and the full answers disagree, the files they disagree on checked by a
    Pyright that has evaluated nothing: a fresh copy of the workspace before the edit and after
    it, the files' diagnostics by a one-shot `diag` in a fresh process each. `agreesWith` says
    whose delta (added and removed messages per file; a file an answer does not list: none) the
    cold one equals: "fast", "full", "both" or "neither"."""
    cold = work / "cold"
    shutil.rmtree(cold, ignore_errors=True)
    shutil.copytree(copy, cold, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    rel = changed.relative_to(copy)
    after = (cold / rel).read_text()
    (cold / rel).write_text(before)
    pre = cold_diagnostics(bin_, cold, paths)
    (cold / rel).write_text(after)
    post = cold_diagnostics(bin_, cold, paths)
    shutil.rmtree(cold, ignore_errors=True)
    msgs = lambda ds: sorted(f"{d.get('code')}: {d.get('message', '')}" for d in ds)
    files, same = {}, {"fast": True, "full": True}
    for p in paths:
        # By message, as a multiset: the changed file's own lines move.
        x, y = (Counter(f"{c}: {m}" for c, m, _ in side["found"].get(p, ())) for side in (pre, post))
        cold_delta = (sorted((y - x).elements()), sorted((x - y).elements()))
        files[p] = {"before": sum(x.values()), "after": sum(y.values()), "added": cold_delta[0],
                    "removed": cold_delta[1]}
        for k, facts in (("fast", fast), ("full", full)):
            added, removed = (Counter(msgs(ds)) for ds in deltas(facts).get(p, ([], [])))
            same[k] &= (sorted((added - removed).elements()), sorted((removed - added).elements())) == cold_delta
    verdict = {(True, True): "both", (True, False): "fast", (False, True): "full", (False, False): "neither"}
    return {"files": files, "wall": [round(pre["wall"], 1), round(post["wall"], 1)],
            "exit": [pre["exit"], post["exit"]], "agreesWith": verdict[same["fast"], same["full"]]}


def body_indent(src: str, qual: str) -> str:
    """The indentation of the body of `qual` in `src`."""
    node = next(fn for q, fn, _ in functions(ast.parse(src)) if q == qual)
    first = node.body[0]
    line = src.split("\n")[first.lineno - 1]
    return line[:len(line) - len(line.lstrip())]


async def agent_lsp(spec, root, bodies, work) -> list[dict]:
    """agent-lsp's `replace_symbol_body` with the same bodies at the same functions, on a copy of
    its own: the wall time of each call, and whether the module still parses after it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import peers
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    ws = work / "agent-lsp"
    git_copy(root, ws)
    server = peers.AgentLsp(peers.agent_lsp_binary(), ws)
    rows = []
    try:
        async with stdio_client(server.params()) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await server.prepare(s)
                for b in bodies:
                    path = ws / b["path"]
                    ind = body_indent(path.read_text(), b["qualname"])
                    body = "".join(ind + line + "\n" if line else "\n" for line in b["text"].splitlines())
                    t = time.perf_counter()
                    res = await s.call_tool("replace_symbol_body", {
                        "file_path": str(path), "symbol_path": b["qualname"], "new_body": body},
                        read_timeout_seconds=900)
                    wall = time.perf_counter() - t
                    try:
                        ast.parse(path.read_text())
                        parses = True
                    except SyntaxError:
                        parses = False
                    row = {"project": spec, "route": "agent-lsp", "i": b["i"], "kind": b["kind"],
                           "wall": round(wall, 3), "error": res.is_error, "parses": parses,
                           "load": round(os.getloadavg()[0], 1)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        server.close()
    return rows


async def run_project(spec: str, n: int, seed: int, bin_: str, work: Path, routes, with_agent_lsp,
                      read_first=False):
    root = sdist(spec, work / "dl")
    rows, peer = [], []
    for route in routes:
        got, bodies = await run_route(spec, root, n, seed, bin_, work, route, read_first)
        rows += got
    if with_agent_lsp:
        peer = await agent_lsp(spec, root, bodies, work)
    return rows, peer


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]


def table(rows: list[dict], peer: list[dict]):
    print("| project | route | kind | edits | fast median / p90 | full median / p90 | pyright CLI | fast ÷ CLI "
          "| agent-lsp median / p90 | agree | written |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in dict.fromkeys(r["project"] for r in rows):
        for route in dict.fromkeys(r["route"] for r in rows if r["project"] == spec):
            for kind in KINDS:
                rs = [r for r in rows if r["project"] == spec and r["route"] == route and r["kind"] == kind]
                if not rs:
                    continue
                fast = [r["fast"]["wall"] for r in rs]
                full = [r["full"]["wall"] for r in rs]
                cli = rs[0]["pyrightCli"]
                written = sum(bool(r["fast"]["applied"]) and bool(r["full"]["applied"]) for r in rs)
                pl = [r["wall"] for r in peer if r["project"] == spec and r["kind"] == kind]
                al = f"{statistics.median(pl):.2f} / {p90(pl):.2f} s" if pl else "—"
                print(f"| {spec} | {route} | {kind} | {len(rs)} | {statistics.median(fast):.2f} / {p90(fast):.2f} s | "
                      f"{statistics.median(full):.2f} / {p90(full):.2f} s | {cli:.1f} s | "
                      f"{statistics.median(fast) / cli:.2f} | {al} | {sum(r['agree'] for r in rs)}/{len(rs)} | "
                      f"{written}/{len(rs)} |")
    cold = [r for r in rows if "cold" in r]
    if cold:
        verdicts = Counter(r["cold"]["agreesWith"] for r in cold)
        print(f"\nfast != full on {len(cold)} edits; the cold Pyright's delta equals: "
              + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
        for r in cold:
            print(f"  {r['project']} {r['route']} #{r['i']} {r['kind']} {r['selector']}: {r['cold']['agreesWith']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", action="append", required=True)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--route", action="append", choices=["cli", "mcp"])
    ap.add_argument("--agent-lsp", action="store_true")
    ap.add_argument("--read-first", action="store_true")
    ap.add_argument("--json-out")
    ap.add_argument("--cli-every", type=int, default=10)
    ap.add_argument("--lanser", default=str(REPO / "target" / "release" / "lanser"))
    args = ap.parse_args()
    global CLI_EVERY
    CLI_EVERY = args.cli_every
    rows, peer = [], []
    for spec in args.project:
        with tempfile.TemporaryDirectory() as d:
            got, p = asyncio.run(run_project(spec, args.edits, args.seed, args.lanser, Path(d),
                                             args.route or ["cli"], args.agent_lsp, args.read_first))
            rows += got
            peer += p
    if args.json_out:
        Path(args.json_out).write_text("".join(json.dumps(r) + "\n" for r in rows + peer))
    table(rows, peer)


if __name__ == "__main__":
    main()

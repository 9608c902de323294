#!/usr/bin/env python3
"""peers.py - lanser and agent-lsp on the same calls: both MCP servers driven by the official MCP
Python SDK (`mcp`, pinned in tests/requirements.txt) over the same pinned PyPI projects (sdists,
unpacked to a cache dir), at the same positions, checked against the files themselves.

For each project and each server (run one after the other, each on its own fresh copy):
  - first answer: from spawning the server to the first correct definition (retried until right);
  - definitions at seeded call sites of the project's own functions, checked against the
    definition the name binds to (Python `ast`, benches/peers_ast.py); per-call latency of the
    first ask and of repeated asks (medians);
  - references of seeded module-level names whose every use `ast` can see: true references found
    and extra ones;
  - symbol source (lanser `source` vs agent-lsp `get_symbol_source`) at definitions: the whole
    `def` through its last line, or not;
  - answers right after outside edits made with no notice (lines inserted on disk, asked at once);
  - the bytes of the text content of each answer (what the model reads), and the tool count.

Both servers run the same Pyright (lanser's pinned 1.1.407 in ~/.cache/lanser, given to agent-lsp
as its Python server command). agent-lsp is pip-installed by name into a venv under ~/.cache.

Usage (after `cargo build --release`), with the test environment's python (it has `mcp`):
  nice "$(python3 tests/python_env.py)" benches/peers.py [--quick] [--projects django,httpx,rich]
Writes benches/PEERS.json and benches/PEERS.md (the table README.md shows).
"""
import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers_ast as pa  # noqa: E402
import peers_edits as pe  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
HOME = CACHE / "lanser-peers"
PYRIGHT = "1.1.407"
AGENT_LSP = "0.23.5"
# name: (sdist requirement, directory in the sdist, subtrees the workspace leaves out, ast scan root)
PROJECTS = {
    # Django's 1,900-file test suite is left out: the workspace is the django package (879 files)
    "django": ("django==5.1.4", "Django-5.1.4", ["tests", "docs", "js_tests"], "django"),
    "httpx": ("httpx==0.28.1", "httpx-0.28.1", [], None),
    "rich": ("rich==13.9.4", "rich-13.9.4", [], None),
}
SEED = 30
CALL_TIMEOUT = 180


# ---------------------------------------------------------------- setup


def pip(*args):
    subprocess.run([sys.executable, "-m", "pip", "-q", *args], check=True)


def project_source(name) -> Path:
    req, dirname, _, _ = PROJECTS[name]
    src = HOME / "src" / dirname
    if not src.is_dir():
        sd = HOME / "sdists"
        sd.mkdir(parents=True, exist_ok=True)
        pip("download", "--no-deps", "--no-binary", req.split("==")[0], req, "-d", str(sd))
        tgz = next(p for p in sd.iterdir() if p.name.lower().startswith(dirname.lower()))
        (HOME / "src").mkdir(exist_ok=True)
        subprocess.run(["tar", "xzf", str(tgz), "-C", str(HOME / "src")], check=True)
    return src


def fresh_copy(name, who) -> Path:
    _, dirname, leave_out, _ = PROJECTS[name]
    dst = HOME / "work" / who / dirname
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(project_source(name), dst, ignore=lambda d, fs: [
        f for f in fs if Path(d) == project_source(name) and f in leave_out])
    return dst


def agent_lsp_binary() -> Path:
    venv = HOME / f"agent-lsp-{AGENT_LSP}"
    exe = venv / "bin" / "agent-lsp"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "-q", "install", f"agent-lsp=={AGENT_LSP}"],
                       check=True)
    # the console script runs the Go binary the wheel bundles; run that binary directly
    pkg = next((venv / "lib").glob("python3*/site-packages/agent_lsp/bin/agent-lsp"))
    return pkg


def pyright_langserver() -> Path:
    p = CACHE / "lanser" / "pyright" / PYRIGHT / "node_modules" / ".bin" / "pyright-langserver"
    if not p.exists():
        raise SystemExit(f"no Pyright {PYRIGHT} at {p}: run `lanser setup` first")
    return p


def text_bytes(res) -> int:
    return sum(len(c.text.encode()) for c in res.content if getattr(c, "type", "") == "text")


def joined_text(res) -> str:
    return "\n".join(c.text for c in res.content if getattr(c, "type", "") == "text")


# ---------------------------------------------------------------- the two servers


class Lanser:
    name = "lanser"

    def __init__(self, binary, ws):
        self.binary, self.ws = str(binary), ws
        self.home = Path(tempfile.mkdtemp(prefix="peers-home-"))
        os.symlink(CACHE / "lanser" / "pyright", self.home / "pyright")
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("LANSER_NO_DAEMON", "LANSER_SERVER_CMD")}
        self.env.update(LANSER_HOME=str(self.home), LANSER_DAEMON_IDLE="600")

    def params(self):
        return StdioServerParameters(command="nice", args=[self.binary, "mcp", "--workspace",
                                                           str(self.ws)], env=self.env)

    async def prepare(self, s):
        pass

    def version(self):
        return subprocess.run([self.binary, "--version"], capture_output=True,
                              text=True).stdout.strip()

    @staticmethod
    def language_server(res):
        """The server the bundle says answered."""
        env = (res.structured_content or {}).get("environment", {}) if res else {}
        return env.get("server")

    def close(self):
        subprocess.run([self.binary, "daemon", "stop", "--workspace", str(self.ws)],
                       env=self.env, capture_output=True)
        shutil.rmtree(self.home, ignore_errors=True)

    @staticmethod
    def sel(pos):
        return f"{pos.path}@L{pos.line}:C{pos.col}"

    async def definition(self, s, pos):
        res = await s.call_tool("definition", {"selector": self.sel(pos)},
                                read_timeout_seconds=CALL_TIMEOUT)
        locs = []
        if not res.is_error and res.structured_content:
            for d in res.structured_content["facts"].get("definitions", []):
                r = d["range"]
                locs.append(pa.Pos(d["path"], r[0] + 1, r[1] + 1))
        return res, locs

    async def references(self, s, pos):
        res = await s.call_tool("references", {"selector": self.sel(pos)},
                                read_timeout_seconds=CALL_TIMEOUT)
        locs = set()
        if not res.is_error and res.structured_content:
            for d in res.structured_content["facts"].get("references", []):
                r = d["range"]
                locs.add(pa.Pos(d["path"], r[0] + 1, r[1] + 1))
        return res, locs

    async def source(self, s, pos):
        res = await s.call_tool("source", {"selector": self.sel(pos)},
                                read_timeout_seconds=CALL_TIMEOUT)
        if res.is_error or not res.structured_content:
            return res, None
        f = res.structured_content["facts"]
        return res, (f["first_line"] if "first_line" in f else f.get("firstLine"), f["text"])


    async def edit(self, s, d, ws, args):
        res = await s.call_tool("edit", {"selector": self.sel(d.at), **args},
                                read_timeout_seconds=CALL_TIMEOUT)
        old = (ws / d.at.path).read_text(encoding="utf-8")
        if res.is_error or not res.structured_content:
            return res, old
        files = res.structured_content["edits"]["workspaceEdit"]["files"]
        if [f["path"] for f in files] != [d.at.path]:
            return res, None
        return res, pe.apply_edits(old, files[0]["edits"])

    async def replace_body(self, s, d, qualname, body, ws):
        """`edit --replace-body`, a preview: the text it would write."""
        return await self.edit(s, d, ws, {"mode": "replace_body", "text": body})

    async def delete(self, s, d, qualname, ws):
        """`edit --delete`, a preview: the text it would write (the file's, when refused)."""
        return await self.edit(s, d, ws, {"mode": "delete"})


GCF_HEADER = re.compile(r"^## \[(\d+)\]\{([^}]*)\}$")


def parse_gcf_rows(text):
    """agent-lsp's 'GCF' tables: `## [N]{F1,F2,...}` then N rows `v1|v2|...`."""
    rows, lines = [], text.split("\n")
    for i, line in enumerate(lines):
        m = GCF_HEADER.match(line.strip())
        if m:
            fields = m.group(2).split(",")
            for row in lines[i + 1:i + 1 + int(m.group(1))]:
                vals = row.split("|")
                if len(vals) == len(fields):
                    rows.append(dict(zip(fields, vals)))
    return rows


def parse_gcf_fields(text):
    """agent-lsp's `Key=value` lines (a value may be a JSON string)."""
    out = {}
    for line in text.split("\n"):
        k, eq, v = line.partition("=")
        if eq and re.fullmatch(r"[A-Za-z]+", k):
            if v.startswith('"'):
                try:
                    v = json.loads(v)
                except json.JSONDecodeError:
                    pass
            out[k] = v
    return out


class AgentLsp:
    name = "agent-lsp"

    def __init__(self, binary, ws):
        self.binary, self.ws = str(binary), ws
        self.stop_brokers()

    def stop_brokers(self):
        """agent-lsp leaves a `daemon-broker` (with its Pyright) running per workspace after the
        session ends (~/.cache/agent-lsp/daemons/*/daemon.json). Stop the one of this workspace
        (a process this script started), so each run starts cold and nothing runs on after."""
        for info in (CACHE / "agent-lsp" / "daemons").glob("*/daemon.json"):
            try:
                d = json.loads(info.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            if d.get("root_dir") != str(self.ws) or not d.get("pid"):
                continue
            try:
                os.kill(int(d["pid"]), signal.SIGTERM)
            except ProcessLookupError:
                pass
            for _ in range(50):
                if not info.exists():
                    break
                time.sleep(0.2)
            shutil.rmtree(info.parent, ignore_errors=True)

    def params(self):
        return StdioServerParameters(
            command="nice", args=[self.binary, f"python:{pyright_langserver()},--stdio"],
            cwd=str(self.ws), env=dict(os.environ))

    async def prepare(self, s):
        # without start_lsp its calls time out (it has no root); the call is part of its start
        res = await s.call_tool("start_lsp", {"root_dir": str(self.ws), "language_id": "python"},
                                read_timeout_seconds=CALL_TIMEOUT)
        if res.is_error:
            raise RuntimeError(f"agent-lsp start_lsp: {joined_text(res)}")

    def version(self):
        return subprocess.run([self.binary, "--version"], capture_output=True,
                              text=True).stdout.strip()

    def close(self):
        self.stop_brokers()

    @staticmethod
    def language_server(res):
        """agent-lsp does not say; it runs the command it was given."""
        return {"name": "pyright", "version": PYRIGHT, "command": str(pyright_langserver())}

    def rel(self, path):
        p = Path(path)
        try:
            return p.relative_to(self.ws).as_posix()
        except ValueError:
            return str(p)

    def at(self, pos):
        return {"file_path": str(self.ws / pos.path), "line": pos.line, "column": pos.col}

    def locs(self, res):
        if res.is_error:
            return []
        return [pa.Pos(self.rel(r["FilePath"]), int(r["StartLine"]), int(r["StartCol"]))
                for r in parse_gcf_rows(joined_text(res)) if "FilePath" in r]

    async def definition(self, s, pos):
        res = await s.call_tool("go_to_definition", self.at(pos),
                                read_timeout_seconds=CALL_TIMEOUT)
        return res, self.locs(res)

    async def references(self, s, pos):
        res = await s.call_tool("find_references", {**self.at(pos), "include_declaration": True},
                                read_timeout_seconds=CALL_TIMEOUT)
        return res, set(self.locs(res))

    async def source(self, s, pos):
        res = await s.call_tool("get_symbol_source", self.at(pos),
                                read_timeout_seconds=CALL_TIMEOUT)
        if res.is_error:
            return res, None
        f = parse_gcf_fields(joined_text(res))
        if "Source" not in f or "StartLine" not in f:
            return res, None
        return res, (int(f["StartLine"]), f["Source"])


    async def replace_body(self, s, d, qualname, body, ws):
        """`replace_symbol_body` writes; the file is read back (the caller restores it)."""
        res = await s.call_tool("replace_symbol_body", {
            "file_path": str(ws / d.at.path), "symbol_path": qualname, "new_body": body},
            read_timeout_seconds=CALL_TIMEOUT)
        return res, None

    async def delete(self, s, d, qualname, ws):
        res = await s.call_tool("safe_delete_symbol", {
            "file_path": str(ws / d.at.path), "symbol_path": qualname},
            read_timeout_seconds=CALL_TIMEOUT)
        return res, None


# ---------------------------------------------------------------- measuring one server


async def timed(coro):
    t = time.perf_counter()
    try:
        res, val = await coro
    except Exception as e:  # a call that failed or timed out is a wrong answer, timed as spent
        return (time.perf_counter() - t) * 1000, None, None, repr(e)
    return (time.perf_counter() - t) * 1000, res, val, None


def def_right(locs, want: pa.Definition):
    """Right when the answer is exactly the definition the name binds to (line and column of its
    name); `near` when one of several answers, or the right line at another column."""
    if locs == [want.at]:
        return "right"
    if any(l.path == want.at.path and l.line == want.at.line for l in (locs or [])):
        return "near"
    return "wrong"


def source_right(got, d: pa.Definition, lines):
    """The whole definition, decorators through its last line, or at least `def` to the end."""
    if got is None:
        return "none"
    first, text = got
    text_lines = text.rstrip("\n").split("\n")
    whole = "\n".join(lines[d.first_line - 1:d.last_line])
    from_def = "\n".join(lines[d.at.line - 1:d.last_line])
    if first == d.first_line and "\n".join(text_lines) == whole:
        return "whole"
    if from_def in text:
        return "from def"
    return "wrong"


def shifted(pos, path, k):
    return pa.Pos(pos.path, pos.line + k, pos.col) if pos.path == path else pos


def shifted_def(d: pa.Definition, path, k):
    if d.at.path != path:
        return d
    return pa.Definition(d.name, shifted(d.at, path, k), d.first_line + k, d.last_line + k)


async def measure(server, ws, plan, rounds, sections=("reads", "edits")):
    out = {"server": server.name, "version": server.version(), "load_before": os.getloadavg()}
    t0 = time.perf_counter()
    async with stdio_client(server.params()) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await server.prepare(s)
            out["ready_s"] = time.perf_counter() - t0
            names = [t.name for t in (await s.list_tools()).tools]
            out["tools"], out["tool_names"] = len(names), names
            first, tries, deadline = plan["calls"][0], 0, time.time() + 600
            while time.time() < deadline:
                tries += 1
                ms, res, locs, err = await timed(server.definition(s, first.at))
                if def_right(locs, first.target) == "right":
                    break
                await asyncio.sleep(0.5)
            out["first_answer"] = {"s": time.perf_counter() - t0, "tries": tries,
                                   "right": def_right(locs, first.target) == "right"}
            out["language_server"] = server.language_server(res)
            if "reads" in sections:
                out["definitions"] = await definitions(server, s, plan["calls"], rounds)
                out["references"] = await references(server, s, plan["refs"])
                out["source"] = await sources(server, s, ws, plan["sources"])
                out["fresh"] = await freshness(server, s, ws, plan["fresh"])
            if "edits" in sections:
                out["edits"] = await pe.run(server, s, ws, plan["edits"], timed, text_bytes, med)
    server.close()
    out["load_after"] = os.getloadavg()
    return out


async def definitions(server, s, calls, rounds):
    first, repeat, verdicts, sizes, errors = [], [], [], [], []
    for rnd in range(1 + rounds):
        for c in calls:
            ms, res, locs, err = await timed(server.definition(s, c.at))
            (first if rnd == 0 else repeat).append(ms)
            if rnd == 0:
                v = def_right(locs, c.target)
                verdicts.append(v)
                sizes.append(text_bytes(res) if res else 0)
                if v != "right":
                    errors.append({"at": pa_str(c.at), "want": pa_str(c.target.at),
                                   "got": [pa_str(l) for l in locs or []], "error": err})
    return {"n": len(calls), "right": verdicts.count("right"), "near": verdicts.count("near"),
            "first_ms": med(first), "repeat_ms": med(repeat), "repeat_n": len(repeat),
            "text_bytes": med(sizes), "misses": errors[:10],
            "samples_ms": {"first": [round(x) for x in first], "repeat": [round(x) for x in repeat]}}


async def references(server, s, targets):
    rows = []
    for d, truth in targets:
        ms, res, got, err = await timed(server.references(s, d.at))
        got = got or set()
        rows.append({"name": d.name, "at": pa_str(d.at), "true": len(truth),
                     "found": len(got & set(truth)), "extra": len(got - set(truth)),
                     "ms": ms, "text_bytes": text_bytes(res) if res else 0, "error": err,
                     "missed": [pa_str(p) for p in sorted(set(truth) - got)][:5],
                     "extras": [pa_str(p) for p in sorted(got - set(truth))][:5]})
    true, found = sum(r["true"] for r in rows), sum(r["found"] for r in rows)
    return {"n": len(rows), "true": true, "found": found, "extra": sum(r["extra"] for r in rows),
            "complete": sum(r["found"] == r["true"] for r in rows),
            "ms": med([r["ms"] for r in rows]), "text_bytes": med([r["text_bytes"] for r in rows]),
            "rows": rows}


async def sources(server, s, ws, defs):
    verdicts, times, sizes, misses = [], [], [], []
    for d in defs:
        lines = (ws / d.at.path).read_text(encoding="utf-8").split("\n")
        ms, res, got, err = await timed(server.source(s, d.at))
        v = source_right(got, d, lines)
        verdicts.append(v)
        times.append(ms)
        sizes.append(text_bytes(res) if res else 0)
        if v != "whole":
            misses.append({"at": pa_str(d.at), "verdict": v, "error": err,
                           "got_first_line": got[0] if got else None})
    return {"n": len(defs), "whole": verdicts.count("whole"),
            "from_def": verdicts.count("from def"), "ms": med(times), "text_bytes": med(sizes),
            "misses": misses[:10]}


async def freshness(server, s, ws, calls):
    """Per call site (its target in another file): insert k comment lines atop the target's file
    and ask at once; then atop the caller's file and ask at the moved site; then put both files
    back and ask again. No notice is given to either server."""
    verdicts, times = [], []
    for k, c in enumerate(calls, start=1):
        tfile, cfile = ws / c.target.at.path, ws / c.at.path
        t_orig, c_orig = tfile.read_bytes(), cfile.read_bytes()
        pad = b"# an outside edit\n" * k
        try:
            steps = [
                (lambda: tfile.write_bytes(pad + t_orig), c.at, shifted_def(c.target, tfile_rel(c), k)),
                (lambda: cfile.write_bytes(pad + c_orig), shifted(c.at, c.at.path, k),
                 shifted_def(c.target, tfile_rel(c), k)),
                (lambda: (tfile.write_bytes(t_orig), cfile.write_bytes(c_orig)), c.at, c.target),
            ]
            for write, at, want in steps:
                write()
                ms, res, locs, err = await timed(server.definition(s, at))
                verdicts.append(def_right(locs, want))
                times.append(ms)
        finally:
            tfile.write_bytes(t_orig)
            cfile.write_bytes(c_orig)
    return {"n": len(verdicts), "right": verdicts.count("right"), "ms": med(times),
            "verdicts": verdicts}


def tfile_rel(c):
    return c.target.at.path


def med(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 1) if xs else None


def pa_str(p):
    return f"{p.path}:{p.line}:{p.col}"


# ---------------------------------------------------------------- the plan, the run, the table


def make_plan(name, quick):
    _, _, _, under = PROJECTS[name]
    proj = pa.Project(project_source(name), under)
    n_def, n_ref, n_src, n_fresh, n_edit = (8, 4, 5, 2, 3) if quick else (20, 8, 10, 4, 6)
    calls = proj.call_sites()
    cross = [c for c in calls if c.at.path != c.target.at.path]
    picked = pa.pick(calls, n_def, SEED)
    # the first-answer call crosses files: the server must have read more than the open file
    first = pa.pick(cross, 1, SEED + 1)
    picked = first + [c for c in picked if c != first[0]][:n_def - 1]
    targets = sorted(proj.reference_targets().items(), key=lambda kv: kv[0].at)
    rich = [(d, occ) for d, occ in targets if len(occ) >= 3 and len({p.path for p in occ}) >= 2]
    refs = pa.pick(rich, n_ref, SEED + 2)
    seen, defs = set(), []
    for c in pa.pick(calls, 4 * n_src, SEED + 3):
        if c.target not in seen:
            seen.add(c.target)
            defs.append(c.target)
    fresh = pa.pick(cross, n_fresh, SEED + 4)
    return {"calls": picked, "refs": refs, "sources": defs[:n_src], "fresh": fresh,
            "edits": pe.plan(proj, n_edit, SEED + 5),
            "scan": {"modules": len(proj.modules), "call_sites": len(calls),
                     "reference_names": len(targets)}}


def describe_plan(plan):
    return {"calls": [pa_str(c.at) for c in plan["calls"]],
            "refs": [pa_str(d.at) for d, _ in plan["refs"]],
            "sources": [pa_str(d.at) for d in plan["sources"]],
            "fresh": [pa_str(c.at) for c in plan["fresh"]], "edits": pe.describe(plan["edits"]),
            "scan": plan["scan"]}


def node_version():
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return None


ROWS = [
    ("MCP tools listed", lambda r: str(r["tools"])),
    ("first correct answer, from spawn (s)", lambda r: f"{r['first_answer']['s']:.1f}"
     + ("" if r["first_answer"]["right"] else " (never right)")),
    ("definitions right (exact location)", lambda r: f"{r['definitions']['right']}/{r['definitions']['n']}"),
    ("definition, first ask, median ms", lambda r: fmt(r["definitions"]["first_ms"])),
    ("definition, repeated, median ms", lambda r: fmt(r["definitions"]["repeat_ms"])),
    ("definition text, median bytes", lambda r: fmt(r["definitions"]["text_bytes"])),
    ("true references found", lambda r: f"{r['references']['found']}/{r['references']['true']}"),
    ("names with every reference", lambda r: f"{r['references']['complete']}/{r['references']['n']}"),
    ("references not in the code", lambda r: str(r["references"]["extra"])),
    ("references, median ms", lambda r: fmt(r["references"]["ms"])),
    ("references text, median bytes", lambda r: fmt(r["references"]["text_bytes"])),
    ("symbol source whole (decorators to end)", lambda r: f"{r['source']['whole']}/{r['source']['n']}"
     + (f" (+{r['source']['from_def']} from `def`)" if r["source"]["from_def"] else "")),
    ("symbol source, median ms", lambda r: fmt(r["source"]["ms"])),
    ("symbol source text, median bytes", lambda r: fmt(r["source"]["text_bytes"])),
    ("right after outside edits, no notice", lambda r: f"{r['fresh']['right']}/{r['fresh']['n']}"),
    ("body replaced right, body given at column 0", lambda r: edit_row(r, "replace_col0")),
    ("body replaced right, body given indented as in the file",
     lambda r: edit_row(r, "replace_indented")),
    ("replace body, median ms", lambda r: edit_row(r, "replace", "ms")),
    ("replace body text, median bytes", lambda r: edit_row(r, "replace", "text_bytes")),
    ("safe delete of an unused function right", lambda r: edit_row(r, "unused")),
    ("safe delete of a used function refused, file untouched", lambda r: edit_row(r, "used")),
    ("safe delete, median ms", lambda r: edit_row(r, "delete", "ms")),
    ("safe delete text, median bytes", lambda r: edit_row(r, "delete", "text_bytes")),
]


def edit_row(r, kind, field=None):
    """A cell of the symbol edits' rows: right/n, or the median `field` over the kind's rows
    (`replace`: both body forms; `delete`: used and unused)."""
    e = r.get("edits")
    if not e:
        return "-"
    if field is None:
        return f"{e[kind]['right']}/{e[kind]['n']}"
    kinds = {"replace": ("replace_col0", "replace_indented"), "delete": ("used", "unused")}
    return fmt(med([row[field] for k in kinds[kind] for row in e[k]["rows"]]))


def fmt(x):
    return "-" if x is None else (f"{x:.0f}" if x >= 10 else f"{x:.1f}")


def table(results):
    names = list(results["projects"])
    head = ["measure"] + [f"{p} {s}" for p in names for s in ("lanser", "agent-lsp")]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, f in ROWS:
        cells = [label]
        for p in names:
            for s in ("lanser", "agent-lsp"):
                r = results["projects"][p].get(s)
                cells.append(f(r) if r else "-")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def served(results):
    for r in results["projects"].values():
        ls = (r.get("lanser") or {}).get("language_server")
        if ls:
            return f"{ls.get('name')} {ls.get('version')}"
    return "no server"


def markdown(results):
    m = results["meta"]
    loads = ", ".join(f"{p}: {r[s]['load_before'][0]:.1f}→{r[s]['load_after'][0]:.1f} ({s})"
                      for p, r in results["projects"].items() for s in ("lanser", "agent-lsp")
                      if s in r)
    sizes = ", ".join(f"{p} {PROJECTS[p][0].split('==')[1]} ({r['plan']['scan']['modules']} "
                      "Python files scanned)" for p, r in results["projects"].items())
    return "\n".join([
        "# lanser and agent-lsp on the same calls",
        "",
        f"Measured {m['date']} by `benches/peers.py{' --quick' if m['quick'] else ''}` "
        f"on {m['machine']}: {m['lanser']} and agent-lsp {m['agent_lsp']} "
        f"(PyPI), both over Pyright {PYRIGHT} (the same install; lanser's bundles name "
        f"{served(results)}) on Node.js {m['node']}, both "
        f"driven by the official MCP Python SDK `mcp` {m['mcp']} over stdio. Projects (PyPI "
        f"sdists): {sizes}. Positions are seeded (seed {SEED}) picks from the files' `ast`, the "
        "same for both; every answer is checked against the files. Load average (1 min) before"
        f"→after each server's run: {loads}. Latencies are medians; the machine was shared.",
        *sections_note(results),
        "",
        table(results),
        "",
        "Where answers were not right (file of each miss; `benches/PEERS.json` has them all):",
        "",
        *misses(results),
        "",
    ])


def sections_note(results):
    """The sections measured later by `--only`, with their date, projects and load."""
    out = []
    for name, sec in results["meta"].get("sections", {}).items():
        loads = ", ".join(
            f"{p}: {r[s][name + '_run']['load_before'][0]:.1f}→"
            f"{r[s][name + '_run']['load_after'][0]:.1f} ({s})"
            for p, r in results["projects"].items() for s in ("lanser", "agent-lsp")
            if name + "_run" in r.get(s, {}))
        out += ["", SECTION_NOTES[name].format(date=sec["date"], lanser=sec["lanser"],
                                               projects=", ".join(sec["projects"]),
                                               loads=loads)]
    return out


SECTION_NOTES = {"edits": (
    "The symbol-edit rows were measured {date} by `benches/peers.py --only edits` ({lanser}; "
    "on {projects}; load {loads}): lanser `edit` (MCP tool `edit`, `mode` `replace_body` or "
    "`delete`) as previews, which write nothing, the text they would write checked; agent-lsp "
    "`replace_symbol_body` and `safe_delete_symbol`, which write, the file read back, checked "
    "and put back. Same functions for both (seeded picks from `ast`, one per file); each body "
    "is given twice, at column 0 and indented as the function's body is in the file. Right: "
    "the file parses, the function's statements are the given ones (its docstring may stay) "
    "and nothing else in the module changed (`ast`); a delete leaves the module without it; a "
    "used function (three or more uses in two or more files) is refused with the file "
    "untouched. lanser's answers carry the diagnostics the edit would add or remove, which "
    "Pyright measures before it answers (most of its time); agent-lsp's carry none.")}


def misses(results):
    out = []
    for p, r in results["projects"].items():
        for s in ("lanser", "agent-lsp"):
            x = r.get(s)
            if not x:
                continue
            files = {
                "definition": [m["at"] for m in x["definitions"]["misses"]],
                "references": [f"{row['name']} {row['found']}/{row['true']}"
                               for row in x["references"]["rows"] if row["found"] != row["true"]],
                "source": [m["at"] for m in x["source"]["misses"]],
                "after edits": [pa_str_site(site) for site, v in zip(
                    [c for c in r["plan"]["fresh"] for _ in range(3)], x["fresh"]["verdicts"])
                    if v != "right"],
            }
            if x.get("edits"):
                files["symbol edits"] = [f"{k} {row['at']} ({row['verdict']})"
                                         for k, e in x["edits"].items() for row in e["rows"]
                                         if row["verdict"] not in ("right", "refused")]
            got = "; ".join(f"{k}: {', '.join(sorted(set(v)))}" for k, v in files.items() if v)
            out.append(f"- {p}, {s}: {got or 'none'}")
    return out


def pa_str_site(site):
    return site.rsplit(":", 2)[0]


async def run(args):
    lanser_bin = Path(args.lanser).resolve()
    agent = agent_lsp_binary()
    import importlib.metadata as md
    if args.only:
        return await run_only(args, lanser_bin, agent)
    results = {"meta": {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "quick": args.quick,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "lanser": subprocess.run([str(lanser_bin), "--version"], capture_output=True,
                                 text=True).stdout.strip(),
        "agent_lsp": AGENT_LSP, "pyright": PYRIGHT, "node": node_version(),
        "mcp": md.version("mcp"), "seed": SEED}, "projects": {}}
    for name in args.projects.split(","):
        print(f"peers: {name}: scanning", file=sys.stderr, flush=True)
        plan = make_plan(name, args.quick)
        res = {"plan": describe_plan(plan)}
        for cls, binary in ((Lanser, lanser_bin), (AgentLsp, agent)):
            ws = fresh_copy(name, cls.name)
            print(f"peers: {name}: {cls.name}", file=sys.stderr, flush=True)
            res[cls.name] = await measure(cls(binary, ws), ws, plan, args.rounds)
            print(json.dumps({k: v for k, v in res[cls.name].items()
                              if k in ("first_answer", "tools")}), file=sys.stderr, flush=True)
        results["projects"][name] = res
        write(results, args)
    print(table(results))


async def run_only(args, lanser_bin, agent):
    """`--only SECTION`: measure that section on --projects and merge it into the results file
    a full run wrote (its other measures stay, with their own date)."""
    out = Path(args.out).with_suffix(".json")
    if not out.exists():
        raise SystemExit(f"--only merges into a full run's results: no {out}")
    results = json.loads(out.read_text())
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    version = subprocess.run([str(lanser_bin), "--version"], capture_output=True,
                             text=True).stdout.strip()
    build = "debug" if "debug" in lanser_bin.parts else "release"
    results["meta"].setdefault("sections", {})[args.only] = {
        "date": when, "projects": args.projects.split(","), "lanser": f"{version}, {build} build"}
    for name in args.projects.split(","):
        print(f"peers: {name}: scanning", file=sys.stderr, flush=True)
        plan = make_plan(name, args.quick)
        res = results["projects"].setdefault(name, {"plan": describe_plan(plan)})
        res["plan"][args.only] = describe_plan(plan)[args.only]
        for cls, binary in ((Lanser, lanser_bin), (AgentLsp, agent)):
            ws = fresh_copy(name, cls.name)
            print(f"peers: {name}: {cls.name} ({args.only})", file=sys.stderr, flush=True)
            got = await measure(cls(binary, ws), ws, plan, args.rounds, (args.only,))
            mine = res.setdefault(cls.name, {})
            mine[args.only] = got[args.only]
            mine[f"{args.only}_run"] = {k: got[k] for k in ("version", "load_before",
                                                             "load_after", "tools")}
        write(results, args)
    print(table(results))


def write(results, args):
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    out.with_suffix(".md").write_text(markdown(results))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="httpx only, a few positions")
    ap.add_argument("--projects", help="comma-separated, of: " + ",".join(PROJECTS))
    ap.add_argument("--rounds", type=int, help="repeat rounds over the definition positions")
    ap.add_argument("--lanser", default=str(REPO / "target" / "release" / "lanser"))
    ap.add_argument("--out", help="results path without suffix (.json and .md are written)")
    ap.add_argument("--only", choices=["edits"],
                    help="measure only this section on --projects, merged into --out's results")
    a = ap.parse_args()
    a.projects = a.projects or ("httpx" if a.quick else ",".join(PROJECTS))
    a.rounds = a.rounds if a.rounds is not None else (2 if a.quick else 3)
    a.out = a.out or str(REPO / "benches" / ("PEERS-quick" if a.quick else "PEERS"))
    asyncio.run(run(a))


if __name__ == "__main__":
    main()

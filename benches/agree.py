#!/usr/bin/env python3
"""agree.py - does `lanser` agree with raw Pyright on a real project?

What it checks
  For a fixed list of definition and references queries in requests 2.32.3 (the unmodified
  sdist fetched by benches/fetch-thirdparty.sh), it asks the question twice:
    * lanser:   `lanser def|refs PATH@L<line>:<identifier>[#N] --workspace WS --json`
                (one fresh lanser process per query; facts.definitions / facts.references)
    * raw:      one /work/shared/tools/lsp_probe.py process that opens the query files,
                waits for "Found N source files" (Pyright's readiness signal, see
                PYRIGHT_BASELINE.md §5) and sends every query as def:FILE:LINE:COL /
                refs:FILE:LINE:COL. The full LSP answers (ranges included) are read back
                from the probe's --trace file, because the probe's JSON summary only
                carries start positions.
  and compares the SETS of (absolute file, 0-based UTF-16 [sL, sC, eL, eC]) per query.
  lanser's workspace-relative paths are mapped back to absolute paths; files outside the
  workspace (`typeshed://X`, `site-packages://X`) are compared by path suffix
  (".../typeshed-fallback/X", ".../site-packages/X"). Pyright's reference order is not
  stable, so order and duplicates are ignored (duplicates in the raw answer are reported).

  Queries are written as (file, line-needle, identifier[, occurrence]) and resolved to line
  numbers at run time by searching the source text, so the list survives small edits. The
  identifier's column for the probe is computed here (N-th whole-word occurrence on the
  line, 1-based code points), independently of lanser's own selector resolution.

Usage (from /work/main, after `cargo build --release`)
  python3 benches/agree.py                      # fetches the workspace if needed
  python3 benches/agree.py --workspace DIR --lanser target/release/lanser \
      --probe /work/shared/tools/lsp_probe.py -v
  python3 benches/agree.py --per-query          # one probe process per query (only the
                                                # query's file open), slower

Exit status: 0 all queries agree, 1 at least one disagreement, 2 setup/run failure.
Python 3.11, standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

REPO = Path(__file__).resolve().parent.parent
# One fresh lanser process per query, as documented: no warm daemon.
os.environ.setdefault("LANSER_NO_DAEMON", "1")

# The same Pyright build lanser pins and installs (`lanser setup`); `~` expanded for shlex.
DEFAULT_SERVER = ("node " + os.path.expanduser("~/.cache/lanser/pyright/1.1.407")
                  + "/node_modules/pyright/langserver.index.js --stdio")
PKG = "src/requests/"

# ----------------------------------------------------------------------------- the queries
# (file under src/requests/, line needle, identifier, occurrence of the identifier on that
# line). The needle must identify one line: the FIRST line containing it is used; append
# "#K" to the needle to take the K-th matching line instead.

DEF_QUERIES: list[tuple[str, str, str, int]] = [
    # api.py
    ("api.py", "return session.request(", "request", 1),             # method via `with` target
    ("api.py", "with sessions.Session() as session", "Session", 1),   # class through a module
    ("api.py", "with sessions.Session() as session", "sessions", 1),  # module itself
    ("api.py", 'return request("get", url', "request", 1),           # module-level function
    # sessions.py
    ("sessions.py", "prepared_request.url = to_native_string(url)", "to_native_string", 1),
    ("sessions.py", 'self.mount("https://", HTTPAdapter())', "HTTPAdapter", 1),
    ("sessions.py", "params=merge_setting(request.params, self.params)", "merge_setting", 1),
    ("sessions.py", "prep = self.prepare_request(req)", "prepare_request", 1),
    ("sessions.py", "resp = self.send(prep, **send_kwargs)", "send", 1),
    ("sessions.py", "adapter = self.get_adapter(url=request.url)", "get_adapter", 1),
    ("sessions.py", "gen = self.resolve_redirects(r, request, **kwargs)", "resolve_redirects", 1),
    ("sessions.py", 'r = dispatch_hook("response", hooks, r, **kwargs)', "dispatch_hook", 1),
    ("sessions.py", "old_parsed = urlparse(old_url)", "urlparse", 1),  # re-export via compat
    ("sessions.py", 'os.environ.get("REQUESTS_CA_BUNDLE")', "get", 1),   # typeshed Mapping.get
    ("sessions.py", 'return self.request("GET", url, **kwargs)', "request", 1),
    ("sessions.py", 'url = ":".join([to_native_string(parsed_rurl.scheme), url])', "join", 1),  # str.join
    # models.py
    ("models.py", "p = PreparedRequest()", "PreparedRequest", 1),
    ("models.py", "length = super_len(data)", "super_len", 1),
    ("models.py", "self.headers = CaseInsensitiveDict()", "CaseInsensitiveDict", 1),
    ("models.py", "url = requote_uri(urlunparse(", "urlunparse", 1),
    # adapters.py
    ("adapters.py", "self.poolmanager = PoolManager(", "PoolManager", 1),  # site-packages urllib3
    ("adapters.py", "response = Response()", "Response", 1),
    ("adapters.py", "extract_cookies_to_jar(response.cookies, req, resp)", "extract_cookies_to_jar", 1),
    ("adapters.py", "warnings.warn(", "warn", 1),                       # typeshed warnings
    # utils.py
    ("utils.py", 'netrc_file = os.environ.get("NETRC")', "environ", 1),
    ("utils.py", "charset_re = re.compile(", "compile", 1),            # typeshed overloads
    ("utils.py", "    to_native_string,", "to_native_string", 1),      # name in an import list
    ("utils.py", "return os.environ.get(key) or os.environ.get(key.upper())", "key", 2),  # parameter
]

REFS_QUERIES: list[tuple[str, str, str, int]] = [
    ("sessions.py", "prepared_request.url = to_native_string(url)", "to_native_string", 1),
    ("api.py", "def get(url, params=None, **kwargs):", "get", 1),
    ("sessions.py", "def merge_setting(", "merge_setting", 1),
    ("adapters.py", "class HTTPAdapter(BaseAdapter):", "HTTPAdapter", 1),
    ("sessions.py", "class Session(SessionRedirectMixin):", "Session", 1),
    ("utils.py", "def super_len(o):", "super_len", 1),
    ("models.py", "class PreparedRequest(", "PreparedRequest", 1),
    ("sessions.py", "def prepare_request(self, request):", "prepare_request", 1),
    ("api.py", "return session.request(", "session", 1),              # local `with` target
    ("adapters.py", "warnings.warn(", "warn", 1),                       # stdlib symbol
]


# ----------------------------------------------------------------------------- helpers

@dataclass
class Query:
    kind: str                    # "def" | "refs"
    file: str                    # workspace-relative
    needle: str
    ident: str
    nth: int
    line: int = 0                # 1-based
    col: int = 0                 # 1-based, code points
    lanser: set | None = None
    lanser_err: str | None = None
    raw: set | None = None
    raw_n: int = 0               # length of the raw list (duplicates included)
    raw_err: str | None = None
    raw_first: str = ""

    @property
    def selector(self) -> str:
        suffix = f"#{self.nth}" if self.nth > 1 else ""
        return f"{self.file}@L{self.line}:{self.ident}{suffix}"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.selector}"


def resolve(ws: Path, q: Query) -> None:
    """Needle -> 1-based line; identifier occurrence -> 1-based code-point column."""
    needle, k = q.needle, 1
    m = re.fullmatch(r"(.*)#(\d+)", needle)
    if m:
        needle, k = m.group(1), int(m.group(2))
    lines = (ws / q.file).read_text(encoding="utf-8").split("\n")
    hits = [i for i, text in enumerate(lines) if needle in text]
    if len(hits) < k:
        raise ValueError(f"needle {q.needle!r} not found ({len(hits)} hits) in {q.file}")
    i = hits[k - 1]
    occ = [mm.start() for mm in re.finditer(rf"(?<!\w){re.escape(q.ident)}(?!\w)", lines[i])]
    if len(occ) < q.nth:
        raise ValueError(f"{q.ident!r} #{q.nth} not on line {i + 1} of {q.file}: {lines[i]!r}")
    q.line, q.col = i + 1, occ[q.nth - 1] + 1


def key_of_abs(ws_real: str, abs_path: str) -> str:
    """Canonical comparison key of an absolute path from the server."""
    p = os.path.realpath(abs_path)
    if p == ws_real or p.startswith(ws_real + os.sep):
        return p
    s = abs_path.replace("\\", "/")
    i = s.find("/typeshed-fallback/")
    if i >= 0:
        return "typeshed://" + s[i + len("/typeshed-fallback/"):]
    for marker in ("/site-packages/", "/dist-packages/"):
        i = s.rfind(marker)
        if i >= 0:
            return "site-packages://" + s[i + len(marker):]
    return p


def key_of_lanser(ws: Path, path: str) -> str:
    """lanser's path -> the same canonical key (workspace-relative -> absolute)."""
    if path.startswith(("typeshed://", "site-packages://")):
        return path
    if path.startswith("file://"):
        return os.path.realpath(unquote(urlparse(path).path))
    return os.path.realpath(ws / path)


def short(ws_real: str, key: str) -> str:
    return key[len(ws_real) + 1:] if key.startswith(ws_real + os.sep) else key


def fmt_loc(ws_real: str, loc: tuple) -> str:
    key, (sl, sc, el, ec) = loc
    return f"{short(ws_real, key)} [{sl},{sc},{el},{ec}]"


# ----------------------------------------------------------------------------- lanser side

def run_lanser(args, ws: Path, q: Query) -> None:
    cmd = [args.lanser, q.kind, q.selector, "--workspace", str(ws), "--json",
           "--timeout", str(args.timeout)]
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout + 30)
    except subprocess.TimeoutExpired:
        q.lanser_err = "timeout"
        return
    line = cp.stdout.strip().splitlines()[-1] if cp.stdout.strip() else ""
    try:
        bundle = json.loads(line)
    except json.JSONDecodeError:
        q.lanser_err = f"exit {cp.returncode}, no JSON: {(cp.stderr or cp.stdout).strip()[:300]}"
        return
    if bundle.get("status") != "ok" or bundle.get("error"):
        q.lanser_err = f"status={bundle.get('status')} error={json.dumps(bundle.get('error'))[:300]}"
        return
    facts = bundle.get("facts") or {}
    items = facts.get("definitions" if q.kind == "def" else "references")
    if items is None:
        q.lanser_err = f"no facts list in bundle: {json.dumps(facts)[:300]}"
        return
    q.lanser = {(key_of_lanser(ws, it["path"]), tuple(it["range"])) for it in items}


# ----------------------------------------------------------------------------- raw side

def run_probe(args, ws: Path, queries: list[Query]) -> None:
    """One probe process for `queries`; fills q.raw / q.raw_err from the --trace file."""
    ws_real = os.path.realpath(ws)
    files = sorted({q.file for q in queries})
    ops = [f"open:{f}" for f in files] + [r"waitlog:Found \d+ source files:" + str(args.timeout)]
    ops += [f"{q.kind}:{q.file}:{q.line}:{q.col}" for q in queries]
    with tempfile.TemporaryDirectory(prefix="agree-") as td:
        trace = Path(td) / "trace.log"
        cmd = [sys.executable, args.probe, str(ws), *ops, "--full", "--trace", str(trace),
               "--server", args.server, "--timeout", str(args.timeout)]
        if args.verbose:
            print("+ " + shlex.join(cmd), file=sys.stderr)
        cp = subprocess.run(cmd, capture_output=True, text=True)
        if cp.returncode != 0:
            for q in queries:
                q.raw_err = f"probe exit {cp.returncode}: {cp.stderr.strip()[-300:]}"
            return
        summary = json.loads(cp.stdout)
        run = summary["runs"][0] if "runs" in summary else summary
        wait = [o for o in run.get("ops", []) if o["op"] == "waitlog"]
        if not wait or wait[0].get("timeout"):
            for q in queries:
                q.raw_err = "probe: readiness log 'Found N source files' never arrived"
            return
        # Pair client requests (">> … {method,id}") with server responses ("<< … {id}").
        sent: list[int] = []
        answers: dict[int, dict] = {}
        for ln in trace.read_text(encoding="utf-8").splitlines():
            direction, _, rest = ln.partition(" ")
            _, _, body = rest.partition(" ")
            msg = json.loads(body)
            if direction == ">>" and msg.get("method") in (
                    "textDocument/definition", "textDocument/references"):
                sent.append(msg["id"])
            elif direction == "<<" and "method" not in msg and "id" in msg:
                answers[msg["id"]] = msg
    if len(sent) != len(queries):
        for q in queries:
            q.raw_err = f"probe sent {len(sent)} requests for {len(queries)} queries"
        return
    for q, rid in zip(queries, sent):
        msg = answers.get(rid)
        if msg is None:
            q.raw_err = "no response"
            continue
        if "error" in msg:
            q.raw_err = f"LSP error {msg['error']}"
            continue
        res = msg.get("result")
        items = [] if res is None else (res if isinstance(res, list) else [res])
        locs = []
        for it in items:
            if "targetUri" in it:   # LocationLink: the same choice lanser and the probe make
                uri, rng = it["targetUri"], it.get("targetSelectionRange") or it["targetRange"]
            else:
                uri, rng = it["uri"], it["range"]
            s, e = rng["start"], rng["end"]
            locs.append((key_of_abs(ws_real, unquote(urlparse(uri).path)),
                         (s["line"], s["character"], e["line"], e["character"])))
        q.raw_n = len(locs)
        q.raw = set(locs)
        if locs:
            q.raw_first = fmt_loc(ws_real, locs[0])


# ----------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", help="requests-2.32.3 checkout (default: run "
                    "benches/fetch-thirdparty.sh and use the path it prints)")
    ap.add_argument("--lanser", default=str(REPO / "target/release/lanser"), help="lanser binary")
    ap.add_argument("--probe", default=str(REPO.parent / "shared/tools/lsp_probe.py"), help="raw LSP probe (shared/ beside the repo)")
    ap.add_argument("--server", default=DEFAULT_SERVER,
                    help="raw server command for the probe (default: the pinned Pyright lanser installs)")
    ap.add_argument("--timeout", type=float, default=60.0, help="per-request timeout, seconds")
    ap.add_argument("--per-query", action="store_true",
                    help="one probe process per query (only that file open) instead of one batch")
    ap.add_argument("--only", help="regex: run only queries whose label matches")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every location of every query")
    args = ap.parse_args(argv)

    if not Path(args.lanser).is_file():
        print(f"lanser binary not found: {args.lanser} (cargo build --release)", file=sys.stderr)
        return 2
    if args.workspace:
        ws = Path(args.workspace).resolve()
    else:
        cp = subprocess.run(["bash", str(REPO / "benches/fetch-thirdparty.sh")],
                            capture_output=True, text=True)
        if cp.returncode != 0:
            print(cp.stderr, file=sys.stderr)
            return 2
        ws = Path(cp.stdout.strip().splitlines()[-1]).resolve()
    ws_real = os.path.realpath(ws)

    queries = [Query("def", PKG + f, n, i, k) for f, n, i, k in DEF_QUERIES]
    queries += [Query("refs", PKG + f, n, i, k) for f, n, i, k in REFS_QUERIES]
    try:
        for q in queries:
            resolve(ws, q)
    except ValueError as e:
        print(f"query list does not match the source: {e}", file=sys.stderr)
        return 2
    if args.only:
        queries = [q for q in queries if re.search(args.only, q.label)]

    t0 = time.perf_counter()
    if args.per_query:
        for q in queries:
            run_probe(args, ws, [q])
    else:
        run_probe(args, ws, queries)
    t_raw = time.perf_counter() - t0
    t0 = time.perf_counter()
    for q in queries:
        run_lanser(args, ws, q)
    t_lanser = time.perf_counter() - t0

    # ------------------------------------------------------------------ report
    w = max(len(q.label) for q in queries)
    print(f"workspace: {ws}")
    print(f"lanser:    {args.lanser}  ({t_lanser:.1f} s for {len(queries)} processes)")
    print(f"raw:       {args.probe} --server {args.server!r}  ({t_raw:.1f} s)")
    print()
    print(f"{'query':<{w}}  {'lanser':>6}  {'pyright':>7}  {'agree':<5}  pyright's first location")
    print(f"{'-' * w}  {'-' * 6}  {'-' * 7}  {'-' * 5}  {'-' * 24}")
    bad, empty = [], 0
    for q in queries:
        ln = "ERR" if q.lanser is None else str(len(q.lanser))
        rw = "ERR" if q.raw is None else str(len(q.raw))
        if q.raw is not None and q.raw_n != len(q.raw):
            rw += f"+{q.raw_n - len(q.raw)}d"   # duplicates in the raw list
        ok = q.lanser is not None and q.raw is not None and q.lanser == q.raw
        if not ok:
            bad.append(q)
        if q.raw is not None and not q.raw:
            empty += 1
        print(f"{q.label:<{w}}  {ln:>6}  {rw:>7}  {'yes' if ok else 'NO':<5}  {q.raw_first or '-'}")
        if args.verbose and q.raw:
            for loc in sorted(q.raw):
                print(f"{'':<{w}}    {fmt_loc(ws_real, loc)}")

    n_def = sum(q.kind == "def" for q in queries)
    print()
    print(f"{len(queries) - len(bad)}/{len(queries)} queries agree "
          f"({n_def} definition, {len(queries) - n_def} references); "
          f"{empty} with an empty raw answer")
    for q in bad:
        print(f"\nDISAGREEMENT  {q.label}   (probe position {q.file}:{q.line}:{q.col})")
        if q.lanser_err:
            print(f"  lanser error:  {q.lanser_err}")
        if q.raw_err:
            print(f"  pyright error: {q.raw_err}")
        if q.lanser is not None and q.raw is not None:
            for loc in sorted(q.lanser - q.raw):
                print(f"  only lanser:   {fmt_loc(ws_real, loc)}")
            for loc in sorted(q.raw - q.lanser):
                print(f"  only pyright:  {fmt_loc(ws_real, loc)}")
            extra, missing = q.lanser - q.raw, q.raw - q.lanser
            if q.kind == "def" and extra and not missing and all(
                    k.endswith(".pyi") for k, _ in extra) and any(
                    not k.endswith(".pyi") for k, _ in q.raw):
                print("  hint: lanser has the extra stub (.pyi) declarations. Pyright filters "
                      "definitions to source files (DefinitionFilter.PreferSource) only when the "
                      "client advertises textDocument.declaration; the probe does, so check "
                      "lanser's initialize capabilities.")
    if any(q.raw_err for q in queries) and all(q.raw is None for q in queries):
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

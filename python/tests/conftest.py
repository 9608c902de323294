"""Fixtures for the SDK tests: a git-committed copy of a fixture project with its own
LANSER_HOME (the pinned Pyright linked in); daemons started on it are stopped at the end.
LANSER_BIN names the binary (tests/cli/sdk.rs sets it to the one cargo built)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
BIN = os.environ.setdefault("LANSER_BIN", str(REPO / "target" / "debug" / "lanser"))


def real_home() -> Path:
    if os.environ.get("LANSER_HOME"):
        return Path(os.environ["LANSER_HOME"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "lanser"
    return Path.home() / ".cache" / "lanser"


def git(root, *args):
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


class Ws:
    def __init__(self, root: Path, home: Path):
        self.root = root
        self.env = {"LANSER_HOME": str(home), "LANSER_DAEMON_IDLE": "300"}

    def cli(self, *args, stdin=None, daemon=False):
        env = {k: v for k, v in os.environ.items() if k not in ("LANSER_NO_DAEMON", "LANSER_SERVER_CMD")}
        env.update(self.env)
        if not daemon:
            env["LANSER_NO_DAEMON"] = "1"
        return subprocess.run([BIN, *args, "--workspace", str(self.root)], input=stdin,
                              capture_output=True, text=True, env=env, timeout=300)

    def bundle(self, *args, stdin=None) -> dict:
        return json.loads(self.cli(*args, "--json", stdin=stdin).stdout)

    def line_of(self, rel, needle) -> int:
        for i, l in enumerate((self.root / rel).read_text().split("\n")):
            if needle in l:
                return i + 1
        raise AssertionError(f"{needle!r} not in {rel}")

    def files(self) -> dict:
        return {p.relative_to(self.root).as_posix(): p.read_bytes() for p in sorted(self.root.rglob("*"))
                if p.is_file() and ".git" not in p.parts}


@pytest.fixture
def make_ws(tmp_path, monkeypatch):
    made = []

    def make(name: str) -> Ws:
        home = tmp_path / f"home-{len(made)}"
        home.mkdir()
        (real_home() / "pyright").mkdir(parents=True, exist_ok=True)
        # Pyright, and the TypeScript server where it is installed (`lanser setup --server`).
        for server in ("pyright", "typescript-language-server"):
            if (real_home() / server).is_dir():
                os.symlink(real_home() / server, home / server)
        root = tmp_path / f"ws-{len(made)}" / name
        shutil.copytree(REPO / "fixtures" / name, root)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "fixture")
        ws = Ws(root.resolve(), home)
        for k, v in ws.env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("LANSER_NO_DAEMON", raising=False)
        made.append(ws)
        return ws

    yield make
    for ws in made:
        ws.cli("daemon", "stop", daemon=True)

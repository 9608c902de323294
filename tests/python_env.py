#!/usr/bin/env python3
"""python_env.py - the Python that the test suite's Python parts run on: a virtual environment
holding tests/requirements.txt's pinned packages (installed by pip, by name), created on first
use and reused after. Prints the path of its python on stdout.

The environment lives in ($XDG_CACHE_HOME or ~/.cache)/lanser-test/venv-<key>, where <key> is a
sha256 of the pin list and of the interpreter that made it, so a changed pin (or a new Python)
makes a new environment and never patches an old one. Tests run in parallel, and more than one
test process can ask at once: the first holds a file lock while it builds the environment (in
place, then marks it complete), the others wait on the lock and find it made. A build that was
interrupted leaves no mark and is redone.

Usage: python3 tests/python_env.py        (tests/cli/support.rs and scripts/gen_python_types.sh)
LANSER_TEST_PYTHON=/path/to/python names an interpreter to use instead, as it is (for a machine
that cannot reach PyPI: that interpreter must have the packages).
"""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"


def pins() -> list[str]:
    lines = (l.split("#", 1)[0].strip() for l in REQUIREMENTS.read_text().splitlines())
    return [l for l in lines if l]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    if not base and sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
    return Path(base) if base else Path.home() / ".cache"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


class FileLock:
    """An exclusive lock on a file, held until exit (released by the OS if the process dies)."""

    def __init__(self, path: Path):
        self.f = open(path, "a+b")

    def __enter__(self):
        if sys.platform == "win32":
            import msvcrt
            import time
            while True:
                try:
                    self.f.seek(0)
                    msvcrt.locking(self.f.fileno(), msvcrt.LK_LOCK, 1)
                    return self
                except OSError:  # LK_LOCK gives up after 10 s; keep waiting
                    time.sleep(1)
        import fcntl
        fcntl.flock(self.f.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if sys.platform == "win32":
            import msvcrt
            self.f.seek(0)
            msvcrt.locking(self.f.fileno(), msvcrt.LK_UNLCK, 1)
        self.f.close()


def main() -> int:
    if os.environ.get("LANSER_TEST_PYTHON"):
        print(os.environ["LANSER_TEST_PYTHON"])
        return 0
    wanted = pins()
    who = f"{sys.implementation.name} {sys.version} {os.path.realpath(sys.executable)}"
    key = hashlib.sha256("\n".join(wanted + [who]).encode()).hexdigest()[:16]
    root = cache_dir() / "lanser-test"
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"venv-{key}"
    done = venv / "lanser-pins.txt"
    with FileLock(root / f"venv-{key}.lock"):
        if not done.exists():
            print(f"lanser tests: making the pinned Python test environment {venv} "
                  f"(first use: pip installs {' '.join(wanted)})", file=sys.stderr)
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                           stdout=subprocess.DEVNULL)
            pip = [str(venv_python(venv)), "-m", "pip", "--disable-pip-version-check"]
            got = subprocess.run([*pip, "install", "--quiet", *wanted],
                                 stdout=sys.stderr)
            if got.returncode != 0:
                print(f"lanser tests: pip could not install {' '.join(wanted)} into {venv} "
                      "(set LANSER_TEST_PYTHON to a python that has them)", file=sys.stderr)
                return 1
            done.write_text("\n".join(wanted) + "\n")
    print(venv_python(venv))
    return 0


if __name__ == "__main__":
    sys.exit(main())

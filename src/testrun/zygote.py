# lanser's pytest zygote (src/testrun/zygote.rs): imports pytest and the modules of the pytest
# plugins the environment installs, then forks one child per request line; the child takes the
# run's directory, environment and import path and runs pytest.main as `python -m pytest` would,
# writing its exit code to the status file. Nothing of the project is imported here, so a child
# never sees a stale module; the first line out names every top-level module loaded here, and a
# run whose project has a module of one of those names is not forked (zygote.rs).
import json
import os
import signal
import sys

sys.dont_write_bytecode = True
import pytest  # noqa: E402
import _pytest.config  # noqa: E402,F401

# The installed plugins' modules (pytest imports them at each start: most of its start-up), when
# this pytest lets a child leave them out of its "already imported, cannot be rewritten" warning.
PRELOADED = set()
try:
    from _pytest.assertion.rewrite import AssertionRewritingHook

    _warn = AssertionRewritingHook._warn_already_imported
except (ImportError, AttributeError):
    _warn = None
if _warn is not None and not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
    from importlib.metadata import entry_points

    _had = {m.split(".")[0] for m in sys.modules}
    for _ep in entry_points(group="pytest11"):
        try:
            _ep.load()
        except BaseException:
            pass
    PRELOADED = {m.split(".")[0] for m in sys.modules} - _had

    def _quiet(self, name):
        if name.split(".")[0] not in PRELOADED:
            _warn(self, name)

    AssertionRewritingHook._warn_already_imported = _quiet

BASE = list(sys.path[1:])
signal.signal(signal.SIGCHLD, signal.SIG_IGN)


def child(req):
    code = 70
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        nul = os.open(os.devnull, os.O_RDONLY)
        os.dup2(nul, 0)
        os.close(nul)
        sys.stdin = open(os.devnull)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        sys.path[:] = [req["cwd"]] + req["path"] + BASE
        sys.argv = [pytest.__file__] + req["args"]
        code = int(pytest.main(req["args"]))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        tmp = req["status"] + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(code))
        os.rename(tmp, req["status"])
        os._exit(code & 0xFF)


sys.stdout.write(json.dumps({"modules": sorted({m.split(".")[0] for m in sys.modules})}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(req)
    sys.stdout.write(json.dumps({"pid": pid}) + "\n")
    sys.stdout.flush()

"""lanser from Python: a client for agent pipelines and RL trainers over one warm lanser
process per workspace. Every method returns the Analysis Bundle `lanser <cmd> --json`
prints for the same request.

    import lanser
    with lanser.Lanser("path/to/workspace") as ls:
        b = ls.def_("src/app.py@L42:load")
        b.ok, b.bundle_id, b.facts, b.raw

`lanser.AsyncLanser` has the same methods, awaitable; `lanser.sel` builds selectors;
`lanser.reward.score_patch` scores a patch; `python -m lanser.distributed` scores many on Ray.
"""
from . import reward, sel
from ._bin import find_lanser_bin
from .client import AsyncLanser, Bundle, Lanser, LanserError

__all__ = ["Lanser", "AsyncLanser", "Bundle", "LanserError", "find_lanser_bin", "reward", "sel"]


try:
    from importlib.metadata import version as _version

    __version__ = _version("lanser")
except Exception:  # running from a source checkout
    __version__ = "0+source"

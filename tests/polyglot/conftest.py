"""The fixtures of tests/mcp (a git-committed copy of a fixture project, its own LANSER_HOME, the
official MCP client), for the polyglot repository's test."""
import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("mcp_conftest", Path(__file__).parents[1] / "mcp" / "conftest.py")
mcp_conftest = importlib.util.module_from_spec(_spec)
sys.modules["mcp_conftest"] = mcp_conftest
_spec.loader.exec_module(mcp_conftest)

make_ws = mcp_conftest.make_ws

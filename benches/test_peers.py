"""Offline checks of benches/peers.py's pure parts: the `ast` ground truth (what a name binds to,
which call sites and reference targets are picked, the references found) on a small package,
the answer checks, and the parser of agent-lsp's text tables. No language server runs.

  "$(python3 tests/python_env.py)" -m pytest -q benches/test_peers.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import peers  # noqa: E402
import peers_ast as pa  # noqa: E402
import peers_edits as pe  # noqa: E402

FILES = {
    "pkg/__init__.py": "from .core import helper\n",
    "pkg/core.py": (
        "import os\n"
        "\n"
        "\n"
        "def helper(x):\n"
        "    return x + 1\n"
        "\n"
        "\n"
        "@staticmethod\n"
        "def decorated():\n"
        "    return helper(2)\n"
        "\n"
        "\n"
        "if os.name == 'nt':\n"
        "    def twice():\n"
        "        return 1\n"
        "else:\n"
        "    def twice():\n"
        "        return 2\n"
        "\n"
        "\n"
        "class Thing:\n"
        "    def method(self):\n"
        "        return twice()\n"
    ),
    "pkg/other.py": (
        "from os.path import join\n"
        "\n"
        "\n"
        "def outside():\n"
        "    return join('a', 'b')\n"
    ),
    "pkg/paths.py": (
        "def join(*parts):\n"
        "    return '/'.join(parts)\n"
        "\n"
        "\n"
        "def both():\n"
        "    return join('a')\n"
    ),
    "pkg/use.py": (
        "from . import helper\n"
        "from .core import Thing, decorated\n"
        "from .core import helper as h\n"
        "\n"
        "\n"
        "def run(helper2):\n"
        "    Thing()\n"
        "    decorated()\n"
        "    h(1)\n"
        "    return helper(3)\n"
        "\n"
        "\n"
        "def shadowed(helper):\n"
        "    return helper(4)\n"
        "\n"
        "\n"
        "def other():\n"
        "    return Thing().method()\n"
    ),
}


def project(tmp_path):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return pa.Project(tmp_path)


def test_names_bind_through_imports_and_re_exports(tmp_path):
    p = project(tmp_path)
    use, core = p.modules["pkg.use"], p.modules["pkg.core"]
    assert p.binds(use, "helper").at == pa.Pos("pkg/core.py", 4, 5)  # via pkg/__init__.py
    assert p.binds(use, "Thing").at == pa.Pos("pkg/core.py", 21, 7)
    assert p.binds(use, "h").at == pa.Pos("pkg/core.py", 4, 5)
    d = p.binds(use, "decorated")
    assert (d.at, d.first_line, d.last_line) == (pa.Pos("pkg/core.py", 9, 5), 8, 10)
    assert p.binds(core, "twice") is None  # bound twice: nothing to check against
    assert p.binds(core, "os") is None  # an outside module


def test_call_sites_leave_out_shadowed_and_ambiguous_names(tmp_path):
    got = {(c.at.path, c.at.line, c.name): c.target.at for c in project(tmp_path).call_sites()}
    assert got == {
        ("pkg/core.py", 10, "helper"): pa.Pos("pkg/core.py", 4, 5),
        ("pkg/use.py", 7, "Thing"): pa.Pos("pkg/core.py", 21, 7),
        ("pkg/use.py", 8, "decorated"): pa.Pos("pkg/core.py", 9, 5),
        ("pkg/use.py", 9, "h"): pa.Pos("pkg/core.py", 4, 5),
        ("pkg/use.py", 10, "helper"): pa.Pos("pkg/core.py", 4, 5),
        ("pkg/use.py", 18, "Thing"): pa.Pos("pkg/core.py", 21, 7),
        ("pkg/paths.py", 6, "join"): pa.Pos("pkg/paths.py", 1, 5),
    }  # not line 14 (a parameter), nor twice() (two defs)


def test_reference_targets_are_names_used_only_bare(tmp_path):
    got = {d.name: occ for d, occ in project(tmp_path).reference_targets().items()}
    # not helper (imported under another name), twice (defined twice), method (used as an
    # attribute), Thing.method's `self` (a parameter)
    # nor join: pkg/other.py's `join` is os.path's, not pkg/paths.py's
    assert set(got) == {"Thing", "decorated", "run", "shadowed", "other", "outside", "both"}
    assert got["decorated"] == [pa.Pos("pkg/core.py", 9, 5), pa.Pos("pkg/use.py", 2, 26),
                                pa.Pos("pkg/use.py", 8, 5)]
    assert got["Thing"] == [pa.Pos("pkg/core.py", 21, 7), pa.Pos("pkg/use.py", 2, 19),
                            pa.Pos("pkg/use.py", 7, 5), pa.Pos("pkg/use.py", 18, 12)]


def test_answers_are_judged_against_the_definition(tmp_path):
    p = project(tmp_path)
    d = p.binds(p.modules["pkg.use"], "decorated")
    assert peers.def_right([d.at], d) == "right"
    assert peers.def_right([pa.Pos("pkg/core.py", 9, 1)], d) == "near"
    assert peers.def_right([d.at, pa.Pos("pkg/core.py", 4, 5)], d) == "near"
    assert peers.def_right([], d) == "wrong"
    lines = FILES["pkg/core.py"].split("\n")
    whole = "\n".join(lines[7:10])
    assert peers.source_right((8, whole + "\n"), d, lines) == "whole"
    assert peers.source_right((9, "\n".join(lines[8:10])), d, lines) == "from def"
    assert peers.source_right((4, "def helper(x):"), d, lines) == "wrong"
    assert peers.source_right(None, d, lines) == "none"


def test_an_outside_edit_moves_what_it_shifts():
    d = pa.Definition("f", pa.Pos("a.py", 4, 5), 3, 6)
    moved = peers.shifted_def(d, "a.py", 2)
    assert (moved.at, moved.first_line, moved.last_line) == (pa.Pos("a.py", 6, 5), 5, 8)
    assert peers.shifted_def(d, "b.py", 2) == d
    assert peers.shifted(pa.Pos("b.py", 1, 1), "b.py", 3) == pa.Pos("b.py", 4, 1)


def test_agent_lsp_tables_are_parsed():
    text = ("GCF profile=generic\n## [2]{EndCol,EndLine,FilePath,StartCol,StartLine}\n"
            "49|979|/w/x.py|29|979\n29|1001|/w/y.py|9|1001\n")
    assert peers.parse_gcf_rows(text) == [
        {"EndCol": "49", "EndLine": "979", "FilePath": "/w/x.py", "StartCol": "29", "StartLine": "979"},
        {"EndCol": "29", "EndLine": "1001", "FilePath": "/w/y.py", "StartCol": "9", "StartLine": "1001"},
    ]
    f = peers.parse_gcf_fields('GCF profile=generic\nEndLine=3\nSource="def f():\\n    pass"\n'
                               "StartLine=2\n")
    assert (f["StartLine"], f["Source"]) == ("2", "def f():\n    pass")


def test_the_pick_is_seeded_and_keeps_order():
    items = list(range(100))
    assert pa.pick(items, 5, 1) == pa.pick(items, 5, 1)
    assert pa.pick(items, 5, 1) == sorted(pa.pick(items, 5, 1))
    assert pa.pick(items, 500, 1) == items


EDITED = (
    "class Box:\n"
    "    def size(self):\n"
    "        \"\"\"Doc.\"\"\"\n"
    "        return 1\n"
    "\n"
    "    def spare(self):\n"
    "        return 2\n"
    "\n"
    "\n"
    "def free():\n"
    "    return 3\n"
)


def test_symbol_edits_are_judged_by_ast():
    body = pe.BODY
    nested = "".join("        " + l + "\n" for l in body.splitlines())
    new = EDITED.replace("        \"\"\"Doc.\"\"\"\n        return 1\n", nested)
    assert pe.replaced(EDITED, new, "Box.size", body) == "right"
    kept_doc = EDITED.replace("        return 1\n", nested)
    assert pe.replaced(EDITED, kept_doc, "Box.size", body) == "right"
    at_col0 = EDITED.replace("        return 1\n", body)
    assert pe.replaced(EDITED, at_col0, "Box.size", body) == "broken"
    elsewhere = new.replace("return 3", "return 4")
    assert pe.replaced(EDITED, elsewhere, "Box.size", body) == "wrong"
    gone = EDITED.replace("\n\ndef free():\n    return 3\n", "")
    assert pe.deleted(EDITED, gone, "free") == "right"
    assert pe.deleted(EDITED, EDITED, "free") == "untouched"
    method_gone = EDITED.replace("\n    def spare(self):\n        return 2\n", "")
    assert pe.deleted(EDITED, method_gone, "Box.spare") == "right"
    assert pe.deleted(EDITED, gone, "Box.spare") == "wrong"


def test_lanser_edits_apply_by_code_points():
    text = "def f():\n    return 'é'\n\n\ndef g():\n    pass\n"
    edits = [{"range": [1, 12, 1, 13], "newText": "ü"}, {"range": [4, 0, 6, 0], "newText": ""}]
    assert pe.apply_edits(text, edits) == "def f():\n    return 'ü'\n\n\n"


def test_edit_picks_are_one_per_file_and_used_ones_are_used(tmp_path):
    p = project(tmp_path)
    plan = pe.plan(p, 3, 1)
    files = [d.at.path for picks in plan.values() for d, _ in picks]
    assert len(files) == len(set(files))
    assert {q for _, q in plan["used"]} <= {"decorated", "Thing", "run", "shadowed", "other",
                                            "outside", "both"}
    for d, q in plan["unused"]:
        assert sum(m.text.count(d.name) for m in p.modules.values()) == 1, q

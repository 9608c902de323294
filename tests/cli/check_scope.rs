//! Issue 43: `check --patch` re-checks an importer only when the change can alter what it sees
//! (docs/editing.md#what-is-re-checked). On a small project with real Pyright, each patch is
//! checked twice — the fast way, and with `LANSER_CHECK_FULL=1` re-checking every importer —
//! and every importer the fast answer skipped (and does not list) had nothing added or removed
//! in the full one, each file the fast answer lists has the full one's entry, and the change in
//! the counts and the reward are the same in both. One case per rule: comment, docstring
//! and annotated-body changes skip every importer; an unannotated function whose inferred
//! return type changes, a changed return type, an attribute an `__init__` declares re-check
//! the importers naming them (and star importers); `__all__`, a star import, module-level
//! code and a stub beside the module re-check every importer. An unannotated function's body
//! whose return type Pyright shows unchanged skips them; one whose type it shows changed, or
//! shows as `Unknown` (re-inferred per call site), re-checks them — unless the function is one
//! Pyright does not infer per call (`async`, or no parameter of unknown type). A method added
//! under a name found nowhere else skips its class's users; one a class elsewhere declares
//! re-checks them, and a subclass of both gets the clash (docs/editing.md#a-new-method). A
//! changed method re-checks the importers naming it and those deriving a class from two bases,
//! not its class's other users — unless a protocol declares it (docs/editing.md#a-changed-method).
//! An importer naming a changed function only as a keyword argument's keyword
//! (`dict(area=1)`) is skipped.

use crate::support::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const CORE: &str = r#""""Core shapes."""

__all__ = ["LIMIT", "Shape", "area", "guess", "make"]

LIMIT: int = 3


class Shape:
    def __init__(self, side: int) -> None:
        self.side = side

    def area(self) -> int:
        return self.side * self.side

    def grow(self, by: int) -> int:
        return self.side + by

    def fit(self, by: int) -> int:
        return self.side - by


def area(s: Shape) -> int:
    # squared
    return s.area()


def make(side: int) -> Shape:
    return Shape(side)


def guess(x):
    return x + 1


def pick(a, b):
    return a


def label(s: Shape):
    return "side " + str(s.side)


async def fetch(a, b):
    return a


def blank(n: int):
    return []
"#;

const FILES: &[(&str, &str)] = &[
    ("pyrightconfig.json", "{}\n"),
    ("lib/__init__.py", ""),
    ("lib/core.py", CORE),
    (
        "app/uses_area.py",
        "from lib.core import area, Shape\n\ntotal: int = area(Shape(2)) + 1\n",
    ),
    (
        "app/uses_guess.py",
        "from lib import core\n\nn: int = core.guess(1)\nm: int = core.pick(1, \"s\")\n",
    ),
    (
        "app/uses_label.py",
        "from lib.core import Shape, label\n\ntext: str = label(Shape(1))\n",
    ),
    (
        "app/uses_make.py",
        "from lib.core import make\n\nside: int = make(2).side\n",
    ),
    (
        "app/uses_limit.py",
        "from lib.core import LIMIT\n\nx: int = LIMIT\nbad: str = LIMIT\n",
    ),
    ("app/star.py", "from lib.core import *\n\ny: int = LIMIT\n"),
    (
        "app/uses_more.py",
        "from lib import core\n\n\nasync def go() -> None:\n    n: int = await core.fetch(1, \"s\")\n\n\nrows: list[int] = core.blank(1)\n",
    ),
    (
        "lib/typed.py",
        "def half(x):\n    # halves\n    return x / 2\n",
    ),
    ("lib/typed.pyi", "def half(x: float) -> float: ...\n"),
    (
        "lib/meter.py",
        "class Meter:\n    def lanser_reading(self) -> str:\n        return \"\"\n\n    def grow(self, by: int) -> int:\n        return by\n",
    ),
    (
        "app/both.py",
        "from lib.core import Shape\nfrom lib.meter import Meter\n\n\nclass Both(Shape, Meter):\n    pass\n",
    ),
    (
        "app/uses_grow.py",
        "from lib.core import make\n\nbigger: int = make(2).grow(1)\n",
    ),
    (
        "lib/proto.py",
        "from typing import Protocol\n\n\nclass Fits(Protocol):\n    def fit(self, by: int) -> int: ...\n\n\ndef feed(f: Fits) -> int:\n    return f.fit(1)\n",
    ),
    (
        "app/feeds.py",
        "from lib.core import Shape\nfrom lib.proto import feed\n\nn: int = feed(Shape(1))\n",
    ),
    (
        "app/uses_keyword.py",
        "from lib import core\n\nsizes = dict(area=1, pick=2)\nlimit: int = core.LIMIT\n",
    ),
    (
        "app/uses_typed.py",
        "from lib.typed import half\n\nh: float = half(1.0)\n",
    ),
];

const IMPORTERS: &[&str] = &[
    "app/both.py",
    "app/feeds.py",
    "app/star.py",
    "app/uses_area.py",
    "app/uses_grow.py",
    "app/uses_guess.py",
    "app/uses_keyword.py",
    "app/uses_label.py",
    "app/uses_limit.py",
    "app/uses_make.py",
    "app/uses_more.py",
];

/// The importers naming `Shape` or a name whose type follows it: a change to the class
/// re-checks them.
const SHAPE_USERS: &[&str] = &[
    "app/both.py",
    "app/feeds.py",
    "app/star.py",
    "app/uses_area.py",
    "app/uses_grow.py",
    "app/uses_label.py",
    "app/uses_make.py",
];

/// One case: the file, the text replaced and its replacement, and the importers the fast
/// check re-checks.
struct Case {
    name: &'static str,
    rel: &'static str,
    old: &'static str,
    new: &'static str,
    rechecked: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "comment",
        rel: "lib/core.py",
        old: "    # squared",
        new: "    # squared, as the method does",
        rechecked: &[],
    },
    Case {
        name: "docstring",
        rel: "lib/core.py",
        old: "\"\"\"Core shapes.\"\"\"",
        new: "\"\"\"Core shapes, and what they measure.\"\"\"",
        rechecked: &[],
    },
    Case {
        name: "annotated body",
        rel: "lib/core.py",
        old: "    return s.area()",
        new: "    return s.area() + 0",
        rechecked: &[],
    },
    Case {
        name: "unannotated body whose inferred return type changes",
        rel: "lib/core.py",
        old: "    return x + 1",
        new: "    return str(x)",
        rechecked: &["app/star.py", "app/uses_guess.py"],
    },
    Case {
        name: "changed return type used by an importer",
        rel: "lib/core.py",
        old: "def area(s: Shape) -> int:",
        new: "def area(s: Shape) -> str:",
        rechecked: &["app/star.py", "app/uses_area.py"],
    },
    Case {
        name: "attribute declared in __init__",
        rel: "lib/core.py",
        old: "        self.side = side",
        new: "        self.side = str(side)",
        rechecked: SHAPE_USERS,
    },
    Case {
        name: "__all__",
        rel: "lib/core.py",
        old: "__all__ = [\"LIMIT\", ",
        new: "__all__ = [",
        rechecked: IMPORTERS,
    },
    Case {
        name: "star import in the module",
        rel: "lib/core.py",
        old: "LIMIT: int = 3",
        new: "from os.path import *\nLIMIT: int = 3",
        rechecked: IMPORTERS,
    },
    Case {
        name: "module-level code",
        rel: "lib/core.py",
        old: "LIMIT: int = 3",
        new: "LIMIT: int = 3\nprint(LIMIT)",
        rechecked: IMPORTERS,
    },
    Case {
        name: "stub beside the module",
        rel: "lib/typed.py",
        old: "    # halves",
        new: "    # halves it",
        rechecked: &["app/uses_typed.py"],
    },
    Case {
        name: "unannotated body whose inferred return type holds",
        rel: "lib/core.py",
        old: "    return \"side \" + str(s.side)",
        new: "    tag = \"side \"\n    return tag + str(s.side)",
        rechecked: &[],
    },
    Case {
        name: "unannotated body whose inferred return type changes, known before and after",
        rel: "lib/core.py",
        old: "    return \"side \" + str(s.side)",
        new: "    return s.side",
        rechecked: &["app/star.py", "app/uses_label.py"],
    },
    Case {
        name: "unannotated body whose return type is inferred per call (Unknown)",
        rel: "lib/core.py",
        old: "def pick(a, b):\n    return a",
        new: "def pick(a, b):\n    return b",
        rechecked: &["app/star.py", "app/uses_guess.py"],
    },
    Case {
        name: "async body whose return type shows Unknown (not inferred per call)",
        rel: "lib/core.py",
        old: "async def fetch(a, b):\n    return a",
        new: "async def fetch(a, b):\n    return b",
        rechecked: &[],
    },
    Case {
        name: "body whose return type shows Unknown, parameters annotated",
        rel: "lib/core.py",
        old: "def blank(n: int):\n    return []",
        new: "def blank(n: int):\n    return [] if n else []",
        rechecked: &[],
    },
    Case {
        name: "new method a sibling base elsewhere names",
        rel: "lib/core.py",
        old: "        return self.side * self.side\n",
        new: "        return self.side * self.side\n\n    def lanser_reading(self) -> int:\n        return self.side\n",
        rechecked: SHAPE_USERS,
    },
    Case {
        name: "new method named nowhere else",
        rel: "lib/core.py",
        old: "        return self.side * self.side\n",
        new: "        return self.side * self.side\n\n    def _lanser_grown_side(self, by: int) -> int:\n        return self.side + by\n",
        rechecked: &[],
    },
    Case {
        name: "changed method no protocol declares",
        rel: "lib/core.py",
        old: "    def grow(self, by: int) -> int:",
        new: "    def grow(self, by: int, times: int) -> int:",
        rechecked: &["app/both.py", "app/star.py", "app/uses_grow.py"],
    },
    Case {
        name: "changed method a protocol declares",
        rel: "lib/core.py",
        old: "    def fit(self, by: int) -> int:",
        new: "    def fit(self, by: int, times: int) -> int:",
        rechecked: SHAPE_USERS,
    },
];

/// A unified diff of `rel` replacing the first `old` by `new` (whole file as one hunk).
fn diff(ws: &Path, rel: &str, old: &str, new: &str) -> String {
    let text = read(ws, rel);
    assert!(text.contains(old), "{old:?} not in {rel}");
    let after = text.replacen(old, new, 1);
    let lines = |t: &str| t.lines().map(str::to_string).collect::<Vec<_>>();
    let (a, b) = (lines(&text), lines(&after));
    let mut out = format!(
        "--- a/{rel}\n+++ b/{rel}\n@@ -1,{} +1,{} @@\n",
        a.len(),
        b.len()
    );
    for l in &a {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &b {
        out.push_str(&format!("+{l}\n"));
    }
    out
}

/// Each case's check bundle, in one batch (with `LANSER_CHECK_FULL=1` when `full`).
fn checks(ws: &Path, dir: &Path, full: bool) -> Vec<Value> {
    let mut lines = String::new();
    for (i, c) in CASES.iter().enumerate() {
        let p = dir.join(format!("{i}.diff"));
        std::fs::write(&p, diff(ws, c.rel, c.old, c.new)).unwrap();
        lines.push_str(&format!(
            "{{\"cmd\":\"check\",\"args\":{{\"patch\":{}}}}}\n",
            serde_json::to_string(&p.to_string_lossy()).unwrap()
        ));
    }
    let input = dir.join(if full { "full.jsonl" } else { "fast.jsonl" });
    std::fs::write(&input, lines).unwrap();
    let input = input.to_string_lossy().into_owned();
    let w = ws.to_string_lossy().into_owned();
    let args = ["batch", "--in", &input, "--out", "-", "--workspace", &w];
    let o = if full {
        lanser()
            .env("LANSER_CHECK_FULL", "1")
            .args(args)
            .output()
            .unwrap()
    } else {
        run(&args)
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let out: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), CASES.len(), "{}", stdout(&o));
    out
}

/// Each file's entry (path, before, after, added, removed, unchanged) in a check bundle.
fn files(b: &Value) -> BTreeMap<String, Value> {
    b["facts"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{b}"))
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f.clone()))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_skipped_importer_is_one_the_full_recheck_finds_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    write_tree(&ws, FILES);
    let ws = ws.canonicalize().unwrap();
    let fast = checks(&ws, dir.path(), false);
    let full = checks(&ws, dir.path(), true);
    let empty = Value::Array(Vec::new());
    for ((c, fast), full) in CASES.iter().zip(&fast).zip(&full) {
        let checked = &fast["facts"]["checked"];
        assert_eq!(strings(&checked["files"]), [c.rel], "{}", c.name);
        assert_eq!(
            strings(&checked["importers"]),
            c.rechecked,
            "{}: {checked}",
            c.name
        );
        let skipped: Vec<String> = checked["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["path"].as_str().unwrap().to_string())
            .collect();
        // The full re-check skips nothing, and checks what the fast one checks and skips.
        let full_checked = &full["facts"]["checked"];
        assert_eq!(full_checked["skipped"], empty, "{}", c.name);
        let mut all = strings(&checked["importers"]);
        all.extend(skipped.iter().cloned());
        all.sort();
        assert_eq!(strings(&full_checked["importers"]), all, "{}", c.name);
        // The fast answer lists the files it re-checked, and no skipped importer; each has the
        // delta the full re-check finds for it, and the full re-check finds nothing added or
        // removed in an importer the fast one skipped.
        let (fast_d, full_d) = (files(fast), files(full));
        let mut rechecked = strings(&checked["importers"]);
        rechecked.push(c.rel.to_string());
        rechecked.sort();
        assert_eq!(
            fast_d.keys().cloned().collect::<Vec<_>>(),
            rechecked,
            "{}",
            c.name
        );
        for (path, f) in &fast_d {
            assert_eq!(Some(f), full_d.get(path), "{}: {path}", c.name);
        }
        for (path, f) in full_d.iter().filter(|(p, _)| !fast_d.contains_key(*p)) {
            assert!(skipped.contains(path), "{}: {path}", c.name);
            assert_eq!(
                (&f["added"], &f["removed"]),
                (&empty, &empty),
                "{}: {path}",
                c.name
            );
        }
        // The counts are over the files each re-checked: their difference is the same, and
        // so is the reward (its terms are differences).
        let change = |b: &Value| {
            let n = |k: &str| b["facts"][k].as_i64().unwrap();
            n("before") - n("after")
        };
        assert_eq!(change(fast), change(full), "{}", c.name);
        assert_eq!(
            fast["facts"]["patched"], full["facts"]["patched"],
            "{}",
            c.name
        );
        let reward = |b: &Value| {
            let r = &b["processReward"];
            (r["r"].clone(), r["components"].clone())
        };
        assert_eq!(reward(fast), reward(full), "{}", c.name);
    }
    // The cases whose change an importer sees do break it: the rule is not vacuous.
    let added = |b: &Value, rel: &str| files(b)[rel]["added"].as_array().unwrap().len();
    assert!(added(&fast[3], "app/uses_guess.py") > 0, "{}", fast[3]);
    assert!(added(&fast[4], "app/uses_area.py") > 0, "{}", fast[4]);
    assert!(added(&fast[5], "app/uses_make.py") > 0, "{}", fast[5]);
    assert!(added(&fast[6], "app/star.py") > 0, "{}", fast[6]);
    assert!(added(&fast[11], "app/uses_label.py") > 0, "{}", fast[11]);
    // The hover shows `-> Unknown` before and after; the call site's type changed.
    assert!(added(&fast[12], "app/uses_guess.py") > 0, "{}", fast[12]);
    // A method a sibling base declares otherwise clashes where neither is named.
    assert!(added(&fast[15], "app/both.py") > 0, "{}", fast[15]);
    // A changed method breaks its caller, and the class deriving from it and a base that has
    // it too; one a protocol declares breaks a call passing the class where it is expected.
    assert!(added(&fast[17], "app/uses_grow.py") > 0, "{}", fast[17]);
    assert!(added(&fast[17], "app/both.py") > 0, "{}", fast[17]);
    assert!(added(&fast[18], "app/feeds.py") > 0, "{}", fast[18]);
    // A skipped importer is not pulled: its error (there before, and after) is counted in the
    // full answer only.
    let count = |b: &Value, k: &str| b["facts"][k].as_u64().unwrap();
    assert_eq!(
        count(&full[0], "before"),
        count(&fast[0], "before") + 1,
        "{}",
        full[0]
    );
    assert_eq!(
        count(&full[0], "after"),
        count(&fast[0], "after") + 1,
        "{}",
        full[0]
    );
    // Skips say why.
    let reason = fast[0]["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("surface is unchanged"), "{reason}");
    let reason = fast[10]["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("infers the same return type for label"),
        "{reason}"
    );
    for (i, name) in [(13, "fetch"), (14, "blank")] {
        let reason = fast[i]["facts"]["checked"]["skipped"][0]["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", fast[i]));
        let want = format!("infers the same return type for {name}");
        assert!(reason.contains(&want), "{reason}");
    }
    let reason = fast[16]["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", fast[16]));
    assert!(
        reason.contains(
            "but for new methods named nowhere else in the program (Shape._lanser_grown_side)"
        ),
        "{reason}"
    );
    let reason = fast[17]["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", fast[17]));
    assert!(
        reason.contains("changes only methods no protocol declares (grow)"),
        "{reason}"
    );
}

/// The skips the server's inferred type, a new method and a changed one allow answer alike from
/// every route:
/// an MCP call (the diff inline), the SDK (`check(diff)`), the CLI through the warm daemon and
/// in-process, and a batch line, on the file the MCP call wrote the diff to.
#[test]
fn an_inferred_type_skip_answers_alike_from_every_route() {
    let w = crate::daemon::Warm::new("flat");
    std::fs::write(
        w.ws.join("tags.py"),
        "from models import User\n\n\ndef label(user: User):\n    return \"user \" + user.name\n",
    )
    .unwrap();
    std::fs::write(
        w.ws.join("badge.py"),
        "from models import User\nfrom tags import label\n\n\ndef badge(u: User) -> str:\n    return label(u)\n",
    )
    .unwrap();
    let label = "--- a/tags.py\n+++ b/tags.py\n@@ -4,2 +4,3 @@\n def label(user: User):\n-    return \"user \" + user.name\n+    prefix = \"user \"\n+    return prefix + user.name\n";
    let b = alike_from_every_route(&w, label);
    let none = Vec::<String>::new();
    assert_eq!(strings(&b["facts"]["checked"]["importers"]), none, "{b}");
    let reason = b["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("infers the same return type for label"),
        "{b}"
    );
    // `User` gains a method no other text names: none of `User`'s users is re-checked.
    let method = diff(
        &w.ws,
        "models.py",
        "        return self.name\n",
        "        return self.name\n\n    def lanser_initials(self) -> str:\n        return self.name[:1]\n",
    );
    let b = alike_from_every_route(&w, &method);
    assert_eq!(strings(&b["facts"]["checked"]["importers"]), none, "{b}");
    let reason = b["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("new methods named nowhere else in the program (User.lanser_initials)"),
        "{b}"
    );
    // A changed method re-checks the importers naming it, not its class's other users.
    let changed = diff(
        &w.ws,
        "models.py",
        "    def display_name(self) -> str:",
        "    def display_name(self, short: bool = False) -> str:",
    );
    let b = alike_from_every_route(&w, &changed);
    assert_eq!(
        strings(&b["facts"]["checked"]["importers"]),
        ["main.py"],
        "{b}"
    );
    let reason = b["facts"]["checked"]["skipped"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("changes only methods no protocol declares (display_name)"),
        "{b}"
    );
}

/// `diff` checked through MCP, the warm daemon, in-process, batch and the SDK: the MCP bundle,
/// after each other route gave its bytes; it re-checks no importer.
fn alike_from_every_route(w: &crate::daemon::Warm, diff: &str) -> Value {
    let mcp = mcp_session(
        w.cmd(&["mcp"]),
        &[("check", serde_json::json!({"patch": diff}))],
    );
    assert_eq!(mcp[0]["isError"], false, "{}", mcp[0]);
    let b = mcp[0]["structuredContent"].clone();
    let text = b.to_string();
    let patch = b["request"]["args"]["patch"].as_str().unwrap().to_string();
    let args = ["check", "--patch", patch.as_str(), "--json"];
    let line = |o: &std::process::Output| {
        assert!(o.status.success(), "{}", stderr(o));
        stdout(o).trim_end().to_string()
    };
    assert_eq!(line(&w.run(&args)), text, "daemon");
    let alone = w.cmd(&args).env("LANSER_NO_DAEMON", "1").output().unwrap();
    assert_eq!(line(&alone), text, "in-process");
    let mut h = Harness::spawn({
        let mut c = w.cmd(&["batch", "--in", "-", "--out", "-"]);
        c.env("LANSER_NO_DAEMON", "1");
        c
    });
    let got = h.ask(&serde_json::json!({"cmd": "check", "args": {"patch": patch}}).to_string());
    assert!(h.finish().success());
    assert_eq!(got.to_string(), text, "batch");
    let script = "import sys\nfrom lanser import Lanser\nwith Lanser(sys.argv[1], lanser_bin=sys.argv[2]) as l:\n    print(l.check(sys.argv[3]).line)\n";
    let like = w.cmd(&[]);
    let mut py = sdk_python(&like);
    let o = py
        .args(["-c", script])
        .arg(&w.ws)
        .arg(env!("CARGO_BIN_EXE_lanser"))
        .arg(diff)
        .output()
        .unwrap();
    assert_eq!(line(&o), text, "sdk");
    b
}

/// A verified write whose change re-checks importers (an inferred return type changes), after
/// a check of the same patch in one session: the importers' diagnostics before the change are
/// read from what the check pulled under the original texts, without showing those to the
/// server again. The write sends its change once — not the change, the original again, then
/// the change once more — and measures what the check measured.
#[test]
fn a_write_after_its_check_sends_the_change_once_and_measures_alike() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    write_tree(&ws, FILES);
    let ws = ws.canonicalize().unwrap();
    crate::mutations::commit_tree(&ws);
    let c = CASES
        .iter()
        .find(|c| c.name == "unannotated body whose inferred return type changes")
        .unwrap();
    let p = dir.path().join("guess.diff");
    std::fs::write(&p, diff(&ws, c.rel, c.old, c.new)).unwrap();
    let p = serde_json::to_string(&p.to_string_lossy()).unwrap();
    let trace = dir.path().join("t.jsonl");
    let o = batch_lines_with(
        &ws,
        &[
            &format!("{{\"cmd\":\"check\",\"args\":{{\"patch\":{p}}}}}"),
            &format!("{{\"cmd\":\"apply\",\"args\":{{\"patch\":{p},\"apply\":true}}}}"),
        ],
        &["--trace-file", trace.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (check, write) = (&out[0], &out[1]);
    assert_eq!(write["facts"]["applied"], true, "{write}");
    assert_eq!(
        strings(&write["facts"]["checked"]["importers"]),
        c.rechecked,
        "{write}"
    );
    assert_eq!(
        check["facts"]["files"], write["facts"]["speculativeDiagnostics"],
        "the write measured what the check measured"
    );
    // Against the fixture: `n: int = core.guess(1)` now gets a `str`.
    let spec = write["facts"]["speculativeDiagnostics"].as_array().unwrap();
    let guess = spec
        .iter()
        .find(|f| f["path"] == "app/uses_guess.py")
        .unwrap();
    assert!(
        guess["added"].as_array().unwrap().iter().any(|d| {
            let m = d["message"].as_str().unwrap_or_default();
            d["severity"] == "error" && m.contains("\"str\"") && m.contains("\"int\"")
        }),
        "{write}"
    );
    let changed = sent(&trace, "textDocument/didChange").len();
    assert_eq!(
        changed, 3,
        "the check's change and back, the write's change"
    );
}

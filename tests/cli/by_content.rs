//! What pytest says about a workspace state is shared by content (src/measure/impact/by_content.rs):
//! two copies of one project at different paths, one LANSER_HOME, separate processes. The first
//! copy's `tests --patch` collects and runs the suite under coverage; the second, equal copy
//! collects nothing and runs nothing; after a change to one module in the second copy, only the
//! test that executed that module runs again. What pytest did is read from a log the fixture's
//! conftest writes (the test ids each run executed, and each collect-only session).

use crate::support::*;
use std::path::Path;

const CONFTEST: &str = r#"import os

def _log(line):
    path = os.environ.get("LANSER_TEST_RUNLOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")

def pytest_collection_finish(session):
    if session.config.option.collectonly:
        _log("collect")

def pytest_runtest_call(item):
    _log("run " + item.nodeid)
"#;

fn project(root: &Path) {
    write_tree(
        root,
        &[
            ("conftest.py", CONFTEST),
            ("pkg/__init__.py", ""),
            ("pkg/a.py", "def f():\n    return 1\n\n\nA = 1\n"),
            ("pkg/b.py", "def g():\n    return 2\n\n\nB = 1\n"),
            (
                "tests/test_a.py",
                "from pkg.a import f\n\n\ndef test_f():\n    assert f() == 1\n",
            ),
            (
                "tests/test_b.py",
                "from pkg.b import g\n\n\ndef test_g():\n    assert g() == 2\n",
            ),
        ],
    );
}

/// `lanser tests --patch` on `ws` with the shared home; the lines pytest logged, then cleared.
fn tests_for(ws: &Path, home: &Path, log: &Path, diff: &str) -> (serde_json::Value, Vec<String>) {
    let patch = home.join("change.diff");
    std::fs::write(&patch, diff).unwrap();
    let out = lanser()
        .env("LANSER_HOME", home)
        .env("VIRTUAL_ENV", pinned_venv())
        .env("LANSER_TEST_RUNLOG", log)
        .args(["tests", "--patch"])
        .arg(&patch)
        .args(["--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    let b = bundle(&out);
    assert_eq!(b["status"], "ok", "{b}");
    let lines = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    let mut lines: Vec<String> = lines.lines().map(String::from).collect();
    lines.sort();
    (b, lines)
}

#[test]
fn copies_of_a_workspace_share_its_collection_and_coverage_by_content() {
    let tmp = tempfile::tempdir().unwrap();
    let home = home_with_pyright(tmp.path());
    let (one, two) = (
        tmp.path().join("one/proj"),
        tmp.path().join("elsewhere/two/proj"),
    );
    project(&one);
    project(&two);
    let log = tmp.path().join("pytest.log");
    let diff = one_line_diff(&one, "pkg/b.py", "return 2", "return 3");

    let (first, ran) = tests_for(&one, &home, &log, &diff);
    let ids: Vec<&str> = first["facts"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tests/test_b.py::test_g"], "{}", first["facts"]);
    assert!(ran.contains(&"collect".to_string()), "{ran:?}");
    assert!(
        ran.contains(&"run tests/test_a.py::test_f".to_string()),
        "{ran:?}"
    );
    assert!(
        ran.contains(&"run tests/test_b.py::test_g".to_string()),
        "{ran:?}"
    );

    // An equal copy elsewhere: the same facts, and pytest neither collects nor runs anything.
    let (second, ran) = tests_for(&two, &home, &log, &diff);
    assert_eq!(second["facts"], first["facts"]);
    assert_eq!(ran, Vec::<String>::new());

    // A change to pkg/b.py in the second copy: collected again, and only test_g (the one test
    // that executed b.py) runs under coverage again; test_f keeps its lines.
    let b = two.join("pkg/b.py");
    let text = std::fs::read_to_string(&b).unwrap();
    std::fs::write(&b, text.replace("B = 1", "B = 2")).unwrap();
    let diff = one_line_diff(&two, "pkg/b.py", "return 2", "return 4");
    let (third, ran) = tests_for(&two, &home, &log, &diff);
    assert_eq!(third["facts"]["tests"], first["facts"]["tests"]);
    let runs: Vec<&String> = ran.iter().filter(|l| l.starts_with("run ")).collect();
    assert_eq!(runs, ["run tests/test_b.py::test_g"], "{ran:?}");
    assert!(ran.contains(&"collect".to_string()), "{ran:?}");
}

//! pr-v3's selected tests split across pytest processes (src/testrun/shards.rs), end to end:
//! on a project of two test files of eight tests each, the first check measures that the
//! suite allows it (its coverage kept with `side_by_side`), and the patched run of the 16
//! selected tests is two processes of one file each; with `LANSER_TEST_SHARDS=1` it is one,
//! and the process reward is the same bytes; `tests --run` the same. Which process ran what is
//! read from a log the fixture's conftest writes for each test run on the patched text.

use crate::support::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const CONFTEST: &str = r#"import os

def pytest_runtest_call(item):
    path = os.environ.get("LANSER_TEST_RUNLOG")
    with open(os.path.join(os.getcwd(), "pkg", "a.py")) as f:
        patched = "x + 0" in f.read()
    if path and patched:
        with open(path, "a") as f:
            f.write(f"{os.getpid()} {item.nodeid}\n")
"#;

fn tests_of(n: usize) -> String {
    let mut t = String::from("from pkg.a import f\n\n");
    for i in 0..n {
        t += &format!("\ndef test_{i}():\n    assert f({i}) == {i}\n\n");
    }
    t
}

/// `lanser ARGS --patch PATCH` (`check` with pr-v3 and the impacted tests, or `tests --run`)
/// with `LANSER_TEST_SHARDS=shards`; the bundle and, per process, the test files whose tests
/// it ran on the patched text.
fn patched(
    ws: &Path,
    home: &Path,
    args: &[&str],
    patch: &Path,
    shards: &str,
) -> (serde_json::Value, Vec<BTreeSet<String>>) {
    let log = home.join("runs.log");
    let _ = std::fs::remove_file(&log);
    let o = lanser()
        .env("LANSER_HOME", home)
        .env("VIRTUAL_ENV", pinned_venv())
        .env("LANSER_TEST_RUNLOG", &log)
        .env("LANSER_TEST_SHARDS", shards)
        .args(args)
        .arg("--patch")
        .arg(patch)
        .args(["--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut by_pid: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
        let (pid, id) = line.split_once(' ').unwrap();
        let file = id.split("::").next().unwrap().to_string();
        by_pid.entry(pid.to_string()).or_default().insert(file);
    }
    (bundle(&o), by_pid.into_values().collect())
}

#[test]
fn a_suite_that_allows_it_runs_its_selected_files_side_by_side_with_the_same_reward() {
    let tmp = tempfile::tempdir().unwrap();
    let home = home_with_pyright(tmp.path());
    let ws = tmp.path().join("proj");
    write_tree(
        &ws,
        &[
            ("conftest.py", CONFTEST),
            ("pkg/__init__.py", ""),
            ("pkg/a.py", "def f(x):\n    return x\n\n\nZERO = 0\n"),
            ("tests/test_one.py", &tests_of(8)),
            ("tests/test_two.py", &tests_of(8)),
        ],
    );
    let patch = tmp.path().join("p.diff");
    std::fs::write(
        &patch,
        one_line_diff(&ws, "pkg/a.py", "return x", "return x + 0"),
    )
    .unwrap();

    let check = ["check", "--reward", "pr-v3", "--tests", "impacted"];
    let (split, procs) = patched(&ws, &home, &check, &patch, "2");
    let sets: BTreeSet<BTreeSet<String>> = procs.iter().cloned().collect();
    let want: BTreeSet<BTreeSet<String>> = ["tests/test_one.py", "tests/test_two.py"]
        .map(|f| BTreeSet::from([f.to_string()]))
        .into();
    assert_eq!(sets, want, "two processes, one file each: {procs:?}");
    assert_eq!(procs.len(), 2, "{procs:?}");
    let ran = &split["processReward"]["inputs"]["tests"]["ran"];
    assert_eq!(ran.as_array().unwrap().len(), 16, "{ran}");

    let (one, procs) = patched(&ws, &home, &check, &patch, "1");
    assert_eq!(procs.len(), 1, "one process: {procs:?}");
    assert_eq!(procs[0].len(), 2, "{procs:?}");
    assert_eq!(one["processReward"], split["processReward"]);

    // `tests --run` splits the same way, with the same facts.
    let (split, procs) = patched(&ws, &home, &["tests", "--run"], &patch, "2");
    let sets: BTreeSet<BTreeSet<String>> = procs.iter().cloned().collect();
    assert_eq!(sets, want, "{procs:?}");
    let (one, procs) = patched(&ws, &home, &["tests", "--run"], &patch, "1");
    assert_eq!(procs.len(), 1, "{procs:?}");
    assert_eq!(one["facts"], split["facts"]);
    assert_eq!(
        split["facts"]["summary"]["passed"], 16,
        "{}",
        split["facts"]
    );
}

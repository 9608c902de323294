//! pytest's own view of a project's tests, from the same overlay and plugin as a run:
//! [`collect`] lists every test as `pytest --collect-only` finds it (node ids, with the file
//! and line pytest reports for each: unittest `TestCase` methods, each parametrized
//! instance, doctests where the configuration enables them), and [`coverage`] runs tests
//! under coverage.py with one dynamic context per test (what pytest-cov's
//! `--cov-context=test` does: `Coverage.switch_context(nodeid)` around each test), giving
//! the lines each test executes and each test's outcome. coverage.py must be importable by
//! the project's interpreter, as pytest must.

use super::{in_overlay, outcomes, tally, Mode, Plan, Run, TestRunError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One collected test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collected {
    /// The node id, relative to the workspace root.
    pub id: String,
    /// The file pytest reports it in (workspace-relative, `/`-separated).
    pub path: String,
    /// 0-based line of its definition (of the docstring for a doctest), when pytest knows it.
    pub line: Option<u32>,
    pub doctest: bool,
    /// pytest's name for it (`Class.test_m`, `[doctest] pkg.mod.func`).
    pub name: String,
}

/// A collector pytest could not collect: a test module that fails to import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Broken {
    /// The collector's node id (a test file's path).
    pub id: String,
    /// The workspace-relative files its error's traceback runs through (the module that
    /// failed, and each module it was importing).
    #[serde(default)]
    pub files: Vec<String>,
}

/// What pytest collected in an overlay: its tests, and the collectors that failed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collection {
    /// Sorted by id.
    pub tests: Vec<Collected>,
    /// Sorted by id.
    pub broken: Vec<Broken>,
}

/// Every test pytest collects in the plan's overlay, and every collector that fails there
/// (the plan's tests and mode are ignored).
pub fn collect(plan: &Plan) -> Result<Collection, TestRunError> {
    let plan = Plan {
        mode: Mode::Collect,
        tests: vec![],
        ..plan.clone()
    };
    let mut lines = String::new();
    let (report, _) = in_overlay(&plan, |aux| {
        lines = std::fs::read_to_string(aux.join("collected.jsonl")).unwrap_or_default();
        Ok(())
    })?;
    let mut tests: Vec<Collected> = lines
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    tests.sort_by(|a, b| a.id.cmp(&b.id));
    tests.dedup_by(|a, b| a.id == b.id);
    Ok(Collection {
        tests,
        broken: broken(&report),
    })
}

/// The failed collectors among a run's report lines.
fn broken(report: &str) -> Vec<Broken> {
    let mut out: Vec<Broken> = report
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["when"] == "collect" && v["outcome"] == "failed")
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out.dedup_by(|a, b| a.id == b.id);
    out
}

/// Lines each test executed: test id → workspace-relative file → 1-based lines.
pub type Coverage = BTreeMap<String, BTreeMap<String, Vec<u32>>>;

/// Run the plan's tests under coverage.py: their outcomes and the lines each executed.
/// `None` for the coverage when coverage.py is not importable by the plan's interpreter.
pub fn coverage(plan: &Plan) -> Result<(Run, Option<Coverage>), TestRunError> {
    let plan = Plan {
        mode: Mode::Coverage,
        ..plan.clone()
    };
    if plan.tests.is_empty() {
        return Ok((tally(&plan, vec![], false), Some(Coverage::new())));
    }
    if !importable(&plan, "coverage") {
        return Ok((
            super::run(&Plan {
                mode: Mode::Run,
                ..plan
            })?,
            None,
        ));
    }
    let mut data = String::new();
    let (text, timed_out) = in_overlay(&plan, |aux| {
        data = std::fs::read_to_string(aux.join("coverage.json")).unwrap_or_default();
        Ok(())
    })?;
    let run = tally(&plan, outcomes(&plan.tests, &text), timed_out);
    Ok((run, serde_json::from_str(&data).ok()))
}

/// (interpreter, module) pairs known to import, for the life of the process: a warm session
/// probes once, not on every run (a module that did not import is asked again, so one
/// installed later is found).
static IMPORTS: std::sync::Mutex<std::collections::BTreeSet<(std::path::PathBuf, String)>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Whether `python` is known to import `module` (a probe of this process said so).
pub(crate) fn known_importable(python: &std::path::Path, module: &str) -> bool {
    IMPORTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(&(python.to_path_buf(), module.to_string()))
}

/// Remember that `python` imports `module`.
pub(crate) fn remember_importable(python: &std::path::Path, module: &str) {
    IMPORTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((python.to_path_buf(), module.to_string()));
}

/// Whether the plan's interpreter imports `module`.
pub fn importable(plan: &Plan, module: &str) -> bool {
    if known_importable(&plan.python, module) {
        return true;
    }
    let ok = std::process::Command::new(&plan.python)
        .args(["-c", &format!("import {module}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        remember_importable(&plan.python, module);
    }
    ok
}

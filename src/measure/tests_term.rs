//! pr-v2's and pr-v3's test terms (`--tests impacted`): the tests [`super::impact`] selects for a change,
//! run by [`crate::testrun`] on an overlay copy with the change applied, in the workspace's
//! interpreter (the one the server is given). The outcome is read through
//! [`crate::inputs`]: a traced run records it and a replay serves it without running a test.

use super::impact;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Cx, Ground};
use crate::reward::v2::{TestOutcome, Tests};
use crate::reward::v3;
use crate::selector::resolve::Document;
use crate::testrun::{self, Outcome, Plan};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

const INPUT: &str = "tests:impacted";

pub async fn run(
    cx: &mut Cx<'_>,
    changes: &[(Document, String)],
    budget: Duration,
) -> Result<Tests> {
    let (seeds, files) = impact::seeds_of_changes(changes);
    let found = impact::analyse(
        cx,
        seeds,
        files,
        impact::DEFAULT_DEPTH,
        impact::tests_of::Rules::Naming,
    )
    .await?;
    let ids: Vec<String> = found.tests.keys().cloned().collect();
    let key = ids.join(" ");
    let ran = served_or_run(cx.ground(), INPUT, &key, || Plan {
        root: cx.ws().root.clone(),
        files: cx.ws().python_files(),
        data: vec![],
        changes: changes
            .iter()
            .map(|(d, t)| (d.rel.clone(), t.clone()))
            .collect(),
        tests: ids,
        budget,
        python: crate::env::find_python(cx.ws()).unwrap_or_else(|| PathBuf::from("python3")),
        import_roots: cx
            .ws()
            .import_roots()
            .iter()
            .filter_map(|r| cx.ws().relative(r))
            .chain([".".to_string()])
            .collect(),
        project_addopts: false,
        whole_files: false,
        side_by_side: false,
        mode: testrun::Mode::Run,
    })
    .await?;
    Ok(tally(&ran))
}

fn tally(run: &testrun::Run) -> Tests {
    Tests {
        passed: run.passed,
        failed: run.failed,
        errors: run.errors,
        timed_out: run.timed_out,
        ran: run
            .tests
            .iter()
            .map(|t| TestOutcome {
                id: t.id.clone(),
                outcome: name(t.outcome).into(),
            })
            .collect(),
    }
}

/// pr-v3's test term under way: the tests selected, their run after the change started (on
/// its overlay, in its own process: the server's re-check goes on meanwhile).
pub struct PendingV3 {
    ids: Vec<String>,
    selection: String,
    /// The outcomes before the change a measurement already knows.
    before: BTreeMap<String, Outcome>,
    after: Started,
    budget: Duration,
}

/// pr-v3's test term, begun: select the tests of `changes` ([`impact::selection`]) and start
/// their run after the change on an overlay; [`finish_v3`] reads it, with their outcomes before
/// the change (from the coverage run of the workspace as it is, else run then on an overlay
/// without the change; kept per workspace state in the process).
pub async fn start_v3(
    cx: &mut Cx<'_>,
    changes: &[(Document, String)],
    budget: Duration,
) -> Result<PendingV3> {
    let (seeds, files) = impact::seeds_of_changes(changes);
    let lines = impact::selection::lines_of_changes(changes);
    let depth = impact::DEFAULT_DEPTH;
    let edits: Vec<(String, String)> = changes
        .iter()
        .map(|(d, t)| (d.rel.clone(), t.clone()))
        .collect();
    let chosen = impact::selection::select(cx, seeds, files, depth, lines, Some(&edits)).await?;
    let ids: Vec<String> = chosen.analysis.tests.keys().cloned().collect();
    let mut selection = match (chosen.selection.tests.as_str(), chosen.selection.coverage) {
        ("pytest", true) => "pytest+coverage",
        ("pytest", false) => "pytest",
        _ => "naming",
    }
    .to_string();
    // The rules that widened a line no test executed: `+definition`, `+file`.
    let rules: BTreeSet<&str> = chosen
        .selection
        .widened
        .iter()
        .map(|w| w.rule.as_str())
        .collect();
    for r in rules {
        selection.push('+');
        selection.push_str(r);
    }
    // Test modules that fail to import as the workspace is: the collection after the change.
    if chosen.selection.after_change.is_some() {
        selection.push_str("+collect");
    }
    let side_by_side = chosen.side_by_side;
    let after = start(cx.ground(), "tests:selected", &ids.join(" "), || Plan {
        budget,
        side_by_side,
        ..impact::pytest::plan(cx.ground(), edits, ids.clone())
    });
    let before = chosen.before.unwrap_or_default();
    Ok(PendingV3 {
        ids,
        selection,
        before,
        after,
        budget,
    })
}

/// The test term of a run [`start_v3`] started.
pub async fn finish_v3(cx: &mut Cx<'_>, p: PendingV3) -> Result<v3::Tests> {
    let (ids, budget) = (&p.ids, p.budget);
    let after = finish(cx.ground(), "tests:selected", &ids.join(" "), p.after).await?;
    // The selected tests' outcomes before the change that no measurement knows: run then, on
    // an overlay without the change (kept per workspace state in the process).
    let mut before = p.before;
    let unknown: Vec<String> = ids
        .iter()
        .filter(|id| !before.contains_key(*id))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        let key = (impact::pytest::state_digest(cx.ground()), unknown.join(" "));
        let cached = BEFORE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let run = match cached {
            Some(r) => r,
            None => recorded_run(cx.ground(), "tests:before", vec![], &unknown, budget).await?,
        };
        if !run.timed_out {
            BEFORE
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, run.clone());
        }
        before.extend(run.tests.into_iter().map(|t| (t.id, t.outcome)));
    }
    let ran = after
        .tests
        .iter()
        .map(|t| v3::TestChange {
            id: t.id.clone(),
            before: name(before.get(&t.id).copied().unwrap_or(Outcome::NotRun)).into(),
            after: name(t.outcome).into(),
        })
        .collect();
    Ok(v3::Tests::new(ran, after.timed_out, p.selection))
}

type BeforeRuns = Mutex<BTreeMap<(String, String), testrun::Run>>;
/// Runs of the selected tests on the workspace as it is, by (state digest, ids).
static BEFORE: BeforeRuns = Mutex::new(BTreeMap::new());

/// Run `ids` with `edits` over the workspace (the project's addopts kept), read through the
/// inputs under `input`: a trace records the run, a replay serves it.
async fn recorded_run(
    g: &Ground,
    input: &str,
    edits: Vec<(String, String)>,
    ids: &[String],
    budget: Duration,
) -> Result<testrun::Run> {
    let key = ids.join(" ");
    served_or_run(g, input, &key, || Plan {
        budget,
        ..impact::pytest::plan(g, edits, ids.to_vec())
    })
    .await
}

/// The run of the plan `plan` makes, read through the inputs under (`input`, `key`): a trace
/// records it, a replay serves it without running anything.
async fn served_or_run(
    g: &Ground,
    input: &str,
    key: &str,
    plan: impl FnOnce() -> Plan,
) -> Result<testrun::Run> {
    let started = start(g, input, key, plan);
    finish(g, input, key, started).await
}

/// A run served from the trace, or under way in its own thread.
enum Started {
    Served,
    Running(tokio::task::JoinHandle<std::result::Result<testrun::Run, testrun::TestRunError>>),
}

/// Start the run of `plan` unless the trace serves (`input`, `key`).
fn start(g: &Ground, input: &str, key: &str, plan: impl FnOnce() -> Plan) -> Started {
    if g.opts().inputs.serves(input, key) {
        return Started::Served;
    }
    let plan = plan();
    Started::Running(tokio::task::spawn_blocking(move || testrun::run(&plan)))
}

/// The run [`start`] started (or the trace's), read through the inputs: a trace records it.
async fn finish(g: &Ground, input: &str, key: &str, started: Started) -> Result<testrun::Run> {
    let text = match started {
        Started::Served => g.opts().inputs.read_to_string(input, key, || {
            Err(std::io::Error::other("served from the trace"))
        }),
        Started::Running(handle) => {
            let ran = handle
                .await
                .map_err(|e| LanserError::internal("the test run panicked").with_source(e))?
                .map_err(|e| {
                    LanserError::usage("--tests impacted: cannot run the tests").with_source(e)
                })?;
            let bytes = serde_json::to_vec(&ran).expect("runs serialize");
            g.opts().inputs.read_to_string(input, key, || Ok(bytes))
        }
    };
    let text = text.map_err(|e| {
        LanserError::internal("--tests impacted: cannot read the test run").with_source(e)
    })?;
    serde_json::from_str(&text)
        .map_err(|e| LanserError::internal("--tests impacted: bad record").with_source(e))
}

/// An outcome's name in a bundle.
pub fn name(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
        Outcome::NotRun => "notRun",
    }
}

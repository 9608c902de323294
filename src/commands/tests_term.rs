//! pr-v2's test term (`--tests impacted`): the tests [`super::impact`] selects for a change,
//! run by [`crate::testrun`] on an overlay copy with the change applied, in the workspace's
//! interpreter (the one the server is given). The outcome is read through
//! [`crate::inputs`]: a traced run records it and a replay serves it without running a test.

use super::impact;
use crate::error::{LanserError, Result};
use crate::orchestrator::Orchestrator;
use crate::reward::v2::{TestOutcome, Tests};
use crate::selector::resolve::Document;
use crate::testrun::{self, Outcome, Plan};
use std::path::PathBuf;
use std::time::Duration;

const INPUT: &str = "tests:impacted";

pub async fn run(
    o: &mut Orchestrator,
    changes: &[(Document, String)],
    budget: Duration,
) -> Result<Tests> {
    let (seeds, files) = impact::seeds_of_changes(changes);
    let found = impact::analyse(
        o,
        seeds,
        files,
        impact::DEFAULT_DEPTH,
        impact::tests_of::Rules::Naming,
    )
    .await?;
    let ids: Vec<String> = found.tests.keys().cloned().collect();
    let key = ids.join(" ");
    let text = if o.opts().inputs.serves(INPUT, &key) {
        o.opts().inputs.read_to_string(INPUT, &key, || {
            Err(std::io::Error::other("served from the trace"))
        })
    } else {
        let plan = Plan {
            root: o.ws().root.clone(),
            files: o.ws().python_files(),
            changes: changes
                .iter()
                .map(|(d, t)| (d.rel.clone(), t.clone()))
                .collect(),
            tests: ids,
            budget,
            python: crate::env::find_python(o.ws()).unwrap_or_else(|| PathBuf::from("python3")),
            import_roots: o
                .ws()
                .import_roots()
                .iter()
                .filter_map(|r| o.ws().relative(r))
                .chain([".".to_string()])
                .collect(),
            project_addopts: false,
            mode: testrun::Mode::Run,
        };
        let ran = tokio::task::spawn_blocking(move || testrun::run(&plan))
            .await
            .map_err(|e| {
                LanserError::internal(format!("the test run panicked: {e}")).with_source(e)
            })?
            .map_err(|e| LanserError::usage(format!("--tests impacted: {e}")).with_source(e))?;
        let bytes = serde_json::to_vec(&ran).expect("runs serialize");
        o.opts().inputs.read_to_string(INPUT, &key, || Ok(bytes))
    };
    let text =
        text.map_err(|e| LanserError::internal(format!("--tests impacted: {e}")).with_source(e))?;
    let ran: testrun::Run = serde_json::from_str(&text).map_err(|e| {
        LanserError::internal(format!("--tests impacted: bad record: {e}")).with_source(e)
    })?;
    Ok(tally(&ran))
}

fn tally(run: &testrun::Run) -> Tests {
    let name = |o: Outcome| match o {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
        Outcome::NotRun => "notRun",
    };
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

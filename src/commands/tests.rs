//! `lanser tests SEL | --patch FILE [--run]`: the tests that reach a definition or a patch —
//! the same selection as `impact` and pr-v3's test term ([`crate::measure::impact::selection`]:
//! pytest's collection, static reach, measured coverage) — and, with `--run`, each one's
//! outcome, run within `--budget` seconds on an overlay copy of the workspace (the patch
//! applied there, never to the user's files: [`crate::testrun`]).

use super::impact::{self as impact_op, item_fact};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Facts, TestSelection};
use crate::bundle::Bundle;
use crate::error::{LanserError, Result};
use crate::measure::impact::{self, DEFAULT_DEPTH};
use crate::orchestrator::{Ctx, Outcome};
use crate::testrun;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The tests that reach a definition or a patch; --run runs them on an overlay
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Tests {
    /// The definition (path@L42:C7, py://…, …); or give --patch
    pub selector: Option<String>,
    /// A unified diff: the tests for its change (`-` for stdin)
    #[arg(long, value_name = "FILE", conflicts_with = "selector")]
    pub patch: Option<String>,
    /// Run them (with the patch applied, on an overlay copy) and report each outcome
    #[arg(long)]
    pub run: bool,
    /// Wall-clock budget of --run, in seconds
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    pub budget: u64,
    /// Levels of callers to follow
    #[arg(long, default_value_t = DEFAULT_DEPTH, value_name = "N")]
    pub depth: u32,
}

/// One selected test.
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct TestEntry {
    /// pytest's node id.
    pub id: String,
    /// The file and name of the definition it runs.
    pub path: String,
    pub name: String,
    pub range: [u32; 4],
    /// Levels from the change along the static path (absent when only coverage selects it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// With --run: passed, failed, error, skipped or notRun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// `tests`'s facts.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestsFacts {
    pub tests: Vec<TestEntry>,
    pub selection: TestSelection,
    /// Whether they ran (--run).
    pub ran: bool,
    /// With --run: counts by outcome and whether the budget cut the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
}

#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    pub not_run: u64,
    pub timed_out: bool,
}

impl Facts for TestsFacts {}

impl Operation for Tests {
    const NAME: &'static str = "tests";
    type Facts = TestsFacts;
    fn selector(&self) -> Option<&str> {
        self.selector.as_deref()
    }
    /// With --patch it reads its patch file when it runs; --run runs tests.
    fn memoizable(&self) -> bool {
        self.patch.is_none() && !self.run
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, self).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.line(format_args!("tests: {}", facts.tests.len()));
        for t in &facts.tests {
            match &t.outcome {
                Some(o) => page.line(format_args!("  {}  {o}", t.id)),
                None => page.line(format_args!("  {}", t.id)),
            }
        }
        if let Some(s) = &facts.summary {
            page.line(format_args!(
                "{} passed, {} failed, {} errors, {} skipped, {} not run{}",
                s.passed,
                s.failed,
                s.errors,
                s.skipped,
                s.not_run,
                if s.timed_out { " (budget ran out)" } else { "" }
            ));
        }
        for note in &facts.selection.notes {
            page.line(format_args!("note: {note}"));
        }
    }
}

async fn run(o: &mut Ctx<'_>, args: &Tests) -> Result<Outcome<TestsFacts>> {
    if args.budget == 0 {
        return Err(LanserError::usage("--budget must be at least one second"));
    }
    let found = impact_op::select_for(
        o,
        args.selector.as_deref(),
        args.patch.as_deref(),
        args.depth,
        "tests",
    )
    .await?;
    let analysis = &found.chosen.analysis;
    let ids: Vec<String> = analysis.tests.keys().cloned().collect();
    let ran = match args.run {
        true => {
            let split = found.chosen.side_by_side;
            Some(run_tests(o, found.changes.clone(), &ids, args.budget, split).await?)
        }
        false => None,
    };
    let tests = analysis
        .tests
        .iter()
        .map(|(id, (item, depth))| {
            let f = item_fact(o, analysis, item);
            TestEntry {
                id: id.clone(),
                path: f.path,
                name: f.name,
                range: f.range,
                depth: (!found.chosen.coverage_only.contains(id)).then_some(*depth),
                outcome: ran.as_ref().and_then(|r| {
                    let t = r.tests.iter().find(|t| &t.id == id)?;
                    Some(crate::measure::tests_term::name(t.outcome).to_string())
                }),
            }
        })
        .collect();
    let summary = ran.as_ref().map(|r| Summary {
        passed: r.passed,
        failed: r.failed,
        errors: r.errors,
        skipped: r.skipped,
        not_run: r.not_run,
        timed_out: r.timed_out,
    });
    Ok(Outcome::read(
        TestsFacts {
            tests,
            selection: found.chosen.selection.clone(),
            ran: ran.is_some(),
            summary,
        },
        found.resolution,
        found.complete && !analysis.truncated,
    ))
}

/// Run `ids` with `changes` over an overlay copy (split across processes where the project's
/// suite allows it: `side_by_side`), read through the inputs (a trace records the run; a
/// replay serves it).
async fn run_tests(
    o: &Ctx<'_>,
    changes: Vec<(String, String)>,
    ids: &[String],
    budget: u64,
    side_by_side: bool,
) -> Result<testrun::Run> {
    const INPUT: &str = "tests:run";
    let key = format!(
        "{} {}",
        crate::digest::sha256_hex(&serde_json::to_vec(&changes).expect("changes serialize")),
        ids.join(" ")
    );
    let text = if o.opts().inputs.serves(INPUT, &key) {
        o.opts().inputs.read_to_string(INPUT, &key, || {
            Err(std::io::Error::other("served from the trace"))
        })
    } else {
        let plan = testrun::Plan {
            budget: Duration::from_secs(budget),
            side_by_side,
            ..impact::pytest::plan(o.ground(), changes, ids.to_vec())
        };
        let ran = tokio::task::spawn_blocking(move || testrun::run(&plan))
            .await
            .map_err(|e| LanserError::internal("the test run panicked").with_source(e))?
            .map_err(|e| LanserError::usage("tests --run: cannot run the tests").with_source(e))?;
        let bytes = serde_json::to_vec(&ran).expect("runs serialize");
        o.opts().inputs.read_to_string(INPUT, &key, || Ok(bytes))
    };
    let text = text.map_err(|e| {
        LanserError::internal("tests --run: cannot read the test run").with_source(e)
    })?;
    serde_json::from_str(&text)
        .map_err(|e| LanserError::internal("tests --run: bad record").with_source(e))
}

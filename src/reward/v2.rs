//! The process reward pr-v2 (`--reward pr-v2`): built from facts lanser can verify, so that
//! it ranks a good step above a bad one where pr-v1's single diagnostics count cannot.
//!
//! ```text
//! r = Σ_k w_k·(D_prev,k − D_now,k)          diagnostics delta per kind
//!   − w_remaining·min(R_now, 3)              run-time errors left that HEAD has not
//!   − w_structural·(removed + stale + ret)   structural facts a count misses
//!   + w_tests·T                              impacted tests (only with --tests impacted)
//!   + w_safety·S − w_ambiguity·(1 − α)
//! ```
//!
//! Kinds k: `runtime` (errors that break at run time: undefined names, missing imports, wrong
//! arity, unknown attributes, syntax errors), `error` (other errors), `warning`. R_now counts
//! the run-time errors in the touched files and their importers after the step that they do
//! not have at git HEAD, where the episode started (before the step, outside git): a partial
//! fix leaves some, a breakage not yet repaired too, while the project's own (a server's
//! false positives, a known bug) never count. Structural facts: public definitions removed while still referenced from files the
//! step did not touch, definitions whose signature changed incompatibly with call sites in
//! untouched files, functions whose inferred return type changed under callers. T is +1 when
//! the impacted tests ran and passed, −1 when one failed, errored or the budget ran out, 0 when
//! none ran. Every input is recorded, so `lanser reward --from-bundles` recomputes r offline.

use super::v1::round;
use crate::error::{LanserError, Result};
use serde::{Deserialize, Serialize};

pub const VERSION: &str = "pr-v2";

/// The weights of every term (named, so a bundle explains itself).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Weights {
    pub runtime: f64,
    pub error: f64,
    pub warning: f64,
    pub remaining: f64,
    pub structural: f64,
    pub tests: f64,
    pub safety: f64,
    pub ambiguity: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            runtime: 1.0,
            error: 0.5,
            warning: 0.1,
            remaining: 1.25,
            structural: 0.5,
            tests: 2.0,
            safety: 0.4,
            ambiguity: 0.1,
        }
    }
}

impl Weights {
    /// `name=value,…` over the defaults (`runtime=2,tests=0`); every value non-negative.
    pub fn parse(s: &str) -> Result<Weights> {
        let mut w = Weights::default();
        for (name, value) in super::weight_pairs(s).ok_or_else(|| bad_weights(s))? {
            let slot = match name {
                "runtime" => &mut w.runtime,
                "error" => &mut w.error,
                "warning" => &mut w.warning,
                "remaining" => &mut w.remaining,
                "structural" => &mut w.structural,
                "tests" => &mut w.tests,
                "safety" => &mut w.safety,
                "ambiguity" => &mut w.ambiguity,
                _ => return Err(bad_weights(s)),
            };
            *slot = value;
        }
        Ok(w)
    }
}

fn bad_weights(s: &str) -> LanserError {
    LanserError::usage(format!(
        "--reward-weights {s:?}: pr-v2 takes name=value pairs (runtime, error, warning, \
         remaining, structural, tests, safety, ambiguity), each a non-negative number"
    ))
}

/// Diagnostics by kind over the files a step is measured on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Tally {
    pub runtime: u64,
    pub error: u64,
    pub warning: u64,
}

/// Structural facts a diagnostics count misses.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Structural {
    /// Public definitions the step removed, with references left in files it did not touch.
    pub removed_referenced: u64,
    /// References, in files the step did not touch, to definitions whose signature it changed
    /// incompatibly (a parameter dropped or renamed, a required one added).
    pub stale_call_sites: u64,
    /// Functions with callers whose inferred return type the step changed.
    pub return_changed: u64,
}

impl Structural {
    pub fn total(&self) -> u64 {
        self.removed_referenced + self.stale_call_sites + self.return_changed
    }
}

/// The impacted tests' outcomes (`--tests impacted`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tests {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub timed_out: bool,
    /// Each selected test (pytest node id) and how it ended: passed, failed, error, skipped,
    /// notRun.
    #[serde(default)]
    pub ran: Vec<TestOutcome>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TestOutcome {
    pub id: String,
    pub outcome: String,
}

impl Tests {
    /// T: +1 all passed, −1 one failed or errored or the budget ran out, 0 none ran.
    pub fn score(&self) -> f64 {
        if self.failed + self.errors > 0 || self.timed_out {
            -1.0
        } else if self.passed > 0 {
            1.0
        } else {
            0.0
        }
    }
}

/// What a command measured for pr-v2 (beside pr-v1's counts).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Measured {
    pub before: Option<Tally>,
    pub after: Option<Tally>,
    pub remaining: Option<u64>,
    pub structural: Option<Structural>,
    pub tests: Option<Tests>,
    /// pr-v3's test term (measured only under pr-v3).
    pub tests3: Option<super::v3::Tests>,
}

/// Every input of the formula, as recorded in the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inputs {
    pub before: Option<Tally>,
    pub after: Option<Tally>,
    /// R_now: run-time errors in the touched files and their importers after the step that
    /// git HEAD does not have.
    pub remaining: Option<u64>,
    pub structural: Option<Structural>,
    pub tests: Option<Tests>,
    /// S ∈ {0, 1}.
    pub safety: u8,
    /// α ∈ [0, 1].
    pub confidence: f64,
}

impl Inputs {
    pub fn new(m: Measured, safety: u8, confidence: f64) -> Inputs {
        Inputs {
            before: m.before,
            after: m.after,
            remaining: m.remaining,
            structural: m.structural,
            tests: m.tests,
            safety,
            confidence,
        }
    }
}

/// Each term's contribution to r (weights applied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Components {
    pub diagnostics: f64,
    pub remaining: f64,
    pub structural: f64,
    pub tests: f64,
    pub safety: f64,
    pub ambiguity_penalty: f64,
}

/// The bundle's `processReward` under pr-v2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reward {
    pub version: String,
    pub r: f64,
    pub components: Components,
    pub weights: Weights,
    pub inputs: Inputs,
    pub explanation: String,
}

/// The remaining-errors term saturates: three left is as bad as many.
const REMAINING_CAP: u64 = 3;

pub fn compute(w: Weights, i: Inputs) -> Reward {
    let diagnostics = match (i.before, i.after) {
        (Some(b), Some(a)) => {
            let d = |x: u64, y: u64| x as f64 - y as f64;
            w.runtime * d(b.runtime, a.runtime)
                + w.error * d(b.error, a.error)
                + w.warning * d(b.warning, a.warning)
        }
        _ => 0.0,
    };
    let remaining = -w.remaining * i.remaining.unwrap_or(0).min(REMAINING_CAP) as f64;
    let structural = -w.structural * i.structural.map_or(0, |s| s.total()) as f64;
    let tests = w.tests * i.tests.as_ref().map_or(0.0, |t| t.score());
    let safety = w.safety * f64::from(i.safety.min(1));
    let ambiguity = 1.0 - i.confidence.clamp(0.0, 1.0);
    let components = Components {
        diagnostics: round(diagnostics),
        remaining: round(remaining),
        structural: round(structural),
        tests: round(tests),
        safety: round(safety),
        ambiguity_penalty: round(w.ambiguity * ambiguity),
    };
    let r = round(diagnostics + remaining + structural + tests + safety - w.ambiguity * ambiguity);
    Reward {
        version: VERSION.into(),
        r,
        components,
        weights: w,
        explanation: explain(&i),
        inputs: i,
    }
}

fn explain(i: &Inputs) -> String {
    let mut parts = Vec::new();
    match (i.before, i.after) {
        (Some(b), Some(a)) if b == a => parts.push("diagnostics unchanged".to_string()),
        (Some(b), Some(a)) => parts.push(format!(
            "run-time errors {}→{}, other errors {}→{}, warnings {}→{}",
            b.runtime, a.runtime, b.error, a.error, b.warning, a.warning
        )),
        _ => parts.push("diagnostics not changed by this step".to_string()),
    }
    if let Some(n) = i.remaining.filter(|n| *n > 0) {
        parts.push(format!(
            "{n} run-time error(s) left that HEAD does not have"
        ));
    }
    if let Some(s) = i.structural.filter(|s| s.total() > 0) {
        parts.push(format!(
            "{} removed definition(s) still referenced, {} stale call site(s), {} return \
             type(s) changed under callers",
            s.removed_referenced, s.stale_call_sites, s.return_changed
        ));
    }
    match &i.tests {
        Some(t) if t.timed_out => parts.push("impacted tests ran out of time".to_string()),
        Some(t) if t.failed + t.errors > 0 => parts.push(format!(
            "impacted tests: {} failed, {} errored, {} passed",
            t.failed, t.errors, t.passed
        )),
        Some(t) if t.passed > 0 => parts.push(format!("impacted tests: {} passed", t.passed)),
        Some(_) => parts.push("no impacted tests ran".to_string()),
        None => {}
    }
    parts.push(
        if i.safety > 0 {
            "safety checks pass"
        } else {
            "a safety check failed"
        }
        .to_string(),
    );
    parts.push(format!("resolution confidence {}", round(i.confidence)));
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(runtime: u64, error: u64, warning: u64) -> Tally {
        Tally {
            runtime,
            error,
            warning,
        }
    }

    fn step(before: Tally, after: Tally, remaining: u64) -> Inputs {
        Inputs {
            before: Some(before),
            after: Some(after),
            remaining: Some(remaining),
            structural: None,
            tests: None,
            safety: 1,
            confidence: 1.0,
        }
    }

    #[test]
    fn a_partial_fix_scores_below_a_neutral_step_and_an_exact_fix_above() {
        let w = Weights::default();
        let exact = compute(w, step(tally(2, 0, 0), tally(0, 0, 0), 0)).r;
        let partial = compute(w, step(tally(2, 0, 0), tally(1, 0, 0), 1)).r;
        let neutral = compute(w, step(tally(0, 1, 3), tally(0, 1, 3), 0)).r;
        assert!(exact > neutral, "{exact} {neutral}");
        assert!(partial < neutral, "{partial} {neutral}");
        // pr-v1 cannot tell a partial fix from progress: its delta is positive.
        let v1 = crate::reward::v1::compute(
            crate::reward::v1::Weights::default(),
            crate::reward::v1::Inputs {
                d_prev: Some(2),
                d_now: Some(1),
                safety: 1,
                confidence: 1.0,
            },
        );
        assert!(v1.r > neutral);
    }

    #[test]
    fn run_time_errors_weigh_more_than_style_warnings() {
        let w = Weights::default();
        let new_runtime = compute(w, step(tally(0, 0, 0), tally(1, 0, 0), 1)).r;
        let new_warning = compute(w, step(tally(0, 0, 0), tally(0, 0, 1), 0)).r;
        assert!(new_runtime < new_warning);
        assert_eq!(new_warning, round(-0.1 + 0.4));
        assert_eq!(new_runtime, round(-1.0 - 1.25 + 0.4));
    }

    #[test]
    fn structural_facts_and_tests_move_r_and_are_explained() {
        let w = Weights::default();
        let mut i = step(tally(0, 0, 0), tally(0, 0, 0), 0);
        let base = compute(w, i.clone()).r;
        i.structural = Some(Structural {
            removed_referenced: 1,
            stale_call_sites: 2,
            return_changed: 0,
        });
        let r = compute(w, i.clone());
        assert_eq!(r.r, round(base - 1.5));
        assert!(r.explanation.contains("2 stale call site(s)"));
        i.structural = None;
        i.tests = Some(Tests {
            passed: 3,
            failed: 1,
            errors: 0,
            timed_out: false,
            ran: vec![],
        });
        assert_eq!(compute(w, i.clone()).r, round(base - 2.0));
        i.tests = Some(Tests {
            passed: 3,
            ..Tests::default()
        });
        assert_eq!(compute(w, i.clone()).r, round(base + 2.0));
        i.tests = Some(Tests {
            timed_out: true,
            ..Tests::default()
        });
        assert_eq!(compute(w, i.clone()).components.tests, -2.0);
        i.tests = Some(Tests::default());
        assert_eq!(compute(w, i.clone()).components.tests, 0.0);
    }

    #[test]
    fn remaining_errors_saturate() {
        let w = Weights::default();
        let three = compute(w, step(tally(9, 0, 0), tally(9, 0, 0), 3)).r;
        let nine = compute(w, step(tally(9, 0, 0), tally(9, 0, 0), 9)).r;
        assert_eq!(three, nine);
    }

    #[test]
    fn weights_parse_by_name_over_the_defaults() {
        let w = Weights::parse("runtime=2, tests=0").unwrap();
        assert_eq!(w.runtime, 2.0);
        assert_eq!(w.tests, 0.0);
        assert_eq!(w.error, Weights::default().error);
        assert_eq!(Weights::parse("").unwrap(), Weights::default());
        for bad in [
            "runtime",
            "speed=1",
            "runtime=-1",
            "runtime=x",
            "0.5,0.4,0.1",
        ] {
            assert!(Weights::parse(bad).is_err(), "{bad}");
        }
    }
}

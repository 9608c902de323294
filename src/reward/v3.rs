//! The process reward pr-v3 (`--reward pr-v3`): pr-v2's terms with an absolute test term.
//!
//! ```text
//! r = D⁺ − w_remaining·min(R_now, 3) − w_structural·(removed + stale + ret)
//!   + T + w_safety·S − w_ambiguity·(1 − α)
//! D  = Σ_k w_k·(D_prev,k − D_now,k)                      as pr-v2
//! D⁺ = D, or min(D, 0) when a selected test fails after the step
//! T  = − w_failing·min(F, 3) + w_fixed·min(N, 3) + w_passing·[F = 0 ∧ P > 0]
//! ```
//!
//! over the selected tests (only with `--tests impacted`): F those failing or erroring after
//! the step, whatever they did before (a cut run counts as at least one), N those passing
//! after that failed before, P those passing after. A step that leaves a selected test
//! failing cannot buy it back with diagnostics or fixed tests: with the default weights
//! (w_failing > 3·w_fixed) its T is at most −0.5 and r stays below a neutral step's
//! w_safety·S − w_ambiguity·(1 − α); a partial fix scores below neutral, an exact fix above.

use super::v1::round;
use super::v2::{Structural, Tally};
use crate::error::{LanserError, Result};
use serde::{Deserialize, Serialize};

pub const VERSION: &str = "pr-v3";

/// The weights of every term (named, so a bundle explains itself).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Weights {
    pub runtime: f64,
    pub error: f64,
    pub warning: f64,
    pub remaining: f64,
    pub structural: f64,
    pub failing: f64,
    pub fixed: f64,
    pub passing: f64,
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
            failing: 2.0,
            fixed: 0.5,
            passing: 1.0,
            safety: 0.4,
            ambiguity: 0.1,
        }
    }
}

impl Weights {
    /// `name=value,…` over the defaults (`failing=3,passing=0`); every value non-negative.
    pub fn parse(s: &str) -> Result<Weights> {
        let mut w = Weights::default();
        for (name, value) in super::weight_pairs(s).ok_or_else(|| bad_weights(s))? {
            let slot = match name {
                "runtime" => &mut w.runtime,
                "error" => &mut w.error,
                "warning" => &mut w.warning,
                "remaining" => &mut w.remaining,
                "structural" => &mut w.structural,
                "failing" => &mut w.failing,
                "fixed" => &mut w.fixed,
                "passing" => &mut w.passing,
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
        "--reward-weights {s:?}: pr-v3 takes name=value pairs (runtime, error, warning, \
         remaining, structural, failing, fixed, passing, safety, ambiguity), each a \
         non-negative number"
    ))
}

/// One selected test: its outcome before and after the step (passed, failed, error,
/// skipped, notRun).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TestChange {
    pub id: String,
    pub before: String,
    pub after: String,
}

/// The selected tests before and after the step (`--tests impacted`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tests {
    /// F: failing or erroring after.
    pub failing: u64,
    /// N: passing after, failing or erroring before.
    pub fixed: u64,
    /// P: passing after.
    pub passed: u64,
    /// The run after the step ran out of its budget.
    pub timed_out: bool,
    /// How the tests were selected (`pytest+coverage`, `pytest`, `naming`; `+definition`,
    /// `+file` when a line no test executed widened to its definition's or file's tests).
    pub selection: String,
    pub ran: Vec<TestChange>,
}

impl Tests {
    fn failing_now(&self) -> u64 {
        self.failing.max(u64::from(self.timed_out))
    }
}

fn failed(outcome: &str) -> bool {
    matches!(outcome, "failed" | "error")
}

impl Tests {
    /// Counts from each test's outcomes.
    pub fn new(ran: Vec<TestChange>, timed_out: bool, selection: String) -> Tests {
        let count = |f: &dyn Fn(&TestChange) -> bool| ran.iter().filter(|t| f(t)).count() as u64;
        Tests {
            failing: count(&|t| failed(&t.after)),
            fixed: count(&|t| t.after == "passed" && failed(&t.before)),
            passed: count(&|t| t.after == "passed"),
            timed_out,
            selection,
            ran,
        }
    }
}

/// Every input of the formula, as recorded in the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inputs {
    pub before: Option<Tally>,
    pub after: Option<Tally>,
    /// R_now, as pr-v2's.
    pub remaining: Option<u64>,
    pub structural: Option<Structural>,
    pub tests: Option<Tests>,
    /// S ∈ {0, 1}.
    pub safety: u8,
    /// α ∈ [0, 1].
    pub confidence: f64,
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

/// The bundle's `processReward` under pr-v3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reward {
    pub version: String,
    pub r: f64,
    /// The probability that the step is a good patch (its project's tests lanser did not run
    /// pass after it): a logistic map of the test term and the static terms
    /// ([`probability`]); only when the selected tests ran (`--tests impacted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    pub components: Components,
    pub weights: Weights,
    pub inputs: Inputs,
    pub explanation: String,
}

const CAP: u64 = 3;

/// `p`'s logistic coefficients: intercept, T (`components.tests`), and Z (`components`'
/// diagnostics + remaining + structural, clipped to ±[`CALIBRATION_CLIP`]). Fitted by
/// benches/reward/calibrate.py (maximum likelihood, L2 0.1 on the two slopes) on the reward
/// benchmark's held-out mode (benches/reward/heldout.py, LANSER_REWARD_SAMPLE=3, lanser
/// fba000e) over the five tuning projects only — more-itertools, toolz, cachetools, idna,
/// boltons: 185 patches, 120 good — each patch's pr-v3 terms measured on the workspace holding
/// the visible tests, its label from the hidden ones. Held-out Brier and reliability:
/// docs/reward.md#calibration-p.
pub const CALIBRATION: [f64; 3] = [1.1927, 0.0254, 0.6379];
/// The clip of Z before the map, so a pile of diagnostics cannot drive p to 0 or 1 alone.
pub const CALIBRATION_CLIP: f64 = 3.0;

/// p = σ(c0 + c1·T + c2·clip(Z, −3, 3)), from the weighted components.
pub fn probability(c: &Components) -> f64 {
    let z = (c.diagnostics + c.remaining + c.structural).clamp(-CALIBRATION_CLIP, CALIBRATION_CLIP);
    let [c0, c1, c2] = CALIBRATION;
    let t = c0 + c1 * c.tests + c2 * z;
    round(1.0 / (1.0 + (-t).exp()))
}

pub fn compute(w: Weights, i: Inputs) -> Reward {
    let failing = i.tests.as_ref().map_or(0, Tests::failing_now);
    let mut diagnostics = match (i.before, i.after) {
        (Some(b), Some(a)) => {
            let d = |x: u64, y: u64| x as f64 - y as f64;
            w.runtime * d(b.runtime, a.runtime)
                + w.error * d(b.error, a.error)
                + w.warning * d(b.warning, a.warning)
        }
        _ => 0.0,
    };
    if failing > 0 {
        diagnostics = diagnostics.min(0.0);
    }
    let remaining = -w.remaining * i.remaining.unwrap_or(0).min(CAP) as f64;
    let structural = -w.structural * i.structural.map_or(0, |s| s.total()) as f64;
    let tests = i.tests.as_ref().map_or(0.0, |t| {
        let all_pass = f64::from(u8::from(failing == 0 && t.passed > 0));
        -w.failing * failing.min(CAP) as f64
            + w.fixed * t.fixed.min(CAP) as f64
            + w.passing * all_pass
    });
    let safety = w.safety * f64::from(i.safety.min(1));
    let ambiguity = w.ambiguity * (1.0 - i.confidence.clamp(0.0, 1.0));
    let components = Components {
        diagnostics: round(diagnostics),
        remaining: round(remaining),
        structural: round(structural),
        tests: round(tests),
        safety: round(safety),
        ambiguity_penalty: round(ambiguity),
    };
    let r = round(diagnostics + remaining + structural + tests + safety - ambiguity);
    let p = i.tests.as_ref().map(|_| probability(&components));
    Reward {
        version: VERSION.into(),
        r,
        p,
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
        Some(t) if t.timed_out => parts.push(format!(
            "selected tests ran out of time ({} failing, {} passed)",
            t.failing, t.passed
        )),
        Some(t) if t.failing > 0 => parts.push(format!(
            "selected tests: {} failing after the step, {} fixed, {} passed",
            t.failing, t.fixed, t.passed
        )),
        Some(t) if t.passed > 0 => parts.push(format!(
            "selected tests: {} passed, {} of them fixed",
            t.passed, t.fixed
        )),
        Some(_) => parts.push("no selected test ran".to_string()),
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
mod tests;

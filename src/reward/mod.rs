//! The process reward of a step (docs/reward.md): which formula scores it (pr-v1 by default;
//! pr-v2 and pr-v3 with `--reward`), what a command measured for it, and recomputing a recorded
//! reward offline from the inputs its bundle carries (`lanser reward --from-bundles`).

pub mod v1;
pub mod v2;
pub mod v3;

use crate::error::{LanserError, Result};
use serde_json::Value;
pub use v1::{compute, Inputs, Reward, Weights, VERSION};

/// A formula and its weights, as a run asked for them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scheme {
    V1(v1::Weights),
    V2(v2::Weights),
    V3(v3::Weights),
}

impl Default for Scheme {
    fn default() -> Self {
        Scheme::V1(v1::Weights::default())
    }
}

impl Scheme {
    /// `--reward NAME` with `--reward-weights W` (each version reads its own weight syntax).
    pub fn parse(version: &str, weights: Option<&str>) -> Result<Scheme> {
        match version {
            v1::VERSION => Ok(Scheme::V1(
                weights
                    .map(v1::Weights::parse)
                    .transpose()?
                    .unwrap_or_default(),
            )),
            v2::VERSION => Ok(Scheme::V2(
                weights
                    .map(v2::Weights::parse)
                    .transpose()?
                    .unwrap_or_default(),
            )),
            v3::VERSION => Ok(Scheme::V3(
                weights
                    .map(v3::Weights::parse)
                    .transpose()?
                    .unwrap_or_default(),
            )),
            other => Err(LanserError::usage(format!(
                "--reward {other:?}: expected pr-v1 or pr-v2 or pr-v3"
            ))),
        }
    }

    /// Whether the step measures pr-v2's terms (pr-v3 reads them too).
    pub fn is_v2(&self) -> bool {
        matches!(self, Scheme::V2(_) | Scheme::V3(_))
    }

    pub fn is_v3(&self) -> bool {
        matches!(self, Scheme::V3(_))
    }

    /// The bundle's `processReward` for a step.
    pub fn score(&self, m: &Measured, confidence: f64) -> Value {
        let value = match self {
            Scheme::V1(w) => serde_json::to_value(v1::compute(
                *w,
                v1::Inputs {
                    d_prev: m.d_prev,
                    d_now: m.d_now,
                    safety: m.safety,
                    confidence,
                },
            )),
            Scheme::V2(w) => serde_json::to_value(v2::compute(
                *w,
                v2::Inputs::new(m.v2.clone(), m.safety, confidence),
            )),
            Scheme::V3(w) => serde_json::to_value(v3::compute(
                *w,
                v3::Inputs {
                    before: m.v2.before,
                    after: m.v2.after,
                    remaining: m.v2.remaining,
                    structural: m.v2.structural,
                    tests: m.v2.tests3.clone(),
                    safety: m.safety,
                    confidence,
                },
            )),
        };
        value.expect("rewards serialize")
    }
}

/// What a command measured for its step; the confidence comes from the resolution.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Measured {
    /// pr-v1's D_{t-1} and D_t: error and warning diagnostics.
    pub d_prev: Option<u64>,
    pub d_now: Option<u64>,
    pub safety: u8,
    /// What only pr-v2 reads (measured only when it is asked for).
    pub v2: v2::Measured,
}

/// A recorded reward recomputed: r, its terms, its weights and why; under pr-v3 also p, the
/// calibrated probability of a good patch, as the live path computes it from the recomputed
/// terms (none when the step ran no selected tests).
pub struct Recomputed {
    pub recorded: f64,
    pub r: f64,
    /// The recorded p (none when the bundle has none: recorded before p, or without tests).
    pub recorded_p: Option<f64>,
    pub p: Option<f64>,
    pub components: Value,
    pub weights: Value,
    pub explanation: String,
}

/// `--reward-weights`' `name=value,…` pairs (pr-v2 and pr-v3), each value a non-negative
/// finite number; `None` when one is not. Each version maps the names onto its own weights.
pub(crate) fn weight_pairs(s: &str) -> Option<Vec<(&str, f64)>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=')?;
        let value: f64 = value.trim().parse().ok()?;
        if !(value.is_finite() && value >= 0.0) {
            return None;
        }
        out.push((name.trim(), value));
    }
    Some(out)
}

/// Recompute a recorded bundle's reward from its own recorded inputs, under the version it
/// was recorded with (optionally with other weights, in that version's syntax).
pub fn recompute(bundle: &Value, weights: Option<&str>) -> Result<Recomputed> {
    let pr = bundle
        .get("processReward")
        .filter(|v| !v.is_null())
        .ok_or_else(|| LanserError::usage("bundle has no processReward"))?;
    let bad = |e: serde_json::Error| LanserError::usage("bad processReward").with_source(e);
    let recorded_p = pr.get("p").and_then(Value::as_f64);
    let out = |recorded: f64, again: Value| {
        let field = |k: &str| again.get(k).cloned().unwrap_or(Value::Null);
        Recomputed {
            recorded,
            r: again["r"].as_f64().unwrap_or(f64::NAN),
            recorded_p,
            p: again.get("p").and_then(Value::as_f64),
            components: field("components"),
            weights: field("weights"),
            explanation: again["explanation"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        }
    };
    match pr.get("version").and_then(Value::as_str) {
        Some(v3::VERSION) => {
            let rec: v3::Reward = serde_json::from_value(pr.clone()).map_err(bad)?;
            let w = match weights {
                Some(s) => v3::Weights::parse(s)?,
                None => rec.weights,
            };
            let again = serde_json::to_value(v3::compute(w, rec.inputs)).map_err(bad)?;
            Ok(out(rec.r, again))
        }
        Some(v2::VERSION) => {
            let rec: v2::Reward = serde_json::from_value(pr.clone()).map_err(bad)?;
            let w = match weights {
                Some(s) => v2::Weights::parse(s)?,
                None => rec.weights,
            };
            let again = serde_json::to_value(v2::compute(w, rec.inputs)).map_err(bad)?;
            Ok(out(rec.r, again))
        }
        _ => {
            let rec: v1::Reward = serde_json::from_value(pr.clone()).map_err(bad)?;
            let w = match weights {
                Some(s) => v1::Weights::parse(s)?,
                None => rec.weights,
            };
            let again = serde_json::to_value(v1::compute(w, rec.inputs)).map_err(bad)?;
            Ok(out(rec.r, again))
        }
    }
}

/// `processReward` in the bundle schema: one of the versions.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum AnyReward {
    V1(v1::Reward),
    V2(v2::Reward),
    V3(v3::Reward),
}

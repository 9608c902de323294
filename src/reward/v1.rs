//! The process reward pr-v1 (docs/reward.md#pr-v1), the default:
//! `r = α·(D_{t-1} − D_t) + β·S_t − γ·(1 − α_t)`.
//!
//! D counts error and warning diagnostics in the files a step touches and the workspace files
//! that import them (the target's file for read-only steps); S_t is 1 when every safety check
//! of a prospective mutation passes (vacuously 1 for read-only steps); α_t is the selector's
//! resolution confidence. Everything the formula needs is written into the bundle, so
//! `lanser reward --from-bundles` recomputes it without a server.

use crate::error::{LanserError, Result};
use serde::{Deserialize, Serialize};

pub const VERSION: &str = "pr-v1";

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Weights {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            alpha: 0.5,
            beta: 0.4,
            gamma: 0.1,
        }
    }
}

impl Weights {
    /// `"0.5,0.4,0.1"`: three non-negative numbers.
    pub fn parse(s: &str) -> Result<Weights> {
        let parts: Vec<f64> = s
            .split(',')
            .map(|p| p.trim().parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad_weights(s))?;
        match parts[..] {
            [alpha, beta, gamma] if parts.iter().all(|w| w.is_finite() && *w >= 0.0) => {
                Ok(Weights { alpha, beta, gamma })
            }
            _ => Err(bad_weights(s)),
        }
    }
}

fn bad_weights(s: &str) -> LanserError {
    LanserError::usage(format!(
        "--reward-weights {s:?}: expected three non-negative numbers alpha,beta,gamma"
    ))
}

/// What one step measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inputs {
    /// D_{t-1}; `None` when not measured (then D_t is taken as unchanged).
    pub d_prev: Option<u64>,
    /// D_t.
    pub d_now: Option<u64>,
    /// S_t ∈ {0, 1}.
    pub safety: u8,
    /// α_t ∈ [0, 1].
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Components {
    pub diag_delta: f64,
    pub safety: f64,
    pub ambiguity_penalty: f64,
}

/// The bundle's `processReward`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reward {
    pub version: String,
    pub r: f64,
    pub components: Components,
    pub weights: Weights,
    pub inputs: Inputs,
    pub explanation: String,
}

/// Round to 9 decimals so that bundles carry 1.894, not 1.8939999999999997.
pub(crate) fn round(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

pub fn compute(w: Weights, inputs: Inputs) -> Reward {
    let diag_delta = match (inputs.d_prev, inputs.d_now) {
        (Some(p), Some(n)) => p as f64 - n as f64,
        _ => 0.0,
    };
    let safety = f64::from(inputs.safety.min(1));
    let ambiguity_penalty = round(1.0 - inputs.confidence.clamp(0.0, 1.0));
    let r = round(w.alpha * diag_delta + w.beta * safety - w.gamma * ambiguity_penalty);
    let diag_text = match (inputs.d_prev, inputs.d_now) {
        (Some(p), Some(n)) if p > n => format!("diagnostics fell {p}→{n}"),
        (Some(p), Some(n)) if p < n => format!("diagnostics rose {p}→{n}"),
        (Some(p), Some(_)) => format!("diagnostics unchanged at {p}"),
        _ => "diagnostics not changed by this step".to_string(),
    };
    let safety_text = if safety > 0.0 {
        "safety checks pass"
    } else {
        "a safety check failed"
    };
    Reward {
        version: VERSION.into(),
        r,
        components: Components {
            diag_delta,
            safety,
            ambiguity_penalty,
        },
        weights: w,
        inputs,
        explanation: format!(
            "{diag_text}; {safety_text}; resolution confidence {}",
            round(inputs.confidence)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(d_prev: u64, d_now: u64, safety: u8, confidence: f64) -> Inputs {
        Inputs {
            d_prev: Some(d_prev),
            d_now: Some(d_now),
            safety,
            confidence,
        }
    }

    #[test]
    fn appendix_e_example_1() {
        let r = compute(Weights::default(), step(5, 2, 1, 0.94));
        assert_eq!(r.r, 1.894);
        assert_eq!(r.components.diag_delta, 3.0);
        assert_eq!(r.components.safety, 1.0);
        assert_eq!(r.components.ambiguity_penalty, 0.06);
    }

    #[test]
    fn appendix_e_example_2_as_the_formula_says() {
        // 0 + 0 − 0.1·0.38 (docs/reward.md#worked-examples).
        let r = compute(Weights::default(), step(7, 7, 0, 0.62));
        assert_eq!(r.r, -0.038);
    }

    /// Monotonicity, in the form that holds (docs/reward.md#monotonicity). Literally ("r_t ≥ 0
    /// for any non-negative weights") it is false: −γ(1 − α_t) is never positive, and Example 2
    /// (D 7→7, S 0→0, α 0.62→0.62) meets every premise yet scores −0.038 (see the test below).
    /// What the premises (D_t ≤ D_{t-1}, S_t ≥ S_{t-1}, α_t ≥ α_{t-1}) do guarantee, for any
    /// non-negative weights, is that the step scores at least as well as standing still at t−1:
    /// r_t − (β·S_{t-1} − γ·(1 − α_{t-1})) = α·ΔD + β·ΔS + γ·Δα ≥ 0; and r_t ≥ 0 outright when
    /// additionally α_t = 1. A deterministic xorshift generator covers the space.
    #[test]
    fn proposition_5_2_monotonicity() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 1_000_000) as f64 / 1_000_000.0
        };
        for _ in 0..20_000 {
            let w = Weights {
                alpha: next() * 10.0,
                beta: next() * 10.0,
                gamma: next() * 10.0,
            };
            let d_prev = (next() * 50.0) as u64;
            let d_now = ((next() * (d_prev as f64 + 1.0)) as u64).min(d_prev);
            let s_prev = u8::from(next() < 0.5);
            let s_now = s_prev.max(u8::from(next() < 0.5));
            let a_prev = next();
            let a_now = a_prev + (1.0 - a_prev) * next();
            let r = compute(w, step(d_prev, d_now, s_now, a_now)).r;
            let standing_still = compute(w, step(d_prev, d_prev, s_prev, a_prev)).r;
            assert!(
                r + 1e-9 >= standing_still,
                "{w:?} {d_prev}->{d_now} s{s_prev}->{s_now} a{a_prev}->{a_now}"
            );
            let certain = compute(w, step(d_prev, d_now, s_now, 1.0)).r;
            assert!(certain >= 0.0, "{w:?} {d_prev}->{d_now} s{s_now}");
        }
    }

    #[test]
    fn proposition_5_2_literal_counterexample_is_appendix_e_example_2() {
        let r = compute(Weights::default(), step(7, 7, 0, 0.62));
        assert!(r.r < 0.0);
    }

    #[test]
    fn weights_parse() {
        assert_eq!(Weights::parse("0.5,0.4,0.1").unwrap(), Weights::default());
        assert!(Weights::parse("1,2").is_err());
        assert!(Weights::parse("1,-2,3").is_err());
        assert!(Weights::parse("a,b,c").is_err());
    }
}

//! pr-v3's formula on hand-made inputs: partial fixes below neutral whatever else they
//! gain, exact fixes above, breakages below; the bound holds on generated steps.

use super::*;

fn change(id: &str, before: &str, after: &str) -> TestChange {
    TestChange {
        id: id.into(),
        before: before.into(),
        after: after.into(),
    }
}

fn step(diag_gain: u64, tests: Option<Tests>) -> Inputs {
    let t = |r| Tally {
        runtime: r,
        error: 0,
        warning: 0,
    };
    Inputs {
        before: Some(t(diag_gain)),
        after: Some(t(0)),
        remaining: Some(0),
        structural: None,
        tests,
        safety: 1,
        confidence: 1.0,
    }
}

fn tests(ran: Vec<TestChange>) -> Option<Tests> {
    Some(Tests::new(ran, false, "pytest".into()))
}

#[test]
fn a_partial_fix_scores_below_neutral_an_exact_fix_above() {
    let w = Weights::default();
    let neutral = compute(w, step(0, None)).r;
    assert_eq!(neutral, 0.4);
    // Two failing tests before; the partial fix repairs one (and removes three errors).
    let partial = tests(vec![
        change("t::a", "failed", "passed"),
        change("t::b", "failed", "failed"),
    ]);
    let partial = compute(w, step(3, partial));
    assert!(partial.r < neutral, "{partial:?}");
    assert_eq!(partial.components.diagnostics, 0.0);
    let exact = tests(vec![
        change("t::a", "failed", "passed"),
        change("t::b", "failed", "passed"),
    ]);
    let exact = compute(w, step(0, exact));
    assert_eq!(exact.r, round(0.5 * 2.0 + 1.0 + 0.4));
    // A breakage: a test that passed before fails after.
    let broken = tests(vec![change("t::a", "passed", "failed")]);
    assert_eq!(compute(w, step(0, broken)).r, round(-2.0 + 0.4));
    // A test that failed before and still fails weighs as much as a new failure.
    let still = tests(vec![change("t::a", "failed", "failed")]);
    assert_eq!(compute(w, step(0, still)).r, round(-2.0 + 0.4));
    // Cut by the budget with nothing failing yet: one failure.
    let mut cut = Tests::new(
        vec![change("t::a", "passed", "notRun")],
        true,
        "pytest".into(),
    );
    assert_eq!(
        compute(w, step(0, Some(cut.clone()))).components.tests,
        -2.0
    );
    cut.timed_out = false;
    assert_eq!(compute(w, step(0, Some(cut))).components.tests, 0.0);
}

#[test]
fn no_step_that_leaves_a_test_failing_reaches_neutral() {
    let w = Weights::default();
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..5_000 {
        let outcomes = ["passed", "failed", "error", "skipped", "notRun"];
        let ran: Vec<TestChange> = (0..1 + next(6))
            .map(|k| {
                change(
                    &format!("t::{k}"),
                    outcomes[next(5) as usize],
                    outcomes[next(5) as usize],
                )
            })
            .collect();
        let t = Tests::new(ran, next(4) == 0, "pytest".into());
        let i = step(next(10), Some(t.clone()));
        let r = compute(w, i.clone());
        let neutral = w.safety - w.ambiguity * (1.0 - i.confidence);
        if t.failing_now() > 0 {
            assert!(r.r < neutral, "{r:?}");
        }
    }
}

#[test]
fn weights_parse_by_name_over_the_defaults() {
    let w = Weights::parse("failing=3, passing=0").unwrap();
    assert_eq!((w.failing, w.passing), (3.0, 0.0));
    assert_eq!(w.fixed, Weights::default().fixed);
    for bad in ["failing", "tests=1", "fixed=-1", "0.5,0.4,0.1"] {
        assert!(Weights::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn p_is_the_calibrated_map_of_the_terms_and_only_with_tests() {
    let w = Weights::default();
    assert_eq!(compute(w, step(2, None)).p, None);
    let pass = tests(vec![change("t::a", "passed", "passed")]);
    let fail = tests(vec![change("t::a", "passed", "failed")]);
    let none = tests(vec![]);
    let p = |t, gain| compute(w, step(gain, t)).p.unwrap();
    let (passing, failing, silent) = (p(pass.clone(), 0), p(fail, 0), p(none, 0));
    for q in [passing, failing, silent] {
        assert!((0.0..=1.0).contains(&q), "{q}");
    }
    // The formula, on T = +1 and Z = 0 (calibrate.py's twin computes the same number).
    let [c0, c1, _] = CALIBRATION;
    assert_eq!(passing, round(1.0 / (1.0 + (-(c0 + c1)).exp())));
    // Z is clipped: ten diagnostics removed move p as far as three.
    assert_eq!(p(pass.clone(), 10), p(pass, 3));
    // A failing selected test is less likely good than a passing one (the fit's sign).
    assert!(
        failing < passing && failing < silent,
        "{failing} {passing} {silent}"
    );
}

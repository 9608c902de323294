//! pr-v3 and the shared test selection on fixtures/pytestkinds (real Pyright, real pytest),
//! through one warm daemon: `impact` finds a unittest `TestCase` method, every parametrized
//! instance, a doctest and a test through a conftest fixture (each invisible to the naming
//! rules but the parametrized one); a patch breaking each scores below a neutral step under
//! pr-v3; a partial fix of `shout` (its two tests failing before) below neutral, the exact
//! fix above; a changed line no test executed (module-level code in a module loaded by name,
//! a statement inserted into a method only `getattr` reaches) selects the tests of its file or
//! definition; `tests --run` reports the failing tests; the user's files stay byte-identical.
//! The expected ids follow pytest's node-id rules from the fixture's text. The project's
//! interpreter is the pinned test environment (pytest and coverage.py of tests/requirements.txt),
//! so the selection is pytest's collection, static reach and measured coverage.

use crate::support::*;
use serde_json::Value;

fn ids(facts: &Value, key: &str) -> Vec<String> {
    facts[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn pytest_kinds_are_selected_breakages_and_partial_fixes_score_below_neutral() {
    let w = crate::daemon::Warm::pinned_python("pytestkinds");
    let before = crate::mutations::snapshot(&w.ws);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, diff: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, diff).unwrap();
        p.to_string_lossy().into_owned()
    };
    let ranges = "kinds/ranges.py";
    let param = |v: &str| format!("tests/test_param.py::test_scale[{v}]");
    // (patch, the tests pytest runs for the broken definition)
    let cases = [
        (
            one_line_diff(&w.ws, ranges, "if value < lo:", "if value > lo:"),
            vec![
                "tests/test_unit.py::ClampCases::test_below".to_string(),
                "tests/test_unit.py::ClampCases::test_inside".to_string(),
            ],
        ),
        (
            one_line_diff(&w.ws, ranges, "value * factor", "value + factor"),
            // Sorted as strings: `-1-4--4` < `0-5-0` < `2-3-6`.
            vec![param("-1-4--4"), param("0-5-0"), param("2-3-6")],
        ),
        (
            one_line_diff(&w.ws, ranges, "range(lo, hi)", "range(lo, hi + 1)"),
            vec!["kinds/ranges.py::kinds.ranges.span".to_string()],
        ),
        (
            one_line_diff(&w.ws, ranges, "(0, size)", "(1, size)"),
            vec!["tests/test_window.py::test_small".to_string()],
        ),
    ];
    let neutral = 0.4; // w_safety·S, α = 1: a step that changes nothing
    for (k, (diff, want)) in cases.into_iter().enumerate() {
        let p = write(&format!("b{k}.diff"), diff);
        let impact = bundle(&w.ok(&["impact", "--patch", &p, "--json"]));
        assert_eq!(ids(&impact["facts"], "tests"), want, "{}", impact["facts"]);
        assert_eq!(impact["facts"]["selection"]["tests"], "pytest");
        assert_eq!(
            impact["facts"]["selection"]["coverage"], true,
            "{}",
            impact["facts"]
        );
        let tests = bundle(&w.ok(&["tests", "--patch", &p, "--json"]));
        assert_eq!(
            ids(&tests["facts"], "tests"),
            want,
            "tests and impact agree"
        );
        let flags = ["--reward", "pr-v3", "--tests", "impacted", "--json"];
        let b = bundle(&w.ok(&[&["check", "--patch", &p][..], &flags[..]].concat()));
        let pr = &b["processReward"];
        assert_eq!(pr["version"], "pr-v3");
        assert!(pr["r"].as_f64().unwrap() < neutral, "{pr}");
        assert_eq!(pr["inputs"]["tests"]["failing"], want.len() as u64, "{pr}");
    }
    unexecuted_lines_select_their_definitions_or_files_tests(&w, dir.path());
    // shout's two tests fail before; a partial fix repairs one, the exact fix both.
    let text = "kinds/text.py";
    let partial = write(
        "partial.diff",
        one_line_diff(&w.ws, text, "word.lower() + \"?\"", "word.upper() + \"?\""),
    );
    let exact = write(
        "exact.diff",
        one_line_diff(&w.ws, text, "word.lower() + \"?\"", "word.upper() + \"!\""),
    );
    let score = |p: &str| {
        let b = bundle(&w.ok(&[
            "check", "--patch", p, "--reward", "pr-v3", "--tests", "impacted", "--json",
        ]));
        b["processReward"].clone()
    };
    let (pp, pe) = (score(&partial), score(&exact));
    assert!(pp["r"].as_f64().unwrap() < neutral, "{pp}");
    assert_eq!(pp["inputs"]["tests"]["failing"], 1, "{pp}");
    assert_eq!(pp["inputs"]["tests"]["fixed"], 1, "{pp}");
    assert!(pe["r"].as_f64().unwrap() > neutral, "{pe}");
    assert_eq!(pe["inputs"]["tests"]["fixed"], 2, "{pe}");
    // p, the calibrated probability of a good patch, sits beside r and orders them as r does.
    let p = |pr: &Value| pr["p"].as_f64().unwrap_or_else(|| panic!("no p: {pr}"));
    assert!(0.0 < p(&pp) && p(&pp) < p(&pe) && p(&pe) < 1.0, "{pp} {pe}");
    // `tests --run` on the definition reports its failing tests as failing.
    let shout_line = read(&w.ws, text)
        .lines()
        .position(|l| l.starts_with("def shout"))
        .unwrap()
        + 1;
    let sel = format!("{text}@L{shout_line}:shout");
    let ran = bundle(&w.ok(&["tests", &sel, "--run", "--json"]));
    let f = &ran["facts"];
    assert_eq!(f["ran"], true);
    assert_eq!(f["summary"]["failed"], 2, "{f}");
    for t in f["tests"].as_array().unwrap() {
        assert_eq!(t["outcome"], "failed", "{t}");
    }
    assert_eq!(
        crate::mutations::snapshot(&w.ws),
        before,
        "the user's files are byte-identical"
    );
    // Offline: the recorded pr-v3 rewards recompute from their bundles.
    let bundles = dir.path().join("steps.jsonl");
    let lines = [&pp, &pe]
        .iter()
        .map(|pr| serde_json::json!({ "processReward": pr }).to_string())
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&bundles, lines).unwrap();
    let o = run(&[
        "reward",
        "--from-bundles",
        &bundles.to_string_lossy(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // ... p included: the live path's p is the one the recorded terms give.
    let again: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (line, pr) in again.iter().zip([&pp, &pe]) {
        assert_eq!(line["match"], true, "{line}");
        assert_eq!(line["p"], pr["p"], "{line}");
        assert_eq!(line["recordedP"], pr["p"], "{line}");
    }
}

/// Lines no test's coverage context executed, which no static path reaches either: `NAME` at
/// the top of kinds/leaves.py (run at import; the module is loaded by name) selects the tests
/// that executed a line of the file; a statement inserted after `def visit_leaf` (a method
/// only `getattr` calls), those that executed a line of the method. Each patch breaks
/// test_leaf, so pr-v3 scores it below a neutral step.
fn unexecuted_lines_select_their_definitions_or_files_tests(
    w: &crate::daemon::Warm,
    dir: &std::path::Path,
) {
    let (leaves, visit) = ("kinds/leaves.py", "kinds/visit.py");
    let line_of = |rel: &str, what: &str| {
        read(&w.ws, rel)
            .lines()
            .position(|l| l.contains(what))
            .unwrap()
            + 1
    };
    let module = one_line_diff(&w.ws, leaves, "NAME = \"leaf\"", "NAME = \"leaves\"");
    let text = read(&w.ws, visit);
    let lines: Vec<&str> = text.lines().collect();
    let n = line_of(visit, "def visit_leaf");
    let insert = format!(
        "--- a/{visit}\n+++ b/{visit}\n@@ -{n},2 +{n},3 @@\n {}\n+        self.seen.append(\"x\")\n {}\n",
        lines[n - 1],
        lines[n]
    );
    let want = vec!["tests/test_visit.py::test_leaf".to_string()];
    let cases = [
        (
            module,
            leaves,
            line_of(leaves, "NAME = "),
            "file",
            "<module>",
        ),
        (insert, visit, n, "definition", "Visitor.visit_leaf"),
    ];
    for (k, (diff, path, line, rule, scope)) in cases.into_iter().enumerate() {
        let p = dir.join(format!("w{k}.diff"));
        std::fs::write(&p, diff).unwrap();
        let p = p.to_string_lossy();
        let impact = bundle(&w.ok(&["impact", "--patch", &p, "--json"]));
        let f = &impact["facts"];
        assert_eq!(ids(f, "tests"), want, "{f}");
        let widened =
            serde_json::json!([{ "path": path, "line": line, "rule": rule, "scope": scope }]);
        assert_eq!(f["selection"]["widened"], widened, "{f}");
        let tests = bundle(&w.ok(&["tests", "--patch", &p, "--json"]));
        assert_eq!(
            ids(&tests["facts"], "tests"),
            want,
            "tests and impact agree"
        );
        let b = bundle(&w.ok(&[
            "check", "--patch", &p, "--reward", "pr-v3", "--tests", "impacted", "--json",
        ]));
        let pr = &b["processReward"];
        assert!(pr["r"].as_f64().unwrap() < 0.4, "{pr}");
        assert_eq!(pr["inputs"]["tests"]["failing"], 1, "{pr}");
        assert_eq!(
            pr["inputs"]["tests"]["selection"],
            format!("pytest+coverage+{rule}"),
            "{pr}"
        );
    }
}

/// A workspace pytest cannot wholly collect (fixtures/brokenimport: tests/test_shapes.py fails
/// to import, through geometry/shapes.py's missing `import math`): no collection or coverage
/// of the workspace as it is knows that module's tests, so a patch is judged by pytest's
/// collection after it. Restoring the import alone (a partial fix: `double` still triples)
/// selects the module's tests, each an error before, and scores below a neutral step; with
/// `double` fixed too (the exact fix), above; fixing `double` alone leaves the module failing
/// to import through the changed file, selected as one test that errors before and after.
/// `impact` and `tests` agree; a traced check replays offline from the recorded collection;
/// the user's files stay byte-identical. On a main without the collection after the change,
/// the partial fix ran no test and scored above neutral.
#[test]
fn a_patch_over_a_module_that_does_not_import_is_judged_by_the_collection_after_it() {
    let w = crate::daemon::Warm::pinned_python("brokenimport");
    let before = crate::mutations::snapshot(&w.ws);
    let dir = tempfile::tempdir().unwrap();
    let shapes = "geometry/shapes.py";
    let text = read(&w.ws, shapes);
    let lines: Vec<&str> = text.lines().collect();
    let unit = lines.iter().position(|l| l.starts_with("UNIT = ")).unwrap();
    let triple = lines.iter().position(|l| l.contains("x * 3")).unwrap();
    let head = format!("--- a/{shapes}\n+++ b/{shapes}\n");
    // The line `import math` goes before `UNIT = math.pi` (1-based line `unit + 1`).
    let import = format!(
        "@@ -{unit},2 +{unit},3 @@\n {}\n+import math\n {}\n",
        lines[unit - 1],
        lines[unit]
    );
    let fix = |shift: usize| {
        // The file's last line, with the line before it as context.
        format!(
            "@@ -{},2 +{},2 @@\n {}\n-{}\n+{}\n",
            triple,
            triple + shift,
            lines[triple - 1],
            lines[triple],
            lines[triple].replace("x * 3", "x * 2"),
        )
    };
    let write = |name: &str, diff: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, diff).unwrap();
        p.to_string_lossy().into_owned()
    };
    let partial = write("partial.diff", format!("{head}{import}"));
    let exact = write("exact.diff", format!("{head}{import}{}", fix(1)));
    let double_only = write("double.diff", format!("{head}{}", fix(0)));
    let (area, dbl) = (
        "tests/test_shapes.py::test_area",
        "tests/test_shapes.py::test_double",
    );
    let module = "tests/test_shapes.py";
    let neutral = 0.4;
    let pr_v3 = |p: &str, extra: &[&str]| {
        let args = [
            &[
                "check", "--patch", p, "--reward", "pr-v3", "--tests", "impacted", "--json",
            ][..],
            extra,
        ]
        .concat();
        bundle(&w.ok(&args))["processReward"].clone()
    };
    // (patch, the selected ids, afterChange, each id's (before, after), r above neutral)
    let cases = [
        (
            &partial,
            vec![area, dbl],
            serde_json::json!({ "unblocked": [module], "broken": [] }),
            vec![(area, "error", "passed"), (dbl, "error", "failed")],
            false,
        ),
        (
            &exact,
            vec![area, dbl],
            serde_json::json!({ "unblocked": [module], "broken": [] }),
            vec![(area, "error", "passed"), (dbl, "error", "passed")],
            true,
        ),
        (
            &double_only,
            vec![module],
            serde_json::json!({ "unblocked": [], "broken": [module] }),
            vec![(module, "error", "error")],
            false,
        ),
    ];
    for (p, want, after_change, ran, above) in cases {
        let impact = bundle(&w.ok(&["impact", "--patch", p, "--json"]));
        let f = &impact["facts"];
        assert_eq!(ids(f, "tests"), want, "{f}");
        assert_eq!(f["selection"]["afterChange"], after_change, "{f}");
        let tests = bundle(&w.ok(&["tests", "--patch", p, "--json"]));
        assert_eq!(
            ids(&tests["facts"], "tests"),
            want,
            "tests and impact agree"
        );
        let pr = pr_v3(p, &[]);
        let r = pr["r"].as_f64().unwrap();
        assert_eq!(r > neutral, above, "{pr}");
        let t = &pr["inputs"]["tests"];
        assert!(
            t["selection"].as_str().unwrap().ends_with("+collect"),
            "{t}"
        );
        let got: Vec<(String, String, String)> = t["ran"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let s = |k: &str| x[k].as_str().unwrap().to_string();
                (s("id"), s("before"), s("after"))
            })
            .collect();
        let ran: Vec<(String, String, String)> = ran
            .iter()
            .map(|(i, b, a)| (i.to_string(), b.to_string(), a.to_string()))
            .collect();
        assert_eq!(got, ran, "{pr}");
    }
    // Traced, the partial fix's check replays offline from the recorded collection after it.
    let trace = dir.path().join("t.jsonl");
    let ts = trace.to_string_lossy().into_owned();
    pr_v3(&partial, &["--trace-file", &ts, "--trace-sources"]);
    let recorded = std::fs::read_to_string(&trace).unwrap();
    assert!(
        recorded.lines().any(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["type"] == "input" && v["arg"] == "tests:collected-after"
        }),
        "the collection after the change is a recorded input"
    );
    crate::trace::replays_offline(&trace);
    assert_eq!(
        crate::mutations::snapshot(&w.ws),
        before,
        "the user's files are byte-identical"
    );
}

/// A project module of a name the warm pytest zygote has loaded (`calendar`: pytest imports it)
/// is the project's own in a run, as in a spawned pytest: such a project's runs are not forked.
/// A neutral change of it leaves its test passing before and after.
#[test]
fn a_project_module_named_as_one_pytest_has_loaded_is_the_projects_own_in_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("proj");
    let files = [
        ("pyproject.toml", "[project]\nname = \"proj\"\nversion = \"0\"\n"),
        ("calendar.py", "def who() -> str:\n    return \"project\"\n\n\nNAME = who()\n"),
        (
            "tests/test_own.py",
            "import calendar\n\n\ndef test_own() -> None:\n    assert calendar.who() == \"project\"\n",
        ),
    ];
    write_tree(&ws, &files);
    let patch = one_line_diff(&ws, "calendar.py", "\"project\"", "\"pro\" + \"ject\"");
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, patch).unwrap();
    let o = lanser()
        .env("VIRTUAL_ENV", pinned_venv())
        .args(["check", "--patch"])
        .arg(&pf)
        .args(["--reward", "pr-v3", "--tests", "impacted", "--json"])
        .arg("--workspace")
        .arg(&ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let pr = &bundle(&o)["processReward"];
    let want = serde_json::json!([
        { "id": "tests/test_own.py::test_own", "before": "passed", "after": "passed" }
    ]);
    assert_eq!(pr["inputs"]["tests"]["ran"], want, "{pr}");
}

/// A pr-v3 step's `processReward`, hand-written: one selected test (passing before; `after`
/// after), Pyright's errors `errors_before` → `errors_after`; r and p as recorded, p left out
/// when `None`.
fn v3_step(after: &str, errors_before: u64, errors_after: u64, r: f64, p: Option<f64>) -> Value {
    let failing = u64::from(after != "passed");
    let tally = |error: u64| serde_json::json!({ "runtime": 0, "error": error, "warning": 0 });
    let mut pr = serde_json::json!({
        "version": "pr-v3",
        "r": r,
        "components": { "diagnostics": 0.0, "remaining": 0.0, "structural": 0.0, "tests": 0.0,
                        "safety": 0.0, "ambiguity_penalty": 0.0 },
        "weights": { "runtime": 1.0, "error": 0.5, "warning": 0.1, "remaining": 1.25,
                     "structural": 0.5, "failing": 2.0, "fixed": 0.5, "passing": 1.0,
                     "safety": 0.4, "ambiguity": 0.1 },
        "inputs": {
            "before": tally(errors_before), "after": tally(errors_after), "remaining": 0,
            "structural": { "removed_referenced": 0, "stale_call_sites": 0, "return_changed": 0 },
            "tests": { "failing": failing, "fixed": 0, "passed": 1 - failing, "timedOut": false,
                       "selection": "pytest+coverage",
                       "ran": [{ "id": "tests/test_a.py::test_a", "before": "passed", "after": after }] },
            "safety": 1, "confidence": 1.0
        },
        "explanation": ""
    });
    if let Some(p) = p {
        pr["p"] = p.into();
    }
    serde_json::json!({ "bundleId": format!("b-{after}-{errors_after}"), "processReward": pr })
}

/// docs/reward.md#pr-v3's p, σ(c0 + c1·T + c2·clip(Z, ±3)), with the published coefficients,
/// rounded as bundles carry it.
fn documented_p(t: f64, z: f64) -> f64 {
    let x = 1.1927 + 0.0254 * t + 0.6379 * z.clamp(-3.0, 3.0);
    ((1.0 / (1.0 + (-x).exp())) * 1e9).round() / 1e9
}

/// `reward --from-bundles` recomputes pr-v3's p from the recorded inputs as a live check
/// computes it: a bundle recorded without p gets it, a recorded p must be reproduced (a
/// tampered one is a replay mismatch), and other weights move p with the terms. No server.
#[test]
fn reward_from_bundles_recomputes_p_as_the_live_path_does() {
    let dir = tempfile::tempdir().unwrap();
    // A clean step (T = w_passing = 1, Z = 0, r = 1 + 0.4) and a breaking one (the test fails:
    // T = −2; two new errors: D = −1, so Z = −1; r = −3 + 0.4).
    let (good, bad) = (documented_p(1.0, 0.0), documented_p(-2.0, -1.0));
    let steps = [
        v3_step("passed", 0, 0, 1.4, Some(good)),
        v3_step("failed", 0, 2, -2.6, None),
    ];
    let file = dir.path().join("steps.jsonl");
    let write = |steps: &[Value]| {
        let text: Vec<String> = steps.iter().map(Value::to_string).collect();
        std::fs::write(&file, text.join("\n")).unwrap();
    };
    write(&steps);
    let f = file.to_string_lossy().into_owned();
    let lines = |args: &[&str]| -> Vec<Value> {
        let o = lanser()
            .args(args)
            .env("LANSER_SERVER_CMD", "/nonexistent/server")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let again = lines(&["reward", "--from-bundles", &f, "--json"]);
    assert_eq!(again.len(), 2);
    assert_eq!(again[0]["p"], good, "{}", again[0]);
    assert_eq!(again[0]["recordedP"], good, "{}", again[0]);
    assert_eq!(again[0]["match"], true, "{}", again[0]);
    // Recorded without p: recomputed, and not a mismatch.
    assert_eq!(again[1]["r"], -2.6, "{}", again[1]);
    assert_eq!(again[1]["p"], bad, "{}", again[1]);
    assert_eq!(again[1]["recordedP"], Value::Null, "{}", again[1]);
    assert_eq!(again[1]["match"], true, "{}", again[1]);
    assert!(bad < good, "{bad} {good}");
    // The text form shows p beside r.
    let o = run(&["reward", "--from-bundles", &f]);
    assert!(
        stdout(&o).contains(&format!("r = 1.4, p = {good}")),
        "{}",
        stdout(&o)
    );
    // Other weights move p as they move the terms (passing = 0: T = 0).
    let cf = lines(&[
        "reward",
        "--from-bundles",
        &f,
        "--weights",
        "passing=0",
        "--json",
    ]);
    assert_eq!(cf[0]["p"], documented_p(0.0, 0.0), "{}", cf[0]);
    // A recorded p the recorded inputs do not give is a replay mismatch, r matching or not.
    let mut tampered = steps.clone();
    tampered[0]["processReward"]["p"] = (good - 0.1).into();
    write(&tampered);
    let o = run(&["reward", "--from-bundles", &f]);
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));
    assert!(stderr(&o).contains("recorded p"), "{}", stderr(&o));
}

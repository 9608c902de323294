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

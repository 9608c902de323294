//! pr-v2 (`--reward pr-v2`) on real Pyright: each structural fact is seen on the patch that
//! has it, a partial fix scores below a neutral edit (pr-v1 scores it above), an exact fix
//! above, the disk is never written, and `reward --from-bundles` recomputes pr-v2 offline.

use crate::mutations::repo_copy;
use crate::support::*;
use serde_json::Value;
use std::path::Path;

/// `check --patch` of `diff` with pr-v2 (plus `extra` flags): the bundle.
fn check(ws: &Path, diff: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, diff).unwrap();
    let (p, w) = (pf.to_string_lossy(), ws.to_string_lossy());
    let mut args = vec!["check", "--patch", &p, "--workspace", &w, "--json"];
    args.extend(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    bundle(&o)
}

fn r(b: &Value) -> f64 {
    b["processReward"]["r"].as_f64().unwrap()
}

fn structural(b: &Value, key: &str) -> u64 {
    b["processReward"]["inputs"]["structural"][key]
        .as_u64()
        .unwrap()
}

/// An unannotated function's inferred return type, which the speculation asks the server for
/// (to decide the importers), is read by the structural term from those answers: a changed
/// one under a reference counts, a held one does not.
#[test]
fn an_inferred_return_type_asked_once_counts_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    write_tree(
        &ws,
        &[
            ("pyrightconfig.json", "{}\n"),
            ("lib/__init__.py", ""),
            (
                "lib/core.py",
                "def label(n: int):\n    return \"n\" + str(n)\n\n\nLIMIT = 1\n",
            ),
            (
                "app/use.py",
                "from lib.core import label\n\ntext = label(1)\n",
            ),
        ],
    );
    let core = "lib/core.py";
    let v2 = ["--reward", "pr-v2"];
    let held = check(
        &ws,
        &one_line_diff(&ws, core, "\"n\" + str(n)", "\"m\" + str(n)"),
        &v2,
    );
    assert_eq!(structural(&held, "return_changed"), 0, "{held}");
    let changed = check(&ws, &one_line_diff(&ws, core, "\"n\" + str(n)", "n"), &v2);
    assert_eq!(structural(&changed, "return_changed"), 1, "{changed}");
}

#[test]
fn structural_facts_each_seen_on_the_patch_that_has_it() {
    let (_t, ws) = repo_copy("srcpkg");
    let before = crate::mutations::snapshot(&ws);
    let geo = "src/shapes/geometry.py";
    let v2 = ["--reward", "pr-v2"];
    let neutral = check(
        &ws,
        &one_line_diff(
            &ws,
            geo,
            "Return the area of any shape.",
            "The area of a shape.",
        ),
        &v2,
    );
    let pr = &neutral["processReward"];
    assert_eq!(pr["version"], "pr-v2");
    assert_eq!(pr["inputs"]["before"], pr["inputs"]["after"], "{pr}");
    for key in ["removed_referenced", "stale_call_sites", "return_changed"] {
        assert_eq!(structural(&neutral, key), 0, "{key}: {pr}");
    }
    // A required parameter added: the tests' calls are stale call sites.
    let sig = check(
        &ws,
        &one_line_diff(
            &ws,
            geo,
            "def area_of(shape: Shape)",
            "def area_of(shape: Shape, unit: str)",
        ),
        &v2,
    );
    assert!(
        structural(&sig, "stale_call_sites") >= 2,
        "{}",
        sig["processReward"]
    );
    assert!(r(&sig) < r(&neutral));
    assert!(sig["processReward"]["explanation"]
        .as_str()
        .unwrap()
        .contains("stale call site(s)"));
    // The declared return type changed under its callers.
    let ret = check(
        &ws,
        &one_line_diff(
            &ws,
            geo,
            "def area_of(shape: Shape) -> float:",
            "def area_of(shape: Shape) -> str:",
        ),
        &v2,
    );
    assert_eq!(
        structural(&ret, "return_changed"),
        1,
        "{}",
        ret["processReward"]
    );
    // A public function removed (renamed away) while geometry.py still uses it.
    let rm = check(
        &ws,
        &one_line_diff(
            &ws,
            "src/shapes/units.py",
            "def round_to_precision(",
            "def _round(",
        ),
        &v2,
    );
    assert_eq!(
        structural(&rm, "removed_referenced"),
        1,
        "{}",
        rm["processReward"]
    );
    assert!(r(&rm) < r(&neutral));
    // pr-v1 stays the default, its bundle unchanged in shape.
    let v1 = check(
        &ws,
        &one_line_diff(
            &ws,
            geo,
            "Return the area of any shape.",
            "The area of a shape.",
        ),
        &[],
    );
    assert_eq!(v1["processReward"]["version"], "pr-v1");
    assert_eq!(v1["processReward"]["r"], 0.4);
    assert_eq!(
        crate::mutations::snapshot(&ws),
        before,
        "check never writes"
    );
}

#[test]
fn a_partial_fix_scores_below_a_neutral_edit_and_an_exact_fix_above() {
    let (_t, ws) = repo_copy("srcpkg");
    // The base is broken twice: two misspelled callees in units.py.
    let units = ws.join("src/shapes/units.py");
    let text = std::fs::read_to_string(&units).unwrap();
    let broken = text
        .replace(
            "return round(value, PRECISION)",
            "return rund(value, PRECISION)",
        )
        .replacen("round_to_precision(", "round_to_precison(", 2);
    assert_ne!(broken, text);
    std::fs::write(&units, &broken).unwrap();
    let rel = "src/shapes/units.py";
    let partial = one_line_diff(&ws, rel, "rund(", "round(");
    let both = {
        let fixed = text.clone();
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.py"), dir.path().join("b.py"));
        std::fs::write(&a, &broken).unwrap();
        std::fs::write(&b, &fixed).unwrap();
        let out = std::process::Command::new("diff")
            .args(["-u", &a.to_string_lossy(), &b.to_string_lossy()])
            .output()
            .unwrap();
        let d = String::from_utf8(out.stdout).unwrap();
        let body: String = d.split_inclusive('\n').skip(2).collect();
        format!("--- a/{rel}\n+++ b/{rel}\n{body}")
    };
    // A behaviour-preserving edit, on a clean tree (its fixture errors are HEAD's own: the
    // remaining term does not count them).
    let (_c, clean) = repo_copy("srcpkg");
    let neutral = one_line_diff(
        &clean,
        "src/shapes/geometry.py",
        "Return the area of any shape.",
        "The area.",
    );
    let v2 = ["--reward", "pr-v2"];
    let (p, e, n) = (
        check(&ws, &partial, &v2),
        check(&ws, &both, &v2),
        check(&clean, &neutral, &v2),
    );
    assert_eq!(n["processReward"]["inputs"]["remaining"], 0);
    assert!(
        r(&p) < r(&n),
        "partial {} neutral {}",
        p["processReward"],
        n["processReward"]
    );
    assert!(
        r(&e) > r(&n),
        "exact {} neutral {}",
        e["processReward"],
        n["processReward"]
    );
    assert!(p["processReward"]["inputs"]["remaining"].as_u64().unwrap() >= 1);
    assert_eq!(e["processReward"]["inputs"]["remaining"], 0);
    // pr-v1 scores the partial fix above the neutral edit: its delta is positive.
    let (p1, n1) = (check(&ws, &partial, &[]), check(&clean, &neutral, &[]));
    assert!(r(&p1) > r(&n1));

    // Offline: the recorded inputs give the recorded r; other weights give another.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("steps.jsonl");
    let lines = [&p, &e, &n]
        .map(|b| serde_jcs::to_string(b).unwrap())
        .join("\n");
    std::fs::write(&f, lines).unwrap();
    let fs = f.to_string_lossy();
    let o = lanser()
        .args(["reward", "--from-bundles", &fs, "--json"])
        .env("LANSER_SERVER_CMD", "/nonexistent/server")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|l| l["match"] == true), "{rows:?}");
    let o = run(&[
        "reward",
        "--from-bundles",
        &fs,
        "--weights",
        "remaining=0",
        "--json",
    ]);
    let first: Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert!(first["r"].as_f64().unwrap() > r(&p));
    // pr-v1's weight syntax is refused for a pr-v2 bundle, in one line.
    let o = run(&["reward", "--from-bundles", &fs, "--weights", "0.5,0.4,0.1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pr-v2 takes name=value pairs"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_unknown_reward_version_is_a_usage_error() {
    let o = run(&["check", "--patch", "x.diff", "--reward", "pr-v9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--reward \"pr-v9\": expected pr-v1 or pr-v2"),
        "{}",
        stderr(&o)
    );
}

/// Every file under `dir` with its bytes, `.git` aside (bytecode or a cache would show).
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    crate::mutations::snapshot(dir)
}

#[test]
fn the_impacted_tests_run_on_an_overlay_never_on_the_users_files() {
    let (_t, ws) = repo_copy("srcpkg");
    let before = files(&ws);
    let units = "src/shapes/units.py";
    let breaks = one_line_diff(&ws, units, "PRECISION)", "PRECISION + 1)");
    let neutral = one_line_diff(&ws, units, "PRECISION)", "ndigits=PRECISION)");
    let flags = ["--reward", "pr-v2", "--tests", "impacted"];
    let bad = check(&ws, &breaks, &flags);
    let tests = &bad["processReward"]["inputs"]["tests"];
    assert_eq!(tests["failed"], 1, "{tests}");
    assert_eq!(tests["passed"], 1, "{tests}");
    assert_eq!(
        tests["ran"][0],
        serde_json::json!({"id": "tests/test_geometry.py::test_circle_area", "outcome": "failed"})
    );
    assert_eq!(bad["processReward"]["components"]["tests"], -2.0);
    let good = check(&ws, &neutral, &flags);
    assert_eq!(good["processReward"]["inputs"]["tests"]["passed"], 2);
    assert_eq!(good["processReward"]["components"]["tests"], 2.0);
    assert!(r(&good) > r(&bad));
    assert_eq!(files(&ws), before, "the user's tree is byte-identical");
    // Off unless asked; and a term of pr-v2 only.
    let plain = check(&ws, &breaks, &["--reward", "pr-v2"]);
    assert!(plain["processReward"]["inputs"]["tests"].is_null());
    let w = ws.to_string_lossy();
    let o = run(&[
        "check",
        "--patch",
        "x.diff",
        "--tests",
        "impacted",
        "--workspace",
        &w,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("add --reward pr-v2"), "{}", stderr(&o));
}

#[test]
fn a_test_that_never_ends_is_cut_at_the_budget_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("proj");
    let files = [
        ("pyproject.toml", "[project]\nname = \"proj\"\nversion = \"0\"\n"),
        ("lib.py", "def ready() -> bool:\n    return True\n\n\nREADY = ready()\n"),
        (
            "tests/test_lib.py",
            "import time\n\nfrom lib import ready\n\n\ndef test_waits() -> None:\n    while not ready():\n        time.sleep(0.05)\n",
        ),
    ];
    write_tree(&ws, &files);
    let patch = one_line_diff(&ws, "lib.py", "return True", "return False");
    let flags = [
        "--reward",
        "pr-v2",
        "--tests",
        "impacted",
        "--test-budget",
        "3",
    ];
    let b = check(&ws, &patch, &flags);
    let tests = &b["processReward"]["inputs"]["tests"];
    assert_eq!(tests["timedOut"], true, "{tests}");
    // A spawned pytest (the warm zygote off) is cut the same way.
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, &patch).unwrap();
    let (p, w) = (pf.to_string_lossy(), ws.to_string_lossy());
    let args = [
        &["check", "--patch", &p, "--workspace", &w, "--json"][..],
        &flags[..],
    ]
    .concat();
    let spawned = lanser()
        .args(&args)
        .env("LANSER_PYTEST_ZYGOTE", "0")
        .output()
        .unwrap();
    let sb = bundle(&spawned);
    assert_eq!(sb["processReward"], b["processReward"], "spawned");
    assert_eq!(
        tests["ran"],
        serde_json::json!([{"id": "tests/test_lib.py::test_waits", "outcome": "notRun"}])
    );
    assert_eq!(b["processReward"]["components"]["tests"], -2.0);
    assert!(b["processReward"]["explanation"]
        .as_str()
        .unwrap()
        .contains("ran out of time"));
}

/// The validity benchmark's own parts (benches/reward/): AUC and its interval, every mutation
/// family, a generator that gives the same bytes twice and patches that apply — offline.
#[test]
fn the_reward_benchmark_parts_pass_their_offline_tests() {
    crate::support::pytest("benches/reward/test_reward_bench.py");
}

/// `check --patch --reward pr-v2`, `impact --patch`, `tests --patch --run` and `check --patch
/// --reward pr-v3 --tests impacted` answer the same bytes through the warm daemon and
/// in-process (the pinned test environment the project's interpreter: coverage measured).
#[test]
fn the_daemon_and_the_process_agree_on_pr_v2_and_impact() {
    let w = crate::daemon::Warm::pinned_python("srcpkg");
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join("p.diff");
    let d = one_line_diff(&w.ws, "src/shapes/units.py", "PRECISION)", "PRECISION + 1)");
    std::fs::write(&pf, d).unwrap();
    let p = pf.to_string_lossy();
    for args in [
        vec!["check", "--patch", &p, "--reward", "pr-v2", "--json"],
        vec!["impact", "--patch", &p, "--json"],
        vec!["tests", "--patch", &p, "--run", "--json"],
        vec![
            "check", "--patch", &p, "--reward", "pr-v3", "--tests", "impacted", "--json",
        ],
    ] {
        let warm = w.ok(&args);
        let again = w.ok(&args);
        let mut here = args.clone();
        here.push("--no-daemon");
        let local = w.ok(&here);
        assert_eq!(stdout(&warm), stdout(&local), "{args:?}");
        assert_eq!(stdout(&again), stdout(&local), "{args:?}");
        if args[0] != "impact" {
            // Without the warm pytest zygote (spawned runs), the same bytes.
            let spawned = w
                .cmd(&here)
                .env("LANSER_PYTEST_ZYGOTE", "0")
                .output()
                .unwrap();
            assert_eq!(stdout(&spawned), stdout(&local), "spawned: {args:?}");
        }
    }
}

/// pr-v2's remaining term counts an importer that an earlier, uncommitted edit broke even when
/// this step cannot alter it (docs/reward.md#d-what-is-counted): the importer is skipped and
/// not listed, yet R_now is the full re-check's (`LANSER_CHECK_FULL=1`), and so is r.
#[test]
fn an_importer_an_earlier_edit_broke_is_still_counted_when_skipped() {
    let (_t, ws) = repo_copy("srcpkg");
    // The earlier edit, on disk and not committed: `convert` gets a required keyword, so the
    // calls in intl.py and broken.py break (run-time errors HEAD does not have).
    let rel = "src/shapes/units.py";
    let units = ws.join(rel);
    let text = std::fs::read_to_string(&units).unwrap();
    let broke = text.replace(
        "def convert(value: float, unit: str)",
        "def convert(value: float, unit: str, *, exact: bool)",
    );
    assert_ne!(broke, text);
    std::fs::write(&units, broke).unwrap();
    // This step: a docstring, which no importer sees.
    let doc = one_line_diff(
        &ws,
        rel,
        "Round ``value`` to",
        "Round ``value``, always, to",
    );
    let fast = check(&ws, &doc, &["--reward", "pr-v2"]);
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, &doc).unwrap();
    let (p, w) = (pf.to_string_lossy(), ws.to_string_lossy());
    let o = lanser()
        .env("LANSER_CHECK_FULL", "1")
        .args(["check", "--patch", &p, "--workspace", &w, "--json"])
        .args(["--reward", "pr-v2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let full = bundle(&o);
    let skipped: Vec<&str> = fast["facts"]["checked"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(skipped.contains(&"src/shapes/intl.py"), "{}", fast["facts"]);
    let listed = |b: &Value, path: &str| {
        b["facts"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == path)
    };
    assert!(!listed(&fast, "src/shapes/intl.py"), "{}", fast["facts"]);
    assert!(listed(&full, "src/shapes/intl.py"), "{}", full["facts"]);
    let inputs = |b: &Value| b["processReward"]["inputs"].clone();
    assert!(
        inputs(&full)["remaining"].as_u64().unwrap() >= 1,
        "{}",
        full["processReward"]
    );
    assert_eq!(inputs(&fast)["remaining"], inputs(&full)["remaining"]);
    let reward = |b: &Value| {
        let r = &b["processReward"];
        (r["r"].clone(), r["components"].clone())
    };
    assert_eq!(reward(&fast), reward(&full));
}

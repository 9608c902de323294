//! The process reward measured by real Pyright on speculative (in-memory) edits, with the disk
//! untouched, and recomputed offline from the recorded bundles.

use crate::mutations::repo_copy;
use crate::support::*;
use std::collections::BTreeMap;
use std::path::Path;

fn hashes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let ws = lanser::workspace::Workspace::new(dir.to_path_buf());
    ws.python_files()
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

fn errors_and_warnings(ws: &Path, rel: &str) -> u64 {
    let o = run(&["diag", rel, "--workspace", &ws.to_string_lossy(), "--json"]);
    let b = bundle(&o);
    b["facts"]["counts"]["error"].as_u64().unwrap()
        + b["facts"]["counts"]["warning"].as_u64().unwrap()
}

#[test]
fn rename_previews_score_fixes_up_and_breakage_down_without_touching_disk() {
    let (_t, ws) = repo_copy("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let before = hashes(&ws);
    let d_broken = errors_and_warnings(&ws, "src/shapes/broken.py");
    assert_eq!(d_broken, 3);

    // broken.py reads `circle.perimeter`; renaming the `diameter` property to `perimeter`
    // fixes that call site: D falls by one, r > 0.
    let line = line_with(&ws, "src/shapes/geometry.py", "def diameter(");
    let o = run(&[
        "rename",
        &format!("src/shapes/geometry.py@L{line}:diameter"),
        "perimeter",
        "--workspace",
        &w,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let pr = &b["processReward"];
    assert_eq!(pr["inputs"]["d_prev"], 3, "{pr}");
    assert_eq!(pr["inputs"]["d_now"], 2, "{pr}");
    assert_eq!(pr["inputs"]["safety"], 1, "{pr}");
    assert!(pr["r"].as_f64().unwrap() > 0.0, "{pr}");
    let removed: Vec<_> = b["facts"]["speculativeDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["removed"].as_array().unwrap().clone())
        .collect();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["code"], "reportAttributeAccessIssue");
    assert_eq!(hashes(&ws), before, "a preview never writes");

    // Renaming `convert` onto its neighbour `round_to_precision` collides: D rises, r < 0.
    let line = line_with(&ws, "src/shapes/units.py", "def convert(");
    let o = run(&[
        "rename",
        &format!("src/shapes/units.py@L{line}:convert"),
        "round_to_precision",
        "--workspace",
        &w,
        "--json",
    ]);
    let pr = bundle(&o)["processReward"].clone();
    assert!(
        pr["inputs"]["d_now"].as_u64().unwrap() > pr["inputs"]["d_prev"].as_u64().unwrap(),
        "{pr}"
    );
    assert!(pr["r"].as_f64().unwrap() < 0.0, "{pr}");
    assert_eq!(hashes(&ws), before, "a preview never writes");
    // The server's view was restored: the real file still has exactly its 3 errors.
    assert_eq!(errors_and_warnings(&ws, "src/shapes/broken.py"), 3);
}

#[test]
fn check_patch_reports_exactly_the_new_type_error() {
    let ws = fixture("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let before = hashes(&ws);
    let rel = "src/shapes/intl.py";
    let line = line_with(&ws, rel, "result = convert(total,");
    let text = read(&ws, rel);
    let old = text.split('\n').nth(line as usize - 1).unwrap();
    let new = old.replace("convert(total,", "convert(str(total),");
    let patch = format!("--- a/{rel}\n+++ b/{rel}\n@@ -{line},1 +{line},1 @@\n-{old}\n+{new}\n");
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, patch).unwrap();
    let o = run(&[
        "check",
        "--patch",
        &pf.to_string_lossy(),
        "--workspace",
        &w,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let added: Vec<_> = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["added"].as_array().unwrap().clone())
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0]["path"], rel);
    assert_eq!(added[0]["code"], "reportArgumentType");
    assert_eq!(added[0]["range"][0], line - 1);
    let removed: usize = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["removed"].as_array().unwrap().len())
        .sum();
    assert_eq!(removed, 0);
    assert_eq!(
        b["processReward"]["inputs"]["d_now"].as_u64().unwrap(),
        b["processReward"]["inputs"]["d_prev"].as_u64().unwrap() + 1
    );
    assert_eq!(hashes(&ws), before, "check never writes");

    // A patch that does not match the file is a conflict, named.
    std::fs::write(
        &pf,
        format!("--- a/{rel}\n+++ b/{rel}\n@@ -1,1 +1,1 @@\n-not the first line\n+x\n"),
    )
    .unwrap();
    let o = run(&["check", "--patch", &pf.to_string_lossy(), "--workspace", &w]);
    assert_eq!(o.status.code(), Some(70));
    assert!(
        stderr(&o).contains("the patch does not apply to src/shapes/intl.py: line 1"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn rewards_replay_from_bundles_alone() {
    let ws = fixture("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap();
    // Step 1 measures D of broken.py; step 2 is a read-only step chained on it.
    let diag = run(&["diag", "src/shapes/broken.py", "--workspace", &w, "--json"]);
    let a = dir.path().join("a.json");
    std::fs::write(&a, &diag.stdout).unwrap();
    let line = line_with(&ws, "src/shapes/broken.py", "convert(\"x\"");
    let step = run(&[
        "hover",
        &format!("src/shapes/broken.py@L{line}:convert"),
        "--workspace",
        &w,
        "--json",
        "--prev-bundle",
        &a.to_string_lossy(),
    ]);
    let b2 = bundle(&step);
    assert_eq!(b2["processReward"]["inputs"]["d_prev"], 3);
    assert_eq!(b2["processReward"]["inputs"]["d_now"], 3);
    assert_eq!(b2["processReward"]["r"], 0.4);
    let b = dir.path().join("b.json");
    std::fs::write(&b, &step.stdout).unwrap();

    // Offline: no server is started (a server command that cannot run proves it).
    let o = lanser()
        .args([
            "reward",
            "--from-bundles",
            &a.to_string_lossy(),
            &b.to_string_lossy(),
            "--json",
        ])
        .env("LANSER_SERVER_CMD", "/nonexistent/server")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["match"] == true));
    assert_eq!(lines[1]["r"], 0.4);
    // Counterfactual weights recompute without complaint.
    let o = run(&[
        "reward",
        "--from-bundles",
        &b.to_string_lossy(),
        "--weights",
        "1,0,0",
        "--json",
    ]);
    let l: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(l["r"], 0.0);
    // A tampered r is a replay mismatch.
    let tampered = String::from_utf8(step.stdout.clone())
        .unwrap()
        .replace("\"r\":0.4", "\"r\":0.9");
    std::fs::write(&b, tampered).unwrap();
    let o = run(&["reward", "--from-bundles", &b.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));
}

//! `check --patch` and the process reward on languages beyond Python: a patch is measured on
//! the server of each file it changes (a TypeScript patch by tsserver, not by Pyright), and a
//! patch over two languages by both servers, merged.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

/// A unified diff of `rel` in `ws` with `from` replaced by `to` (the file is left as it was).
fn diff_of(ws: &Path, edits: &[(&str, &str, &str)]) -> String {
    let mut out = String::new();
    for (rel, from, to) in edits {
        let old = read(ws, rel);
        assert!(old.contains(from), "{from:?} not in {rel}");
        let new = old.replacen(from, to, 1);
        let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
        let at = o.iter().zip(&n).position(|(a, b)| a != b).unwrap();
        out.push_str(&format!(
            "--- a/{rel}\n+++ b/{rel}\n@@ -{0},1 +{0},1 @@\n-{1}\n+{2}\n",
            at + 1,
            o[at],
            n[at]
        ));
    }
    out
}

fn patch_file(dir: &Path, diff: &str) -> String {
    let p = dir.join("change.diff");
    std::fs::write(&p, diff).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn a_typescript_patch_is_measured_by_tsserver() {
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("ts");
    copy_tree(&fixture("ts"), &ts);
    let diff = diff_of(
        &ts,
        &[(
            "src/store.ts",
            "return this.items.length;",
            "return this.items.length + undefinedName;",
        )],
    );
    let patch = patch_file(dir.path(), &diff);
    let before = read(&ts, "src/store.ts");
    let w = ts.to_string_lossy().into_owned();
    let o = run(&["check", "--patch", &patch, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(
        b["environment"]["server"]["name"],
        "typescript-language-server"
    );
    assert_eq!(
        (b["facts"]["before"].as_u64(), b["facts"]["after"].as_u64()),
        (Some(0), Some(1))
    );
    let added = &b["facts"]["files"][0]["added"];
    assert!(added.to_string().contains("undefinedName"), "{added}");
    let r = b["processReward"]["r"].as_f64().unwrap();
    assert!(
        r < 0.4,
        "a patch that adds an error scores below an unchanged one: {r}"
    );
    // pr-v2 counts the server's diagnostics of any language; its structural terms read
    // Python outlines and are left out.
    let o = run(&[
        "check",
        "--patch",
        &patch,
        "--workspace",
        &w,
        "--reward",
        "pr-v2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let inputs = &bundle(&o)["processReward"]["inputs"];
    assert_eq!(inputs["before"]["error"], 0, "{inputs}");
    assert_eq!(inputs["after"]["error"], 1, "{inputs}");
    assert!(inputs["structural"].is_null(), "{inputs}");
    assert_eq!(read(&ts, "src/store.ts"), before, "check writes nothing");
    // Traced with its sources, it replays on tsserver's recorded answers with the patch file
    // and the workspace gone: the replay routes by the patch the trace recorded.
    let trace_path = dir.path().join("t.jsonl");
    let trace = trace_path.to_string_lossy().into_owned();
    let o = run(&[
        "check",
        "--patch",
        &patch,
        "--workspace",
        &w,
        "--json",
        "--trace-file",
        &trace,
        "--trace-sources",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(&patch).unwrap();
    std::fs::remove_dir_all(&ts).unwrap();
    crate::trace::replays_offline(&trace_path);
}

#[test]
fn a_patch_over_two_languages_is_measured_by_both_servers() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = dir.path().join("mixed");
    copy_tree(&fixture("mixed"), &mixed);
    let diff = diff_of(
        &mixed,
        &[
            (
                "api/views.py",
                "return order.total",
                "return order.total + missing_name",
            ),
            (
                "web/order.ts",
                "return `total: ${order.total}`;",
                "return `total: ${order.count}`;",
            ),
        ],
    );
    let patch = patch_file(dir.path(), &diff);
    let w = mixed.to_string_lossy().into_owned();
    // Untraced: a trace records one server (the traced run below is refused).
    let o = lanser()
        .args(["check", "--patch", &patch, "--workspace", &w, "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    crate::schemas::collect_value(&b);
    assert_eq!(
        (b["facts"]["before"].as_u64(), b["facts"]["after"].as_u64()),
        (Some(0), Some(2))
    );
    let paths: Vec<&str> = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["added"].as_array().is_some_and(|a| !a.is_empty()))
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["api/views.py", "web/order.ts"]);
    let added: Vec<Value> = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["added"].as_array().cloned().unwrap_or_default())
        .collect();
    let text = serde_json::to_string(&added).unwrap();
    assert!(
        text.contains("missing_name") && text.contains("count"),
        "{text}"
    );
    let traced = run(&["check", "--patch", &patch, "--workspace", &w, "--json"]);
    assert_eq!(traced.status.code(), Some(2), "{}", stderr(&traced));
    assert!(
        stderr(&traced).contains("a trace records one server"),
        "{}",
        stderr(&traced)
    );
}

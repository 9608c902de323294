//! Diagnostics remembered per server view (`src/lsp/view.rs`): a speculative check restores
//! the view it changed, so the next check of that file pulls only its own patched view — and
//! the bundles are the bytes a fresh process gives; an edit on disk is a new view.

use crate::daemon::Warm;
use crate::support::*;
use serde_json::Value;
use std::path::Path;

const UNITS: &str = "src/shapes/units.py";

/// Two patches of units.py (imported by four files): a return type and a constant's type.
fn patches(ws: &Path, dir: &Path) -> [String; 2] {
    let write = |name: &str, old: &str, new: &str| {
        let p = dir.join(name);
        std::fs::write(&p, one_line_diff(ws, UNITS, old, new)).unwrap();
        p.to_string_lossy().into_owned()
    };
    [
        write("p1.diff", "unit: str) -> float:", "unit: str) -> str:"),
        write("p2.diff", "PRECISION: int = 4", "PRECISION: int = \"4\""),
    ]
}

/// `textDocument/diagnostic` requests sent for each operation of a trace.
fn pulls_per_op(trace: &Path) -> Vec<usize> {
    let mut out = Vec::new();
    let mut n = 0;
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        match rec["type"].as_str() {
            Some("rpc")
                if rec["dir"] == "send" && rec["body"]["method"] == "textDocument/diagnostic" =>
            {
                n += 1
            }
            Some("op") => out.push(std::mem::take(&mut n)),
            _ => {}
        }
    }
    out
}

#[test]
fn a_check_after_a_check_pulls_only_the_view_it_changes() {
    let ws = fixture("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap();
    let [p1, p2] = patches(&ws, dir.path());
    let input = dir.path().join("in.jsonl");
    let line = |p: &str| format!("{{\"cmd\":\"check\",\"args\":{{\"patch\":\"{p}\"}}}}\n");
    std::fs::write(&input, [line(&p1), line(&p2), line(&p1)].concat()).unwrap();
    let (out, trace) = (dir.path().join("out.jsonl"), dir.path().join("t.jsonl"));
    let o = lanser()
        .args(["batch", "--in"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .arg("--trace-file")
        .arg(&trace)
        .args(["--workspace", &w])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let bundles: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let first: Value = serde_json::from_str(&bundles[0]).unwrap();
    // Each check lists units.py and the importers it re-checks (the ones the patch can alter,
    // docs/editing.md#what-is-re-checked; a skipped importer is not pulled at all). The first
    // pulls them before and after; the second only its patched view (its view before is the
    // first's restored one); the first again nothing (both views pulled already).
    let listed = first["facts"]["files"].as_array().unwrap().len();
    let rechecked = |b: &str| {
        let v: Value = serde_json::from_str(b).unwrap();
        1 + v["facts"]["checked"]["importers"].as_array().unwrap().len()
    };
    let (r1, r2) = (rechecked(&bundles[0]), rechecked(&bundles[1]));
    assert_eq!(listed, r1, "{first}");
    assert!(r1 < 5, "geometry.py names no `convert`: {first}");
    assert_eq!(pulls_per_op(&trace), vec![2 * r1, r2, 0]);
    // The same bytes as one process per check, and the repeat as the first.
    for (i, p) in [&p1, &p2, &p1].into_iter().enumerate() {
        let one = run(&["check", "--patch", p, "--workspace", &w, "--json"]);
        assert!(one.status.success(), "{}", stderr(&one));
        assert_eq!(stdout(&one).trim_end(), bundles[i], "line {}", i + 1);
    }
    let ok = lanser()
        .args(["trace", "replay", "--verify", "--trace-file"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", stderr(&ok));
}

#[test]
fn an_importer_edited_on_disk_is_a_new_view_for_the_warm_daemon() {
    let w = Warm::new("srcpkg");
    let dir = tempfile::tempdir().unwrap();
    let [p1, p2] = patches(&w.ws, dir.path());
    let check = |p: &str| {
        stdout(&w.ok(&["check", "--patch", p, "--json"]))
            .trim_end()
            .to_string()
    };
    let facts = |b: &str| serde_json::from_str::<Value>(b).unwrap()["facts"].clone();
    let before = facts(&check(&p1))["before"].as_u64().unwrap();
    check(&p2);
    // intl.py imports units.py and was never opened: the server learns of the edit only by
    // didChangeWatchedFiles, and the restored view's diagnostics must be pulled again.
    let intl = w.ws.join("src/shapes/intl.py");
    let mut text = std::fs::read_to_string(&intl).unwrap();
    text.push_str("\nbroken_here: int = \"not an int\"\n");
    std::fs::write(&intl, text).unwrap();
    let warm = check(&p1);
    assert_eq!(
        facts(&warm)["before"].as_u64().unwrap(),
        before + 1,
        "{warm}"
    );
    let cold = w
        .cmd(&["check", "--patch", &p1, "--json"])
        .env("LANSER_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert_eq!(stdout(&cold).trim_end(), warm, "warm and cold agree");
}

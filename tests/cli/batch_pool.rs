//! `lanser batch --jobs N --servers K` on real Pyright: K server sessions really answer (their
//! pids, in `meta.timing.batch`), and the bytes are those of `--jobs 1`, run after run; an
//! `--apply` inside the batch reaches every session, so later answers match `--jobs 1`.

use crate::mutations::{git, repo_copy, snapshot};
use crate::support::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// Distinct read-only requests on srcpkg (distinct, so that the memo answers none of them).
fn mixed(ws: &Path) -> String {
    let g = "src/shapes/geometry.py";
    let t = "tests/test_geometry.py";
    let circle = line_with(ws, g, "class Circle(");
    let shape = line_with(ws, g, "class Shape");
    let round = line_with(ws, "src/shapes/units.py", "def round_to_precision(");
    let convert = line_with(ws, "src/shapes/units.py", "def convert(");
    let mut lines = vec![
        format!(r#"{{"cmd":"def","selector":"{t}@L10:Circle"}}"#),
        format!(r#"{{"cmd":"refs","selector":"src/shapes/units.py@L{convert}:convert"}}"#),
        format!(r#"{{"cmd":"hover","selector":"{t}@L12:diameter"}}"#),
        format!(r#"{{"cmd":"symbols","args":{{"file":"{g}"}}}}"#),
        r#"{"cmd":"symbols","args":{"query":"Circle"}}"#.to_string(),
        r#"{"cmd":"diag","args":{"targets":["src/shapes/*.py"]}}"#.to_string(),
        format!(r#"{{"cmd":"type-def","selector":"{t}@L12:circle"}}"#),
        format!(r#"{{"cmd":"refs","selector":"{g}@L{circle}:Circle"}}"#),
        format!(r#"{{"cmd":"refs","selector":"{g}@L{shape}:Shape"}}"#),
        format!(r#"{{"cmd":"highlight","selector":"{g}@L{circle}:Circle"}}"#),
        format!(r#"{{"cmd":"hover","selector":"{g}@L{circle}:Circle"}}"#),
        r#"{"cmd":"capabilities"}"#.to_string(),
        r#"{"cmd":"diag"}"#.to_string(),
        r#"{"cmd":"symbols","args":{"query":"area"}}"#.to_string(),
        format!(r#"{{"cmd":"def","selector":"{t}@L12:diameter"}}"#),
        format!(r#"{{"cmd":"prepare-rename","selector":"{g}@L{circle}:Circle"}}"#),
        r#"{"cmd":"locate","selector":"src/shapes/intl.py@R(12,1->12,20)","args":{"preview":true}}"#
            .to_string(),
        format!(r#"{{"cmd":"refs","selector":"{g}@L{circle}:Circle","args":{{"exclude-declaration":true}}}}"#),
        r#"{"cmd":"nope"}"#.to_string(),
        format!(r#"{{"cmd":"calls","selector":"src/shapes/units.py@L{round}:round_to_precision","args":{{"incoming":true}}}}"#),
    ];
    lines.extend((1..=8).map(|l| format!(r#"{{"cmd":"hover","selector":"{t}@L{}:C1"}}"#, 20 + l)));
    lines.join("\n") + "\n"
}

/// Run a batch of `text` over `ws`; its bundle lines and exit code.
fn batch(ws: &Path, text: &str, extra: &[&str]) -> (Vec<String>, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, text).unwrap();
    let mut args = vec!["batch", "--in", input.to_str().unwrap(), "--out", "-"];
    let wss = ws.to_string_lossy().into_owned();
    args.extend(["--workspace", &wss]);
    args.extend(extra);
    let o = run(&args);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), text.lines().count(), "{}", stderr(&o));
    (lines, o.status.code())
}

/// The bundle line without `meta.timing`, canonical again; and the session that answered.
fn untimed(line: &str) -> (String, Option<(u64, u64)>) {
    let mut v: Value = serde_json::from_str(line).unwrap();
    let t = v["meta"]
        .as_object_mut()
        .unwrap()
        .remove("timing")
        .unwrap_or(Value::Null);
    let session = t["batch"]["session"]
        .as_u64()
        .map(|s| (s, t["batch"]["serverPid"].as_u64().expect("a server pid")));
    (serde_jcs::to_string(&v).unwrap(), session)
}

/// The sessions (index, server pid) that answered `lines`, and the lines without timing.
fn sessions(lines: &[String]) -> (BTreeSet<(u64, u64)>, Vec<String>) {
    let mut seen = BTreeSet::new();
    let mut plain = Vec::new();
    for l in lines {
        let (p, s) = untimed(l);
        seen.extend(s);
        plain.push(p);
    }
    (seen, plain)
}

#[test]
fn two_sessions_give_the_bytes_of_one_run_after_run() {
    let ws = fixture("srcpkg");
    let text = mixed(&ws);
    let (one, code) = batch(&ws, &text, &[]);
    assert_eq!(code, Some(2), "the unknown cmd is a usage error");
    for _ in 0..2 {
        let (pooled, c) = batch(&ws, &text, &["--jobs", "4", "--servers", "2"]);
        assert_eq!(c, code);
        assert_eq!(pooled, one, "--jobs 4 --servers 2 against --jobs 1");
    }
    // With --timing every server-answered bundle names its session; two server processes
    // answered, and a bundle's bytes without the volatile timing are still --jobs 1's.
    let (timed, _) = batch(&ws, &text, &["--jobs", "4", "--servers", "2", "--timing"]);
    let (seen, plain) = sessions(&timed);
    assert_eq!(plain, one);
    let indices: BTreeSet<u64> = seen.iter().map(|s| s.0).collect();
    let pids: BTreeSet<u64> = seen.iter().map(|s| s.1).collect();
    assert_eq!(indices, BTreeSet::from([0, 1]), "{seen:?}");
    assert_eq!(pids.len(), 2, "two server processes: {seen:?}");
    // One session when asked for one.
    let (timed, _) = batch(&ws, &text, &["--jobs", "4", "--servers", "1", "--timing"]);
    let (seen, plain) = sessions(&timed);
    assert_eq!(plain, one);
    assert_eq!(seen.len(), 1, "{seen:?}");
}

/// Uses of `convert` in srcpkg, declaration included.
const REFS_AFTER: usize = 7;

#[test]
fn an_apply_in_a_batch_reaches_every_session() {
    let (_t, ws0) = repo_copy("srcpkg");
    let units = "src/shapes/units.py";
    let convert = line_with(&ws0, units, "def convert(");
    let intl = line_with(&ws0, "src/shapes/intl.py", "result = convert(");
    let broken = line_with(&ws0, "src/shapes/broken.py", "convert(\"x\"");
    let mut text = String::new();
    // Both sessions open and analyse the files that the rename touches...
    for (i, file) in [
        "src/shapes/intl.py",
        "src/shapes/broken.py",
        units,
        "src/shapes/__init__.py",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            r#"{{"cmd":"diag","args":{{"targets":["{file}"]}}}}"#
        ));
        text.push('\n');
        text.push_str(&format!(
            r#"{{"cmd":"refs","selector":"{units}@L{convert}:convert","args":{{"exclude-declaration":{}}}}}"#,
            i % 2 == 0
        ));
        text.push('\n');
    }
    text.push_str(&format!(
        r#"{{"cmd":"hover","selector":"src/shapes/intl.py@L{intl}:convert"}}"#
    ));
    text.push('\n');
    // ...then one of them writes the rename...
    text.push_str(&format!(
        r#"{{"cmd":"rename","selector":"{units}@L{convert}:convert","args":{{"new_name":"to_unit","apply":true}}}}"#
    ));
    text.push('\n');
    // ...and every later answer must see it, whichever session gives it.
    let after = [
        format!(r#"{{"cmd":"refs","selector":"src/shapes/intl.py@L{intl}:to_unit"}}"#),
        format!(r#"{{"cmd":"refs","selector":"src/shapes/broken.py@L{broken}:to_unit"}}"#),
        format!(r#"{{"cmd":"refs","selector":"{units}@L{convert}:to_unit"}}"#),
        format!(r#"{{"cmd":"def","selector":"src/shapes/intl.py@L{intl}:to_unit"}}"#),
        r#"{"cmd":"diag","args":{"targets":["src/shapes/*.py"]}}"#.to_string(),
        r#"{"cmd":"diag","args":{"targets":["src/shapes/b*.py"]}}"#.to_string(),
        r#"{"cmd":"diag","args":{"targets":["src/shapes/i*.py"]}}"#.to_string(),
        format!(r#"{{"cmd":"hover","selector":"src/shapes/broken.py@L{broken}:to_unit"}}"#),
        r#"{"cmd":"symbols","args":{"query":"to_unit"}}"#.to_string(),
        r#"{"cmd":"symbols","args":{"file":"src/shapes/__init__.py"}}"#.to_string(),
    ];
    let first_after = text.lines().count();
    for l in &after {
        text.push_str(l);
        text.push('\n');
    }
    let (one, code) = batch(&ws0, &text, &["--timing"]);
    assert_eq!(code, Some(0), "{one:?}");
    let (_, one) = sessions(&one);
    let applied: Value = serde_json::from_str(&one[first_after - 1]).unwrap();
    assert_eq!(applied["facts"]["applied"], true, "{applied}");
    let refs: Value = serde_json::from_str(&one[first_after]).unwrap();
    assert_eq!(
        refs["facts"]["references"].as_array().unwrap().len(),
        REFS_AFTER,
        "{refs}"
    );
    let written = snapshot(&ws0);

    // The same batch over the same (restored) copy, two sessions.
    git(&ws0, &["checkout", "-q", "--", "."]);
    let (pooled, c) = batch(&ws0, &text, &["--jobs", "2", "--servers", "2", "--timing"]);
    assert_eq!(c, code);
    let (_, plain) = sessions(&pooled);
    for (i, (a, b)) in one.iter().zip(&plain).enumerate() {
        assert_eq!(a, b, "line {}", i + 1);
    }
    // Both sessions answered after the write (else this test could not fail).
    let (late, _) = sessions(&pooled[first_after..]);
    let indices: BTreeSet<u64> = late.iter().map(|s| s.0).collect();
    assert_eq!(indices, BTreeSet::from([0, 1]), "{late:?}");
    assert_eq!(snapshot(&ws0), written);
}

/// Pyright finds the type definition of an imported module only once the project is loaded
/// and the file checked; `type-def` waits for both, so its answer does not depend on what ran
/// before it (a first request, a `diag`) nor on which session gives it.
#[test]
fn type_def_answers_do_not_depend_on_history_or_session() {
    let ws = fixture("srcpkg");
    let g = "src/shapes/geometry.py";
    let at = line_with(&ws, g, "import asyncio");
    let mut text = format!("{{\"cmd\":\"type-def\",\"selector\":\"{g}@L{at}:asyncio\"}}\n");
    text.push_str(&format!(
        "{{\"cmd\":\"diag\",\"args\":{{\"targets\":[\"{g}\"]}}}}\n"
    ));
    // Distinct spellings of the same position, so that the memo answers none of them.
    for col in 8..16 {
        text.push_str(&format!(
            "{{\"cmd\":\"type-def\",\"selector\":\"{g}@L{at}:C{col}\"}}\n"
        ));
    }
    let (one, _) = batch(&ws, &text, &[]);
    let module = |l: &str| {
        let b: Value = serde_json::from_str(l).unwrap();
        b["facts"]["typeDefinitions"].as_array().unwrap().len()
    };
    assert_eq!(module(&one[0]), 1, "the very first request: {}", one[0]);
    assert!(one[2..].iter().all(|l| module(l) == 1), "{one:?}");
    let (timed, _) = batch(&ws, &text, &["--jobs", "4", "--servers", "2", "--timing"]);
    let (_, plain) = sessions(&timed);
    assert_eq!(plain, one);
    let (late, _) = sessions(&timed[2..]);
    let indices: BTreeSet<u64> = late.iter().map(|s| s.0).collect();
    assert_eq!(indices, BTreeSet::from([0, 1]), "{late:?}");
}

/// A trace records one session's frames, so a traced batch runs one session whatever
/// `--servers` says, and replays offline.
#[test]
fn a_traced_batch_runs_one_session_and_replays() {
    let ws = fixture("srcpkg");
    let text = mixed(&ws);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let tr = trace.to_string_lossy().into_owned();
    let (timed, _) = batch(
        &ws,
        &text,
        &[
            "--jobs",
            "4",
            "--servers",
            "2",
            "--timing",
            "--trace-file",
            &tr,
        ],
    );
    let (seen, _) = sessions(&timed);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let replay = lanser()
        .args(["trace", "replay", "--trace-file", &tr, "--verify"])
        .args(["--server-cmd", "/nonexistent"])
        .env("PATH", "")
        .env("LANSER_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(2), "{}", stderr(&replay));
    assert_eq!(stdout(&replay).lines().count(), text.lines().count());
}

//! `lanser batch` on real Pyright: the same bytes as the same requests run one process each
//! (twice: sequential from a file, pipelined through stdin/stdout), input order, error bundles
//! for bad lines, the first failing line's exit code, and a memo that an edit invalidates.

use crate::support::*;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// Mixed requests on srcpkg as (batch line, the same request as CLI arguments); `None` for a
/// line that is not a request.
fn mixed(ws: &Path) -> Vec<(String, Option<Vec<String>>)> {
    let lines_in_test = read(ws, "tests/test_geometry.py").split('\n').count();
    let past_end = format!("tests/test_geometry.py@L{}:Circle", lines_in_test + 5);
    let req = |line: &str, args: &[&str]| {
        (
            line.to_string(),
            Some(args.iter().map(|s| s.to_string()).collect()),
        )
    };
    vec![
        req(
            r#"{"id":"a","cmd":"def","selector":"tests/test_geometry.py@L10:Circle"}"#,
            &["def", "tests/test_geometry.py@L10:Circle"],
        ),
        req(
            r#"{"cmd":"refs","selector":"src/shapes/units.py@L13:convert"}"#,
            &["refs", "src/shapes/units.py@L13:convert"],
        ),
        req(
            r#"{"cmd":"hover","selector":"tests/test_geometry.py@L12:diameter"}"#,
            &["hover", "tests/test_geometry.py@L12:diameter"],
        ),
        (
            format!(r#"{{"cmd":"def","selector":"{past_end}"}}"#),
            Some(vec!["def".into(), past_end.clone()]),
        ),
        req(
            r#"{"cmd":"symbols","args":{"file":"src/shapes/geometry.py"}}"#,
            &["symbols", "src/shapes/geometry.py"],
        ),
        ("{\"cmd\": \"def\", oops".to_string(), None),
        req(
            r#"{"cmd":"symbols","args":{"query":"Circle"}}"#,
            &["symbols", "--query", "Circle"],
        ),
        req(
            r#"{"cmd":"diag","args":{"targets":["src/shapes/*.py"]}}"#,
            &["diag", "src/shapes/*.py"],
        ),
        req(
            r#"{"cmd":"type-def","selector":"tests/test_geometry.py@L12:circle"}"#,
            &["type-def", "tests/test_geometry.py@L12:circle"],
        ),
        req(
            r#"{"cmd":"locate","selector":"src/shapes/intl.py@R(12,1->12,20)","args":{"preview":true}}"#,
            &["locate", "src/shapes/intl.py@R(12,1->12,20)", "--preview"],
        ),
        req(
            r#"{"id":"again","cmd":"def","selector":"tests/test_geometry.py@L10:Circle"}"#,
            &["def", "tests/test_geometry.py@L10:Circle"],
        ),
        req(
            r#"{"cmd":"refs","selector":"src/shapes/units.py@L13:convert","args":{"exclude-declaration":true}}"#,
            &[
                "refs",
                "src/shapes/units.py@L13:convert",
                "--exclude-declaration",
            ],
        ),
        ("{\"cmd\":\"fly\"}".to_string(), None),
    ]
}

fn lines(bytes: &[u8]) -> Vec<String> {
    crate::schemas::collect(bytes);
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_batch_gives_the_bytes_of_one_by_one_runs_twice() {
    let ws = fixture("srcpkg");
    let wss = ws.to_string_lossy().into_owned();
    let reqs = mixed(&ws);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("requests.jsonl");
    // A blank line is skipped but still counts in the line numbers.
    let mut text = String::from("\n");
    for (line, _) in &reqs {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&input, &text).unwrap();

    // 1: from a file to a file, sequentially.
    let out = dir.path().join("bundles.jsonl");
    let o = run(&[
        "batch",
        "--in",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--workspace",
        &wss,
    ]);
    let first = lines(&std::fs::read(&out).unwrap());
    assert_eq!(first.len(), reqs.len(), "{}", stderr(&o));
    // The first failing line is the past-the-end def (E/NOT_FOUND, 3), before the bad JSON (2).
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));

    // 2: stdin to stdout, three requests in flight.
    let mut child = lanser()
        .args([
            "batch",
            "--in",
            "-",
            "--out",
            "-",
            "--jobs",
            "3",
            "--workspace",
            &wss,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let piped = child.wait_with_output().unwrap();
    assert_eq!(piped.status.code(), Some(3));
    assert_eq!(lines(&piped.stdout), first);

    // One process per request gives the same bytes.
    for (i, (line, args)) in reqs.iter().enumerate() {
        let b: Value = serde_json::from_str(&first[i]).unwrap();
        match args {
            Some(args) => {
                let mut argv: Vec<&str> = args.iter().map(String::as_str).collect();
                argv.extend(["--workspace", &wss, "--json"]);
                let single = run(&argv);
                assert_eq!(lines(&single.stdout), vec![first[i].clone()], "{line}");
                assert_eq!(
                    single.status.code(),
                    Some(b["meta"]["exit_code"].as_i64().unwrap() as i32)
                );
            }
            None => {
                // +2: 1-based, after the leading blank line.
                let msg = b["error"]["message"].as_str().unwrap();
                assert!(msg.starts_with(&format!("batch line {}: ", i + 2)), "{msg}");
                assert_eq!(b["error"]["code"], "E/USAGE");
                assert_eq!(b["status"], "error");
            }
        }
    }
    // Answers against the fixture text, in input order.
    let def: Value = serde_json::from_str(&first[0]).unwrap();
    let line = line_with(&ws, "src/shapes/geometry.py", "class Circle(");
    assert_eq!(
        locs(&def["facts"]["definitions"]),
        vec![(
            "src/shapes/geometry.py".to_string(),
            ident_range(&ws, "src/shapes/geometry.py", line, "Circle")
        )]
    );
    let unknown: Value = serde_json::from_str(first.last().unwrap()).unwrap();
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .ends_with("unknown cmd \"fly\""));
    assert_eq!(first[0], first[10], "the repeated def is the same bundle");
}

#[test]
fn answers_stream_and_an_edit_is_never_served_from_the_memo() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture("srcpkg"), &ws);
    let trace = dir.path().join("trace.jsonl");
    let mut cmd = lanser();
    // Several in flight: a harness that waits for each answer must still get it.
    cmd.args([
        "batch",
        "--in",
        "-",
        "--out",
        "-",
        "--jobs",
        "4",
        "--workspace",
    ])
    .arg(&ws)
    .arg("--trace-file")
    .arg(&trace);
    let mut h = Harness::spawn(cmd);
    let q = r#"{"cmd":"symbols","args":{"file":"src/shapes/geometry.py"}}"#;
    // Each answer arrives while stdin is still open.
    let before = h.ask(q);
    let geometry = ws.join("src/shapes/geometry.py");
    let text = std::fs::read_to_string(&geometry).unwrap();
    let edited = format!("# one more line\n{text}");
    std::fs::write(&geometry, &edited).unwrap();
    let after = h.ask(q);
    let again = h.ask(q);
    assert!(h.finish().success());

    let expected_line = line_with(&ws, "src/shapes/geometry.py", "class Circle(") as u64 - 1;
    assert_eq!(circle_row(&after), expected_line);
    assert_eq!(circle_row(&before), expected_line - 1);
    use sha2::{Digest, Sha256};
    let hex: String = Sha256::digest(edited.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(after["facts"]["docVersion"], format!("sha256:{hex}"));
    assert_eq!(again, after);
    // Only the unchanged repeat came from the memo.
    let memo: Vec<bool> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "op")
        .map(|v| v["memo"].as_bool().unwrap())
        .collect();
    assert_eq!(memo, vec![false, false, true]);
}

/// With several requests in flight, a speculative `check --patch` (which puts the patched text
/// into the server's memory for a moment) runs alone: no concurrent `diag` ever sees the patch.
#[test]
fn speculative_requests_never_overlap_with_others() {
    let ws = fixture("srcpkg");
    let wss = ws.to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap();
    let rel = "src/shapes/broken.py";
    let line = line_with(&ws, rel, "convert(\"x\"");
    let old = read(&ws, rel)
        .split('\n')
        .nth(line as usize - 1)
        .unwrap()
        .to_string();
    let patch = format!("--- a/{rel}\n+++ b/{rel}\n@@ -{line},1 +{line},2 @@\n {old}\n+len(1)\n");
    let mut text = String::new();
    for i in 0..12 {
        let p = dir.path().join(format!("p{i}.diff"));
        std::fs::write(&p, &patch).unwrap();
        text.push_str(&format!(
            "{{\"cmd\":\"check\",\"args\":{{\"patch\":\"{}\"}}}}\n",
            p.display()
        ));
        // Distinct spellings of the same file, so that the memo does not answer them.
        for j in 0..4 {
            let target = format!("src/shapes/{}*.py", &"broken"[..1 + (i * 4 + j) % 6]);
            let extra = "src/shapes/units.py".to_string();
            let targets = if (i * 4 + j) >= 6 {
                format!("\"{target}\",\"{extra}\"")
            } else {
                format!("\"{target}\"")
            };
            let targets = if (i * 4 + j) >= 12 {
                format!(
                    "{targets},\"src/shapes/u{}*.py\"",
                    &"nits"[..(i * 4 + j) % 4]
                )
            } else {
                targets
            };
            text.push_str(&format!(
                "{{\"id\":{},\"cmd\":\"diag\",\"args\":{{\"targets\":[{targets}]}}}}\n",
                i * 4 + j
            ));
        }
    }
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, &text).unwrap();
    let o = run(&[
        "batch",
        "--in",
        input.to_str().unwrap(),
        "--out",
        "-",
        "--jobs",
        "8",
        "--workspace",
        &wss,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bundles: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(bundles.len(), text.lines().count());
    for b in &bundles {
        match b["request"]["cmd"].as_str().unwrap() {
            "diag" => assert_eq!(
                b["facts"]["counts"]["error"], 3,
                "a diag saw a speculative text: {b}"
            ),
            "check" => assert_eq!(
                b["facts"]["after"].as_u64(),
                b["facts"]["before"].as_u64().map(|n| n + 1)
            ),
            other => panic!("{other}"),
        }
    }
}

/// `check --patch P` reads P when it runs: the same line again after P changed is answered for
/// the new patch, never from the memo (the daemon does not memoize check either).
#[test]
fn a_repeated_check_reads_its_patch_again() {
    let ws = fixture("srcpkg");
    let dir = tempfile::tempdir().unwrap();
    let rel = "src/shapes/broken.py";
    let line = line_with(&ws, rel, "convert(\"x\"");
    let old = read(&ws, rel)
        .split('\n')
        .nth(line as usize - 1)
        .unwrap()
        .to_string();
    let patch = |added: &str| {
        format!("--- a/{rel}\n+++ b/{rel}\n@@ -{line},1 +{line},2 @@\n {old}\n+{added}\n")
    };
    let p = dir.path().join("p.diff");
    std::fs::write(&p, patch("len(1)")).unwrap();
    let mut cmd = lanser();
    cmd.args([
        "batch",
        "--in",
        "-",
        "--out",
        "-",
        "--jobs",
        "2",
        "--workspace",
    ])
    .arg(&ws);
    let mut h = Harness::spawn(cmd);
    let q = format!(
        "{{\"cmd\":\"check\",\"args\":{{\"patch\":\"{}\"}}}}",
        p.display()
    );
    let added = |b: &Value| b["facts"]["after"].as_u64().unwrap();
    let first = h.ask(&q);
    assert_eq!(added(&first), 4, "{first}");
    std::fs::write(&p, patch("pass")).unwrap();
    let second = h.ask(&q);
    assert!(h.finish().success());
    assert_eq!(added(&second), 3, "{second}");
    assert_ne!(first["bundleId"], second["bundleId"]);
}

/// An edit undone between two lines: the repeat after the undo describes the text on disk, not
/// the edited text the memo saw (the entry's own scan saw the edit).
#[test]
fn an_undone_edit_is_never_served_from_the_memo() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture("srcpkg"), &ws);
    let mut cmd = lanser();
    cmd.args(["batch", "--in", "-", "--out", "-", "--workspace"])
        .arg(&ws);
    let mut h = Harness::spawn(cmd);
    let mut ask = |file: &str| {
        h.ask(&format!(
            "{{\"cmd\":\"symbols\",\"args\":{{\"file\":\"{file}\"}}}}"
        ))
    };
    let g = "src/shapes/geometry.py";
    ask("src/shapes/units.py");
    let path = ws.join(g);
    let original = std::fs::read(&path).unwrap();
    let mut edited = b"# one more line\n".to_vec();
    edited.extend_from_slice(&original);
    std::fs::write(&path, &edited).unwrap();
    let during = ask(g);
    std::fs::write(&path, &original).unwrap();
    let after = ask(g);
    assert!(h.finish().success());
    let want = line_with(&ws, g, "class Circle(") as u64 - 1;
    assert_eq!(circle_row(&during), want + 1);
    assert_eq!(circle_row(&after), want, "{after}");
}

//! `lanser batch` through the warm daemon (issue 8 item 5): the same bytes, exit status and
//! summary line as `--no-daemon` (sequential and pipelined, file and stdin), answers that
//! really came from the daemon, edits seen between runs and between two lines of one run,
//! streaming, writes answered
//! in-process in order, and a daemon killed mid-batch losing no line.

use crate::daemon::{kill9, Warm};
use crate::support::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Output, Stdio};

/// The daemon's request count (0 when none runs).
fn requests(w: &Warm) -> u64 {
    w.status()["requests"].as_u64().unwrap_or(0)
}

/// `lanser batch` over `text`: from a file to a file, or piped through stdin/stdout. The
/// bundles, the exit status and stderr.
fn batch(w: &Warm, text: &str, jobs: &str, piped: bool, extra: &[&str]) -> (Vec<u8>, Output) {
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("in.jsonl"), dir.path().join("out.jsonl"));
    std::fs::write(&input, text).unwrap();
    let o = if piped {
        let args = [
            &["batch", "--in", "-", "--out", "-", "--jobs", jobs][..],
            extra,
        ]
        .concat();
        let mut child = w
            .cmd(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    } else {
        let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
        let args = [&["batch", "--in", i, "--out", o, "--jobs", jobs][..], extra].concat();
        w.run(&args)
    };
    let bundles = if piped {
        o.stdout.clone()
    } else {
        assert!(o.stdout.is_empty());
        std::fs::read(&out).unwrap_or_default()
    };
    crate::schemas::collect(&bundles);
    (bundles, o)
}

/// A `lanser batch` reading stdin and writing stdout, with extra arguments, left running.
fn open_batch(w: &Warm, extra: &[&str]) -> std::process::Child {
    let args = [&["batch", "--in", "-", "--out", "-"][..], extra].concat();
    w.cmd(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn parsed(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_batch_through_the_daemon_gives_the_bytes_of_no_daemon() {
    let w = Warm::new("srcpkg");
    let lines = [
        r#"{"id":"a","cmd":"def","selector":"tests/test_geometry.py@L10:Circle"}"#,
        "{\"cmd\": \"def\", oops",
        "",
        r#"{"cmd":"refs","selector":"src/shapes/units.py@L13:convert"}"#,
        r#"{"cmd":"hover","selector":"tests/test_geometry.py@L12:diameter"}"#,
        r#"{"cmd":"def","selector":"tests/test_geometry.py@L999:Circle"}"#,
        r#"{"cmd":"diag"}"#,
        r#"{"cmd":"symbols","args":{"file":"src/shapes/geometry.py"}}"#,
        r#"{"cmd":"symbols","args":{"query":"Circle"}}"#,
        r#"{"cmd":"locate","selector":"src/shapes/intl.py@R(12,1->12,20)","args":{"preview":true}}"#,
        r#"{"id":"again","cmd":"def","selector":"tests/test_geometry.py@L10:Circle"}"#,
        r#"{"cmd":"fly"}"#,
        // Describe the session answering the batch (one already ran a request).
        r#"{"cmd":"status"}"#,
        r#"{"cmd":"reload"}"#,
    ];
    let text = lines.join("\n") + "\n";
    // Every line but the blank one is sent (in a batch, `locate` too).
    let sent = lines.len() as u64 - 1;
    for jobs in ["1", "4"] {
        for piped in [false, true] {
            let case = format!("--jobs {jobs}, piped {piped}");
            let before = requests(&w);
            let (warm, wo) = batch(&w, &text, jobs, piped, &[]);
            let answered = requests(&w);
            assert_eq!(answered - before, sent, "{case}: {}", stderr(&wo));
            let (cold, co) = batch(&w, &text, jobs, piped, &["--no-daemon"]);
            assert_eq!(
                requests(&w),
                answered,
                "{case}: --no-daemon used the daemon"
            );
            assert_eq!(
                String::from_utf8_lossy(&warm),
                String::from_utf8_lossy(&cold)
            );
            assert_eq!(wo.status.code(), co.status.code(), "{case}");
            assert_eq!(stderr(&wo), stderr(&co), "{case}");
            // The first failing line is the malformed one (E/USAGE, 2), of three failures.
            assert_eq!(wo.status.code(), Some(2), "{case}");
            assert!(
                stderr(&wo).starts_with("lanser: 3 request(s) failed; first at line 2: E/USAGE"),
                "{case}: {}",
                stderr(&wo)
            );
            let bundles = parsed(&warm);
            assert_eq!(bundles.len(), lines.len() - 1, "{case}");
            assert_eq!(bundles[0], bundles[9], "{case}: the repeated def");
            assert_eq!(bundles[4]["error"]["code"], "E/NOT_FOUND", "{case}");
        }
    }
    // With --timing the daemon's answers say which snapshot of the workspace they saw
    // (in-process ones do not).
    let timed = [lines[0], lines[9]].join("\n");
    for (extra, daemon) in [
        (&["--timing"][..], true),
        (&["--timing", "--no-daemon"], false),
    ] {
        let (bytes, o) = batch(&w, &timed, "2", false, extra);
        assert!(o.status.success(), "{}", stderr(&o));
        for b in parsed(&bytes) {
            assert!(b["meta"]["timing"]["totalMs"].is_number());
            let digest = b["meta"]["timing"]["daemon"]["contentDigest"].as_str();
            assert_eq!(
                digest.is_some_and(|d| d.starts_with("sha256:")),
                daemon,
                "{b}"
            );
        }
    }
}

#[test]
fn an_edit_between_two_batches_is_seen_by_the_second() {
    let w = Warm::new("demo");
    let text = "{\"cmd\":\"def\",\"selector\":\"cli.py@L17:add_item\"}\n";
    let line_of = |bytes: &[u8]| parsed(bytes)[0]["facts"]["definitions"][0]["range"][0].clone();
    let (first, o) = batch(&w, text, "1", false, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(line_of(&first), 24);
    let store = w.ws.join("inventory/store.py");
    let old = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("# one\n# two\n{old}")).unwrap();
    let (second, o) = batch(&w, text, "1", true, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(line_of(&second), 26);
    assert_eq!(second, batch(&w, text, "1", true, &["--no-daemon"]).0);
    assert_eq!(requests(&w), 2);
}

/// One batch is one connection to the daemon, yet each line is as fresh as a command of its
/// own: a harness asks, edits a file, asks again on the same open batch, and the second answer
/// is about the new text — both from the daemon.
#[test]
fn an_edit_between_two_lines_of_one_batch_is_seen_by_the_next() {
    let w = Warm::new("demo");
    let line = r#"{"cmd":"def","selector":"cli.py@L17:add_item"}"#;
    let mut child = open_batch(&w, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = || {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        answer
    };
    let line_of = |b: &str| parsed(b.as_bytes())[0]["facts"]["definitions"][0]["range"][0].clone();
    let first = ask();
    assert_eq!(line_of(&first), 24, "{first}");
    let store = w.ws.join("inventory/store.py");
    let old = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("# one\n# two\n{old}")).unwrap();
    let second = ask();
    assert_eq!(line_of(&second), 26, "{second}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(requests(&w), 2, "both lines were answered by the daemon");
    let (cold, _) = batch(&w, &format!("{line}\n"), "1", false, &["--no-daemon"]);
    assert_eq!(second, String::from_utf8_lossy(&cold));
}

/// A line that writes (`rename --apply`) is answered in-process, after every earlier line and
/// before any later one is sent: with four in flight, the lines after it see the new name.
#[test]
fn a_writing_line_is_answered_in_order_in_process() {
    let w = Warm::new("demo");
    let pristine = tempfile::tempdir().unwrap();
    copy_tree(&w.ws, pristine.path());
    let text = [
        r#"{"cmd":"def","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"rename","selector":"cli.py@L17:add_item","args":{"new_name":"add_entry","apply":true,"allow-dirty":true}}"#,
        r#"{"cmd":"def","selector":"cli.py@L17:add_entry"}"#,
        r#"{"cmd":"hover","selector":"cli.py@L17:add_entry"}"#,
        // The first line again: after the write its answer no longer holds (never coalesced
        // with the line still in flight before it).
        r#"{"cmd":"def","selector":"cli.py@L17:add_item"}"#,
    ]
    .join("\n");
    let (warm, wo) = batch(&w, &text, "4", false, &[]);
    assert_eq!(wo.status.code(), Some(3), "{}", stderr(&wo));
    assert_eq!(requests(&w), 4, "all but the write went to the daemon");
    let renamed = std::fs::read_to_string(w.ws.join("cli.py")).unwrap();
    assert!(renamed.contains("store.add_entry("));
    let b = parsed(&warm);
    assert_eq!(b[1]["facts"]["applied"], true);
    assert_eq!(
        b[2]["facts"]["definitions"][0]["selector"],
        "inventory/store.py@L25:C9"
    );
    assert_eq!(b[4]["error"]["code"], "E/NOT_FOUND", "{}", b[4]);
    copy_tree(pristine.path(), &w.ws);
    let (cold, _) = batch(&w, &text, "4", false, &["--no-daemon"]);
    assert_eq!(
        String::from_utf8_lossy(&warm),
        String::from_utf8_lossy(&cold)
    );
}

/// A harness writes a line and waits for its bundle; the daemon is SIGKILLed between two lines:
/// the batch answers every line once, the rest in-process, with the bytes of `--no-daemon`.
#[test]
fn answers_stream_and_a_daemon_killed_mid_batch_loses_no_line() {
    let w = Warm::new("demo");
    let lines = [
        r#"{"cmd":"def","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"hover","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"def","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"refs","selector":"cli.py@L17:add_item"}"#,
    ];
    let mut child = open_batch(&w, &["--jobs", "3"]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut got = Vec::new();
    let mut ask = |line: &str, got: &mut Vec<String>| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        got.push(answer);
    };
    // The first bundle arrives while stdin is still open, and the daemon answered it.
    ask(lines[0], &mut got);
    assert!(got[0].starts_with("{\"bundleId\""), "{}", got[0]);
    assert_eq!(requests(&w), 1);
    kill9(w.status()["pid"].as_u64().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(100));
    for line in &lines[1..] {
        ask(line, &mut got);
    }
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "no line answered twice");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    assert!(err.contains("daemon lost"), "{err}");
    let text = lines.join("\n");
    let (cold, _) = batch(&w, &text, "1", false, &["--no-daemon"]);
    assert_eq!(got.concat(), String::from_utf8_lossy(&cold));
}

/// No daemon to be had (here: its socket path would be too long): said once on stderr, and the
/// batch is answered in-process with the same bytes. (A pipe name has no such limit.)
#[cfg(unix)]
#[test]
fn an_unreachable_daemon_is_said_once_and_the_batch_runs_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h".repeat(100));
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(
        crate::daemon::real_home().join("pyright"),
        home.join("pyright"),
    )
    .unwrap();
    let ws = fixture("demo");
    let text = "{\"cmd\":\"def\",\"selector\":\"cli.py@L17:add_item\"}\n{\"cmd\":\"fly\"}\n";
    let run = |daemon: bool| {
        let mut c = lanser();
        if daemon {
            c.env_remove("LANSER_NO_DAEMON");
        }
        let mut child = c
            .env("LANSER_HOME", &home)
            .args([
                "batch",
                "--in",
                "-",
                "--out",
                "-",
                "--jobs",
                "2",
                "--workspace",
            ])
            .arg(&ws)
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
        child.wait_with_output().unwrap()
    };
    let (warm, cold) = (run(true), run(false));
    let err = stderr(&warm);
    let mut lines = err.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("lanser: daemon unavailable (")
            && first.ends_with("answering in-process"),
        "{err}"
    );
    assert_eq!(lines.collect::<Vec<_>>().join("\n") + "\n", stderr(&cold));
    assert_eq!(stdout(&warm), stdout(&cold));
    assert_eq!(warm.status.code(), Some(2));
    assert_eq!(cold.status.code(), Some(2));
    assert!(
        !home.join("daemon").read_dir().is_ok_and(|mut d| d.any(|e| e
            .unwrap()
            .path()
            .join("sock")
            .exists()))
    );
}

/// A daemon of another environment is replaced once, by the batch's first line, before more
/// lines are in flight: no line of a `--jobs 4` batch sees the old daemon go away.
#[test]
fn a_batch_replaces_a_daemon_of_another_environment_once() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    let a = w
        .cmd(&q)
        .env("PYTHONPATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", stderr(&a));
    let old = w.status()["pid"].clone();
    let text = [
        r#"{"cmd":"def","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"hover","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"refs","selector":"cli.py@L17:add_item"}"#,
        r#"{"cmd":"symbols","args":{"file":"cli.py"}}"#,
        r#"{"cmd":"diag","args":{"targets":["cli.py"]}}"#,
    ]
    .join("\n");
    let (warm, o) = batch(&w, &text, "4", true, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("daemon"), "{}", stderr(&o));
    assert_ne!(w.status()["pid"], old);
    assert_eq!(requests(&w), 5, "every line answered by the new daemon");
    let (cold, _) = batch(&w, &text, "4", true, &["--no-daemon"]);
    assert_eq!(
        String::from_utf8_lossy(&warm),
        String::from_utf8_lossy(&cold)
    );
}

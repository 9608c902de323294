//! `--trace-file` and `lanser trace`: traces of real Pyright runs replay with `--verify` with no
//! server to be had (empty PATH, empty LANSER_HOME, `--server-cmd /nonexistent`) and print the
//! bytes the run printed; a changed response byte or workspace file is E/REPLAY_MISMATCH (76)
//! naming what differs; list/show filter the recorded operations.

use crate::support::*;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `lanser trace …` with no way to start a server.
fn offline(home: &Path, args: &[&str]) -> Output {
    lanser()
        .args(args)
        .args(["--server-cmd", "/nonexistent"])
        .env("PATH", "")
        .env("LANSER_HOME", home)
        .output()
        .unwrap()
}

fn records(trace: &Path) -> Vec<Value> {
    crate::schemas::check_trace(trace);
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn real_runs_replay_offline_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let ws = fixture("srcpkg").to_string_lossy().into_owned();
    let batch_in = dir.path().join("in.jsonl");
    std::fs::write(
        &batch_in,
        concat!(
            "{\"cmd\":\"def\",\"selector\":\"tests/test_geometry.py@L10:Circle\"}\n",
            "{\"cmd\":\"hover\",\"selector\":\"tests/test_geometry.py@L12:diameter\"}\n",
            "{\"cmd\":\"refs\",\"selector\":\"src/shapes/units.py@L13:convert\"}\n",
            "{\"cmd\":\"def\",\"selector\":\"tests/test_geometry.py@L10:Circle\"}\n",
            "[1,2]\n",
            "{\"cmd\":\"diag\",\"args\":{\"targets\":[\"src/shapes/broken.py\"]}}\n",
        ),
    )
    .unwrap();
    let batch_in = batch_in.to_string_lossy().into_owned();
    let runs: Vec<Vec<&str>> = vec![
        vec!["def", "tests/test_geometry.py@L10:Circle", "--json"],
        vec![
            "refs",
            "src/shapes/units.py@L13:convert",
            "--exclude-declaration",
            "--json",
        ],
        vec!["symbols", "--query", "Circle", "--json", "--timing"],
        vec!["diag", "--json"],
        vec![
            "hover",
            "tests/test_geometry.py@L12:diameter",
            "--json",
            "--index-io",
            "utf-16",
        ],
        vec!["def", "tests/test_geometry.py@L999:Circle", "--json"],
        vec!["batch", "--in", &batch_in, "--out", "-", "--jobs", "2"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let trace = dir.path().join(format!("t{i}.jsonl"));
        let trace = trace.to_string_lossy().into_owned();
        let mut argv = args.clone();
        argv.extend(["--workspace", &ws, "--trace-file", &trace]);
        let rec = run(&argv);
        assert!(rec.status.code().is_some(), "{args:?}");
        let recs = records(Path::new(&trace));
        assert_eq!(recs[0]["type"], "header");
        // A selector past the end fails before any server is asked.
        let asks_server = !args[1].contains("L999");
        assert_eq!(
            recs.iter()
                .any(|r| r["type"] == "rpc" && r["dir"] == "recv"),
            asks_server
        );
        assert!(recs
            .iter()
            .any(|r| r["type"] == "file" && r["path"] == "src/shapes/units.py"));

        let rep = offline(
            &home,
            &["trace", "replay", "--trace-file", &trace, "--verify"],
        );
        assert_eq!(
            rep.status.code(),
            rec.status.code(),
            "{args:?}: {}",
            stderr(&rep)
        );
        if args.contains(&"--timing") {
            // Timing is volatile: everything else is the same.
            let (a, b) = (bundle(&rec), bundle(&rep));
            assert_eq!(a["bundleId"], b["bundleId"]);
        } else {
            assert_eq!(stdout(&rep), stdout(&rec), "{args:?}");
        }
    }
}

#[test]
fn one_changed_response_byte_or_file_is_a_replay_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture("srcpkg"), &ws);
    let trace = dir.path().join("t.jsonl");
    let rec = lanser()
        .args([
            "def",
            "tests/test_geometry.py@L10:Circle",
            "--json",
            "--workspace",
        ])
        .arg(&ws)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    let text = std::fs::read_to_string(&trace).unwrap();
    let ts = trace.to_string_lossy().into_owned();
    let ok = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert!(ok.status.success(), "{}", stderr(&ok));

    // The recorded definition answer names `Circle`'s start column; move it by one.
    let line = line_with(&ws, "src/shapes/geometry.py", "class Circle(");
    let col = ident_range(&ws, "src/shapes/geometry.py", line, "Circle")[1];
    let needle = format!("\"start\":{{\"line\":{},\"character\":{col}}}", line - 1);
    let (i, frame) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("\"dir\":\"recv\"") && l.contains(&needle))
        .expect("the definition response is recorded");
    let changed = frame.replacen(
        &needle,
        &format!(
            "\"start\":{{\"line\":{},\"character\":{}}}",
            line - 1,
            col + 1
        ),
        1,
    );
    assert_eq!(changed.len(), frame.len(), "one byte");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[i] = &changed;
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let bads = bad.to_string_lossy().into_owned();
    let o = offline(
        &home,
        &["trace", "replay", "--trace-file", &bads, "--verify"],
    );
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "lanser: E/REPLAY_MISMATCH: op 1 (def): facts.definitions[0].range[1] is {col} in the trace, {} in the replay\n",
            col + 1
        )
    );
    // Without --verify the replay prints what it rebuilt and only warns.
    let o = offline(&home, &["trace", "replay", "--trace-file", &bads]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(bundle(&o)["facts"]["definitions"][0]["range"][1], col + 1);

    // An edited workspace file no longer matches the recorded digest.
    let units = ws.join("src/shapes/units.py");
    let mut src = std::fs::read_to_string(&units).unwrap();
    src.push_str("\n# edited\n");
    std::fs::write(&units, src).unwrap();
    let o = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert_eq!(o.status.code(), Some(76));
    assert!(
        stderr(&o).contains("src/shapes/units.py changed (recorded sha256:"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn recorded_sources_replay_where_the_workspace_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture("srcpkg"), &ws);
    let trace = dir.path().join("t.jsonl");
    let rec = lanser()
        .args([
            "refs",
            "src/shapes/units.py@L13:convert",
            "--json",
            "--trace-sources",
        ])
        .arg("--workspace")
        .arg(&ws)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    let units = read(&ws, "src/shapes/units.py");
    assert!(records(&trace)
        .iter()
        .any(|r| r["path"] == "src/shapes/units.py" && r["content"] == units.as_str()));
    std::fs::remove_dir_all(&ws).unwrap();
    let ts = trace.to_string_lossy().into_owned();
    let o = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, rec.stdout);
}

#[test]
fn list_and_show_filter_operations() {
    let dir = tempfile::tempdir().unwrap();
    let ws = fixture("srcpkg").to_string_lossy().into_owned();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        concat!(
            "{\"cmd\":\"def\",\"selector\":\"tests/test_geometry.py@L10:Circle\"}\n",
            "{\"cmd\":\"locate\",\"selector\":\"src/shapes/units.py@L13:convert\"}\n",
            "{\"cmd\":\"def\",\"selector\":\"src/shapes/nope.py@L1:C1\"}\n",
            "{\"cmd\":\"locate\",\"selector\":\"tests/test_geometry.py@L12:diameter\"}\n",
        ),
    )
    .unwrap();
    let trace = dir.path().join("t.jsonl");
    let out = dir.path().join("out.jsonl");
    let (ts, ins, outs) = (
        trace.to_string_lossy().into_owned(),
        input.to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
    );
    let o = run(&[
        "batch",
        "--in",
        &ins,
        "--out",
        &outs,
        "--workspace",
        &ws,
        "--trace-file",
        &ts,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let printed: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();

    let list = run(&["trace", "list", "--trace-file", &ts]);
    assert_eq!(stdout(&list).lines().count(), 4);
    let errors = run(&[
        "trace",
        "list",
        "--trace-file",
        &ts,
        "--status",
        "error",
        "--json",
    ]);
    let rows: Vec<Value> = stdout(&errors)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["n"], 3);
    assert_eq!(rows[0]["exitCode"], 3);
    assert_eq!(rows[0]["selector"], "src/shapes/nope.py@L1:C1");
    let locates = run(&[
        "trace",
        "list",
        "--trace-file",
        &ts,
        "--operation",
        "locate",
        "--selector",
        "test_geometry",
    ]);
    assert_eq!(stdout(&locates).lines().count(), 1);
    assert!(stdout(&locates).contains("tests/test_geometry.py@L12:diameter"));
    let by_exit = run(&[
        "trace",
        "list",
        "--trace-file",
        &ts,
        "--exit-code",
        "0",
        "--json",
    ]);
    assert_eq!(stdout(&by_exit).lines().count(), 3);

    // show N --json is the bundle the batch printed for line N.
    let show = run(&["trace", "show", "2", "--trace-file", &ts, "--json"]);
    assert_eq!(stdout(&show).trim_end(), printed[1]);
    // The human form names the file and line of the fixture.
    let line = line_with(&fixture("srcpkg"), "src/shapes/units.py", "def convert(");
    let show = run(&["trace", "show", "2", "--trace-file", &ts]);
    assert!(
        stdout(&show).contains(&format!("src/shapes/units.py:{line}:")),
        "{}",
        stdout(&show)
    );
    // replay --op N prints (and verifies) operation N alone.
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let one = offline(
        &home,
        &[
            "trace",
            "replay",
            "--trace-file",
            &ts,
            "--verify",
            "--op",
            "2",
        ],
    );
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert_eq!(stdout(&one).trim_end(), printed[1]);
    let three = offline(
        &home,
        &["trace", "replay", "--trace-file", &ts, "--op", "3"],
    );
    assert_eq!(three.status.code(), Some(3));

    let missing = run(&["trace", "show", "9", "--trace-file", &ts]);
    assert_eq!(missing.status.code(), Some(3));
    assert_eq!(
        stderr(&missing),
        "lanser: E/NOT_FOUND: the trace has no operation 9 (it has 4)\n"
    );
}

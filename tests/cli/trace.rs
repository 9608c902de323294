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

/// `trace` replays `--verify` where no server can start and the recorded workspace may be
/// gone: every recorded bundle comes back byte for byte.
pub fn replays_offline(trace: &Path) {
    let home = tempfile::tempdir().unwrap();
    let ts = trace.to_string_lossy().into_owned();
    let o = offline(
        home.path(),
        &["trace", "replay", "--trace-file", &ts, "--verify"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
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

/// A trace carries every file type lanser reads, not only the sources: TOML outlines (lanser's
/// own parse, no request to the server) replay byte for byte from the recorded files, with
/// the workspace gone. A trace records one server: the one TOML files go to, tombi.
#[test]
fn recorded_outline_files_of_other_types_replay_where_the_workspace_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture("outlines"), &ws);
    let trace = dir.path().join("t.jsonl");
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        concat!(
            "{\"cmd\":\"locate\",\"selector\":\"sym://config/settings.toml#server.tls.cert-file\"}\n",
            "{\"cmd\":\"locate\",\"selector\":\"sym://config/settings.toml#server.port\"}\n",
        ),
    )
    .unwrap();
    let rec = lanser()
        .args(["--server", "tombi", "batch", "--trace-sources"])
        .arg("--in")
        .arg(&input)
        .arg("--out")
        .arg(dir.path().join("out.jsonl"))
        .arg("--workspace")
        .arg(&ws)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    let toml = read(&ws, "config/settings.toml");
    let recs = records(&trace);
    assert!(recs.iter().any(|r| r["type"] == "file"
        && r["path"] == "config/settings.toml"
        && r["content"] == toml.as_str()));
    std::fs::remove_dir_all(&ws).unwrap();
    replays_offline(&trace);
}

/// A rename preview in a clean git worktree has safety 1 (the dirty-tree guard passes); its
/// trace replays over a scratch copy, which is no git worktree, from the recorded verdict.
#[test]
fn a_previews_dirty_tree_verdict_is_recorded_and_replayed() {
    let (tmp, ws) = crate::mutations::repo_copy("srcpkg");
    let trace = tmp.path().join("t.jsonl");
    let rec = lanser()
        .args([
            "rename",
            "src/shapes/units.py@L13:convert",
            "to_unit",
            "--json",
        ])
        .args(["--trace-sources", "--no-daemon"])
        .arg("--workspace")
        .arg(&ws)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    assert_eq!(bundle(&rec)["processReward"]["inputs"]["safety"], 1);
    assert!(records(&trace)
        .iter()
        .any(|r| r["type"] == "input" && r["arg"] == "git:clean"));
    std::fs::remove_dir_all(&ws).unwrap();
    replays_offline(&trace);
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

/// Write `lines` as a trace next to `dir` and replay it offline with --verify.
fn replay_lines(home: &Path, dir: &Path, name: &str, lines: &[String]) -> Output {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let p = path.to_string_lossy().into_owned();
    offline(home, &["trace", "replay", "--trace-file", &p, "--verify"])
}

/// A server that crashes mid-run: the trace ends its stream with an `eof` record holding the
/// stderr line the crash message quotes, and the replay reproduces the E/LS_CRASH bundle byte
/// for byte; without that record, or with it earlier, the replay is a named mismatch.
#[test]
fn a_server_crash_replays_from_its_eof_record() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let ws = fixture("srcpkg").to_string_lossy().into_owned();
    let cmd = format!(
        "python3 {} crash",
        repo().join("tests/fake_lsp.py").display()
    );
    let trace = dir.path().join("crash.jsonl");
    let rec = lanser()
        .args(["def", "src/shapes/units.py@L13:convert", "--json"])
        .args(["--workspace", &ws, "--server-cmd", &cmd, "--timeout", "5"])
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(rec.status.code(), Some(65), "{}", stderr(&rec));
    let recs = records(&trace);
    let eof: Vec<usize> = (0..recs.len())
        .filter(|i| recs[*i]["type"] == "eof")
        .collect();
    assert_eq!(eof.len(), 1, "one eof record");
    let at = eof[0];
    assert_eq!(
        recs[at]["stderr"],
        serde_json::json!(["fake-lsp: simulated crash"])
    );
    assert!(recs[at].get("error").is_none(), "a plain close");
    let last_recv = recs
        .iter()
        .rposition(|r| r["type"] == "rpc" && r["dir"] == "recv")
        .unwrap();
    assert!(at > last_recv, "the stream ends after the last frame");
    assert!(recs[at]["seq"].as_u64() > recs[last_recv]["seq"].as_u64());

    let ts = trace.to_string_lossy().into_owned();
    let rep = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert_eq!(rep.status.code(), Some(65), "{}", stderr(&rep));
    assert_eq!(rep.stdout, rec.stdout, "the same bytes");
    assert!(
        stdout(&rep).contains("exited during textDocument/definition: fake-lsp: simulated crash")
    );

    let lines: Vec<String> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    // Removed: the replayed server never answers, so the request times out instead.
    let mut removed = lines.clone();
    removed.remove(at);
    let o = replay_lines(&home, dir.path(), "removed.jsonl", &removed);
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "op 1 (def): error.code is \"E/LS_CRASH\" in the trace, \"E/LS_TIMEOUT\" in the replay"
        ),
        "{}",
        stderr(&o)
    );
    // Moved before the initialize answer: the session ends during the handshake.
    let first_recv = (0..lines.len())
        .find(|i| lines[*i].contains("\"dir\":\"recv\""))
        .unwrap();
    let mut moved = removed.clone();
    moved.insert(first_recv, lines[at].clone());
    let o = replay_lines(&home, dir.path(), "moved.jsonl", &moved);
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));
    assert!(stderr(&o).contains("op 1 (def): "), "{}", stderr(&o));
    // A different stderr tail is a different crash message.
    let mut other = lines.clone();
    other[at] = other[at].replace("simulated crash", "another crash");
    let o = replay_lines(&home, dir.path(), "other.jsonl", &other);
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("op 1 (def): error.message is"),
        "{}",
        stderr(&o)
    );
}

/// A patch to srcpkg that passes `str(total)` where `convert` takes a number: one new
/// diagnostic.
fn str_total_patch(ws: &Path) -> String {
    let rel = "src/shapes/intl.py";
    let line = line_with(ws, rel, "result = convert(total,");
    let old = read(ws, rel)
        .split('\n')
        .nth(line as usize - 1)
        .unwrap()
        .to_string();
    let new = old.replace("convert(total,", "convert(str(total),");
    format!("--- a/{rel}\n+++ b/{rel}\n@@ -{line},1 +{line},1 @@\n-{old}\n+{new}\n")
}

/// `check --patch P` and `--prev-bundle B` record what they read: a replay after P and B
/// changed or are gone gives the recorded bytes; a trace without those records (as written
/// before them) reads the disk again, and so differs.
#[test]
fn files_named_on_the_command_line_replay_from_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let ws = fixture("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let patch = str_total_patch(&ws);
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, &patch).unwrap();

    // --patch given relative to the recording's current directory.
    let trace = dir.path().join("check.jsonl");
    let rec = lanser()
        .current_dir(dir.path())
        .args(["check", "--patch", "p.diff", "--json", "--workspace", &w])
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    let inputs: Vec<Value> = records(&trace)
        .into_iter()
        .filter(|r| r["type"] == "input")
        .collect();
    assert_eq!(inputs.len(), 1, "{inputs:?}");
    assert_eq!(inputs[0]["arg"], "--patch");
    assert_eq!(inputs[0]["path"], "p.diff");
    assert_eq!(inputs[0]["content"], patch.as_str());
    assert!(inputs[0]["digest"].as_str().unwrap().starts_with("sha256:"));

    let ts = trace.to_string_lossy().into_owned();
    let replay = || offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    // Changed (to a patch that no longer applies), then gone.
    std::fs::write(&pf, "--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n-a\n+b\n").unwrap();
    let o = replay();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, rec.stdout);
    std::fs::remove_file(&pf).unwrap();
    let o = replay();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, rec.stdout);
    // Without the input record the replay reads the (now missing) file, and differs.
    let old_style: Vec<String> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"type\":\"input\""))
        .map(str::to_string)
        .collect();
    let o = replay_lines(&home, dir.path(), "old-style.jsonl", &old_style);
    assert_eq!(o.status.code(), Some(76), "{}", stderr(&o));

    // --prev-bundle: D_{t-1} comes from the recorded bundle, not the file now.
    let diag = lanser()
        .args(["diag", "src/shapes/broken.py", "--json", "--workspace", &w])
        .output()
        .unwrap();
    let prev = dir.path().join("prev.json");
    std::fs::write(&prev, &diag.stdout).unwrap();
    let hover_line = line_with(&ws, "src/shapes/broken.py", "convert(\"x\"");
    let sel = format!("src/shapes/broken.py@L{hover_line}:convert");
    let trace = dir.path().join("prev.jsonl");
    let rec = lanser()
        .args(["hover", &sel, "--json", "--workspace", &w, "--prev-bundle"])
        .arg(&prev)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    assert_eq!(bundle(&rec)["processReward"]["inputs"]["d_prev"], 3);
    let recs = records(&trace);
    assert!(recs
        .iter()
        .any(|r| r["type"] == "input" && r["arg"] == "--prev-bundle"));
    let mut b: Value = serde_json::from_slice(&diag.stdout).unwrap();
    b["processReward"]["inputs"]["d_now"] = Value::from(99);
    std::fs::write(&prev, b.to_string()).unwrap();
    let ts = trace.to_string_lossy().into_owned();
    let o = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, rec.stdout);
    std::fs::remove_file(&prev).unwrap();
    let o = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, rec.stdout);
}

/// A batch replays from its `op` records: neither the `--in` file nor a patch a `check` line
/// names is read again.
#[test]
fn a_batch_replays_without_its_input_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let ws = fixture("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let pf = dir.path().join("p.diff");
    std::fs::write(&pf, str_total_patch(&ws)).unwrap();
    let input = dir.path().join("in.jsonl");
    let check = serde_json::json!({"cmd": "check", "args": {"patch": pf.to_string_lossy()}});
    std::fs::write(
        &input,
        format!(
            "{check}\n{{\"cmd\":\"def\",\"selector\":\"tests/test_geometry.py@L10:Circle\"}}\n"
        ),
    )
    .unwrap();
    let trace = dir.path().join("batch.jsonl");
    let rec = lanser()
        .args(["batch", "--out", "-", "--workspace", &w, "--in"])
        .arg(&input)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    std::fs::remove_file(&input).unwrap();
    std::fs::remove_file(&pf).unwrap();
    let ts = trace.to_string_lossy().into_owned();
    let o = offline(&home, &["trace", "replay", "--trace-file", &ts, "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, rec.stdout);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);
}

/// A workspace whose lanser.toml names the server to run, trusted when traced: the replay
/// over the trace's sources (a scratch copy no one listed as trusted, with no
/// LANSER_TRUST_WORKSPACE) takes the recorded verdict instead of refusing the server, and
/// verifies byte for byte. The previous binary exited 2 here (the server refused as
/// untrusted).
#[test]
fn a_trusted_workspaces_own_server_replays_without_being_trusted_again() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = crate::servers::own_pyright_workspace(tmp.path());
    let trace = tmp.path().join("t.jsonl");
    let line = line_with(&ws, "main.py", "user = register(");
    let rec = lanser()
        .args(["def", &format!("main.py@L{line}:register"), "--json"])
        .args(["--trace-sources", "--workspace"])
        .arg(&ws)
        .arg("--trace-file")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", stderr(&rec));
    assert_eq!(bundle(&rec)["environment"]["server"]["name"], "mine");
    assert!(records(&trace)
        .iter()
        .any(|r| r["type"] == "input" && r["arg"] == "trust:workspace" && r["content"] == "1"));
    std::fs::remove_dir_all(&ws).unwrap();
    let home = tempfile::tempdir().unwrap();
    let o = lanser()
        .env_remove("LANSER_TRUST_WORKSPACE")
        .args(["trace", "replay", "--verify", "--trace-file"])
        .arg(&trace)
        .args(["--server-cmd", "/nonexistent"])
        .env("PATH", "")
        .env("LANSER_HOME", home.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

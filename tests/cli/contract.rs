//! The command-line contract, one fresh process per call: byte-identical bundles, exit codes
//! and one-line messages for bad input, server faults, provisioning without node, and the
//! README's own command.

use crate::support::*;
use sha2::{Digest, Sha256};

fn srcpkg() -> String {
    fixture("srcpkg").to_string_lossy().into_owned()
}

#[test]
fn def_json_is_byte_identical_across_processes_and_ids_recompute() {
    let ws = srcpkg();
    let args = [
        "def",
        "tests/test_geometry.py@L10:Circle",
        "--workspace",
        &ws,
        "--json",
    ];
    let a = run(&args);
    let b = run(&args);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
    assert!(a.stdout.ends_with(b"\n") && a.stdout.iter().filter(|&&c| c == b'\n').count() == 1);

    // bundleId is sha256 over the JCS bytes of the bundle without bundleId (and meta.timing).
    let mut v = bundle(&a);
    let id = v["bundleId"].as_str().unwrap().to_string();
    v.as_object_mut().unwrap().remove("bundleId");
    let bytes = serde_jcs::to_vec(&v).unwrap();
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(id, format!("sha256:{hex}"));
    // The printed bytes are already canonical.
    let mut full = bundle(&a);
    full["bundleId"] = id.into();
    assert_eq!(serde_jcs::to_string(&full).unwrap() + "\n", stdout(&a));

    // meta.docVersions: the sha256 of every workspace file the bundle names, read here.
    let v = bundle(&a);
    let versions = v["meta"]["docVersions"].as_object().unwrap();
    let mut named: Vec<&str> = v["facts"]["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .chain([v["resolution"]["resolved"]["path"].as_str().unwrap()])
        .collect();
    named.sort();
    named.dedup();
    assert_eq!(
        versions.keys().map(String::as_str).collect::<Vec<_>>(),
        named
    );
    for (path, dv) in versions {
        let hex: String = Sha256::digest(std::fs::read(fixture("srcpkg").join(path)).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(dv, &format!("sha256:{hex}"), "{path}");
    }
    assert_eq!(
        v["resolution"]["resolved"]["docVersion"],
        versions["tests/test_geometry.py"]
    );

    // --timing adds volatile data outside the hash domain.
    let t = run(&[&args[..], &["--timing"]].concat());
    let t = bundle(&t);
    assert!(t["meta"]["timing"]["totalMs"].as_f64().unwrap() > 0.0);
    assert_eq!(t["bundleId"], bundle(&a)["bundleId"]);
}

#[test]
fn a_copied_workspace_gives_the_same_bundle() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let outs: Vec<_> = dirs
        .iter()
        .map(|d| {
            let ws = d.path().join("copy");
            copy_tree(&fixture("srcpkg"), &ws);
            let ws = ws.to_string_lossy().into_owned();
            let o = run(&[
                "refs",
                "src/shapes/units.py@L13:convert",
                "--workspace",
                &ws,
                "--json",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            // An error bundle too: its message names no absolute root.
            let err = run(&["def", "src/nope.py@L1:C1", "--workspace", &ws, "--json"]);
            assert_eq!(err.status.code(), Some(3), "{}", stderr(&err));
            (o.stdout, err.stdout)
        })
        .collect();
    assert_eq!(
        outs[0].1, outs[1].1,
        "the error bundle differs between copies"
    );
    let outs: Vec<_> = outs.into_iter().map(|(ok, _)| ok).collect();
    assert_eq!(outs[0], outs[1]);
    let b: serde_json::Value = serde_json::from_slice(&outs[0]).unwrap();
    assert!(b["facts"]["count"].as_u64().unwrap() >= 7);
    assert!(!String::from_utf8_lossy(&outs[0]).contains(&*dirs[0].path().to_string_lossy()));
}

#[test]
fn bad_input_gets_its_exit_code_and_a_one_line_message() {
    let ws = srcpkg();
    let outside = tempfile::NamedTempFile::new().unwrap();
    let outside = outside.path().to_string_lossy().into_owned();
    let cases: Vec<(Vec<String>, i32, String)> = vec![
        (
            vec!["def".into(), "src/nope.py@L1:C1".into()],
            3,
            "src/nope.py does not exist".into(),
        ),
        (
            vec!["def".into(), "src/shapes/units.py@L999:C1".into()],
            3,
            "line 999 is past the end of src/shapes/units.py".into(),
        ),
        (
            vec!["def".into(), "src/shapes/units.py@L1:C500".into()],
            3,
            "column 500 is past the end of src/shapes/units.py:1".into(),
        ),
        (
            vec!["def".into(), "src/shapes/units.py@L13:nothing_here".into()],
            3,
            "no identifier 'nothing_here' on src/shapes/units.py:13".into(),
        ),
        (
            vec!["def".into(), "src/shapes/units.py@L13".into()],
            2,
            "expected ':' after the line number".into(),
        ),
        (
            vec!["def".into(), "src/shapes/units.py:13:5".into()],
            2,
            "expected '@' after the path".into(),
        ),
        (
            vec!["def".into(), "../flat/models.py@L1:C1".into()],
            3,
            "is outside the workspace".into(),
        ),
        (
            vec!["def".into(), format!("{outside}@L1:C1")],
            3,
            "is outside the workspace".into(),
        ),
        (
            vec![
                "def".into(),
                "a.py@L1:C1".into(),
                "--index-io".into(),
                "utf-7".into(),
            ],
            2,
            "utf-7".into(),
        ),
        (
            vec!["diag".into(), "src/*.rs".into()],
            3,
            "glob src/*.rs matches no source file".into(),
        ),
    ];
    for (args, code, needle) in cases {
        let mut full: Vec<&str> = args.iter().map(String::as_str).collect();
        full.extend(["--workspace", &ws]);
        let o = run(&full);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(&needle), "{args:?}: {err}");
        if code != 2 || !args.contains(&"--index-io".to_string()) {
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        }
    }
    // With --json an error still prints a bundle.
    let o = run(&[
        "def",
        "src/shapes/units.py@L999:C1",
        "--workspace",
        &ws,
        "--json",
    ]);
    let b = bundle(&o);
    assert_eq!(b["status"], "error");
    assert_eq!(b["error"]["code"], "E/NOT_FOUND");
    assert_eq!(b["meta"]["exit_code"], 3);
}

#[test]
fn server_faults_map_to_exit_codes_without_hanging() {
    let ws = srcpkg();
    let fake = repo().join("tests/fake_lsp.py");
    let cases = [
        ("crash", 65, "simulated crash"),
        (
            "hang",
            64,
            "did not answer textDocument/definition within 2.0 s",
        ),
        ("cancel", 73, "E/REQUEST_CANCELLED"),
        ("modified", 74, "E/CONTENT_MODIFIED"),
        ("garbage", 65, "malformed frame"),
        // A well-framed body that is not a message fails its request at once (no timeout).
        (
            "badjson",
            65,
            "sent a malformed frame during textDocument/definition: frame body is not JSON: EOF while parsing a value",
        ),
        (
            "notlsp",
            65,
            "sent a malformed frame during textDocument/definition: frame is not an LSP message: a response with neither result nor error",
        ),
    ];
    for (mode, code, needle) in cases {
        let cmd = format!("python3 {} {mode}", fake.display());
        // Only the hang waits out its timeout; the others get time to start on a loaded
        // machine (a 2 s bound once timed out the fake's initialize under load 10).
        let timeout = if mode == "hang" { "2" } else { "30" };
        let o = run(&[
            "def",
            "src/shapes/units.py@L13:convert",
            "--workspace",
            &ws,
            "--server-cmd",
            &cmd,
            "--timeout",
            timeout,
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{mode}: {err}");
        assert!(err.contains(needle), "{mode}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{mode}: {err}");
    }
    // Stray stdout between frames is tolerated; the fake names itself through serverInfo.
    let cmd = format!("python3 {} noisy", fake.display());
    let o = run(&[
        "def",
        "src/shapes/units.py@L13:convert",
        "--workspace",
        &ws,
        "--server-cmd",
        &cmd,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(bundle(&o)["environment"]["server"]["name"], "fake-lsp");
    let o = run(&[
        "def",
        "src/shapes/units.py@L13:convert",
        "--workspace",
        &ws,
        "--server-cmd",
        "/nonexistent/lsp",
    ]);
    assert_eq!(o.status.code(), Some(65));
    assert!(stderr(&o).contains("cannot start language server /nonexistent/lsp"));
}

#[test]
fn without_node_the_install_fails_with_65_and_says_what_to_install() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    for args in [
        vec!["setup"],
        vec!["def", "src/shapes/units.py@L13:convert"],
    ] {
        let o = lanser()
            .args(&args)
            .args(["--workspace", &srcpkg()])
            .env("PATH", empty.path())
            .env("LANSER_HOME", home.path())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(65), "{args:?}: {err}");
        assert!(err.contains("install Node.js"), "{err}");
    }
    assert_eq!(
        std::fs::read_dir(home.path()).unwrap().count(),
        0,
        "nothing half-installed"
    );
}

#[test]
fn long_lists_are_paged_with_a_cursor() {
    let ws = srcpkg();
    let base = [
        "refs",
        "src/shapes/units.py@L13:convert",
        "--workspace",
        &ws,
        "--json",
    ];
    let full = bundle(&run(&base));
    let all = full["facts"]["references"].as_array().unwrap().clone();
    assert!(!full["meta"]["truncated"].as_bool().unwrap());
    let mut paged = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let o = run(&[&base[..], &["--page-size", "3", "--cursor", &cursor]].concat());
        let b = bundle(&o);
        paged.extend(b["facts"]["references"].as_array().unwrap().iter().cloned());
        assert_eq!(b["facts"]["count"], all.len(), "count stays the total");
        match b["meta"]["cursor"].as_str() {
            Some(next) => {
                assert!(b["meta"]["truncated"].as_bool().unwrap());
                cursor = next.to_string();
            }
            None => break,
        }
    }
    assert_eq!(paged, all);
}

/// The README's first command, run as written (with the built binary for `cargo run --release --`).
#[test]
fn readme_demo_command_works() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- "))
        .expect("README starts with the demo command");
    let args: Vec<&str> = line["cargo run --release -- ".len()..]
        .split_whitespace()
        .collect();
    let o = lanser().args(&args).current_dir(repo()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ws = fixture("demo");
    let want_line = line_with(&ws, "inventory/store.py", "def add_item(");
    assert!(
        stdout(&o).starts_with(&format!("inventory/store.py:{want_line}:9: def add_item(")),
        "{}",
        stdout(&o)
    );
}

/// Pyright answers the type definition of an imported module only after the project is loaded
/// and the file checked, and answers nothing (without error) before: a fresh process asking
/// first thing must still get the stub, as a warm daemon or a later batch line would.
#[test]
fn type_def_of_a_module_is_answered_by_a_fresh_process() {
    let ws = srcpkg();
    let g = "src/shapes/geometry.py";
    let line = line_with(&fixture("srcpkg"), g, "import asyncio");
    let sel = format!("{g}@L{line}:asyncio");
    let o = run(&["type-def", &sel, "--workspace", &ws, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let paths: Vec<&str> = b["facts"]["typeDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["typeshed://stdlib/asyncio/__init__.pyi"], "{b}");
    assert_eq!(b["meta"]["complete"], true);
}

/// A file the server refuses to check (an error answer to its diagnostics pull, as Pyright's
/// parser gives on a stack overflow) is named in `facts.failed`; every other file is reported,
/// the bundle says it is incomplete, and nothing else changes.
#[test]
fn diag_reports_every_other_file_when_the_server_refuses_one() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture("srcpkg"), &ws);
    std::fs::write(ws.join("src/shapes/deep.py"), "x = 1\n").unwrap();
    let fake = format!(
        "python3 {} diagfail",
        repo().join("tests/fake_lsp.py").display()
    );
    let ws_s = ws.to_string_lossy().to_string();
    let o = run(&[
        "diag",
        "--workspace",
        &ws_s,
        "--server-cmd",
        &fake,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(b["status"], "ok");
    assert_eq!(b["meta"]["complete"], false);
    let failed = b["facts"]["failed"].as_array().expect("failed files");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["path"], "src/shapes/deep.py");
    let msg = failed[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("Maximum call stack size exceeded") && !msg.contains('\n'),
        "{msg}"
    );
    let files = b["facts"]["files"].as_array().unwrap();
    assert!(files.len() > 5 && files.iter().any(|f| f == "src/shapes/units.py"));
    // The human output names it too.
    let o = run(&["diag", "--workspace", &ws_s, "--server-cmd", &fake]);
    assert!(
        stdout(&o).contains("src/shapes/deep.py: not checked: "),
        "{}",
        stdout(&o)
    );
    // Without a refused file there is no `failed` key and the answer is complete.
    std::fs::remove_file(ws.join("src/shapes/deep.py")).unwrap();
    let b = bundle(&run(&[
        "diag",
        "--workspace",
        &ws_s,
        "--server-cmd",
        &fake,
        "--json",
    ]));
    assert!(b["facts"].get("failed").is_none(), "{}", b["facts"]);
    assert_eq!(b["meta"]["complete"], true);
}

/// Pyright names files by absolute path in some messages (here: its parser overflowing on
/// 50,000 nested parentheses): the bundle names them relative to the root, and lanser's cache
/// as `$LANSER_HOME`, so two copies of a workspace give the same bytes.
#[test]
fn diagnostic_messages_name_no_machine_path() {
    let mut ids = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        copy_tree(&fixture("srcpkg"), &ws);
        let deep = format!("x = {}1{}\n", "(".repeat(50_000), ")".repeat(50_000));
        std::fs::write(ws.join("src/shapes/deep.py"), deep).unwrap();
        let ws_s = ws.to_string_lossy().to_string();
        let b = bundle(&run(&[
            "diag",
            "src/shapes/deep.py",
            "--workspace",
            &ws_s,
            "--json",
        ]));
        let msgs: Vec<&str> = b["facts"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["message"].as_str())
            .collect();
        assert!(
            msgs.iter().any(|m| m.contains("\"src/shapes/deep.py\"")),
            "{msgs:?}"
        );
        assert!(msgs.iter().all(|m| !m.contains(&ws_s)), "{msgs:?}");
        ids.push(b["bundleId"].clone());
        dirs.push(dir);
    }
    assert_eq!(ids[0], ids[1]);
}

/// An error is said once (issue 28): the message names what was wrong, the cause (here the
/// operating system's own error) follows it once — folded into the one line by default, on
/// its own `caused by:` line under `--verbose` — and the bundle keeps the two apart:
/// `error.message` without the cause, `error.causes` with it.
#[test]
fn an_errors_cause_is_said_once_with_or_without_verbose() {
    let ws = srcpkg();
    let gone = tempfile::tempdir().unwrap();
    let missing = gone.path().join("gone.diff");
    let missing = missing.to_string_lossy().into_owned();
    let os = std::fs::read(&missing).unwrap_err().to_string();
    assert!(os.contains("os error 2"), "{os}");
    let what = format!("cannot read the patch {missing}");
    let args = ["check", "--patch", &missing, "--workspace", &ws];
    let plain = run(&args);
    assert_eq!(plain.status.code(), Some(3), "{}", stderr(&plain));
    let verbose = run(&[&args[..], &["--verbose"]].concat());
    assert_eq!(verbose.status.code(), Some(3));
    let json = run(&[&args[..], &["--json"]].concat());
    assert_eq!(json.status.code(), Some(3));
    let b = bundle(&json);
    for (how, text) in [("plain", stderr(&plain)), ("--verbose", stderr(&verbose))] {
        assert_eq!(text.matches(&os).count(), 1, "{how}: {text}");
    }
    assert!(
        !b["error"]["message"].as_str().unwrap().contains(&os),
        "{b}"
    );
    assert_eq!(b["error"]["causes"], serde_json::json!([os]));
    assert_eq!(b["error"]["message"], what.as_str());
    assert_eq!(
        stderr(&plain),
        format!("lanser: E/NOT_FOUND: {what}: {os}\n")
    );
    assert_eq!(
        stderr(&verbose),
        format!("lanser: E/NOT_FOUND: {what}\n  caused by: {os}\n")
    );
    assert_eq!(stderr(&json), stderr(&plain), "--json prints the same line");

    // MCP answers with the same bundle: its text is the folded line, its structured error
    // keeps message and causes apart.
    let missing_bundle = gone.path().join("gone.json");
    let what = format!("cannot read bundle {}", missing_bundle.display());
    let mut mcp = lanser();
    mcp.args(["mcp", "--workspace", &ws]);
    let since = serde_json::json!({"since_bundle": missing_bundle});
    let answer = &mcp_session(mcp, &[("changes", since)])[0];
    assert_eq!(answer["isError"], true, "{answer}");
    assert_eq!(
        answer["content"][0]["text"],
        format!("E/NOT_FOUND: {what}: {os}").as_str()
    );
    let error = &answer["structuredContent"]["error"];
    assert_eq!(error["message"], what.as_str(), "{answer}");
    assert_eq!(error["causes"], serde_json::json!([os]), "{answer}");

    // A lanser.toml that cannot be read fails before any bundle: the same line, the cause kept
    // through the config module's own error (once, not dropped).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("lanser.toml")).unwrap();
    let toml = dir.path().join("lanser.toml");
    let os = std::fs::read(&toml).unwrap_err().to_string();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let what = format!("cannot read {}", root.join("lanser.toml").display());
    let ws = dir.path().to_string_lossy().into_owned();
    let args = ["diag", "--workspace", &ws];
    let plain = run(&args);
    assert_eq!(plain.status.code(), Some(2), "{}", stderr(&plain));
    let verbose = run(&[&args[..], &["--verbose"]].concat());
    assert_eq!(verbose.status.code(), Some(2));
    assert_eq!(
        stderr(&verbose).matches(&os).count(),
        1,
        "{}",
        stderr(&verbose)
    );
    assert_eq!(stderr(&plain), format!("lanser: E/USAGE: {what}: {os}\n"));
    assert_eq!(
        stderr(&verbose),
        format!("lanser: E/USAGE: {what}\n  caused by: {os}\n")
    );
}

/// A launcher script first on PATH (as a pyenv shim is) is run once, by lanser's probe, and
/// the server is pointed at the interpreter it runs: Pyright, which runs its interpreter for
/// its search paths, never runs the launcher (through a shim, that was seconds of every cold
/// answer). The bundle records the real interpreter, as before, and the answer is the same.
#[cfg(unix)]
#[test]
fn a_launcher_on_path_is_run_once_and_the_server_gets_the_interpreter_it_runs() {
    let real = python_exe();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs.log");
    let shim = dir.path().join("python3");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = lanser()
        .args(["def", "cli.py@L17:add_item", "--json", "--workspace"])
        .arg(fixture("demo"))
        .env("PATH", &path)
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let runs = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "the launcher ran {runs:?}");
    assert_eq!(
        b["environment"]["python"]["exe"].as_str(),
        Some(real.to_str().unwrap())
    );
    let (path, range) = locs(&b["facts"]["definitions"]).remove(0);
    assert_eq!(path, "inventory/store.py");
    let store = std::fs::read_to_string(fixture("demo").join(&path)).unwrap();
    let line = store
        .lines()
        .position(|l| l.contains("def add_item"))
        .unwrap() as u32;
    assert_eq!(range[0], line);
}

/// The interpreter a `python3` on PATH runs (`sys.executable`), canonical.
#[cfg(unix)]
fn python_exe() -> std::path::PathBuf {
    let o = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    std::path::PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())
}

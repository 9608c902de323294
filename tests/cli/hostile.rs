//! The hostile-input catalogue (RELIABILITY.md): each entry gets its documented exit code, a
//! one-line message, no panic, and every file byte-identical.

use crate::mutations::snapshot;
use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_tree(&fixture(name), &ws);
    (dir, ws)
}

/// Run `c`, killed after `limit` (a hang fails the test instead of stalling the suite).
fn bounded(mut c: Command, limit: Duration) -> Output {
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("lanser runs");
    let pid = child.id();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("output"));
    while !waiter.is_finished() {
        if started.elapsed() > limit {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("lanser {c:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    waiter.join().unwrap()
}

/// `code` and exactly one line on stderr, no panic.
fn refused(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn ws_arg(ws: &Path) -> String {
    ws.to_string_lossy().into_owned()
}

#[cfg(unix)]
#[test]
fn paths_outside_the_root_are_refused() {
    let (dir, ws) = copy("srcpkg");
    let w = ws_arg(&ws);
    std::fs::write(dir.path().join("outside.py"), "secret = 1\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.py"), ws.join("src/shapes/link.py"))
        .unwrap();
    let before = snapshot(&ws);
    let abs = format!("{}@L1:C1", dir.path().join("outside.py").display());
    for sel in [
        "../outside.py@L1:C1",
        "src/../../outside.py@L1:C1",
        abs.as_str(),
        "src/shapes/link.py@L1:C1",
    ] {
        let o = lanser()
            .args(["def", sel, "--workspace", &w])
            .output()
            .unwrap();
        refused(&o, 3, "outside the workspace");
    }
    assert_eq!(snapshot(&ws), before);
}

// Non-UTF-8 names and links to `/`.
#[cfg(unix)]
#[test]
fn a_directory_symlink_loop_and_odd_file_names_do_not_stop_the_walk() {
    let (_d, ws) = copy("srcpkg");
    let w = ws_arg(&ws);
    std::os::unix::fs::symlink(".", ws.join("src/shapes/loop")).unwrap();
    std::os::unix::fs::symlink("/", ws.join("src/root")).unwrap();
    use std::os::unix::ffi::OsStrExt;
    let odd = ws
        .join("src/shapes")
        .join(std::ffi::OsStr::from_bytes(b"\xff\xfe.py"));
    std::fs::write(&odd, "x = 1\n").unwrap();
    let mut c = lanser();
    c.args(["diag", "--workspace", &w, "--json"]);
    let o = bounded(c, Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = bundle(&o);
    let files: Vec<&str> = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert!(files.contains(&"src/shapes/units.py"), "{files:?}");
    assert!(
        files
            .iter()
            .all(|f| !f.contains("loop/") && !f.starts_with("src/root")),
        "{files:?}"
    );
}

#[test]
fn non_utf8_and_binary_contents_are_refused_with_75() {
    let (_d, ws) = copy("srcpkg");
    let w = ws_arg(&ws);
    std::fs::write(
        ws.join("src/shapes/latin.py"),
        b"x = \"\xe9t\xe9\"\ny = x\n",
    )
    .unwrap();
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    std::fs::write(ws.join("src/shapes/blob.py"), &noise).unwrap();
    let before = snapshot(&ws);
    for args in [
        vec!["def", "src/shapes/latin.py@L2:x"],
        vec!["locate", "py://shapes.latin#y"],
        vec!["locate", "src/shapes/blob.py@L1:C1"],
        vec![
            "rename",
            "src/shapes/latin.py@L2:x",
            "z",
            "--apply",
            "--allow-dirty",
        ],
    ] {
        let o = lanser()
            .args(&args)
            .args(["--workspace", &w])
            .output()
            .unwrap();
        refused(&o, 75, "not UTF-8");
    }
    assert_eq!(snapshot(&ws), before);
}

#[test]
fn a_50_mb_file_and_a_million_character_line_are_answered() {
    let (_d, ws) = copy("srcpkg");
    let w = ws_arg(&ws);
    let rows = 50 * 1024 * 1024 / 12;
    let mut big = String::from("DATA = [\n");
    big.push_str(&"    123456,\n".repeat(rows));
    big.push_str("]\n\n\ndef last():\n    return DATA\n");
    std::fs::write(ws.join("src/shapes/big.py"), &big).unwrap();
    let wide = format!("x = [{}zz]\nzz = 1\n", "1, ".repeat(333_333));
    std::fs::write(ws.join("src/shapes/wide.py"), &wide).unwrap();
    let mut c = lanser();
    c.args([
        "locate",
        "py://shapes.big#last",
        "--workspace",
        &w,
        "--json",
    ]);
    let o = bounded(c, Duration::from_secs(600));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &bundle(&o)["resolution"]["resolved"]["range"];
    assert_eq!(r[0].as_u64(), Some(rows as u64 + 4), "{r}");
    let mut c = lanser();
    c.args([
        "locate",
        "src/shapes/wide.py@L1:zz",
        "--workspace",
        &w,
        "--json",
    ]);
    let o = bounded(c, Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &bundle(&o)["resolution"]["resolved"]["range"];
    assert_eq!(r[1].as_u64(), Some(5 + 3 * 333_333), "{r}");
}

#[test]
fn a_100_mb_batch_line_is_one_error_and_the_next_line_is_answered() {
    let (d, ws) = copy("srcpkg");
    let w = ws_arg(&ws);
    let input = d.path().join("in.jsonl");
    let huge = format!(
        "{{\"cmd\":\"locate\",\"selector\":\"{}\"}}\n",
        "x".repeat(100_000_000)
    );
    let next = "{\"cmd\":\"locate\",\"selector\":\"py://shapes.units#convert\"}\n";
    std::fs::write(&input, format!("{huge}{next}")).unwrap();
    let out = d.path().join("out.jsonl");
    let mut c = lanser();
    c.args([
        "batch",
        "--in",
        &input.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ])
    .args(["--workspace", &w]);
    let o = bounded(c, Duration::from_secs(300));
    refused(&o, 2, "line 1");
    let lines: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 2);
    let first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["error"]["code"], "E/BAD_SELECTOR_SYNTAX");
    assert!(
        lines[0].len() < 10_000,
        "the error bundle does not echo 100 MB"
    );
    let second: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(second["status"], "ok");
}

#[test]
fn a_server_command_with_shell_metacharacters_is_never_run_by_a_shell() {
    let (d, ws) = copy("srcpkg");
    let w = ws_arg(&ws);
    let marker = d.path().join("pwned");
    std::fs::write(
        ws.join("lanser.toml"),
        format!(
            "[servers.evil]\ncommand = \"true; touch {}\"\nprovision = \"none\"\nfile_types = [\"py\"]\n",
            marker.display()
        ),
    )
    .unwrap();
    let o = lanser()
        .args([
            "def",
            "src/shapes/units.py@L13:convert",
            "--server",
            "evil",
            "--workspace",
            &w,
        ])
        .output()
        .unwrap();
    refused(&o, 65, "cannot start language server true; touch");
    assert!(!marker.exists(), "a shell ran the server command");
}

// Modes (Windows keeps others out with the profile's ACL).
#[cfg(unix)]
#[test]
fn a_daemon_directory_others_can_use_is_refused_and_the_answer_comes_in_process() {
    let (_d, ws) = copy("demo");
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        crate::daemon::real_home().join("pyright"),
        home.path().join("pyright"),
    )
    .unwrap();
    let w = ws_arg(&ws);
    let run = || {
        lanser()
            .env_remove("LANSER_NO_DAEMON")
            .env("LANSER_HOME", home.path())
            .args(["def", "cli.py@L17:add_item", "--workspace", &w, "--json"])
            .output()
            .unwrap()
    };
    let stop = || {
        lanser()
            .env_remove("LANSER_NO_DAEMON")
            .env("LANSER_HOME", home.path())
            .args(["daemon", "stop", "--workspace", &w])
            .output()
            .unwrap()
    };
    let warm = run();
    assert!(warm.status.success(), "{}", stderr(&warm));
    stop();
    let dir = std::fs::read_dir(home.path().join("daemon"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("lets other users in"), "{}", stderr(&o));
    assert_eq!(bundle(&o)["bundleId"], bundle(&warm)["bundleId"]);
    assert!(
        !dir.join("sock").exists(),
        "no daemon started in a loose directory"
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    stop();
}

/// Deep nesting (50,000 parentheses) in a whole-workspace `diag` with real Pyright: exit 0,
/// every other file checked, the overflow named as that file's diagnostic, no file touched.
/// (A server that answers such a file's pull with an error instead is named in
/// `facts.failed`: `contract::diag_reports_every_other_file_when_the_server_refuses_one`.)
#[test]
fn deep_nesting_is_one_files_diagnostic_in_a_whole_workspace_diag() {
    let (_d, ws) = copy("srcpkg");
    let deep = format!("x = {}1{}\n", "(".repeat(50_000), ")".repeat(50_000));
    std::fs::write(ws.join("src/shapes/deep.py"), deep).unwrap();
    let before = snapshot(&ws);
    let w = ws.to_string_lossy().into_owned();
    let mut c = lanser();
    c.args(["diag", "--workspace", &w, "--json"]);
    let o = bounded(c, Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = bundle(&o);
    let files: Vec<&str> = b["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    for f in [
        "src/shapes/units.py",
        "src/shapes/geometry.py",
        "tests/test_geometry.py",
    ] {
        assert!(files.contains(&f), "{files:?}");
    }
    let on_deep: Vec<&str> = b["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "src/shapes/deep.py")
        .filter_map(|d| d["message"].as_str())
        .collect();
    let named = on_deep
        .iter()
        .any(|m| m.contains("Maximum call stack size exceeded"));
    let failed = b["facts"]["failed"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x["path"] == "src/shapes/deep.py"));
    assert!(named || failed, "{on_deep:?} {}", b["facts"]);
    // Other files' own diagnostics are still there (broken.py has errors).
    assert!(b["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["path"] == "src/shapes/broken.py"));
    assert_eq!(snapshot(&ws), before);
}

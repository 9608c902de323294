//! The warm daemon (issue 8), process-level: every test runs on a copy of a fixture with its
//! own LANSER_HOME (the managed Pyright linked in), talks to its daemon through the real CLI,
//! and stops it on the way out (also when the test fails), so no daemon outlives the suite.

use crate::support::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The LANSER_HOME the suite's Pyright is installed in (what `lanser setup` used).
pub(crate) fn real_home() -> PathBuf {
    if let Some(h) = std::env::var_os("LANSER_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(h);
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("lanser");
    }
    PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/lanser")
}

/// A fixture copy, its own LANSER_HOME, and the daemon serving it (stopped on drop).
pub(crate) struct Warm {
    home: tempfile::TempDir,
    _dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    /// `$VIRTUAL_ENV` for every command (the project's interpreter), when set.
    venv: Option<PathBuf>,
}

impl Warm {
    pub(crate) fn new(fixture_name: &str) -> Warm {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(real_home().join("pyright")).unwrap();
        crate::support::link(&real_home().join("pyright"), &home.path().join("pyright"));
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        copy_tree(&fixture(fixture_name), &ws);
        Warm {
            home,
            _dir: dir,
            ws: ws.canonicalize().unwrap(),
            venv: None,
        }
    }

    /// The same, with the pinned test environment (tests/requirements.txt: pytest, coverage.py)
    /// as the project's interpreter, so pytest's collection and per-test coverage run under the
    /// pinned versions.
    pub(crate) fn pinned_python(fixture_name: &str) -> Warm {
        let mut w = Warm::new(fixture_name);
        w.venv = Some(crate::support::pinned_venv().to_path_buf());
        w
    }

    /// Link another server's install (`real_home()/<name>`) into this LANSER_HOME.
    pub(crate) fn link_server(&self, name: &str) {
        std::fs::create_dir_all(real_home().join(name)).unwrap();
        crate::support::link(&real_home().join(name), &self.home.path().join(name));
    }

    /// `lanser ARGS --workspace WS`, daemon allowed.
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = lanser();
        if let Some(venv) = &self.venv {
            c.env("VIRTUAL_ENV", venv);
        }
        c.env_remove("LANSER_NO_DAEMON")
            .env("LANSER_HOME", self.home.path())
            .env("LANSER_DAEMON_IDLE", "300")
            .args(args)
            .arg("--workspace")
            .arg(&self.ws);
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("lanser runs")
    }

    pub(crate) fn ok(&self, args: &[&str]) -> Output {
        let o = self.run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    }

    pub(crate) fn status(&self) -> Value {
        bundle(&self.ok(&["daemon", "status", "--json"]))
    }

    /// The status once the daemon is idle — no request and no background refresh holding its
    /// engine — so that what only the engine knows (the session, the memo, the index watcher)
    /// is in it. A bound on liveness, not on speed.
    pub(crate) fn idle_status(&self) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        loop {
            let s = self.status();
            if s["busy"] == false && s["refresh"]["pending"] == 0 {
                return s;
            }
            assert!(std::time::Instant::now() < deadline, "never idle: {s}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// The daemon's state directory (where the socket is; on Unix).
    #[cfg(unix)]
    pub(crate) fn dir(&self) -> PathBuf {
        std::path::Path::new(self.status()["socket"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_path_buf()
    }
}

impl Drop for Warm {
    fn drop(&mut self) {
        let _ = self.run(&["daemon", "stop"]);
    }
}

pub(crate) fn kill9(pid: u64) {
    let s = if cfg!(windows) {
        Command::new("taskkill")
            .args(["/F", "/PID", &pid.to_string()])
            .status()
    } else {
        Command::new("kill").args(["-9", &pid.to_string()]).status()
    }
    .unwrap();
    assert!(s.success());
}

fn def_lines(o: &Output) -> Vec<(String, u32)> {
    locs(&bundle(o)["facts"]["definitions"])
        .into_iter()
        .map(|(p, r)| (p, r[0] + 1))
        .collect()
}

#[test]
fn daemon_bundles_are_byte_identical_to_no_daemon() {
    let w = Warm::new("srcpkg");
    let cases: &[&[&str]] = &[
        &["def", "tests/test_geometry.py@L10:Circle"],
        &["type-def", "tests/test_geometry.py@L10:circle"],
        &["refs", "src/shapes/units.py@L13:convert"],
        &["hover", "tests/test_geometry.py@L10:Circle"],
        &["symbols", "src/shapes/geometry.py"],
        &["symbols", "--query", "Circle"],
        &["diag"],
        &["highlight", "tests/test_geometry.py@L10:circle"],
        &["calls", "src/shapes/units.py@L13:convert"],
        &["rename", "src/shapes/units.py@L13:convert", "convert_units"],
        &["locate", "py://shapes.geometry#Circle.area"],
        &["capabilities"],
        &["def", "tests/test_geometry.py@L99:C1"],
        &["hover", "tests/test_geometry.py@Lx"],
        &["impl", "src/shapes/geometry.py@L14:area"],
    ];
    for args in cases {
        let json = [*args, &["--json"]].concat();
        let warm = w.run(&json);
        let again = w.run(&json);
        let cold = w.run(&[&json[..], &["--no-daemon"]].concat());
        assert_eq!(warm.status.code(), cold.status.code(), "{args:?}");
        assert_eq!(stdout(&warm), stdout(&cold), "{args:?}");
        assert_eq!(stdout(&again), stdout(&cold), "{args:?} (memo)");
        assert_eq!(stderr(&warm), stderr(&cold), "{args:?}");
    }
    // Human output too, and the LANSER_NO_DAEMON opt-out answers without the daemon.
    let human = w.ok(&["def", "tests/test_geometry.py@L10:Circle"]);
    let cold = w
        .cmd(&["def", "tests/test_geometry.py@L10:Circle"])
        .env("LANSER_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert_eq!(human.stdout, cold.stdout);
    // locate is answered in-process (it needs no server); everything else went through.
    assert!(w.status()["requests"].as_u64().unwrap() > 2 * (cases.len() as u64 - 1));
}

#[test]
fn an_edit_on_disk_is_seen_by_the_next_answer() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    assert_eq!(
        def_lines(&w.ok(&q)),
        vec![("inventory/store.py".to_string(), 25)]
    );
    // Edited outside lanser: the definition's file (not open in the server) moves down two
    // lines, and the queried file (open) gains a line above the call.
    let store = w.ws.join("inventory/store.py");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("# one\n# two\n{text}")).unwrap();
    let edited = w.ok(&[&q[..], &["--timing"]].concat());
    assert_eq!(
        def_lines(&edited),
        vec![("inventory/store.py".to_string(), 27)]
    );
    // --timing says what the daemon synced before answering (outside the hash domain).
    let seen = &bundle(&edited)["meta"]["timing"]["daemon"];
    assert_eq!(
        seen["synced"]["changed"],
        serde_json::json!(["inventory/store.py"])
    );
    assert!(seen["contentDigest"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    // The bundle names the docVersion of the edited text it describes (inside the hash domain).
    let dv = |path: &std::path::Path| {
        use sha2::{Digest, Sha256};
        let hex: String = Sha256::digest(std::fs::read(path).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("sha256:{hex}")
    };
    let versions = &bundle(&edited)["meta"]["docVersions"];
    assert_eq!(versions["inventory/store.py"], dv(&store));
    assert_eq!(versions["cli.py"], dv(&w.ws.join("cli.py")));
    assert_ne!(
        bundle(&w.ok(&q))["meta"]["docVersions"]["inventory/store.py"],
        serde_json::Value::Null
    );
    let cli = w.ws.join("cli.py");
    let text = std::fs::read_to_string(&cli).unwrap();
    std::fs::write(&cli, format!("# header\n{text}")).unwrap();
    let moved = ["def", "cli.py@L18:add_item", "--json"];
    let warm = w.ok(&moved);
    assert_eq!(
        def_lines(&warm),
        vec![("inventory/store.py".to_string(), 27)]
    );
    let cold = w.ok(&[&moved[..], &["--no-daemon"]].concat());
    assert_eq!(warm.stdout, cold.stdout);
}

#[test]
fn a_deleted_file_is_gone_and_a_created_one_found() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    assert_eq!(def_lines(&w.ok(&q)).len(), 1);
    let store = w.ws.join("inventory/store.py");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::remove_file(&store).unwrap();
    let gone = w.ok(&q);
    assert_eq!(def_lines(&gone), vec![]);
    assert_eq!(
        gone.stdout,
        w.ok(&[&q[..], &["--no-daemon"]].concat()).stdout
    );
    std::fs::write(&store, text).unwrap();
    assert_eq!(
        def_lines(&w.ok(&q)),
        vec![("inventory/store.py".to_string(), 25)]
    );
}

// SIGSTOP and /proc.
#[cfg(unix)]
#[test]
fn a_daemon_killed_with_sigkill_and_a_crashed_server_are_survived() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    let first = w.ok(&q);
    let s = w.status();
    kill9(s["pid"].as_u64().unwrap());
    // The socket is left behind; the next command cleans it up and starts a new daemon.
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(w.ok(&q).stdout, first.stdout);
    let s2 = w.idle_status();
    assert_ne!(s2["pid"], s["pid"]);
    // The server dies under the daemon: restarted, the request retried.
    kill9(s2["serverPid"].as_u64().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(100));
    let hover = ["hover", "cli.py@L17:add_item", "--json"];
    let warm = w.ok(&hover);
    assert_eq!(
        warm.stdout,
        w.ok(&[&hover[..], &["--no-daemon"]].concat()).stdout
    );
    assert_ne!(w.idle_status()["serverPid"], s2["serverPid"]);
    // A hung daemon (stopped with SIGSTOP) is killed by `daemon stop` after its grace period.
    let pid = w.status()["pid"].as_u64().unwrap();
    let s = Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(s.success());
    let stopped = w.ok(&["daemon", "stop"]);
    assert!(stdout(&stopped).contains("stopped"), "{}", stdout(&stopped));
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

// Modes and /proc's memory figures.
#[cfg(unix)]
#[test]
fn status_shows_versions_memory_and_documents_and_the_socket_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let w = Warm::new("demo");
    let started = w.ok(&["daemon", "start"]);
    assert!(
        stdout(&started).contains("lanser daemon running"),
        "{}",
        stdout(&started)
    );
    w.ok(&["def", "cli.py@L17:add_item"]);
    let s = w.idle_status();
    assert_eq!(s["running"], true);
    assert_eq!(s["serverVersion"], "1.1.407");
    assert_eq!(s["serverName"], "pyright");
    assert!(s["uptimeSecs"].is_u64());
    assert!(s["rssKiB"].as_u64().unwrap() > 0);
    assert!(s["serverRssKiB"].as_u64().unwrap() > 0);
    assert_eq!(s["openDocuments"], serde_json::json!(["cli.py"]));
    let human = stdout(&w.ok(&["daemon", "status"]));
    for field in [
        "serverVersion: 1.1.407",
        "uptimeSecs:",
        "rssKiB:",
        "openDocuments: 1 [cli.py]",
    ] {
        assert!(human.contains(field), "{field} in {human}");
    }
    let dir = w.dir();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("sock")), 0o600);
    // Stopped: the socket is gone and status says so.
    assert!(stdout(&w.ok(&["daemon", "stop"])).contains("stopped"));
    assert!(!dir.join("sock").exists());
    assert_eq!(w.status()["running"], false);
}

/// A request holding the daemon (a server that takes 10 s to answer a definition) does not
/// hold its status: it says running and busy, not `running: false` after the client's wait.
#[test]
fn status_answers_busy_while_a_request_holds_the_daemon() {
    let w = Warm::new("srcpkg");
    let slow = format!(
        "python3 {} slow",
        repo().join("tests/fake_lsp.py").display()
    );
    let mut held = w
        .cmd(&[
            "def",
            "src/shapes/units.py@L13:convert",
            "--server-cmd",
            &slow,
        ])
        .args(["--timeout", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Asked until the held request ends: some answer must come while it runs.
    let mut seen = Vec::new();
    while held.try_wait().unwrap().is_none() {
        let s = w.status();
        let done = held.try_wait().unwrap().is_some();
        // Not counted before the held request's CLI has started the daemon.
        if !done && (s["running"] == true || !seen.is_empty()) {
            seen.push((s["running"].clone(), s["busy"].clone()));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(held.wait().unwrap().success());
    assert!(
        seen.contains(&(true.into(), true.into())),
        "no status said busy while the request ran: {seen:?}"
    );
    assert!(
        seen.iter().all(|(running, _)| running == true),
        "once up, the daemon was said not running: {seen:?}"
    );
    let idle = w.idle_status();
    assert_eq!(
        (&idle["running"], &idle["busy"]),
        (&true.into(), &false.into())
    );
    assert!(idle["memoEntries"].is_u64());
}

#[test]
fn concurrent_clients_get_one_daemon_and_the_same_bytes() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    let children: Vec<_> = (0..6)
        .map(|_| {
            w.cmd(&q)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for o in &outs {
        assert!(o.status.success(), "{}", stderr(o));
        assert_eq!(o.stdout, outs[0].stdout);
        assert!(!stderr(o).contains("daemon unavailable"), "{}", stderr(o));
    }
    assert_eq!(w.status()["requests"], 6);
}

#[test]
fn a_client_from_another_environment_replaces_the_daemon() {
    let w = Warm::new("demo");
    let q = ["def", "cli.py@L17:add_item", "--json"];
    let a = w
        .cmd(&q)
        .env("PYTHONPATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", stderr(&a));
    // `daemon status` reports without comparing environments.
    let pid_a = w.status()["pid"].clone();
    let b = w.ok(&q);
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(w.status()["pid"], pid_a);
}

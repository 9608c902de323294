//! Issue 43: the warm daemon refreshes the base view in the background after every change —
//! one made outside it, or its own write — so the next `check --patch` or verified write pays
//! only for the changed view (src/daemon/server/refresh.rs). The refresh is a head start and
//! never an answer: after an outside edit has been refreshed, the next check's and diag's
//! bytes are a fresh process's.

use crate::daemon::Warm;
use crate::support::*;
use std::time::{Duration, Instant};

/// `pkg/impl.py` after an outside edit: `scale_by` takes a required keyword-only parameter,
/// so both callers of `pkg.mod.scale` break.
const OUTSIDE: &str = r#""""The implementations `pkg.mod` and `units` re-export."""


def scale_by(x: int, factor: int, *, rounding: int) -> int:
    return x * factor + rounding


def double(x: int) -> int:
    return x * 2
"#;

/// A patch on top of [`OUTSIDE`]: `double` returns a `str` (its callers' types change).
const PATCH: &str = r#"--- a/pkg/impl.py
+++ b/pkg/impl.py
@@ -8,2 +8,3 @@
 def double(x: int) -> int:
-    return x * 2
+    # doubled
+    return str(x * 2)
"#;

/// A patch on the fixture as it is: a comment in `scale_by`.
const FIRST: &str = r#"--- a/pkg/impl.py
+++ b/pkg/impl.py
@@ -4,2 +4,3 @@
 def scale_by(x: int, factor: int) -> int:
+    # scaled
     return x * factor
"#;

/// Wait until the daemon has pulled at least `pulled` files and has none left to pull. A bound
/// on liveness (the refresh does end), not on speed.
fn refreshed(w: &Warm, pulled: u64) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let r = w.status()["refresh"].clone();
        if r["pending"] == 0 && r["pulled"].as_u64().unwrap_or(0) >= pulled {
            return r;
        }
        assert!(Instant::now() < deadline, "the refresh never ended: {r}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn after_an_outside_edit_the_refreshed_daemon_answers_a_fresh_processs_bytes() {
    let w = Warm::new("importers");
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.diff");
    let patch = dir.path().join("patch.diff");
    std::fs::write(&first, FIRST).unwrap();
    std::fs::write(&patch, PATCH).unwrap();
    let (first, patch) = (first.to_str().unwrap(), patch.to_str().unwrap());
    // Warm: a check opens pkg/impl.py and pulls it and its importers.
    let warm = w.ok(&["check", "--patch", first, "--json"]);
    let cold = w.ok(&["check", "--patch", first, "--json", "--no-daemon"]);
    assert_eq!(stdout(&warm), stdout(&cold));
    let before = w.status()["refresh"]["pulled"].as_u64().unwrap();
    // An edit made outside lanser, seen by the daemon's watcher with no request asking.
    std::fs::write(w.ws.join("pkg/impl.py"), OUTSIDE).unwrap();
    let r = refreshed(&w, before + 1);
    assert!(r["rounds"].as_u64().unwrap() >= 1, "{r}");
    let daemon = w.ok(&["check", "--patch", patch, "--json"]);
    let fresh = w.ok(&["check", "--patch", patch, "--json", "--no-daemon"]);
    assert_eq!(stdout(&daemon), stdout(&fresh));
    let b = bundle(&daemon);
    assert_eq!(b["facts"]["after"].as_u64(), Some(1), "{b}");
    // The outside edit is in the answers: the callers of `scale` break.
    let diag = w.run(&["diag", "--json"]);
    let fresh = w.run(&["diag", "--json", "--no-daemon"]);
    assert_eq!(stdout(&diag), stdout(&fresh));
    assert!(stdout(&diag).contains("rounding"), "{}", stdout(&diag));
    // Its own write is refreshed too (lanser updates the index as it writes, so no event
    // names it): the callers are pulled again, and the next check is a fresh process's.
    let pulled = w.status()["refresh"]["pulled"].as_u64().unwrap();
    let body = dir.path().join("body.py");
    std::fs::write(&body, "return x * factor\n").unwrap();
    w.ok(&[
        "edit",
        "pkg/impl.py@L4:scale_by",
        "--replace-body",
        "--text",
        body.to_str().unwrap(),
        "--apply",
        "--allow-dirty",
        "--json",
    ]);
    refreshed(&w, pulled + 1);
    let daemon = w.ok(&["check", "--patch", patch, "--json"]);
    let fresh = w.ok(&["check", "--patch", patch, "--json", "--no-daemon"]);
    assert_eq!(stdout(&daemon), stdout(&fresh));
}

#[test]
fn the_refresh_can_be_turned_off() {
    let w = Warm::new("importers");
    let o = w
        .cmd(&["daemon", "start"])
        .env("LANSER_DAEMON_REFRESH", "off")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    w.ok(&["diag", "pkg/impl.py", "--json"]);
    std::fs::write(w.ws.join("pkg/impl.py"), OUTSIDE).unwrap();
    let d = w.ok(&["diag", "callers/plain_import.py", "--json"]);
    let fresh = w.ok(&["diag", "callers/plain_import.py", "--json", "--no-daemon"]);
    assert_eq!(stdout(&d), stdout(&fresh));
    let r = w.status()["refresh"].clone();
    assert_eq!(r["on"], false, "{r}");
    assert_eq!(r["pulled"], 0, "{r}");
}

/// A Python file a request's selector resolved in (here `source`, which needs no server) is
/// pulled in the background, then its importers, so a verified write of it finds its first
/// check and its importers' diagnostics before the change made; the next check's bytes are
/// still a fresh process's.
#[test]
fn a_file_the_agent_read_is_checked_in_the_background() {
    let w = Warm::new("flat");
    w.ok(&["diag", "main.py", "--json"]);
    let before = refreshed(&w, 0)["pulled"].as_u64().unwrap();
    let line = line_with(&w.ws, "models.py", "def display_name(") as u64;
    let sel = format!("models.py@L{line}:display_name");
    w.ok(&["source", &sel, "--json"]);
    // `pending` counts the import scan until its importers are queued: once nothing is
    // pending, models.py and both of its importers (main.py, service.py) were pulled.
    let r = refreshed(&w, before + 1);
    assert_eq!(r["pulled"].as_u64().unwrap() - before, 3, "{r}");
    let dir = tempfile::tempdir().unwrap();
    let patch = dir.path().join("p.diff");
    std::fs::write(
        &patch,
        "--- a/models.py\n+++ b/models.py\n@@ -18,2 +18,3 @@\n             return f\"{self.name} <{self.email}>\"\n-        return self.name\n+        # the name alone\n+        return self.name\n",
    )
    .unwrap();
    let p = patch.to_str().unwrap();
    let warm = w.ok(&["check", "--patch", p, "--json"]);
    let fresh = w.ok(&["check", "--patch", p, "--json", "--no-daemon"]);
    assert_eq!(stdout(&warm), stdout(&fresh));
}

/// A request that needs the server does not wait for the background pull in flight: the pull
/// is cancelled (`$/cancelRequest`) and queued again. The fake server holds every pull of
/// diagnostics for 60 s unless cancelled, and logs the cancellation.
#[test]
fn a_request_cancels_the_background_pull_in_flight() {
    let w = Warm::new("flat");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancelled.log");
    let fake = format!(
        "python3 {} slowdiag",
        repo().join("tests/fake_lsp.py").display()
    );
    let ask = |args: &[&str]| {
        let o = w
            .cmd(args)
            .args(["--server-cmd", &fake])
            .env("FAKE_LSP_LOG", &log)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    };
    let main = line_with(&w.ws, "main.py", "def main(") as u64;
    let hover = format!("main.py@L{main}:main");
    ask(&["hover", &hover, "--json"]);
    let line = line_with(&w.ws, "models.py", "def display_name(") as u64;
    ask(&[
        "source",
        &format!("models.py@L{line}:display_name"),
        "--json",
    ]);
    // The refresh is holding the pull of models.py.
    let deadline = Instant::now() + Duration::from_secs(60);
    while w.status()["refresh"]["pending"] == 0 {
        assert!(Instant::now() < deadline, "{}", w.status());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    ask(&["hover", &hover, "--json"]);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("cancelled"), "{logged:?}");
    assert!(w.status()["refresh"]["pending"].as_u64().unwrap() >= 1);
}

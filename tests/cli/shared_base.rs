//! Equal copies of a workspace share one warm daemon (`LANSER_SHARE_BASE=1`,
//! `src/daemon/shared.rs`): two fresh copies at different paths — as an RL trainer's rollouts
//! have them — are answered by the daemon of one private copy of their content, with the bytes
//! a process of their own prints; a copy whose content differs gets a copy of its own.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `lanser` with its own LANSER_HOME (the suite's Pyright linked in), daemons allowed and
/// shared by content.
fn shared(home: &Path) -> Command {
    let mut c = lanser();
    c.env_remove("LANSER_NO_DAEMON")
        .env("LANSER_HOME", home)
        .env("LANSER_SHARE_BASE", "1")
        .env("LANSER_DAEMON_IDLE", "300");
    c
}

fn bases(home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(home.join("bases"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.')
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn status(home: &Path, ws: &Path) -> Value {
    let o = shared(home)
        .args(["daemon", "status", "--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    bundle(&o)
}

/// Stops the daemons of every shared copy on the way out, also when the test fails.
struct Stop(PathBuf);

impl Drop for Stop {
    fn drop(&mut self) {
        for base in bases(&self.0) {
            let _ = shared(&self.0)
                .args(["daemon", "stop", "--workspace"])
                .arg(&base)
                .output();
        }
    }
}

#[test]
fn equal_copies_at_two_paths_share_one_daemon_and_get_their_own_bytes() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(crate::daemon::real_home().join("pyright")).unwrap();
    link(
        &crate::daemon::real_home().join("pyright"),
        &home.path().join("pyright"),
    );
    let _stop = Stop(home.path().to_path_buf());
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    copy_tree(&fixture("flat"), &a);
    copy_tree(&fixture("flat"), &b);
    // A patch that passes a str where an int is declared, kept outside both copies.
    let patch = dir.path().join("p.diff");
    let diff = one_line_diff(
        &a,
        "models.py",
        "self._users[user.user_id] = user",
        "self._users[user.name] = user",
    );
    std::fs::write(&patch, diff).unwrap();
    let check = |ws: &Path, extra: &[&str]| {
        let o = shared(home.path())
            .args(["check", "--patch"])
            .arg(&patch)
            .arg("--workspace")
            .arg(ws)
            .args(["--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        bundle(&o)
    };
    let first = check(&a, &[]);
    assert_eq!(first["status"], "ok", "{first}");
    assert!(
        first["facts"]["after"].as_u64() > first["facts"]["before"].as_u64(),
        "{first}"
    );
    let second = check(&b, &[]);
    let alone = check(&b, &["--no-daemon"]);
    assert_eq!(second["bundleId"], first["bundleId"]);
    assert_eq!(second["bundleId"], alone["bundleId"], "{second}\n{alone}");

    // One private copy of the content answered both; neither copy has a daemon of its own.
    let made = bases(home.path());
    assert_eq!(made.len(), 1, "{made:?}");
    // Its last use is recorded beside it, with its size (what bounds the copies together).
    let used = made[0].with_extension("used");
    let size: u64 = std::fs::read_to_string(&used).unwrap().parse().unwrap();
    assert!(size > 0, "{}", used.display());
    assert_eq!(status(home.path(), &made[0])["requests"], 2);
    for ws in [&a, &b] {
        assert_eq!(status(home.path(), ws)["running"], false);
    }
    // The shared copy holds the content, and the check wrote nothing anywhere.
    assert_eq!(
        read(&made[0], "models.py"),
        read(&fixture("flat"), "models.py")
    );
    assert_eq!(read(&a, "models.py"), read(&fixture("flat"), "models.py"));

    // A copy whose content differs by one comment gets a copy of its own.
    let text = read(&b, "service.py");
    std::fs::write(b.join("service.py"), format!("# changed\n{text}")).unwrap();
    let changed = check(&b, &[]);
    assert_eq!(changed["status"], "ok", "{changed}");
    assert_eq!(bases(home.path()).len(), 2);
}

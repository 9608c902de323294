//! Equal copies share one warm daemon (`LANSER_SHARE_BASE=1`): what an RL trainer or an agent
//! harness does — many fresh copies of one base, each asked to score or read a patch — pays one
//! server start and one project analysis per *content*, not per path.
//!
//! A read (no `--apply`) in a workspace with no daemon of its own is answered by the daemon of
//! a private copy of its content, `$LANSER_HOME/bases/<content key>/`, made on first need
//! and never written to: the key digests every file of the workspace (its relative path and
//! bytes; version control and tool caches aside). The request crosses as it was asked, its
//! working directory and workspace moved to the same place in that copy; bundles do not name
//! the workspace's path, so the answer is byte for byte the one this copy would get. What is
//! not shared, and answered as before: writes; a workspace with its own live daemon (it is
//! warm already); one holding a symbolic link, an interpreter of its own (`.venv`, `venv`:
//! bundles name its path) or more than [`MAX_FILES`] files or [`MAX_BYTES`] bytes; a request
//! naming a file outside the workspace by a relative path (it would be read from elsewhere).
//!
//! The copies together take at most [`KEPT`] bytes: making a new one removes those used least
//! recently (each use renews `bases/<key>.used`, which holds the copy's size), never one whose
//! daemon runs or that was used in the last [`RECENT`]. A copy is renamed away before it is
//! deleted, so no process ever finds half of one.

use crate::digest::sha256_hex;
use std::path::{Path, PathBuf};

/// Set to anything but empty or `0` to share daemons among equal copies.
pub const ENV: &str = "LANSER_SHARE_BASE";
/// The most files a shared workspace may hold.
pub const MAX_FILES: usize = 20_000;
/// The most bytes a shared workspace may hold (every copy of a base is made once).
pub const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The most bytes the shared copies take together (each is at most [`MAX_BYTES`]).
pub const KEPT: u64 = 2 << 30;
/// A copy used this recently is never removed: a process that has just chosen it may not have
/// started its daemon yet.
pub const RECENT: std::time::Duration = std::time::Duration::from_secs(600);

/// Directories that are not the workspace's content: version control and tool caches.
const NOT_CONTENT: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
];

/// Whether sharing is asked for.
pub fn enabled() -> bool {
    std::env::var(ENV).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The workspace's files (relative POSIX path, absolute path), sorted, and their bytes in all;
/// `None` when it cannot be shared (see the module's documentation).
fn content(root: &Path) -> Option<(Vec<(String, PathBuf)>, u64)> {
    if [".venv", "venv"].iter().any(|v| root.join(v).exists()) {
        return None;
    }
    let mut out = Vec::new();
    let mut bytes = 0u64;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()? {
            let entry = entry.ok()?;
            let kind = entry.file_type().ok()?;
            let name = entry.file_name();
            let path = entry.path();
            if kind.is_symlink() {
                return None;
            }
            if kind.is_dir() {
                if !NOT_CONTENT.contains(&name.to_str()?) {
                    stack.push(path);
                }
                continue;
            }
            bytes += entry.metadata().ok()?.len();
            let rel = crate::workspace::walk::relative(root, &path)?;
            out.push((rel, path));
            if out.len() > MAX_FILES || bytes > MAX_BYTES {
                return None;
            }
        }
    }
    out.sort();
    Some((out, bytes))
}

/// The content key of `files`: a digest of each file's relative path and bytes.
fn key(files: &[(String, PathBuf)]) -> Option<String> {
    let mut text = String::new();
    for (rel, abs) in files {
        let bytes = std::fs::read(abs).ok()?;
        text.push_str(&format!("{} {rel}\n", sha256_hex(&bytes)));
    }
    Some(sha256_hex(text.as_bytes())[..24].to_string())
}

/// The private copy of `root`'s content that equal copies share, made on first need (into a
/// scratch directory renamed into place, so two processes making it at once leave one whole
/// copy); `None` when the workspace cannot be shared or the copy cannot be made.
pub fn base_of(root: &Path) -> Option<PathBuf> {
    let (files, bytes) = content(root)?;
    let key = key(&files)?;
    let bases = crate::home::lanser_home().join("bases");
    let tree = bases.join(&key);
    if tree.is_dir() {
        used(&bases, &key, bytes);
        return Some(tree);
    }
    let scratch = bases.join(format!(".{key}.{}", std::process::id()));
    let made = (|| {
        std::fs::create_dir_all(&scratch).ok()?;
        for (rel, abs) in &files {
            let to = scratch.join(rel);
            std::fs::create_dir_all(to.parent()?).ok()?;
            std::fs::copy(abs, &to).ok()?;
        }
        Some(())
    })();
    if made.is_some() && std::fs::rename(&scratch, &tree).is_ok() {
        used(&bases, &key, bytes);
        trim(&bases, KEPT, &key, |copy| {
            super::Paths::for_root(copy).live_pid().is_some()
        });
        return Some(tree);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    tree.is_dir().then_some(tree)
}

/// Where the last use and the size of the copy `key` are kept.
fn marker(bases: &Path, key: &str) -> PathBuf {
    bases.join(format!("{key}.used"))
}

/// Record a use of the copy `key` now (the marker's modification time), with its size.
fn used(bases: &Path, key: &str, bytes: u64) {
    let _ = std::fs::write(marker(bases, key), bytes.to_string());
}

/// Remove the copies in `bases` used least recently until the rest take at most `limit`
/// bytes; never `spare`, one used within [`RECENT`], or one `running` says a daemon serves.
/// Each is renamed to a scratch name first, so a removal cut short leaves no partial copy
/// under its key. Best effort: what cannot be removed stays.
fn trim(bases: &Path, limit: u64, spare: &str, running: impl Fn(&Path) -> bool) {
    let Ok(entries) = std::fs::read_dir(bases) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut copies: Vec<(std::time::SystemTime, String, u64)> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let m = marker(bases, &name);
        let last = std::fs::metadata(&m)
            .or_else(|_| e.metadata())
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let size = std::fs::read_to_string(&m)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        // A copy made before markers held its size: walked as its content was.
        let size = size.unwrap_or_else(|| content(&e.path()).map_or(0, |(_, bytes)| bytes));
        copies.push((last, name, size));
    }
    let mut total: u64 = copies.iter().map(|c| c.2).sum();
    // Oldest first; equal times by name, so every process removes the same ones.
    copies.sort();
    for (last, name, size) in copies {
        if total <= limit {
            break;
        }
        let tree = bases.join(&name);
        let recent = now.duration_since(last).map_or(true, |age| age < RECENT);
        if name == spare || recent || running(&tree) {
            continue;
        }
        let gone = bases.join(format!(".{name}.gone.{}", std::process::id()));
        if std::fs::rename(&tree, &gone).is_ok() {
            let _ = std::fs::remove_dir_all(&gone);
            let _ = std::fs::remove_file(marker(bases, &name));
            total -= size;
        }
    }
}

/// `path` (under `root`) at the same place under `base`; `None` outside `root`.
pub fn moved(path: &Path, root: &Path, base: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(root).ok()?;
    Some(base.join(rest))
}

/// Whether a request's argument values name a file outside the workspace by a relative path
/// (read against the working directory, which moves into the shared copy).
pub fn names_outside(args: &serde_json::Value, cwd: &Path, root: &Path) -> bool {
    let outside = |s: &str| {
        let p = Path::new(s);
        p.is_relative() && {
            let at = cwd.join(p);
            at.exists() && !normalize(&at).starts_with(root)
        }
    };
    match args {
        serde_json::Value::String(s) => outside(s),
        serde_json::Value::Array(a) => a.iter().any(|v| names_outside(v, cwd, root)),
        serde_json::Value::Object(m) => m.values().any(|v| names_outside(v, cwd, root)),
        _ => false,
    }
}

/// `p` with `.` and `..` taken out (lexically).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_content_at_two_paths_has_one_key_and_a_changed_byte_another() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for d in [a.path(), b.path()] {
            std::fs::create_dir_all(d.join("pkg/__pycache__")).unwrap();
            std::fs::create_dir_all(d.join(".git")).unwrap();
            std::fs::write(d.join("pkg/m.py"), "x = 1\n").unwrap();
            std::fs::write(d.join(".coveragerc"), "[run]\n").unwrap();
        }
        // Caches and version control are not content.
        std::fs::write(a.path().join("pkg/__pycache__/m.pyc"), "junk").unwrap();
        std::fs::write(a.path().join(".git/HEAD"), "ref").unwrap();
        let k = |d: &Path| key(&content(d).unwrap().0).unwrap();
        assert_eq!(k(a.path()), k(b.path()));
        std::fs::write(b.path().join("pkg/m.py"), "x = 2\n").unwrap();
        assert_ne!(k(a.path()), k(b.path()));
        // A file's name is content too.
        std::fs::write(b.path().join("pkg/m.py"), "x = 1\n").unwrap();
        std::fs::rename(b.path().join(".coveragerc"), b.path().join("setup.cfg")).unwrap();
        assert_ne!(k(a.path()), k(b.path()));
        std::fs::create_dir_all(b.path().join(".venv")).unwrap();
        assert!(content(b.path()).is_none(), "an interpreter of its own");
    }

    /// A copy `name` of `bytes` bytes under `bases`, last used `secs_ago`.
    fn copy(bases: &Path, name: &str, bytes: usize, secs_ago: u64) {
        std::fs::create_dir_all(bases.join(name).join("pkg")).unwrap();
        std::fs::write(bases.join(name).join("pkg/m.py"), vec![b'x'; bytes]).unwrap();
        used(bases, name, bytes as u64);
        let at = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
        let f = std::fs::File::options()
            .append(true)
            .open(marker(bases, name))
            .unwrap();
        f.set_modified(at).unwrap();
    }

    #[test]
    fn the_copies_used_least_recently_go_first_but_never_a_served_or_recent_one() {
        let d = tempfile::tempdir().unwrap();
        let bases = d.path();
        copy(bases, "old", 100, 4000);
        copy(bases, "served", 100, 3000);
        copy(bases, "older", 100, 5000);
        copy(bases, "recent", 100, 60);
        copy(bases, "new", 100, 0);
        // A copy made before markers: its size is walked, its age is the directory's.
        std::fs::create_dir_all(bases.join("unmarked")).unwrap();
        std::fs::write(bases.join("unmarked/a.py"), [b'y'; 100]).unwrap();
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2000);
        std::fs::File::open(bases.join("unmarked"))
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let left = |n: &str| bases.join(n).is_dir();
        trim(bases, 100, "new", |t| t.ends_with("served"));
        // 600 bytes, 100 kept: `older`, `old` and `unmarked` go (oldest first); `served`
        // (older than `unmarked`) runs a daemon, `recent` was just used, `new` just made.
        assert!(!left("older") && !left("old") && !left("unmarked"));
        assert!(left("served") && left("recent") && left("new"));
        assert!(!marker(bases, "old").exists() && marker(bases, "served").exists());
        // Nothing half-removed is left under a key or a scratch name.
        let names: Vec<String> = std::fs::read_dir(bases)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".used"))
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        // Its daemon stopped, `served` is the oldest: it goes before `recent`, now older.
        copy(bases, "recent", 100, 700);
        trim(bases, 200, "new", |_| false);
        assert!(!left("served") && left("recent") && left("new"));
    }

    #[test]
    fn a_relative_path_out_of_the_workspace_is_named() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(d.path().join("p.diff"), "").unwrap();
        std::fs::write(root.join("q.diff"), "").unwrap();
        let args = |v: &str| serde_json::json!({ "patch": v });
        assert!(names_outside(&args("../p.diff"), &root, &root));
        assert!(!names_outside(&args("q.diff"), &root, &root));
        let abs = d.path().join("p.diff");
        assert!(!names_outside(&args(abs.to_str().unwrap()), &root, &root));
    }
}

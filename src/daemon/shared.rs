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

use crate::digest::sha256_hex;
use std::path::{Path, PathBuf};

/// Set to anything but empty or `0` to share daemons among equal copies.
pub const ENV: &str = "LANSER_SHARE_BASE";
/// The most files a shared workspace may hold.
pub const MAX_FILES: usize = 20_000;
/// The most bytes a shared workspace may hold (every copy of a base is made once).
pub const MAX_BYTES: u64 = 256 * 1024 * 1024;

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

/// The workspace's files (relative POSIX path, absolute path), sorted; `None` when it cannot be
/// shared (see the module's documentation).
fn content(root: &Path) -> Option<Vec<(String, PathBuf)>> {
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
    Some(out)
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
    let files = content(root)?;
    let key = key(&files)?;
    let bases = crate::home::lanser_home().join("bases");
    let tree = bases.join(&key);
    if tree.is_dir() {
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
        return Some(tree);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    tree.is_dir().then_some(tree)
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
        let k = |d: &Path| key(&content(d).unwrap()).unwrap();
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

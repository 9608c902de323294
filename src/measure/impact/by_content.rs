//! What pytest says about a workspace state, kept on disk by the state's content, not by the
//! workspace's path: the collection ([`super::pytest::catalog_with`]) and the per-test coverage
//! ([`super::coverage`]) of a state are files under `$LANSER_HOME/by-content/`, named by the
//! sha256 of the state digest (every Python and pytest configuration file, path and content:
//! [`super::pytest::state_digest_in`]), the interpreter that ran pytest and when its installed
//! packages last changed ([`packages_stamp`]).
//!
//! So every copy of a workspace on the machine — an RL rollout's fresh checkout of the same
//! base, a second clone, a CI job's workspace — and every process (CLI, daemon, MCP, batch)
//! shares them: the first copy pays for the collection and the coverage run, an equal copy
//! pays nothing, and a copy with a change pays only for what the change makes stale.
//!
//! Entries are written atomically (a temporary file renamed over the name), so a reader never
//! sees half of one; an unreadable entry is treated as absent and measured again. The directory
//! is bounded ([`KEPT`]): past it, the entries read or written least recently are removed.

use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};

/// The bytes the entries may take: an RL run's thousands of states stop growing the home
/// there, a base read by each of its patches stays.
pub const KEPT: u64 = 512 << 20;

/// The file of `kind` (`collection`, `coverage`) for the state `digest` under `python`.
fn path(kind: &str, digest: &str, python: &Path) -> PathBuf {
    let key = format!(
        "{kind}\0{digest}\0{}\0{}",
        python.display(),
        packages_stamp(python)
    );
    let key = crate::digest::sha256_hex(key.as_bytes());
    crate::home::lanser_home()
        .join("by-content")
        .join(format!("{kind}-{}.json", &key[..24]))
}

/// When the interpreter's installed packages last changed, as far as the file system tells
/// without running it: the modification times of the `site-packages`/`dist-packages`
/// directories under its prefix (a package installed or removed adds or removes an entry
/// there), and of the user's site directory. A pytest plugin or coverage.py installed after an
/// entry was written gives new names, so nothing measured under the old packages is reused.
fn packages_stamp(python: &Path) -> String {
    let exe = python
        .canonicalize()
        .unwrap_or_else(|_| python.to_path_buf());
    let mut dirs: Vec<PathBuf> = Vec::new();
    // `<prefix>/bin/python` (a venv, a pyenv build, /usr) and the venv's own prefix.
    for prefix in [
        python.parent().and_then(Path::parent),
        exe.parent().and_then(Path::parent),
    ]
    .into_iter()
    .flatten()
    {
        for lib in ["lib", "Lib", "lib64"] {
            let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("python") || name == "site-packages" {
                    dirs.push(e.path().join("site-packages"));
                    dirs.push(e.path().join("dist-packages"));
                    dirs.push(e.path());
                }
            }
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".local/lib"));
    }
    dirs.sort();
    dirs.dedup();
    let mut stamp = String::new();
    for d in dirs {
        if let Ok(t) = std::fs::metadata(&d).and_then(|m| m.modified()) {
            let t = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            stamp.push_str(&format!("{}={};", d.display(), t.as_nanos()));
        }
    }
    stamp
}

/// The entry of `kind` for the state, if one was written and reads back.
pub fn read<T: DeserializeOwned>(kind: &str, digest: &str, python: &Path) -> Option<T> {
    let bytes = crate::home::read_kept(&path(kind, digest, python))?;
    serde_json::from_slice(&bytes).ok()
}

/// Keep `value` as the entry of `kind` for the state (best effort: a cache that cannot be
/// written is measured again next time).
pub fn write<T: Serialize>(kind: &str, digest: &str, python: &Path, value: &T) {
    if let Ok(bytes) = serde_json::to_vec(value) {
        crate::home::keep_bounded(&path(kind, digest, python), &bytes, KEPT);
    }
}

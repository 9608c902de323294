//! What pytest says about a workspace state, kept on disk by the state's content, not by the
//! workspace's path: the collection ([`super::pytest::catalog_with`]) and the per-test coverage
//! ([`super::coverage`]) of a state are files under `$LANSER_HOME/by-content/`, named by the
//! sha256 of the state digest (every Python and pytest configuration file, path and content:
//! [`super::pytest::state_digest_in`]) and the interpreter that ran pytest.
//!
//! So every copy of a workspace on the machine — an RL rollout's fresh checkout of the same
//! base, a second clone, a CI job's workspace — and every process (CLI, daemon, MCP, batch)
//! shares them: the first copy pays for the collection and the coverage run, an equal copy
//! pays nothing, and a copy with a change pays only for what the change makes stale.
//!
//! Entries are written atomically (a temporary file renamed over the name), so a reader never
//! sees half of one; an unreadable entry is treated as absent and measured again.

use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};

/// The file of `kind` (`collection`, `coverage`) for the state `digest` under `python`.
fn path(kind: &str, digest: &str, python: &Path) -> PathBuf {
    let key = format!("{kind}\0{digest}\0{}", python.display());
    let key = crate::digest::sha256_hex(key.as_bytes());
    crate::home::lanser_home()
        .join("by-content")
        .join(format!("{kind}-{}.json", &key[..24]))
}

/// The entry of `kind` for the state, if one was written and reads back.
pub fn read<T: DeserializeOwned>(kind: &str, digest: &str, python: &Path) -> Option<T> {
    let bytes = std::fs::read(path(kind, digest, python)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Keep `value` as the entry of `kind` for the state (best effort: a cache that cannot be
/// written is measured again next time).
pub fn write<T: Serialize>(kind: &str, digest: &str, python: &Path, value: &T) {
    let target = path(kind, digest, python);
    let Some(dir) = target.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(bytes) = serde_json::to_vec(value) else {
        return;
    };
    if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
        use std::io::Write;
        if tmp.write_all(&bytes).is_ok() {
            let _ = tmp.persist(&target);
        }
    }
}

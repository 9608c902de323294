//! Where lanser keeps what outlives a process: the managed servers, content snapshots,
//! daemons' sockets and journals.

use std::path::{Path, PathBuf};

/// `$LANSER_HOME`, else `$XDG_CACHE_HOME/lanser`, else (Windows) `%LOCALAPPDATA%\lanser`,
/// else `~/.cache/lanser`.
pub fn lanser_home() -> PathBuf {
    if let Some(h) = std::env::var_os("LANSER_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(h);
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("lanser");
    }
    if cfg!(windows) {
        if let Some(x) = std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) {
            return PathBuf::from(x).join("lanser");
        }
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache").join("lanser")
}

/// Write `bytes` to `file` whole or not at all (a temporary file in its directory renamed into
/// place), best effort: a cache entry that cannot be written is computed again next time.
pub fn keep(file: &Path, bytes: &[u8]) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
        use std::io::Write;
        if tmp.write_all(bytes).is_ok() {
            let _ = tmp.persist(file);
        }
    }
}

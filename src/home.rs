//! Where lanser keeps what outlives a process: the managed servers, content snapshots,
//! daemons' sockets and journals, and caches of what a workspace state or an environment
//! gives (pytest's collection and coverage, the library's words), each cache directory
//! bounded in size, the entries used least recently removed first.

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

/// Write `bytes` to `file` as [`keep`] does, then bound `file`'s directory to `limit` bytes:
/// the entries used least recently (by modification time: [`read_kept`] renews it) are removed
/// until the rest fit, never the one just written. Best effort, like [`keep`]: an entry another
/// process is reading stays readable where the system allows it, and one removed under a reader
/// is measured again by it.
pub fn keep_bounded(file: &Path, bytes: &[u8], limit: u64) {
    keep(file, bytes);
    if let Some(dir) = file.parent() {
        trim(dir, limit, file);
    }
}

/// The bytes of a cache entry [`keep_bounded`] wrote, its use recorded (its modification time
/// set to now) so that a bounded directory removes it last.
pub fn read_kept(file: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(file).ok()?;
    if let Ok(f) = std::fs::File::options().append(true).open(file) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    Some(bytes)
}

/// Remove the least recently used files of `dir` (not `spare`) until the rest take at most
/// `limit` bytes. Temporary files being written (no extension: `keep`'s) are left alone.
fn trim(dir: &Path, limit: u64, spare: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, u64, std::path::PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            let p = e.path();
            let kept = m.is_file() && p.extension().is_some();
            kept.then_some((m.modified().ok()?, m.len(), p))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    // Oldest first; equal times by name, so every process removes the same ones.
    files.sort();
    for (_, len, path) in files {
        if total <= limit {
            break;
        }
        if path != spare && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn aged(path: &Path, secs_ago: u64) {
        let f = std::fs::File::options().append(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
            .unwrap();
    }

    #[test]
    fn a_bounded_directory_drops_what_was_used_least_recently() {
        let dir = tempfile::tempdir().unwrap();
        let at = |n: &str| dir.path().join(format!("{n}.bin"));
        for (name, age) in [("a", 300), ("b", 200), ("c", 100)] {
            keep(&at(name), &[0u8; 10]);
            aged(&at(name), age);
        }
        // `a` is the oldest written, but read since: `b`, not `a`, goes first.
        assert_eq!(read_kept(&at("a")).unwrap().len(), 10);
        keep_bounded(&at("d"), &[1u8; 10], 30);
        let left = |n: &str| at(n).exists();
        assert!(left("a") && !left("b") && left("c") && left("d"));
        aged(&at("a"), 50);
        aged(&at("d"), 10);
        keep_bounded(&at("e"), &[2u8; 10], 20);
        assert!(!left("a") && !left("c") && left("d") && left("e"));
        // One entry larger than the bound is still kept: the one just written stays.
        keep_bounded(&at("f"), &[3u8; 50], 20);
        assert!(left("f") && !left("d") && !left("e"));
        assert_eq!(std::fs::read(at("f")).unwrap(), vec![3u8; 50]);
    }
}

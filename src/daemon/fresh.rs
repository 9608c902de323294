//! Freshness: before every answer the daemon compares the workspace's Python files with what
//! it saw last, by content hash, and tells the server about every difference — `didChange`
//! (full text) for documents the server has open, `didClose` for open ones that are gone, and
//! `workspace/didChangeWatchedFiles` (created / changed / deleted) for the rest — so a fact
//! never describes text that is no longer on disk.
//!
//! The content hash is the source of truth. File metadata (size, mtime, ctime, inode) only
//! lets an unchanged file skip rehashing, and never for a file modified in the last two
//! seconds (git's "racily clean" rule): an edit inside one timestamp tick is still caught.
//! The configuration files that shape the server (pyrightconfig.json, pyproject.toml,
//! lanser.toml, the user's lanser.toml) are digested too; a change there restarts the session.

use crate::digest::sha256_hex;
use crate::lsp::session::Session;
use crate::selector::resolve::Document;
use crate::workspace::{path_to_uri, Workspace};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime};

/// Files modified this recently are always rehashed.
const RACY: Duration = Duration::from_secs(2);

/// What identifies a file's metadata state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    stat: Stat,
    hash: String,
    /// Whether the hash was taken while the file was racily fresh.
    racy: bool,
}

/// The Python files of a workspace, by relative path, with their content hashes.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    files: BTreeMap<String, Entry>,
}

/// The differences between two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    pub created: Vec<String>,
    pub changed: Vec<String>,
    pub deleted: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }
}

impl Snapshot {
    /// Scan `ws`, rehashing only files whose metadata changed (or that are racily fresh).
    pub fn scan(ws: &Workspace, prev: &Snapshot) -> Snapshot {
        let now = SystemTime::now();
        let mut files = BTreeMap::new();
        for rel in ws.python_files() {
            let abs = ws.root.join(&rel);
            let Ok(meta) = std::fs::metadata(&abs) else {
                continue;
            };
            let stat = Stat {
                size: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                ino: meta.ino(),
            };
            let racy = meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_none_or(|age| age < RACY);
            let reuse = prev
                .files
                .get(&rel)
                .filter(|e| e.stat == stat && !e.racy && !racy);
            let entry = match reuse {
                Some(e) => e.clone(),
                None => {
                    let Ok(bytes) = std::fs::read(&abs) else {
                        continue;
                    };
                    Entry {
                        stat,
                        hash: sha256_hex(&bytes),
                        racy,
                    }
                }
            };
            files.insert(rel, entry);
        }
        Snapshot { files }
    }

    /// What changed from `self` to `next`.
    pub fn diff(&self, next: &Snapshot) -> Changes {
        let mut c = Changes::default();
        for (rel, e) in &next.files {
            match self.files.get(rel) {
                None => c.created.push(rel.clone()),
                Some(old) if old.hash != e.hash => c.changed.push(rel.clone()),
                Some(_) => {}
            }
        }
        for rel in self.files.keys() {
            if !next.files.contains_key(rel) {
                c.deleted.push(rel.clone());
            }
        }
        c
    }

    /// One digest of every path and content hash.
    pub fn digest(&self) -> String {
        let mut text = String::new();
        for (rel, e) in &self.files {
            text.push_str(rel);
            text.push('\0');
            text.push_str(&e.hash);
            text.push('\n');
        }
        sha256_hex(text.as_bytes())
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A digest of the configuration files that shape the server and the bundles' environment.
pub fn config_digest(ws: &Workspace) -> String {
    let mut text = String::new();
    let mut paths: Vec<std::path::PathBuf> =
        ["pyrightconfig.json", "pyproject.toml", "lanser.toml"]
            .iter()
            .map(|n| ws.root.join(n))
            .collect();
    paths.extend(crate::config::user_config_path());
    for p in paths {
        let h = std::fs::read(&p)
            .map(|b| sha256_hex(&b))
            .unwrap_or_else(|_| "-".into());
        text.push_str(&format!("{}={h}\n", p.display()));
    }
    sha256_hex(text.as_bytes())
}

/// Tell the server about `changes`.
pub fn apply(session: &Session, ws: &Workspace, changes: &Changes) {
    let open: std::collections::HashSet<String> = session.open_documents().into_iter().collect();
    let mut watched = Vec::new();
    let kinds = [(&changes.created, 1u8), (&changes.changed, 2u8)];
    for (list, kind) in kinds {
        for rel in list {
            let abs = ws.root.join(rel);
            let uri = path_to_uri(&abs);
            if open.contains(&uri) {
                if let Ok(doc) = Document::load(abs, rel.clone()) {
                    session.sync_document(&uri, &doc);
                }
            }
            watched.push((uri, kind));
        }
    }
    for rel in &changes.deleted {
        let uri = path_to_uri(&ws.root.join(rel));
        session.close_document(&uri);
        watched.push((uri, 3));
    }
    session.files_changed(&watched);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_creations_and_deletions_are_seen_even_within_one_tick() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("b.py"), "y = 2\n").unwrap();
        let ws = Workspace { root };
        let s0 = Snapshot::scan(&ws, &Snapshot::default());
        assert_eq!(s0.len(), 2);
        // Same size, same second: only the content hash can tell.
        std::fs::write(ws.root.join("a.py"), "x = 3\n").unwrap();
        std::fs::remove_file(ws.root.join("b.py")).unwrap();
        std::fs::write(ws.root.join("c.py"), "z = 3\n").unwrap();
        let s1 = Snapshot::scan(&ws, &s0);
        let c = s0.diff(&s1);
        assert_eq!(c.changed, vec!["a.py"]);
        assert_eq!(c.deleted, vec!["b.py"]);
        assert_eq!(c.created, vec!["c.py"]);
        assert_ne!(s0.digest(), s1.digest());
        assert!(s1.diff(&Snapshot::scan(&ws, &s1)).is_empty());
    }
}

//! Keeping an [`Index`] current from file-system events (the `notify` crate: inotify, FSEvents,
//! kqueue), so a long-lived process pays for what changed, not for the size of the tree.
//!
//! Every walked directory is watched (non-recursively: skipped and ignored directories such as
//! `node_modules` or a venv cost no watch), and new directories are watched before they are
//! walked, so a file created in a brand-new `src/` is never missed.
//!
//! [`Watch::sync`] answers "has everything written before now been seen?" with a cookie, as
//! watchman does: it creates a file in a directory of its own, watched by the same watcher,
//! and drains events until the cookie's arrives — events of one watcher come in the order the
//! writes happened, so every write that finished before the sync is in hand. The content hash
//! stays the truth: the paths the events name are re-read ([`Index::refresh`]), racily fresh
//! entries are re-hashed on every sync. Whenever events may have been lost — the queue
//! overflowed (inotify's `IN_Q_OVERFLOW`), the backend reported an error, the cookie did not
//! arrive in time, the watch limit was reached, or no watcher could be started — the index
//! falls back to a full rescan, and [`Watch::status`] says so.

use super::index::{Changes, Index};
use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The longest a sync waits for its cookie before falling back to a rescan.
const SETTLE: Duration = Duration::from_millis(500);

/// Debug builds only: set to `1` in a process's environment to treat every sync's events as
/// overflowed (the fallback to a full rescan, for tests).
#[cfg(debug_assertions)]
pub const OVERFLOW_ENV: &str = "LANSER_TEST_WATCH_OVERFLOW";

/// How the index is kept current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// File-system events, with a rescan only when they may have been lost.
    Events,
    /// A full rescan before every answer (no watcher could be had: the reason).
    Polling(String),
}

/// Whether an event may mean a change: reads (opens, closes after reading, accesses — lanser
/// reading the tree causes them) do not.
fn changes_something(ev: &Event) -> bool {
    match ev.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// A watcher feeding one index.
pub struct Watch {
    root: PathBuf,
    watcher: Option<RecommendedWatcher>,
    rx: Option<Receiver<notify::Result<Event>>>,
    cookies: Option<tempfile::TempDir>,
    seq: u64,
    watched: BTreeSet<PathBuf>,
    /// The index's [`Index::dirs_version`] when `watched` was last reconciled with it.
    dirs_seen: Option<u64>,
    mode: Mode,
    /// Rescans because events may have been lost, and why the last one happened.
    fallbacks: u64,
    last_fallback: Option<String>,
}

/// What [`Watch::status`] reports.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub mode: String,
    pub watched_dirs: usize,
    pub fallback_rescans: u64,
    pub last_fallback: Option<String>,
}

impl Watch {
    /// Start watching every directory of `index`. Never fails: without a watcher the mode is
    /// [`Mode::Polling`].
    pub fn start(root: &Path, index: &Index) -> Watch {
        let mut w = Watch {
            root: root.to_path_buf(),
            watcher: None,
            rx: None,
            cookies: None,
            seq: 0,
            watched: BTreeSet::new(),
            dirs_seen: None,
            mode: Mode::Events,
            fallbacks: 0,
            last_fallback: None,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let watcher = notify::recommended_watcher(move |ev| {
            let _ = tx.send(ev);
        });
        let cookies = tempfile::Builder::new().prefix("lanser-watch-").tempdir();
        match (watcher, cookies) {
            (Ok(mut watcher), Ok(cookies)) => {
                match watcher.watch(cookies.path(), RecursiveMode::NonRecursive) {
                    Ok(()) => {
                        w.watcher = Some(watcher);
                        w.rx = Some(rx);
                        w.cookies = Some(cookies);
                    }
                    Err(e) => w.mode = Mode::Polling(format!("cannot watch: {e}")),
                }
            }
            (Err(e), _) => w.mode = Mode::Polling(format!("no file-system watcher: {e}")),
            (_, Err(e)) => w.mode = Mode::Polling(format!("no cookie directory: {e}")),
        }
        let dirs: Vec<PathBuf> = index.dirs().cloned().collect();
        w.add(&dirs);
        w
    }

    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    pub fn status(&self) -> Status {
        Status {
            mode: match &self.mode {
                Mode::Events => "events".into(),
                Mode::Polling(why) => format!("polling ({why})"),
            },
            watched_dirs: self.watched.len(),
            fallback_rescans: self.fallbacks,
            last_fallback: self.last_fallback.clone(),
        }
    }

    /// Watch `dirs` not watched yet; a failure (the watch limit) turns to polling.
    fn add(&mut self, dirs: &[PathBuf]) {
        let Some(watcher) = self.watcher.as_mut() else {
            return;
        };
        for d in dirs {
            if self.watched.contains(d) {
                continue;
            }
            match watcher.watch(d, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(d.clone());
                }
                // Gone again before it could be watched: the refresh will drop it.
                Err(e) if !d.exists() => drop(e),
                Err(e) => {
                    self.mode = Mode::Polling(format!("watching {}: {e}", d.display()));
                    self.watcher = None;
                    self.rx = None;
                    return;
                }
            }
        }
    }

    /// Bring `index` up to date with everything written before this call; returns what
    /// changed.
    pub fn sync(&mut self, index: &mut Index) -> Changes {
        if let Mode::Polling(_) = self.mode {
            return index.rescan();
        }
        match self.drain() {
            Ok(paths) => self.refresh(index, paths),
            Err(why) => self.fallback(index, why),
        }
    }

    /// Events may have been lost: rescan the whole tree and watch what it holds now.
    fn fallback(&mut self, index: &mut Index, why: String) -> Changes {
        self.fallbacks += 1;
        self.last_fallback = Some(why);
        let changes = index.rescan();
        let dirs: BTreeSet<PathBuf> = index.dirs().cloned().collect();
        self.watched.retain(|d| dirs.contains(d));
        let dirs: Vec<PathBuf> = dirs.into_iter().collect();
        self.add(&dirs);
        self.dirs_seen = Some(index.dirs_version());
        changes
    }

    /// Apply the events already received, without waiting for any: cheap, and enough where an
    /// answer only has to be no staler than the events seen so far (a memo entry's epoch,
    /// which can only make a later repeat run again). Returns what changed.
    pub fn poll(&mut self, index: &mut Index) -> Changes {
        let Some(rx) = self.rx.as_ref() else {
            return Changes::default();
        };
        let mut paths = BTreeSet::new();
        let mut lost = None;
        while let Ok(ev) = rx.try_recv() {
            match ev {
                Ok(ev) if ev.need_rescan() => lost = Some("the event queue overflowed"),
                Ok(ev) if changes_something(&ev) => {
                    paths.extend(ev.paths.into_iter().filter(|p| p.starts_with(&self.root)))
                }
                Ok(_) => {}
                Err(_) => lost = Some("watcher error"),
            }
        }
        match lost {
            Some(why) => self.fallback(index, why.to_string()),
            None if paths.is_empty() => Changes::default(),
            None => self.refresh(index, paths),
        }
    }

    /// Refresh the paths events named; new directories are watched, then walked again, until
    /// no new one appears (a file created between a walk and its watch is still found).
    fn refresh(&mut self, index: &mut Index, paths: BTreeSet<PathBuf>) -> Changes {
        let mut all = index.refresh(paths.iter().map(PathBuf::as_path));
        while self.dirs_seen != Some(index.dirs_version()) {
            self.dirs_seen = Some(index.dirs_version());
            let dirs: BTreeSet<PathBuf> = index.dirs().cloned().collect();
            self.watched.retain(|d| dirs.contains(d));
            let new: Vec<PathBuf> = dirs
                .iter()
                .filter(|d| !self.watched.contains(*d))
                .cloned()
                .collect();
            if new.is_empty() || self.watcher.is_none() {
                break;
            }
            self.add(&new);
            let more = index.refresh(new.iter().map(PathBuf::as_path));
            all.created.extend(more.created);
            all.changed.extend(more.changed);
            all.deleted.extend(more.deleted);
        }
        for l in [&mut all.created, &mut all.changed, &mut all.deleted] {
            l.sort();
            l.dedup();
        }
        all
    }

    /// Every path under the root named by events up to a fresh cookie; `Err` when events may
    /// have been lost.
    fn drain(&mut self) -> Result<BTreeSet<PathBuf>, String> {
        let (Some(rx), Some(cookies)) = (self.rx.as_ref(), self.cookies.as_ref()) else {
            return Err("no watcher".into());
        };
        self.seq += 1;
        let cookie = cookies.path().join(format!("cookie-{}", self.seq));
        std::fs::write(&cookie, b"").map_err(|e| format!("cookie: {e}"))?;
        let deadline = Instant::now() + SETTLE;
        let mut paths = BTreeSet::new();
        let mut lost = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Ok(ev)) => {
                    if ev.need_rescan() {
                        lost = Some("the event queue overflowed".to_string());
                    }
                    let seen = ev.paths.contains(&cookie);
                    if changes_something(&ev) {
                        paths.extend(ev.paths.into_iter().filter(|p| p.starts_with(&self.root)));
                    }
                    if seen {
                        break;
                    }
                }
                Ok(Err(e)) => lost = Some(format!("watcher error: {e}")),
                Err(RecvTimeoutError::Timeout) => {
                    lost = Some(format!("no event within {SETTLE:?}"));
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    lost = Some("the watcher stopped".into());
                    break;
                }
            }
        }
        let _ = std::fs::remove_file(&cookie);
        #[cfg(debug_assertions)]
        if std::env::var(OVERFLOW_ENV).is_ok_and(|v| v == "1") {
            lost = Some("the event queue overflowed (simulated)".into());
        }
        match lost {
            Some(why) => Err(why),
            None => Ok(paths),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf, Index, Watch) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/a.py"), "a = 1\n").unwrap();
        let mut index = Index::scan(&root, Default::default());
        index.hashes();
        let watch = Watch::start(&root, &index);
        (tmp, root, index, watch)
    }

    #[test]
    fn events_bring_the_index_to_what_a_rescan_sees() {
        let (_tmp, root, mut index, mut watch) = setup();
        assert_eq!(watch.mode(), &Mode::Events);
        assert!(watch.sync(&mut index).is_empty());
        // Edit in the same tick, create in a new directory, rename, delete.
        std::fs::write(root.join("pkg/a.py"), "a = 2\n").unwrap();
        std::fs::create_dir_all(root.join("src/deep/er")).unwrap();
        std::fs::write(root.join("src/deep/er/m.py"), "m = 1\n").unwrap();
        let c = watch.sync(&mut index);
        assert_eq!(c.changed, vec!["pkg/a.py"]);
        assert_eq!(c.created, vec!["src/deep/er/m.py"]);
        // The new directories are watched: a file created there now is seen too.
        std::fs::write(root.join("src/deep/er/n.py"), "n = 1\n").unwrap();
        std::fs::rename(root.join("pkg/a.py"), root.join("pkg/b.py")).unwrap();
        let c = watch.sync(&mut index);
        assert_eq!(c.created, vec!["pkg/b.py", "src/deep/er/n.py"]);
        assert_eq!(c.deleted, vec!["pkg/a.py"]);
        std::fs::remove_dir_all(root.join("src")).unwrap();
        let c = watch.sync(&mut index);
        assert_eq!(c.deleted, vec!["src/deep/er/m.py", "src/deep/er/n.py"]);
        let mut fresh = Index::scan(&root, Default::default());
        assert_eq!(index.digest(), fresh.digest());
        assert_eq!(watch.status().fallback_rescans, 0);
        let generation = index.generation();
        assert!(watch.sync(&mut index).is_empty());
        assert_eq!(index.generation(), generation);
    }
}

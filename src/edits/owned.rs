//! Whose uncommitted changes a write would touch (docs/safety.md#uncommitted-changes): the
//! record of the content each apply left in each path it wrote, and the guard that reads it.
//!
//! A write is refused only when a file it touches holds changes lanser did not make: git shows
//! the file changed (modified, staged, deleted or untracked) and it does not hold exactly what
//! lanser's latest apply left there. Files the write does not touch never refuse it, tracked or
//! not: the transaction writes, and rolls back, only the files it touches.
//!
//! The record is `$LANSER_HOME/journal/<hash of root>.left.json` (beside the journal): one
//! entry per path, the digest of the content left there or `null` for a path lanser removed —
//! only the latest, so it holds at most one entry per path lanser wrote and git still shows
//! changed (paths committed or reverted since are dropped at the next apply). It is written
//! with a temp file and rename(2) under the workspace lock, so every process that applies
//! (CLI, daemon, batch, MCP) reads a whole record. A file lanser wrote over someone's
//! uncommitted change (with `--allow-dirty`) is not recorded as lanser's: it still holds
//! their work.

use super::Plan;
use crate::digest::sha256_tagged;
use crate::safety::state_dir;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Why the guard cannot say whose the touched files' changes are.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("{} is not inside a git repository; pass --allow-dirty to apply anyway", .0.display())]
    NoRepository(PathBuf),
    #[error("cannot read git status")]
    Status(#[source] git2::Error),
    #[error("refusing to write {first}: it holds uncommitted changes lanser did not make ({count} path(s) the write touches); commit them or pass --allow-dirty")]
    Foreign { first: String, count: usize },
}

/// The record of what lanser left in each path it wrote (root-relative, `/`-separated).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Left {
    /// Path → the digest of the content lanser left there, `None` when it removed the path.
    files: BTreeMap<String, Option<String>>,
}

fn record_path(root: &Path) -> PathBuf {
    state_dir(root, "journal").with_extension("left.json")
}

impl Left {
    /// The record; empty when there is none or it does not parse (nothing is then lanser's).
    fn read(root: &Path) -> Left {
        fs::read(record_path(root))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn owns(&self, rel: &str, now: &Option<String>) -> bool {
        self.files.get(rel) == Some(now)
    }
}

/// What `rel` holds now: its digest, `None` when there is no file.
fn state(root: &Path, rel: &str) -> Option<String> {
    fs::read(root.join(rel)).ok().map(|b| sha256_tagged(&b))
}

/// Every file under `dir` (itself when a file), root-relative; nothing for a missing path.
fn files_under(root: &Path, rel: &str, out: &mut BTreeSet<String>) {
    let abs = root.join(rel);
    if !abs.is_dir() {
        out.insert(rel.to_string());
        return;
    }
    let Ok(entries) = fs::read_dir(&abs) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        files_under(root, &format!("{rel}/{name}"), out);
    }
}

/// The files a plan touches as they stand on disk now: each edited, created, moved or deleted
/// path, a directory's files instead of the directory.
pub fn touched_files(root: &Path, plan: &Plan) -> Vec<String> {
    let mut out = BTreeSet::new();
    for rel in plan.touched() {
        files_under(root, &rel, &mut out);
    }
    out.into_iter().collect()
}

/// The git repository holding `root` and `root`'s path below its worktree's top.
fn open(root: &Path) -> Result<(git2::Repository, String), GuardError> {
    let none = || GuardError::NoRepository(root.to_path_buf());
    let repo = git2::Repository::discover(root).map_err(|_| none())?;
    let top = repo
        .workdir()
        .and_then(|w| crate::workspace::uri::canonical(w).ok())
        .ok_or_else(none)?;
    let prefix = crate::workspace::walk::relative(&top, root).unwrap_or_default();
    Ok((repo, prefix))
}

/// Of `paths` (root-relative files), those git shows changed from HEAD in the worktree or the
/// index, untracked ones included and ignored ones not.
fn changed(root: &Path, paths: &[String]) -> Result<Vec<String>, GuardError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let (repo, prefix) = open(root)?;
    let to_repo = |rel: &str| match prefix.as_str() {
        "" => rel.to_string(),
        p => format!("{p}/{rel}"),
    };
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .disable_pathspec_match(true);
    for p in paths {
        opts.pathspec(to_repo(p));
    }
    let statuses = repo.statuses(Some(&mut opts)).map_err(GuardError::Status)?;
    let wanted: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
    let mut out: Vec<String> = statuses
        .iter()
        .filter(|s| s.status() != git2::Status::CURRENT)
        .filter_map(|s| s.path().ok().map(str::to_string))
        .filter_map(|p| match prefix.as_str() {
            "" => Some(p),
            pre => p.strip_prefix(&format!("{pre}/")).map(str::to_string),
        })
        .filter(|p| wanted.contains(p.as_str()))
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// Of `touched` (root-relative files), those holding changes lanser did not make.
pub fn foreign(root: &Path, touched: &[String]) -> Result<Vec<String>, GuardError> {
    let left = Left::read(root);
    Ok(changed(root, touched)?
        .into_iter()
        .filter(|rel| !left.owns(rel, &state(root, rel)))
        .collect())
}

/// Refuse a write of `plan` when a file it touches holds changes lanser did not make (or there
/// is no git repository to tell).
pub fn require_own(root: &Path, plan: &Plan) -> Result<(), GuardError> {
    let found = foreign(root, &touched_files(root, plan))?;
    match found.first() {
        Some(first) => Err(GuardError::Foreign {
            first: first.clone(),
            count: found.len(),
        }),
        None => Ok(()),
    }
}

/// The touched files before an apply, and which of them held someone else's changes.
pub struct Before {
    files: Vec<String>,
    foreign: BTreeSet<String>,
}

impl Before {
    /// Read under the workspace lock, before anything is written; `None` outside a git
    /// repository (nothing there is recorded).
    pub fn read(root: &Path, plan: &Plan) -> Option<Before> {
        let files = touched_files(root, plan);
        let foreign = foreign(root, &files).ok()?.into_iter().collect();
        Some(Before { files, foreign })
    }

    /// After the apply (the lock still held): record what it left in each file it touched,
    /// except those that held someone else's changes, and forget the paths git shows clean.
    /// A failure only loses the record: the next write of those files is then refused, the
    /// safe side.
    pub fn record(self, root: &Path, plan: &Plan) {
        let mut left = Left::read(root);
        let mut paths: BTreeSet<String> = self.files.into_iter().collect();
        paths.extend(touched_files(root, plan));
        for p in &paths {
            if self.foreign.contains(p) {
                left.files.remove(p);
            } else {
                left.files.insert(p.clone(), state(root, p));
            }
        }
        let keys: Vec<String> = left.files.keys().cloned().collect();
        let Ok(still) = changed(root, &keys) else {
            return;
        };
        let still: BTreeSet<String> = still.into_iter().collect();
        left.files.retain(|p, _| still.contains(p));
        let bytes = serde_json::to_vec(&left).expect("the record serializes");
        let _ = write_whole(&record_path(root), &bytes);
    }
}

/// Write `bytes` to `path` through a temp file beside it and rename(2): a reader sees the old
/// record or the new one, never half of one.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("left.json.tmp-{}", std::process::id()));
    let written = fs::write(&tmp, bytes).and_then(|()| super::disk::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}");
    }

    /// A committed repository holding `pkg/a.py` and `pkg/b.py`; the workspace root is `pkg`
    /// (below the worktree's top) when `nested`.
    fn repo(nested: bool) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let top = crate::workspace::uri::canonical(tmp.path()).unwrap();
        fs::create_dir_all(top.join("pkg")).unwrap();
        fs::write(top.join("pkg/a.py"), "a = 1\n").unwrap();
        fs::write(top.join("pkg/b.py"), "b = 1\n").unwrap();
        git(&top, &["init", "-q"]);
        git(&top, &["add", "-A"]);
        git(&top, &["commit", "-qm", "base"]);
        let root = if nested { top.join("pkg") } else { top };
        (tmp, root)
    }

    /// As an apply of `files` records them, `theirs` holding someone else's changes.
    fn applied(root: &Path, files: &[&str], theirs: &[&str]) {
        Before {
            files: files.iter().map(|f| f.to_string()).collect(),
            foreign: theirs.iter().map(|f| f.to_string()).collect(),
        }
        .record(root, &Plan::default());
    }

    fn of(root: &Path, files: &[&str]) -> Vec<String> {
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        foreign(root, &files).unwrap()
    }

    #[test]
    fn own_writes_pass_and_anyone_elses_are_named() {
        for nested in [false, true] {
            let (_tmp, root) = repo(nested);
            let p = if nested { "" } else { "pkg/" };
            let (a, b, c) = (format!("{p}a.py"), format!("{p}b.py"), format!("{p}c.py"));
            let (a, b, c) = (a.as_str(), b.as_str(), c.as_str());
            assert!(of(&root, &[a, b]).is_empty(), "clean");
            // lanser edits a, creates c, removes b: all its own.
            fs::write(root.join(a), "a = 2\n").unwrap();
            fs::write(root.join(c), "c = 1\n").unwrap();
            fs::remove_file(root.join(b)).unwrap();
            applied(&root, &[a, b, c], &[]);
            assert!(of(&root, &[a, b, c]).is_empty(), "lanser's own");
            // Someone changes a again: named; b and c stay lanser's.
            fs::write(root.join(a), "a = 3\n").unwrap();
            assert_eq!(of(&root, &[a, b, c]), vec![a.to_string()]);
            // Put back as lanser left it: its own again.
            fs::write(root.join(a), "a = 2\n").unwrap();
            assert!(of(&root, &[a]).is_empty());
            // Untracked and modified files the write does not touch are not asked about.
            fs::write(root.join("notes.txt"), "mine\n").unwrap();
            assert!(of(&root, &[c]).is_empty());
            // A file in a directory git has never seen is found too.
            let d = format!("{p}new/d.py");
            fs::create_dir_all(root.join(&d).parent().unwrap()).unwrap();
            fs::write(root.join(&d), "d = 1\n").unwrap();
            assert_eq!(of(&root, &[&d]), vec![d.clone()]);
            applied(&root, &[&d], &[]);
            assert!(of(&root, &[&d, a, b, c]).is_empty());
        }
    }

    #[test]
    fn someone_elses_change_written_over_stays_theirs_and_clean_paths_are_forgotten() {
        let (_tmp, root) = repo(true);
        fs::write(root.join("a.py"), "a = 9  # theirs\n").unwrap();
        assert_eq!(of(&root, &["a.py"]), vec!["a.py".to_string()]);
        // Written with --allow-dirty: the file still holds their work.
        fs::write(root.join("a.py"), "a = 9  # theirs\nx = 1\n").unwrap();
        applied(&root, &["a.py"], &["a.py"]);
        assert_eq!(of(&root, &["a.py"]), vec!["a.py".to_string()]);
        // lanser's write of b, then b reverted to HEAD by hand: clean, and forgotten at the
        // next apply.
        fs::write(root.join("b.py"), "b = 2\n").unwrap();
        applied(&root, &["b.py"], &[]);
        assert!(Left::read(&root).files.contains_key("b.py"));
        git(&root, &["checkout", "--", "b.py"]);
        assert!(of(&root, &["b.py"]).is_empty());
        applied(&root, &[], &[]);
        assert!(Left::read(&root).files.is_empty());
        // A commit makes lanser's write clean too.
        fs::write(root.join("b.py"), "b = 3\n").unwrap();
        applied(&root, &["b.py"], &[]);
        git(&root, &["commit", "-qam", "agent"]);
        fs::write(root.join("b.py"), "b = 4\n").unwrap();
        assert_eq!(of(&root, &["b.py"]), vec!["b.py".to_string()]);
    }

    #[test]
    fn no_repository_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let e = foreign(tmp.path(), &["a.py".to_string()]).unwrap_err();
        assert!(matches!(e, GuardError::NoRepository(_)), "{e}");
    }
}

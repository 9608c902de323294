//! Transactional apply (docs/safety.md#transaction): all files or none.
//!
//! Under the workspace lock: check every file still has the `docVersion` the plan was computed
//! against (else `E/APPLY_CONFLICT` with the hunks, nothing written); write a journal (backups
//! of every file about to change, then an intent list, both fsynced) in the cache; perform each
//! change with a temp file in the target's directory, permissions kept, fsync, rename(2), and
//! a directory fsync; on any failure roll back from the journal. A journal left behind by a
//! killed process is rolled back by the next lanser command on that root ([`recover`]), under
//! the workspace lock. The commit point is one rename(2) of the intent to `committed.json`:
//! a journal past it is finished (deletes made final), not rolled back.
//!
//! Fault injection, in debug builds only (the tests'): `LANSER_TEST_KILL_AT=N` SIGKILLs the
//! process at the Nth step boundary, `LANSER_TEST_FAIL_AT=N` fails it there as a full disk
//! would (ENOSPC), `LANSER_TEST_EACCES=<path suffix>` refuses writing that file (EACCES).
//! The steps: each backup, every journal write, each temp write, its fsync, each rename into
//! place, each move aside, each directory created, the commit, each delete made final.

use super::disk::{fsync_dir, mode_of, rename, set_mode};
use super::{unified, FileChange, Plan};
use crate::digest::sha256_tagged;
use crate::error::{ErrorCode, LanserError, Result};
use crate::safety::{self, pid_alive, state_dir, WorkspaceLock, WriteStamp};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// How the change reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// lanser's own journaled writes.
    Direct,
    /// The plan's diff through `git apply --3way` (text edits only).
    Git,
}

/// One undoable step, recorded before it is taken.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Entry {
    /// `path` held the bytes of `backup` (a file in the journal) with `mode`, or did not
    /// exist (`backup: null`).
    Restore {
        path: PathBuf,
        backup: Option<String>,
        mode: Option<u32>,
    },
    /// `from` was renamed to `to`.
    Renamed { from: PathBuf, to: PathBuf },
    /// `path` was moved aside to `trash` (deletes become real only at commit).
    Trashed { path: PathBuf, trash: PathBuf },
    /// A directory lanser created.
    CreatedDir { path: PathBuf },
}

#[derive(Debug, Serialize, Deserialize)]
struct Intent {
    root: PathBuf,
    pid: u32,
    entries: Vec<Entry>,
}

static STEP: AtomicUsize = AtomicUsize::new(0);

/// A step boundary: where the fault-injection tests may kill the process or fail the step.
fn fault_point() -> Result<()> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    let n = STEP.fetch_add(1, Ordering::SeqCst) + 1;
    let at = |var: &str| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            == Some(n)
    };
    if at("LANSER_TEST_KILL_AT") {
        safety::kill(std::process::id());
        std::thread::sleep(std::time::Duration::from_secs(10));
    }
    if at("LANSER_TEST_FAIL_AT") {
        let e = std::io::Error::from_raw_os_error(28);
        return Err(io(
            &format!("injected fault at step {n}:"),
            Path::new("(write)"),
            e,
        ));
    }
    Ok(())
}

/// Debug builds only: `LANSER_TEST_EACCES=<suffix>` refuses writing any path ending so, as a
/// directory without write permission would (EACCES) for a user other than root.
fn denied(path: &Path) -> Result<()> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    match std::env::var_os("LANSER_TEST_EACCES") {
        Some(s) if !s.is_empty() && path.ends_with(&s) => Err(io(
            "cannot write",
            path,
            std::io::Error::from_raw_os_error(13),
        )),
        _ => Ok(()),
    }
}

/// The file system refused a step of an apply (permissions, a full disk, an I/O error): the
/// documented E/FS_PERMISSIONS (71), after the rollback.
fn io(what: &str, path: &Path, e: std::io::Error) -> LanserError {
    LanserError::new(
        ErrorCode::FsPermissions,
        format!("{what} {}", path.display()),
    )
    .with_source(e)
}

/// The temp file process `pid` writes `path` through, beside it.
fn temp_path(path: &Path, pid: u32) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    dir.join(format!(".{name}.lanser-tmp-{pid}"))
}

/// Write `bytes` to `path` through a temp file in the same directory: permissions `mode`,
/// fsync, rename(2), directory fsync.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = temp_path(path, std::process::id());
    let result = (|| {
        denied(path)?;
        let mut f = fs::File::create(&tmp).map_err(|e| io("cannot write", path, e))?;
        f.write_all(bytes)
            .map_err(|e| io("cannot write", path, e))?;
        fault_point()?; // the temp file written
        if let Some(m) = mode {
            set_mode(&f, m).map_err(|e| io("cannot write", path, e))?;
        }
        f.sync_all().map_err(|e| io("cannot write", path, e))?;
        // Closed before the rename (Windows renames what is open only with delete sharing).
        drop(f);
        fault_point()?; // fsynced, not yet renamed
        rename(&tmp, path).map_err(|e| io("cannot write", path, e))
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fault_point()?; // renamed, the directory not yet fsynced
    fsync_dir(dir);
    Ok(())
}

struct Journal {
    dir: PathBuf,
    intent: Intent,
}

impl Journal {
    fn path(root: &Path) -> PathBuf {
        state_dir(root, "journal")
    }

    /// Back up every existing file in `paths` and write the intent, before anything changes.
    fn begin(root: &Path, paths: &[PathBuf]) -> Result<Journal> {
        let dir = Self::path(root);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| io("cannot create journal", &dir, e))?;
        let entries = match Self::back_up(&dir, paths) {
            Ok(e) => e,
            Err(e) => {
                // Nothing was touched yet: no journal to leave behind.
                let _ = fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let mut j = Journal {
            dir,
            intent: Intent {
                root: root.to_path_buf(),
                pid: std::process::id(),
                entries,
            },
        };
        if let Err(e) = j.save() {
            let _ = fs::remove_dir_all(&j.dir);
            return Err(e);
        }
        Ok(j)
    }

    /// A copy of every existing file of `paths` in the journal, fsynced.
    fn back_up(dir: &Path, paths: &[PathBuf]) -> Result<Vec<Entry>> {
        let mut entries = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            match fs::metadata(p) {
                Ok(meta) if meta.is_file() => {
                    let name = format!("backup-{i}");
                    let bytes = fs::read(p).map_err(|e| io("cannot back up", p, e))?;
                    let b = dir.join(&name);
                    let mut f = fs::File::create(&b).map_err(|e| io("cannot back up", &b, e))?;
                    f.write_all(&bytes)
                        .and_then(|_| f.sync_all())
                        .map_err(|e| io("cannot back up", &b, e))?;
                    entries.push(Entry::Restore {
                        path: p.clone(),
                        backup: Some(name),
                        mode: mode_of(&meta),
                    });
                }
                Ok(_) => {}
                Err(_) => entries.push(Entry::Restore {
                    path: p.clone(),
                    backup: None,
                    mode: None,
                }),
            }
            fault_point()?;
        }
        Ok(entries)
    }

    fn save(&mut self) -> Result<()> {
        let bytes = serde_json::to_vec(&self.intent).expect("intent serializes");
        write_atomic(&self.dir.join(INTENT), &bytes, None)
    }

    fn record(&mut self, e: Entry) -> Result<()> {
        self.intent.entries.push(e);
        self.save()
    }

    /// Undo every entry, newest first; then forget the journal.
    fn rollback(self) -> Result<usize> {
        let n = rollback_entries(&self.dir, &self.intent.entries)?;
        // The intent first: a journal directory without it holds nothing to act on.
        if fs::remove_file(self.dir.join(INTENT)).is_ok() {
            let _ = fs::remove_dir_all(&self.dir);
        }
        Ok(n)
    }

    /// The commit point: the intent becomes `committed.json` (one rename(2), then a directory
    /// fsync). Before it, a crash rolls the apply back; after it, the next command finishes
    /// it ([`finish`]) instead.
    fn mark_committed(&self) -> Result<()> {
        let (intent, done) = (self.dir.join(INTENT), self.dir.join(COMMITTED));
        rename(&intent, &done).map_err(|e| io("cannot commit", &intent, e))?;
        fsync_dir(&self.dir);
        Ok(())
    }
}

const INTENT: &str = "intent.json";
const COMMITTED: &str = "committed.json";

/// After the commit point: make deletes final and forget the journal. An interruption (a
/// kill, a failed removal) leaves the committed journal for the next command to finish; the
/// apply has happened either way.
fn finish(dir: &Path, entries: &[Entry]) {
    let done = (|| -> Result<()> {
        fault_point()?; // committed, nothing cleaned up
        for e in entries {
            if let Entry::Trashed { trash, .. } = e {
                if trash.exists() {
                    fs::remove_dir_all(trash)
                        .or_else(|_| fs::remove_file(trash))
                        .map_err(|e| io("cannot delete", trash, e))?;
                    fault_point()?; // one delete made final
                }
            }
        }
        Ok(())
    })();
    if done.is_err() {
        return;
    }
    // The record goes first, so a journal directory without it holds nothing to act on.
    if fs::remove_file(dir.join(COMMITTED)).is_ok() {
        let _ = fs::remove_dir_all(dir);
    }
    if let Some(parent) = dir.parent() {
        fsync_dir(parent);
    }
}

fn rollback_entries(dir: &Path, entries: &[Entry]) -> Result<usize> {
    let mut restored = 0;
    // Directories lanser created go last: files restored to "absent" (a new `__init__.py`)
    // must leave them first.
    let (dirs, rest): (Vec<&Entry>, Vec<&Entry>) = entries
        .iter()
        .partition(|e| matches!(e, Entry::CreatedDir { .. }));
    for e in rest.into_iter().rev().chain(dirs.into_iter().rev()) {
        match e {
            Entry::Restore { path, backup, mode } => match backup {
                Some(name) => {
                    let old =
                        fs::read(dir.join(name)).map_err(|e| io("cannot read backup", path, e))?;
                    if fs::read(path).ok().as_deref() != Some(&old[..]) {
                        write_atomic(path, &old, *mode)?;
                        restored += 1;
                    }
                }
                None => {
                    if path.is_file() {
                        fs::remove_file(path).map_err(|e| io("cannot remove", path, e))?;
                        restored += 1;
                    }
                }
            },
            Entry::Renamed { from, to } => {
                if to.exists() && !from.exists() {
                    rename(to, from).map_err(|e| io("cannot rename back", to, e))?;
                    restored += 1;
                }
            }
            Entry::Trashed { path, trash } => {
                if trash.exists() && !path.exists() {
                    rename(trash, path).map_err(|e| io("cannot restore", path, e))?;
                    restored += 1;
                }
            }
            Entry::CreatedDir { path } => {
                let _ = fs::remove_dir(path);
            }
        }
    }
    Ok(restored)
}

/// Roll back a journal left by a process that died mid-apply. Returns how many paths were
/// restored, if there was such a journal.
///
/// A journal past its commit point is finished instead (its deletes made final), silently:
/// `None`, as the apply did happen. Recovery runs under the workspace lock, and not at all
/// while another process holds it (that apply recovers first itself).
pub fn recover(root: &Path) -> Result<Option<usize>> {
    if !Journal::path(root).exists() {
        return Ok(None);
    }
    match WorkspaceLock::try_acquire(root)? {
        Some(lock) => recover_locked(root, &lock),
        None => Ok(None),
    }
}

/// [`recover`], saying on stderr when an interrupted apply was rolled back (every route runs
/// this before it reads the workspace).
pub fn recover_and_report(root: &Path) -> Result<()> {
    if let Some(n) = recover(root)? {
        eprintln!("lanser: rolled back an interrupted apply ({n} paths restored)");
    }
    Ok(())
}

fn read_intent(path: &Path) -> Option<Intent> {
    fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// [`recover`], the lock held.
fn recover_locked(root: &Path, lock: &WorkspaceLock) -> Result<Option<usize>> {
    let dir = Journal::path(root);
    if !dir.exists() {
        return Ok(None);
    }
    if let Some(i) = read_intent(&dir.join(COMMITTED)) {
        if pid_alive(i.pid) && i.pid != std::process::id() {
            return Ok(None);
        }
        finish(&dir, &i.entries);
        return Ok(None);
    }
    match read_intent(&dir.join(INTENT)) {
        Some(i) if pid_alive(i.pid) && i.pid != std::process::id() => Ok(None),
        Some(mut i) => {
            // A temp file the killed process was writing, not yet renamed into place (first:
            // it may sit in a directory the rollback removes).
            for e in &i.entries {
                if let Entry::Restore { path, .. } = e {
                    let _ = fs::remove_file(temp_path(path, i.pid));
                }
            }
            // This process takes the journal over: if it dies rolling back, the next one
            // removes its temp files.
            lock.mark_writing()?;
            let mut j = Journal {
                dir: dir.clone(),
                intent: Intent {
                    pid: std::process::id(),
                    entries: std::mem::take(&mut i.entries),
                    ..i
                },
            };
            j.save()?;
            Ok(Some(j.rollback()?))
        }
        // Killed before the intent was written: nothing had been touched yet.
        None => {
            let _ = fs::remove_dir_all(&dir);
            Ok(Some(0))
        }
    }
}

/// What an apply did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Relative paths written, created, renamed or deleted.
    pub paths: Vec<String>,
}

/// Check that nothing changed since the preview and that every target is writable.
fn verify(plan: &Plan) -> Result<()> {
    let mut conflicts = Vec::new();
    for c in &plan.changes {
        if let FileChange::Edit { doc, .. } = c {
            let now = fs::read(&doc.abs).map_err(|e| io("cannot read", &doc.abs, e))?;
            if sha256_tagged(&now) != doc.doc_version {
                let current = String::from_utf8_lossy(&now);
                conflicts.push(json!({
                    "path": doc.rel,
                    "expected": doc.doc_version,
                    "found": sha256_tagged(&now),
                    "hunks": unified(&doc.rel, &doc.text, &current),
                }));
                continue;
            }
            let meta = fs::metadata(&doc.abs).map_err(|e| io("cannot stat", &doc.abs, e))?;
            if meta.permissions().readonly() {
                return Err(LanserError::new(
                    ErrorCode::FsPermissions,
                    format!(
                        "refusing to write {}: the file is read-only; nothing was applied",
                        doc.rel
                    ),
                ));
            }
        }
    }
    if let Some(first) = conflicts.first() {
        let mut err = LanserError::new(
            ErrorCode::ApplyConflict,
            format!(
                "{} changed since the preview ({} file(s) in conflict); nothing was applied",
                first["path"].as_str().unwrap_or_default(),
                conflicts.len()
            ),
        );
        err.details = Some(json!({ "conflicts": conflicts }));
        return Err(err);
    }
    Ok(())
}

/// Apply `plan` under the workspace lock, all or nothing. `since`: the workspace's write stamp
/// before the server that computed the plan read the files, if one did (refused when another
/// apply has written since).
pub fn apply(root: &Path, plan: &Plan, mode: Mode, since: Option<&WriteStamp>) -> Result<Applied> {
    let lock = WorkspaceLock::acquire(root)?;
    recover_locked(root, &lock)?;
    if since.is_some_and(|s| *s != WriteStamp::read(root)) {
        return Err(LanserError::new(
            ErrorCode::ApplyConflict,
            "another apply wrote to the workspace after the server read it for this plan, so its edits may be against text that is no longer there; nothing was applied",
        ));
    }
    verify(plan)?;
    // Which touched files held someone else's changes, for the record of lanser's own.
    let before = super::owned::Before::read(root, plan);
    for c in &plan.changes {
        if let FileChange::Rename { from, to, .. } = c {
            safety::check_case_only_rename(from, to)?;
        }
    }
    let touched: Vec<PathBuf> = plan
        .changes
        .iter()
        .flat_map(|c| match c {
            FileChange::Edit { doc, .. } => vec![doc.abs.clone()],
            FileChange::Create { abs, .. } => vec![abs.clone()],
            FileChange::Rename { .. } | FileChange::Delete { .. } => vec![],
        })
        .collect();
    lock.mark_writing()?;
    let mut journal = Journal::begin(root, &touched)?;
    let result = fault_point().and_then(|_| match mode {
        Mode::Direct => execute(plan, &mut journal),
        Mode::Git => super::git_mode::git_apply(root, plan),
    });
    match result
        .and_then(|_| fault_point())
        .and_then(|_| journal.mark_committed())
    {
        Ok(()) => {
            finish(&journal.dir, &journal.intent.entries);
            if let Some(b) = before {
                b.record(root, plan);
            }
            Ok(Applied {
                paths: plan.touched(),
            })
        }
        Err(e) => {
            journal.rollback()?;
            Err(e)
        }
    }
}

fn exists_error(rel: &str) -> LanserError {
    LanserError::new(
        ErrorCode::ApplyConflict,
        format!("{rel} already exists; nothing was applied"),
    )
}

fn execute(plan: &Plan, journal: &mut Journal) -> Result<()> {
    for c in &plan.changes {
        match c {
            FileChange::Edit { doc, new_text, .. } => {
                let mode = fs::metadata(&doc.abs).ok().and_then(|m| mode_of(&m));
                write_atomic(&doc.abs, new_text.as_bytes(), mode)?;
            }
            FileChange::Create {
                rel,
                abs,
                overwrite,
                ignore_if_exists,
            } => {
                if abs.exists() && !overwrite {
                    if *ignore_if_exists {
                        continue;
                    }
                    return Err(exists_error(rel));
                }
                create_parents(abs, journal)?;
                write_atomic(abs, b"", None)?;
            }
            FileChange::Rename {
                to_rel,
                from,
                to,
                overwrite,
                ignore_if_exists,
                ..
            } => {
                if to.exists() {
                    if *ignore_if_exists && !overwrite {
                        continue;
                    }
                    if !overwrite {
                        return Err(exists_error(to_rel));
                    }
                    trash(to, journal)?;
                }
                create_parents(to, journal)?;
                journal.record(Entry::Renamed {
                    from: from.clone(),
                    to: to.clone(),
                })?;
                fault_point()?;
                rename(from, to).map_err(|e| io("cannot rename", from, e))?;
                if let Some(p) = to.parent() {
                    fsync_dir(p);
                }
            }
            FileChange::Delete {
                rel,
                abs,
                recursive,
                ignore_if_not_exists,
            } => {
                if !abs.exists() {
                    if *ignore_if_not_exists {
                        continue;
                    }
                    return Err(LanserError::not_found(format!(
                        "{rel} does not exist; nothing was applied"
                    )));
                }
                if abs.is_dir()
                    && !recursive
                    && fs::read_dir(abs)
                        .map(|mut d| d.next().is_some())
                        .unwrap_or(false)
                {
                    return Err(LanserError::new(
                        ErrorCode::ApplyConflict,
                        format!("{rel} is a non-empty directory and the delete is not recursive"),
                    ));
                }
                trash(abs, journal)?;
            }
        }
        fault_point()?;
    }
    Ok(())
}

/// Move `path` aside in its own directory; the journal makes it real at commit.
fn trash(path: &Path, journal: &mut Journal) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let trash = path.with_file_name(format!(".{name}.lanser-trash-{}", std::process::id()));
    journal.record(Entry::Trashed {
        path: path.to_path_buf(),
        trash: trash.clone(),
    })?;
    fault_point()?;
    rename(path, &trash).map_err(|e| io("cannot move aside", path, e))
}

fn create_parents(path: &Path, journal: &mut Journal) -> Result<()> {
    let mut missing = Vec::new();
    let mut p = path.parent();
    while let Some(dir) = p {
        if dir.exists() {
            break;
        }
        missing.push(dir.to_path_buf());
        p = dir.parent();
    }
    for dir in missing.into_iter().rev() {
        journal.record(Entry::CreatedDir { path: dir.clone() })?;
        fs::create_dir(&dir).map_err(|e| io("cannot create", &dir, e))?;
    }
    Ok(())
}

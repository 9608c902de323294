//! The safety envelope around every write (docs/safety.md): the workspace jail (after
//! resolving symlinks), `--allow`/`--deny` globs, the per-workspace lock, and the
//! case-only-rename check for case-insensitive file systems; and the few questions about other
//! processes they need (alive? which command? kill), per OS. The uncommitted-changes guard is
//! `edits::owned`'s.
//!
//! Every refusal is `E/FS_PERMISSIONS` (exit 71) with a message naming the path and the rule.

use crate::digest::sha256_hex;
use crate::error::{ErrorCode, LanserError, Result};
use crate::workspace::{uri_to_path, Workspace};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A refusal of the write path (`E/FS_PERMISSIONS`).
pub fn refuse(message: String) -> LanserError {
    LanserError::new(ErrorCode::FsPermissions, message)
}

/// Which paths a mutation may touch.
#[derive(Debug, Clone)]
pub struct Jail {
    pub root: PathBuf,
    allow: Vec<glob::Pattern>,
    deny: Vec<glob::Pattern>,
}

impl Jail {
    pub fn new(ws: &Workspace, allow: &[String], deny: &[String]) -> Result<Jail> {
        let compile = |globs: &[String], flag: &str| -> Result<Vec<glob::Pattern>> {
            globs
                .iter()
                .map(|g| {
                    glob::Pattern::new(g).map_err(|e| {
                        LanserError::usage(format!("bad --{flag} glob {g}")).with_source(e)
                    })
                })
                .collect()
        };
        Ok(Jail {
            root: ws.root.clone(),
            allow: compile(allow, "allow")?,
            deny: compile(deny, "deny")?,
        })
    }

    /// A `file://` URI the server wants to touch → (canonical absolute path, relative path).
    pub fn check_uri(&self, uri: &str) -> Result<(PathBuf, String)> {
        let path = uri_to_path(uri)
            .ok_or_else(|| refuse(format!("refusing to touch {uri}: not a file:// URI")))?;
        self.check_path(&path)
    }

    /// Resolve symlinks in the longest existing prefix, refuse `..` in the rest, and require
    /// the result inside the root and through the filters.
    pub fn check_path(&self, path: &Path) -> Result<(PathBuf, String)> {
        let shown = path.display().to_string();
        let mut existing = path.to_path_buf();
        let mut rest = Vec::new();
        while !existing.exists() {
            let Some(name) = existing.file_name() else {
                break;
            };
            rest.push(name.to_os_string());
            if !existing.pop() {
                break;
            }
        }
        if path.components().any(|c| matches!(c, Component::ParentDir)) && !rest.is_empty() {
            return Err(refuse(format!(
                "refusing to touch {shown}: '..' in a path that does not exist yet"
            )));
        }
        let mut resolved = crate::workspace::uri::canonical(&existing)
            .map_err(|e| refuse(format!("refusing to touch {shown}")).with_source(e))?;
        for part in rest.iter().rev() {
            resolved.push(part);
        }
        // Inside the root by its components (whatever their case where the file system
        // ignores it), named by the relative POSIX path.
        let Some(rel) = crate::workspace::walk::relative(&self.root, &resolved) else {
            return Err(refuse(format!(
                "refusing to touch {shown}: outside the workspace {} (after resolving symlinks)",
                self.root.display()
            )));
        };
        if rel.is_empty() {
            return Err(refuse(format!(
                "refusing to touch the workspace root {shown}"
            )));
        }
        // Where the file system ignores case, so do the globs: `SRC/Gen/x.py` is `src/gen/x.py`.
        let opts = glob::MatchOptions {
            case_sensitive: !crate::workspace::uri::Style::NATIVE.fold_case,
            ..glob::MatchOptions::new()
        };
        if let Some(g) = self.deny.iter().find(|g| g.matches_with(&rel, opts)) {
            return Err(refuse(format!(
                "refusing to touch {rel}: denied by --deny {}",
                g.as_str()
            )));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|g| g.matches_with(&rel, opts)) {
            return Err(refuse(format!(
                "refusing to touch {rel}: matched by no --allow glob"
            )));
        }
        Ok((resolved, rel))
    }
}

/// Whether the file system holding `dir` ignores case.
pub fn case_insensitive(dir: &Path) -> bool {
    let probe = dir.join(format!(".lanser-case-probe-{}", std::process::id()));
    if std::fs::write(&probe, b"").is_err() {
        return false;
    }
    let upper = dir.join(format!(".LANSER-CASE-PROBE-{}", std::process::id()));
    let insensitive = upper.exists();
    let _ = std::fs::remove_file(&probe);
    insensitive
}

/// Refuse a rename that changes only the case of a name on a case-insensitive file system.
pub fn check_case_only_rename(from: &Path, to: &Path) -> Result<()> {
    let (f, t) = (from.to_string_lossy(), to.to_string_lossy());
    if f != t && f.to_lowercase() == t.to_lowercase() {
        let dir = to.parent().unwrap_or(Path::new("."));
        if case_insensitive(dir) {
            return Err(refuse(format!(
                "refusing the case-only rename {f} -> {t} on a case-insensitive file system"
            )));
        }
    }
    Ok(())
}

/// Per-workspace state directory in the cache: `$LANSER_HOME/<kind>/<hash of root>`.
pub fn state_dir(root: &Path, kind: &str) -> PathBuf {
    let hash = sha256_hex(root.to_string_lossy().as_bytes());
    crate::home::lanser_home().join(kind).join(&hash[..16])
}

/// Whether a process with this pid is alive: `/proc/<pid>` on Linux, else what `kill -0`
/// (other Unixes) or `tasklist` (Windows) says.
pub fn pid_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        return Path::new(&format!("/proc/{pid}")).exists();
    }
    if cfg!(windows) {
        // One CSV row per match, the pid quoted in its second column; none when no match.
        let filter = format!("PID eq {pid}");
        return Command::new("tasklist")
            .args(["/FI", &filter, "/FO", "CSV", "/NH"])
            .stderr(Stdio::null())
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&format!("\"{pid}\"")));
    }
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Kill process `pid` at once (SIGKILL; `taskkill /F` on Windows).
pub fn kill(pid: u32) {
    let pid = pid.to_string();
    let _ = if cfg!(windows) {
        Command::new("taskkill")
            .args(["/F", "/PID", &pid])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
    } else {
        Command::new("kill").args(["-9", &pid]).status()
    };
}

/// The command line process `pid` runs: `/proc/<pid>/cmdline` on Linux, else as `ps` (other
/// Unixes) or PowerShell's `Win32_Process` (Windows) show it, split at white space.
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    if cfg!(target_os = "linux") {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        return Some(
            raw.split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect(),
        );
    }
    let out = if cfg!(windows) {
        let query =
            format!("(Get-CimInstance Win32_Process -Filter 'ProcessId={pid}').CommandLine");
        Command::new("powershell")
            .args(["-NoProfile", "-NonInteractive", "-Command", &query])
            .stderr(Stdio::null())
            .output()
            .ok()?
    } else {
        Command::new("ps")
            .args(["-o", "command=", "-p", &pid.to_string()])
            .stderr(Stdio::null())
            .output()
            .ok()?
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    (out.status.success() && !args.is_empty()).then_some(args)
}

/// How long an apply waits for another one on the same workspace.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// An exclusive per-workspace lock held for the length of an apply; released on drop.
pub struct WorkspaceLock {
    path: PathBuf,
}

impl WorkspaceLock {
    pub fn acquire(root: &Path) -> Result<WorkspaceLock> {
        Self::acquire_within(root, LOCK_WAIT)?.ok_or_else(|| {
            refuse(format!(
                "another lanser apply holds the lock on {}",
                root.display()
            ))
        })
    }

    /// The lock if no live process holds it now (a stale one is taken over), without waiting
    /// for another apply to finish.
    pub fn try_acquire(root: &Path) -> Result<Option<WorkspaceLock>> {
        Self::acquire_within(root, Duration::ZERO)
    }

    /// The lock, waiting up to `wait` for a live holder; `None` when it still holds it.
    fn acquire_within(root: &Path, wait: Duration) -> Result<Option<WorkspaceLock>> {
        let path = state_dir(root, "locks").with_extension("lock");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                refuse(format!("cannot create {}", parent.display())).with_source(e)
            })?;
        }
        let started = Instant::now();
        loop {
            match create_holding_pid(&path) {
                Ok(()) => return Ok(Some(WorkspaceLock { path })),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok());
                    match holder {
                        Some(pid) if pid_alive(pid) => {
                            if wait.is_zero() {
                                return Ok(None);
                            }
                            if started.elapsed() > wait {
                                return Err(refuse(format!(
                                    "another lanser apply (pid {pid}) holds the lock on {}",
                                    root.display()
                                )));
                            }
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        // Left by a process that died, or half-written: take it over.
                        _ => {
                            if started.elapsed() > Duration::from_millis(200) || holder.is_some() {
                                let _ = std::fs::remove_file(&path);
                            } else {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                    }
                }
                Err(e) => {
                    return Err(refuse(format!("cannot lock {}", path.display())).with_source(e))
                }
            }
        }
    }
}

/// Create `path` holding this process's pid, or fail with `AlreadyExists`. The pid is written
/// to a file of this call's own first and hard-linked into place, so the lock is never seen
/// empty: a holder stalled between creating the file and writing its pid (a loaded machine)
/// would otherwise be taken for a dead one after 200 ms and two applies would hold the lock.
/// Where the file system has no hard links, the file is created and then written.
fn create_holding_pid(path: &Path) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let pid = std::process::id();
    let n = SEQ.fetch_add(1, Ordering::SeqCst);
    let tmp = path.with_extension(format!("lock-{pid}-{n}"));
    let linked =
        std::fs::write(&tmp, pid.to_string()).and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists && !path.exists() => {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            write!(f, "{pid}")
        }
        other => other,
    }
}

impl WorkspaceLock {
    /// Replace the workspace's [`WriteStamp`] with a new token: what an apply (or the rollback
    /// of one) does, holding the lock, before it writes anything.
    pub fn mark_writing(&self) -> Result<()> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let path = self.path.with_extension(STAMP_EXT);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let pid = std::process::id();
        let token = format!("{pid} {nanos} {}", SEQ.fetch_add(1, Ordering::SeqCst));
        let tmp = path.with_extension(format!("{STAMP_EXT}-{pid}"));
        std::fs::write(&tmp, token)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                refuse(format!("cannot write {}", path.display())).with_source(e)
            })
    }
}

/// The extension of a workspace's write stamp, beside its lock.
const STAMP_EXT: &str = "written";

/// A workspace's write stamp: a token that every apply, and every rollback of one, replaces
/// under the lock before it writes ([`WorkspaceLock::mark_writing`]). A command whose edits a
/// server computes reads it before the server reads the files; its apply refuses
/// (`E/APPLY_CONFLICT`) when the stamp has moved since: another apply wrote while the server
/// read or computed, so the edits may be against text that no longer is. The per-file
/// `docVersion` check cannot see that, as the plan reads the files after the server answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteStamp(String);

impl WriteStamp {
    /// The stamp of the workspace at `root` now (empty before its first apply).
    pub fn read(root: &Path) -> WriteStamp {
        let path = state_dir(root, "locks").with_extension(STAMP_EXT);
        WriteStamp(std::fs::read_to_string(path).unwrap_or_default())
    }
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn jail_refuses_escapes_and_applies_filters() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "x").unwrap();
        let outside = tmp.path().join("secret.py");
        std::fs::write(&outside, "s").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("src/link.py")).unwrap();
        let ws = Workspace::new(root.canonicalize().unwrap());
        let jail = Jail::new(&ws, &[], &["src/gen/*".into()]).unwrap();
        assert_eq!(
            jail.check_path(&ws.root.join("src/a.py")).unwrap().1,
            "src/a.py"
        );
        assert_eq!(
            jail.check_path(&ws.root.join("src/new.py")).unwrap().1,
            "src/new.py"
        );
        for bad in [
            ws.root.join("../secret.py"),
            outside.clone(),
            ws.root.join("src/link.py"),
            ws.root.join("src/nope/../../../x.py"),
            ws.root.join("src/gen/out.py"),
        ] {
            let e = jail.check_path(&bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::FsPermissions, "{}", bad.display());
        }
        let only_tests = Jail::new(&ws, &["tests/**".into()], &[]).unwrap();
        assert!(only_tests.check_path(&ws.root.join("src/a.py")).is_err());
    }

    #[test]
    fn lock_is_exclusive_and_released() {
        let tmp = tempfile::tempdir().unwrap();
        let a = WorkspaceLock::acquire(tmp.path()).unwrap();
        let path = a.path.clone();
        assert!(path.exists());
        drop(a);
        assert!(!path.exists());
        // A lock left by a dead process is taken over.
        std::fs::write(&path, "999999999").unwrap();
        let b = WorkspaceLock::acquire(tmp.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&b.path).unwrap(),
            std::process::id().to_string()
        );
    }

    #[test]
    fn the_lock_is_held_by_one_at_a_time() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let inside = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10 {
                        let lock = WorkspaceLock::acquire(&root).unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        let held = std::fs::read_to_string(&lock.path).unwrap();
                        assert_eq!(held, std::process::id().to_string());
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        // No file of this root's lock left beside it (its temp files are removed).
        let base = state_dir(&root, "locks");
        let stem = base.file_name().unwrap().to_string_lossy().into_owned();
        let left: Vec<String> = std::fs::read_dir(base.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&stem))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn every_write_moves_the_stamp() {
        let tmp = tempfile::tempdir().unwrap();
        let before = WriteStamp::read(tmp.path());
        let lock = WorkspaceLock::acquire(tmp.path()).unwrap();
        assert_eq!(WriteStamp::read(tmp.path()), before);
        lock.mark_writing().unwrap();
        let first = WriteStamp::read(tmp.path());
        assert_ne!(first, before);
        lock.mark_writing().unwrap();
        assert_ne!(WriteStamp::read(tmp.path()), first);
        let _ = std::fs::remove_file(lock.path.with_extension(STAMP_EXT));
    }
}

//! `--apply-mode git`: the plan's diff through `git apply --3way`, inside [`super::apply`]'s
//! transaction (its journal restores every file if git fails half-way).

use super::{FileChange, Plan};
use crate::error::{ErrorCode, LanserError, Result};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// The plan's diff through `git apply --3way`; the journal restores every file if git fails
/// half-way (a 3-way conflict leaves markers in the worktree otherwise).
pub(super) fn git_apply(root: &Path, plan: &Plan) -> Result<()> {
    let patch = match &plan.git_patch {
        Some(p) => p.clone(),
        None if plan
            .changes
            .iter()
            .any(|c| !matches!(c, FileChange::Edit { .. })) =>
        {
            return Err(LanserError::usage(
                "--apply-mode git applies text edits only; this change creates, renames or deletes files",
            ));
        }
        None => plan.diff(),
    };
    let repo = git2::Repository::discover(root).map_err(|_| {
        LanserError::new(
            ErrorCode::FsPermissions,
            "--apply-mode git needs a git repository",
        )
    })?;
    let top = repo
        .workdir()
        .and_then(|w| crate::workspace::uri::canonical(w).ok())
        .ok_or_else(|| LanserError::usage("--apply-mode git needs a repository with a worktree"))?;
    // The root below the worktree's top, `/`-separated as git reads it on every platform.
    let prefix = crate::workspace::walk::relative(&top, root).unwrap_or_default();
    let mut cmd = Command::new("git");
    cmd.current_dir(&top)
        .args(["apply", "--3way", "--whitespace=nowarn"]);
    if !prefix.is_empty() {
        cmd.arg(format!("--directory={prefix}"));
    }
    let mut child = cmd
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| LanserError::internal("cannot run git").with_source(e))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(patch.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| LanserError::internal("git apply did not finish").with_source(e))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let first = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("git apply failed");
    let mut err = LanserError::new(
        ErrorCode::ApplyConflict,
        format!("git apply --3way failed: {first}; nothing was applied"),
    );
    err.details = Some(json!({
        "git": stderr.lines().collect::<Vec<_>>(),
        "hunks": patch,
    }));
    Err(err)
}

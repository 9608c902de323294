//! What every mutating command shares: the mutation flags, turning a server WorkspaceEdit
//! into a previewed plan, and applying it through the safety envelope (readiness, ambiguity,
//! uncommitted changes in the files it touches, jail and filters, lock, transaction) before
//! telling the server about the new text.

use crate::bundle::{Edits, Resolution};
use crate::edits::apply::{self, Mode};
use crate::edits::{owned, FileChange, Plan};
use crate::error::{ErrorCode, LanserError, Result};
use crate::measure::speculate;
use crate::orchestrator::Ctx;
use crate::reward::Measured;
use crate::safety::{self, Jail, WriteStamp};
use crate::selector::resolve::Document;
use crate::workspace::path_to_uri;
use lsp_types::notification::DidSaveTextDocument;
use lsp_types::{DidSaveTextDocumentParams, FileChangeType, WorkspaceEdit};
use std::path::PathBuf;

/// The safety envelope's flags, shared by every mutating command.
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MutationFlags {
    /// Preview only (the default for rename; with code-actions --apply, preview that action)
    #[arg(long)]
    // Not in `request.args` (`super::NOT_ARGS`): it only turns `apply` off, which the
    // command's `apply` says (rename and rename-file refuse --apply with --dry-run;
    // code-actions folds it in).
    pub dry_run: bool,
    /// How to write: lanser's journaled transaction (direct) or `git apply --3way` (git)
    #[arg(long, default_value = "direct", value_parser = ["direct", "git"])]
    pub apply_mode: String,
    /// Apply even when a file it touches holds uncommitted changes lanser did not make (or
    /// there is no repository)
    #[arg(long)]
    pub allow_dirty: bool,
    /// Only paths matching one of these globs (workspace-relative) may be touched
    #[arg(long, value_name = "GLOB")]
    pub allow: Vec<String>,
    /// Paths matching any of these globs may not be touched
    #[arg(long, value_name = "GLOB")]
    pub deny: Vec<String>,
    /// Refuse to apply when the selector resolved only ambiguously
    #[arg(long)]
    pub deny_apply_on_ambiguous: bool,
}

impl MutationFlags {
    /// Whether the command writes: its own "write it" flag, unless `--dry-run`.
    pub fn writes(&self, apply: bool) -> bool {
        apply && !self.dry_run
    }

    /// The flags as the envelope reads them; `apply` is the command's own "write it" flag.
    pub fn args(&self, apply: bool) -> MutationArgs {
        MutationArgs {
            apply: self.writes(apply),
            git_mode: self.apply_mode == "git",
            allow_dirty: self.allow_dirty,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            deny_apply_on_ambiguous: self.deny_apply_on_ambiguous,
            since: None,
        }
    }
}

/// The flags of a mutating command, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MutationArgs {
    /// Write the change (default: preview only).
    pub apply: bool,
    pub git_mode: bool,
    pub allow_dirty: bool,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub deny_apply_on_ambiguous: bool,
    /// The workspace's write stamp before the server read the files, when a server computes
    /// the edits: the apply refuses if another one has written since ([`WriteStamp`]).
    pub since: Option<WriteStamp>,
}

impl MutationArgs {
    /// These flags for a command whose edits a server computes: with `--apply`, the
    /// workspace's write stamp taken now, before the command has its server read the files.
    pub fn served(mut self, o: &Ctx<'_>) -> MutationArgs {
        if self.apply {
            self.since = Some(WriteStamp::read(&o.ws().root));
        }
        self
    }
}

/// A server WorkspaceEdit as a checked plan (jail and filters already applied).
pub fn plan(o: &Ctx<'_>, m: &MutationArgs, edit: WorkspaceEdit) -> Result<Plan> {
    #[cfg(debug_assertions)]
    pause_before_plan();
    let jail = Jail::new(o.ws(), &m.allow, &m.deny)?;
    Plan::from_workspace_edit(&jail, edit, o.encoding())
}

/// Debug builds only: with `LANSER_TEST_PAUSE_BEFORE_PLAN=<path>` in its environment, a
/// process creates `<path>.waiting` once the server has answered and waits (up to ten minutes)
/// for `<path>` to exist before it reads the files for the plan: another process's apply
/// landing between the two, on demand, for tests.
#[cfg(debug_assertions)]
fn pause_before_plan() {
    let Some(go) = std::env::var_os("LANSER_TEST_PAUSE_BEFORE_PLAN").map(PathBuf::from) else {
        return;
    };
    let mut waiting = go.clone().into_os_string();
    waiting.push(".waiting");
    let _ = std::fs::write(&waiting, b"");
    for _ in 0..60_000 {
        if go.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The bundle's `edits` block for a plan.
pub fn edits_of(plan: &Plan) -> Edits {
    Edits {
        workspace_edit: Some(plan.to_json()),
        diff: Some(plan.diff()),
    }
}

/// The safety checks of a prospective apply of `plan`, without writing: readiness, ambiguity,
/// the uncommitted-changes guard (the jail and filters already passed when the plan was built).
pub fn check_safety(
    o: &Ctx<'_>,
    m: &MutationArgs,
    plan: &Plan,
    complete: bool,
    resolution: Option<&Resolution>,
) -> Result<()> {
    if !complete {
        return Err(LanserError::new(
            ErrorCode::LsTimeout,
            "refusing to apply: the server had not finished loading the project, so its answer may be partial; nothing was applied",
        ));
    }
    if m.deny_apply_on_ambiguous && resolution.is_some_and(|r| r.ambiguous) {
        return Err(LanserError::new(
            ErrorCode::Ambiguous,
            "refusing to apply: the selector resolved ambiguously and --deny-apply-on-ambiguous is set; nothing was applied",
        ));
    }
    if !m.allow_dirty {
        own_changes_only(o, plan)?;
    }
    Ok(())
}

/// The uncommitted-changes guard: no file the plan touches may hold changes lanser did not
/// make ([`owned`]). Read through the run's inputs: a trace records its verdict, so a replay
/// (over a scratch copy that is no git worktree) is served the recorded one.
fn own_changes_only(o: &Ctx<'_>, plan: &Plan) -> Result<()> {
    let root = o.ws().root.clone();
    let mut refused = None;
    let verdict = o.opts().inputs.read_to_string("git:clean", ".", || {
        owned::require_own(&root, plan)
            .map(|()| Vec::new())
            .map_err(|e| {
                let e = LanserError::keeping_chain(ErrorCode::FsPermissions, e);
                let said = std::io::Error::other(e.message.clone());
                refused = Some(e);
                said
            })
    });
    match verdict {
        Ok(_) => Ok(()),
        Err(said) => Err(refused.unwrap_or_else(|| safety::refuse(said.to_string()))),
    }
}

/// Speculative diagnostics for a plan's text edits (in memory only) and the step's reward
/// measurements; `None` for the delta when the plan also creates, renames or deletes files.
pub async fn speculate(
    o: &mut Ctx<'_>,
    m: &MutationArgs,
    plan: &Plan,
    complete: bool,
    resolution: Option<&Resolution>,
) -> Result<(Measured, Option<Vec<crate::bundle::facts::FileDelta>>)> {
    let safe = check_safety(o, m, plan, complete, resolution).is_ok();
    let mut measured = Measured {
        d_prev: None,
        d_now: None,
        safety: u8::from(safe),
        ..Default::default()
    };
    let changes: Option<Vec<(Document, String)>> = plan
        .changes
        .iter()
        .map(|c| match c {
            FileChange::Edit { doc, new_text, .. } => Some((doc.clone(), new_text.clone())),
            _ => None,
        })
        .collect();
    let Some(changes) = changes else {
        return Ok((measured, None));
    };
    let spec = speculate::speculate(
        &mut o.cx(),
        &changes,
        crate::measure::scope::Scope::Importers,
        speculate::Leave::Original,
    )
    .await?;
    measured.d_prev = Some(speculate::count(&spec.before));
    measured.d_now = Some(speculate::count(&spec.after));
    if o.opts().reward.is_v2() {
        measured.v2 =
            crate::measure::structural::measure_v2(&mut o.cx(), &spec, &changes, None).await?;
    }
    Ok((measured, Some(speculate::delta(&spec))))
}

/// Apply `plan` if asked, after every safety check; returns whether it was written.
pub fn maybe_apply(
    o: &Ctx<'_>,
    m: &MutationArgs,
    plan: &Plan,
    complete: bool,
    resolution: Option<&Resolution>,
) -> Result<bool> {
    if !m.apply {
        return Ok(false);
    }
    check_safety(o, m, plan, complete, resolution)?;
    let mode = if m.git_mode { Mode::Git } else { Mode::Direct };
    apply::apply(&o.ws().root, plan, mode, m.since.as_ref())?;
    // The index follows lanser's own writes (a process without a watcher sees them too).
    let written: Vec<PathBuf> = plan
        .touched()
        .iter()
        .map(|rel| o.ws().root.join(rel))
        .collect();
    o.ws().wrote(written.iter().map(PathBuf::as_path));
    notify_server(o, plan);
    Ok(true)
}

/// Bring the server in line with what was written: didChange + didSave for edited files,
/// didChangeWatchedFiles for created, renamed and deleted ones.
fn notify_server(o: &Ctx<'_>, plan: &Plan) {
    let Some(session) = o.session() else {
        return;
    };
    let mut watched = Vec::new();
    for c in &plan.changes {
        use crate::edits::FileChange::*;
        match c {
            Edit { doc, .. } => {
                // A file edited and then moved is reported at its new path.
                let abs = plan.final_path(&doc.abs);
                if let Ok(new) = Document::load(abs, doc.rel.clone()) {
                    let uri = path_to_uri(&new.abs);
                    session.sync_document(&uri, &new);
                    if let Ok(text_document) = crate::lsp::typed::document(&uri) {
                        session.notify::<DidSaveTextDocument>(DidSaveTextDocumentParams {
                            text_document,
                            text: None,
                        });
                    }
                }
            }
            Create { abs, .. } => watched.push((path_to_uri(abs), FileChangeType::CREATED)),
            Rename { from, to, .. } => {
                watched.push((path_to_uri(from), FileChangeType::DELETED));
                watched.push((path_to_uri(to), FileChangeType::CREATED));
                // A moved directory: each file inside it, too.
                let mut stack = vec![to.clone()];
                while let Some(dir) = stack.pop() {
                    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                        let p = e.path();
                        if p.is_dir() {
                            stack.push(p);
                        } else if let Ok(rest) = p.strip_prefix(to) {
                            watched.push((path_to_uri(&from.join(rest)), FileChangeType::DELETED));
                            watched.push((path_to_uri(&p), FileChangeType::CREATED));
                        }
                    }
                }
            }
            Delete { abs, .. } => watched.push((path_to_uri(abs), FileChangeType::DELETED)),
        }
    }
    session.files_changed(&watched);
}

//! The one verified write that `apply --patch` and `edit` share (docs/editing.md): new texts
//! for existing files become a plan of minimal line edits (through the jail and the
//! `--allow`/`--deny` filters), are measured speculatively as `check --patch` measures a
//! patch (diagnostics delta and the step's reward, before anything is written), are refused
//! under `--require-clean` when they add an error, and are written through the envelope
//! (readiness, ambiguity, uncommitted changes, lock, journaled transaction) only with `--apply`.

use super::mutate::{self, MutationArgs};
use crate::bundle::facts::{Diagnostic, FileDelta, Severity};
use crate::bundle::Resolution;
use crate::edits::Plan;
use crate::error::{ErrorCode, LanserError, Result};
use crate::measure::speculate;
use crate::orchestrator::Ctx;
use crate::reward::Measured;
use crate::selector::resolve::Document;
use crate::text::Encoding;
use lsp_types::{
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, Position, Range,
    TextDocumentEdit, TextEdit, WorkspaceEdit,
};
use serde_json::json;

/// The flags of a verified write (`apply --patch`, `edit`), flattened into each: whether to
/// write, and whether to refuse a change that adds an error.
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct VerifiedFlags {
    /// Write the change (transactionally, inside the safety envelope)
    #[arg(long, conflicts_with = "dry_run")]
    pub apply: bool,
    /// Refuse a change that adds an error diagnostic (E/WOULD_BREAK, exit 77); nothing is written
    #[arg(long)]
    pub require_clean: bool,
}

/// What a verified write measured and did.
pub struct Verified {
    pub plan: Plan,
    /// The speculative diagnostics delta per file (as `check --patch`'s `files`).
    pub delta: Vec<FileDelta>,
    /// Error and warning diagnostics before and after, over the same files.
    pub before: u64,
    pub after: u64,
    /// The importers re-checked and skipped.
    pub checked: crate::bundle::facts::Checked,
    pub measured: Measured,
    pub complete: bool,
    pub applied: bool,
}

/// Measure `changes` (each an existing file and its whole new text), refuse them under
/// `require_clean` when they add an error, and write them if `m.apply`.
pub async fn write(
    o: &mut Ctx<'_>,
    m: &MutationArgs,
    require_clean: bool,
    changes: &[(Document, String)],
    resolution: Option<&Resolution>,
) -> Result<Verified> {
    let changes: Vec<(Document, String)> = changes
        .iter()
        .filter(|(d, new)| d.text != *new)
        .cloned()
        .collect();
    if changes.is_empty() {
        return Err(LanserError::usage("the edit changes nothing"));
    }
    let plan = mutate::plan(o, m, workspace_edit(&changes, o.encoding())?)?;
    for c in &plan.changes {
        if let crate::edits::FileChange::Edit { doc, new_text, .. } = c {
            if changes
                .iter()
                .any(|(d, new)| d.rel == doc.rel && new != new_text)
            {
                return Err(LanserError::internal(format!(
                    "the plan for {} does not give the edited text",
                    doc.rel
                )));
            }
        }
    }
    // A write that follows finds the server showing the written texts already.
    let leave = match m.apply {
        true => speculate::Leave::Changed,
        false => speculate::Leave::Original,
    };
    let found = super::check::measure(o, &changes, leave).await?;
    let done = judge_and_write(o, m, require_clean, plan, &found, resolution);
    if found.left == speculate::Leave::Changed && !matches!(&done, Ok(v) if v.applied) {
        speculate::restore(&o.cx(), &changes);
    }
    done
}

/// The rest of [`write`] once the change is measured (`found`): refused under
/// `require_clean` when it adds an error, else written if `m.apply`.
fn judge_and_write(
    o: &mut Ctx<'_>,
    m: &MutationArgs,
    require_clean: bool,
    plan: Plan,
    found: &super::check::Measurement,
    resolution: Option<&Resolution>,
) -> Result<Verified> {
    let delta = speculate::delta(&found.spec);
    let added: Vec<Diagnostic> = delta
        .iter()
        .flat_map(|f| f.added.iter())
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect();
    if require_clean && !added.is_empty() {
        return Err(would_break(added));
    }
    let (before, after) = (
        speculate::count(&found.spec.before),
        speculate::count(&found.spec.after),
    );
    let safe = mutate::check_safety(o, m, &plan, found.complete, resolution).is_ok();
    let measured = Measured {
        d_prev: Some(before),
        d_now: Some(after),
        safety: u8::from(safe),
        v2: found.v2.clone().unwrap_or_default(),
    };
    let applied = mutate::maybe_apply(o, m, &plan, found.complete, resolution)?;
    Ok(Verified {
        plan,
        delta,
        before,
        after,
        checked: found.spec.checked.clone(),
        measured,
        complete: found.complete,
        applied,
    })
}

/// `E/WOULD_BREAK`: the errors an edit would add, the first named in the message.
fn would_break(added: Vec<Diagnostic>) -> LanserError {
    let first = &added[0];
    let place = super::render::place_of(&first.selector)
        .map(|(p, l, c)| format!("{p}:{l}:{c}"))
        .unwrap_or_else(|| first.path.clone());
    let message = first.message.as_str();
    let mut e = LanserError::new(
        ErrorCode::WouldBreak,
        format!(
            "refusing (--require-clean): the edit adds {} error(s), the first at {place}: {}; nothing was written",
            added.len(),
            message.lines().next().unwrap_or_default()
        ),
    );
    e.details = Some(json!({ "added": added }));
    e
}

/// A WorkspaceEdit of whole-line edits turning each document's text into its new text.
fn workspace_edit(changes: &[(Document, String)], enc: Encoding) -> Result<WorkspaceEdit> {
    let mut edits = Vec::new();
    for (doc, new) in changes {
        let uri = crate::lsp::typed::uri(&crate::workspace::path_to_uri(&doc.abs))?;
        edits.push(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
            edits: line_edits(doc, new, enc)
                .into_iter()
                .map(OneOf::Left)
                .collect(),
        });
    }
    Ok(WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(edits)),
        ..Default::default()
    })
}

/// The changed runs of lines of `doc` as text edits (server positions in `enc`).
fn line_edits(doc: &Document, new: &str, enc: Encoding) -> Vec<TextEdit> {
    let starts = |text: &str| -> Vec<usize> {
        let mut s = vec![0];
        s.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if s.last() != Some(&text.len()) {
            s.push(text.len());
        }
        s
    };
    let (old_at, new_at) = (starts(&doc.text), starts(new));
    let pos = |offset: usize| {
        let (line, character) = doc.position(offset, enc);
        Position::new(line as u32, character as u32)
    };
    let diff = similar::TextDiff::from_lines(doc.text.as_str(), new);
    diff.ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| {
            let (o, n) = (op.old_range(), op.new_range());
            TextEdit {
                range: Range::new(pos(old_at[o.start]), pos(old_at[o.end])),
                new_text: new[new_at[n.start]..new_at[n.end]].to_string(),
            }
        })
        .collect()
}

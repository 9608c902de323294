//! `lanser apply --patch FILE [--apply] [--require-clean]` (docs/editing.md): an agent's
//! unified diff written through the same envelope as a rename. Every hunk must match the file
//! as it is now (a stale one refuses the whole patch, naming the file and the hunk); the
//! preview carries the diff, the plan and the speculative diagnostics delta `check --patch`
//! would report; the write is the verified one `edit` uses ([`super::verified`]).

use super::mutate::MutationFlags;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::Provenance;
use crate::bundle::Bundle;
use crate::edits::patch;
use crate::error::Result;
use crate::orchestrator::{Ctx, Outcome};
use crate::selector::resolve::Document;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Apply a unified diff through the safety envelope: a preview (diff, plan, diagnostics delta) unless --apply
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ApplyPatch {
    /// The patch file (`-` for stdin)
    #[arg(long, value_name = "FILE")]
    pub patch: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub verified: super::verified::VerifiedFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub mutation: MutationFlags,
}

/// What a written (or previewed) change is: `apply`'s and `edit`'s shared facts.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteFacts {
    /// The files the change edits, workspace-relative.
    pub files: Vec<String>,
    pub edit_count: u64,
    /// Whether it was written (`--apply`).
    pub applied: bool,
    /// Per file the diagnostics it adds and removes, measured in memory before any write
    /// (as `check --patch`'s `files`).
    pub speculative_diagnostics: Vec<crate::bundle::facts::FileDelta>,
    /// Error+warning diagnostics before and after the change.
    pub before: u64,
    pub after: u64,
    /// Which importers were re-checked, and which the change cannot alter.
    pub checked: crate::bundle::facts::Checked,
    pub provenance: Provenance,
}

impl crate::bundle::facts::Facts for WriteFacts {}

impl Operation for ApplyPatch {
    fn reads_stdin(&self) -> bool {
        self.patch == "-"
    }
    fn refuses_unserved(&self) -> bool {
        false
    }
    const NAME: &'static str = "apply";
    type Facts = WriteFacts;
    fn changes_server_view(&self) -> bool {
        true
    }
    /// It reads its patch file when it runs.
    fn memoizable(&self) -> bool {
        false
    }
    fn writes_files(&self) -> bool {
        self.mutation.writes(self.verified.apply)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let text = super::check::read_patch(o, &self.patch)?;
        let mut changes = Vec::new();
        for fp in &patch::parse(&text)? {
            let (abs, rel) = o.ws().resolve_user_path(&fp.path, &o.opts().cwd)?;
            let doc = Document::load(abs, rel)?;
            let new = patch::apply_named(&doc.rel, &doc.text, fp)?;
            changes.push((doc, new));
        }
        let m = self.mutation.args(self.verified.apply);
        let v = super::verified::write(o, &m, self.verified.require_clean, &changes, None).await?;
        let facts = write_facts(&v);
        Ok(outcome(v, facts, None))
    }
    fn render(facts: &Self::Facts, bundle: &Bundle, page: &mut Page) {
        render(facts, bundle, page);
    }
}

/// What a verified write changed, as facts.
pub(super) fn write_facts(v: &super::verified::Verified) -> WriteFacts {
    WriteFacts {
        files: v.plan.touched(),
        edit_count: v.plan.edit_count() as u64,
        applied: v.applied,
        speculative_diagnostics: v.delta.clone(),
        before: v.before,
        after: v.after,
        checked: v.checked.clone(),
        provenance: Provenance::Lsp,
    }
}

/// The outcome of a verified write with these `facts`.
pub(super) fn outcome<F>(
    v: super::verified::Verified,
    facts: F,
    resolution: Option<crate::bundle::Resolution>,
) -> Outcome<F> {
    Outcome {
        facts,
        resolution,
        complete: v.complete,
        edits: Some(super::mutate::edits_of(&v.plan)),
        reward: Some(v.measured),
    }
}

/// The diff, what it adds and removes, and whether it was written.
pub(super) fn render(facts: &WriteFacts, bundle: &Bundle, page: &mut Page) {
    let check = crate::bundle::facts::CheckFacts {
        patched: facts.files.clone(),
        files: facts.speculative_diagnostics.clone(),
        before: facts.before,
        after: facts.after,
        checked: facts.checked.clone(),
        provenance: Provenance::Lsp,
        unchecked: None,
    };
    super::render::check(page, &check);
    let files = facts.files.len();
    super::render::edits(page, bundle, files, facts.edit_count, facts.applied);
}

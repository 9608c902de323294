//! `lanser rename SEL NEW [--dry-run | --apply]`
//! (docs/safety.md): gated by prepareRename ([`super::prepare_rename`]), previewed as a unified diff and a normalized
//! WorkspaceEdit, applied only through the safety envelope, and never from an answer the
//! server gave before the project was loaded.

use super::mutate::{self, MutationArgs};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, RenameFacts};
use crate::bundle::Bundle;
use crate::edits::check_name;
use crate::error::{LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::Rename as RenameRequest;
use lsp_types::RenameParams;

/// Rename the symbol at SELECTOR: a preview (diff + WorkspaceEdit) unless --apply
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Rename {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// The new identifier
    pub new_name: String,
    /// Write the change (transactionally, inside the safety envelope)
    #[arg(long, conflicts_with = "dry_run")]
    pub apply: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub mutation: super::mutate::MutationFlags,
}

impl Operation for Rename {
    const NAME: &'static str = "rename";
    type Facts = crate::bundle::facts::RenameFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    fn changes_server_view(&self) -> bool {
        true
    }
    fn writes_files(&self) -> bool {
        self.mutation.writes(self.apply)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        rename(
            o,
            &self.selector,
            &self.new_name,
            &self.mutation.args(self.apply).served(o),
        )
        .await
    }
    fn render(facts: &Self::Facts, bundle: &Bundle, page: &mut Page) {
        let files = facts.files.len();
        super::render::edits(page, bundle, files, facts.edit_count, facts.applied);
    }
}

pub async fn rename(
    o: &mut Ctx<'_>,
    selector: &str,
    new_name: &str,
    m: &MutationArgs,
) -> Result<Outcome<RenameFacts>> {
    let (spec, target) = o.resolve(selector)?;
    // Python's rule for a Python file; another language's server judges its own names.
    if crate::workspace::walk::is_python(&target.doc.rel) {
        check_name(new_name)?;
    } else if new_name.is_empty() || new_name.contains(char::is_whitespace) {
        return Err(LanserError::usage(format!("{new_name:?} is not a name")));
    }
    let position = o.position_params(&target).await?;
    super::gate::require::<RenameRequest>(o, Feature::Rename)?;
    let complete = o.wait_ready().await?;
    // A server without prepareRename (the CSS and HTML servers): the selector's own range.
    let range = if o
        .session()
        .as_ref()
        .is_some_and(|s| s.supports(Feature::PrepareRename))
    {
        super::prepare_rename::prepare_range(o, position.clone(), selector).await?
    } else {
        let enc = o.ensure_session().await?.encoding;
        let (l0, c0) = target.doc.position(target.start, enc);
        let (l1, c1) = target.doc.position(target.end, enc);
        [l0 as u32, c0 as u32, l1 as u32, c1 as u32]
    };
    let answer = o
        .ensure_session()
        .await?
        .request::<RenameRequest>(RenameParams {
            text_document_position: position,
            new_name: new_name.to_string(),
            work_done_progress_params: Default::default(),
        })
        .await?;
    let Some(edit) = answer else {
        return Err(LanserError::not_found(format!(
            "the server offered no rename at {selector}"
        )));
    };
    let plan = mutate::plan(o, m, edit)?;
    let resolution = o.resolution(&spec, &target);
    let (measured, delta) = mutate::speculate(o, m, &plan, complete, Some(&resolution)).await?;
    let applied = mutate::maybe_apply(o, m, &plan, complete, Some(&resolution))?;
    Ok(Outcome {
        facts: RenameFacts {
            new_name: new_name.to_string(),
            range,
            files: plan.touched(),
            edit_count: plan.edit_count() as u64,
            applied,
            speculative_diagnostics: delta,
            provenance: Provenance::Lsp,
        },
        resolution: Some(resolution),
        complete,
        edits: Some(mutate::edits_of(&plan)),
        reward: Some(measured),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_must_be_identifiers() {
        for ok in ["read_data", "_x", "面积", "A1"] {
            assert!(crate::edits::check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1a", "a-b", "class", "a b"] {
            assert!(crate::edits::check_name(bad).is_err(), "{bad}");
        }
    }
}

//! `lanser def SEL`: where the symbol at the selector is defined — and the goto flow it
//! shares with `type-def` ([`super::type_def`]).

use super::gate::require;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{DefFacts, Location, Provenance};
use crate::bundle::Bundle;
use crate::error::{ErrorCode, Result};
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Orchestrator, Outcome};
use lsp_types::request::{GotoDefinition, GotoTypeDefinition};
use lsp_types::GotoDefinitionParams;

/// Where the symbol at SELECTOR is defined
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Def {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for Def {
    const NAME: &'static str = "def";
    type Facts = DefFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        let out = run(o, &self.selector, Goto::Definition).await?;
        Ok(out.map(|definitions| DefFacts {
            definitions,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.definitions, "no definition found");
    }
}

/// Which of the two the command asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goto {
    Definition,
    TypeDefinition,
}

/// The locations the server answers (the facts' one list).
pub async fn run(
    o: &mut Orchestrator,
    selector: &str,
    goto: Goto,
) -> Result<Outcome<Vec<Location>>> {
    let (spec, target) = o.resolve(selector)?;
    let params = GotoDefinitionParams {
        text_document_position_params: o.position_params(&target).await?,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    match goto {
        Goto::Definition => require::<GotoDefinition>(o, Feature::Definition)?,
        Goto::TypeDefinition => require::<GotoTypeDefinition>(o, Feature::TypeDefinition)?,
    }
    let mut complete = true;
    if goto == Goto::TypeDefinition {
        // Pyright answers a module's type definition (`import asyncio` → its stub) only once
        // the project is loaded and the file checked; before that it answers nothing, without
        // error. Waiting for the load and asking for the file's diagnostics first makes the
        // answer independent of timing and of what was asked before (daemon, batch). A server
        // without pull diagnostics (an error answer) is then asked directly.
        complete = o.wait_ready().await?;
        let file = [target.doc.rel.clone()];
        match crate::measure::speculate::pull(&mut o.cx(), &file).await {
            // A server that hangs or dies here would do the same on the real request.
            Err(e) if matches!(e.code, ErrorCode::LsTimeout | ErrorCode::LsCrash) => return Err(e),
            _ => {}
        }
    }
    let session = o.ensure_session().await?;
    let answer = match goto {
        Goto::Definition => session.request::<GotoDefinition>(params).await?,
        Goto::TypeDefinition => session.request::<GotoTypeDefinition>(params).await?,
    };
    let facts = o.normalizer().goto(&answer);
    Ok(Outcome::read(
        facts,
        Some(o.resolution(&spec, &target)),
        complete,
    ))
}

//! The flow every positional read shares, written once: resolve the selector against the
//! files on disk, start the server and open the target's document, check that the server
//! declares the feature ([`super::gate::require`]), wait for the project when the answer can
//! come from other files, send the typed request, and hand back the server's answer with the
//! selector's resolution — so an operation states only its request, its parameters and how
//! its facts are read from the answer.

use super::gate::require;
use crate::bundle::facts::Location;
use crate::bundle::Resolution;
use crate::error::{ErrorCode, Result};
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use crate::relocate::Target;
use lsp_types::request::Request;
use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, TextDocumentPositionParams};

/// Whether the answer waits for the server's project load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The answer is about the file the selector names (hover, highlight, signature):
    /// asked at once.
    No,
    /// The answer can come from other files (references, implementations, declarations):
    /// asked once the project is loaded, and marked incomplete when it never loads.
    ForProject,
    /// As [`Wait::ForProject`], and the target's file checked first (its diagnostics pulled):
    /// Pyright answers a module's type definition (`import asyncio` → its stub) only once the
    /// file is checked, and before that answers nothing, without error. Pulling first makes
    /// the answer independent of timing and of what was asked before (daemon, batch); a
    /// server without pull diagnostics (an error answer) is then asked directly.
    Checked,
}

/// The server's answer at a position, with what the bundle records beside it.
pub struct Answered<T> {
    pub answer: T,
    pub target: Target,
    pub resolution: Resolution,
    /// Whether the project was loaded when it answered ([`Wait::ForProject`]).
    pub complete: bool,
}

impl<T> Answered<T> {
    /// A read-only outcome with `facts`: the resolution and completeness of this answer, no
    /// edits and no reward terms.
    pub fn outcome<F>(self, facts: F) -> Outcome<F> {
        Outcome::read(facts, Some(self.resolution), self.complete)
    }
}

/// Ask request `R` at the position `selector` names. `params` builds the request's
/// parameters from the position's.
pub async fn ask<R: Request>(
    o: &mut Ctx<'_>,
    selector: &str,
    feature: Feature,
    wait: Wait,
    params: impl FnOnce(TextDocumentPositionParams) -> R::Params,
) -> Result<Answered<R::Result>> {
    let (spec, target) = o.resolve(selector)?;
    let at = o.position_params(&target).await?;
    require::<R>(o, feature)?;
    let complete = match wait {
        Wait::No => true,
        Wait::ForProject => o.wait_ready().await?,
        Wait::Checked => {
            let complete = o.wait_ready().await?;
            let file = [target.doc.rel.clone()];
            match crate::measure::speculate::pull(&mut o.cx(), &file).await {
                // A server that hangs or dies here would do the same on the real request.
                Err(e) if matches!(e.code, ErrorCode::LsTimeout | ErrorCode::LsCrash) => {
                    return Err(e)
                }
                _ => complete,
            }
        }
    };
    let answer = o.ensure_session().await?.request::<R>(params(at)).await?;
    let resolution = o.resolution(&spec, &target);
    Ok(Answered {
        answer,
        target,
        resolution,
        complete,
    })
}

/// Ask a request of definition's shape (definition, type definition, implementation,
/// declaration: a position in, locations out) at the position `selector` names: the locations
/// the server answers, normalized.
pub async fn goto<R>(
    o: &mut Ctx<'_>,
    selector: &str,
    feature: Feature,
    wait: Wait,
) -> Result<Outcome<Vec<Location>>>
where
    R: Request<Params = GotoDefinitionParams, Result = Option<GotoDefinitionResponse>>,
{
    let asked = ask::<R>(o, selector, feature, wait, |at| GotoDefinitionParams {
        text_document_position_params: at,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    })
    .await?;
    let locations = o.normalizer().goto(&asked.answer);
    Ok(asked.outcome(locations))
}

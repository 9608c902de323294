//! The capability gate every optional feature goes through: a server that does not declare
//! the provider in its `InitializeResult` gets `E/UNSUPPORTED_CAP` (72) naming it, without the
//! request being sent.

use crate::error::{ErrorCode, LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::orchestrator::Ctx;
use lsp_types::request::Request;

/// Fail with `E/UNSUPPORTED_CAP` unless the running server declares `feature`, which
/// request `R` needs.
pub fn require<R: Request>(o: &Ctx<'_>, feature: Feature) -> Result<()> {
    let declared = o.session().as_ref().is_some_and(|s| s.supports(feature));
    if declared {
        return Ok(());
    }
    let server = o
        .server_id()
        .map(|s| match s.version {
            Some(v) => format!("{} {v}", s.name),
            None => s.name,
        })
        .unwrap_or_else(|| "the language server".into());
    let python = matches!(o.server_def().name.as_str(), "pyright" | "basedpyright");
    let hint = match feature {
        Feature::Implementation if o.server_def().name != "basedpyright" => {
            " (basedpyright has it: --server basedpyright)"
        }
        Feature::TypeHierarchy | Feature::InlayHint if python => {
            " (ty and pyrefly have it: --server ty)"
        }
        _ => "",
    };
    Err(LanserError::new(
        ErrorCode::UnsupportedCap,
        format!(
            "{server} does not support {}: no {} in its capabilities{hint}",
            R::METHOD,
            feature.provider()
        ),
    ))
}

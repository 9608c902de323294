//! `lanser impl` (textDocument/implementation), `lanser highlight` (documentHighlight) and
//! `lanser signature` (signatureHelp), plus the capability gate every optional feature goes
//! through: a server that does not declare the provider in its `InitializeResult` gets
//! `E/UNSUPPORTED_CAP` (72) naming it, without the request being sent.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{
    self, HighlightFacts, HighlightKind, ImplFacts, ParameterInfo, Provenance, SignatureFacts,
    SignatureHelp, SignatureInfo,
};
use crate::bundle::normalize::typed::range;
use crate::bundle::Bundle;
use crate::error::{ErrorCode, LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Orchestrator, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::{
    DocumentHighlightRequest, GotoImplementation, Request, SignatureHelpRequest,
};
use lsp_types::{
    DocumentHighlightKind, DocumentHighlightParams, Documentation, GotoDefinitionParams,
    ParameterLabel, SignatureHelpContext, SignatureHelpParams, SignatureHelpTriggerKind,
};
use serde_json::Value;

/// Where the symbol at SELECTOR is implemented (textDocument/implementation)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Impl {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    #[serde(skip)]
    pub selector: String,
}

impl Operation for Impl {
    const NAME: &'static str = "impl";
    type Facts = ImplFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        implementation(o, &self.selector).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.implementations, "no implementation found");
    }
}

/// Every occurrence of the symbol at SELECTOR in its file, read or write
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Highlight {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    #[serde(skip)]
    pub selector: String,
}

impl Operation for Highlight {
    const NAME: &'static str = "highlight";
    type Facts = HighlightFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        highlight(o, &self.selector).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::highlight(page, facts);
    }
}

/// Signature help for the call SELECTOR is inside
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Signature {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    #[serde(skip)]
    pub selector: String,
}

impl Operation for Signature {
    const NAME: &'static str = "signature";
    type Facts = SignatureFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        signature(o, &self.selector).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::signature(page, facts);
    }
}

/// Fail with `E/UNSUPPORTED_CAP` unless the running server declares `feature`, which
/// request `R` needs.
pub fn require<R: Request>(o: &Orchestrator, feature: Feature) -> Result<()> {
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

/// `lanser impl`: where the symbol is implemented (subclass overrides, protocol members).
/// Cross-file, so it waits for the project to load.
pub async fn implementation(o: &mut Orchestrator, selector: &str) -> Result<Outcome<ImplFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    require::<GotoImplementation>(o, Feature::Implementation)?;
    let complete = o.wait_ready().await?;
    let answer = o
        .ensure_session()
        .await?
        .request::<GotoImplementation>(GotoDefinitionParams {
            text_document_position_params: params,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .await?;
    let implementations = o.normalizer().goto(&answer);
    Ok(Outcome {
        facts: ImplFacts {
            implementations,
            provenance: Provenance::Lsp,
        },
        resolution: Some(o.resolution(&spec, &target)),
        complete,
        edits: None,
        reward: None,
    })
}

fn highlight_kind(k: Option<u64>) -> (&'static str, HighlightKind) {
    match k {
        Some(2) => ("read", HighlightKind::Read),
        Some(3) => ("write", HighlightKind::Write),
        _ => ("text", HighlightKind::Text),
    }
}

/// Highlights of the document at `uri` from a raw `request`'s answer (JSON): see
/// `highlighted`.
pub fn highlights(o: &Orchestrator, uri: &str, raw: &Value) -> Vec<facts::Highlight> {
    let found = raw.as_array().into_iter().flatten().filter_map(|h| {
        let r = h.get("range")?;
        let n4 = |p: &str| r.pointer(p).and_then(Value::as_u64).unwrap_or(0) as u32;
        let range = [
            n4("/start/line"),
            n4("/start/character"),
            n4("/end/line"),
            n4("/end/character"),
        ];
        Some((range, h.get("kind").and_then(Value::as_u64)))
    });
    highlighted(o, uri, found)
}

/// Highlights of the document at `uri` from their server ranges and kind numbers, sorted by
/// range (then kind, by name): `{path, range, kind, selector}`.
fn highlighted(
    o: &Orchestrator,
    uri: &str,
    found: impl Iterator<Item = ([u32; 4], Option<u64>)>,
) -> Vec<facts::Highlight> {
    let mut n = o.normalizer();
    type Found = (crate::bundle::normalize::Loc, (&'static str, HighlightKind));
    let mut out: Vec<Found> = found
        .map(|(range, kind)| (n.location(uri, range), highlight_kind(kind)))
        .collect();
    out.sort_by(|a, b| (&a.0, a.1 .0).cmp(&(&b.0, b.1 .0)));
    out.dedup();
    out.into_iter()
        .map(|(loc, (_, kind))| facts::Highlight::new(loc, kind))
        .collect()
}

/// `lanser highlight`: every occurrence of the symbol in the same file, read or write.
pub async fn highlight(o: &mut Orchestrator, selector: &str) -> Result<Outcome<HighlightFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    require::<DocumentHighlightRequest>(o, Feature::DocumentHighlight)?;
    let answer = o
        .ensure_session()
        .await?
        .request::<DocumentHighlightRequest>(DocumentHighlightParams {
            text_document_position_params: params,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .await?;
    let found = answer.iter().flatten().map(|h| {
        let kind = match h.kind {
            Some(DocumentHighlightKind::READ) => Some(2),
            Some(DocumentHighlightKind::WRITE) => Some(3),
            _ => None,
        };
        (range(&h.range), kind)
    });
    let highlights = highlighted(o, &path_to_uri(&target.doc.abs), found);
    Ok(Outcome {
        facts: HighlightFacts {
            path: target.doc.rel.clone(),
            highlights,
            provenance: Provenance::Lsp,
        },
        resolution: Some(o.resolution(&spec, &target)),
        complete: true,
        edits: None,
        reward: None,
    })
}

fn doc_text(v: &Option<Documentation>) -> Option<String> {
    match v {
        Some(Documentation::String(s)) => Some(s.clone()),
        Some(Documentation::MarkupContent(m)) => Some(m.value.clone()),
        None => None,
    }
}

/// signatureHelp → `{signatures: [{label, documentation, parameters: [{label, documentation}],
/// activeParameter}], activeSignature, activeParameter}`. A parameter label given as
/// `[start, end]` (UTF-16 offsets into the signature label) becomes that substring.
pub fn signature_help(raw: &lsp_types::SignatureHelp) -> SignatureHelp {
    let signatures = raw
        .signatures
        .iter()
        .map(|s| {
            let utf16: Vec<u16> = s.label.encode_utf16().collect();
            let parameters = s
                .parameters
                .iter()
                .flatten()
                .map(|p| {
                    let label = match &p.label {
                        ParameterLabel::Simple(s) => s.clone(),
                        ParameterLabel::LabelOffsets([start, end]) => {
                            let at = |i: u32| (i as usize).min(utf16.len());
                            let (start, end) = (at(*start), at(*end));
                            String::from_utf16_lossy(&utf16[start..end.max(start)])
                        }
                    };
                    ParameterInfo {
                        label,
                        documentation: doc_text(&p.documentation),
                    }
                })
                .collect();
            SignatureInfo {
                label: s.label.clone(),
                documentation: doc_text(&s.documentation),
                parameters,
                active_parameter: s.active_parameter,
            }
        })
        .collect();
    SignatureHelp {
        signatures,
        active_signature: raw.active_signature,
        active_parameter: raw.active_parameter,
    }
}

/// `lanser signature`: the signature(s) of the call the selector is inside, and which
/// parameter it is at. Null when the selector is not inside a call's parentheses.
pub async fn signature(o: &mut Orchestrator, selector: &str) -> Result<Outcome<SignatureFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    require::<SignatureHelpRequest>(o, Feature::SignatureHelp)?;
    let answer = o
        .ensure_session()
        .await?
        .request::<SignatureHelpRequest>(SignatureHelpParams {
            context: Some(SignatureHelpContext {
                trigger_kind: SignatureHelpTriggerKind::INVOKED,
                trigger_character: None,
                is_retrigger: false,
                active_signature_help: None,
            }),
            text_document_position_params: params,
            work_done_progress_params: Default::default(),
        })
        .await?;
    Ok(Outcome {
        facts: SignatureFacts {
            signature: answer.as_ref().map(signature_help),
            provenance: Provenance::Lsp,
        },
        resolution: Some(o.resolution(&spec, &target)),
        complete: true,
        edits: None,
        reward: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_offsets_become_labels() {
        let raw = serde_json::json!({"signatures": [{
            "label": "(a: int, 名前: str) -> None",
            "parameters": [{"label": [1, 7]}, {"label": [9, 16]}],
            "documentation": {"kind": "plaintext", "value": "Doc"},
            "activeParameter": 1
        }], "activeSignature": 0, "activeParameter": 1});
        let s = signature_help(&serde_json::from_value(raw).unwrap());
        let sig = &s.signatures[0];
        assert_eq!(sig.parameters[0].label, "a: int");
        assert_eq!(sig.parameters[1].label, "名前: str");
        assert_eq!(sig.documentation.as_deref(), Some("Doc"));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["activeSignature"], 0);
        assert_eq!(json["signatures"][0]["activeParameter"], 1);
    }
}

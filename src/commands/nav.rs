//! `lanser impl` (textDocument/implementation), `lanser highlight` (documentHighlight) and
//! `lanser signature` (signatureHelp), plus the capability gate every optional feature goes
//! through: a server that does not declare the provider in its `InitializeResult` gets
//! `E/UNSUPPORTED_CAP` (72) naming it, without the request being sent.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{HighlightFacts, ImplFacts, Provenance, SignatureFacts};
use crate::bundle::Bundle;
use crate::error::{ErrorCode, LanserError, Result};
use crate::lsp::capabilities::Feature;
use crate::lsp::typed;
use crate::orchestrator::{Orchestrator, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::{
    DocumentHighlightRequest, GotoImplementation, Request, SignatureHelpRequest,
};
use lsp_types::{
    DocumentHighlightParams, GotoDefinitionParams, SignatureHelpContext, SignatureHelpParams,
    SignatureHelpTriggerKind,
};
use serde_json::{json, Value};

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
    let implementations = o.normalizer().locations(&typed::json(&answer));
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

fn highlight_kind(k: Option<u64>) -> &'static str {
    match k {
        Some(2) => "read",
        Some(3) => "write",
        _ => "text",
    }
}

/// Highlights of the document at `uri`, sorted by range: `{path, range, kind, selector}`.
pub fn highlights(o: &Orchestrator, uri: &str, raw: &Value) -> Vec<Value> {
    let mut n = o.normalizer();
    let mut out: Vec<(crate::bundle::normalize::Loc, &'static str)> = raw
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| {
            let r = h.get("range")?;
            let n4 = |p: &str| r.pointer(p).and_then(Value::as_u64).unwrap_or(0) as u32;
            let range = [
                n4("/start/line"),
                n4("/start/character"),
                n4("/end/line"),
                n4("/end/character"),
            ];
            Some((
                n.location(uri, range),
                highlight_kind(h.get("kind").and_then(Value::as_u64)),
            ))
        })
        .collect();
    out.sort();
    out.dedup();
    out.into_iter()
        .map(|(loc, kind)| {
            let mut v = serde_json::to_value(&loc).expect("locations serialize");
            v["kind"] = json!(kind);
            v
        })
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
    let raw = typed::json(&answer);
    let highlights = highlights(o, &path_to_uri(&target.doc.abs), &raw);
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

fn doc_text(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => json!(s),
        Some(Value::Object(o)) => o.get("value").cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// signatureHelp → `{signatures: [{label, documentation, parameters: [{label, documentation}],
/// activeParameter}], activeSignature, activeParameter}` or null. A parameter label given as
/// `[start, end]` (UTF-16 offsets into the signature label) becomes that substring.
pub fn signature_help(raw: &Value) -> Value {
    if raw.is_null() {
        return Value::Null;
    }
    let signatures: Vec<Value> = raw
        .get("signatures")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| {
            let label = s.get("label").and_then(Value::as_str).unwrap_or_default();
            let utf16: Vec<u16> = label.encode_utf16().collect();
            let parameters: Vec<Value> = s
                .get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|p| {
                    let plabel = match p.get("label") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Array(a)) => {
                            let at =
                                |i: usize| a.get(i).and_then(Value::as_u64).unwrap_or(0) as usize;
                            let (start, end) = (at(0).min(utf16.len()), at(1).min(utf16.len()));
                            String::from_utf16_lossy(&utf16[start..end.max(start)])
                        }
                        _ => String::new(),
                    };
                    json!({"label": plabel, "documentation": doc_text(p.get("documentation"))})
                })
                .collect();
            json!({
                "label": label,
                "documentation": doc_text(s.get("documentation")),
                "parameters": parameters,
                "activeParameter": s.get("activeParameter"),
            })
        })
        .collect();
    json!({
        "signatures": signatures,
        "activeSignature": raw.get("activeSignature"),
        "activeParameter": raw.get("activeParameter"),
    })
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
    let raw = typed::json(&answer);
    Ok(Outcome {
        facts: SignatureFacts {
            signature: Some(signature_help(&raw)).filter(|s| !s.is_null()),
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
        let raw = json!({"signatures": [{
            "label": "(a: int, 名前: str) -> None",
            "parameters": [{"label": [1, 7]}, {"label": [9, 16]}],
            "documentation": {"kind": "plaintext", "value": "Doc"},
            "activeParameter": 1
        }], "activeSignature": 0, "activeParameter": 1});
        let s = signature_help(&raw);
        assert_eq!(s["signatures"][0]["parameters"][0]["label"], "a: int");
        assert_eq!(s["signatures"][0]["parameters"][1]["label"], "名前: str");
        assert_eq!(s["signatures"][0]["documentation"], "Doc");
        assert_eq!(signature_help(&Value::Null), Value::Null);
    }
}

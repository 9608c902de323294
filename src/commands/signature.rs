//! `lanser signature SEL` (textDocument/signatureHelp): the signature(s) of the call the
//! selector is inside, and which parameter it is at; null when it is not inside a call's
//! parentheses.

use super::positional::{ask, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{
    ParameterInfo, Provenance, SignatureFacts, SignatureHelp, SignatureInfo,
};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::SignatureHelpRequest;
use lsp_types::{
    Documentation, ParameterLabel, SignatureHelpContext, SignatureHelpParams,
    SignatureHelpTriggerKind,
};

/// Signature help for the call SELECTOR is inside
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Signature {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for Signature {
    const NAME: &'static str = "signature";
    type Facts = SignatureFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let asked = ask::<SignatureHelpRequest>(
            o,
            &self.selector,
            Feature::SignatureHelp,
            Wait::No,
            |at| SignatureHelpParams {
                context: Some(SignatureHelpContext {
                    trigger_kind: SignatureHelpTriggerKind::INVOKED,
                    trigger_character: None,
                    is_retrigger: false,
                    active_signature_help: None,
                }),
                text_document_position_params: at,
                work_done_progress_params: Default::default(),
            },
        )
        .await?;
        let signature = asked.answer.as_ref().map(signature_help);
        Ok(asked.outcome(SignatureFacts {
            signature,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::signature(page, facts);
    }
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

//! Selectors against the ground and one server: resolving a selector over the files on disk
//! (relocation, docs/relocation.md), the bundle's `resolution` block in that server's position
//! encoding, and the LSP position parameters of a resolved target.

use super::{Cx, Ground, Rejected, Server};
use crate::bundle::{Resolution, Resolved};
use crate::document::Document;
use crate::error::Result;
use crate::relocate::{self, Evidence, Target};
use crate::selector::{self, PositionSpec};
use crate::text::Encoding;
use crate::workspace::path_to_uri;
use serde_json::{json, Value};

/// Resolve a selector string against the files on disk (any form; docs/relocation.md).
/// The target carries the relocation evidence that [`resolution`] records; a rejected
/// selector's error carries its evidence as its source ([`Rejected`]).
pub(super) fn resolve(
    ground: &Ground,
    server: &Server,
    selector: &str,
) -> Result<(PositionSpec, Target)> {
    let spec = selector::parse(selector)?;
    let cx = relocate::Context {
        ws: &ground.ws,
        io: ground.opts.index_io,
        cwd: &ground.opts.cwd,
        config: ground.opts.relocate,
        store: relocate::snapshot::Store::through(&ground.opts.inputs),
        cache: &ground.parses,
        docs: &ground.docs,
    };
    match relocate::relocate(&cx, &spec) {
        Ok(target) => Ok((spec, target)),
        Err(rejected) => {
            if let Some(ev) = rejected.evidence {
                let c = &ev.candidates[0];
                let enc = server.encoding();
                let res = evidence_resolution(enc, &spec, &ev.docs[c.doc], c.start, c.end, &ev);
                if rejected.error.source.is_none() {
                    return Err(rejected.error.with_source(Rejected(res)));
                }
            }
            Err(rejected.error)
        }
    }
}

/// The `resolution` block for a resolved selector, in `server`'s coordinates. The target's
/// file content is kept in the snapshot store, so its `docVersion` can be mapped later.
pub(super) fn resolution(server: &Server, spec: &PositionSpec, target: &Target) -> Resolution {
    relocate::snapshot::Store::open().put(&target.doc.doc_version, &target.doc.text);
    let enc = server.encoding();
    match &target.evidence {
        Some(ev) => evidence_resolution(enc, spec, &target.doc, target.start, target.end, ev),
        None => Resolution {
            original: spec.to_canonical(),
            resolved: resolved(enc, &target.doc, target.start, target.end),
            confidence: 1.0,
            ambiguous: false,
            disambiguation: vec![],
            weights: weights(),
            features: None,
            symbol_id: None,
        },
    }
}

fn resolved(enc: Encoding, doc: &Document, start: usize, end: usize) -> Resolved {
    let (sl, sc) = doc.position(start, enc);
    let (el, ec) = doc.position(end, enc);
    Resolved {
        path: doc.rel.clone(),
        range: [sl as u32, sc as u32, el as u32, ec as u32],
        doc_version: doc.doc_version.clone(),
    }
}

fn evidence_resolution(
    enc: Encoding,
    spec: &PositionSpec,
    doc: &Document,
    start: usize,
    end: usize,
    ev: &Evidence,
) -> Resolution {
    let disambiguation = ev
        .candidates
        .iter()
        .map(|c| {
            let r = resolved(enc, &ev.docs[c.doc], c.start, c.end);
            let mut v = json!({
                "path": r.path,
                "range": r.range,
                "score": c.score,
                "features": c.features,
                "match": if c.exact { "exact-map" } else if c.fuzzy { "fuzzy" } else { "exact" },
            });
            if let Some(sym) = &c.symbol {
                v["symbolId"] = json!(sym.symbol_id);
            }
            v
        })
        .collect();
    let top = &ev.candidates[0];
    Resolution {
        original: spec.to_canonical(),
        resolved: resolved(enc, doc, start, end),
        confidence: ev.confidence,
        ambiguous: ev.ambiguous,
        disambiguation,
        weights: weights(),
        features: Some(json!(top.features)),
        symbol_id: top.symbol.as_ref().map(|s| s.symbol_id.clone()),
    }
}

impl Cx<'_> {
    /// Start the server, open the target's document, and return the LSP
    /// `TextDocumentPositionParams` for the target's start.
    /// A target that starts on `def`, `async def` or `class` (an anchor on a header, a range
    /// over a definition, a cursor on the keyword) is asked about at the name it defines.
    pub async fn position_params(
        &mut self,
        target: &Target,
    ) -> Result<lsp_types::TextDocumentPositionParams> {
        let session = self.session().await?;
        let uri = path_to_uri(&target.doc.abs);
        session.sync_document(&uri, &target.doc);
        self.wait_opened(Some(&uri)).await?;
        let session = self.started().expect("started");
        let at = skip_definition_keyword(&target.doc.text, target.start);
        crate::lsp::typed::at(&target.doc, at, session.encoding)
    }
}

/// The weights of docs/relocation.md#scoring, as recorded in every `resolution`.
fn weights() -> Value {
    use relocate::score::{W_AST, W_MODULE, W_PROX, W_TOKEN};
    json!({"ast": W_AST, "module": W_MODULE, "token": W_TOKEN, "prox": W_PROX})
}

/// The offset of the defined name when `text[start..]` begins with a definition keyword.
fn skip_definition_keyword(text: &str, start: usize) -> usize {
    let mut at = start;
    for kw in ["async", "def", "class"] {
        let rest = &text[at..];
        if let Some(after) = rest.strip_prefix(kw) {
            let ws = after.len() - after.trim_start_matches([' ', '\t']).len();
            if ws > 0 {
                at += kw.len() + ws;
            }
        }
    }
    let rest = &text[at..];
    if at != start && rest.starts_with(crate::selector::is_ident_start) {
        at
    } else {
        start
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn definition_keywords_are_skipped() {
        let t = "async def load(x):\nclass  C:\ndefault = 1\ndef\n";
        assert_eq!(super::skip_definition_keyword(t, 0), 10);
        let c = t.find("class").unwrap();
        assert_eq!(super::skip_definition_keyword(t, c), c + 7);
        let d = t.find("default").unwrap();
        assert_eq!(super::skip_definition_keyword(t, d), d);
        let bare = t.rfind("def").unwrap();
        assert_eq!(super::skip_definition_keyword(t, bare), bare);
    }
}

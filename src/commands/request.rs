//! `lanser request METHOD [--payload JSON | SEL | FILE]`: the raw escape hatch.
//!
//! Params: the payload verbatim; else built from a selector as `TextDocumentPositionParams`
//! (`TextDocumentIdentifier` for the methods that take only a document, such as
//! `textDocument/documentSymbol`; `references` also gets `context.includeDeclaration: true`);
//! else from a bare file path (no `@`) as `TextDocumentIdentifier`; else `{}`. The document is
//! opened (or re-synced) first, also when a payload names a workspace file by URI, and the
//! request waits for the project to load.
//!
//! Facts: `method`, `params`, and `result`, the server's answer as sent, except that every
//! `file://` URI (string value or object key) is rewritten the way locations are: a workspace
//! file becomes its relative path, the server's typeshed `typeshed://…`, installed packages
//! `site-packages://…`. So a copied workspace gives the same bundle. Order is the server's.
//!
//! For methods lanser has a command for, the normalized view that command produces is added
//! beside `result` under the same key: documentSymbol → `symbols` (with `path` and
//! `docVersion`, exactly `lanser symbols FILE`'s facts), definition → `definitions`,
//! typeDefinition → `typeDefinitions`, implementation → `implementations`, references →
//! `references`, documentHighlight → `highlights`, hover → `hover`, workspace/symbol →
//! `symbols`.

use super::highlight;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, RequestFacts};
use crate::bundle::Bundle;
use crate::error::{LanserError, Result};
use crate::lsp::typed;
use crate::orchestrator::{Ctx, Outcome};
use crate::selector::resolve::Document;
use crate::workspace::{path_to_uri, uri_to_path, Place, Workspace};
use lsp_types::{DocumentSymbolResponse, GotoDefinitionResponse, WorkspaceSymbolResponse};
use serde_json::{json, Map, Value};

/// Send a raw LSP request; params from --payload, a selector, or a file path
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct RawRequest {
    /// The LSP method, e.g. textDocument/documentSymbol
    pub method: String,
    /// A selector (TextDocumentPositionParams) or a file path without `@`
    /// (TextDocumentIdentifier)
    #[arg(conflicts_with = "payload")]
    // Not in `request.args`: the request's `selector`, or `file` (`args` below).
    pub target: Option<String>,
    /// The params as JSON, sent verbatim
    #[arg(long, value_name = "JSON")]
    // In `request.args`, only whether there is one: the params sent, with workspace URIs made
    // relative, are `facts.params`; the payload itself would put this machine's paths into
    // the hash domain (`args` below).
    pub payload: Option<String>,
}

impl RawRequest {
    /// A target without `@` names a whole document; anything else is a selector.
    fn file(&self) -> Option<&str> {
        self.target.as_deref().filter(|t| !t.contains('@'))
    }
}

impl Operation for RawRequest {
    /// A raw request may leave state behind in the server: never dropped midway.
    fn cancellable(&self) -> bool {
        false
    }
    fn refuses_unserved(&self) -> bool {
        false
    }
    const NAME: &'static str = "request";
    type Facts = crate::bundle::facts::RequestFacts;
    fn selector(&self) -> Option<&str> {
        self.target.as_deref().filter(|t| t.contains('@'))
    }
    /// The derived flags, plus the `file` a target without `@` names; of the payload, only
    /// whether there is one.
    fn args(&self) -> Map<String, Value> {
        let mut m = super::args_of(self);
        m.remove("target");
        m.insert("payload".into(), self.payload.is_some().into());
        m.insert("file".into(), self.file().into());
        m
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let source = match (&self.payload, self.selector(), self.file()) {
            (Some(p), ..) => Source::Payload(p),
            (None, Some(s), _) => Source::Selector(s),
            (None, None, Some(f)) => Source::File(f),
            (None, None, None) => Source::Nothing,
        };
        run(o, &self.method, source).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::request(page, facts);
    }
}

/// Methods whose params are a bare `TextDocumentIdentifier`.
const DOCUMENT_ONLY: &[&str] = &[
    "textDocument/documentSymbol",
    "textDocument/documentLink",
    "textDocument/codeLens",
    "textDocument/foldingRange",
    "textDocument/semanticTokens/full",
    "textDocument/documentColor",
    "textDocument/diagnostic",
    "textDocument/formatting",
];

/// What the params are built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source<'a> {
    Payload(&'a str),
    Selector(&'a str),
    File(&'a str),
    Nothing,
}

/// Rewrite `file://` URIs (values and keys) to lanser's path forms.
pub fn relativize(ws: &Workspace, v: &Value) -> Value {
    let place = |s: &str| -> Option<String> {
        if !s.starts_with("file://") {
            return None;
        }
        Some(match ws.place_of_uri(s) {
            Place::Workspace(p) | Place::External(p) => p,
        })
    };
    match v {
        Value::String(s) => place(s).map(Value::String).unwrap_or_else(|| v.clone()),
        Value::Array(a) => Value::Array(a.iter().map(|x| relativize(ws, x)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (place(k).unwrap_or_else(|| k.clone()), relativize(ws, x)))
                .collect::<Map<_, _>>(),
        ),
        _ => v.clone(),
    }
}

pub async fn run(
    o: &mut Ctx<'_>,
    method: &str,
    source: Source<'_>,
) -> Result<Outcome<RequestFacts>> {
    if method.trim().is_empty() {
        return Err(LanserError::usage("request needs a METHOD"));
    }
    let mut resolution = None;
    let mut doc: Option<Document> = None;
    let params = match source {
        Source::Payload(text) => {
            let params: Value = serde_json::from_str(text)
                .map_err(|e| LanserError::usage("--payload is not valid JSON").with_source(e))?;
            let uri = params.pointer("/textDocument/uri").and_then(Value::as_str);
            if let Some(abs) = uri.and_then(uri_to_path) {
                if let Some(rel) = o.ws().relative(&abs) {
                    doc = Some(Document::load(abs, rel)?);
                }
            }
            params
        }
        Source::Selector(sel) => {
            let (spec, target) = o.resolve(sel)?;
            let mut params = typed::json(&o.position_params(&target).await?);
            resolution = Some(o.resolution(&spec, &target));
            if DOCUMENT_ONLY.contains(&method) {
                params = json!({ "textDocument": params["textDocument"] });
            } else if method == "textDocument/references" {
                params["context"] = json!({ "includeDeclaration": true });
            }
            doc = Some(target.doc);
            params
        }
        Source::File(file) => {
            let (abs, rel) = o.ws().resolve_user_path(file, &o.opts().cwd)?;
            let d = Document::load(abs, rel)?;
            let params = json!({ "textDocument": { "uri": path_to_uri(&d.abs) } });
            doc = Some(d);
            params
        }
        Source::Nothing => json!({}),
    };
    let session = o.ensure_session().await?;
    if let Some(d) = &doc {
        session.sync_document(&path_to_uri(&d.abs), d);
    }
    let complete = o.wait_ready().await?;
    let raw = o
        .ensure_session()
        .await?
        .request_raw(method, params.clone())
        .await?;
    let mut facts = RequestFacts {
        method: method.to_string(),
        params: relativize(o.ws(), &params),
        result: relativize(o.ws(), &raw),
        provenance: Provenance::Lsp,
        ..RequestFacts::default()
    };
    view(o, method, doc.as_ref(), &raw, &mut facts);
    Ok(Outcome::read(facts, resolution, complete))
}

/// Add the normalized view of `raw` for the methods lanser has a command for: the answer read
/// as the protocol types its command reads (so the view is that command's facts), and none
/// where it is not one.
fn view(o: &Ctx<'_>, method: &str, doc: Option<&Document>, raw: &Value, f: &mut RequestFacts) {
    fn read_as<T: serde::de::DeserializeOwned>(raw: &Value) -> Option<T> {
        serde_json::from_value(raw.clone()).ok()
    }
    let mut n = o.normalizer();
    if let Some(d) = doc {
        n.add_document(d);
    }
    let uri = doc.map(|d| path_to_uri(&d.abs));
    let goto = |n: &mut crate::bundle::normalize::Normalizer| {
        read_as::<Option<GotoDefinitionResponse>>(raw).map(|a| n.goto(&a))
    };
    match (method, doc, &uri) {
        ("textDocument/documentSymbol", Some(d), Some(uri)) => {
            f.path = Some(d.rel.clone());
            f.doc_version = Some(d.doc_version.clone());
            f.symbols = read_as::<Option<DocumentSymbolResponse>>(raw).map(|a| n.outline(uri, &a));
        }
        ("textDocument/definition", ..) => f.definitions = goto(&mut n),
        ("textDocument/typeDefinition", ..) => f.type_definitions = goto(&mut n),
        ("textDocument/implementation", ..) => f.implementations = goto(&mut n),
        ("textDocument/references", ..) => {
            let refs = read_as::<Option<Vec<lsp_types::Location>>>(raw).map(|a| n.references(&a));
            f.count = refs.as_ref().map(|r| r.len() as u64);
            f.references = refs;
        }
        ("textDocument/hover", ..) => {
            f.hover = read_as::<Option<lsp_types::Hover>>(raw).map(|a| n.hover_of(&a))
        }
        ("textDocument/documentHighlight", _, Some(uri)) => {
            drop(n);
            f.highlights = Some(highlight::highlights(o, uri, raw));
        }
        ("workspace/symbol", ..) => {
            f.symbols = read_as::<Option<WorkspaceSymbolResponse>>(raw).map(|a| n.search(&a))
        }
        _ => {}
    }
}

//! `lanser complete SEL [--resolve]` (textDocument/completion): the completion items the
//! server offers at a position — after `obj.`, the members of `obj`'s type — sorted by the
//! server's `sortText` then label (so the order is the editor's, and stable), paged as
//! `items`. With `--resolve`, each item goes through `completionItem/resolve` for its detail
//! and documentation (servers that declare no `resolveProvider` answer in full at once).

use super::gate::require;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Facts, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::{Completion, ResolveCompletionItem};
use lsp_types::{
    CompletionContext, CompletionItem, CompletionParams, CompletionResponse, CompletionTextEdit,
    CompletionTriggerKind, Documentation,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Completion items at SELECTOR (textDocument/completion), e.g. after `user.`
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Complete {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Resolve each item (completionItem/resolve) for its detail and documentation
    #[arg(long)]
    pub resolve: bool,
}

/// One completion item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionFact {
    /// The server's sort key (the label when it gives none): items are listed in its order.
    pub sort_text: String,
    /// What the item is called (`display_name`).
    pub label: String,
    /// `method`, `function`, `class`, `variable`, `property`, `keyword`, … (the protocol's
    /// CompletionItemKind, by name).
    pub kind: Option<String>,
    /// The label's details (a signature, a module), as the server appends them.
    pub label_detail: Option<String>,
    /// The item's detail (its type or signature), when given or resolved.
    pub detail: Option<String>,
    /// Its documentation (markdown or plain text), when given or resolved.
    pub documentation: Option<String>,
    /// The text it inserts, when that is not its label.
    pub insert_text: Option<String>,
}

/// The facts of `complete`.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteFacts {
    /// The file, workspace-relative.
    pub path: String,
    /// The server's `isIncomplete`: typing more may bring other items.
    pub is_incomplete: bool,
    /// Whether each item went through completionItem/resolve.
    pub resolved: bool,
    pub items: Vec<CompletionFact>,
    pub provenance: Provenance,
}

impl Facts for CompleteFacts {
    const PAGED: Option<&'static str> = Some("items");
}

impl Operation for Complete {
    const NAME: &'static str = "complete";
    type Facts = CompleteFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.selector, self.resolve).await
    }
    /// One item a line: `label(detail)  kind  — detail`.
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        for i in &facts.items {
            let mut line = format!("{}{}", i.label, i.label_detail.as_deref().unwrap_or(""));
            if let Some(k) = &i.kind {
                line.push_str(&format!("  {k}"));
            }
            if let Some(d) = i.detail.as_deref().filter(|d| !d.is_empty()) {
                line.push_str(&format!("  — {}", d.lines().next().unwrap_or_default()));
            }
            page.line(line);
        }
        if facts.items.is_empty() {
            page.line("no completions");
        }
    }
}

/// The protocol's CompletionItemKind by name.
fn kind_name(k: lsp_types::CompletionItemKind) -> Option<String> {
    let names = [
        "text",
        "method",
        "function",
        "constructor",
        "field",
        "variable",
        "class",
        "interface",
        "module",
        "property",
        "unit",
        "value",
        "enum",
        "keyword",
        "snippet",
        "color",
        "file",
        "reference",
        "folder",
        "enumMember",
        "constant",
        "struct",
        "event",
        "operator",
        "typeParameter",
    ];
    let json = serde_json::to_value(k).ok()?.as_u64()?;
    names
        .get(usize::try_from(json).ok()?.checked_sub(1)?)
        .map(|s| s.to_string())
}

/// Documentation as its text.
pub(super) fn doc_text(d: Option<&Documentation>) -> Option<String> {
    match d? {
        Documentation::String(s) => Some(s.clone()),
        Documentation::MarkupContent(m) => Some(m.value.clone()),
    }
    .filter(|s| !s.is_empty())
}

fn fact(i: &CompletionItem) -> CompletionFact {
    let insert = match &i.text_edit {
        Some(CompletionTextEdit::Edit(e)) => Some(e.new_text.clone()),
        Some(CompletionTextEdit::InsertAndReplace(e)) => Some(e.new_text.clone()),
        None => i.insert_text.clone(),
    };
    let label_detail = i.label_details.as_ref().and_then(|d| {
        let parts: Vec<&str> = [d.detail.as_deref(), d.description.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    });
    CompletionFact {
        sort_text: i.sort_text.clone().unwrap_or_else(|| i.label.clone()),
        label: i.label.trim().to_string(),
        kind: i.kind.and_then(kind_name),
        label_detail,
        detail: i.detail.clone().filter(|d| !d.is_empty()),
        documentation: doc_text(i.documentation.as_ref()),
        insert_text: insert.filter(|t| t.trim() != i.label.trim()),
    }
}

pub async fn run(o: &mut Ctx<'_>, selector: &str, resolve: bool) -> Result<Outcome<CompleteFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    require::<Completion>(o, Feature::Completion)?;
    let session = o.ensure_session().await?;
    let answer = session
        .request::<Completion>(CompletionParams {
            text_document_position: params,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: Some(CompletionContext {
                trigger_kind: CompletionTriggerKind::INVOKED,
                trigger_character: None,
            }),
        })
        .await?;
    let (is_incomplete, mut items) = match answer {
        Some(CompletionResponse::Array(items)) => (false, items),
        Some(CompletionResponse::List(l)) => (l.is_incomplete, l.items),
        None => (false, Vec::new()),
    };
    let resolved = resolve && session.supports(Feature::CompletionResolve);
    if resolved {
        for item in &mut items {
            let done = session
                .request::<ResolveCompletionItem>(item.clone())
                .await?;
            *item = done;
        }
    }
    let mut facts: Vec<CompletionFact> = items.iter().map(fact).collect();
    facts.sort();
    facts.dedup();
    Ok(Outcome::read(
        CompleteFacts {
            path: target.doc.rel.clone(),
            is_incomplete,
            resolved,
            items: facts,
            provenance: Provenance::Lsp,
        },
        Some(o.resolution(&spec, &target)),
        true,
    ))
}

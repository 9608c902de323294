//! `lanser types SEL [--supertypes|--subtypes]`: the type hierarchy
//! (`textDocument/prepareTypeHierarchy`, then `typeHierarchy/supertypes` and/or
//! `typeHierarchy/subtypes`; both when neither flag is given) — the direct base classes and
//! the direct subclasses of the class at SEL. Facts: `item` (the class at SEL), `supertypes`
//! and `subtypes`, each a location (`path`, `range` = its name, `selector`) with `name`,
//! `kind` and `detail`, sorted like every other location list. Subtypes are cross-file, so
//! asking for them waits for the project. A server without `typeHierarchyProvider` (Pyright,
//! typescript-language-server, rust-analyzer) gets `E/UNSUPPORTED_CAP`.

use super::gate::require;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Facts, Provenance};
use crate::bundle::normalize::Normalizer;
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::{TypeHierarchyPrepare, TypeHierarchySubtypes, TypeHierarchySupertypes};
use lsp_types::{
    TypeHierarchyItem, TypeHierarchyPrepareParams, TypeHierarchySubtypesParams,
    TypeHierarchySupertypesParams,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Base classes and subclasses of the type at SELECTOR (both unless one flag is given)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Types {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Only the types it derives from
    #[arg(long, conflicts_with = "subtypes")]
    pub supertypes: bool,
    /// Only the types that derive from it
    #[arg(long)]
    pub subtypes: bool,
}

/// One type of the hierarchy, named by its selectionRange.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, JsonSchema, Serialize, Deserialize)]
pub struct TypeFact {
    pub path: String,
    /// 0-based `[startLine, startCol, endLine, endCol]` of its name, in the server's unit.
    pub range: [u32; 4],
    pub selector: String,
    pub name: String,
    /// `class`, `interface`, `struct`, … (the protocol's SymbolKind, by name).
    pub kind: String,
    pub detail: Option<String>,
}

/// The facts of `types`.
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct TypesFacts {
    /// The prepared item (null when the selector is not on a type).
    pub item: Option<TypeFact>,
    /// Every prepared item, when there was more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<TypeFact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supertypes: Option<Vec<TypeFact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtypes: Option<Vec<TypeFact>>,
    pub provenance: Provenance,
}

impl Facts for TypesFacts {}

impl Operation for Types {
    const NAME: &'static str = "types";
    type Facts = TypesFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let both = !self.supertypes && !self.subtypes;
        run(
            o,
            &self.selector,
            self.supertypes || both,
            self.subtypes || both,
        )
        .await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        let Some(item) = &facts.item else {
            page.line("no type here");
            return;
        };
        page.line(format_args!("{} {}  {}", item.kind, item.name, place(item)));
        for (title, list) in [
            ("supertypes", &facts.supertypes),
            ("subtypes", &facts.subtypes),
        ] {
            if let Some(list) = list {
                page.line(format_args!("{title}: {}", list.len()));
                for t in list {
                    page.line(format_args!("  {} {}  {}", t.kind, t.name, place(t)));
                }
            }
        }
    }
}

fn place(t: &TypeFact) -> String {
    match super::render::place_of(&t.selector) {
        Some((path, line, col)) => format!("{path}:{line}:{col}"),
        None => t.path.clone(),
    }
}

/// The protocol's SymbolKind by name (the bundle normalizer's table).
pub(super) fn symbol_kind(k: lsp_types::SymbolKind) -> String {
    let n = serde_json::to_value(k).ok().and_then(|v| v.as_u64());
    crate::bundle::normalize::symbol_kind(n.unwrap_or(0)).to_string()
}

fn fact(n: &mut Normalizer, item: &TypeHierarchyItem) -> TypeFact {
    let r = item.selection_range;
    let loc = n.location(
        item.uri.as_str(),
        [r.start.line, r.start.character, r.end.line, r.end.character],
    );
    TypeFact {
        path: loc.path,
        range: loc.range,
        selector: loc.selector,
        name: item.name.clone(),
        kind: symbol_kind(item.kind),
        detail: item.detail.clone().filter(|d| !d.is_empty()),
    }
}

fn sorted(n: &mut Normalizer, items: &[TypeHierarchyItem]) -> Vec<TypeFact> {
    let mut out: Vec<TypeFact> = items.iter().map(|i| fact(n, i)).collect();
    out.sort();
    out.dedup();
    out
}

pub async fn run(
    o: &mut Ctx<'_>,
    selector: &str,
    sup: bool,
    sub: bool,
) -> Result<Outcome<TypesFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    require::<TypeHierarchyPrepare>(o, Feature::TypeHierarchy)?;
    let complete = if sub { o.wait_ready().await? } else { true };
    let session = o.ensure_session().await?;
    let items = session
        .request::<TypeHierarchyPrepare>(TypeHierarchyPrepareParams {
            text_document_position_params: params,
            work_done_progress_params: Default::default(),
        })
        .await?
        .unwrap_or_default();
    let (mut supers, mut subs) = (Vec::new(), Vec::new());
    for item in &items {
        if sup {
            let found = session
                .request::<TypeHierarchySupertypes>(TypeHierarchySupertypesParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            supers.extend(found.into_iter().flatten());
        }
        if sub {
            let found = session
                .request::<TypeHierarchySubtypes>(TypeHierarchySubtypesParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            subs.extend(found.into_iter().flatten());
        }
    }
    let mut n = o.normalizer();
    n.add_document(&target.doc);
    let prepared = sorted(&mut n, &items);
    let facts = TypesFacts {
        item: prepared.first().cloned(),
        items: (prepared.len() > 1).then_some(prepared),
        supertypes: sup.then(|| sorted(&mut n, &supers)),
        subtypes: sub.then(|| sorted(&mut n, &subs)),
        provenance: Provenance::Lsp,
    };
    Ok(Outcome::read(
        facts,
        Some(o.resolution(&spec, &target)),
        complete,
    ))
}

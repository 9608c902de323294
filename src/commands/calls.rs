//! `lanser calls SEL [--incoming|--outgoing]`: the call hierarchy
//! (`textDocument/prepareCallHierarchy`, then `callHierarchy/incomingCalls` and/or
//! `callHierarchy/outgoingCalls`; both when neither flag is given).
//!
//! Facts: `item` (the function at SEL), `incoming` (its callers) and `outgoing` (what it
//! calls). Each call is the other function as a location (`path`, `range` = its name,
//! `selector`) with `name`, `kind`, `detail`, and `callSites`: the call expressions, in the
//! caller's file for incoming calls and in SEL's file for outgoing ones. Lists are sorted like
//! every other location list. Incoming calls are cross-file, so this waits for the project.

use super::gate::require;
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Call, CallItem, CallsFacts, Provenance};
use crate::bundle::normalize::typed::range as range_of;
use crate::bundle::normalize::{sort_by_location, Normalizer};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare,
};
use lsp_types::{
    CallHierarchyIncomingCallsParams, CallHierarchyItem, CallHierarchyOutgoingCallsParams,
    CallHierarchyPrepareParams, Range, SymbolKind,
};

/// Callers and callees of the function at SELECTOR (both unless one flag is given)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Calls {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Only the functions that call it
    #[arg(long, conflicts_with = "outgoing")]
    pub incoming: bool,
    /// Only the functions it calls
    #[arg(long)]
    pub outgoing: bool,
}

impl Operation for Calls {
    const NAME: &'static str = "calls";
    type Facts = CallsFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let both = !self.incoming && !self.outgoing;
        let dirs = Directions {
            incoming: self.incoming || both,
            outgoing: self.outgoing || both,
        };
        run(o, &self.selector, dirs).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::calls(page, facts);
    }
}

/// Which directions to ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directions {
    pub incoming: bool,
    pub outgoing: bool,
}

fn kind_name(k: SymbolKind) -> &'static str {
    match k {
        SymbolKind::MODULE => "module",
        SymbolKind::CLASS => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::PROPERTY => "property",
        SymbolKind::FIELD => "field",
        SymbolKind::CONSTRUCTOR => "constructor",
        SymbolKind::FUNCTION => "function",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::CONSTANT => "constant",
        _ => "other",
    }
}

/// A CallHierarchyItem as a fact, named by its selectionRange.
fn item_fact(n: &mut Normalizer, item: &CallHierarchyItem) -> CallItem {
    let loc = n.location(item.uri.as_str(), range_of(&item.selection_range));
    CallItem {
        name: item.name.clone(),
        kind: kind_name(item.kind).to_string(),
        detail: item.detail.clone().filter(|d| !d.is_empty()),
        path: loc.path,
        range: loc.range,
        selector: loc.selector,
    }
}

/// One incoming or outgoing call: the other item plus its call sites in `sites_uri`.
fn call_fact(
    n: &mut Normalizer,
    other: &CallHierarchyItem,
    sites_uri: &str,
    ranges: &[Range],
) -> Call {
    let item = item_fact(n, other);
    let mut sites: Vec<_> = ranges
        .iter()
        .map(|r| n.location(sites_uri, range_of(r)))
        .collect();
    sites.sort();
    sites.dedup();
    Call {
        name: item.name,
        kind: item.kind,
        detail: item.detail,
        path: item.path,
        range: item.range,
        selector: item.selector,
        call_sites: sites,
    }
}

pub async fn run(o: &mut Ctx<'_>, selector: &str, dirs: Directions) -> Result<Outcome<CallsFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    require::<CallHierarchyPrepare>(o, Feature::CallHierarchy)?;
    let complete = if dirs.incoming {
        o.wait_ready().await?
    } else {
        true
    };
    let session = o.ensure_session().await?;
    let prepared = session
        .request::<CallHierarchyPrepare>(CallHierarchyPrepareParams {
            text_document_position_params: params,
            work_done_progress_params: Default::default(),
        })
        .await?;
    let items = prepared.unwrap_or_default();
    let mut incoming = Vec::new();
    let mut outgoing = Vec::new();
    for item in &items {
        if dirs.incoming {
            let calls = session
                .request::<CallHierarchyIncomingCalls>(CallHierarchyIncomingCallsParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            for call in calls.into_iter().flatten() {
                let from_uri = call.from.uri.as_str().to_string();
                incoming.push((call.from, from_uri, call.from_ranges));
            }
        }
        if dirs.outgoing {
            let calls = session
                .request::<CallHierarchyOutgoingCalls>(CallHierarchyOutgoingCallsParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            for call in calls.into_iter().flatten() {
                let item_uri = item.uri.as_str().to_string();
                outgoing.push((call.to, item_uri, call.from_ranges));
            }
        }
    }
    let mut n = o.normalizer();
    n.add_document(&target.doc);
    let mut item_facts: Vec<CallItem> = items.iter().map(|i| item_fact(&mut n, i)).collect();
    sort_by_location(&mut item_facts);
    type Raw = (CallHierarchyItem, String, Vec<Range>);
    let mut listed = |wanted: bool, calls: Vec<Raw>| {
        wanted.then(|| {
            let mut list: Vec<Call> = calls
                .iter()
                .map(|(other, uri, ranges)| call_fact(&mut n, other, uri, ranges))
                .collect();
            sort_by_location(&mut list);
            list.dedup();
            list
        })
    };
    let incoming = listed(dirs.incoming, incoming);
    let outgoing = listed(dirs.outgoing, outgoing);
    let facts = CallsFacts {
        item: item_facts.first().cloned(),
        items: (item_facts.len() > 1).then_some(item_facts),
        incoming,
        outgoing,
        provenance: Provenance::Lsp,
    };
    Ok(Outcome::read(
        facts,
        Some(o.resolution(&spec, &target)),
        complete,
    ))
}

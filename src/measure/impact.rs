//! Impact analysis: what a change can reach. Seeds are the definitions a change touches (the
//! innermost definition around a selector, or around every line a patch removes or inserts
//! at, from the tree-sitter outline; a change outside every definition seeds the module
//! itself). From each seed, breadth first to a depth: the callers of a function or method
//! (`callHierarchy/incomingCalls`), the definitions around every reference to a class or a
//! variable (`textDocument/references`), the files importing a module whose top level is
//! affected. Each visited definition is visited once, so cycles end.
//!
//! What is reached is partitioned into library code and tests ([`tests_of`], pytest's own
//! collection in [`pytest`], measured coverage in [`coverage`]); [`selection`] is the one
//! rule `impact`, `tests` and pr-v3's test term share. Nothing outside the workspace is
//! reported.

pub mod broken;
pub mod by_content;
pub mod coverage;
pub mod pytest;
pub mod selection;
pub mod tests_of;

use crate::edits::patch::FilePatch;
use crate::error::Result;
use crate::lsp::typed;
use crate::orchestrator::{Cx, Ground};
use crate::relocate::outline::{self, Def, DefKind};
use crate::selector::resolve::Document;
use crate::workspace::{path_to_uri, uri_to_path};
use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyPrepare, GotoDefinition, References,
};
use lsp_types::{
    CallHierarchyIncomingCallsParams, CallHierarchyPrepareParams, GotoDefinitionParams,
    GotoDefinitionResponse, Position, ReferenceContext, ReferenceParams, Uri,
};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Levels of callers followed unless `--depth` says otherwise (and by pr-v2's test term).
pub const DEFAULT_DEPTH: u32 = 3;

/// Most definitions one analysis visits; past it the answer is cut and marked incomplete.
const MAX_VISITED: usize = 2_000;

/// A definition (or a module's top level, `qual` empty) in a workspace file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Item {
    pub path: String,
    pub qual: Vec<String>,
}

/// A file read once: its text and outline.
pub struct Parsed {
    pub doc: Document,
    pub defs: Vec<Def>,
}

/// What an analysis found.
pub struct Analysis {
    pub seeds: Vec<Item>,
    /// Every item reached (seeds included), with the depth it was first reached at.
    pub reached: BTreeMap<Item, u32>,
    /// Impacted test node ids (`path::name`, `path::Class::name`), with their depth.
    pub tests: BTreeMap<String, (Item, u32)>,
    pub truncated: bool,
    pub files: BTreeMap<String, Parsed>,
}

/// Read and outline a document.
pub fn parse(doc: Document) -> Parsed {
    let defs = outline::parse(&doc.text)
        .map(|t| outline::definitions(&t, &doc.text))
        .unwrap_or_default();
    Parsed { doc, defs }
}

/// The innermost definition around `offset` (the module when there is none).
pub fn enclosing(path: &str, defs: &[Def], offset: usize) -> Item {
    let inner = defs
        .iter()
        .filter(|d| d.node.0 <= offset && offset < d.node.1.max(d.node.0 + 1))
        .min_by_key(|d| d.node.1 - d.node.0);
    Item {
        path: path.to_string(),
        qual: inner.map(|d| d.qual.clone()).unwrap_or_default(),
    }
}

/// 1-based old-side lines a hunk removes, or inserts before.
pub fn changed_lines(fp: &FilePatch) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for h in &fp.hunks {
        let mut line = h.old_start.max(1);
        for l in &h.lines {
            match l.as_bytes().first() {
                Some(b'-') => {
                    out.insert(line);
                    line += 1;
                }
                Some(b'+') => {
                    // An insertion belongs to the line before it (a body grows from within).
                    out.insert(line.saturating_sub(1).max(1));
                }
                _ => line += 1,
            }
        }
    }
    out
}

/// The seeds of a patch: the definitions around its changed lines, per file.
pub fn seeds_of_patch(
    g: &Ground,
    files: &[FilePatch],
) -> Result<(Vec<Item>, BTreeMap<String, Parsed>)> {
    let mut seeds = BTreeSet::new();
    let mut parsed = BTreeMap::new();
    for fp in files {
        let (abs, rel) = g.ws().resolve_user_path(&fp.path, &g.opts().cwd)?;
        let p = parse(Document::load(abs, rel.clone())?);
        for line in changed_lines(fp) {
            let Some((start, end)) = p.doc.index.line_span(line - 1) else {
                continue;
            };
            // The first non-blank byte of the line decides where it belongs.
            let text = &p.doc.text[start..end];
            let indent = text.len() - text.trim_start().len();
            seeds.insert(enclosing(&rel, &p.defs, start + indent));
        }
        parsed.insert(rel, p);
    }
    Ok((seeds.into_iter().collect(), parsed))
}

/// The seeds of in-memory changes (a document and its new text), by a line diff.
pub fn seeds_of_changes(changes: &[(Document, String)]) -> (Vec<Item>, BTreeMap<String, Parsed>) {
    let mut seeds = BTreeSet::new();
    let mut parsed = BTreeMap::new();
    for (doc, new) in changes {
        let p = parse(doc.clone());
        let diff = similar::TextDiff::from_lines(doc.text.as_str(), new.as_str());
        for op in diff.ops() {
            let old = op.old_range();
            let lines: Vec<usize> = match op.tag() {
                similar::DiffTag::Equal => continue,
                similar::DiffTag::Insert => vec![old.start.saturating_sub(1)],
                _ => old.collect(),
            };
            for line in lines {
                if let Some((start, end)) = p.doc.index.line_span(line) {
                    let text = &p.doc.text[start..end];
                    let indent = text.len() - text.trim_start().len();
                    seeds.insert(enclosing(&doc.rel, &p.defs, start + indent));
                }
            }
        }
        parsed.insert(doc.rel.clone(), p);
    }
    (seeds.into_iter().collect(), parsed)
}

/// Breadth-first from the seeds to `depth` levels, then the impacted tests.
pub async fn analyse(
    cx: &mut Cx<'_>,
    seeds: Vec<Item>,
    mut files: BTreeMap<String, Parsed>,
    depth: u32,
    rules: tests_of::Rules<'_>,
) -> Result<Analysis> {
    let mut reached: BTreeMap<Item, u32> = BTreeMap::new();
    let mut queue: VecDeque<(Item, u32)> = VecDeque::new();
    for s in &seeds {
        reached.insert(s.clone(), 0);
        queue.push_back((s.clone(), 0));
    }
    let mut truncated = false;
    while let Some((item, d)) = queue.pop_front() {
        if d >= depth || rules.stops(&item) {
            continue;
        }
        // An overridden method is reached where its override is: calls through the base
        // class dispatch to it.
        let mut next: Vec<(Item, u32)> = overridden(cx, &mut files, &item)
            .await?
            .into_iter()
            .map(|i| (i, d))
            .collect();
        next.extend(
            callers(cx, &mut files, &item)
                .await?
                .into_iter()
                .map(|i| (i, d + 1)),
        );
        for (item, level) in next {
            if reached.contains_key(&item) {
                continue;
            }
            if reached.len() >= MAX_VISITED {
                truncated = true;
                break;
            }
            reached.insert(item.clone(), level);
            queue.push_front_or_back(item, level, d);
        }
    }
    let tests = tests_of::select(cx.ground(), &mut files, &reached, rules)?;
    Ok(Analysis {
        seeds,
        reached,
        tests,
        truncated,
        files,
    })
}

/// Breadth first, with same-level items (overridden methods) ahead of the next level.
trait Frontier {
    fn push_front_or_back(&mut self, item: Item, level: u32, current: u32);
}

impl Frontier for VecDeque<(Item, u32)> {
    fn push_front_or_back(&mut self, item: Item, level: u32, current: u32) {
        match level == current {
            true => self.push_front((item, level)),
            false => self.push_back((item, level)),
        }
    }
}

/// The methods of the base classes that `item` (a method) overrides, found through the
/// server's definitions of the names in its class's `class C(Base, …):` header.
async fn overridden(
    cx: &mut Cx<'_>,
    files: &mut BTreeMap<String, Parsed>,
    item: &Item,
) -> Result<Vec<Item>> {
    let Some((method, class_qual)) = item.qual.split_last() else {
        return Ok(vec![]);
    };
    let Some(p) = load(cx.ground(), files, &item.path) else {
        return Ok(vec![]);
    };
    let Some(class) = p
        .defs
        .iter()
        .find(|d| d.qual == class_qual && d.kind == DefKind::Class)
    else {
        return Ok(vec![]);
    };
    let header = &p.doc.text[class.sig.0..class.sig.1];
    let (Some(open), Some(close)) = (header.find('('), header.rfind(')')) else {
        return Ok(vec![]);
    };
    let mut bases = Vec::new();
    let mut at = open + 1;
    for part in header[open + 1..close].split(',') {
        let lead = part.len() - part.trim_start().len();
        let name = part.trim();
        if !name.is_empty() && !name.contains('=') {
            // The last dotted component names the class (`abc.ABC` → `ABC`).
            let last = name.rfind('.').map_or(0, |i| i + 1);
            bases.push(class.sig.0 + at + lead + last);
        }
        at += part.len() + 1;
    }
    let doc = p.doc.clone();
    let uri = path_to_uri(&doc.abs);
    let mut out = Vec::new();
    for offset in bases {
        let session = cx.session().await?;
        session.sync_document(&uri, &doc);
        let enc = session.encoding;
        let answer = session
            .request::<GotoDefinition>(GotoDefinitionParams {
                text_document_position_params: typed::at(&doc, offset, enc)?,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            })
            .await?;
        for (u, start) in starts(answer) {
            let Some(rel) = uri_to_path(u.as_str()).and_then(|abs| cx.ws().relative(&abs)) else {
                continue;
            };
            let Some(bp) = load(cx.ground(), files, &rel) else {
                continue;
            };
            let (line, col) = (start.line as usize, start.character as usize);
            let off = bp.doc.index.offset_clamped(&bp.doc.text, line, col, enc);
            let base = enclosing(&rel, &bp.defs, off);
            let mut qual = base.qual.clone();
            qual.push(method.clone());
            if !base.qual.is_empty() && bp.defs.iter().any(|d| d.qual == qual) {
                out.push(Item { path: rel, qual });
            }
        }
    }
    Ok(out)
}

/// Load a workspace file into `files` once.
pub fn load<'f>(
    g: &Ground,
    files: &'f mut BTreeMap<String, Parsed>,
    rel: &str,
) -> Option<&'f Parsed> {
    if !files.contains_key(rel) {
        let doc = Document::load(g.ws().root.join(rel), rel.to_string()).ok()?;
        files.insert(rel.to_string(), parse(doc));
    }
    files.get(rel)
}

/// The items one step up from `item`.
async fn callers(
    cx: &mut Cx<'_>,
    files: &mut BTreeMap<String, Parsed>,
    item: &Item,
) -> Result<Vec<Item>> {
    if item.qual.is_empty() {
        // A module's top level: the files that import it.
        let importers = crate::python::importers(cx.ws(), std::slice::from_ref(&item.path));
        return Ok(importers
            .into_iter()
            .map(|path| Item { path, qual: vec![] })
            .collect());
    }
    let Some(p) = load(cx.ground(), files, &item.path) else {
        return Ok(vec![]);
    };
    let Some(def) = p.defs.iter().find(|d| d.qual == item.qual) else {
        return Ok(vec![]);
    };
    let (kind, own) = (def.kind, def.node);
    let doc = p.doc.clone();
    let uri = path_to_uri(&doc.abs);
    let session = cx.session().await?;
    session.sync_document(&uri, &doc);
    let at = typed::at(&doc, def.name.0, session.encoding)?;
    let mut places: Vec<(String, Position)> = Vec::new();
    if kind == DefKind::Function {
        let prepared = session
            .request::<CallHierarchyPrepare>(CallHierarchyPrepareParams {
                text_document_position_params: at,
                work_done_progress_params: Default::default(),
            })
            .await?;
        for item in prepared.into_iter().flatten() {
            let calls = session
                .request::<CallHierarchyIncomingCalls>(CallHierarchyIncomingCallsParams {
                    item,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            for call in calls.into_iter().flatten() {
                let from = call.from;
                places.push((from.uri.as_str().to_string(), from.selection_range.start));
            }
        }
    } else {
        let refs = session
            .request::<References>(ReferenceParams {
                text_document_position: at,
                context: ReferenceContext {
                    include_declaration: false,
                },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            })
            .await?;
        for loc in refs.into_iter().flatten() {
            places.push((loc.uri.as_str().to_string(), loc.range.start));
        }
    }
    let enc = session.encoding;
    let mut out = BTreeSet::new();
    for (u, pos) in places {
        let Some(rel) = uri_to_path(&u).and_then(|abs| cx.ws().relative(&abs)) else {
            continue; // outside the workspace
        };
        let Some(p) = load(cx.ground(), files, &rel) else {
            continue;
        };
        let (line, col) = (pos.line as usize, pos.character as usize);
        let offset = p.doc.index.offset_clamped(&p.doc.text, line, col, enc);
        if rel == item.path && own.0 <= offset && offset < own.1 {
            continue; // a use inside the definition itself (recursion, a class's own body)
        }
        out.insert(enclosing(&rel, &p.defs, offset));
    }
    Ok(out.into_iter().collect())
}

/// Where each answer of a definition request starts: a link's target name, else the location.
fn starts(answer: Option<GotoDefinitionResponse>) -> Vec<(Uri, Position)> {
    match answer {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => vec![(l.uri, l.range.start)],
        Some(GotoDefinitionResponse::Array(ls)) => {
            ls.into_iter().map(|l| (l.uri, l.range.start)).collect()
        }
        Some(GotoDefinitionResponse::Link(ls)) => ls
            .into_iter()
            .map(|l| (l.target_uri, l.target_selection_range.start))
            .collect(),
    }
}

pub fn kind_of(files: &BTreeMap<String, Parsed>, item: &Item) -> &'static str {
    if item.qual.is_empty() {
        return "module";
    }
    files
        .get(&item.path)
        .and_then(|p| p.defs.iter().find(|d| d.qual == item.qual))
        .map_or("other", |d| d.kind.as_str())
}

//! Durable selectors for a resolved span: the `py://` selector (`sym://` outside Python) and
//! `symbolId` of the definition whose name it is, and a hashed `anchor://` for its text, each pinned to the
//! file's `docVersion`, so an agent can hold on to a place across edits
//! (docs/relocation.md#durable-selectors-and-symbolid).

use super::grammars::Grammar;
use super::score::SymbolInfo;
use super::{anchor, structural};
use crate::python::modules;
use crate::selector::resolve::Document;
use crate::selector::{is_ident_char, PositionSpec, DEFAULT_CTX};
use crate::workspace::Workspace;

/// The definition named at `offset` (its name, or the start of its header, body or
/// docstring), with its `py://` selector (`sym://` in a file of another language).
/// `cache` keeps the parse for later requests on the same content.
pub fn symbol_at(
    ws: &Workspace,
    cache: &structural::ParseCache,
    doc: &Document,
    offset: usize,
) -> Option<(SymbolInfo, String)> {
    let roots = ws.import_roots();
    // A Python module is named by `py://`; any other file with an outline by `sym://`.
    let module = modules::module_of(&roots, &doc.abs);
    if module.is_none() && Grammar::for_path(&doc.rel).is_none_or(|g| g == Grammar::Python) {
        return None;
    }
    let p = cache
        .parsed(doc, module.clone().unwrap_or_else(|| doc.rel.clone()))
        .ok()?;
    // The innermost definition whose name contains the offset or one of whose role spans
    // starts there (nested definitions come after their parents).
    let d = p.defs.iter().rev().find(|d| {
        (d.name.0 <= offset && offset <= d.name.1)
            || d.sig.0 == offset
            || d.body.is_some_and(|b| b.0 == offset)
            || d.doc.is_some_and(|b| b.0 == offset)
    })?;
    let info = structural::symbol_info(&p, d);
    let overload = d.is_overload().then(|| {
        p.defs
            .iter()
            .filter(|o| o.qual == d.qual && o.is_overload())
            .position(|o| o.node == d.node)
            .unwrap_or(0) as u32
    });
    let doc_version = Some(doc.doc_version.clone());
    let spec = match module {
        Some(module) => PositionSpec::Symbol {
            module,
            qualname: d.qualname(),
            role: None,
            overload,
            doc_version,
        },
        None => PositionSpec::Sym {
            path: doc.rel.clone(),
            qualname: d.qualname(),
            role: None,
            doc_version,
        },
    };
    Some((info, spec.to_canonical()))
}

/// A hashed anchor for `[start, end)`: its first line, or the identifier at an empty span.
pub fn anchor_for(doc: &Document, start: usize, end: usize) -> Option<String> {
    let text = &doc.text;
    let (s, e) = if end > start {
        let first = text[start..end]
            .find(['\n', '\r'])
            .map_or(end, |i| start + i);
        (start, first)
    } else {
        let s = text[..start]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_ident_char(*c))
            .last()
            .map_or(start, |(i, _)| i);
        let e = text[start..]
            .char_indices()
            .find(|(_, c)| !is_ident_char(*c))
            .map_or(text.len(), |(i, _)| start + i);
        (s, e)
    };
    if e <= s || text[s..e].trim().is_empty() {
        return None;
    }
    let ctx = DEFAULT_CTX as usize;
    let spec = PositionSpec::Anchor {
        path: doc.rel.clone(),
        snippet: text[s..e].to_string(),
        ctx: Some(DEFAULT_CTX),
        hash: Some(anchor::window_hash(text, s, e, ctx)),
        doc_version: Some(doc.doc_version.clone()),
    };
    Some(spec.to_canonical())
}

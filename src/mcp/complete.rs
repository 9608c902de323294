//! Completions for arguments that name code (`completion/complete`): a `selector` (or a
//! `file`/`path`) completes, from what is typed so far, to
//! - workspace files and directories (`src/sh` → `src/shapes/`, `src/shapes/units.py`);
//! - `py://` module names (`py://shapes.u` → `py://shapes.units`) and, after `#`, the
//!   qualified names the module defines (`py://shapes.units#con` → `py://shapes.units#convert`);
//! - `@L` lines of a Python file that hold a definition, with its name
//!   (`src/shapes/units.py@L1` → `src/shapes/units.py@L12:convert`).
//!
//! All of it is read from the workspace's files (the index and a tree-sitter parse), never
//! from a language server: a completion answers while the server is still loading. Values are
//! sorted, at most [`CompletionInfo::MAX_VALUES`], with the total and whether more exist.

use crate::python::modules;
use crate::relocate::outline;
use crate::workspace::Workspace;
use rmcp::model::CompletionInfo;
use std::collections::BTreeSet;

/// The argument names whose values are selectors or paths.
pub const SELECTOR_ARGS: &[&str] = &["selector", "file", "path"];

/// The completion of `value` for the argument `name` (nothing for an argument that does not
/// name code).
pub fn complete(ws: &Workspace, name: &str, value: &str) -> CompletionInfo {
    let all: Vec<String> = if !SELECTOR_ARGS.contains(&name) {
        Vec::new()
    } else if let Some(rest) = value.strip_prefix("py://") {
        python_names(ws, rest)
    } else if let Some((file, line)) = value.split_once("@L") {
        lines(ws, file, line)
    } else {
        paths(ws, value)
    };
    let total = all.len();
    let values: Vec<String> = all.into_iter().take(CompletionInfo::MAX_VALUES).collect();
    let has_more = values.len() < total;
    let mut info = CompletionInfo::new(values).unwrap_or_default();
    info.total = u32::try_from(total).ok();
    info.has_more = Some(has_more);
    info
}

/// Workspace files and directories (`dir/`) that start with `prefix`: the next path component
/// only, so a large tree completes a level at a time.
fn paths(ws: &Workspace, prefix: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    for rel in ws.index().sources() {
        if !rel.starts_with(prefix) {
            continue;
        }
        out.insert(match rel[prefix.len()..].find('/') {
            Some(i) => rel[..prefix.len() + i + 1].to_string(),
            None => rel.clone(),
        });
    }
    out.into_iter().collect()
}

/// `py://` completions of `rest` (what follows `py://`): module names, or after `#` the
/// qualified names the module defines.
fn python_names(ws: &Workspace, rest: &str) -> Vec<String> {
    let roots = ws.import_roots();
    if let Some((module, qual)) = rest.split_once('#') {
        let Some(file) = modules::module_file(&roots, module) else {
            return Vec::new();
        };
        let Ok(text) = std::fs::read_to_string(&file) else {
            return Vec::new();
        };
        let Some(tree) = outline::parse(&text) else {
            return Vec::new();
        };
        let names: BTreeSet<String> = outline::definitions(&tree, &text)
            .iter()
            .map(outline::Def::qualname)
            .filter(|q| q.starts_with(qual))
            .map(|q| format!("py://{module}#{q}"))
            .collect();
        return names.into_iter().collect();
    }
    let names: BTreeSet<String> = ws
        .python_files()
        .iter()
        .filter_map(|rel| modules::module_of(&roots, &ws.root.join(rel)))
        .filter(|m| m.starts_with(rest))
        .map(|m| format!("py://{m}"))
        .collect();
    names.into_iter().collect()
}

/// `FILE@L<n>:<name>` for each definition of `file` whose line number starts with `typed`
/// (the digits after `@L`; empty lists them all), in line order.
fn lines(ws: &Workspace, file: &str, typed: &str) -> Vec<String> {
    let digits: String = typed.chars().take_while(char::is_ascii_digit).collect();
    let Some(abs) = ws.snapshot_file(file) else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(abs) else {
        return Vec::new();
    };
    let defs = match modules::is_python(file) {
        true => outline::parse(&text).map(|t| outline::definitions(&t, &text)),
        false => None,
    };
    let index = crate::text::LineIndex::new(&text);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for d in defs.unwrap_or_default() {
        let line = index
            .position(&text, d.name.0, crate::text::Encoding::Utf8)
            .0
            + 1;
        let name = &text[d.name.0..d.name.1];
        if line.to_string().starts_with(&digits) && seen.insert((line, name.to_string())) {
            out.push((line, format!("{file}@L{line}:{name}")));
        }
    }
    out.sort();
    out.into_iter().map(|(_, s)| s).collect()
}

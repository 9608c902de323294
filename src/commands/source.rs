//! `lanser source SEL [--signature]`: the code of the definition at a selector — decorators,
//! signature, docstring and body (or, with `--signature`, its decorators and header only) —
//! with its range, the file's `docVersion` and a durable selector for it. Read from lanser's
//! own parse (tree-sitter), without the server; in any language with an outline.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Facts, Provenance};
use crate::bundle::Bundle;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Ctx, Outcome};
use crate::python::modules;
use crate::relocate::{durable, structural};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The code of the definition at SELECTOR: decorators, signature, docstring and body
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Source {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Only its decorators and header (through the `:` or `{` that opens the body)
    #[arg(long)]
    pub signature: bool,
}

/// `source`'s facts.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceFacts {
    /// The file, workspace-relative.
    pub path: String,
    /// The definition's qualified name (`Class.method`).
    pub qualname: String,
    /// `function`, `class`, `method`, … as the outline names it.
    pub kind: String,
    /// `[startLine, startCol, endLine, endCol]` of `text`, in the server's coordinates.
    pub range: [u32; 4],
    /// 1-based line of the first line of `text`.
    pub first_line: u64,
    /// The code, from the start of the line of its first decorator (or keyword), indentation
    /// included, to the end of its body (or header).
    pub text: String,
    /// The file's content hash when it was read.
    pub doc_version: String,
    /// A selector for the definition that survives edits (`py://…` or `sym://…`).
    pub selector: Option<String>,
    pub provenance: Provenance,
}

impl Facts for SourceFacts {}

impl Operation for Source {
    const NAME: &'static str = "source";
    type Facts = SourceFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    fn uses_server(&self) -> bool {
        false
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.selector, self.signature)
    }
    /// The code itself, each line numbered as in the file.
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.line(format_args!(
            "{} {} ({}:{})",
            facts.kind, facts.qualname, facts.path, facts.first_line
        ));
        let lines: Vec<&str> = facts.text.split('\n').collect();
        let width = (facts.first_line + lines.len() as u64).to_string().len();
        for (i, l) in lines.iter().enumerate() {
            page.line(format_args!("{:>width$}  {l}", facts.first_line + i as u64));
        }
    }
}

/// The definition a selector lands in: its file, the innermost definition holding the
/// target, and where its code starts (the line start, when only blanks precede it there).
pub struct Found {
    pub resolution: crate::bundle::Resolution,
    pub doc: crate::selector::resolve::Document,
    pub parsed: std::sync::Arc<structural::Parsed>,
    pub def: crate::relocate::outline::Def,
    pub start: usize,
}

/// Resolve `selector` and find the definition holding it (E/NOT_FOUND when none does).
pub fn definition(o: &mut Ctx<'_>, selector: &str) -> Result<Found> {
    let (spec, target) = o.resolve(selector)?;
    let resolution = o.resolution(&spec, &target);
    let doc = target.doc;
    let module = modules::module_of(&o.ws().import_roots(), &doc.abs);
    let parsed = o
        .parse_cache()
        .parsed(&doc, module.unwrap_or_else(|| doc.rel.clone()))?;
    // The innermost definition holding the target (nested ones come after their parents).
    let at = target.start;
    let Some(def) = parsed
        .defs
        .iter()
        .rev()
        .find(|d| d.node.0 <= at && at <= d.node.1)
        .cloned()
    else {
        return Err(LanserError::not_found(format!(
            "no definition at {} (a function, class, method or assignment holds the selector)",
            resolution.resolved.path
        )));
    };
    // Whole lines: from the start of the first (its indentation included) when only blanks
    // precede the definition there.
    let line_start = doc.text[..def.node.0].rfind('\n').map_or(0, |i| i + 1);
    let start = match doc.text[line_start..def.node.0]
        .trim_matches([' ', '\t'])
        .is_empty()
    {
        true => line_start,
        false => def.node.0,
    };
    Ok(Found {
        resolution,
        doc,
        parsed,
        def,
        start,
    })
}

pub fn run(o: &mut Ctx<'_>, selector: &str, signature: bool) -> Result<Outcome<SourceFacts>> {
    let Found {
        resolution,
        doc,
        parsed,
        def,
        start,
    } = definition(o, selector).map_err(|mut e| {
        if e.code == crate::error::ErrorCode::NotFound && e.message.starts_with("no definition at")
        {
            e.message = format!("source: {}", e.message);
        }
        e
    })?;
    let end = match signature {
        true => def.sig.1,
        false => def.node.1,
    };
    let encoding = o.encoding();
    let (sl, sc) = doc.position(start, encoding);
    let (el, ec) = doc.position(end, encoding);
    let info = structural::symbol_info(&parsed, &def);
    let durable = durable::symbol_at(o.ws(), o.parse_cache(), &doc, def.name.0).map(|(_, s)| s);
    let facts = SourceFacts {
        path: doc.rel.clone(),
        qualname: def.qualname(),
        kind: info.kind,
        range: [sl as u32, sc as u32, el as u32, ec as u32],
        first_line: sl as u64 + 1,
        text: doc.text[start..end].to_string(),
        doc_version: doc.doc_version.clone(),
        selector: durable,
        provenance: Provenance::Parser,
    };
    Ok(Outcome::read(facts, Some(resolution), true))
}

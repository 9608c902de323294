//! `lanser impact SEL` and `lanser impact --patch FILE.diff`: what a change can affect — the
//! operation over [`crate::measure::impact`] (the analysis and the test selection it shares
//! with `tests` and pr-v3), which it turns into facts.
//!
//! From a selector, the seed is the innermost definition around it; from `--patch`, every
//! definition around a line the patch removes or inserts at. Facts list the seeds, the
//! library code reached (with its depth) and the impacted tests (node ids), as the selection
//! chose them.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{ImpactFacts, ImpactItem};
use crate::bundle::Bundle;
use crate::edits::patch;
use crate::error::{LanserError, Result};
use crate::measure::impact::{
    changed_lines, enclosing, kind_of, parse, seeds_of_patch, selection, Analysis, Item,
};
use crate::orchestrator::{Ctx, Outcome};
use crate::workspace::path_to_uri;
use std::collections::{BTreeMap, BTreeSet};

/// What a change can affect: the definitions it touches, their callers and references
/// (transitively), and the tests that reach them
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Impact {
    /// The changed symbol (path@L42:C7, py://…, …); or give --patch
    pub selector: Option<String>,
    /// A unified diff: its changed lines seed the analysis (`-` for stdin)
    #[arg(long, value_name = "FILE", conflicts_with = "selector")]
    pub patch: Option<String>,
    /// Levels of callers to follow
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub depth: u32,
}

impl Operation for Impact {
    fn reads_stdin(&self) -> bool {
        self.patch.as_deref() == Some("-")
    }
    fn reads_file_set(&self) -> bool {
        true
    }
    const NAME: &'static str = "impact";
    type Facts = ImpactFacts;
    fn selector(&self) -> Option<&str> {
        self.selector.as_deref()
    }
    /// With --patch it reads its patch file when it runs.
    fn memoizable(&self) -> bool {
        self.patch.is_none()
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(
            o,
            self.selector.as_deref(),
            self.patch.as_deref(),
            self.depth,
        )
        .await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::impact(page, facts);
    }
}

pub async fn run(
    o: &mut Ctx<'_>,
    selector: Option<&str>,
    patch_path: Option<&str>,
    depth: u32,
) -> Result<Outcome<ImpactFacts>> {
    let found = select_for(o, selector, patch_path, depth, "impact").await?;
    Ok(Outcome::read(
        facts(o, &found.chosen, depth),
        found.resolution,
        found.complete && !found.chosen.analysis.truncated,
    ))
}

/// A selection for a selector or a patch, as `impact` and `tests` make it.
pub struct Found {
    pub chosen: selection::Selected,
    pub resolution: Option<crate::bundle::Resolution>,
    pub complete: bool,
    /// A patch's changes: each file and its patched text.
    pub changes: Vec<(String, String)>,
}

/// Seeds from a selector or a patch, then the shared selection.
pub async fn select_for(
    o: &mut Ctx<'_>,
    selector: Option<&str>,
    patch_path: Option<&str>,
    depth: u32,
    op: &str,
) -> Result<Found> {
    let mut patch_lines = None;
    let mut changes = Vec::new();
    let (seeds, resolution) = match (selector, patch_path) {
        (Some(sel), None) => {
            let (spec, target) = o.resolve(sel)?;
            let mut files = BTreeMap::new();
            let rel = target.doc.rel.clone();
            let parsed = parse(target.doc.clone());
            let item = enclosing(&rel, &parsed.defs, target.start);
            files.insert(rel, parsed);
            let resolution = o.resolution(&spec, &target);
            ((vec![item], files), Some(resolution))
        }
        (None, Some(p)) => {
            let text = super::check::read_patch(o, p)?;
            let fps = patch::parse(&text)?;
            super::check::refuse_unserved(o, fps.iter().map(|f| f.path.as_str()))?;
            let seeds = seeds_of_patch(o.ground(), &fps)?;
            let mut lines = selection::Lines::new();
            for fp in &fps {
                let (_, rel) = o.ws().resolve_user_path(&fp.path, &o.opts().cwd)?;
                if let Some(p) = seeds.1.get(&rel) {
                    changes.push((rel.clone(), patch::apply(&rel, &p.doc.text, fp)?));
                }
                lines.insert(rel, changed_lines(fp));
            }
            patch_lines = Some(lines);
            (seeds, None)
        }
        _ => {
            return Err(LanserError::usage(format!(
                "{op} takes a selector or --patch FILE, not both and not neither"
            )))
        }
    };
    let complete = o.wait_ready().await?;
    let edits = patch_lines.is_some().then_some(&changes[..]);
    let lines = selection::seed_lines(&seeds.0, &seeds.1, patch_lines);
    let chosen = selection::select(&mut o.cx(), seeds.0, seeds.1, depth, lines, edits).await?;
    Ok(Found {
        chosen,
        resolution,
        complete,
        changes,
    })
}

/// An item as a location fact (its name's range; a module's first line).
pub fn item_fact(o: &Ctx<'_>, impact: &Analysis, item: &Item) -> ImpactItem {
    let p = impact.files.get(&item.path);
    let def = p.and_then(|p| p.defs.iter().find(|d| d.qual == item.qual));
    let enc = o.encoding();
    let range = match (p, def) {
        (Some(p), Some(d)) => {
            let (l0, c0) = p.doc.position(d.name.0, enc);
            let (l1, c1) = p.doc.position(d.name.1, enc);
            [l0 as u32, c0 as u32, l1 as u32, c1 as u32]
        }
        _ => [0, 0, 0, 0],
    };
    let mut n = o.normalizer();
    if let Some(p) = p {
        n.add_document(&p.doc);
    }
    let loc = n.location(&path_to_uri(&o.ws().root.join(&item.path)), range);
    ImpactItem {
        path: loc.path,
        name: if item.qual.is_empty() {
            "<module>".to_string()
        } else {
            item.qual.join(".")
        },
        kind: kind_of(&impact.files, item).to_string(),
        range: loc.range,
        selector: loc.selector,
        depth: None,
        id: None,
    }
}

fn facts(o: &Ctx<'_>, chosen: &selection::Selected, depth: u32) -> ImpactFacts {
    let impact = &chosen.analysis;
    let rules = chosen.rules();
    let seeds: Vec<ImpactItem> = impact
        .seeds
        .iter()
        .map(|s| item_fact(o, impact, s))
        .collect();
    let library: Vec<ImpactItem> = impact
        .reached
        .iter()
        .filter(|(i, _)| !rules.is_test_code(&i.path))
        .map(|(i, d)| ImpactItem {
            depth: Some(*d),
            ..item_fact(o, impact, i)
        })
        .collect();
    let tests: Vec<ImpactItem> = impact
        .tests
        .iter()
        .map(|(id, (i, d))| ImpactItem {
            id: Some(id.clone()),
            depth: (!chosen.coverage_only.contains(id)).then_some(*d),
            ..item_fact(o, impact, i)
        })
        .collect();
    let test_files: BTreeSet<&str> = impact
        .tests
        .keys()
        .map(|id| crate::testrun::file_of(id))
        .collect();
    ImpactFacts {
        seeds,
        library,
        tests,
        test_files: test_files.into_iter().map(String::from).collect(),
        depth,
        truncated: impact.truncated,
        selection: chosen.selection.clone(),
        provenance: "lsp+tree-sitter".into(),
    }
}

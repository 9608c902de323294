//! The one test selection `impact`, `tests` and pr-v3's test term share: pytest's collected
//! tests ([`super::pytest`]) that the change reaches statically (callers, references,
//! fixtures: [`super::analyse`]), plus the tests whose executed lines the change touches,
//! measured ([`super::coverage`]); for a patch, a changed line no test executed stands for
//! its enclosing definition's tests, else its file's (`selection.widened` says which). Without
//! coverage data the selection is static and the facts say why.

use super::tests_of::Rules;
use super::{analyse, coverage, pytest, Analysis, Item, Parsed};
use crate::bundle::facts::TestSelection;
use crate::error::Result;
use crate::orchestrator::Cx;
use std::collections::{BTreeMap, BTreeSet};

/// Changed lines per workspace-relative file (1-based, old side).
pub type Lines = BTreeMap<String, BTreeSet<usize>>;

/// A definition around a changed line: its dotted name and 1-based lines (decorators in).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Scope {
    pub name: String,
    pub first: usize,
    pub last: usize,
}

/// Per file and changed line, the definitions around it, innermost first.
pub type Scopes = BTreeMap<String, BTreeMap<usize, Vec<Scope>>>;

/// The definitions around each of a patch's changed lines (read from `files`, the changed
/// files as they are).
pub fn scopes(lines: &Lines, files: &BTreeMap<String, Parsed>) -> Scopes {
    let mut out = Scopes::new();
    for (f, want) in lines {
        let Some(p) = files.get(f) else {
            continue;
        };
        let enc = crate::text::Encoding::Utf8;
        let spans: Vec<Scope> = p
            .defs
            .iter()
            .map(|d| Scope {
                name: d.qual.join("."),
                first: p.doc.position(d.node.0, enc).0 + 1,
                last: p.doc.position(d.node.1, enc).0 + 1,
            })
            .collect();
        let per = out.entry(f.clone()).or_default();
        for &line in want {
            let mut around: Vec<Scope> = spans
                .iter()
                .filter(|s| s.first <= line && line <= s.last)
                .cloned()
                .collect();
            around.sort_by_key(|s| s.last - s.first);
            per.insert(line, around);
        }
    }
    out
}

/// An analysis and how its tests were found.
pub struct Selected {
    pub analysis: Analysis,
    pub selection: TestSelection,
    /// The collected tests with their definitions (empty under the naming rules).
    pub items: Vec<(String, Item, bool)>,
    /// Tests only a measurement selected (coverage, or the collection after a change): no
    /// static path reaches them.
    pub coverage_only: BTreeSet<String>,
    /// Each test's outcome on the workspace as it is, where a measurement knows it (the
    /// coverage run; the collection's errors).
    pub before: Option<BTreeMap<String, crate::testrun::Outcome>>,
    /// The project's tests may run split across processes (the coverage run measured it).
    pub side_by_side: bool,
}

impl Selected {
    pub fn rules(&self) -> Rules<'_> {
        match self.selection.tests.as_str() {
            "pytest" => Rules::Collected(&self.items),
            _ => Rules::Naming,
        }
    }
}

/// The lines coverage is matched against: a patch's changed lines, else (a selector) every
/// line of each seed definition.
pub fn seed_lines(seeds: &[Item], files: &BTreeMap<String, Parsed>, patch: Option<Lines>) -> Lines {
    if let Some(l) = patch {
        return l;
    }
    let mut out = Lines::new();
    for s in seeds {
        let Some(p) = files.get(&s.path) else {
            continue;
        };
        let span = match p.defs.iter().find(|d| d.qual == s.qual) {
            Some(d) if !s.qual.is_empty() => d.node,
            _ => continue,
        };
        let (l0, _) = p.doc.position(span.0, crate::text::Encoding::Utf8);
        let (l1, _) = p.doc.position(span.1, crate::text::Encoding::Utf8);
        out.entry(s.path.clone())
            .or_default()
            .extend(l0 + 1..=l1 + 1);
    }
    out
}

/// The changed old-side lines of in-memory changes (a document and its new text).
pub fn lines_of_changes(changes: &[(crate::selector::resolve::Document, String)]) -> Lines {
    let mut out = Lines::new();
    for (doc, new) in changes {
        let diff = similar::TextDiff::from_lines(doc.text.as_str(), new.as_str());
        let set = out.entry(doc.rel.clone()).or_default();
        for op in diff.ops() {
            let old = op.old_range();
            match op.tag() {
                similar::DiffTag::Equal => {}
                similar::DiffTag::Insert => {
                    set.insert(old.start.max(1));
                }
                _ => set.extend(old.map(|l| l + 1)),
            }
        }
    }
    out
}

/// Select the tests for seeds (and the lines they change). For a patch (`edits`, each changed
/// file's new text): lines no test executed widen to their definition's or file's tests, and
/// where test modules fail to import as the workspace is, pytest's collection after the change
/// adds its tests ([`super::broken`]).
pub async fn select(
    cx: &mut Cx<'_>,
    seeds: Vec<Item>,
    mut files: BTreeMap<String, Parsed>,
    depth: u32,
    lines: Lines,
    edits: Option<&[(String, String)]>,
) -> Result<Selected> {
    let scopes = edits.is_some().then(|| scopes(&lines, &files));
    let catalog = pytest::catalog(cx.ground()).await?;
    let mut notes: Vec<String> = catalog.note.iter().cloned().collect();
    let items = match &catalog.collected {
        Some(c) => pytest::items(cx.ground(), &mut files, c),
        None => vec![],
    };
    let rules = match &catalog.collected {
        Some(_) => Rules::Collected(&items),
        None => Rules::Naming,
    };
    let mut analysis = analyse(cx, seeds, files, depth, rules).await?;
    let mut coverage_only = BTreeSet::new();
    let mut before = None;
    let mut side_by_side = false;
    let mut used = false;
    let mut widened = vec![];
    if let Some(collected) = &catalog.collected {
        let ids: Vec<String> = collected.iter().map(|c| c.id.clone()).collect();
        match coverage::touching(cx.ground(), &ids, &lines, scopes.as_ref()).await? {
            Ok(hit) => {
                used = true;
                for id in hit.tests {
                    if analysis.tests.contains_key(&id) {
                        continue;
                    }
                    if let Some((_, item, _)) = items.iter().find(|(i, _, _)| *i == id) {
                        analysis.tests.insert(id.clone(), (item.clone(), 0));
                        coverage_only.insert(id);
                    }
                }
                before = Some(hit.outcomes);
                widened = hit.widened;
                side_by_side = hit.side_by_side;
            }
            Err(why) => notes.push(why),
        }
    }
    let mut after_change = None;
    if let Some(edits) = edits {
        if let Some(added) =
            super::broken::after_change(cx.ground(), &catalog, edits, &mut analysis).await?
        {
            coverage_only.extend(added.fresh);
            let mut known = before.unwrap_or_default();
            known.extend(added.before);
            before = Some(known);
            after_change = Some(added.facts);
        }
    }
    Ok(Selected {
        analysis,
        selection: TestSelection {
            tests: match catalog.collected {
                Some(_) => "pytest".into(),
                None => "naming".into(),
            },
            coverage: used,
            notes,
            widened,
            after_change,
        },
        items,
        coverage_only,
        before,
        side_by_side,
    })
}

//! A patch over a workspace pytest cannot wholly collect: where test modules of the workspace
//! as it is fail to import, neither the collection nor the coverage of that state knows their
//! tests, so the change is judged by pytest's collection after it (one more collection, on an
//! overlay with the change, taken only for such a workspace). The tests of modules the change
//! lets import again are selected (each failed before: its module did not import), and so is
//! each module that fails to import after the change through a changed file, as one test of
//! its own (pytest's node id of the module; its outcome is its collection error).

use super::{pytest, Analysis};
use crate::bundle::facts::AfterChange;
use crate::error::Result;
use crate::orchestrator::Ground;
use crate::testrun::Outcome;
use std::collections::{BTreeMap, BTreeSet};

/// What the collection after a change added to a selection.
pub struct Added {
    pub facts: AfterChange,
    /// The selected ids, each with its outcome on the workspace as it is (an error: its
    /// module did not import).
    pub before: BTreeMap<String, Outcome>,
    /// The ids no static path had selected.
    pub fresh: BTreeSet<String>,
}

/// Where the workspace's collection has failed modules: collect with `edits` over it and add
/// to `analysis` the tests that collection unblocks and the modules a changed file still
/// breaks. `None` when every module imports as it is.
pub async fn after_change(
    g: &Ground,
    base: &pytest::Catalog,
    edits: &[(String, String)],
    analysis: &mut Analysis,
) -> Result<Option<Added>> {
    if base.broken.is_empty() || edits.is_empty() {
        return Ok(None);
    }
    let after = pytest::catalog_with(g, edits).await?;
    let failed: BTreeSet<&str> = base.broken.iter().map(|b| b.id.as_str()).collect();
    let changed: BTreeSet<&str> = edits.iter().map(|(rel, _)| rel.as_str()).collect();
    let still: BTreeSet<&str> = after.broken.iter().map(|b| b.id.as_str()).collect();
    let unblocked: Vec<_> = after
        .collected
        .iter()
        .flatten()
        .filter(|t| {
            let module = crate::testrun::file_of(&t.id);
            let within = |set: &BTreeSet<&str>| set.iter().any(|c| under(module, c));
            within(&failed) && !within(&still)
        })
        .cloned()
        .collect();
    let mut facts = AfterChange::default();
    let mut before = BTreeMap::new();
    let mut fresh = BTreeSet::new();
    for (id, item, _) in pytest::items(g, &mut analysis.files, &unblocked) {
        let module = crate::testrun::file_of(&id);
        if let Some(c) = failed.iter().find(|c| under(module, c)) {
            if !facts.unblocked.iter().any(|u| u == c) {
                facts.unblocked.push(c.to_string());
            }
        }
        before.insert(id.clone(), Outcome::Error);
        analysis.tests.entry(id.clone()).or_insert_with(|| {
            fresh.insert(id);
            (item, 0)
        });
    }
    facts.unblocked.sort();
    for b in &after.broken {
        if !b.files.iter().any(|f| changed.contains(f.as_str())) {
            continue;
        }
        facts.broken.push(b.id.clone());
        let was = match failed.contains(b.id.as_str()) {
            true => Outcome::Error,
            false => Outcome::Passed,
        };
        before.insert(b.id.clone(), was);
        let module = super::Item {
            path: b.id.clone(),
            qual: vec![],
        };
        analysis.tests.entry(b.id.clone()).or_insert_with(|| {
            fresh.insert(b.id.clone());
            (module, 0)
        });
    }
    Ok(Some(Added {
        facts,
        before,
        fresh,
    }))
}

/// Whether a test module is, or is inside, a collector (a module, or a package directory
/// whose `__init__.py` failed).
pub fn under(module: &str, collector: &str) -> bool {
    module == collector
        || module
            .strip_prefix(collector)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::under;

    #[test]
    fn a_module_is_under_itself_and_its_packages_only() {
        assert!(under("tests/test_a.py", "tests/test_a.py"));
        assert!(under("tests/unit/test_a.py", "tests/unit"));
        assert!(!under("tests/unit_b/test_a.py", "tests/unit"));
        assert!(!under("tests/test_a.py", "tests/test_a"));
    }
}

//! Which tests an impact reaches. The tests are pytest's own ([`Rules::Collected`]: node ids
//! as its collection gives them, each mapped to the definition it runs: unittest `TestCase`
//! methods, every parametrized instance, doctests in the docstring's function), or, where
//! collection is not had (and for pr-v2, as it always was), pytest's default naming rules
//! ([`Rules::Naming`]): test files are `test_*.py` and `*_test.py`; tests are their `test*`
//! functions and the `test*` methods of their `Test*` classes. `conftest.py` holds fixtures for
//! the tests under its directory. Fixtures are followed by parameter name, transitively; an
//! autouse fixture reaches every test in its scope. With collected tests, a reached method of a
//! test class that is not a test itself (`setUp`, a helper) reaches every test of its class.

use super::{load, Item, Parsed};
use crate::error::Result;
use crate::orchestrator::Ground;
use crate::relocate::outline::{Def, DefKind};
use std::collections::{BTreeMap, BTreeSet};

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `test_*.py` or `*_test.py`.
pub fn is_test_file(path: &str) -> bool {
    let name = file_name(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// A test file or a `conftest.py`.
pub fn is_test_support(path: &str) -> bool {
    is_test_file(path) || file_name(path) == "conftest.py"
}

/// The node id of a test definition in a test file.
pub fn test_id(path: &str, d: &Def) -> Option<String> {
    if d.kind != DefKind::Function || !is_test_file(path) {
        return None;
    }
    match &d.qual[..] {
        [f] if f.starts_with("test") => Some(format!("{path}::{f}")),
        [c, m] if c.starts_with("Test") && m.starts_with("test") => {
            Some(format!("{path}::{c}::{m}"))
        }
        _ => None,
    }
}

/// Parameter names from an outline shape (`def(self,x,*args,k=,**kw)`).
fn params(d: &Def) -> Vec<String> {
    let inner = d
        .shape
        .split_once('(')
        .map(|(_, r)| r.trim_end_matches(')'))
        .unwrap_or("");
    inner
        .split(',')
        .map(|p| p.trim_start_matches('*').trim_end_matches('=').to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// `Some(autouse)` for a pytest fixture (the decorators' source, in `text`, says autouse).
fn fixture(d: &Def, text: &str) -> Option<bool> {
    d.decorators.iter().find(|x| {
        let head = x.split('(').next().unwrap_or(x);
        head == "fixture" || head.ends_with(".fixture")
    })?;
    let decorators = text.get(d.node.0..d.sig.0).unwrap_or_default();
    Some(decorators.replace(' ', "").contains("autouse=True"))
}

/// The files a fixture defined in `path` serves: its own file, or everything under a
/// conftest's directory.
fn scope_files(g: &Ground, path: &str, rules: Rules<'_>) -> Vec<String> {
    if file_name(path) != "conftest.py" {
        return vec![path.to_string()];
    }
    let dir = path.strip_suffix("conftest.py").unwrap_or("");
    g.ws()
        .python_files()
        .into_iter()
        .filter(|f| f.starts_with(dir) && (is_test_support(f) || rules.is_test_code(f)))
        .collect()
}

/// What counts as a test.
#[derive(Clone, Copy)]
pub enum Rules<'a> {
    /// pytest's default naming rules, read from the outlines.
    Naming,
    /// The tests pytest collected: (node id, the definition it runs, whether it is a doctest).
    Collected(&'a [(String, Item, bool)]),
}

impl Rules<'_> {
    /// Whether the walk stops at `item`: it is a test (a test is not called by code).
    pub fn stops(&self, item: &Item) -> bool {
        match self {
            Rules::Naming => is_test_file(&item.path) && !item.qual.is_empty(),
            Rules::Collected(tests) => tests
                .iter()
                .any(|(_, t, doctest)| !doctest && t == item && !item.qual.is_empty()),
        }
    }

    /// Whether `path` is test code (reported apart from library code).
    pub fn is_test_code(&self, path: &str) -> bool {
        match self {
            Rules::Naming => is_test_support(path),
            Rules::Collected(tests) => {
                file_name(path) == "conftest.py"
                    || tests
                        .iter()
                        .any(|(_, t, doctest)| !doctest && t.path == path)
            }
        }
    }
}

struct Found<'a> {
    out: &'a mut BTreeMap<String, (Item, u32)>,
    rules: Rules<'a>,
}

impl Found<'_> {
    fn insert(&mut self, id: String, item: Item, depth: u32) {
        let slot = self.out.entry(id).or_insert((item, depth));
        slot.1 = slot.1.min(depth);
    }

    fn add(&mut self, path: &str, d: &Def, depth: u32) {
        match self.rules {
            Rules::Naming => {
                if let Some(id) = test_id(path, d) {
                    let item = Item {
                        path: path.to_string(),
                        qual: d.qual.clone(),
                    };
                    self.insert(id, item, depth);
                }
            }
            Rules::Collected(_) => self.add_item(
                &Item {
                    path: path.to_string(),
                    qual: d.qual.clone(),
                },
                depth,
            ),
        }
    }

    /// Collected tests inside `item` (or `item` itself); for a method of a test class that
    /// is not a test, every test of its class.
    fn add_item(&mut self, item: &Item, depth: u32) {
        let Rules::Collected(tests) = self.rules else {
            return;
        };
        let inside = |t: &Item| t.path == item.path && t.qual.starts_with(&item.qual);
        let mut hits: Vec<(String, Item)> = tests
            .iter()
            .filter(|(_, t, _)| inside(t))
            .map(|(id, t, _)| (id.clone(), t.clone()))
            .collect();
        if hits.is_empty() && item.qual.len() >= 2 {
            let class = &item.qual[..item.qual.len() - 1];
            hits = tests
                .iter()
                .filter(|(_, t, doctest)| {
                    !doctest && t.path == item.path && t.qual.starts_with(class)
                })
                .map(|(id, t, _)| (id.clone(), t.clone()))
                .collect();
        }
        for (id, t) in hits {
            self.insert(id, t, depth);
        }
    }
}

/// The impacted tests among (and requested by) the reached items.
pub fn select(
    g: &Ground,
    files: &mut BTreeMap<String, Parsed>,
    reached: &BTreeMap<Item, u32>,
    rules: Rules<'_>,
) -> Result<BTreeMap<String, (Item, u32)>> {
    let mut out = BTreeMap::new();
    let mut found = Found {
        out: &mut out,
        rules,
    };
    // Fixtures to follow: (name, the file defining it, depth).
    let mut fixtures: Vec<(String, String, u32)> = Vec::new();
    for (item, &depth) in reached {
        if let Rules::Collected(_) = rules {
            // Any file: a doctest lives in library code.
            found.add_item(item, depth);
        }
        if !is_test_support(&item.path) {
            continue;
        }
        let Some(p) = load(g, files, &item.path) else {
            continue;
        };
        if item.qual.is_empty() {
            // A test file's top level: every test in it (a conftest's: every fixture in it).
            for d in &p.defs {
                found.add(&item.path, d, depth);
                if fixture(d, &p.doc.text).is_some() {
                    fixtures.push((d.qual.join("."), item.path.clone(), depth));
                }
            }
            continue;
        }
        for d in p.defs.iter().filter(|d| d.qual.starts_with(&item.qual)) {
            // The definition itself, or a method of a reached Test class.
            found.add(&item.path, d, depth);
        }
        if let Some(d) = p.defs.iter().find(|d| d.qual == item.qual) {
            if fixture(d, &p.doc.text).is_some() {
                fixtures.push((item.qual.join("."), item.path.clone(), depth));
            }
        }
    }
    follow_fixtures(g, files, fixtures, &mut found);
    Ok(out)
}

/// Tests (and fixtures, transitively) requesting the reached fixtures.
fn follow_fixtures(
    g: &Ground,
    files: &mut BTreeMap<String, Parsed>,
    mut work: Vec<(String, String, u32)>,
    found: &mut Found<'_>,
) {
    let mut seen = BTreeSet::new();
    while let Some((name, home, depth)) = work.pop() {
        if !seen.insert((name.clone(), home.clone())) {
            continue;
        }
        let autouse = load(g, files, &home)
            .and_then(|p| {
                let d = p.defs.iter().find(|d| d.qual.join(".") == name)?;
                fixture(d, &p.doc.text)
            })
            .unwrap_or(false);
        for f in scope_files(g, &home, found.rules) {
            let Some(p) = load(g, files, &f) else {
                continue;
            };
            for d in &p.defs {
                let requests = autouse || params(d).contains(&name);
                if !requests || d.qual.join(".") == name && f == home {
                    continue;
                }
                found.add(&f, d, depth + 1);
                if fixture(d, &p.doc.text).is_some() {
                    work.push((d.qual.join("."), f.clone(), depth + 1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_naming_rules() {
        assert!(is_test_file("tests/test_units.py"));
        assert!(is_test_file("pkg/units_test.py"));
        assert!(!is_test_file("tests/helpers.py"));
        assert!(!is_test_file("tests/conftest.py"));
        assert!(is_test_support("tests/conftest.py"));
        assert!(!is_test_file("src/testing.py"));
    }

    #[test]
    fn test_ids_params_and_fixtures_from_the_outline() {
        let text = "import pytest\n\n@pytest.fixture(autouse=True)\ndef env(tmp_path):\n    \
                    yield\n\n@pytest.fixture\ndef shape(env):\n    return 1\n\n\
                    def test_a(shape):\n    pass\n\nclass TestB:\n    def test_m(self):\n        \
                    pass\n    def helper(self):\n        pass\n\ndef helper():\n    pass\n";
        let tree = crate::relocate::outline::parse(text).unwrap();
        let defs = crate::relocate::outline::definitions(&tree, text);
        let by = |q: &str| defs.iter().find(|d| d.qual.join(".") == q).unwrap();
        let path = "tests/test_x.py";
        assert_eq!(
            test_id(path, by("test_a")).as_deref(),
            Some("tests/test_x.py::test_a")
        );
        assert_eq!(
            test_id(path, by("TestB.test_m")).as_deref(),
            Some("tests/test_x.py::TestB::test_m")
        );
        assert_eq!(test_id(path, by("TestB.helper")), None);
        assert_eq!(test_id(path, by("helper")), None);
        assert_eq!(test_id("src/x.py", by("test_a")), None);
        assert_eq!(params(by("test_a")), vec!["shape"]);
        assert_eq!(params(by("TestB.test_m")), vec!["self"]);
        assert_eq!(fixture(by("env"), text), Some(true));
        assert_eq!(fixture(by("shape"), text), Some(false));
        assert_eq!(fixture(by("test_a"), text), None);
    }
}

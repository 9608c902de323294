//! Which tests reach which lines, measured: every collected test run once under coverage.py
//! with one dynamic context per test ([`crate::testrun::coverage`]) on an overlay of the
//! workspace as it is, kept per workspace (in the process, and on disk under
//! `$LANSER_HOME/coverage/`) with the content digest of every file it saw, and per state by
//! content ([`super::by_content`]: every copy of the workspace shares it). When the workspace
//! changes, only the tests that are new, whose own file changed or that executed a changed
//! file run again (testmon's rule); the others keep their lines. The same run gives each
//! test's outcome before a change (pr-v3's "before").
//!
//! A changed line no test executed (module-level code runs at import, outside every test's
//! context; an inserted line is new) selects, for a patch, the tests that executed any line of
//! its innermost enclosing definition some test executed, else of its file ([`widen`]).
//!
//! What a bundle depends on (the tests a change's lines select, and their outcomes) is an
//! input: a trace records it and a replay serves it without running anything.

use super::pytest::{plan, state_digest};
use super::selection::{Lines, Scopes};
use crate::bundle::facts::Widened;
use crate::error::{LanserError, Result};
use crate::orchestrator::Ground;
use crate::testrun::{self, Coverage, Outcome};
use crate::workspace::Workspace;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const INPUT: &str = "tests:coverage";

/// The kind of its entries in [`super::by_content`].
const KIND: &str = "coverage";

/// Most seconds one coverage run of the suite may take.
const BUDGET: Duration = Duration::from_secs(900);

/// Per-test coverage of one workspace state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Data {
    pub digest: String,
    /// Each file's content digest at that state.
    pub files: BTreeMap<String, String>,
    pub lines: Coverage,
    pub outcomes: BTreeMap<String, Outcome>,
    /// Whether the suite gives these outcomes run in several processes side by side
    /// ([`testrun::agree_side_by_side`], measured once and carried to later states until a
    /// test file or a conftest.py changes); `None` where it would not be split or was not
    /// measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_by_side: Option<bool>,
}

/// What a change's lines select.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hit {
    pub tests: BTreeSet<String>,
    /// Every test's outcome before the change.
    pub outcomes: BTreeMap<String, Outcome>,
    /// The changed lines no test executed and the scope that stood in for each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widened: Vec<Widened>,
    /// The selected tests may run split across processes ([`Data::side_by_side`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub side_by_side: bool,
}

static LATEST: Mutex<BTreeMap<PathBuf, Arc<Data>>> = Mutex::new(BTreeMap::new());
/// One coverage computation at a time in a process.
static COMPUTING: Mutex<()> = Mutex::new(());

/// The disk copy of a workspace's coverage under one interpreter.
fn disk_path(root: &std::path::Path, python: &std::path::Path) -> PathBuf {
    let key = format!("{}\0{}", root.display(), python.display());
    let key = crate::digest::sha256_hex(key.as_bytes());
    crate::home::lanser_home()
        .join("coverage")
        .join(format!("{}.json", &key[..16]))
}

/// The tests whose executed lines `lines` touch (with `scopes`, a patch's: widened where no
/// test executed a line), and every test's outcome before; `Err` with the reason where there
/// is no coverage.
pub async fn touching(
    g: &Ground,
    ids: &[String],
    lines: &Lines,
    scopes: Option<&Scopes>,
) -> Result<std::result::Result<Hit, String>> {
    let digest = state_digest(g);
    let sha = |v: Vec<u8>| crate::digest::sha256_hex(&v);
    let mut key = format!(
        "{digest} {}",
        sha(serde_json::to_vec(lines).expect("lines serialize"))
    );
    if let Some(s) = scopes {
        key.push_str(" widen ");
        key.push_str(&sha(serde_json::to_vec(s).expect("scopes serialize")));
    }
    let text = if g.opts().inputs.serves(INPUT, &key) {
        g.opts().inputs.read_to_string(INPUT, &key, || {
            Err(std::io::Error::other("served from the trace"))
        })
    } else {
        let answer = match ensure(g, ids, &digest).await? {
            Ok(data) => Ok(hit(&data, lines, scopes)),
            Err(why) => Err(why),
        };
        let bytes = serde_json::to_vec(&answer).expect("hits serialize");
        g.opts().inputs.read_to_string(INPUT, &key, || Ok(bytes))
    };
    let text = text
        .map_err(|e| LanserError::internal("coverage: no recorded measurement").with_source(e))?;
    serde_json::from_str(&text)
        .map_err(|e| LanserError::internal("coverage: bad record").with_source(e))
}

fn hit(data: &Data, lines: &Lines, scopes: Option<&Scopes>) -> Hit {
    let mut tests = BTreeSet::new();
    let mut widened = Vec::new();
    for (f, want) in lines {
        for &line in want {
            let direct = executed(data, f, |l| l == line);
            match scopes {
                Some(s) if direct.is_empty() => {
                    let chain = s.get(f).and_then(|s| s.get(&line));
                    let (w, t) = widen(data, f, line, chain.map_or(&[][..], |c| &c[..]));
                    widened.push(w);
                    tests.extend(t);
                }
                _ => tests.extend(direct),
            }
        }
    }
    Hit {
        tests,
        outcomes: data.outcomes.clone(),
        widened,
        side_by_side: data.side_by_side == Some(true),
    }
}

/// The tests that executed a line of `file` that `pick` takes.
fn executed(data: &Data, file: &str, pick: impl Fn(usize) -> bool) -> BTreeSet<String> {
    data.lines
        .iter()
        .filter(|(_, files)| {
            files
                .get(file)
                .is_some_and(|ls| ls.iter().any(|l| pick(*l as usize)))
        })
        .map(|(id, _)| id.clone())
        .collect()
}

/// The tests standing in for `line` of `file`, which no test executed: those that executed a
/// line of its innermost enclosing definition (`chain`, innermost first) any test executed,
/// else of its file.
fn widen(
    data: &Data,
    file: &str,
    line: usize,
    chain: &[super::selection::Scope],
) -> (Widened, BTreeSet<String>) {
    let record = |rule: &str, scope: &str| Widened {
        path: file.to_string(),
        line: line as u32,
        rule: rule.into(),
        scope: scope.into(),
    };
    for s in chain {
        let t = executed(data, file, |l| s.first <= l && l <= s.last);
        if !t.is_empty() {
            return (record("definition", &s.name), t);
        }
    }
    (record("file", "<module>"), executed(data, file, |_| true))
}

fn file_digests(ws: &Workspace) -> BTreeMap<String, String> {
    let root = &ws.root;
    ws.python_files()
        .into_iter()
        .filter_map(|f| {
            let bytes = std::fs::read(root.join(&f)).ok()?;
            Some((f, crate::digest::sha256_hex(&bytes)))
        })
        .collect()
}

/// The coverage of the workspace as it is: cached, refreshed, or measured now.
pub async fn ensure(
    g: &Ground,
    ids: &[String],
    digest: &str,
) -> Result<std::result::Result<Arc<Data>, String>> {
    let root = g.ws().root.clone();
    let base = plan(g, vec![], vec![]);
    let files = file_digests(g.ws());
    let (ids, digest) = (ids.to_vec(), digest.to_string());
    let work = move || measure(root, base, files, ids, digest);
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| LanserError::internal("coverage panicked").with_source(e))
}

/// In a warm daemon's background, once it starts: collect and measure the workspace as it is,
/// so the first request finds both (the same functions make them as a request would, so the
/// answers are the same). Only where the project's interpreter has coverage.py.
pub fn prewarm(ws: &Workspace) {
    let base = super::pytest::plan_in(ws, vec![], vec![]);
    if !testrun::collect::importable(&base, "coverage") {
        return;
    }
    let digest = super::pytest::state_digest_in(ws);
    let catalog = super::pytest::Catalog::of(testrun::collect(&base));
    let Some(collected) = &catalog.collected else {
        return;
    };
    let ids = collected.iter().map(|c| c.id.clone()).collect();
    super::pytest::remember(ws.root.clone(), digest.clone(), catalog);
    let _ = measure(ws.root.clone(), base, file_digests(ws), ids, digest);
}

/// Measure (or refresh, or take from the cache) the coverage of one workspace state.
fn measure(
    root: PathBuf,
    base: testrun::Plan,
    files: BTreeMap<String, String>,
    ids: Vec<String>,
    digest: String,
) -> std::result::Result<Arc<Data>, String> {
    {
        let _one = COMPUTING.lock().unwrap_or_else(|p| p.into_inner());
        let prev = LATEST
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&root)
            .cloned()
            .or_else(|| {
                let text = std::fs::read(disk_path(&root, &base.python)).ok()?;
                serde_json::from_slice::<Data>(&text).ok().map(Arc::new)
            });
        if let Some(p) = prev.as_ref().filter(|p| p.digest == digest) {
            let Some(found) = newly_side_by_side(&base, p) else {
                return Ok(p.clone());
            };
            let data = Data {
                side_by_side: Some(found),
                ..(**p).clone()
            };
            super::by_content::write(KIND, &digest, &base.python, &data);
            return Ok(keep(root, &base.python, Arc::new(data)));
        }
        // Another copy of this state, anywhere on the machine, measured it already.
        let known = super::by_content::read::<Data>(KIND, &digest, &base.python);
        if let Some(mut data) = known.filter(|d| d.digest == digest) {
            if let Some(found) = newly_side_by_side(&base, &data) {
                data.side_by_side = Some(found);
                super::by_content::write(KIND, &digest, &base.python, &data);
            }
            return Ok(keep(root, &base.python, Arc::new(data)));
        }
        if !testrun::collect::importable(&base, "coverage") {
            return Err(format!(
                "coverage.py is not importable by the project's interpreter ({}): the \
                 selection is static (install coverage there for measured selection)",
                base.python
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
            ));
        }
        let (mut data, rerun) = carried(prev.as_deref(), &files, &ids, &digest);
        let python = base.python.clone();
        let p = testrun::Plan {
            tests: rerun,
            budget: BUDGET,
            ..base.clone()
        };
        let (run, cov) = testrun::coverage(&p).map_err(|e| crate::error::chain(&e))?;
        let cov = cov.ok_or("coverage.py recorded nothing")?;
        if run.timed_out {
            return Err(format!(
                "the coverage run took more than {} s: the selection is static",
                BUDGET.as_secs()
            ));
        }
        for t in run.tests {
            data.outcomes.insert(t.id, t.outcome);
        }
        data.lines.extend(cov);
        if let Some(found) = newly_side_by_side(&base, &data) {
            data.side_by_side = Some(found);
        }
        super::by_content::write(KIND, &digest, &python, &data);
        Ok(keep(root, &python, Arc::new(data)))
    }
}

/// Whether the suite allows a split ([`Data::side_by_side`]), measured now where `data` does
/// not say yet (a state measured first, or kept by a build before the measure); `None` where
/// it says already, or the suite would not be split.
fn newly_side_by_side(base: &testrun::Plan, data: &Data) -> Option<bool> {
    if data.side_by_side.is_some() {
        return None;
    }
    let p = testrun::Plan {
        budget: BUDGET,
        ..base.clone()
    };
    testrun::agree_side_by_side(&p, &data.outcomes)
        .ok()
        .flatten()
}

/// `data` as this workspace's latest coverage (in the process, and on disk by path: the base
/// the next state of this workspace refreshes from).
fn keep(root: PathBuf, python: &std::path::Path, data: Arc<Data>) -> Arc<Data> {
    let path = disk_path(&root, python);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&path, serde_json::to_vec(&*data).unwrap_or_default());
    LATEST
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(root, data.clone());
    data
}

/// What a new state keeps of the previous one's coverage, and the tests to run again: those
/// that are new, whose own file changed, or that executed a changed file.
fn carried(
    prev: Option<&Data>,
    files: &BTreeMap<String, String>,
    ids: &[String],
    digest: &str,
) -> (Data, Vec<String>) {
    let changed: BTreeSet<&String> = match prev {
        Some(p) => files
            .iter()
            .filter(|(f, d)| p.files.get(*f) != Some(*d))
            .map(|(f, _)| f)
            .chain(p.files.keys().filter(|f| !files.contains_key(*f)))
            .collect(),
        None => BTreeSet::new(),
    };
    let stale = |id: &String| -> bool {
        let Some(p) = prev else { return true };
        let own = testrun::file_of(id);
        !p.outcomes.contains_key(id)
            || changed.iter().any(|f| f.as_str() == own)
            || p.lines
                .get(id)
                .is_some_and(|fs| fs.keys().any(|f| changed.contains(f)))
    };
    let rerun: Vec<String> = ids.iter().filter(|id| stale(id)).cloned().collect();
    let mut data = Data {
        digest: digest.to_string(),
        files: files.clone(),
        lines: Coverage::new(),
        outcomes: BTreeMap::new(),
        side_by_side: None,
    };
    // Whether the suite may run split holds while no test file or conftest.py changed (a new
    // or changed one may collide side by side): measured again then.
    let own_files: BTreeSet<&str> = ids.iter().map(|id| testrun::file_of(id)).collect();
    let suite_changed = changed
        .iter()
        .any(|f| own_files.contains(f.as_str()) || f.rsplit('/').next() == Some("conftest.py"));
    if !suite_changed {
        data.side_by_side = prev.and_then(|p| p.side_by_side);
    }
    if let Some(p) = prev {
        for id in ids.iter().filter(|id| !rerun.contains(id)) {
            if let Some(l) = p.lines.get(id) {
                data.lines.insert(id.clone(), l.clone());
            }
            if let Some(out) = p.outcomes.get(id) {
                data.outcomes.insert(id.clone(), *out);
            }
        }
    }
    (data, rerun)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::impact::selection::Scope;

    #[test]
    fn a_line_no_test_executed_widens_to_its_definition_then_its_file() {
        let s = |x: &str| x.to_string();
        let data = Data {
            digest: s("d"),
            files: BTreeMap::new(),
            lines: [
                (s("t::a"), [(s("m.py"), vec![5, 6])].into()),
                (s("t::b"), [(s("m.py"), vec![12])].into()),
            ]
            .into(),
            outcomes: BTreeMap::new(),
            side_by_side: None,
        };
        let scope = |name: &str, first, last| Scope {
            name: s(name),
            first,
            last,
        };
        // Line 4 is `def f` (run at import): f spans 4-6; line 1 is module level; line 9 is
        // in g (8-9), which no test ran.
        let lines: Lines = [(s("m.py"), [1, 4, 6, 9].into())].into();
        let scopes: Scopes = [(
            s("m.py"),
            [
                (1, vec![]),
                (4, vec![scope("f", 4, 6)]),
                (6, vec![scope("f", 4, 6)]),
                (9, vec![scope("g", 8, 9)]),
            ]
            .into(),
        )]
        .into();
        assert_eq!(hit(&data, &lines, None).tests, [s("t::a")].into());
        let h = hit(&data, &lines, Some(&scopes));
        assert_eq!(h.tests, [s("t::a"), s("t::b")].into());
        let rules: Vec<(u32, &str, &str)> = h
            .widened
            .iter()
            .map(|w| (w.line, w.rule.as_str(), w.scope.as_str()))
            .collect();
        assert_eq!(
            rules,
            [
                (1, "file", "<module>"),
                (4, "definition", "f"),
                (9, "file", "<module>")
            ]
        );
    }

    #[test]
    fn only_new_tests_and_those_touching_a_changed_file_run_again() {
        let s = |x: &str| x.to_string();
        let prev = Data {
            digest: s("d0"),
            files: [
                (s("lib.py"), s("a")),
                (s("other.py"), s("b")),
                (s("tests/test_x.py"), s("c")),
            ]
            .into(),
            lines: [
                (
                    s("tests/test_x.py::test_lib"),
                    [(s("lib.py"), vec![2])].into(),
                ),
                (
                    s("tests/test_x.py::test_other"),
                    [(s("other.py"), vec![1])].into(),
                ),
            ]
            .into(),
            outcomes: [
                (s("tests/test_x.py::test_lib"), Outcome::Passed),
                (s("tests/test_x.py::test_other"), Outcome::Failed),
            ]
            .into(),
            side_by_side: Some(true),
        };
        let mut now = prev.files.clone();
        now.insert(s("lib.py"), s("a2"));
        let ids = [
            s("tests/test_x.py::test_lib"),
            s("tests/test_x.py::test_other"),
            s("tests/test_x.py::test_new"),
        ];
        let (data, rerun) = carried(Some(&prev), &now, &ids, "d1");
        assert_eq!(
            rerun,
            [
                s("tests/test_x.py::test_lib"),
                s("tests/test_x.py::test_new")
            ]
        );
        assert_eq!(data.outcomes.len(), 1);
        assert_eq!(data.outcomes[&ids[1]], Outcome::Failed);
        assert!(data.lines.contains_key(&ids[1]));
        // Whether the suite may run split is carried while no test file or conftest changed.
        assert_eq!(data.side_by_side, Some(true));
        assert_eq!(carried(None, &now, &ids, "d1").0.side_by_side, None);
        let mut conftest = now.clone();
        conftest.insert(s("tests/conftest.py"), s("e"));
        assert_eq!(
            carried(Some(&prev), &conftest, &ids, "d3").0.side_by_side,
            None
        );
        // A changed test file reruns every test in it.
        now.insert(s("tests/test_x.py"), s("c2"));
        let (data, rerun) = carried(Some(&prev), &now, &ids, "d2");
        assert_eq!(rerun.len(), 3);
        assert_eq!(data.side_by_side, None);
        assert_eq!(carried(None, &now, &ids, "d2").1.len(), 3);
    }
}

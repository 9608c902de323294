//! Which tests reach which lines, measured: every collected test run once under coverage.py
//! with one dynamic context per test ([`crate::testrun::coverage`]) on an overlay of the
//! workspace as it is, kept per workspace (in the process, and on disk under
//! `$LANSER_HOME/coverage/`) with the content digest of every file it saw. When the workspace
//! changes, only the tests that are new, whose own file changed or that executed a changed
//! file run again (testmon's rule); the others keep their lines. The same run gives each
//! test's outcome before a change (pr-v3's "before").
//!
//! What a bundle depends on (the tests a change's lines select, and their outcomes) is an
//! input: a trace records it and a replay serves it without running anything.

use super::pytest::{plan, state_digest};
use super::selection::Lines;
use crate::error::{LanserError, Result};
use crate::orchestrator::Orchestrator;
use crate::testrun::{self, Coverage, Outcome};
use crate::workspace::Workspace;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const INPUT: &str = "tests:coverage";

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
}

/// What a change's lines select.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hit {
    pub tests: BTreeSet<String>,
    /// Every test's outcome before the change.
    pub outcomes: BTreeMap<String, Outcome>,
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

/// The tests whose executed lines `lines` touch, and every test's outcome before; `Err`
/// with the reason where there is no coverage.
pub async fn touching(
    o: &Orchestrator,
    ids: &[String],
    lines: &Lines,
) -> Result<std::result::Result<Hit, String>> {
    let digest = state_digest(o);
    let key = format!(
        "{digest} {}",
        crate::digest::sha256_hex(&serde_json::to_vec(lines).expect("lines serialize"))
    );
    let text = if o.opts().inputs.serves(INPUT, &key) {
        o.opts().inputs.read_to_string(INPUT, &key, || {
            Err(std::io::Error::other("served from the trace"))
        })
    } else {
        let answer = match ensure(o, ids, &digest).await? {
            Ok(data) => Ok(hit(&data, lines)),
            Err(why) => Err(why),
        };
        let bytes = serde_json::to_vec(&answer).expect("hits serialize");
        o.opts().inputs.read_to_string(INPUT, &key, || Ok(bytes))
    };
    let text = text
        .map_err(|e| LanserError::internal("coverage: no recorded measurement").with_source(e))?;
    serde_json::from_str(&text)
        .map_err(|e| LanserError::internal("coverage: bad record").with_source(e))
}

fn hit(data: &Data, lines: &Lines) -> Hit {
    let tests = data
        .lines
        .iter()
        .filter(|(_, files)| {
            files.iter().any(|(f, ls)| {
                lines
                    .get(f)
                    .is_some_and(|want| ls.iter().any(|l| want.contains(&(*l as usize))))
            })
        })
        .map(|(id, _)| id.clone())
        .collect();
    Hit {
        tests,
        outcomes: data.outcomes.clone(),
    }
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
    o: &Orchestrator,
    ids: &[String],
    digest: &str,
) -> Result<std::result::Result<Arc<Data>, String>> {
    let root = o.ws().root.clone();
    let base = plan(o, vec![], vec![]);
    let files = file_digests(o.ws());
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
    let collected = match testrun::collect(&base) {
        Ok(c) if !c.is_empty() => c,
        _ => return,
    };
    let ids = collected.iter().map(|c| c.id.clone()).collect();
    let catalog = super::pytest::Catalog {
        collected: Some(collected),
        note: None,
    };
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
            return Ok(p.clone());
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
            ..base
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
        let data = Arc::new(data);
        let path = disk_path(&root, &python);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&path, serde_json::to_vec(&*data).unwrap_or_default());
        LATEST
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(root, data.clone());
        Ok(data)
    }
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
        let own = id.split("::").next().unwrap_or(id);
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
    };
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
        // A changed test file reruns every test in it.
        now.insert(s("tests/test_x.py"), s("c2"));
        assert_eq!(carried(Some(&prev), &now, &ids, "d2").1.len(), 3);
        assert_eq!(carried(None, &now, &ids, "d2").1.len(), 3);
    }
}

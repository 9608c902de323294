//! The tests pytest sees in a workspace: its own collection (`pytest --collect-only`, in the
//! project's interpreter and configuration, on an overlay copy: [`crate::testrun::collect`]),
//! run once per workspace state and kept by the digest of that state (every Python file and
//! pytest configuration file, by content) for the life of the process, so a warm daemon
//! collects once until a file changes. The collection is an input of the bundle: a trace
//! records it and a replay serves it. Where pytest cannot collect (no pytest in the
//! interpreter, a collection that fails), the naming rules stand in and the facts say why.

use super::{enclosing, load, Item, Parsed};
use crate::error::{LanserError, Result};
use crate::orchestrator::Ground;
use crate::testrun::{self, Broken, Collected, Collection, Mode, Plan};
use crate::workspace::Workspace;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const INPUT: &str = "tests:collected";
const INPUT_AFTER: &str = "tests:collected-after";

/// Files beside the Python sources that shape what pytest collects.
pub const PYTEST_CONFIG: [&str; 5] = [
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    ".coveragerc",
];

/// Most seconds a collection may take.
const COLLECT_BUDGET: Duration = Duration::from_secs(300);

/// What pytest collected, or why it did not.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Catalog {
    pub collected: Option<Vec<Collected>>,
    /// Why the naming rules stand in (absent when pytest collected).
    pub note: Option<String>,
    /// The collectors that failed (test modules that do not import), sorted by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<Broken>,
}

impl Catalog {
    /// The catalog of a collection's outcome.
    pub fn of(found: std::result::Result<Collection, testrun::TestRunError>) -> Catalog {
        match found {
            Ok(c) if !c.tests.is_empty() => Catalog {
                collected: Some(c.tests),
                note: None,
                broken: c.broken,
            },
            Ok(c) => Catalog {
                collected: None,
                note: Some(match c.broken.len() {
                    0 => "pytest collected no test: pytest's naming rules stand in".into(),
                    n => format!(
                        "pytest collected no test ({n} test modules failed to import): \
                         pytest's naming rules stand in"
                    ),
                }),
                broken: c.broken,
            },
            Err(e) => Catalog {
                collected: None,
                note: Some(format!(
                    "{}: pytest's naming rules stand in",
                    crate::error::chain(&e)
                )),
                broken: vec![],
            },
        }
    }
}

type Cache = Mutex<BTreeMap<(PathBuf, String), Arc<Catalog>>>;
static CACHE: Mutex<Option<Arc<Cache>>> = Mutex::new(None);

fn cache() -> Arc<Cache> {
    let mut g = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(Default::default).clone()
}

/// The digest of the workspace's state as pytest sees it: every Python file and pytest
/// configuration file, path and content.
pub fn state_digest(g: &Ground) -> String {
    state_digest_in(g.ws())
}

/// [`state_digest`] of a workspace.
pub fn state_digest_in(ws: &Workspace) -> String {
    let root = &ws.root;
    let mut files = ws.python_files();
    files.extend(PYTEST_CONFIG.iter().map(|f| f.to_string()));
    files.sort();
    let mut all = Vec::new();
    for f in files {
        if let Ok(bytes) = std::fs::read(root.join(&f)) {
            all.extend_from_slice(f.as_bytes());
            all.push(0);
            all.extend_from_slice(crate::digest::sha256_hex(&bytes).as_bytes());
            all.push(0);
        }
    }
    crate::digest::sha256_hex(&all)
}

/// A plan over the workspace: its files with `changes` over them, in its interpreter.
pub fn plan(g: &Ground, changes: Vec<(String, String)>, tests: Vec<String>) -> Plan {
    plan_in(g.ws(), changes, tests)
}

/// Largest data file the overlay copies, and most bytes of data files in all.
const DATA_MAX: u64 = 1 << 20;
const DATA_TOTAL: u64 = 32 << 20;

/// The workspace's other files a test may read (data beside the tests and in packages): each
/// regular, not hidden file of the directories the index walks that is not among `sources`,
/// up to [`DATA_MAX`] bytes, until [`DATA_TOTAL`].
fn data_files(ws: &Workspace, sources: &[String]) -> Vec<String> {
    let dirs: Vec<PathBuf> = ws.index().dirs().cloned().collect();
    let mut out = Vec::new();
    let mut total = 0;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<(String, u64)> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| Some((ws.relative(&e.path())?, e.metadata().ok()?.len())))
            .filter(|(rel, len)| *len <= DATA_MAX && sources.binary_search(rel).is_err())
            .collect();
        here.sort();
        for (rel, len) in here {
            total += len;
            if total > DATA_TOTAL {
                return out;
            }
            out.push(rel);
        }
    }
    out
}

/// [`plan`] over a workspace.
pub fn plan_in(ws: &Workspace, changes: Vec<(String, String)>, tests: Vec<String>) -> Plan {
    let files = ws.python_files();
    Plan {
        root: ws.root.clone(),
        data: data_files(ws, &files),
        files,
        changes,
        tests,
        budget: COLLECT_BUDGET,
        python: crate::env::find_python(ws).unwrap_or_else(|| PathBuf::from("python3")),
        import_roots: ws
            .import_roots()
            .iter()
            .filter_map(|r| ws.relative(r))
            .chain([".".to_string()])
            .collect(),
        project_addopts: true,
        whole_files: true,
        side_by_side: false,
        mode: Mode::Run,
    }
}

/// pytest's collection of the workspace as it is on disk (cached per state; recorded).
pub async fn catalog(g: &Ground) -> Result<Arc<Catalog>> {
    catalog_with(g, &[]).await
}

/// pytest's collection of the workspace with `edits` (relative path, new text) over it, in
/// an overlay: the workspace as it is when there are none. Cached per state and edits (in the
/// process, and on disk by content: [`super::by_content`]), and recorded (`tests:collected` keyed by the state's digest; with edits,
/// `tests:collected-after` keyed by the digest of both).
pub async fn catalog_with(g: &Ground, edits: &[(String, String)]) -> Result<Arc<Catalog>> {
    let (input, digest) = match edits {
        [] => (INPUT, state_digest(g)),
        _ => (INPUT_AFTER, edits_digest(&state_digest(g), edits)),
    };
    let key = (g.ws().root.clone(), digest.clone());
    let served = g.opts().inputs.serves(input, &digest);
    let cache = cache();
    if !served {
        if let Some(c) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(c.clone());
        }
    }
    let text = if served {
        g.opts().inputs.read_to_string(input, &digest, || {
            Err(std::io::Error::other("served from the trace"))
        })
    } else {
        let p = plan(g, edits.to_vec(), vec![]);
        // Another copy of this state (or another process) may have collected it already.
        let python = p.python.clone();
        let known = super::by_content::read::<Catalog>(input, &digest, &python);
        let catalog = match known {
            Some(c) => c,
            None => {
                let found = tokio::task::spawn_blocking(move || testrun::collect(&p))
                    .await
                    .map_err(|e| LanserError::internal("collection panicked").with_source(e))?;
                let c = Catalog::of(found);
                // Only a collection pytest made: a failure to run it at all (pytest not
                // importable, a timeout) is the machine's, not the state's.
                if c.collected.is_some() {
                    super::by_content::write(input, &digest, &python, &c);
                }
                c
            }
        };
        let bytes = serde_json::to_vec(&catalog).expect("catalogs serialize");
        g.opts().inputs.read_to_string(input, &digest, || Ok(bytes))
    };
    let text =
        text.map_err(|e| LanserError::internal("collection: no recorded catalog").with_source(e))?;
    let catalog: Catalog = serde_json::from_str(&text)
        .map_err(|e| LanserError::internal("collection: bad record").with_source(e))?;
    let catalog = Arc::new(catalog);
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, catalog.clone());
    Ok(catalog)
}

/// The digest of a workspace state with edits over it.
fn edits_digest(state: &str, edits: &[(String, String)]) -> String {
    let mut all = state.as_bytes().to_vec();
    for (rel, text) in edits {
        all.push(0);
        all.extend_from_slice(rel.as_bytes());
        all.push(0);
        all.extend_from_slice(crate::digest::sha256_hex(text.as_bytes()).as_bytes());
    }
    crate::digest::sha256_hex(&all)
}

/// Each collected test with the definition it runs: by its node id's names where the file
/// defines them, else the definition around the line pytest reports (an inherited test's
/// base method), a doctest's by its dotted name; `true` for a doctest.
pub fn items(
    g: &Ground,
    files: &mut BTreeMap<String, Parsed>,
    collected: &[Collected],
) -> Vec<(String, Item, bool)> {
    let mut out = Vec::new();
    for c in collected {
        let Some(p) = load(g, files, &c.path) else {
            continue;
        };
        let by_id: Vec<String> =
            c.id.split('[')
                .next()
                .unwrap_or(&c.id)
                .split("::")
                .skip(1)
                .map(String::from)
                .collect();
        let nodeid_file = crate::testrun::file_of(&c.id) == c.path;
        let qual = if c.doctest {
            let dotted = c.name.trim_start_matches("[doctest] ");
            let parts: Vec<String> = dotted.split('.').map(String::from).collect();
            (0..parts.len())
                .map(|i| parts[i..].to_vec())
                .find(|q| p.defs.iter().any(|d| &d.qual == q))
                .unwrap_or_default()
        } else if nodeid_file && p.defs.iter().any(|d| d.qual == by_id) {
            by_id
        } else {
            let line = c.line.unwrap_or(0) as usize;
            match p.doc.index.line_span(line) {
                Some((start, end)) => {
                    let text = &p.doc.text[start..end];
                    let indent = text.len() - text.trim_start().len();
                    enclosing(&c.path, &p.defs, start + indent).qual
                }
                None => vec![],
            }
        };
        let item = Item {
            path: c.path.clone(),
            qual,
        };
        out.push((c.id.clone(), item, c.doctest));
    }
    out
}

/// Keep a collection made elsewhere (a warm daemon's background one) for this state.
pub fn remember(root: PathBuf, digest: String, catalog: Catalog) {
    cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((root, digest), Arc::new(catalog));
}

//! pr-v2's test term (`--tests impacted`): run the tests an impact analysis selected on an
//! overlay copy of the workspace with the step's change applied — never the user's tree —
//! within a time budget, in the workspace's own interpreter, and record each test's outcome.
//!
//! The overlay is a temporary directory holding the workspace's Python files (conftest.py
//! included) and its root's pytest configuration, with the changed texts written over them. pytest runs there with a small plugin of
//! ours loaded by `-p`: it puts the overlay's import roots first on `sys.path` and drops
//! every entry inside the original tree (so neither `PYTHONPATH` nor an editable install of
//! the original can shadow the patched code), and writes one JSON line per test report as it
//! goes, so a run cut by the budget keeps what finished. The budget kills the whole process
//! group. No bytecode, no cache, no temporary path reaches the result.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub mod collect;
mod shards;
#[cfg(test)]
mod tests;
mod zygote;

pub use collect::{collect, coverage, Broken, Collected, Collection, Coverage};
pub use shards::agree_side_by_side;

/// The plugin pytest loads: `sys.path` rewritten, one JSON line per report.
const PLUGIN: &str = r#"
import json, os, sys
if int(os.environ.get("LANSER_NICE", "0")) and hasattr(os, "nice"):
    try:
        os.nice(int(os.environ["LANSER_NICE"]))
    except OSError:
        pass
_overlay = os.environ["LANSER_OVERLAY"]
_original = os.path.realpath(os.environ["LANSER_ORIGINAL"])
_roots = [os.path.join(_overlay, r) for r in os.environ.get("LANSER_ROOTS", ".").split(os.pathsep)]
def _inside(p):
    try:
        p = os.path.realpath(p or ".")
    except Exception:
        return False
    return p == _original or p.startswith(_original + os.sep)
sys.path[:] = _roots + [p for p in sys.path if p not in _roots and not _inside(p)]
for _name, _mod in list(sys.modules.items()):
    _file = getattr(_mod, "__file__", None)
    if _file and _inside(_file):
        del sys.modules[_name]
_out = open(os.environ["LANSER_REPORT"], "a", buffering=1)
_asked = set(open(os.environ["LANSER_TESTS"]).read().split("\n")) - {""}
_mode = os.environ.get("LANSER_MODE", "run")
_whole = os.environ.get("LANSER_WHOLE_FILES") == "1"
def _wanted(nodeid):
    return nodeid in _asked or nodeid.split("[")[0] in _asked
def _class(nodeid):
    parts = nodeid.split("[")[0].split("::")
    return "::".join(parts[:2]) if len(parts) > 2 else None
_classes = {c for c in map(_class, _asked) if c}
if _mode == "coverage":
    import coverage as _coverage
    _cov = _coverage.Coverage(data_file=None, source=[_overlay], config_file=False)
    _cov.start()
def pytest_collection_modifyitems(session, config, items):
    if _mode == "collect":
        with open(os.environ["LANSER_COLLECTED"], "w") as f:
            for i in items:
                path, line, name = i.location
                f.write(json.dumps({"id": i.nodeid, "path": path.replace(os.sep, "/"), "line": line,
                                    "doctest": type(i).__name__ == "DoctestItem", "name": name}) + "\n")
        return
    if _mode == "coverage" and not _asked:
        return
    def want(nodeid):
        whole = _mode == "run" and _whole and _class(nodeid) in _classes
        return whole or _wanted(nodeid)
    keep = [i for i in items if want(i.nodeid)]
    drop = [i for i in items if not want(i.nodeid)]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
def pytest_collection_finish(session):
    # A failure is read as its outcome: its traceback is not formatted (pytest's longest work
    # when a change fails hundreds of tests). The collection's own errors keep theirs.
    session.config.option.tbstyle = "no"
def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _out.write(json.dumps({"id": report.nodeid, "when": report.when, "outcome": report.outcome}) + "\n")
        _out.flush()
def _files_in(text):
    # The overlay's files a collection error's traceback names (`pkg/mod.py:57: in <module>`).
    import re
    top = os.path.realpath(_overlay)
    found = set()
    for m in re.finditer(r"[^\s\"'()<>:,]+\.py\b", text):
        p = m.group(0)
        try:
            full = os.path.realpath(p if os.path.isabs(p) else os.path.join(top, p))
        except Exception:
            continue
        if full.startswith(top + os.sep) and os.path.isfile(full):
            found.add(os.path.relpath(full, top).replace(os.sep, "/"))
    return sorted(found)
def pytest_collectreport(report):
    if report.outcome == "failed":
        _out.write(json.dumps({"id": report.nodeid, "when": "collect", "outcome": "failed",
                               "files": _files_in(str(report.longrepr))}) + "\n")
        _out.flush()
if _mode == "coverage":
    import pytest as _pytest
    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _cov.switch_context(item.nodeid)
        yield
        _cov.switch_context("")
    def pytest_sessionfinish(session):
        _cov.stop()
        data = _cov.get_data()
        out = {}
        for f in sorted(data.measured_files()):
            rel = os.path.relpath(f, _overlay).replace(os.sep, "/")
            if rel.startswith(".."):
                continue
            for line, ctxs in sorted(data.contexts_by_lineno(f).items()):
                for c in ctxs:
                    if c:
                        out.setdefault(c, {}).setdefault(rel, []).append(line)
        with open(os.environ["LANSER_COVERAGE"], "w") as f:
            json.dump(out, f, sort_keys=True)
"#;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The user's workspace root: read, never written.
    pub root: PathBuf,
    /// Workspace-relative files copied into the overlay.
    pub files: Vec<String>,
    /// Workspace-relative other files copied too: data the tests read (sqlparse 0.5.1's
    /// tests/files/*.sql), which a copy of the sources alone would fail them for.
    pub data: Vec<String>,
    /// (relative path, new text), written over the copy.
    pub changes: Vec<(String, String)>,
    /// pytest node ids, relative to the root.
    pub tests: Vec<String>,
    pub budget: Duration,
    pub python: PathBuf,
    /// Workspace-relative directories first on `sys.path` (`src`, `.`).
    pub import_roots: Vec<String>,
    /// Keep the project's own `addopts` (`--doctest-modules` and the like), as pytest would
    /// run it; pytest is asked again without them when they are a usage error here (a plugin
    /// the environment lacks). pr-v2 runs without them, as it always has.
    pub project_addopts: bool,
    /// Run every test of the asked tests' classes (a method's top-level class, in pytest's
    /// order) and read the asked ones only: a method may depend on one before it in its class
    /// (a class attribute an earlier method sets, as pathspec 0.12.1's symlink tests do), which
    /// a run of the asked ones alone would fail. A module-level test runs alone. pr-v2 runs the
    /// asked ones.
    pub whole_files: bool,
    /// The project's tests give, run in several processes side by side, the outcomes one
    /// process gives ([`shards::agree_side_by_side`]): a run of tests of several files may be
    /// split across the machine's cores ([`shards`]). Otherwise one process runs them.
    pub side_by_side: bool,
    pub mode: Mode,
}

/// What pytest is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Run the asked tests.
    #[default]
    Run,
    /// Collect every test and run none ([`collect`]).
    Collect,
    /// Run the asked tests under coverage.py, one dynamic context per test ([`coverage`]).
    Coverage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Passed,
    Failed,
    Error,
    Skipped,
    NotRun,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TestResult {
    pub id: String,
    pub outcome: Outcome,
}

/// What ran and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// Sorted by id.
    pub tests: Vec<TestResult>,
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    pub not_run: u64,
    pub timed_out: bool,
    pub budget_ms: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum TestRunError {
    #[error("cannot build the test overlay")]
    Overlay(#[source] io::Error),
    #[error("cannot run the interpreter {}", python.display())]
    Interpreter {
        python: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("pytest is not importable by {}: install it there (python -m pip install pytest)", .0.display())]
    NoPytest(PathBuf),
}

fn overlay(plan: &Plan, dir: &Path) -> io::Result<()> {
    let configs = ["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"]
        .map(String::from)
        .into_iter()
        .filter(|f| plan.root.join(f).is_file());
    let files: Vec<String> = plan
        .files
        .iter()
        .chain(&plan.data)
        .cloned()
        .chain(configs)
        .collect();
    for rel in &files {
        let to = dir.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match std::fs::copy(plan.root.join(rel), &to) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    for (rel, text) in &plan.changes {
        let to = dir.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(to, text)?;
    }
    Ok(())
}

/// Run the plan (blocking: async callers use `spawn_blocking`).
pub fn run(plan: &Plan) -> Result<Run, TestRunError> {
    if plan.tests.is_empty() {
        return Ok(tally(plan, vec![], false));
    }
    let n = if plan.side_by_side {
        shards::count(plan)
    } else {
        1
    };
    let groups = shards::split(&plan.tests, n);
    if groups.len() > 1 {
        return shards::run(plan, &groups);
    }
    let (text, timed_out) = in_overlay(plan, |_| Ok(()))?;
    Ok(tally(plan, outcomes(&plan.tests, &text), timed_out))
}

/// A run's counts from its outcomes.
pub(crate) fn tally(plan: &Plan, tests: Vec<TestResult>, timed_out: bool) -> Run {
    let mut result = Run {
        tests,
        passed: 0,
        failed: 0,
        errors: 0,
        skipped: 0,
        not_run: 0,
        timed_out,
        budget_ms: plan.budget.as_millis() as u64,
    };
    for t in &result.tests {
        match t.outcome {
            Outcome::Passed => result.passed += 1,
            Outcome::Failed => result.failed += 1,
            Outcome::Error => result.errors += 1,
            Outcome::Skipped => result.skipped += 1,
            Outcome::NotRun => result.not_run += 1,
        }
    }
    result
}

/// Build the overlay, run pytest there as the plan says, then `read` what it left in the
/// auxiliary directory (before the overlay goes): the report lines and whether time ran out.
pub(crate) fn in_overlay(
    plan: &Plan,
    read: impl FnOnce(&Path) -> io::Result<()>,
) -> Result<(String, bool), TestRunError> {
    let tmp = tempfile::tempdir().map_err(TestRunError::Overlay)?;
    let (tree, aux) = staged(plan, tmp.path())?;
    let deadline = Instant::now() + plan.budget;
    let own = Own::new(&aux, "", 0);
    let (text, timed_out) = attempt(plan, &plan.tests, &tree, &aux, own, deadline)?;
    read(&aux).map_err(TestRunError::Overlay)?;
    Ok((text, timed_out))
}

/// The overlay (`overlay/`) and the auxiliary directory (`aux/`, the plugin in it) made under
/// `tmp`, once pytest is known importable.
fn staged(plan: &Plan, tmp: &Path) -> Result<(PathBuf, PathBuf), TestRunError> {
    let (tree, aux) = (tmp.join("overlay"), tmp.join("aux"));
    std::fs::create_dir_all(&aux).map_err(TestRunError::Overlay)?;
    overlay(plan, &tree).map_err(TestRunError::Overlay)?;
    std::fs::write(aux.join("_lanser_report.py"), PLUGIN).map_err(TestRunError::Overlay)?;
    probe_pytest(&plan.python)?;
    Ok((tree, aux))
}

/// One pytest process over `tests` in the staged overlay, with its own files (`own`), until
/// `deadline`: the plugin's report lines and whether time ran out.
fn attempt(
    plan: &Plan,
    tests: &[String],
    tree: &Path,
    aux: &Path,
    own: Own,
    deadline: Instant,
) -> Result<(String, bool), TestRunError> {
    std::fs::write(&own.tests, tests.join("\n")).map_err(TestRunError::Overlay)?;
    let (mut timed_out, code) = pytest(plan, tests, tree, aux, &own, true, deadline)?;
    // Exit 4: a usage error, such as an addopts option of a plugin this environment lacks.
    if plan.project_addopts && !timed_out && code == Some(4) {
        let _ = std::fs::remove_file(&own.report);
        timed_out = pytest(plan, tests, tree, aux, &own, false, deadline)?.0;
    }
    Ok((
        std::fs::read_to_string(&own.report).unwrap_or_default(),
        timed_out,
    ))
}

/// One pytest process's own: its files in the auxiliary directory (the ids it is asked, its
/// report lines, its output), named with `tag` so processes of one run write apart, and the
/// niceness it takes (Unix; 0: as lanser's).
struct Own {
    tests: PathBuf,
    report: PathBuf,
    log: PathBuf,
    nice: u8,
}

impl Own {
    fn new(aux: &Path, tag: &str, nice: u8) -> Own {
        Own {
            tests: aux.join(format!("tests{tag}.txt")),
            report: aux.join(format!("report{tag}.jsonl")),
            log: aux.join(format!("pytest{tag}.log")),
            nice,
        }
    }
}

fn probe_pytest(python: &Path) -> Result<(), TestRunError> {
    if collect::known_importable(python, "pytest") {
        return Ok(());
    }
    let status = Command::new(python)
        .args(["-c", "import pytest"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|source| TestRunError::Interpreter {
            python: python.to_path_buf(),
            source,
        })?;
    match status.success() {
        true => {
            collect::remember_importable(python, "pytest");
            Ok(())
        }
        false => Err(TestRunError::NoPytest(python.to_path_buf())),
    }
}

/// Start pytest in its own process group (spawned, or forked by a warm [`zygote`]) and wait
/// until the deadline: whether it was cut, and its exit code.
fn pytest(
    plan: &Plan,
    tests: &[String],
    tree: &Path,
    aux: &Path,
    own: &Own,
    addopts: bool,
    deadline: Instant,
) -> Result<(bool, Option<i32>), TestRunError> {
    let (args, env) = pytest_args(plan, tests, tree, aux, own, addopts);
    let log_path = &own.log;
    if zygote::enabled() {
        let mut all: BTreeMap<String, String> = std::env::vars().collect();
        all.remove("PYTHONSTARTUP");
        all.extend(env.iter().cloned());
        let path = [aux.to_path_buf()];
        let run = &args[2..]; // after `-m pytest`
        let files: Vec<String> = plan
            .files
            .iter()
            .chain(plan.changes.iter().map(|(rel, _)| rel))
            .cloned()
            .collect();
        let tops = zygote::top_modules(&files, &plan.import_roots);
        let request = zygote::Request {
            args: run,
            cwd: tree,
            env: &all,
            path: &path,
            log: log_path,
        };
        if let Ok(f) = zygote::fork(&plan.python, &tops, deadline, &request) {
            loop {
                if let Some(code) = f.poll() {
                    return Ok((false, code));
                }
                if Instant::now() >= deadline {
                    kill_group(f.pid);
                    return Ok((true, None));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let log = std::fs::File::create(log_path).map_err(TestRunError::Overlay)?;
    let log2 = log.try_clone().map_err(TestRunError::Overlay)?;
    let mut cmd = Command::new(&plan.python);
    cmd.args(&args)
        .current_dir(tree)
        .envs(env)
        .env_remove("PYTHONSTARTUP")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    own_group(&mut cmd);
    let mut child = cmd.spawn().map_err(|source| TestRunError::Interpreter {
        python: plan.python.clone(),
        source,
    })?;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Ok((false, status.code()));
        }
        if Instant::now() >= deadline {
            // The whole group: pytest and anything a test started.
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            let _ = io::stderr().flush();
            return Ok((true, None));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// pytest's command line (`-m pytest …`) and the environment it runs under.
fn pytest_args(
    plan: &Plan,
    tests: &[String],
    tree: &Path,
    aux: &Path,
    own: &Own,
    addopts: bool,
) -> (Vec<String>, Vec<(String, String)>) {
    let roots: Vec<String> = match plan.import_roots.is_empty() {
        true => vec![".".into()],
        false => plan.import_roots.clone(),
    };
    let mut args: Vec<String> = [
        "-m",
        "pytest",
        "-p",
        "_lanser_report",
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
    ]
    .map(String::from)
    .to_vec();
    if !(plan.project_addopts && addopts) {
        args.extend(["-o".to_string(), "addopts=".to_string()]);
    }
    args.extend(["--rootdir".to_string(), tree.to_string_lossy().into_owned()]);
    // A test module that fails to import interrupts the whole session unless asked: the
    // other files' tests of a whole-file run (pr-v3's, `tests --run`) still run and are read.
    if plan.whole_files && plan.mode == Mode::Run {
        args.push("--continue-on-collection-errors".to_string());
    }
    args.extend(match plan.mode {
        Mode::Collect => vec!["--collect-only".to_string()],
        _ => files_of(tests),
    });
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mode = match plan.mode {
        Mode::Run => "run",
        Mode::Collect => "collect",
        Mode::Coverage => "coverage",
    };
    let env = [
        ("PYTHONPATH", path(aux)),
        ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ("PYTHONHASHSEED", "0".into()),
        ("LANSER_OVERLAY", path(tree)),
        ("LANSER_ORIGINAL", path(&plan.root)),
        // Split with os.pathsep by the plugin: `;` on Windows, where `:` follows a drive letter.
        (
            "LANSER_ROOTS",
            roots.join(if cfg!(windows) { ";" } else { ":" }),
        ),
        ("LANSER_REPORT", path(&own.report)),
        ("LANSER_TESTS", path(&own.tests)),
        (
            "LANSER_WHOLE_FILES",
            if plan.whole_files { "1" } else { "0" }.into(),
        ),
        ("LANSER_MODE", mode.into()),
        ("LANSER_COLLECTED", path(&aux.join("collected.jsonl"))),
        ("LANSER_COVERAGE", path(&aux.join("coverage.json"))),
        ("LANSER_NICE", own.nice.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    (args, env)
}

/// pytest's own process group (Unix) or process tree (Windows), for [`kill_group`].
fn own_group(cmd: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    // CREATE_NEW_PROCESS_GROUP
    #[cfg(windows)]
    std::os::windows::process::CommandExt::creation_flags(cmd, 0x0000_0200);
}

/// Kill process `pid` and everything it started: its process group (Unix), its process tree
/// (Windows).
fn kill_group(pid: u32) {
    let mut kill = if cfg!(windows) {
        let mut c = Command::new("taskkill");
        c.args(["/F", "/T", "/PID", &pid.to_string()])
            .stdout(Stdio::null());
        c
    } else {
        let mut c = Command::new("kill");
        c.args(["-KILL", "--", &format!("-{pid}")]);
        c
    };
    let _ = kill.stderr(Stdio::null()).status();
}

/// The file of a pytest node id (`tests/test_x.py::TestK::test_m` → `tests/test_x.py`).
pub fn file_of(id: &str) -> &str {
    id.split("::").next().unwrap_or(id)
}

/// The test files of the asked ids, each once (the plugin keeps only the asked tests, so an
/// id that does not exist is not run instead of failing the whole run).
fn files_of(ids: &[String]) -> Vec<String> {
    let files: std::collections::BTreeSet<&str> = ids.iter().map(|id| file_of(id)).collect();
    files.into_iter().map(String::from).collect()
}

/// Each asked id's outcome from the plugin's report lines (a setup or teardown error is an
/// error; an id never reported did not run).
pub(crate) fn outcomes(asked: &[String], report: &str) -> Vec<TestResult> {
    let mut seen: BTreeMap<String, Outcome> = BTreeMap::new();
    for line in report.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        // A parametrized test's instances (`test_x[1]`) count for `test_x`.
        let raw = v["id"].as_str().unwrap_or_default();
        let id = match asked.iter().any(|a| a == raw) {
            true => raw.to_string(),
            false => raw.split('[').next().unwrap_or(raw).to_string(),
        };
        let outcome = match (v["when"].as_str(), v["outcome"].as_str()) {
            (Some("call"), Some("passed")) => Outcome::Passed,
            (Some("call"), Some("failed")) => Outcome::Failed,
            (_, Some("skipped")) => Outcome::Skipped,
            (Some("collect"), _) => Outcome::Error,
            (_, Some("failed")) => Outcome::Error,
            _ => continue,
        };
        // The worst report of a test wins (a teardown error after a passing call).
        let slot = seen.entry(id).or_insert(outcome);
        if rank(outcome) > rank(*slot) {
            *slot = outcome;
        }
    }
    let mut out: Vec<TestResult> = asked
        .iter()
        .map(|id| {
            let file = file_of(id);
            let outcome = seen
                .get(id)
                .or_else(|| seen.get(file).filter(|o| **o == Outcome::Error))
                .copied()
                .unwrap_or(Outcome::NotRun);
            TestResult {
                id: id.clone(),
                outcome,
            }
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out.dedup();
    out
}

fn rank(o: Outcome) -> u8 {
    match o {
        Outcome::NotRun => 0,
        Outcome::Skipped => 1,
        Outcome::Passed => 2,
        Outcome::Failed => 3,
        Outcome::Error => 4,
    }
}

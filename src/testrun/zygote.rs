//! A pytest process kept warm between runs (Unix; `LANSER_PYTEST_ZYGOTE=0` turns it off): one
//! interpreter per project interpreter that has imported pytest and the modules of the pytest
//! plugins installed there, and nothing of any project (`zygote.py`), forking a child per run
//! that takes the run's directory, environment and import path and calls `pytest.main` as
//! `python -m pytest` would. The child is its own process group (cut at the deadline as a
//! spawned pytest is) and writes its exit code to a status file. Saves the interpreter's start,
//! `import pytest` and the plugins' imports per run; a project module is imported only in a
//! child, so no run sees another's.
//!
//! A module the zygote has loaded is the one a child sees, whatever the project holds: a run
//! whose project has a top-level module of such a name (`calendar.py`, a package named as a
//! plugin's) is not forked ([`top_modules`]), and pytest is spawned as without a zygote.

use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

const SCRIPT: &str = include_str!("zygote.py");

struct Zygote {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _dir: tempfile::TempDir,
    /// The top-level modules the zygote has loaded.
    modules: BTreeSet<String>,
}

static ZYGOTES: Mutex<BTreeMap<PathBuf, Zygote>> = Mutex::new(BTreeMap::new());

/// Whether runs go through a zygote.
pub fn enabled() -> bool {
    cfg!(unix) && std::env::var("LANSER_PYTEST_ZYGOTE").map_or(true, |v| v != "0")
}

/// How long a zygote may take to import pytest and the plugins (about a second) before the
/// runs of its interpreter are spawned instead, for the rest of the process.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// Interpreters whose zygote crashed or hung at its start.
static FAILED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Start a zygote and read the modules it has loaded, waiting until `by` at most (the child
/// is killed then: a plugin that hangs at its import).
fn start(python: &Path, by: Instant) -> io::Result<Zygote> {
    // An empty directory: the zygote's own sys.path[0] holds nothing to import.
    let dir = tempfile::tempdir()?;
    let mut child = Command::new(python)
        .args(["-c", SCRIPT])
        .current_dir(dir.path())
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTHONSTARTUP")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout"))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        let read = stdout.read_line(&mut line).map(|_| line);
        let _ = tx.send((read, stdout));
    });
    let wait = by.saturating_duration_since(Instant::now());
    let (line, stdout) = match rx.recv_timeout(wait) {
        Ok((Ok(line), stdout)) => (line, stdout),
        Ok((Err(e), _)) => return Err(stopped(&mut child, e)),
        Err(_) => {
            let e = io::Error::new(io::ErrorKind::TimedOut, "the pytest zygote did not start");
            return Err(stopped(&mut child, e));
        }
    };
    let modules = serde_json::from_str::<serde_json::Value>(&line)
        .ok()
        .and_then(|said| {
            let names = said["modules"].as_array()?.iter();
            Some(names.filter_map(|m| m.as_str().map(String::from)).collect())
        });
    let Some(modules) = modules else {
        let e = io::Error::other("the pytest zygote named no modules");
        return Err(stopped(&mut child, e));
    };
    Ok(Zygote {
        _child: child,
        stdin,
        stdout,
        _dir: dir,
        modules,
    })
}

/// `e`, once `child` is killed and reaped.
fn stopped(child: &mut Child, e: io::Error) -> io::Error {
    let _ = child.kill();
    let _ = child.wait();
    e
}

/// A forked run.
pub struct Forked {
    pub pid: u32,
    status: PathBuf,
}

impl Forked {
    /// `Some(exit code)` once the run ended; `Some(None)` when it ended without writing one.
    pub fn poll(&self) -> Option<Option<i32>> {
        if let Ok(text) = std::fs::read_to_string(&self.status) {
            return Some(text.trim().parse().ok());
        }
        match Path::new(&format!("/proc/{}", self.pid)).exists() {
            true => None,
            false => Some(
                std::fs::read_to_string(&self.status)
                    .ok()?
                    .trim()
                    .parse()
                    .ok(),
            ),
        }
    }
}

/// A run to fork: pytest's arguments (after `-m pytest`), its directory, its whole
/// environment, the directories before the interpreter's own import path, its output file.
pub struct Request<'a> {
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a BTreeMap<String, String>,
    pub path: &'a [PathBuf],
    pub log: &'a Path,
}

/// Fork the pytest run `run`; an error when the run's project has a top-level module (`tops`,
/// [`top_modules`]) of a name the zygote has loaded, or when the interpreter's zygote does not
/// start by `deadline` (nor within [`HANDSHAKE`]).
pub fn fork(
    python: &Path,
    tops: &BTreeSet<String>,
    deadline: Instant,
    run: &Request,
) -> io::Result<Forked> {
    let Request {
        args,
        cwd,
        env,
        path,
        log,
    } = run;
    let status = log.with_extension("status");
    let req = json!({
        "args": args,
        "cwd": cwd,
        "env": env,
        "path": path,
        "log": log,
        "status": status,
    });
    let mut all = ZYGOTES.lock().unwrap_or_else(|p| p.into_inner());
    if !all.contains_key(python) {
        let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        if failed.contains(python) {
            return Err(io::Error::other("the pytest zygote failed to start before"));
        }
        let bound = Instant::now() + HANDSHAKE;
        match start(python, deadline.min(bound)) {
            Ok(z) => {
                all.insert(python.to_path_buf(), z);
            }
            // Cut by the run's own deadline: a later run may give it the time.
            Err(e) if e.kind() == io::ErrorKind::TimedOut && deadline < bound => return Err(e),
            Err(e) => {
                failed.insert(python.to_path_buf());
                return Err(e);
            }
        }
    }
    let z = all.get_mut(python).expect("inserted");
    if let Some(name) = z.modules.intersection(tops).next() {
        return Err(io::Error::other(format!(
            "the project's module {name} is one the zygote has loaded"
        )));
    }
    let answer = (|| {
        writeln!(z.stdin, "{req}")?;
        z.stdin.flush()?;
        let mut line = String::new();
        z.stdout.read_line(&mut line)?;
        let v: serde_json::Value = serde_json::from_str(&line).map_err(io::Error::other)?;
        v["pid"]
            .as_u64()
            .map(|p| p as u32)
            .ok_or_else(|| io::Error::other("the zygote gave no pid"))
    })();
    match answer {
        Ok(pid) => Ok(Forked { pid, status }),
        Err(e) => {
            // A zygote that failed is started afresh next time.
            all.remove(python);
            Err(e)
        }
    }
}

/// The names a run of the project could import as top-level modules: the entries of its import
/// roots (a `name.py` file, a `name/` directory) and, as pytest's default import mode inserts
/// the first directory above a test file without an `__init__.py`, the first component below
/// each such directory of every Python file. `files` and `roots` are workspace-relative.
pub fn top_modules(files: &[String], roots: &[String]) -> BTreeSet<String> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let package = |dir: &str| match dir {
        "" => false,
        d => set.contains(format!("{d}/__init__.py").as_str()),
    };
    let first = |rest: &str| {
        let head = rest.split('/').next().unwrap_or(rest);
        head.strip_suffix(".py").unwrap_or(head).to_string()
    };
    let mut out = BTreeSet::new();
    for file in files {
        for root in roots {
            let rest = match root.as_str() {
                "." | "" => Some(file.as_str()),
                r => file.strip_prefix(r).and_then(|f| f.strip_prefix('/')),
            };
            out.extend(rest.map(first));
        }
        // The first directory above the file that is not a package.
        let mut dir = file.rsplit_once('/').map_or("", |(d, _)| d);
        while package(dir) {
            dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
        }
        let rest = match dir {
            "" => file.as_str(),
            d => &file[d.len() + 1..],
        };
        out.insert(first(rest));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::top_modules;

    #[test]
    fn a_projects_top_modules_are_its_roots_entries_and_its_test_directories_modules() {
        let files: Vec<String> = [
            "src/shapes/__init__.py",
            "src/shapes/units.py",
            "src/calendar.py",
            "tests/test_units.py",
            "tests/helpers/__init__.py",
            "tests/helpers/make.py",
            "toolz/__init__.py",
            "toolz/curried/__init__.py",
            "toolz/curried/operator.py",
            "toolz/tests/__init__.py",
            "toolz/tests/test_curried.py",
            "conftest.py",
        ]
        .map(String::from)
        .to_vec();
        let roots = ["src".to_string(), ".".to_string()];
        let got = top_modules(&files, &roots);
        let want = [
            "calendar",
            "conftest",
            "helpers",
            "shapes",
            "src",
            "test_units",
            "tests",
            "toolz",
        ];
        assert_eq!(got.iter().map(String::as_str).collect::<Vec<_>>(), want);
        // A module of a package (toolz.curried.operator) is not a top-level `operator`.
        assert!(!got.contains("operator"));
    }
}

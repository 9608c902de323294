//! A pytest process kept warm between runs (opt-in: `LANSER_PYTEST_ZYGOTE=1`, Unix): one
//! interpreter per project interpreter that has imported pytest and nothing of any project
//! (`zygote.py`), forking a child per run that takes the run's directory, environment and
//! import path and calls `pytest.main` as `python -m pytest` would. The child is its own
//! process group (cut at the deadline as a spawned pytest is) and writes its exit code to a
//! status file. Saves the interpreter's start and `import pytest` per run; a project module is
//! imported only in a child, so no run sees another's.

use serde_json::json;
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

const SCRIPT: &str = include_str!("zygote.py");

struct Zygote {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _dir: tempfile::TempDir,
}

static ZYGOTES: Mutex<BTreeMap<PathBuf, Zygote>> = Mutex::new(BTreeMap::new());

/// Whether runs go through a zygote.
pub fn enabled() -> bool {
    cfg!(unix) && std::env::var("LANSER_PYTEST_ZYGOTE").is_ok_and(|v| v == "1")
}

fn start(python: &Path) -> io::Result<Zygote> {
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
    Ok(Zygote {
        _child: child,
        stdin,
        stdout: BufReader::new(stdout),
        _dir: dir,
    })
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

/// Fork a pytest run with `args` in `cwd`, under `env` (the whole environment), `path` before
/// the interpreter's own import path, its output to `log`.
pub fn fork(
    python: &Path,
    args: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    path: &[PathBuf],
    log: &Path,
) -> io::Result<Forked> {
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
        all.insert(python.to_path_buf(), start(python)?);
    }
    let z = all.get_mut(python).expect("inserted");
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

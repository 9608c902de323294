//! Shared helpers: fixture paths, running the binary, and expectations computed from fixture
//! text with the standard library only (never with lanser's own text module).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A symbolic link at `dst` to `src` (on Windows a directory or a file link, as `src` is;
/// making one needs Developer Mode or an elevated shell there).
pub fn link(src: &Path, dst: &Path) {
    #[cfg(unix)]
    let made = std::os::unix::fs::symlink(src, dst);
    #[cfg(windows)]
    let made = if src.is_dir() {
        std::os::windows::fs::symlink_dir(src, dst)
    } else {
        std::os::windows::fs::symlink_file(src, dst)
    };
    made.unwrap_or_else(|e| panic!("link {} -> {}: {e}", dst.display(), src.display()));
}

/// A fresh `LANSER_HOME` at `dir/home` with the suite's pinned Pyright linked in (no install).
pub fn home_with_pyright(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    link(
        &crate::daemon::real_home().join("pyright"),
        &home.join("pyright"),
    );
    home
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    repo().join("fixtures").join(name)
}

pub fn read(ws: &Path, rel: &str) -> String {
    std::fs::read_to_string(ws.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// 1-based number of the first line of `rel` that contains `needle`.
pub fn line_with(ws: &Path, rel: &str, needle: &str) -> u32 {
    let text = read(ws, rel);
    let idx = text
        .split('\n')
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {rel}"));
    idx as u32 + 1
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The server range (0-based, UTF-16) of the first whole-word `ident` on 1-based `line`.
pub fn ident_range(ws: &Path, rel: &str, line: u32, ident: &str) -> [u32; 4] {
    let text = read(ws, rel);
    let l = text
        .split('\n')
        .nth(line as usize - 1)
        .expect("line exists");
    let l = l.strip_suffix('\r').unwrap_or(l);
    let (byte, _) = l
        .match_indices(ident)
        .find(|(i, _)| {
            !l[..*i].chars().next_back().is_some_and(is_ident)
                && !l[i + ident.len()..].chars().next().is_some_and(is_ident)
        })
        .unwrap_or_else(|| panic!("{ident} not on {rel}:{line}"));
    let start = l[..byte].encode_utf16().count() as u32;
    let end = start + ident.encode_utf16().count() as u32;
    [line - 1, start, line - 1, end]
}

/// (path, range) of every location in a facts list.
pub fn locs(list: &Value) -> Vec<(String, [u32; 4])> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|l| {
            let r: Vec<u32> = l["range"]
                .as_array()
                .expect("range")
                .iter()
                .map(|n| n.as_u64().expect("number") as u32)
                .collect();
            (
                l["path"].as_str().expect("path").to_string(),
                [r[0], r[1], r[2], r[3]],
            )
        })
        .collect()
}

/// The binary, answering in-process: the suite spawns many short-lived processes on shared
/// fixtures, so only `daemon.rs` (own LANSER_HOME, stopped at the end) uses the daemon.
pub fn lanser() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lanser"));
    c.env_remove("LANSER_SERVER_CMD");
    c.env("LANSER_NO_DAEMON", "1");
    // The suite's workspaces are its own fixtures, so they are trusted to name the servers
    // their lanser.toml defines; trust.rs removes this to test the untrusted default.
    c.env("LANSER_TRUST_WORKSPACE", "1");
    c
}

/// Run lanser; every bundle it prints is validated against schemas/bundle.schema.json. Every
/// run of a read-only or preview command that talks to the real server (or to
/// tests/fake_lsp.py: its crash, hang and garbage faults replay too) is also recorded with
/// `--trace-file` and replayed with `trace replay --verify` with no server to be had: the replay must exit the same way and, for `--json` runs, print the same
/// bundles (issue 6: every integration test's trace replays offline). A command line that
/// clap rejects runs nothing and leaves no trace.
pub fn run(args: &[&str]) -> Output {
    let o = run_traced(args);
    crate::schemas::collect(&o.stdout);
    o
}

/// [`run`] without the schema check.
fn run_traced(args: &[&str]) -> Output {
    let Some(trace) = replayable(args) else {
        return lanser().args(args).output().expect("lanser runs");
    };
    let trace_file = trace.path().join("trace.jsonl");
    let trace_arg = trace_file.to_string_lossy().into_owned();
    let out = lanser()
        .args(args)
        .args(["--trace-file", &trace_arg])
        .output()
        .expect("lanser runs");
    if !trace_file.exists() {
        assert_eq!(
            out.status.code(),
            Some(2),
            "only a usage error leaves no trace"
        );
        return out;
    }
    keep_trace(args);
    let home = trace.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let replay = lanser()
        .args(["trace", "replay", "--trace-file", &trace_arg, "--verify"])
        .args(["--server-cmd", "/nonexistent"])
        .env("PATH", "")
        .env("LANSER_HOME", &home)
        .output()
        .expect("lanser runs");
    let what = format!("the trace of `lanser {}` does not replay", args.join(" "));
    assert_eq!(
        replay.status.code(),
        out.status.code(),
        "{what}: {}",
        stderr(&replay)
    );
    // Replay prints bundles; a --json run printed the same bundles (meta.timing is volatile).
    if args.contains(&"--json") {
        let without_timing = |bytes: &[u8]| -> Vec<Value> {
            String::from_utf8_lossy(bytes)
                .lines()
                .map(|l| {
                    let mut v: Value = serde_json::from_str(l).expect("a bundle line");
                    if let Some(m) = v.get_mut("meta").and_then(Value::as_object_mut) {
                        m.remove("timing");
                    }
                    v
                })
                .collect()
        };
        assert_eq!(
            without_timing(&replay.stdout),
            without_timing(&out.stdout),
            "{what}"
        );
    }
    out
}

/// With `LANSER_TEST_KEEP_TRACES=DIR`, every traced command is run once more, recording its
/// trace with the workspace's sources (so it replays after the test's temporary copy is gone)
/// into DIR, so the suite's traces recorded by one build can be replayed with `--verify` by
/// another (`scripts/replay_traces.sh DIR`): a refactor's proof that every bundle stays
/// byte-identical. The test's own run and replay stay as without the variable.
fn keep_trace(args: &[&str]) {
    let Some(dir) = std::env::var_os("LANSER_TEST_KEEP_TRACES") else {
        return;
    };
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("the trace directory");
    let kept = dir.join(format!("{}-{}-{n}.jsonl", std::process::id(), args[0]));
    let out = lanser()
        .args(args)
        .arg("--trace-file")
        .arg(&kept)
        .arg("--trace-sources")
        .output()
        .expect("lanser runs");
    // The name carries the exit status the replay must reproduce.
    let exit = out.status.code().map_or("signal".into(), |c| c.to_string());
    if kept.exists() {
        let named = kept.with_extension(format!("exit{exit}.jsonl"));
        std::fs::rename(&kept, named).expect("the trace is kept");
    }
}

/// A temp dir for the trace when `args` is a server-backed command that writes nothing and
/// runs the pinned server or tests/fake_lsp.py (its faults — a crash, a hang, a malformed
/// frame — replay from the trace's `eof` record and timeouts); other swapped-in servers and
/// applies are not re-run.
fn replayable(args: &[&str]) -> Option<tempfile::TempDir> {
    const COMMANDS: &[&str] = &[
        "def",
        "type-def",
        "refs",
        "hover",
        "symbols",
        "diag",
        "locate",
        "impl",
        "calls",
        "highlight",
        "signature",
        "prepare-rename",
        "rename",
        "code-actions",
        "check",
        "impact",
        "request",
        "capabilities",
        "apply",
        "edit",
    ];
    let writes_or_swaps = [
        "--apply",
        "--server-cmd",
        "--server",
        "--trace-file",
        "--help",
        "-h",
    ];
    // The fake server replays like the real one; any other --server-cmd (a missing program)
    // may never start, while the replay's peer always does.
    let swapped = |i: usize, a: &&str| {
        writes_or_swaps.contains(a)
            && !(*a == "--server-cmd"
                && args
                    .get(i + 1)
                    .is_some_and(|v| v.contains("tests/fake_lsp.py")))
    };
    let ok = args.first().is_some_and(|c| COMMANDS.contains(c))
        && !args.iter().enumerate().any(|(i, a)| swapped(i, a));
    ok.then(|| tempfile::tempdir().expect("temp dir"))
}

/// stdout as text (bundles in it are validated against the schema).
pub fn stdout(o: &Output) -> String {
    crate::schemas::collect(&o.stdout);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stdout as one bundle, validated against schemas/bundle.schema.json.
/// The bundle of `lanser ARGS`, which must succeed (its stderr in the failure otherwise).
pub fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(
        o.status.success(),
        "lanser {}: {}",
        args.join(" "),
        stderr(&o)
    );
    bundle(&o)
}

pub fn bundle(o: &Output) -> Value {
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not a bundle ({e}): {}", stdout(o)));
    crate::schemas::collect_value(&v);
    v
}

/// Copy a directory tree (files only) into `dst`.
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// Write each (relative path, text) under `root`, making the directories.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A `lanser batch --in - --out -` child driven one line at a time, as an agent harness drives
/// it: [`Harness::ask`] writes a request line and reads its bundle while stdin stays open.
pub struct Harness {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Harness {
    /// Spawn `cmd` (a `batch --in - --out -` command) with piped stdin and stdout.
    pub fn spawn(mut cmd: Command) -> Harness {
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Harness {
            child,
            stdin,
            stdout,
        }
    }

    /// Send one request line; its bundle.
    pub fn ask(&mut self, line: &str) -> Value {
        use std::io::{BufRead, Write};
        let stdin = self.stdin.as_mut().expect("stdin is open until finish");
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    }

    /// Close stdin and wait for the batch to end.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

/// The 0-based line of the `Circle` class in a `symbols` bundle.
pub fn circle_row(b: &Value) -> u64 {
    b["facts"]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Circle")
        .map(|s| s["range"][0].as_u64().unwrap())
        .unwrap()
}

/// The python of the pinned test environment (tests/python_env.py: tests/requirements.txt's
/// packages in a cached venv, made by pip on first use, under a lock so parallel tests wait
/// for one build). Every Python part of the suite runs on it, so `cargo test` needs no
/// set-up of its own; `LANSER_TEST_PYTHON` names another interpreter instead.
pub fn python() -> &'static Path {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        let base = if cfg!(windows) { "python" } else { "python3" };
        let out = Command::new(base)
            .arg(repo().join("tests").join("python_env.py"))
            .stderr(std::process::Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("{base} runs tests/python_env.py: {e}"));
        assert!(
            out.status.success(),
            "tests/python_env.py could not make the pinned Python test environment"
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}

/// The pinned Python, with the environment `like` sets (its LANSER_HOME, VIRTUAL_ENV, …) and
/// `PYTHONPATH` at the SDK: for a script that drives lanser through the SDK as `like` would.
pub fn sdk_python(like: &Command) -> Command {
    let mut py = Command::new(python());
    for (k, v) in like.get_envs() {
        match v {
            Some(v) => py.env(k, v),
            None => py.env_remove(k),
        };
    }
    py.env("PYTHONPATH", repo().join("python"));
    py
}

/// The pinned test environment's directory (what `VIRTUAL_ENV` names for a project whose
/// interpreter it is).
pub fn pinned_venv() -> &'static Path {
    python().parent().and_then(|bin| bin.parent()).unwrap()
}

/// Run a pytest suite of this repository (`dir`) on the pinned test environment's python,
/// against the binary cargo built.
pub fn pytest(dir: &str) {
    pytest_args(&[dir]);
}

/// `pytest` with its arguments (a directory and `--ignore`s, a file, `-k` filters).
pub fn pytest_args(args: &[&str]) {
    let dir = args.join(" ");
    let out = Command::new(python())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args(args)
        .current_dir(repo())
        .env("LANSER_BIN", env!("CARGO_BIN_EXE_lanser"))
        .env_remove("LANSER_NO_DAEMON")
        .output()
        .expect("pytest runs");
    assert!(
        out.status.success(),
        "{dir} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A unified diff replacing `old` by `new` on the first line of `rel` that contains `old`
/// (one line of context each side).
pub fn one_line_diff(ws: &Path, rel: &str, old: &str, new: &str) -> String {
    let text = read(ws, rel);
    let lines: Vec<&str> = text.lines().collect();
    let i = lines.iter().position(|l| l.contains(old)).unwrap();
    format!(
        "--- a/{rel}\n+++ b/{rel}\n@@ -{},3 +{},3 @@\n {}\n-{}\n+{}\n {}\n",
        i,
        i,
        lines[i - 1],
        lines[i],
        lines[i].replace(old, new),
        lines[i + 1]
    )
}

/// The bodies of the frames lanser sent its server with `method`, in order, from the trace at
/// `trace` (`--trace-file`).
pub fn sent(trace: &Path, method: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "rpc" && r["dir"] == "send" && r["body"]["method"] == method)
        .map(|r| r["body"].clone())
        .collect()
}

/// `lanser batch` over `lines` (one request line each) in workspace `ws`, answered to stdout.
pub fn batch_lines(ws: &Path, lines: &[&str]) -> Output {
    batch_lines_with(ws, lines, &[])
}

/// [`batch_lines`] with more global options (`--trace-file F`, …).
pub fn batch_lines_with(ws: &Path, lines: &[&str], more: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let mut args = vec![
        "batch",
        "--in",
        input.to_str().unwrap(),
        "--out",
        "-",
        "--workspace",
        ws.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    run(&args)
}

/// Make `dir` a whole PATH without Node.js: the real python3 (not a pyenv shim) and git
/// linked in, no node, no npm. Returns it as a PATH value.
pub fn path_without_node(dir: &Path) -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let exe = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let suffix = std::env::consts::EXE_SUFFIX;
    link(
        &exe.canonicalize().unwrap(),
        &dir.join(format!("python3{suffix}")),
    );
    let git = lanser::servers::which("git").expect("git on PATH");
    link(&git, &dir.join(format!("git{suffix}")));
    for absent in ["node", "npm"] {
        assert!(!dir.join(absent).exists());
    }
    dir.to_string_lossy().into_owned()
}

/// One MCP session over stdio (`cmd` runs `lanser mcp`, newline-delimited JSON-RPC): each
/// `tools/call`'s `result`, in order.
pub fn mcp_session(mut cmd: Command, calls: &[(&str, Value)]) -> Vec<Value> {
    use serde_json::json;
    use std::io::{BufRead, BufReader, Write};
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: u64| -> Value {
        loop {
            let mut line = String::new();
            assert!(out.read_line(&mut line).unwrap() > 0, "lanser mcp ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "lanser-tests", "version": "0"}}}),
    );
    answer(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut got = Vec::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        let id = i as u64 + 1;
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": args}}));
        got.push(answer(id)["result"].clone());
    }
    drop(stdin);
    child.wait().unwrap();
    got
}

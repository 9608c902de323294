//! Shared helpers: fixture paths, running the binary, and expectations computed from fixture
//! text with the standard library only (never with lanser's own text module).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
    c
}

pub fn run(args: &[&str]) -> Output {
    lanser().args(args).output().expect("lanser runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn bundle(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not a bundle ({e}): {}", stdout(o)))
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

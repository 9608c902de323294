//! Traces (docs/traces.md): the JSONL record of one lanser
//! run, and what reads it back.
//!
//! A trace is one JSON object per line, each with a `type`:
//!
//! - `header` (first): lanser version, normalized argv (no `--trace-file`), the workspace root
//!   and its digest, the environment captured before the first request, and a `volatile`
//!   block (process id, time) that nothing compares;
//! - `file`: one per file of the workspace snapshot the server reads (Python sources and
//!   configuration files): `path`, `digest`, and with `--trace-sources` the `content`;
//! - `rpc`: every JSON-RPC frame, `{"type":"rpc","dir":"send"|"recv","seq":N,"body":…}`, with
//!   the workspace root written as [`ROOT_TOKEN`] so a trace replays against a copy elsewhere;
//! - `input`: one per read of a file the command line names (`check --patch FILE`,
//!   `--prev-bundle FILE`; `-` is stdin): `arg`, `path` as given, and the `digest` and
//!   `content` read, or the read's `error`. Replay serves these instead of reading the file, so a
//!   replay after the file changed, or on another machine, sees what the run saw;
//! - `eof`: the server's stdout ended (it exited, crashed, or sent a frame header lanser could
//!   not parse), in frame order (`seq` shared with `rpc`): `error` says how when it was not a
//!   plain close (`{"badLength": value}` or `{"other": text}`), and `stderr` holds the tail
//!   of the server's stderr lanser kept at that moment (at most 20 lines, root tokenized) — a
//!   crash message quotes its last non-blank line, so replay feeds it back before closing;
//! - `op`: one per operation, in output order: `n` (1-based), `line` and `input` (the request
//!   as a batch line and its line number), `memo` (served from the batch memo), and the `bundle` exactly as printed.
//!
//! `batch --in` is never re-read at replay: the `op` records hold every request line. Traces
//! written before `input` and `eof` records existed replay as before (their inputs are read
//! from disk; their server never closes its stream).
//!
//! Replay ([`replay`]) compares bundles without `meta.timing`, and client frames without
//! `processId`, `clientInfo` and `pythonPath`: those are the volatile values.

pub mod recorder;

use crate::error::{ErrorCode, LanserError};
pub use crate::inputs::InputRec;
use crate::workspace::Workspace;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Stands for the workspace root (its path, and inside `file://` URIs) in recorded frames.
pub const ROOT_TOKEN: &str = "${LANSER_ROOT}";

/// Why a trace cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("trace line {line} is not a trace record: {reason}")]
    Malformed { line: usize, reason: String },
    #[error("trace {0} has no header line")]
    NoHeader(String),
}

impl From<TraceError> for LanserError {
    fn from(e: TraceError) -> Self {
        let code = match e {
            TraceError::Io { .. } => ErrorCode::NotFound,
            // A trace that no longer parses cannot reproduce what it recorded.
            TraceError::Malformed { .. } | TraceError::NoHeader(_) => ErrorCode::ReplayMismatch,
        };
        LanserError::keeping_chain(code, e)
    }
}

/// The first line of a trace.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Header {
    #[serde(rename = "type")]
    pub kind: String,
    pub lanser: String,
    /// The command line after the program name, without `--trace-file`/`--trace-sources`.
    pub argv: Vec<String>,
    /// Absolute workspace root when recorded.
    pub root: String,
    /// Current directory when recorded.
    pub cwd: String,
    #[serde(rename = "workspaceDigest")]
    pub workspace_digest: String,
    #[schemars(with = "crate::bundle::Environment")]
    pub environment: Value,
    /// Whether `file` records carry `content`.
    pub sources: bool,
    /// Never compared: process id and wall-clock time of the run.
    pub volatile: Value,
}

/// A `file` record.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileRec {
    pub path: String,
    pub digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// An `rpc` record.
#[derive(Debug, Clone)]
pub struct Frame {
    pub send: bool,
    pub seq: u64,
    pub body: Value,
}

/// How a server's stream ended, when it was not a plain close.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EndError {
    /// A frame header whose Content-Length did not parse: its value.
    BadLength(String),
    /// Anything else (a read error): its text. Replay cannot reproduce it.
    Other(String),
}

/// An `eof` record: the server's stdout ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EofRec {
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<EndError>,
    /// The stderr tail lanser kept (oldest first, root tokenized).
    pub stderr: Vec<String>,
}

/// An `op` record.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpRec {
    pub n: usize,
    /// 1-based line of the batch input (1 for a single command).
    #[serde(default)]
    pub line: usize,
    pub input: String,
    #[serde(default)]
    pub memo: bool,
    #[schemars(with = "crate::bundle::Bundle")]
    pub bundle: Value,
}

impl OpRec {
    pub fn cmd(&self) -> &str {
        self.bundle
            .pointer("/request/cmd")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    pub fn status(&self) -> &str {
        self.bundle
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    pub fn exit_code(&self) -> u64 {
        self.bundle
            .pointer("/meta/exit_code")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
    /// The selector as given on the input line (empty when there was none).
    pub fn selector(&self) -> String {
        let input: Value = serde_json::from_str(&self.input).unwrap_or(Value::Null);
        match input.get("selector") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(v) => v.to_string(),
        }
    }
}

/// A whole trace, read back.
#[derive(Debug, Clone)]
pub struct Trace {
    pub header: Header,
    pub files: Vec<FileRec>,
    pub frames: Vec<Frame>,
    pub ops: Vec<OpRec>,
    pub inputs: Vec<InputRec>,
    /// The `eof` record and how many `rpc` records came before it.
    pub eof: Option<(usize, EofRec)>,
}

impl Trace {
    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        let shown = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
            path: shown.clone(),
            source,
        })?;
        Trace::from_reader(std::io::BufReader::new(file), &shown)
    }

    /// A trace from its JSONL text; `shown` names it in errors.
    pub fn from_reader(reader: impl std::io::BufRead, shown: &str) -> Result<Trace, TraceError> {
        let io = |source| TraceError::Io {
            path: shown.to_string(),
            source,
        };
        let mut header = None;
        let (mut files, mut frames, mut ops) = (Vec::new(), Vec::new(), Vec::new());
        let (mut inputs, mut eof) = (Vec::new(), None);
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(io)?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: String| TraceError::Malformed {
                line: i + 1,
                reason,
            };
            let v: Value = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            match kind {
                "header" => {
                    header = Some(serde_json::from_value(v).map_err(|e| bad(e.to_string()))?)
                }
                "file" => files.push(serde_json::from_value(v).map_err(|e| bad(e.to_string()))?),
                "op" => ops.push(serde_json::from_value(v).map_err(|e| bad(e.to_string()))?),
                "input" => inputs.push(serde_json::from_value(v).map_err(|e| bad(e.to_string()))?),
                "eof" => {
                    if eof.is_some() {
                        return Err(bad("a second eof record (a run has one server)".into()));
                    }
                    let rec = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
                    eof = Some((frames.len(), rec));
                }
                "rpc" => {
                    let send = match v.get("dir").and_then(Value::as_str) {
                        Some("send") => true,
                        Some("recv") => false,
                        _ => return Err(bad("rpc record without dir send|recv".into())),
                    };
                    let seq = v.get("seq").and_then(Value::as_u64).unwrap_or(0);
                    let body = v.get("body").cloned().unwrap_or(Value::Null);
                    frames.push(Frame { send, seq, body });
                }
                other => return Err(bad(format!("unknown type {other:?}"))),
            }
        }
        let header = header.ok_or_else(|| TraceError::NoHeader(shown.to_string()))?;
        Ok(Trace {
            header,
            files,
            frames,
            ops,
            inputs,
            eof,
        })
    }
}

/// The files of the snapshot, as the workspace index lists them (every file it tracks and the
/// server's configuration files present), as (relative path, bytes).
pub fn snapshot_files(ws: &Workspace) -> Vec<(String, Vec<u8>)> {
    let names = ws.index().snapshot_digests();
    names
        .into_iter()
        .filter_map(|(rel, _)| Some((rel.clone(), std::fs::read(ws.root.join(&rel)).ok()?)))
        .collect()
}

/// The digest of a snapshot: the workspace index's.
pub use crate::workspace::index::workspace_digest;

/// Replace the workspace root (as a `file://` URI, then as a path) with [`ROOT_TOKEN`].
pub fn tokenize_root(text: &str, root: &Path) -> String {
    let uri = crate::workspace::path_to_uri(root);
    let path = json_escaped(&root.to_string_lossy());
    text.replace(&uri, &format!("file://{ROOT_TOKEN}"))
        .replace(&path, ROOT_TOKEN)
}

/// The inverse of [`tokenize_root`] for another root.
pub fn untokenize_root(text: &str, root: &Path) -> String {
    let uri = crate::workspace::path_to_uri(root);
    let path = json_escaped(&root.to_string_lossy());
    text.replace(&format!("file://{ROOT_TOKEN}"), &uri)
        .replace(ROOT_TOKEN, &path)
}

/// How `s` appears inside a JSON string.
fn json_escaped(s: &str) -> String {
    let quoted = Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// The normalized argv of this process: no program name, no trace flags.
pub fn normalized_argv(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.into_iter().skip(1);
    while let Some(a) = it.next() {
        if a == "--trace-file" {
            it.next();
        } else if a.starts_with("--trace-file=") || a == "--trace-sources" {
        } else {
            out.push(a);
        }
    }
    out
}

/// Where the workspace of a replay is: `explicit`, else the recorded root.
pub fn replay_root(header: &Header, explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(&header.root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_tokens_round_trip_to_another_root() {
        let body = r#"{"uri":"file:///w/a%20b/src/x.py","msg":"Loading /w/a b/src"}"#;
        let t = tokenize_root(body, Path::new("/w/a b"));
        assert_eq!(
            t,
            r#"{"uri":"file://${LANSER_ROOT}/src/x.py","msg":"Loading ${LANSER_ROOT}/src"}"#
        );
        assert_eq!(
            untokenize_root(&t, Path::new("/tmp/c")),
            r#"{"uri":"file:///tmp/c/src/x.py","msg":"Loading /tmp/c/src"}"#
        );
    }

    #[test]
    fn argv_loses_trace_flags_only() {
        let argv = [
            "lanser",
            "def",
            "x@L1:C1",
            "--trace-file",
            "t.jsonl",
            "--trace-sources",
        ];
        assert_eq!(
            normalized_argv(argv.iter().map(|s| s.to_string())),
            vec!["def", "x@L1:C1"]
        );
    }
}

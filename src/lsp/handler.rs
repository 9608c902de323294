//! Everything a server sends, handled on the reader: replies matched to their requests,
//! the server's own requests answered (configuration, workspace folders, edits refused or
//! captured), and its notifications read for the signals lanser waits on — the "project
//! loaded" signal of its [`Ready`] kind (Pyright's log line, the end of `$/progress`,
//! rust-analyzer's `quiescent` status) and the diagnostics a push-only server publishes.

use super::session::{Published, RpcError, Shared, METHOD_NOT_FOUND};
use super::transport::FrameError;
use crate::languages::Ready;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// Reader-side handling of everything the server sends.
pub(super) struct Handler {
    pub(super) shared: Arc<Shared>,
    pub(super) settings: Arc<Mutex<Value>>,
    pub(super) root_uri: String,
    pub(super) replies: tokio::sync::mpsc::UnboundedSender<String>,
    /// Which of the server's signals means "loaded".
    pub(super) ready: Ready,
    /// With [`Ready::LogLine`]: the log message's text.
    pub(super) ready_log: Option<String>,
}

/// lanser's error answer to a request from the server (a JSON-RPC error object).
struct Refusal {
    code: i64,
    message: String,
}

impl Handler {
    pub(super) fn on_message(&mut self, msg: Result<Value, FrameError>) {
        let msg = match msg {
            Ok(m) => m,
            Err(e) => return self.on_close(e),
        };
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").cloned();
        match (method, id) {
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { return };
                let Some(tx) = self.shared.lock().pending.remove(&id) else {
                    return;
                };
                let reply = match msg.get("error") {
                    Some(err) => Err(RpcError::Server {
                        code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: err
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    }),
                    None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(reply);
            }
            (Some(method), Some(id)) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                let body = match self.answer(method, &params) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(Refusal { code, message }) => json!({
                        "jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": message}
                    }),
                };
                let _ = self.replies.send(body.to_string());
            }
            (Some(method), None) => self.on_notification(method, &msg),
            (None, None) => {}
        }
    }

    fn on_close(&mut self, why: FrameError) {
        let pending: Vec<_> = {
            let mut st = self.shared.lock();
            st.closed = true;
            if !matches!(why, FrameError::Closed) {
                st.close_reason = Some(format!("sent a malformed frame ({why})"));
            }
            st.pending.drain().map(|(_, tx)| tx).collect()
        };
        for tx in pending {
            let _ = tx.send(Err(RpcError::Closed));
        }
        self.shared.closed.send_replace(true);
    }

    /// Every server→client request gets an answer; unknown ones MethodNotFound.
    fn answer(&self, method: &str, params: &Value) -> std::result::Result<Value, Refusal> {
        match method {
            "workspace/configuration" => {
                let items = params
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                Ok(Value::Array(
                    items
                        .iter()
                        .map(|item| {
                            let section = item.get("section").and_then(Value::as_str);
                            let settings = self.settings.lock().unwrap_or_else(|p| p.into_inner());
                            settings_section(&settings, section)
                        })
                        .collect(),
                ))
            }
            "workspace/workspaceFolders" => Ok(json!([{"uri": self.root_uri, "name": "root"}])),
            "client/registerCapability" => {
                let pulls = params
                    .get("registrations")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|r| r["method"] == "textDocument/diagnostic"));
                if pulls {
                    self.shared.lock().pull_registered = true;
                }
                Ok(Value::Null)
            }
            "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh"
            | "window/showMessageRequest" => Ok(Value::Null),
            "window/showDocument" => Ok(json!({"success": false})),
            "workspace/applyEdit" => {
                let mut st = self.shared.lock();
                if st.capture_edits {
                    let edit = params.get("edit").cloned().unwrap_or(Value::Null);
                    st.captured_edits.push(edit);
                    Ok(json!({"applied": true}))
                } else {
                    Ok(json!({
                        "applied": false,
                        "failureReason": "lanser applies edits only through its own safety envelope"
                    }))
                }
            }
            _ => Err(Refusal {
                code: METHOD_NOT_FOUND,
                message: format!("Unhandled method {method}"),
            }),
        }
    }

    fn on_notification(&mut self, method: &str, msg: &Value) {
        let params = msg.get("params").unwrap_or(&Value::Null);
        match method {
            "window/logMessage" => {
                let text = params["message"].as_str().unwrap_or_default();
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
            "$/progress" => {
                let token = match &params["token"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let loaded = {
                    let mut st = self.shared.lock();
                    match params.pointer("/value/kind").and_then(Value::as_str) {
                        Some("begin") => {
                            st.progress_open.insert(token);
                            false
                        }
                        Some("end") => {
                            st.progress_open.remove(&token);
                            st.progress_open.is_empty()
                        }
                        _ => false,
                    }
                };
                if self.ready == Ready::Progress && loaded {
                    self.shared.ready.send_replace(true);
                }
            }
            "experimental/serverStatus"
                if self.ready == Ready::ServerStatus && params["quiescent"] == true =>
            {
                self.shared.ready.send_replace(true);
            }
            "textDocument/publishDiagnostics" => {
                let Some(uri) = params["uri"].as_str() else {
                    return;
                };
                let mut st = self.shared.lock();
                st.publish_seq += 1;
                let published = Published {
                    version: params["version"].as_i64(),
                    diagnostics: params["diagnostics"].clone(),
                    seq: st.publish_seq,
                };
                // Keyed as lanser spells the URI (a Windows server's `file:///c%3A/…` is
                // `file:///C:/…`; the URI as it is elsewhere).
                let key = crate::workspace::uri_key(uri).into_owned();
                st.published.insert(key, published);
                let seq = st.publish_seq;
                drop(st);
                self.shared.published.send_replace(seq);
            }
            _ => {}
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

/// The value at a dotted section path (`python.analysis`), or null.
pub fn settings_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    let mut cur = settings;
    for part in section.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return Value::Null,
        }
    }
    cur.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_sections() {
        let s = json!({"python": {"analysis": {"diagnosticMode": "openFilesOnly"}, "pythonPath": "/p"}});
        assert_eq!(
            settings_section(&s, Some("python.analysis")),
            json!({"diagnosticMode": "openFilesOnly"})
        );
        assert_eq!(settings_section(&s, Some("python.pythonPath")), json!("/p"));
        assert_eq!(settings_section(&s, Some("pyright")), Value::Null);
        assert_eq!(settings_section(&s, None), s);
    }

    #[test]
    fn project_loaded_lines() {
        assert!(is_project_loaded_line("Found 34 source files"));
        assert!(is_project_loaded_line("Found 1 source file"));
        assert!(is_project_loaded_line("No source files found."));
        assert!(!is_project_loaded_line("Found configuration file"));
        assert!(!is_project_loaded_line("Searching for source files"));
    }
}

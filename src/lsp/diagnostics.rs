//! Diagnostics of one document from a session, whichever way its server gives them: a pull
//! (`textDocument/diagnostic`, kept per view: [`super::view`]), tsserver's own request
//! ([`super::tsserver`]), or what a push-only server publishes, waited for.

use super::capabilities::Feature;
use super::session::{Session, PUBLISH_QUIET};
use super::{tsserver, typed, view};
use crate::error::{ErrorCode, LanserError, Result};
use lsp_types::notification::{Notification, PublishDiagnostics};
use lsp_types::request::DocumentDiagnosticRequest;
use lsp_types::DocumentDiagnosticParams;
use serde_json::{json, Value};

impl Session {
    /// The server's diagnostics of `uri` (its `textDocument/diagnostic` answer), answered
    /// from the diagnostics already pulled under the same view once the project is loaded
    /// (see [`super::view`]).
    pub async fn pull_diagnostics(&self, uri: &str) -> Result<Value> {
        if !self.pulls() {
            if tsserver::offered(self.capabilities()) {
                return tsserver::diagnostics(self, uri).await;
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
                text_document: typed::document(uri)?,
                identifier: None,
                previous_result_id: None,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            })
            .await?;
        let answer = typed::json(&report);
        if let Some(k) = key.filter(|k| self.view_key().as_ref() == Some(k)) {
            self.shared.lock().diag_memo.put(&k, uri, answer.clone());
        }
        Ok(answer)
    }

    /// Whether the server answers `textDocument/diagnostic` (else it only publishes).
    pub fn pulls(&self) -> bool {
        self.config.quirks.pulls_undeclared
            || self.supports(Feature::PullDiagnostics)
            || self.shared.lock().pull_registered
    }

    /// The diagnostics a push-only server publishes for `uri` (open in it), shaped as a pull's
    /// full report: the first publish for the version lanser sent last (or, from a server that
    /// names no version, the first after that text was sent). A server may publish nothing
    /// when nothing changed (typescript-language-server skips an empty list after an empty
    /// one), so once no publish at all has arrived for [`PUBLISH_QUIET`] the last list
    /// published for `uri` stands (none: no diagnostics) — except from a server known to
    /// publish for every version (quirk `publishes-each-version`), whose publish is waited
    /// for: a slow lint is not an empty one. Bounded by the request timeout.
    async fn published_diagnostics(&self, uri: &str) -> Result<Value> {
        let mut arrivals = self.shared.published.subscribe();
        let mut closed = self.shared.closed.subscribe();
        let quiet = if self.config.quirks.publishes_each_version {
            self.config.request_timeout
        } else {
            PUBLISH_QUIET
        };
        let wait = async {
            loop {
                {
                    let st = self.shared.lock();
                    let sent = st.open_docs.get(uri).map(|d| d.0);
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
                    _ = tokio::time::sleep(quiet) => {
                        let st = self.shared.lock();
                        let last = st.published.get(uri).map(|p| p.diagnostics.clone());
                        return Some(last.unwrap_or_default());
                    }
                }
            }
        };
        match tokio::time::timeout(self.config.request_timeout, wait).await {
            Ok(Some(items)) => Ok(json!({"kind": "full", "items": typed::json(&items)})),
            Ok(None) => Err(self.crash_error(PublishDiagnostics::METHOD)),
            Err(_) => Err(LanserError::new(
                ErrorCode::LsTimeout,
                format!(
                    "no diagnostics published for {uri} within {:.0} s",
                    self.config.request_timeout.as_secs_f64()
                ),
            )),
        }
    }

    /// The answers kept for `uris` (in order) in the view that differs from what the server
    /// sees now only by the texts of `shown` (URI → text digest, documents open now): what
    /// [`Self::pull_diagnostics`] would answer once those texts are sent, when every one is
    /// kept ([`view`]); none from a server that only publishes.
    pub fn pulled_in(&self, shown: &[(String, String)], uris: &[String]) -> Option<Vec<Value>> {
        if !self.pulls() || !*self.shared.ready.borrow() {
            return None;
        }
        let st = self.shared.lock();
        let mut docs = st.open_docs.clone();
        for (uri, digest) in shown {
            docs.get_mut(uri)?.1 = digest.clone();
        }
        let key = view::key(st.view_changes, &docs);
        uris.iter().map(|u| st.diag_memo.get(&key, u)).collect()
    }

    /// The key of what the server sees now, once the project is loaded.
    fn view_key(&self) -> Option<String> {
        if !*self.shared.ready.borrow() {
            return None;
        }
        let st = self.shared.lock();
        Some(view::key(st.view_changes, &st.open_docs))
    }
}

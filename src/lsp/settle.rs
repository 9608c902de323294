//! Readiness of a server that declares no "loaded" signal ([`Ready::Settle`]): a document is
//! taken as loaded once the server has published diagnostics for the text lanser sent it
//! (vim-language-server answers `[]` until it has parsed a buffer, and publishes when it has),
//! or once every `$/progress` it began has ended. A server that gives neither sign within the
//! bound is remembered as silent and not waited for again; its answers are marked as given
//! without knowing it was ready (`meta.readiness`).
//!
//! [`Ready::Settle`]: crate::languages::Ready::Settle

use super::capabilities::Feature;
use super::session::Session;
use crate::error::Result;
use crate::languages::Ready;
use lsp_types::request::{DocumentDiagnosticRequest, Request as _};
use serde_json::Value;
use std::time::Duration;

/// The pauses before each re-ask of an empty answer from a [`Ready::Settle`] server: it may
/// publish for a document a moment before it answers from it (vim-language-server answers one
/// more empty definition right after its publish). At most 1.55 s in all.
const RE_ASK: [u64; 5] = [50, 100, 200, 400, 800];

impl Session {
    /// Whether the server has given a sign of having loaded `uri` (`None`: anything).
    fn settled(&self, uri: Option<&str>) -> bool {
        let st = self.shared.lock();
        if st.progress_began && st.progress_open.is_empty() {
            return true;
        }
        match uri {
            None => st.publish_seq > 0 || !st.pulled_at.is_empty(),
            Some(uri) => {
                let after = st.synced_at.get(uri).copied().unwrap_or(0);
                let key = crate::workspace::uri_key(uri);
                st.published
                    .get(key.as_ref())
                    .is_some_and(|p| p.seq > after)
                    || st.pulled_at.get(uri) == Some(&after)
            }
        }
    }

    /// Send `method` and wait for its answer; from a [`Ready::Settle`] server an empty answer
    /// to a document request is asked again after each of the [`RE_ASK`] pauses while it
    /// stays empty.
    pub(super) async fn request_settled(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let settles = self.config.ready == Ready::Settle
            && method.starts_with("textDocument/")
            && method != DocumentDiagnosticRequest::METHOD;
        if !settles {
            return self.request_with_timeout(method, params, timeout).await;
        }
        let mut answer = self
            .request_with_timeout(method, params.clone(), timeout)
            .await?;
        for pause in RE_ASK {
            if !is_empty(&answer) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(pause)).await;
            answer = self
                .request_with_timeout(method, params.clone(), timeout)
                .await?;
        }
        Ok(answer)
    }

    /// Pull `uri`'s diagnostics as the sign that the server has loaded it; remembered for
    /// the text it was pulled for.
    async fn pull_sign(&self, uri: &str, bound: Duration) -> bool {
        let params = serde_json::json!({"textDocument": {"uri": uri}});
        let answered = self
            .request_with_timeout(DocumentDiagnosticRequest::METHOD, params, bound)
            .await
            .is_ok();
        if answered {
            let mut st = self.shared.lock();
            let synced = st.synced_at.get(uri).copied().unwrap_or(0);
            st.pulled_at.insert(uri.to_string(), synced);
        }
        answered
    }

    /// Wait, at most `bound`, for the server's first sign of having loaded `uri` (or, with
    /// `None`, of having loaded anything): diagnostics published for the text lanser sent (or,
    /// from a server that answers pulls, its answer to one), or the end of its progress. Returns whether it came; a server that gave no sign at all
    /// within the bound is not waited for again (`false` at once).
    pub async fn wait_settled(&self, uri: Option<&str>, bound: Duration) -> Result<bool> {
        // Subscribed before the first look, so no change between the two is missed.
        let mut published = self.shared.published.subscribe();
        let mut progress = self.shared.ready.subscribe();
        let mut closed = self.shared.closed.subscribe();
        if self.settled(uri) {
            return Ok(true);
        }
        if self.shared.lock().silent {
            return Ok(false);
        }
        // A server that declares pulls (or is known to answer them) is asked for the
        // document's diagnostics — for the project, those of a document it has open — and
        // its answer is the sign. Decided from the declaration, not from a registration that
        // may come later, so that a trace replays the same frames.
        let declared =
            self.config.quirks.pulls_undeclared || self.supports(Feature::PullDiagnostics);
        let target = uri
            .map(str::to_string)
            .or_else(|| self.open_documents().into_iter().next())
            .filter(|_| declared);
        let wait = async {
            let mut pulling = target.is_some();
            loop {
                let pull = async {
                    match (&target, pulling) {
                        (Some(doc), true) => self.pull_sign(doc, bound).await,
                        _ => std::future::pending().await,
                    }
                };
                tokio::select! {
                    r = published.changed() => if r.is_err() { return false },
                    r = progress.changed() => if r.is_err() { return false },
                    _ = closed.wait_for(|c| *c) => return false,
                    answered = pull => {
                        if answered {
                            return true;
                        }
                        pulling = false;
                    }
                }
                if self.settled(uri) {
                    return true;
                }
            }
        };
        let done = tokio::time::timeout(bound, wait).await.unwrap_or(false);
        let mut st = self.shared.lock();
        if !done && st.closed {
            drop(st);
            return Err(self.crash_error("document loading"));
        }
        if !done && st.publish_seq == 0 && !st.progress_began {
            st.silent = true;
        }
        Ok(done)
    }
}

/// `null`, `[]` or `{}`: an answer that may only mean "not loaded yet".
fn is_empty(answer: &Value) -> bool {
    match answer {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

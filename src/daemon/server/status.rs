//! `lanser daemon status`: what the daemon says of itself, at once even while a request
//! holds its engine.

use super::Daemon;
use crate::daemon::transport;
use serde_json::json;
use std::time::Duration;

/// How long `status` waits for a request holding the engine before it answers `busy`.
const STATUS_WAIT: Duration = Duration::from_millis(300);

impl Daemon {
    /// What `lanser daemon status` shows. A request holding the engine (a long check) does not
    /// hold the answer: after [`STATUS_WAIT`] it says `busy` and leaves what only the engine
    /// knows (the session, the memo, the index watcher) null.
    pub(super) async fn status(&self) -> serde_json::Value {
        let mut info = json!({
            "running": true,
            "busy": false,
            "pid": std::process::id(),
            "build": self.build,
            "workspace": self.ws.root.display().to_string(),
            "socket": transport::address(&self.paths),
            "uptimeSecs": self.started.elapsed().as_secs(),
            "idleTimeoutSecs": self.idle.as_secs(),
            "requests": self.requests.get(),
            "memo": self.memo,
            "pythonFiles": self.ws.index().python_sources().len(),
            "refresh": self.refresh.status(),
            "rssKiB": crate::daemon::rss_kib(std::process::id()),
        });
        let Ok(engine) = tokio::time::timeout(STATUS_WAIT, self.engine.lock()).await else {
            info["busy"] = json!(true);
            for key in [
                "memoEntries",
                "index",
                "serverName",
                "serverVersion",
                "serverPid",
            ] {
                info[key] = serde_json::Value::Null;
            }
            info["serverRssKiB"] = serde_json::Value::Null;
            info["openDocuments"] = serde_json::Value::Null;
            return info;
        };
        let session = engine
            .orch
            .as_ref()
            .and_then(|o| o.sessions().first().copied());
        let server_pid = match session {
            Some(s) if !s.is_closed() => s.server_pid().await,
            _ => None,
        };
        let server = engine.orch.as_ref().and_then(|o| o.server_id());
        let open: Vec<String> = session
            .map(|s| {
                s.open_documents()
                    .iter()
                    .map(|u| {
                        crate::workspace::uri_to_path(u)
                            .and_then(|p| self.ws.relative(&p))
                            .unwrap_or_else(|| u.clone())
                    })
                    .collect()
            })
            .unwrap_or_default();
        info["memoEntries"] = json!(engine.memo.len());
        info["index"] = json!(engine.watch.as_ref().map(|w| {
            let mut v = serde_json::to_value(w.status()).unwrap_or_default();
            v["fullRescans"] = json!(self.ws.index().rescans);
            v["generation"] = json!(self.ws.index().generation());
            v
        }));
        info["serverName"] = json!(server.as_ref().map(|s| s.name.clone()));
        info["serverVersion"] = json!(server.and_then(|s| s.version));
        info["serverPid"] = json!(server_pid);
        info["serverRssKiB"] = json!(server_pid.and_then(crate::daemon::rss_kib));
        info["openDocuments"] = json!(open);
        info
    }
}

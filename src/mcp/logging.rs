//! MCP logging (`logging/setLevel`, `notifications/message`): what lanser would print on
//! stderr in a terminal, sent to the client at its level — the daemon and the language server
//! starting (info), a call answered before the server finished loading (warning), a call that
//! failed (warning, or error for an internal one), each call and its time (debug).
//!
//! Each session has its own level; until the client sets one, warnings and worse are sent.
//!
//! rmcp marks MCP logging deprecated: SEP-2577 drops it from a future protocol version. The
//! versions hosts speak today (2025-06-18, 2025-11-25) have it, hosts show it, and the
//! official conformance suite tests it, so lanser serves it until the protocol it speaks
//! does not.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// The logger name every message carries.
const LOGGER: &str = "lanser";

/// A session's minimum level.
#[derive(Clone)]
pub struct Log {
    level: Arc<Mutex<LoggingLevel>>,
}

impl Default for Log {
    fn default() -> Log {
        Log {
            level: Arc::new(Mutex::new(LoggingLevel::Warning)),
        }
    }
}

/// A level's severity, in the order RFC 5424 (and MCP) gives them.
fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Log {
    pub fn set(&self, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(|p| p.into_inner()) = level;
    }

    /// Whether a message at `level` is sent.
    pub fn wants(&self, level: LoggingLevel) -> bool {
        rank(level) >= rank(*self.level.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Send `message` at `level` when the session wants it (a closed peer is not an error).
    pub async fn send(&self, peer: &Peer<RoleServer>, level: LoggingLevel, message: String) {
        if !self.wants(level) {
            return;
        }
        let mut p = LoggingMessageNotificationParam::new(level, json!(message));
        p.logger = Some(LOGGER.into());
        let _ = peer.notify_logging_message(p).await;
    }
}

/// What a finished call's bundle says a host should see in its log: the level and message,
/// if any (a partial answer, a failure).
pub fn of_bundle(tool: &str, bundle: &serde_json::Value) -> Option<(LoggingLevel, String)> {
    if bundle["status"] == "error" {
        let code = bundle["error"]["code"].as_str().unwrap_or("E/UNKNOWN");
        let message = bundle["error"]["message"].as_str().unwrap_or_default();
        let level = match code {
            "E/INTERNAL" => LoggingLevel::Error,
            _ => LoggingLevel::Warning,
        };
        return Some((level, format!("{tool}: {code}: {message}")));
    }
    if bundle["meta"]["complete"] == false {
        return Some((
            LoggingLevel::Warning,
            format!(
                "{tool}: the answer may be partial: the language server had not finished \
                 loading the project (meta.complete is false)"
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_sends_its_level_and_worse() {
        let log = Log::default();
        assert!(!log.wants(LoggingLevel::Info));
        assert!(log.wants(LoggingLevel::Warning));
        log.set(LoggingLevel::Debug);
        assert!(log.wants(LoggingLevel::Debug));
        log.set(LoggingLevel::Error);
        assert!(!log.wants(LoggingLevel::Warning) && log.wants(LoggingLevel::Critical));
        // Each session has its own: a fresh one is back at warning.
        assert!(!Log::default().wants(LoggingLevel::Info));
    }

    #[test]
    fn a_partial_or_failed_bundle_is_logged_at_its_level() {
        let partial = json!({"status": "ok", "meta": {"complete": false}});
        assert_eq!(
            of_bundle("definition", &partial).unwrap().0,
            LoggingLevel::Warning
        );
        let internal = json!({"status": "error", "error": {"code": "E/INTERNAL", "message": "x"}});
        let (level, text) = of_bundle("hover", &internal).unwrap();
        assert_eq!(
            (level, text.as_str()),
            (LoggingLevel::Error, "hover: E/INTERNAL: x")
        );
        assert!(of_bundle(
            "hover",
            &json!({"status": "ok", "meta": {"complete": true}})
        )
        .is_none());
    }
}

//! The shapes `status` and `reload` report: the configured servers, the lanser.toml layers
//! read and the running sessions.

use crate::bundle::ServerId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One configured server and how it resolves here.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub name: String,
    /// The server this workspace's commands use.
    pub selected: bool,
    /// lanser.toml's default.
    pub default: bool,
    /// Where its definition comes from.
    pub origin: String,
    /// Its command and arguments as configured.
    pub configured: Vec<String>,
    pub file_types: Vec<String>,
    pub root_markers: Vec<String>,
    /// How it is installed.
    pub provision: String,
    pub package: String,
    /// The version lanser pins, if any.
    pub pinned: Option<String>,
    /// The command it resolves to (the cache directory spelled `$LANSER_HOME`), when it does.
    pub resolved: Option<Vec<String>>,
    /// Where the resolved command was found.
    pub source: Option<String>,
    pub installed_version: Option<String>,
    /// Why it does not resolve.
    pub error: Option<String>,
}

/// A lanser.toml layer that was read.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone)]
pub struct ConfigFile {
    pub origin: String,
    pub file: String,
    pub digest: String,
}

/// A running session.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone)]
pub struct SessionInfo {
    pub server: Option<ServerId>,
}

/// What a reload did to a running session.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Reloaded {
    pub server: Option<ServerId>,
    /// The notification sent.
    pub action: String,
    pub settings_changed: bool,
}

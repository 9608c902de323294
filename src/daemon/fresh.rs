//! Freshness: before every answer the daemon brings the workspace index up to date (events,
//! [`crate::workspace::watch`]) and tells the server about every difference — `didChange`
//! (full text) for documents the server has open, `didClose` for open ones that are gone, and
//! `workspace/didChangeWatchedFiles` (created / changed / deleted) for the rest — so a fact
//! never describes text that is no longer on disk. A change of the configuration files that
//! shape the server (the index's, and the user's lanser.toml) restarts the session.

use crate::digest::sha256_hex;
pub use crate::lsp::changes::apply;
use crate::workspace::Workspace;

/// A digest of the configuration files that shape the server and the bundles' environment:
/// the index's configuration files and the user's lanser.toml.
pub fn config_digest(ws: &Workspace) -> String {
    let mut text = String::new();
    let mut paths: Vec<std::path::PathBuf> = crate::workspace::index::SERVER_CONFIG
        .iter()
        .chain([&crate::workspace::index::LANSER_CONFIG])
        .map(|n| ws.root.join(n))
        .collect();
    paths.extend(crate::config::user_config_path());
    for p in paths {
        let h = std::fs::read(&p)
            .map(|b| sha256_hex(&b))
            .unwrap_or_else(|_| "-".into());
        text.push_str(&format!("{}={h}\n", p.display()));
    }
    sha256_hex(text.as_bytes())
}

//! What the server sees, as a key, and the diagnostics pulled under each key. A session
//! changes the server's view of the workspace only by what it sends: the text of its open
//! documents (didOpen/didChange, kept by the session per URI as a digest) and every other
//! notification that can change an answer (didClose, didChangeWatchedFiles,
//! didChangeConfiguration, didRenameFiles, …), counted. Two pulls of one file's diagnostics
//! under the same key ask the same question of the same view, so the second is answered from
//! here. A speculative check changes a document, pulls, and changes it back: the next check
//! of that file finds the restored view's diagnostics already pulled, and pays only for the
//! changed view — the server re-checks the importers once per patch, not twice.

use crate::digest::sha256_hex;
use lsp_types::notification::{
    Cancel, DidChangeTextDocument, DidOpenTextDocument, DidSaveTextDocument, Initialized,
    Notification,
};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};

/// Views whose diagnostics are kept: the restored view and a few speculative ones.
const KEPT_VIEWS: usize = 4;

/// Notifications that leave the view as the open documents' digests describe it: those two
/// are the open-document changes themselves, the rest change no answer.
const VIEW_KEEPING: &[&str] = &[
    DidOpenTextDocument::METHOD,
    DidChangeTextDocument::METHOD,
    DidSaveTextDocument::METHOD,
    Cancel::METHOD,
    Initialized::METHOD,
];

/// Whether sending `method` can change what the server answers beyond the open texts.
pub fn changes_view(method: &str) -> bool {
    !VIEW_KEEPING.contains(&method)
}

/// The key of a view: the count of view-changing notifications and each open document's
/// text digest (its version number is not part of it: a text changed and changed back is
/// the same view).
pub fn key(changes: u64, open_docs: &HashMap<String, (i32, String)>) -> String {
    let mut docs: Vec<(&String, &String)> = open_docs.iter().map(|(u, (_, d))| (u, d)).collect();
    docs.sort();
    let mut text = format!("{changes}\n");
    for (uri, digest) in docs {
        text.push_str(uri);
        text.push(' ');
        text.push_str(digest);
        text.push('\n');
    }
    sha256_hex(text.as_bytes())
}

/// Pulled diagnostics (the server's raw answer) per view and URI, the most recent views kept.
#[derive(Default)]
pub struct DiagMemo {
    views: VecDeque<(String, HashMap<String, Value>)>,
}

impl DiagMemo {
    /// The answer pulled for `uri` under `key`, if any.
    pub fn get(&self, key: &str, uri: &str) -> Option<Value> {
        self.views
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, m)| m.get(uri).cloned())
    }

    /// Keep `answer` for `uri` under `key`; the least recently stored view goes past
    /// [`KEPT_VIEWS`].
    pub fn put(&mut self, key: &str, uri: &str, answer: Value) {
        let mut map = match self.views.iter().position(|(k, _)| k == key) {
            Some(i) => self.views.remove(i).map(|(_, m)| m).unwrap_or_default(),
            None => HashMap::new(),
        };
        map.insert(uri.to_string(), answer);
        self.views.push_front((key.to_string(), map));
        self.views.truncate(KEPT_VIEWS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn docs(list: &[(&str, i32, &str)]) -> HashMap<String, (i32, String)> {
        list.iter()
            .map(|(u, v, d)| (u.to_string(), (*v, d.to_string())))
            .collect()
    }

    #[test]
    fn a_text_changed_back_is_the_same_view_and_anything_else_is_not() {
        let before = key(
            0,
            &docs(&[("file:///a.py", 1, "h1"), ("file:///b.py", 1, "h2")]),
        );
        let changed = key(
            0,
            &docs(&[("file:///a.py", 2, "h9"), ("file:///b.py", 1, "h2")]),
        );
        let back = key(
            0,
            &docs(&[("file:///a.py", 3, "h1"), ("file:///b.py", 1, "h2")]),
        );
        assert_ne!(before, changed);
        assert_eq!(before, back, "versions are not part of the view");
        let told = key(
            1,
            &docs(&[("file:///a.py", 3, "h1"), ("file:///b.py", 1, "h2")]),
        );
        assert_ne!(
            before, told,
            "a didChangeWatchedFiles or didClose is a new view"
        );
        let fewer = key(0, &docs(&[("file:///a.py", 1, "h1")]));
        assert_ne!(before, fewer);
        use lsp_types::notification::{DidChangeWatchedFiles, DidCloseTextDocument};
        assert!(changes_view(DidChangeWatchedFiles::METHOD));
        assert!(changes_view(DidCloseTextDocument::METHOD));
        assert!(!changes_view(DidChangeTextDocument::METHOD));
    }

    #[test]
    fn answers_are_kept_per_view_and_old_views_dropped() {
        let mut m = DiagMemo::default();
        m.put("k0", "u", json!({"items": [1]}));
        m.put("k1", "u", json!({"items": [2]}));
        assert_eq!(m.get("k0", "u"), Some(json!({"items": [1]})));
        assert_eq!(m.get("k1", "u"), Some(json!({"items": [2]})));
        assert_eq!(m.get("k1", "v"), None);
        for k in 2..2 + KEPT_VIEWS {
            m.put(&format!("k{k}"), "u", json!(k));
        }
        assert_eq!(m.get("k0", "u"), None, "the oldest view is gone");
        // Storing under a kept view makes it the newest again.
        m.put("k3", "w", json!(3));
        m.put("k9", "u", json!(9));
        assert_eq!(m.get("k3", "w"), Some(json!(3)));
    }
}

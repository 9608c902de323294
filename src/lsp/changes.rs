//! Telling a session what changed on disk: `didChange` (full text) for documents it has
//! open, `didClose` for open ones that are gone, and `workspace/didChangeWatchedFiles`
//! (created / changed / deleted) for every change — so a later answer never describes text
//! that is no longer there. The daemon calls this before each answer, a batch pool after a
//! write in one of its sessions.

use super::session::Session;
use crate::document::Document;
use crate::workspace::index::Changes;
use crate::workspace::{path_to_uri, Workspace};
use lsp_types::FileChangeType;

/// Tell the server about `changes`.
pub fn apply(session: &Session, ws: &Workspace, changes: &Changes) {
    let open: std::collections::HashSet<String> = session.open_documents().into_iter().collect();
    let mut watched = Vec::new();
    let kinds = [
        (&changes.created, FileChangeType::CREATED),
        (&changes.changed, FileChangeType::CHANGED),
    ];
    for (list, kind) in kinds {
        for rel in list {
            let abs = ws.root.join(rel);
            let uri = path_to_uri(&abs);
            if open.contains(&uri) || session.opens_changed(rel) {
                if let Ok(doc) = Document::load(abs, rel.clone()) {
                    session.sync_document(&uri, &doc);
                }
            }
            watched.push((uri, kind));
        }
    }
    for rel in &changes.deleted {
        let uri = path_to_uri(&ws.root.join(rel));
        session.close_document(&uri);
        watched.push((uri, FileChangeType::DELETED));
    }
    session.files_changed(&watched);
}

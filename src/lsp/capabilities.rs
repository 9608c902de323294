//! What lanser declares to a server in `initialize`: the client capabilities, the workspace
//! folder and who is asking.

use super::session::SessionConfig;
use serde_json::{json, Value};

pub(super) fn initialize_params(config: &SessionConfig) -> Value {
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "lanser", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": config.root_uri,
        "rootPath": config.root.to_string_lossy(),
        "workspaceFolders": [{"uri": config.root_uri, "name": "root"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeConfiguration": {"dynamicRegistration": true},
                "didChangeWatchedFiles": {"dynamicRegistration": true},
                "workspaceEdit": {"documentChanges": true},
                "fileOperations": {"willRename": true, "didRename": true},
                "symbol": {"dynamicRegistration": false}
            },
            "textDocument": {
                "synchronization": {"dynamicRegistration": false, "didSave": true},
                "definition": {"linkSupport": false},
                // Declared as an editor does: Pyright then answers definition with the source
                // location only, not also the matching typeshed stub declarations.
                "declaration": {"linkSupport": false},
                "implementation": {"linkSupport": false},
                "documentHighlight": {},
                "callHierarchy": {},
                "typeDefinition": {"linkSupport": false},
                "references": {},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "publishDiagnostics": {"versionSupport": true},
                "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false},
                "rename": {"prepareSupport": true}
            },
            "window": {"workDoneProgress": true}
        }
    })
}

//! What lanser declares to a server in `initialize` (the client capabilities, the workspace
//! folder and who is asking) and what it reads back of the server's.

use super::session::SessionConfig;
use crate::languages::Ready;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub(super) fn initialize_params(config: &SessionConfig) -> Value {
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "lanser", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": config.root_uri,
        "rootPath": config.root.to_string_lossy(),
        "workspaceFolders": [{"uri": config.root_uri, "name": "root"}],
        "capabilities": {
            "general": {"positionEncodings": config.encodings},
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
    });
    // rust-analyzer reports "quiescent" (its loaded signal) only when asked.
    if config.ready == Ready::ServerStatus {
        params["capabilities"]["experimental"] = json!({"serverStatusNotification": true});
    }
    params
}

/// Which LSP features the server offers statically, as booleans.
pub fn capability_summary(caps: &Value) -> BTreeMap<String, bool> {
    let has = |k: &str| {
        caps.get(k)
            .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
    };
    let mut m = BTreeMap::new();
    for (name, key) in [
        ("callHierarchy", "callHierarchyProvider"),
        ("codeAction", "codeActionProvider"),
        ("completion", "completionProvider"),
        ("declaration", "declarationProvider"),
        ("definition", "definitionProvider"),
        ("documentHighlight", "documentHighlightProvider"),
        ("documentSymbol", "documentSymbolProvider"),
        ("hover", "hoverProvider"),
        ("implementation", "implementationProvider"),
        ("references", "referencesProvider"),
        ("rename", "renameProvider"),
        ("signatureHelp", "signatureHelpProvider"),
        ("typeDefinition", "typeDefinitionProvider"),
        ("workspaceSymbol", "workspaceSymbolProvider"),
    ] {
        m.insert(name.into(), has(key));
    }
    m.insert(
        "prepareRename".into(),
        caps.pointer("/renameProvider/prepareProvider") == Some(&json!(true)),
    );
    m
}

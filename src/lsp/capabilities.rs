//! What lanser declares to a server in `initialize` (the client capabilities, the workspace
//! folder and who is asking) and what it reads back of the server's: its
//! `lsp_types::ServerCapabilities`, read leniently ([`parse`]), and the [`Feature`]s lanser
//! gates its commands on.

use super::session::SessionConfig;
use crate::languages::Ready;
use lsp_types::{
    CallHierarchyServerCapability, CodeActionProviderCapability, DeclarationCapability,
    HoverProviderCapability, ImplementationProviderCapability, OneOf,
    SelectionRangeProviderCapability, ServerCapabilities, TypeDefinitionProviderCapability,
};
use serde_json::{json, Map, Value};
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
    if !config.init_options.is_null() {
        let mut options = config.init_options.clone();
        // A server that reads its settings from `initializationOptions.settings` (jdtls: its
        // project import starts before any didChangeConfiguration) gets the served settings
        // there too, over the built-in's.
        if let (Some(built_in), true) = (options.get("settings"), config.settings.is_object()) {
            options["settings"] =
                crate::config::deep_merge(built_in.clone(), config.settings.clone());
        }
        params["initializationOptions"] = options;
    }
    params
}

/// Why the server will not import the project at `root` as its build describes it, when its
/// own settings say so: jdtls with `java.import.gradle.enabled` false (lanser's default: no
/// Gradle distribution can be had offline) on a Gradle build answers the project's files as
/// non-project files, without saying so in any status (`ProjectStatus` `OK`).
pub(super) fn build_not_imported(params: &Value, root: &std::path::Path) -> Option<String> {
    let gradle = &params["initializationOptions"]["settings"]["java"]["import"]["gradle"];
    let has = |name: &str| root.join(name).is_file();
    (gradle["enabled"] == false
        && (has("build.gradle") || has("build.gradle.kts"))
        && !has("pom.xml"))
    .then(|| {
        "the server's Gradle import is off (java.import.gradle.enabled: false), so this \
             Gradle project's files are answered as non-project files, syntax errors only"
            .to_string()
    })
}

/// The server's capabilities as the protocol's type. A member that does not fit its type
/// (a server's own reading of the spec) is left out, not the whole answer: the rest still
/// gates what it offers. The raw answer stays the record of what the server said.
pub fn parse(raw: &Value) -> ServerCapabilities {
    if let Ok(caps) = serde_json::from_value(raw.clone()) {
        return caps;
    }
    let Value::Object(members) = raw else {
        return ServerCapabilities::default();
    };
    let fitting: Map<String, Value> = members
        .iter()
        .filter(|(k, v)| {
            let one = Value::Object(Map::from_iter([((*k).clone(), (*v).clone())]));
            serde_json::from_value::<ServerCapabilities>(one).is_ok()
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::from_value(Value::Object(fitting)).unwrap_or_default()
}

/// A feature a command needs of the server, read from its capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    CallHierarchy,
    CodeAction,
    /// `codeAction/resolve`: actions may come without their edit.
    CodeActionResolve,
    Completion,
    /// `completionItem/resolve`.
    CompletionResolve,
    Declaration,
    Definition,
    DocumentHighlight,
    DocumentSymbol,
    /// `textDocument/formatting`.
    Formatting,
    Hover,
    Implementation,
    InlayHint,
    /// `textDocument/rangeFormatting`.
    RangeFormatting,
    References,
    Rename,
    PrepareRename,
    /// `textDocument/selectionRange`.
    SelectionRange,
    SignatureHelp,
    TypeDefinition,
    /// `textDocument/prepareTypeHierarchy` (not in lsp-types' ServerCapabilities: read from
    /// the raw answer, [`Feature::declared`]).
    TypeHierarchy,
    WorkspaceSymbol,
    /// `workspace/willRenameFiles`.
    WillRenameFiles,
    /// `workspace/didRenameFiles`.
    DidRenameFiles,
    /// `textDocument/diagnostic` declared statically.
    PullDiagnostics,
}

/// The features `lanser capabilities` summarizes, by their names there.
const SUMMARY: &[(&str, Feature)] = &[
    ("callHierarchy", Feature::CallHierarchy),
    ("codeAction", Feature::CodeAction),
    ("completion", Feature::Completion),
    ("declaration", Feature::Declaration),
    ("definition", Feature::Definition),
    ("documentHighlight", Feature::DocumentHighlight),
    ("documentSymbol", Feature::DocumentSymbol),
    ("hover", Feature::Hover),
    ("implementation", Feature::Implementation),
    ("references", Feature::References),
    ("rename", Feature::Rename),
    ("signatureHelp", Feature::SignatureHelp),
    ("typeDefinition", Feature::TypeDefinition),
    ("workspaceSymbol", Feature::WorkspaceSymbol),
    ("prepareRename", Feature::PrepareRename),
];

impl Feature {
    /// The capability that declares it, as the protocol names it (for messages).
    pub fn provider(self) -> &'static str {
        match self {
            Feature::CallHierarchy => "callHierarchyProvider",
            Feature::CodeAction => "codeActionProvider",
            Feature::CodeActionResolve => "codeActionProvider.resolveProvider",
            Feature::Completion => "completionProvider",
            Feature::CompletionResolve => "completionProvider.resolveProvider",
            Feature::Declaration => "declarationProvider",
            Feature::Definition => "definitionProvider",
            Feature::DocumentHighlight => "documentHighlightProvider",
            Feature::DocumentSymbol => "documentSymbolProvider",
            Feature::Formatting => "documentFormattingProvider",
            Feature::Hover => "hoverProvider",
            Feature::Implementation => "implementationProvider",
            Feature::InlayHint => "inlayHintProvider",
            Feature::RangeFormatting => "documentRangeFormattingProvider",
            Feature::References => "referencesProvider",
            Feature::Rename => "renameProvider",
            Feature::PrepareRename => "renameProvider.prepareProvider",
            Feature::SelectionRange => "selectionRangeProvider",
            Feature::SignatureHelp => "signatureHelpProvider",
            Feature::TypeDefinition => "typeDefinitionProvider",
            Feature::TypeHierarchy => "typeHierarchyProvider",
            Feature::WorkspaceSymbol => "workspaceSymbolProvider",
            Feature::WillRenameFiles => "workspace.fileOperations.willRename",
            Feature::DidRenameFiles => "workspace.fileOperations.didRename",
            Feature::PullDiagnostics => "diagnosticProvider",
        }
    }

    /// Whether `caps` declare it: present, and not `false`.
    pub fn offered_by(self, caps: &ServerCapabilities) -> bool {
        fn one_of<T>(c: &Option<OneOf<bool, T>>) -> bool {
            matches!(c, Some(OneOf::Left(true) | OneOf::Right(_)))
        }
        let file_ops = caps
            .workspace
            .as_ref()
            .and_then(|w| w.file_operations.as_ref());
        match self {
            Feature::CallHierarchy => !matches!(
                caps.call_hierarchy_provider,
                None | Some(CallHierarchyServerCapability::Simple(false))
            ),
            Feature::CodeAction => !matches!(
                caps.code_action_provider,
                None | Some(CodeActionProviderCapability::Simple(false))
            ),
            Feature::CodeActionResolve => matches!(
                &caps.code_action_provider,
                Some(CodeActionProviderCapability::Options(o)) if o.resolve_provider == Some(true)
            ),
            Feature::Completion => caps.completion_provider.is_some(),
            Feature::CompletionResolve => caps
                .completion_provider
                .as_ref()
                .is_some_and(|c| c.resolve_provider == Some(true)),
            Feature::Declaration => !matches!(
                caps.declaration_provider,
                None | Some(DeclarationCapability::Simple(false))
            ),
            Feature::Definition => one_of(&caps.definition_provider),
            Feature::DocumentHighlight => one_of(&caps.document_highlight_provider),
            Feature::DocumentSymbol => one_of(&caps.document_symbol_provider),
            Feature::Formatting => one_of(&caps.document_formatting_provider),
            Feature::Hover => !matches!(
                caps.hover_provider,
                None | Some(HoverProviderCapability::Simple(false))
            ),
            Feature::Implementation => !matches!(
                caps.implementation_provider,
                None | Some(ImplementationProviderCapability::Simple(false))
            ),
            Feature::InlayHint => one_of(&caps.inlay_hint_provider),
            Feature::RangeFormatting => one_of(&caps.document_range_formatting_provider),
            Feature::References => one_of(&caps.references_provider),
            Feature::Rename => one_of(&caps.rename_provider),
            Feature::PrepareRename => matches!(
                &caps.rename_provider,
                Some(OneOf::Right(o)) if o.prepare_provider == Some(true)
            ),
            Feature::SelectionRange => !matches!(
                caps.selection_range_provider,
                None | Some(SelectionRangeProviderCapability::Simple(false))
            ),
            Feature::SignatureHelp => caps.signature_help_provider.is_some(),
            Feature::TypeDefinition => !matches!(
                caps.type_definition_provider,
                None | Some(TypeDefinitionProviderCapability::Simple(false))
            ),
            Feature::TypeHierarchy => false,
            Feature::WorkspaceSymbol => one_of(&caps.workspace_symbol_provider),
            Feature::WillRenameFiles => file_ops.is_some_and(|f| f.will_rename.is_some()),
            Feature::DidRenameFiles => file_ops.is_some_and(|f| f.did_rename.is_some()),
            Feature::PullDiagnostics => caps.diagnostic_provider.is_some(),
        }
    }
}

impl Feature {
    /// Whether the server declares it: [`Feature::offered_by`], or for what lsp-types'
    /// `ServerCapabilities` has no member of, the raw answer's (present, not `false`/`null`).
    pub fn declared(self, caps: &ServerCapabilities, raw: &Value) -> bool {
        match self {
            Feature::TypeHierarchy => raw
                .get(self.provider())
                .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false))),
            _ => self.offered_by(caps),
        }
    }
}

/// Which LSP features the server offers statically, as booleans.
pub fn capability_summary(caps: &ServerCapabilities) -> BTreeMap<String, bool> {
    SUMMARY
        .iter()
        .map(|(name, f)| (name.to_string(), f.offered_by(caps)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_read_as_the_capability_keys_did() {
        let raw = json!({
            "hoverProvider": true,
            "definitionProvider": {"workDoneProgress": true},
            "referencesProvider": false,
            "implementationProvider": null,
            "renameProvider": {"prepareProvider": true},
            "codeActionProvider": {"resolveProvider": true},
            "signatureHelpProvider": {"triggerCharacters": ["("]},
            "workspace": {"fileOperations": {"didRename": {"filters": []}}},
            // Not the protocol's shape: left out, the rest still read.
            "completionProvider": 7
        });
        let caps = parse(&raw);
        let summary = capability_summary(&caps);
        let on: Vec<&str> = summary
            .iter()
            .filter(|(_, v)| **v)
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            on,
            [
                "codeAction",
                "definition",
                "hover",
                "prepareRename",
                "rename",
                "signatureHelp"
            ]
        );
        assert!(Feature::CodeActionResolve.offered_by(&caps));
        assert!(Feature::DidRenameFiles.offered_by(&caps));
        assert!(!Feature::WillRenameFiles.offered_by(&caps));
        assert!(!Feature::PullDiagnostics.offered_by(&caps));
        assert_eq!(parse(&json!(null)), ServerCapabilities::default());
        // typeHierarchyProvider has no member in lsp-types: read from the raw answer.
        assert!(!Feature::TypeHierarchy.declared(&caps, &raw));
        let more = json!({"typeHierarchyProvider": true, "inlayHintProvider": {}});
        assert!(Feature::TypeHierarchy.declared(&parse(&more), &more));
        assert!(Feature::InlayHint.declared(&parse(&more), &more));
        assert!(!Feature::Formatting.declared(&parse(&more), &more));
    }
}

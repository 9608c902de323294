//! What a server sends lanser of its own accord, parsed once into enums: its requests
//! ([`ServerRequest`]: each one lanser answers, the rest answered MethodNotFound) and its
//! notifications ([`ServerNotification`]: the ones lanser reads, and servers' own extensions
//! as their own types, e.g. rust-analyzer's [`ServerStatus`]). Params are the protocol's types
//! (`lsp-types`), except where lanser reads one member of a shape servers vary in.

use super::message::{code, ResponseError};
use lsp_types::notification::{
    LogMessage, Notification, Progress, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    ApplyWorkspaceEdit, CodeLensRefresh, InlayHintRefreshRequest, InlineValueRefreshRequest,
    RegisterCapability, Request, SemanticTokensRefresh, ShowDocument, ShowMessageRequest,
    UnregisterCapability, WorkDoneProgressCreate, WorkspaceConfiguration,
    WorkspaceDiagnosticRefresh, WorkspaceFoldersRequest,
};
use lsp_types::{
    ApplyWorkspaceEditParams, LogMessageParams, ProgressParams, PublishDiagnosticsParams,
    RegistrationParams, ShowMessageParams,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// A request from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerRequest {
    /// `workspace/configuration`: the section of each item asked for (none: every setting).
    Configuration(Vec<Option<String>>),
    /// `workspace/workspaceFolders`.
    WorkspaceFolders,
    /// `client/registerCapability`.
    RegisterCapability(RegistrationParams),
    /// `client/unregisterCapability` (acknowledged; lanser keeps nothing it would drop).
    UnregisterCapability,
    /// `workspace/applyEdit`.
    ApplyEdit(Box<ApplyWorkspaceEditParams>),
    /// `window/workDoneProgress/create` (acknowledged; `$/progress` is read by token).
    WorkDoneProgressCreate,
    /// `workspace/{diagnostic,semanticTokens,inlayHint,inlineValue,codeLens}/refresh`:
    /// acknowledged, since lanser asks afresh for every answer.
    Refresh,
    /// `window/showMessageRequest`: no one to choose an action; answered with none.
    ShowMessageRequest,
    /// `window/showDocument`: nothing to show it in; answered unsuccessful.
    ShowDocument,
    /// Any other method: answered MethodNotFound.
    Unknown(String),
}

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerNotification {
    /// `window/logMessage` (Pyright's "loaded" signal, bash-language-server's too).
    LogMessage(LogMessageParams),
    /// `window/showMessage`.
    ShowMessage(ShowMessageParams),
    /// `$/progress`.
    Progress(ProgressParams),
    /// `textDocument/publishDiagnostics`.
    PublishDiagnostics(PublishDiagnosticsParams),
    /// rust-analyzer's `experimental/serverStatus`.
    ServerStatus(ServerStatusParams),
    /// jdtls's `language/status`.
    LanguageStatus(LanguageStatusParams),
    /// Anything else (telemetry, `$/logTrace`, other servers' extensions): not read.
    Other(String),
}

/// rust-analyzer's status notification: sent when lanser declares
/// `experimental.serverStatusNotification`; `quiescent` once it has loaded the workspace.
pub enum ServerStatus {}

impl Notification for ServerStatus {
    type Params = ServerStatusParams;
    const METHOD: &'static str = "experimental/serverStatus";
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct ServerStatusParams {
    /// "ok", "warning" or "error".
    #[serde(default)]
    pub health: String,
    pub quiescent: bool,
    #[serde(default)]
    pub message: Option<String>,
}

/// jdtls's status notification, `language/status`: `Starting` with a percentage while it
/// starts, `Error` with the reason when its project import failed ("Failed to import
/// projects"), `ProjectStatus` `OK` or `WARNING` after an import, `ServiceReady` at the end.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LanguageStatusParams {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

impl LanguageStatusParams {
    pub const METHOD: &'static str = "language/status";

    /// What this status says of the project import: `Some(Some(reason))` that it failed or
    /// ended with problems, `Some(None)` that it succeeded, `None` nothing.
    pub fn import_problem(&self) -> Option<Option<String>> {
        match (self.kind.as_str(), self.message.as_str()) {
            ("Error", m) => Some(Some(format!("the server's project import failed: {m}"))),
            ("ProjectStatus", "OK") => Some(None),
            ("ProjectStatus", m) => Some(Some(format!(
                "the server's project import ended with problems ({m}); the build file's \
                 diagnostics say which"
            ))),
            _ => None,
        }
    }
}

/// `workspace/configuration` params, read for their sections only: a server's `scopeUri`
/// need not parse as a URI for lanser to answer (its settings have no scopes).
#[derive(Deserialize)]
struct ConfigurationItems {
    items: Vec<ConfigurationItem>,
}

#[derive(Deserialize)]
struct ConfigurationItem {
    #[serde(default)]
    section: Option<String>,
}

/// Params that do not fit the method's type: answered InvalidParams (a request), or dropped
/// (a notification).
#[derive(Debug, thiserror::Error)]
#[error("{method} params do not fit the protocol")]
pub struct InvalidParams {
    pub method: String,
    #[source]
    pub source: serde_json::Error,
}

impl InvalidParams {
    /// The error answer to the request.
    pub fn response(&self) -> ResponseError {
        ResponseError {
            code: code::INVALID_PARAMS,
            message: crate::error::chain(self),
            data: None,
        }
    }
}

fn is<R: Request>(method: &str) -> bool {
    method == R::METHOD
}

fn params<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, InvalidParams> {
    serde_json::from_value(params).map_err(|source| InvalidParams {
        method: method.to_string(),
        source,
    })
}

impl ServerRequest {
    pub fn parse(method: &str, p: Value) -> Result<ServerRequest, InvalidParams> {
        Ok(match method {
            m if is::<WorkspaceConfiguration>(m) => {
                let items: ConfigurationItems = params(m, p)?;
                ServerRequest::Configuration(items.items.into_iter().map(|i| i.section).collect())
            }
            m if is::<WorkspaceFoldersRequest>(m) => ServerRequest::WorkspaceFolders,
            m if is::<RegisterCapability>(m) => ServerRequest::RegisterCapability(params(m, p)?),
            m if is::<UnregisterCapability>(m) => ServerRequest::UnregisterCapability,
            m if is::<ApplyWorkspaceEdit>(m) => ServerRequest::ApplyEdit(Box::new(params(m, p)?)),
            m if is::<WorkDoneProgressCreate>(m) => ServerRequest::WorkDoneProgressCreate,
            m if is::<WorkspaceDiagnosticRefresh>(m)
                || is::<SemanticTokensRefresh>(m)
                || is::<InlayHintRefreshRequest>(m)
                || is::<InlineValueRefreshRequest>(m)
                || is::<CodeLensRefresh>(m) =>
            {
                ServerRequest::Refresh
            }
            m if is::<ShowMessageRequest>(m) => ServerRequest::ShowMessageRequest,
            m if is::<ShowDocument>(m) => ServerRequest::ShowDocument,
            other => ServerRequest::Unknown(other.to_string()),
        })
    }
}

fn note<N: Notification>(method: &str) -> bool {
    method == N::METHOD
}

impl ServerNotification {
    pub fn parse(method: &str, p: Value) -> Result<ServerNotification, InvalidParams> {
        Ok(match method {
            m if note::<LogMessage>(m) => ServerNotification::LogMessage(params(m, p)?),
            m if note::<ShowMessage>(m) => ServerNotification::ShowMessage(params(m, p)?),
            m if note::<Progress>(m) => ServerNotification::Progress(params(m, p)?),
            // intelephense empties an indexed file's diagnostics when it is opened (`isClear`)
            // ahead of those of the opened text: not an answer for it.
            m if note::<PublishDiagnostics>(m) && p["isClear"] == true => {
                ServerNotification::Other(m.to_string())
            }
            m if note::<PublishDiagnostics>(m) => {
                ServerNotification::PublishDiagnostics(params(m, p)?)
            }
            m if note::<ServerStatus>(m) => ServerNotification::ServerStatus(params(m, p)?),
            LanguageStatusParams::METHOD => ServerNotification::LanguageStatus(params(method, p)?),
            other => ServerNotification::Other(other.to_string()),
        })
    }
}

/// The value at a dotted section path (`python.analysis`) of `settings`, or null; the whole
/// settings for no section.
pub fn settings_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    let mut cur = settings;
    for part in section.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return Value::Null,
        }
    }
    cur.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{NumberOrString, ProgressParamsValue, WorkDoneProgress};
    use serde_json::json;

    #[test]
    fn dotted_sections() {
        let s = json!({"python": {"analysis": {"diagnosticMode": "openFilesOnly"}, "pythonPath": "/p"}});
        assert_eq!(
            settings_section(&s, Some("python.analysis")),
            json!({"diagnosticMode": "openFilesOnly"})
        );
        assert_eq!(settings_section(&s, Some("python.pythonPath")), json!("/p"));
        assert_eq!(settings_section(&s, Some("pyright")), Value::Null);
        assert_eq!(settings_section(&s, None), s);
    }

    #[test]
    fn a_clearing_publish_is_not_an_answer() {
        let uri = "file:///w/a.php";
        let clear = json!({"uri": uri, "diagnostics": [], "isClear": true});
        let parsed = ServerNotification::parse(PublishDiagnostics::METHOD, clear).unwrap();
        assert!(matches!(parsed, ServerNotification::Other(_)), "{parsed:?}");
        let real = json!({"uri": uri, "diagnostics": []});
        let parsed = ServerNotification::parse(PublishDiagnostics::METHOD, real).unwrap();
        assert!(matches!(parsed, ServerNotification::PublishDiagnostics(_)));
    }

    #[test]
    fn requests_by_method() {
        let config = ServerRequest::parse(
            WorkspaceConfiguration::METHOD,
            json!({"items": [{"scopeUri": "not a uri at all", "section": "python"}, {}]}),
        )
        .unwrap();
        assert_eq!(
            config,
            ServerRequest::Configuration(vec![Some("python".into()), None])
        );
        let register = ServerRequest::parse(
            RegisterCapability::METHOD,
            json!({"registrations": [{"id": "1", "method": "textDocument/diagnostic"}]}),
        )
        .unwrap();
        let ServerRequest::RegisterCapability(r) = register else {
            panic!("{register:?}")
        };
        assert_eq!(r.registrations[0].method, "textDocument/diagnostic");
        assert_eq!(
            ServerRequest::parse(WorkspaceDiagnosticRefresh::METHOD, Value::Null).unwrap(),
            ServerRequest::Refresh
        );
        assert_eq!(
            ServerRequest::parse("custom/thing", json!([1])).unwrap(),
            ServerRequest::Unknown("custom/thing".into())
        );
        let bad = ServerRequest::parse(ApplyWorkspaceEdit::METHOD, json!({"edit": 3})).unwrap_err();
        assert_eq!(bad.response().code, code::INVALID_PARAMS);
    }

    #[test]
    fn notifications_by_method() {
        let progress = ServerNotification::parse(
            Progress::METHOD,
            json!({"token": 3, "value": {"kind": "end"}}),
        )
        .unwrap();
        let ServerNotification::Progress(p) = progress else {
            panic!("{progress:?}")
        };
        assert_eq!(p.token, NumberOrString::Number(3));
        assert!(matches!(
            p.value,
            ProgressParamsValue::WorkDone(WorkDoneProgress::End(_))
        ));
        let status = ServerNotification::parse(
            ServerStatus::METHOD,
            json!({"health": "ok", "quiescent": true}),
        )
        .unwrap();
        assert!(matches!(status, ServerNotification::ServerStatus(s) if s.quiescent));
        assert!(ServerNotification::parse(LogMessage::METHOD, json!({"message": 1})).is_err());
        assert_eq!(
            ServerNotification::parse("$/typescriptVersion", json!({})).unwrap(),
            ServerNotification::Other("$/typescriptVersion".into())
        );
    }
}

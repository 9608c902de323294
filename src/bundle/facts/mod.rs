//! The typed `facts` of the built-in operations: one struct per `request.cmd`, which each operation
//! names as its `Operation::Facts`. Each returns its facts as that struct (erased to JSON once,
//! by [`crate::outcome::Outcome::erase`], when the bundle is assembled) and its human rendering
//! reads them back as that struct, so the one type serializes the bundle,
//! generates its schema and is what `render` sees: the schema is true by construction.
//! `additionalProperties: false` (added by `schema`) makes a new key a visible schema change.
//! Every member is typed (lanser's own shapes are in [`items`] and [`meta`]) except the
//! server's verbatim answers the schema promises as such: `capabilities` and a raw
//! `request`'s `params` and `result`.

pub mod items;
pub mod meta;

pub use items::{
    Call, CallItem, Checked, Diagnostic, FileDelta, FoundSymbol, Highlight, HighlightKind, Hover,
    MarkupKind, Move, OutlineSymbol, ParameterInfo, Placed, Severity, SignatureHelp, SignatureInfo,
    Skipped, Symbol,
};
pub use meta::{ConfigFile, Reloaded, ServerStatus, SessionInfo};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An operation's facts type: it serializes the bundle's `facts`, generates their schema,
/// and is what the human rendering reads back.
pub trait Facts: JsonSchema + Serialize + serde::de::DeserializeOwned {
    /// The list `--cursor`/`--page-size` (and an MCP answer's `offset`/`limit`) page, if any.
    const PAGED: Option<&'static str> = None;
}

/// Facts types, each with the list it pages (`=> "key"`) or none.
macro_rules! facts {
    ($($ty:ident $(=> $paged:literal)?),* $(,)?) => {
        $(impl Facts for $ty { $(const PAGED: Option<&'static str> = Some($paged);)? })*
    };
}
facts! {
    DefFacts => "definitions",
    TypeDefFacts => "typeDefinitions",
    ImplFacts => "implementations",
    RefsFacts => "references",
    SymbolsFacts => "symbols",
    DiagFacts => "diagnostics",
    HighlightFacts => "highlights",
    HoverFacts, LocateFacts, PrepareRenameFacts, CheckFacts, ImpactFacts, RenameFacts, CodeActionsFacts,
    RenameFileFacts, CallsFacts, SignatureFacts, CapabilitiesFacts, StatusFacts, ReloadFacts,
    RequestFacts,
}

/// Where a fact came from.
#[derive(JsonSchema, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// The language server.
    #[default]
    Lsp,
    /// lanser's own parser (no server asked).
    Parser,
    /// lanser's configuration.
    Config,
    /// lanser alone (rename-file without server help).
    Lanser,
    /// The server's workspace/willRenameFiles plus lanser's import rewriting.
    #[serde(rename = "lsp+lanser")]
    LspLanser,
}

/// One location: the normalizer's own type, the same for the bundle and its schema.
pub use super::normalize::Loc as Location;

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct DefFacts {
    pub definitions: Vec<Location>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct TypeDefFacts {
    #[serde(rename = "typeDefinitions")]
    pub type_definitions: Vec<Location>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct ImplFacts {
    pub implementations: Vec<Location>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct RefsFacts {
    pub references: Vec<Location>,
    /// References before paging.
    pub count: u64,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct HoverFacts {
    /// The normalized hover, or null when the server has none.
    pub hover: Option<Hover>,
    pub provenance: Provenance,
}

/// A file's outline (`path`, `docVersion`) or a workspace search (`query`).
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct SymbolsFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(
        rename = "docVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub doc_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    pub symbols: Vec<Symbol>,
    pub provenance: Provenance,
    /// With a query: code files of the workspace that no server serves, whose symbols no
    /// server was asked for (`meta.complete` false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<Vec<Unchecked>>,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct DiagCounts {
    pub error: u64,
    pub warning: u64,
    pub information: u64,
    pub hint: u64,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct DiagFacts {
    /// The files checked.
    pub files: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    pub counts: DiagCounts,
    pub provenance: Provenance,
    /// Files the server refused to check (its error answer), when any: every other file is
    /// reported, and `meta.complete` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Vec<DiagFailure>>,
    /// Files the targets name (or, with none, code files of the workspace) that no server
    /// serves: not checked, never counted clean; `meta.complete` is then false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<Vec<Unchecked>>,
}

/// A file no configured server serves, so that nothing answered for it.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Unchecked {
    pub path: String,
    /// Its type as `file_types` names it: the extension (`rb`), or the name (`Makefile`).
    pub file_type: String,
}

impl Unchecked {
    /// The files of `paths`, as unchecked (`None` when there are none).
    pub fn list(paths: &[String]) -> Option<Vec<Unchecked>> {
        let list: Vec<Unchecked> = paths
            .iter()
            .map(|p| Unchecked {
                path: p.clone(),
                file_type: crate::servers::unserved::file_type(p),
            })
            .collect();
        (!list.is_empty()).then_some(list)
    }
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct DiagFailure {
    pub path: String,
    /// What the server answered, on one line.
    pub message: String,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct PreviewLine {
    /// 1-based line number.
    pub line: u64,
    pub text: String,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct LocateTarget {
    pub path: String,
    pub range: [u32; 4],
    pub selector: String,
    pub text: String,
    /// The lines the range covers (`--preview` only, else null).
    pub preview: Option<Vec<PreviewLine>>,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct DurableSelectors {
    /// The `py://` selector of the enclosing symbol, if any.
    pub symbol: Option<String>,
    /// The `anchor://` selector of the range.
    pub anchor: Option<String>,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct LocateFacts {
    pub target: LocateTarget,
    /// What the structural parser knows of the symbol there, if any.
    pub symbol: Option<crate::relocate::score::SymbolInfo>,
    pub selectors: DurableSelectors,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct PrepareRenameFacts {
    pub renameable: bool,
    pub range: [u32; 4],
    pub selector: String,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct CheckFacts {
    /// The files the patch changes.
    pub patched: Vec<String>,
    /// Per file (the patched ones and the importers re-checked), what the patch adds and
    /// removes. A skipped importer is not listed: its diagnostics cannot change.
    pub files: Vec<FileDelta>,
    /// Error+warning diagnostics before and after the patch, in the files listed.
    pub before: u64,
    pub after: u64,
    /// Which importers were re-checked, and which the patch cannot alter.
    pub checked: Checked,
    pub provenance: Provenance,
    /// Files the patch changes that no server serves: not measured (`meta.complete` false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<Vec<Unchecked>>,
}

/// A definition an impact analysis reached (`<module>` for a file's top level).
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct ImpactItem {
    pub path: String,
    pub name: String,
    /// function, class, variable or module
    pub kind: String,
    pub range: [u32; 4],
    pub selector: String,
    /// Levels from the change (absent on seeds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// A test's pytest node id (tests only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct ImpactFacts {
    /// The definitions the change touches.
    pub seeds: Vec<ImpactItem>,
    /// Library code reached (seeds included), outside test files and conftest.py.
    pub library: Vec<ImpactItem>,
    /// The impacted tests, by node id.
    pub tests: Vec<ImpactItem>,
    #[serde(rename = "testFiles")]
    pub test_files: Vec<String>,
    pub depth: u32,
    /// More definitions were reached than one analysis visits (2,000).
    pub truncated: bool,
    /// How the tests were found.
    pub selection: TestSelection,
    pub provenance: String,
}

/// How an analysis found its tests (docs/commands.md#impact).
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct TestSelection {
    /// `pytest` (its own collection) or `naming` (pytest's default naming rules, where it
    /// could not collect).
    pub tests: String,
    /// Whether per-test line coverage added the tests that executed a changed line (else the
    /// selection is static: callers, references, fixtures).
    pub coverage: bool,
    /// Why a source was not used.
    pub notes: Vec<String>,
    /// The changed lines no test executed (module-level code runs at import, outside every
    /// test; an inserted line is new), each with the wider scope whose tests stand in for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widened: Vec<Widened>,
    /// A patch over a workspace where test modules fail to import: what pytest's collection
    /// after the change added. Absent when every module imports as the workspace is.
    #[serde(
        default,
        rename = "afterChange",
        skip_serializing_if = "Option::is_none"
    )]
    pub after_change: Option<AfterChange>,
}

/// What the collection after a patch added to the selection, where test modules of the
/// workspace as it is fail to import (docs/commands.md#impact).
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct AfterChange {
    /// Test modules that fail to import before the change and import after it: all their
    /// tests are selected.
    pub unblocked: Vec<String>,
    /// Test modules that fail to import after the change, through a changed file: each is
    /// selected as one test, whose outcome is its collection error.
    pub broken: Vec<String>,
}

/// A changed line no test executed, selected by its scope (docs/commands.md#impact).
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Widened {
    /// Workspace-relative.
    pub path: String,
    /// 1-based, before the change (an insertion's: the line before it).
    pub line: u32,
    /// `definition`: the tests that executed a line of the innermost enclosing definition
    /// any test executed; `file`: of its file (module level, or no such definition).
    pub rule: String,
    /// The definition's dotted name; `<module>` under `file`.
    pub scope: String,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct RenameFacts {
    #[serde(rename = "newName")]
    pub new_name: String,
    pub range: [u32; 4],
    pub files: Vec<String>,
    #[serde(rename = "editCount")]
    pub edit_count: u64,
    pub applied: bool,
    /// Per file, what the rename adds and removes (null when it also moves or creates files).
    #[serde(rename = "speculativeDiagnostics")]
    pub speculative_diagnostics: Option<Vec<FileDelta>>,
    pub provenance: Provenance,
}

/// The listed actions; with `--apply`, also the chosen one and what it changes.
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct CodeActionsFacts {
    pub actions: Vec<ActionSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(rename = "editCount", default, skip_serializing_if = "Option::is_none")]
    pub edit_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
    #[serde(
        rename = "speculativeDiagnostics",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    /// With `--apply`: per file, what the action adds and removes (null when it also moves
    /// or creates files).
    pub speculative_diagnostics: Option<Option<Vec<FileDelta>>>,
    pub provenance: Provenance,
}

/// One action the server offers, by its index in the list.
#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionSummary {
    pub index: u64,
    pub title: String,
    pub kind: Option<String>,
    pub is_preferred: bool,
    pub has_edit: bool,
    /// The server command it runs, if any.
    pub command: Option<String>,
}

#[derive(JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MoveKind {
    Module,
    Package,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct RenameFileFacts {
    pub from: String,
    pub to: String,
    pub kind: MoveKind,
    /// The modules that change name, by dotted name.
    pub modules: Vec<Move>,
    /// The files that move.
    pub moved: Vec<Move>,
    /// `__init__.py` files created in new package directories.
    pub created: Vec<String>,
    pub files: Vec<String>,
    #[serde(rename = "editCount")]
    pub edit_count: u64,
    pub applied: bool,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct CallsFacts {
    /// The prepared call-hierarchy item (null when the selector is not on a function).
    pub item: Option<CallItem>,
    /// Every prepared item, when there was more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<CallItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incoming: Option<Vec<Call>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outgoing: Option<Vec<Call>>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct HighlightFacts {
    pub path: String,
    pub highlights: Vec<Highlight>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct SignatureFacts {
    /// Null when the selector is not inside a call's parentheses.
    pub signature: Option<SignatureHelp>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct CapabilitiesFacts {
    pub server: Option<crate::bundle::ServerId>,
    /// The server's capabilities, verbatim (workspace paths made relative): the server's own
    /// answer, so open JSON by design.
    pub capabilities: Value,
    pub summary: std::collections::BTreeMap<String, bool>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct StatusFacts {
    pub servers: Vec<ServerStatus>,
    #[serde(rename = "configFiles")]
    pub config_files: Vec<ConfigFile>,
    pub sessions: Vec<SessionInfo>,
    pub provenance: Provenance,
}

#[derive(JsonSchema, Serialize, Deserialize)]
pub struct ReloadFacts {
    pub server: String,
    #[serde(rename = "configFiles")]
    pub config_files: Vec<ConfigFile>,
    pub reloaded: Vec<Reloaded>,
    pub note: Option<String>,
    pub provenance: Provenance,
}

/// A raw request: what was sent and received, plus the normalized view of the methods lanser
/// knows (one of the optional keys).
#[derive(JsonSchema, Serialize, Deserialize, Default)]
pub struct RequestFacts {
    pub method: String,
    /// The params sent, verbatim (workspace paths made relative): open JSON by design.
    pub params: Value,
    /// The server's answer, verbatim (workspace paths made relative): open JSON by design.
    pub result: Value,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(
        rename = "docVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub doc_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbols: Option<Vec<Symbol>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions: Option<Vec<Location>>,
    #[serde(
        rename = "typeDefinitions",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub type_definitions: Option<Vec<Location>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementations: Option<Vec<Location>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<Location>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A hover request's normalized answer (`null` when the server has none).
    pub hover: Option<Option<Hover>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highlights: Option<Vec<Highlight>>,
}

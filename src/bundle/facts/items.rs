//! lanser's own shapes for what the facts list: hovers, outline and workspace symbols,
//! diagnostics and their per-file deltas, highlights, signatures and call-hierarchy items.
//! The normalizer ([`crate::bundle::normalize`]) builds them from the server's answers; each
//! serializes to the bytes the bundle has always had (an absent optional is `null` unless it
//! says `skip`).

use super::Location;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a hover's text is written.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MarkupKind {
    Plaintext,
    Markdown,
}

/// A normalized hover: the contents joined into one text.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    pub kind: MarkupKind,
    pub value: String,
    /// The range the hover is about, when the server gave one.
    pub range: Option<[u32; 4]>,
}

/// A symbol of a file's outline (a DocumentSymbol), with its dotted name.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct OutlineSymbol {
    pub name: String,
    /// The names of the enclosing symbols and this one, joined by dots.
    pub qualname: String,
    /// The protocol's SymbolKind by name (`unknown` out of range).
    pub kind: String,
    pub detail: Option<String>,
    pub path: String,
    pub range: [u32; 4],
    #[serde(rename = "selectionRange")]
    pub selection_range: [u32; 4],
    pub selector: String,
}

/// A symbol found by a search (a SymbolInformation), or a flat outline's entry.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct FoundSymbol {
    pub name: String,
    /// The protocol's SymbolKind by name (`unknown` out of range).
    pub kind: String,
    /// The server's containerName, when not empty.
    pub container: Option<String>,
    pub path: String,
    pub range: [u32; 4],
    pub selector: String,
}

/// One symbol: an outline's (nested, with a qualname) or a search's.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(untagged)]
pub enum Symbol {
    Outline(OutlineSymbol),
    Found(FoundSymbol),
}

impl Symbol {
    pub fn name(&self) -> &str {
        match self {
            Symbol::Outline(s) => &s.name,
            Symbol::Found(s) => &s.name,
        }
    }
    /// The qualname of an outline's symbol, else the name.
    pub fn qualname(&self) -> &str {
        match self {
            Symbol::Outline(s) => &s.qualname,
            Symbol::Found(s) => &s.name,
        }
    }
    pub fn kind(&self) -> &str {
        match self {
            Symbol::Outline(s) => &s.kind,
            Symbol::Found(s) => &s.kind,
        }
    }
    pub fn selector(&self) -> &str {
        match self {
            Symbol::Outline(s) => &s.selector,
            Symbol::Found(s) => &s.selector,
        }
    }
}

/// A diagnostic's severity (a server that gives none means an error).
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// A normalized diagnostic.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: String,
    pub range: [u32; 4],
    pub severity: Severity,
    /// The rule, as text (a numeric code is written out).
    pub code: Option<String>,
    pub source: Option<String>,
    /// The message, with this machine's paths taken out.
    pub message: String,
    pub selector: String,
    /// 1-based range in the `--index-io` unit (`--verbose` only).
    #[serde(rename = "ioRange", default, skip_serializing_if = "Option::is_none")]
    pub io_range: Option<[u32; 4]>,
}

/// One file's diagnostics before and after a change, matched by (severity, code, message).
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct FileDelta {
    pub path: String,
    /// How many diagnostics the file had before, and has after.
    pub before: u64,
    pub after: u64,
    pub added: Vec<Diagnostic>,
    pub removed: Vec<Diagnostic>,
    pub unchanged: u64,
}

/// What a speculative check re-checked (docs/editing.md#what-is-re-checked): the changed
/// files, the importers it re-checked, and the importers the change cannot alter, each with
/// why (not pulled: their diagnostics cannot change, and the answer does not list them).
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct Checked {
    /// The files the change edits.
    pub files: Vec<String>,
    /// The importers re-checked.
    pub importers: Vec<String>,
    /// The importers not re-checked, and why.
    pub skipped: Vec<Skipped>,
}

/// An importer a speculative check did not re-check.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// What an occurrence does with the symbol.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum HighlightKind {
    Text,
    Read,
    Write,
}

/// One occurrence of a symbol in its file.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Highlight {
    pub path: String,
    /// 0-based `[startLine, startCol, endLine, endCol]` in the negotiated positionEncoding.
    pub range: [u32; 4],
    pub selector: String,
    /// 1-based range in the `--index-io` unit (`--verbose` only).
    #[serde(rename = "ioRange", default, skip_serializing_if = "Option::is_none")]
    pub io_range: Option<[u32; 4]>,
    pub kind: HighlightKind,
}

impl Highlight {
    pub fn new(loc: Location, kind: HighlightKind) -> Self {
        Highlight {
            path: loc.path,
            range: loc.range,
            selector: loc.selector,
            io_range: loc.io_range,
            kind,
        }
    }
}

/// One parameter of a signature: its label as text.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ParameterInfo {
    pub label: String,
    pub documentation: Option<String>,
}

/// One signature of the callee.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SignatureInfo {
    pub label: String,
    pub documentation: Option<String>,
    pub parameters: Vec<ParameterInfo>,
    #[serde(rename = "activeParameter")]
    pub active_parameter: Option<u32>,
}

/// A normalized signatureHelp.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    pub signatures: Vec<SignatureInfo>,
    #[serde(rename = "activeSignature")]
    pub active_signature: Option<u32>,
    #[serde(rename = "activeParameter")]
    pub active_parameter: Option<u32>,
}

/// A call-hierarchy item, named by its selectionRange.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct CallItem {
    pub name: String,
    /// `module`, `class`, `method`, `function`, `variable`, … or `other`.
    pub kind: String,
    pub detail: Option<String>,
    pub path: String,
    pub range: [u32; 4],
    pub selector: String,
}

/// One incoming or outgoing call: the other item and where the calls are.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub kind: String,
    pub detail: Option<String>,
    pub path: String,
    pub range: [u32; 4],
    pub selector: String,
    #[serde(rename = "callSites")]
    pub call_sites: Vec<Location>,
}

/// A pair of a move: a module's dotted names, or a file's paths.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub from: String,
    pub to: String,
}

/// What [`crate::bundle::normalize::sort_by_location`] orders a fact by: its path, range and
/// name (a diagnostic's message), before its whole JSON text.
pub trait Placed: Serialize {
    fn path(&self) -> &str;
    fn range(&self) -> [u32; 4];
    fn name(&self) -> &str;
}

macro_rules! placed {
    ($($ty:ty => $name:ident),* $(,)?) => {
        $(impl Placed for $ty {
            fn path(&self) -> &str { &self.path }
            fn range(&self) -> [u32; 4] { self.range }
            fn name(&self) -> &str { &self.$name }
        })*
    };
}
placed! {
    OutlineSymbol => name, FoundSymbol => name, Diagnostic => message, CallItem => name,
    Call => name,
}

impl Placed for Symbol {
    fn path(&self) -> &str {
        match self {
            Symbol::Outline(s) => &s.path,
            Symbol::Found(s) => &s.path,
        }
    }
    fn range(&self) -> [u32; 4] {
        match self {
            Symbol::Outline(s) => s.range,
            Symbol::Found(s) => s.range,
        }
    }
    fn name(&self) -> &str {
        Symbol::name(self)
    }
}

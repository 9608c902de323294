//! The MCP tools' arguments that are not an operation's own (those come from the catalog and
//! its overlay, [`super::generic`]), typed: each struct both deserializes a call's arguments
//! and generates that part of the input schema. A position (a selector, or file/line/symbol as
//! agent LSP tools take it), the options every tool takes, and the global options an
//! operation's overlay lets a call set for itself.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// How to address code, shared by every tool description that takes a position.
pub const ADDRESSING: &str = "Address code with `selector` (any lanser selector; lines and columns 1-based): \
`src/app.py@L42:C7` (line 42, column 7), `src/app.py@L42:load#2` (the 2nd `load` on line 42), \
`src/app.py@R(42,7->44,1)` (a range), `py://pkg.mod#Class.method` (a definition by module and \
qualified name; `:sig`, `:body`, `:doc` for its parts), `sym://web/app.ts#Store.add` (a definition by \
file and qualified name, in any language: a Go method as `Type.Method`), \
`ast://[module=pkg.mod]/[class=C]/[def=f]/call[1]` or `ast://[file=web/app.ts]/…` (a syntax node), `anchor://src/app.py#\"def load(\"` (a text snippet), or a JSON PositionSpec object. \
Or give `file` + `line` (1-based) + `symbol` (`name`, or `name#N` for its Nth occurrence on the \
line; omitted = the line's first non-blank column). An ambiguous selector is an error that \
lists every candidate; it is never guessed.";

/// A position, as a selector or as agent LSP tools take it: file/line/symbol.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Position {
    /// Any lanser selector string, or a PositionSpec object.
    pub selector: Option<Value>,
    /// The file (workspace-relative), with `line` and optionally `symbol`, instead of `selector`.
    pub file: Option<String>,
    /// 1-based line in `file`.
    pub line: Option<u64>,
    /// `name` or `name#N` on that line; omitted = the first non-blank column.
    pub symbol: Option<String>,
}

/// Options every tool takes, with the CLI's defaults.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Common {
    /// Per-request timeout in seconds (default 60).
    pub timeout: Option<u64>,
    /// Column unit of selectors and text output: `utf-8`, `utf-16` or `codepoint` (default).
    pub index_io: Option<String>,
    /// `best`: take the best of several tied selector candidates instead of failing.
    pub pick: Option<String>,
    /// Fuzzy-match acceptance threshold for selectors (default 0.75).
    pub tau: Option<f64>,
    /// First line of the text answer to show (paging; `structuredContent` is always whole).
    pub offset: Option<usize>,
    /// How many lines of the text answer to show (default 50).
    pub limit: Option<usize>,
}

/// Global options a call may set for itself where its operation's overlay names them
/// (`check`'s process reward).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RewardOptions {
    /// The process reward: `pr-v1` (default) or `pr-v2`.
    pub reward: Option<String>,
    /// With pr-v2: also run the tests `impact` selects, on an overlay copy (never the
    /// workspace's files), within `test_budget` seconds.
    #[serde(default)]
    pub tests: bool,
    /// The wall-clock budget of `tests`, in seconds.
    pub test_budget: Option<f64>,
}

/// A position and the options every tool takes: what a tool whose operation takes a position
/// takes besides its own arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct At {
    #[serde(flatten)]
    pub pos: Position,
    #[serde(flatten)]
    pub common: Common,
}

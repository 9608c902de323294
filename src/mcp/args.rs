//! The MCP tools' arguments, typed: each struct both deserializes a call's arguments and
//! generates the tool's input schema. A position (a selector, or file/line/symbol as agent LSP
//! tools take it), the options every tool takes, the flags of the tools that write, and one
//! struct per tool that takes more.

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

/// Flags of the tools that write.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Write {
    /// Write the change (transactionally, inside the safety envelope). Default false: a preview.
    #[serde(default)]
    pub apply: bool,
    /// Apply even when a file it touches holds uncommitted changes lanser did not make.
    #[serde(default)]
    pub allow_dirty: bool,
}

macro_rules! args {
    ($name:ident { $($(#[$m:meta])* $f:ident : $t:ty),* $(,)? }) => {
        #[derive(Debug, Default, Deserialize, JsonSchema)]
        pub struct $name {
            $($(#[$m])* pub $f: $t,)*
            #[serde(flatten)]
            pub common: Common,
        }
    };
}

args!(At {
    #[serde(flatten)]
    pos: Position
});
args!(Refs {
    #[serde(flatten)]
    pos: Position,
    /// Leave the declaration itself out.
    #[serde(default)]
    exclude_declaration: bool,
});
args!(Symbols {
    /// A file to outline (workspace-relative).
    file: Option<String>,
    /// Workspace symbol search (filters the outline when `file` is given).
    query: Option<String>,
});
args!(Diagnostics {
    /// Files or globs (workspace-relative); none = every file of the workspace a server
    /// serves. (`files`, its former name, is taken too.)
    #[serde(default, alias = "files")] targets: Vec<String>,
});
args!(Calls {
    #[serde(flatten)] pos: Position,
    /// `incoming` (callers), `outgoing` (callees) or `both` (default).
    direction: Option<String>,
});
args!(Locate {
    #[serde(flatten)]
    pos: Position,
    /// Show the lines the range covers.
    #[serde(default)]
    preview: bool,
});
args!(Rename {
    #[serde(flatten)]
    pos: Position,
    /// The new identifier.
    new_name: String,
    #[serde(flatten)]
    write: Write,
});
args!(RenameFile {
    /// The module file (`src/pkg/mod.py`) or package directory to move. (`path`, its former
    /// name, is taken too.)
    #[serde(alias = "path")]
    src: String,
    /// Its new path (must not exist). (`new_path`, its former name, is taken too.)
    #[serde(alias = "new_path")]
    dst: String,
    #[serde(flatten)]
    write: Write,
});
args!(CodeActions {
    #[serde(flatten)] pos: Position,
    /// Only actions of this kind (`quickfix`, `source.organizeImports`, ...).
    kind: Option<String>,
    /// The action to apply, by index (as listed) or exact title; omitted = list them.
    apply: Option<Value>,
    /// With `apply`: preview that action instead of writing it.
    #[serde(default)] dry_run: bool,
    /// Apply even when a file it touches holds uncommitted changes lanser did not make.
    #[serde(default)] allow_dirty: bool,
});
args!(CheckPatch {
    /// A unified diff (as `git diff` prints it).
    patch: String,
    /// The process reward: `pr-v1` (default) or `pr-v2`.
    reward: Option<String>,
    /// With pr-v2: also run the tests `impact` selects, on an overlay copy (never the
    /// workspace's files), within `test_budget` seconds.
    #[serde(default)] tests: bool,
    test_budget: Option<f64>,
});
args!(ApplyPatch {
    /// A unified diff (as `git diff` prints it); every hunk must match the files as they are.
    patch: String,
    /// Refuse a change that adds an error diagnostic (E/WOULD_BREAK; nothing is written).
    #[serde(default)]
    require_clean: bool,
    #[serde(flatten)]
    write: Write,
});
args!(Edit {
    #[serde(flatten)]
    pos: Position,
    /// `replace_body` (after the header's `:`/`{`, docstring included), `replace` (the whole
    /// definition), `insert_before`/`insert_after` (a sibling definition) or `delete`.
    mode: String,
    /// The new code; dedented, then indented to the target's level. Not with `delete`.
    text: Option<String>,
    /// With `delete`: delete even while references remain (else E/STILL_REFERENCED).
    #[serde(default)]
    force: bool,
    /// Refuse a change that adds an error diagnostic (E/WOULD_BREAK; nothing is written).
    #[serde(default)]
    require_clean: bool,
    #[serde(flatten)]
    write: Write,
});
args!(Impact {
    #[serde(flatten)] pos: Position,
    /// A unified diff whose changed lines name the change, instead of a position.
    patch: Option<String>,
    /// Levels of callers to follow (default 3).
    depth: Option<u32>,
});
args!(Complete {
    #[serde(flatten)]
    pos: Position,
    /// Resolve each item (completionItem/resolve) for its detail and documentation.
    #[serde(default)]
    resolve: bool,
});
args!(Types {
    #[serde(flatten)] pos: Position,
    /// `supertypes` (what it derives from), `subtypes` (what derives from it) or `both` (default).
    direction: Option<String>,
});
args!(Inlay {
    /// The file (workspace-relative).
    file: String,
    /// Only this range: `l,c->l,c` (1-based lines and columns); omitted = the whole file.
    range: Option<String>,
});
args!(Format {
    /// The file (workspace-relative).
    file: String,
    /// Only this range: `l,c->l,c` (1-based lines and columns); omitted = the whole file.
    range: Option<String>,
    /// Spaces per indentation level (default 4).
    tab_size: Option<u32>,
    /// Indent with tabs.
    #[serde(default)] tabs: bool,
    #[serde(flatten)] write: Write,
});
args!(Nothing {});
args!(Raw {
    /// The LSP method, e.g. `textDocument/documentSymbol`.
    method: String,
    /// The params, sent verbatim.
    payload: Option<Value>,
    /// Or a selector (TextDocumentPositionParams) or file path (TextDocumentIdentifier).
    target: Option<String>,
});

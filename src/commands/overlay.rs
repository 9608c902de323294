//! The operations' overlay: what the MCP tools and the Python SDK's methods say and do beyond
//! what clap and the registry tell the catalog ([`super::catalog`]) — a title, the curated
//! description a model reads, the MCP annotations where they differ from what `writes`
//! implies, example calls, and the few arguments an agent gives differently from the command
//! line (a diff as text where the CLI takes a file, a JSON object where it takes JSON text, an
//! index or title, a choice that sets one of several flags, a former name). Data, one entry per
//! operation, exported with the catalog (`lanser schema operations`), so the MCP server
//! (`src/mcp/generic.rs`) and the SDK (`python/lanser/client.py`) build every tool and method
//! from the same words: neither declares an operation a second time.
//!
//! One table rather than a const beside each operation: these are the words of two surfaces,
//! read and kept consistent together (the same phrasing of "preview unless `apply`"), while an
//! operation's file says how it runs; `the_overlay_covers_the_registry` ties the two.

use serde::Serialize;

/// The MCP tool annotations of an operation (`readOnlyHint`, `destructiveHint`,
/// `idempotentHint`), when they are not what `writes` implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

impl Hints {
    /// What an operation's `writes` implies: a writer is destructive and not idempotent, any
    /// other reads only.
    pub fn of_writes(writes: bool) -> Hints {
        Hints {
            read_only: !writes,
            destructive: writes,
            idempotent: !writes,
        }
    }
}

/// One value of a [`Adapt::Choice`] and the flag (a boolean argument of the operation) it sets;
/// `None` sets none (the operation's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pick {
    pub value: &'static str,
    pub sets: Option<&'static str>,
}

/// How an agent's value of an argument becomes the command line's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Adapt {
    /// Taken as the command line takes it.
    Same,
    /// The text itself, where the command line takes a file (`--patch FILE`, `--text FILE`):
    /// it is written to a file named by its content (the same text, the same path, so the same
    /// request and bundle from every route) and that path is given.
    Text,
    /// Any JSON value, where the command line takes JSON text: given as its compact text.
    Json,
    /// An index (a number) or a title (a string): given as a string.
    IndexOrTitle,
    /// An argument the command line does not have: one of `picks` (`-` and `_` alike), each
    /// setting the flag it names. Its `id` is the agent's name for it.
    Choice { picks: &'static [Pick] },
}

/// An argument as an agent gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgOverlay {
    /// The catalog's id (the batch-line key), or a [`Adapt::Choice`]'s own name.
    pub id: &'static str,
    pub adapt: Adapt,
    /// Its description for an agent, when it is not the CLI's help ("" = the CLI's).
    pub help: &'static str,
    /// Former names (and the SDK's parameter name, where it differs), still taken for it for
    /// one release (docs/mcp.md, docs/sdk.md); never listed.
    pub aliases: &'static [&'static str],
}

/// What the MCP tool and the SDK method of one operation add to its catalog entry.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overlay {
    /// `request.cmd` (the catalog entry it is exported in names it).
    #[serde(skip)]
    pub op: &'static str,
    pub title: &'static str,
    /// The description a model reads ("" = the CLI's one-line help); the MCP tool adds how to
    /// address code when the operation takes a position.
    pub description: &'static str,
    /// `None`: [`Hints::of_writes`].
    pub hints: Option<Hints>,
    /// Example calls, each an MCP call's arguments as JSON (the SDK takes the same keys).
    pub examples: &'static [&'static str],
    /// The arguments given otherwise than on the command line, or described otherwise.
    pub args: &'static [ArgOverlay],
    /// The SDK method's positional parameters after `sel`, in order (`*name`: all the rest, as
    /// a list); empty = the command line's positionals.
    pub sdk_params: &'static [&'static str],
    /// Global options an MCP call may set for itself besides the ones every tool takes
    /// (`reward`, `tests`, `test_budget`).
    pub globals: &'static [&'static str],
}

const fn op(name: &'static str, title: &'static str, description: &'static str) -> Overlay {
    Overlay {
        op: name,
        title,
        description,
        hints: None,
        examples: &[],
        args: &[],
        sdk_params: &[],
        globals: &[],
    }
}

const fn arg(id: &'static str, adapt: Adapt, help: &'static str) -> ArgOverlay {
    ArgOverlay {
        id,
        adapt,
        help,
        aliases: &[],
    }
}

/// The safety envelope's knobs and `--dry-run`, which every writing operation takes: an MCP
/// tool takes them under these names but does not list them (unless its overlay describes
/// one, as `code-actions` does `dry_run`), since a preview is already the default and the
/// envelope is set more often by whoever runs lanser than by a model, and six writing tools
/// listing them would cost `tools/list` ~4 KB of its budget (docs/mcp.md#budget).
pub const UNLISTED: &[&str] = &[
    "dry_run",
    "apply_mode",
    "allow",
    "deny",
    "deny_apply_on_ambiguous",
];

const DIFF: &str = "A unified diff, as text (as `git diff` prints it)";

/// Every operation's overlay, in the order `tools/list` gives their tools (the most asked
/// first).
pub const OVERLAYS: &[Overlay] = &[
    op("def", "Go to definition", "Where the symbol at a position is defined (Pyright's answer, as an Analysis Bundle)."),
    op("type-def", "Go to type definition", "Where the type of the symbol at a position is defined."),
    op("decl", "Go to declaration", "Where the symbol at a position is declared (textDocument/declaration): for Python the stub the checker reads, where `def` goes to the implementation."),
    op("refs", "Find references", "Every reference to the symbol at a position, across the workspace (declaration included unless `exclude_declaration`). The text lists the first `limit` lines; `structuredContent` has them all.")
        .sdk(&["exclude_declaration"]),
    op("hover", "Hover", "The type, signature and documentation of the symbol at a position."),
    op("symbols", "Symbols", "A file's outline (`file`), or the workspace symbols matching `query`.")
        .sdk(&["file", "query"]),
    op("diag", "Diagnostics", "The diagnostics of `targets` (paths or globs, workspace-relative), each file from the server for its type, or of every file of the workspace a server serves when none are given. Always current with the files on disk.")
        .with_args(&[ArgOverlay { aliases: &["files"], ..arg("targets", Adapt::Same, "Files or globs (workspace-relative); none = every file of the workspace a server serves") }])
        .sdk(&["*targets"]),
    op("impl", "Go to implementation", "Where the symbol at a position is implemented (textDocument/implementation)."),
    op("calls", "Call hierarchy", "The callers (`incoming: true`), callees (`outgoing: true`) or both (neither) of the function at a position.")
        .with_args(&[arg("direction", Adapt::Choice { picks: &[
            Pick { value: "incoming", sets: Some("incoming") },
            Pick { value: "outgoing", sets: Some("outgoing") },
            Pick { value: "both", sets: None },
        ] }, "`incoming`, `outgoing` or `both` (default): the former spelling of the flags")])
        .sdk(&["incoming", "outgoing"]),
    op("highlight", "Highlight", "Every occurrence of the symbol at a position in its file, read or write."),
    op("signature", "Signature help", "Signature help for the call a position is inside."),
    op("locate", "Locate", "Where a selector lands, without asking the language server: the range, the symbol there, and durable selectors for it that survive later edits.")
        .sdk(&["preview"]),
    op("rename", "Rename symbol", "Rename the symbol at a position everywhere. By default a preview (a diff and the WorkspaceEdit; nothing is written); with `apply: true` it is written as one transaction (all files or none), refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`.")
        .with_examples(&[r#"{"selector": "py://app#load", "new_name": "load_all"}"#])
        .sdk(&["new_name", "apply", "allow_dirty"]),
    op("rename-file", "Move module", "Move a module file or package directory (`src` -> `dst`) and rewrite every import of it. A preview unless `apply: true` (one transaction; refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`).")
        .with_args(&[
            ArgOverlay { aliases: &["path"], ..arg("src", Adapt::Same, "") },
            ArgOverlay { aliases: &["new_path"], ..arg("dst", Adapt::Same, "") },
        ])
        .sdk(&["src", "dst", "apply", "allow_dirty"]),
    op("apply", "Apply a patch", "Apply a unified diff to the workspace as one transaction, through the rename's safety envelope. By default a preview: the diff, the plan and the diagnostics it would add or remove (nothing written); `apply: true` writes it, refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`. A hunk that no longer matches refuses the whole patch, naming the file and hunk.")
        .with_args(&[ArgOverlay { aliases: &["diff"], ..arg("patch", Adapt::Text, "A unified diff, as text (as `git diff` prints it); every hunk must match the files as they are") }])
        .sdk(&["patch", "apply", "require_clean", "allow_dirty"]),
    op("edit", "Edit a definition", "Edit the definition (function, class, method, assignment) at a position as one of its five flags says; `text` is re-indented to the target. A preview (diff + the diagnostics it would add) unless `apply: true`; `require_clean` refuses an edit that adds an error.")
        .with_args(&[
            arg("text", Adapt::Text, "The new code, as text; dedented, then indented to the target's level. Not with `delete`"),
            arg("mode", Adapt::Choice { picks: &[
                Pick { value: "replace_body", sets: Some("replace_body") },
                Pick { value: "replace", sets: Some("replace") },
                Pick { value: "insert_before", sets: Some("insert_before") },
                Pick { value: "insert_after", sets: Some("insert_after") },
                Pick { value: "delete", sets: Some("delete") },
            ] }, "`replace_body`, `replace`, `insert_before`, `insert_after` or `delete`: the flag to set"),
        ])
        .sdk(&["mode", "text", "force", "apply", "require_clean", "allow_dirty"]),
    op("code-actions", "Code actions", "List the code actions at a position (optionally of one `kind`); with `apply` (an index or title from the list) write that action as one transaction, or preview it with `dry_run`.")
        .with_args(&[
            arg("apply", Adapt::IndexOrTitle, "The action to apply, by index (as listed) or exact title; omitted = list them"),
            arg("dry_run", Adapt::Same, "With `apply`: preview that action instead of writing it"),
        ])
        .sdk(&["kind", "apply", "dry_run", "allow_dirty"]),
    op("check", "Check a patch", "The diagnostics a unified diff would add or remove, measured in memory: the files on disk are not touched. The bundle carries the process reward of the step (`reward: pr-v2` for diagnostics by kind, structural facts and, with `tests: true`, the impacted tests run on an overlay copy).")
        .with_args(&[ArgOverlay { aliases: &["diff"], ..arg("patch", Adapt::Text, DIFF) }])
        .sdk(&["patch"])
        .with_globals(&["reward", "tests", "test_budget"]),
    op("impact", "Impact of a change", "What a change can affect: the definitions a position or a unified diff touches, their callers and references (transitively, `depth` levels), partitioned into library code and the pytest tests that reach them.")
        .with_args(&[arg("patch", Adapt::Text, "A unified diff, as text, whose changed lines name the change, instead of a position")])
        .sdk(&["patch", "depth"]),
    op("status", "Status", "The configured servers, their resolved commands and versions (starts nothing)."),
    op("capabilities", "Capabilities", "Which LSP features the language server offers (definitions, references, rename, ...), as booleans, with the server's name and version."),
    Overlay {
        hints: Some(Hints { read_only: false, destructive: false, idempotent: true }),
        ..op("reload", "Reload configuration", "Re-read lanser.toml and reconfigure the running sessions.")
    },
    Overlay {
        hints: Some(Hints { read_only: false, destructive: false, idempotent: false }),
        ..op("request", "Raw LSP request", "Send a raw LSP request (`method`, params from `payload`, or a selector/file as `target`) and get the server's answer with workspace paths made relative.")
            .with_examples(&[r#"{"method": "workspace/symbol", "payload": {"query": "Store"}}"#])
            .with_args(&[arg("payload", Adapt::Json, "The params (any JSON value), sent verbatim")])
            .sdk(&["method", "payload", "target"])
    },
    op("complete", "Completion", "The completion items at a position, in the server's order (e.g. `{\"selector\": \"main.py@L15:C16\"}` just after `user.` lists `user`'s attributes and methods); `resolve: true` adds each item's detail and documentation."),
    op("types", "Type hierarchy", "The direct base classes (`supertypes: true`), subclasses (`subtypes: true`) or both (neither) of the type at a position. Needs a server with typeHierarchyProvider (ty, pyrefly, clangd; not Pyright).")
        .with_examples(&[r#"{"selector": "py://shapes.geometry#Shape", "subtypes": true}"#])
        .with_args(&[arg("direction", Adapt::Choice { picks: &[
            Pick { value: "supertypes", sets: Some("supertypes") },
            Pick { value: "subtypes", sets: Some("subtypes") },
            Pick { value: "both", sets: None },
        ] }, "`supertypes`, `subtypes` or `both` (default): the former spelling of the flags")]),
    op("inlay", "Inlay hints", "The inlay hints of a file (inferred types such as `: int`, parameter names such as `price=`), sorted by position. Needs a server with inlayHintProvider (ty, pyrefly, clangd, rust-analyzer; not Pyright).")
        .with_examples(&[r#"{"file": "src/app.py", "range": "10,1->20,1"}"#]),
    op("format", "Format file", "Format a file (or `range`, `l,c->l,c`) with the language server's formatter. By default a preview (a diff; nothing is written); with `apply: true` it is written as one transaction, refused when a file it touches holds uncommitted changes lanser did not make, unless `allow_dirty`. Needs a server with a formatter (typescript-language-server, clangd, rust-analyzer, gopls; not Pyright).")
        .with_examples(&[r#"{"file": "src/store.ts", "tab_size": 2}"#]),
    op("changes", "Changes since a revision", ""),
    op("prepare-rename", "Prepare rename", ""),
    op("selection-range", "Selection ranges", ""),
    op("source", "Source of a definition", ""),
    op("tests", "Tests for a change", "")
        .with_args(&[arg("patch", Adapt::Text, "A unified diff, as text: the tests for its change")]),
];

impl Overlay {
    const fn with_args(self, args: &'static [ArgOverlay]) -> Overlay {
        Overlay { args, ..self }
    }
    const fn with_examples(self, examples: &'static [&'static str]) -> Overlay {
        Overlay { examples, ..self }
    }
    const fn sdk(self, sdk_params: &'static [&'static str]) -> Overlay {
        Overlay { sdk_params, ..self }
    }
    const fn with_globals(self, globals: &'static [&'static str]) -> Overlay {
        Overlay { globals, ..self }
    }

    /// The overlay of one argument, by its id or a [`Adapt::Choice`]'s name.
    pub fn arg(&self, id: &str) -> Option<&'static ArgOverlay> {
        self.args.iter().find(|a| a.id == id)
    }
}

/// Operation `name`'s overlay.
pub fn of(name: &str) -> Option<&'static Overlay> {
    OVERLAYS.iter().find(|o| o.op == name)
}

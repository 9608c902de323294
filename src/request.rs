//! The typed request: an operation, its arguments and the selector it names — what the
//! command line, a batch line, the daemon and a trace all turn into before anything runs —
//! and the typed outcome a command hands back for the bundle.

use crate::bundle::{Edits, Resolution};
use crate::reward::Measured;
use serde_json::{json, Map, Value};

/// An operation and its arguments (the selector travels beside it in [`Request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Def,
    TypeDef,
    Refs {
        include_declaration: bool,
    },
    Hover,
    /// A file's outline, or workspace symbols matching `query`.
    Symbols {
        file: Option<String>,
        query: Option<String>,
    },
    /// Files or globs; empty means the whole workspace.
    Diag {
        targets: Vec<String>,
    },
    Locate {
        preview: bool,
    },
    PrepareRename,
    /// Speculative diagnostics for a unified diff (path, or `-` for stdin).
    Check {
        patch: String,
    },
    /// What a change can affect: callers, references and tests, from a selector or a patch.
    Impact {
        patch: Option<String>,
        depth: u32,
    },
    Rename {
        new_name: String,
        mutation: MutationArgs,
    },
    /// Move a module file or package directory, rewriting its imports.
    RenameFile {
        src: String,
        dst: String,
        mutation: MutationArgs,
    },
    /// List code actions, or preview/apply the one named by `pick` (index or title).
    CodeActions {
        kind: Option<String>,
        pick: Option<String>,
        mutation: MutationArgs,
    },
    /// textDocument/implementation.
    Impl,
    /// Call hierarchy, in the directions asked for.
    Calls {
        incoming: bool,
        outgoing: bool,
    },
    Highlight,
    Signature,
    Capabilities,
    Status,
    Reload,
    /// A raw request; params from `payload`, else the selector, else `file`.
    RawRequest {
        method: String,
        payload: Option<String>,
        file: Option<String>,
    },
}

impl Op {
    /// The subcommand name, as in `request.cmd`.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Def => "def",
            Op::TypeDef => "type-def",
            Op::Refs { .. } => "refs",
            Op::Hover => "hover",
            Op::Symbols { .. } => "symbols",
            Op::Diag { .. } => "diag",
            Op::Locate { .. } => "locate",
            Op::PrepareRename => "prepare-rename",
            Op::Check { .. } => "check",
            Op::Impact { .. } => "impact",
            Op::Rename { .. } => "rename",
            Op::CodeActions { .. } => "code-actions",
            Op::Impl => "impl",
            Op::Calls { .. } => "calls",
            Op::Highlight => "highlight",
            Op::Signature => "signature",
            Op::Capabilities => "capabilities",
            Op::Status => "status",
            Op::Reload => "reload",
            Op::RawRequest { .. } => "request",
            Op::RenameFile { .. } => "rename-file",
        }
    }

    /// The flags, by long name, for `request.args`.
    pub fn args(&self) -> Map<String, Value> {
        let v = match self {
            Op::Refs {
                include_declaration,
            } => json!({"include-declaration": include_declaration}),
            Op::Symbols { file, query } => json!({"file": file, "query": query}),
            Op::Diag { targets } => json!({"targets": targets}),
            Op::Locate { preview } => json!({"preview": preview}),
            Op::Rename { new_name, mutation } => {
                let mut v = mutation.to_json();
                v["new-name"] = json!(new_name);
                v
            }
            Op::CodeActions {
                kind,
                pick,
                mutation,
            } => {
                let mut v = mutation.to_json();
                v["kind"] = json!(kind);
                v["pick"] = json!(pick);
                v
            }
            Op::RenameFile { src, dst, mutation } => {
                let mut v = mutation.to_json();
                v["src"] = json!(src);
                v["dst"] = json!(dst);
                v
            }
            Op::Check { patch } => json!({ "patch": patch }),
            Op::Impact { patch, depth } => json!({ "patch": patch, "depth": depth }),
            Op::Calls { incoming, outgoing } => {
                json!({"incoming": incoming, "outgoing": outgoing})
            }
            Op::RawRequest {
                method,
                payload,
                file,
            } => {
                // The params sent, with workspace URIs made relative, are `facts.params`; the
                // payload itself would put this machine's paths into the hash domain.
                json!({"method": method, "payload": payload.is_some(), "file": file})
            }
            Op::Def
            | Op::TypeDef
            | Op::Hover
            | Op::Impl
            | Op::Highlight
            | Op::Signature
            | Op::Capabilities
            | Op::Status
            | Op::Reload
            | Op::PrepareRename => json!({}),
        };
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    /// Whether answering asks the server (the bundle then names it and its capabilities).
    pub fn uses_server(&self) -> bool {
        !matches!(self, Op::Locate { .. })
    }

    /// Whether running this operation changes what the server sees while it runs (speculative
    /// in-memory edits, or writes): such requests must not overlap with others.
    pub fn changes_server_view(&self) -> bool {
        matches!(
            self,
            Op::Rename { .. } | Op::CodeActions { .. } | Op::RenameFile { .. } | Op::Check { .. }
        )
    }

    /// Whether an answer may be served again for the same request over the same workspace (the
    /// batch and daemon memos): not `check` or `impact --patch`, which read their patch file
    /// when they run.
    pub fn memoizable(&self) -> bool {
        !matches!(self, Op::Check { .. } | Op::Impact { patch: Some(_), .. })
    }

    /// Whether this operation writes files (`--apply`): every other server session must then
    /// be brought in line with the disk.
    pub fn writes_files(&self) -> bool {
        match self {
            Op::Rename { mutation, .. }
            | Op::RenameFile { mutation, .. }
            | Op::CodeActions { mutation, .. } => mutation.apply,
            _ => false,
        }
    }

    pub fn takes_selector(&self) -> bool {
        matches!(
            self,
            Op::Def
                | Op::TypeDef
                | Op::Refs { .. }
                | Op::Hover
                | Op::Locate { .. }
                | Op::PrepareRename
                | Op::Rename { .. }
                | Op::CodeActions { .. }
                | Op::Impl
                | Op::Calls { .. }
                | Op::Highlight
                | Op::Signature
        )
    }
}

/// One request: an operation and, for the operations that take one, a selector.
#[derive(Debug, Clone)]
pub struct Request {
    pub op: Op,
    pub selector: Option<String>,
}

/// What a command produced.
pub struct Outcome {
    pub facts: Value,
    pub resolution: Option<Resolution>,
    pub complete: bool,
    /// The previewed (or applied) change, for mutations.
    pub edits: Option<Edits>,
    /// Diagnostics and safety this step measured for the process reward (read-only steps
    /// leave it out: nothing changed, every check passes).
    pub reward: Option<Measured>,
}

/// The flags of a mutating command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MutationArgs {
    /// Write the change (default: preview only).
    pub apply: bool,
    pub git_mode: bool,
    pub allow_dirty: bool,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub deny_apply_on_ambiguous: bool,
}

impl MutationArgs {
    pub fn to_json(&self) -> Value {
        json!({
            "apply": self.apply,
            "apply-mode": if self.git_mode { "git" } else { "direct" },
            "allow-dirty": self.allow_dirty,
            "allow": self.allow,
            "deny": self.deny,
            "deny-apply-on-ambiguous": self.deny_apply_on_ambiguous,
        })
    }
}

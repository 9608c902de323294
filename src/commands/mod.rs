//! The read-only commands, one file each: what a command asks the server, which facts it
//! keeps, and how it renders them for a person. The orchestrator supplies everything shared.

pub mod batch;
pub mod calls;
pub mod check;
pub mod code_actions;
pub mod def;
pub mod diag;
pub mod hover;
pub mod locate;
pub mod meta;
pub mod mutate;
pub mod nav;
pub mod pool;
pub mod raw;
pub mod refs;
pub mod rename;
pub mod rename_file;
pub mod render;
pub mod show;
pub mod symbols;
pub mod trace;

use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Outcome, Request};
use mutate::MutationArgs;
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
    /// batch and daemon memos): not `check`, which reads its patch file when it runs.
    pub fn memoizable(&self) -> bool {
        !matches!(self, Op::Check { .. })
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

/// Run `req`'s operation.
pub async fn run(o: &mut Orchestrator, req: &Request) -> Result<Outcome> {
    let selector = || {
        req.selector
            .as_deref()
            .ok_or_else(|| LanserError::usage(format!("{} needs a selector", req.op.name())))
    };
    match &req.op {
        Op::Def => def::run(o, selector()?, "textDocument/definition", "definitions").await,
        Op::TypeDef => {
            def::run(
                o,
                selector()?,
                "textDocument/typeDefinition",
                "typeDefinitions",
            )
            .await
        }
        Op::Refs {
            include_declaration,
        } => refs::run(o, selector()?, *include_declaration).await,
        Op::Hover => hover::run(o, selector()?).await,
        Op::Symbols { file, query } => symbols::run(o, file.as_deref(), query.as_deref()).await,
        Op::Diag { targets } => diag::run(o, targets).await,
        Op::Locate { preview } => locate::run(o, selector()?, *preview),
        Op::PrepareRename => rename::prepare(o, selector()?).await,
        Op::Check { patch } => check::run(o, patch).await,
        Op::Rename { new_name, mutation } => {
            rename::rename(o, selector()?, new_name, mutation).await
        }
        Op::CodeActions {
            kind,
            pick,
            mutation,
        } => code_actions::run(o, selector()?, kind.as_deref(), pick.as_deref(), mutation).await,
        Op::Impl => nav::implementation(o, selector()?).await,
        Op::Calls { incoming, outgoing } => {
            let both = !incoming && !outgoing;
            let dirs = calls::Directions {
                incoming: *incoming || both,
                outgoing: *outgoing || both,
            };
            calls::run(o, selector()?, dirs).await
        }
        Op::Highlight => nav::highlight(o, selector()?).await,
        Op::Signature => nav::signature(o, selector()?).await,
        Op::Capabilities => meta::capabilities(o).await,
        Op::Status => meta::status(o),
        Op::Reload => meta::reload(o),
        Op::RawRequest {
            method,
            payload,
            file,
        } => {
            let source = match (payload, req.selector.as_deref(), file) {
                (Some(p), ..) => raw::Source::Payload(p),
                (None, Some(s), _) => raw::Source::Selector(s),
                (None, None, Some(f)) => raw::Source::File(f),
                (None, None, None) => raw::Source::Nothing,
            };
            raw::run(o, method, source).await
        }
        Op::RenameFile { src, dst, mutation } => rename_file::run(o, src, dst, mutation).await,
    }
}

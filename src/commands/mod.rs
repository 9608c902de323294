//! The read-only commands, one file each: what a command asks the server, which facts it
//! keeps, and how it renders them for a person. The orchestrator supplies everything shared.

pub mod batch;
pub mod def;
pub mod diag;
pub mod hover;
pub mod locate;
pub mod refs;
pub mod render;
pub mod symbols;
pub mod trace;

use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Outcome, Request};
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
            Op::Def | Op::TypeDef | Op::Hover => json!({}),
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

    pub fn takes_selector(&self) -> bool {
        matches!(
            self,
            Op::Def | Op::TypeDef | Op::Refs { .. } | Op::Hover | Op::Locate { .. }
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
    }
}

//! The operations, one file each (read-only queries and mutations): what an operation asks the server, which facts it
//! keeps, and how it renders them for a person. The orchestrator supplies everything shared.

pub mod baseline;
pub mod calls;
pub mod check;
pub mod code_actions;
pub mod def;
pub mod diag;
pub mod execute;
pub mod hover;
pub mod impact;
pub mod locate;
pub mod meta;
pub mod mutate;
pub mod nav;
pub mod raw;
pub mod refs;
pub mod rename;
pub mod rename_file;
pub mod render;
pub mod route;
pub mod show;
pub mod structural;
pub mod symbols;
pub mod tests_term;

use crate::error::{LanserError, Result};
use crate::orchestrator::Orchestrator;
pub use crate::request::{Op, Outcome, Request};
pub use execute::{execute, Execute};

/// Run `req`'s operation.
pub async fn run(o: &mut Orchestrator, req: &Request) -> Result<Outcome> {
    let selector = || {
        req.selector
            .as_deref()
            .ok_or_else(|| LanserError::usage(format!("{} needs a selector", req.op.name())))
    };
    match &req.op {
        Op::Def => def::run(o, selector()?, def::Goto::Definition).await,
        Op::TypeDef => def::run(o, selector()?, def::Goto::TypeDefinition).await,
        Op::Refs {
            include_declaration,
        } => refs::run(o, selector()?, *include_declaration).await,
        Op::Hover => hover::run(o, selector()?).await,
        Op::Symbols { file, query } => symbols::run(o, file.as_deref(), query.as_deref()).await,
        Op::Diag { targets } => diag::run(o, targets).await,
        Op::Locate { preview } => locate::run(o, selector()?, *preview),
        Op::PrepareRename => rename::prepare(o, selector()?).await,
        Op::Check { patch } => check::run(o, patch).await,
        Op::Impact { patch, depth } => {
            impact::run(o, req.selector.as_deref(), patch.as_deref(), *depth).await
        }
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

//! Which server answers a request when neither `--server` nor `--server-cmd` says: the one
//! for the type of the file the request names ([`crate::config::Config::route`]), so that
//! `lanser def web/app.ts@L3:render` and `lanser def api/views.py@L9:get` work in one
//! repository without flags.
//!
//! An orchestrator that has started nothing yet becomes that server's; one that has keeps
//! a warm orchestrator per other server ([`Orchestrator::for_server`]) (the daemon and batch
//! thereby hold one session per (workspace, server); a `--jobs` batch runs such lines on its
//! own orchestrator, not on forks). A workspace-wide `diag` goes to the one server that takes
//! every source when there is one, else each server checks its own files (`commands::diag`);
//! workspace symbols ask every such server (`commands::symbols`).

use super::{Op, Request};
use crate::config::Config;
use crate::error::Result;
use crate::orchestrator::{Options, Orchestrator};
use crate::selector;
use std::collections::BTreeSet;

/// The server `req` goes to, when it is not `o`'s own (also in a traced run or a replay,
/// which answer it with [`one_server_only`]).
pub fn server_for(o: &Orchestrator, req: &Request) -> Option<String> {
    if forced(o.opts()) {
        return None;
    }
    let name = match file_of(req, o.opts()) {
        Some(path) => o.config().route(&path).to_string(),
        None if whole_workspace(req) => only_server(o.config(), &o.ws().index().sources())?,
        None => return None,
    };
    (name != o.server_def().name).then_some(name)
}

/// Whether the command line names the server (`--server`, `--server-cmd`, LANSER_SERVER_CMD).
fn forced(opts: &Options) -> bool {
    opts.server.is_some()
        || opts.server_cmd.is_some()
        || std::env::var("LANSER_SERVER_CMD").is_ok_and(|s| !s.trim().is_empty())
}

/// A workspace-wide `diag`: every source file, each checked by its own server.
fn whole_workspace(req: &Request) -> bool {
    matches!(&req.op, Op::Diag(d) if d.targets.is_empty())
}

/// The one server that takes every source of a workspace that has any (a TypeScript-only
/// repository's workspace-wide `diag` goes to its server as a whole).
fn only_server(config: &Config, sources: &[String]) -> Option<String> {
    let servers: BTreeSet<&str> = sources.iter().filter_map(|f| config.taker(f)).collect();
    match servers.into_iter().collect::<Vec<_>>()[..] {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// The file a request is about: its selector's path, else its first file argument, or the
/// first file a `check` patch changes (read here only to route, as a replay's trace recorded
/// it or from disk; not from stdin).
fn file_of(req: &Request, opts: &Options) -> Option<String> {
    if let Some(sel) = req.selector() {
        return selector::parse(sel).ok()?.path().map(str::to_string);
    }
    match &req.op {
        Op::Diag(d) => d.targets.first().cloned(),
        Op::Symbols(s) => s.file.clone(),
        Op::Check(c) if c.patch != "-" => {
            let text = opts
                .inputs
                .peek("--patch", &c.patch)
                .or_else(|| std::fs::read_to_string(opts.cwd.join(&c.patch)).ok())?;
            let files = crate::edits::patch::parse(&text).ok()?;
            files.into_iter().next().map(|f| f.path)
        }
        _ => None,
    }
}

/// For a traced process that answers one request, and its replay: pick its server before
/// anything starts (as `--server` would), so that the trace names that server and replays
/// on it.
pub fn pin(opts: &mut Options, req: &Request) -> Result<()> {
    let path = file_of(req, opts);
    if forced(opts) || (path.is_none() && !whole_workspace(req)) {
        return Ok(());
    }
    let ws = crate::workspace::Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    let config = Config::load(&ws.root)?;
    let name = match path {
        Some(path) => Some(config.route(&path).to_string()),
        None => only_server(&config, &ws.index().sources()),
    };
    if let Some(name) = name.filter(|n| *n != config.default) {
        opts.server = Some(name);
    }
    Ok(())
}

/// A traced run records one server, and its replay has only that one: a request that would go
/// to another is refused the same way in both.
pub fn one_server_only(o: &Orchestrator, name: &str) -> Option<crate::error::LanserError> {
    (o.opts().tap.is_some() || o.replays()).then(|| {
        crate::error::LanserError::usage(format!(
            "a trace records one server ({}); this request goes to {name}: trace it in a run of its own",
            o.server_def().name
        ))
    })
}

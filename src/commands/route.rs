//! Which server answers a request when neither `--server` nor `--server-cmd` says: the one
//! for the type of the file the request names ([`crate::config::Config::route`]), so that
//! `lanser def web/app.ts@L3:render` and `lanser def api/views.py@L9:get` work in one
//! repository without flags.
//!
//! The engine's [`crate::orchestrator::Router`] makes that server on first need and keeps it
//! warm beside the others (an operation that fans out asks
//! [`crate::orchestrator::Ctx::route`]), so the daemon and batch hold one session per
//! (workspace, server), and where a request goes depends on the request and the
//! configuration alone, never on what earlier requests started (a `--jobs` batch runs such
//! lines on its own orchestrator, not on forks). A workspace-wide `diag` goes to the one server that takes
//! every source when there is one, else each server checks its own files (`commands::diag`);
//! workspace symbols ask every such server (`commands::symbols`).
//!
//! A request about a file no configured server serves is refused here, before anything starts
//! ([`unserved`], `E/UNSUPPORTED`): no server is handed a file to read as its own language.

use super::Request;
use crate::config::Config;
use crate::error::Result;
use crate::orchestrator::{Ctx, Options};
use crate::selector;
use std::collections::BTreeSet;

/// The server `req` goes to, when it is not the home server `o` is the context of (also in a
/// traced run or a replay, which answer it with [`one_server_only`]).
pub fn server_for(o: &Ctx<'_>, req: &Request) -> Option<String> {
    if forced(o.opts()) {
        return None;
    }
    let name = match file_of(req, o.opts()) {
        Some(path) => o.config().route(&path).to_string(),
        None if req.op.whole_workspace() => only_server(o.config(), &o.ws().index().sources())?,
        None => return None,
    };
    (name != o.server_def().name).then_some(name)
}

/// The refusal of a request about a file no server serves (`E/UNSUPPORTED`), decided from the
/// request and the configuration alone, before any server starts: the file its selector
/// names, each file (not glob) `diag` names, the file of `symbols`, `format` or `inlay`. A
/// `--server-cmd` is the user's own program, whose types lanser does not know: not refused.
/// Writes that only measure (`apply`, `edit`, `rename-file`) and raw requests are not refused
/// here (a patch's files are sorted in `check::measure`).
pub fn unserved(o: &Ctx<'_>, req: &Request) -> Option<crate::error::LanserError> {
    let opts = o.opts();
    if !req.op.refuses_unserved() {
        return None;
    }
    let forced = forced_def(o)?;
    if self::forced(opts) && forced.is_none() {
        return None; // an unknown server: its own error
    }
    let mut files: Vec<String> = Vec::new();
    let path = req.selector().and_then(|s| selector::parse(s).ok());
    if let Some(p) = path.as_ref().and_then(|s| s.path()) {
        files.push(p.to_string());
    }
    let named = req.op.files(opts).into_iter();
    files.extend(named.filter(|t| !t.contains(['*', '?', '['])));
    // A path that does not resolve (missing, outside the workspace) is the command's own
    // error to report.
    let unserved = |f: &String| {
        let (abs, rel) = o.ws().resolve_user_path(f, &opts.cwd).ok()?;
        (!crate::servers::unserved::served(o.config().routes(), forced, &rel, &abs)).then_some(rel)
    };
    let rel = files.iter().find_map(unserved)?;
    Some(crate::servers::unserved::refusal(
        o.config().routes(),
        forced,
        &rel,
    ))
}

/// Whether the server is the user's own program (`--server-cmd`, LANSER_SERVER_CMD), whose
/// file types lanser does not know.
pub fn own_command(opts: &Options) -> bool {
    opts.server_cmd.is_some()
        || std::env::var("LANSER_SERVER_CMD").is_ok_and(|s| !s.trim().is_empty())
}

/// The server `--server` names (`Some(None)`: routed by file type), or `None` with the user's
/// own program ([`own_command`]), for which no file is refused as unserved.
pub fn forced_def<'c>(o: &'c Ctx<'_>) -> Option<Option<&'c crate::servers::ServerDef>> {
    if own_command(o.opts()) {
        return None;
    }
    Some(match (&o.opts().server, o.opts().pinned) {
        (Some(name), false) => o.config().select(Some(name)).ok(),
        _ => None,
    })
}

/// Whether the command line names the server (`--server`, `--server-cmd`, LANSER_SERVER_CMD;
/// not a server a traced run was pinned to by its file's type).
pub(crate) fn forced(opts: &Options) -> bool {
    (opts.server.is_some() && !opts.pinned) || own_command(opts)
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
    req.op.files(opts).into_iter().next()
}

/// For a traced process that answers one request, and its replay: pick its server before
/// anything starts (as `--server` would), so that the trace names that server and replays
/// on it.
pub fn pin(opts: &mut Options, req: &Request) -> Result<()> {
    let path = file_of(req, opts);
    if forced(opts) || (path.is_none() && !req.op.whole_workspace()) {
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
        opts.pinned = true;
    }
    Ok(())
}

/// A traced run records one server, and its replay has only that one: a request that would go
/// to another is refused the same way in both.
pub fn one_server_only(o: &Ctx<'_>, name: &str) -> Option<crate::error::LanserError> {
    (o.opts().tap.is_some() || o.replays()).then(|| {
        crate::error::LanserError::usage(format!(
            "a trace records one server ({}); this request goes to {name}: trace it in a run of its own",
            o.server_def().name
        ))
    })
}

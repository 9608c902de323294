//! Which server answers a request when neither `--server` nor `--server-cmd` says: the one
//! for the type of the file the request names ([`crate::config::Config::route`]), so that
//! `lanser def web/app.ts@L3:render` and `lanser def api/views.py@L9:get` work in one
//! repository without flags.
//!
//! An orchestrator that has started nothing yet becomes that server's; one that has keeps
//! a warm orchestrator per other server in [`Orchestrator::routed`] (the daemon and batch
//! thereby hold one session per (workspace, server)). A request that names no file (a
//! workspace-wide `diag`, workspace symbols) goes to the default server.

use crate::error::Result;
use crate::orchestrator::{Options, Orchestrator, Request};
use crate::request::Op;
use crate::selector;

/// The server `req` goes to, when it is not `o`'s own.
pub fn server_for(o: &Orchestrator, req: &Request) -> Option<String> {
    let forced = o.opts.server.is_some()
        || o.opts.server_cmd.is_some()
        || std::env::var("LANSER_SERVER_CMD").is_ok_and(|s| !s.trim().is_empty());
    if forced || o.replays() {
        return None;
    }
    let path = file_of(req)?;
    let name = o.config.route(&path);
    (name != o.server_def.name).then(|| name.to_string())
}

/// The file a request is about: its selector's path, else its first file argument.
fn file_of(req: &Request) -> Option<String> {
    if let Some(sel) = &req.selector {
        return selector::parse(sel).ok()?.path().map(str::to_string);
    }
    match &req.op {
        Op::Diag { targets } => targets.first().cloned(),
        Op::Symbols { file, .. } => file.clone(),
        _ => None,
    }
}

/// The orchestrator that answers for server `name`: `o` itself, made that server's, while it
/// has started nothing (`None`); else its warm orchestrator for `name`, made on first need.
pub fn orchestrator_for<'a>(
    o: &'a mut Orchestrator,
    name: &str,
) -> Result<Option<&'a mut Orchestrator>> {
    let pinned = Options {
        server: Some(name.to_string()),
        ..o.opts.clone()
    };
    if o.session.is_none() && o.routed.is_empty() && o.server_spec().is_none() {
        let mut own = Orchestrator::new(pinned)?;
        own.ws = o.ws.clone();
        // Still routed: a later request for another file type goes to its own server.
        own.opts.server = None;
        *o = own;
        return Ok(None);
    }
    if !o.routed.contains_key(name) {
        let mut other = Orchestrator::new(pinned.clone())?;
        other.ws = o.ws.clone();
        o.routed.insert(name.to_string(), other);
    }
    let other = o.routed.get_mut(name).expect("inserted above");
    other.opts = pinned;
    Ok(Some(other))
}

/// For a process that answers one request: pick its server before anything starts (as
/// `--server` would), so that a trace of it names that server and replays on it.
pub fn pin(opts: &mut Options, req: &Request) -> Result<()> {
    let forced = opts.server.is_some()
        || opts.server_cmd.is_some()
        || std::env::var("LANSER_SERVER_CMD").is_ok_and(|s| !s.trim().is_empty());
    let Some(path) = file_of(req).filter(|_| !forced) else {
        return Ok(());
    };
    let ws = crate::workspace::Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    let config = crate::config::Config::load(&ws.root)?;
    let name = config.route(&path);
    if name != config.default {
        opts.server = Some(name.to_string());
    }
    Ok(())
}

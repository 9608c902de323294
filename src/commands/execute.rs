//! From a request to its sealed bundle: run the command ([`super::run`], which hands its typed
//! facts back erased to JSON by [`Outcome::erase`], the one place facts are serialized),
//! assemble the envelope ([`Orchestrator::assemble`]), score the step (pr-v1), record the
//! document versions and seal. The engine ([`crate::orchestrator`]) never calls a command; this is
//! where the two meet, and the only place in `commands/` that holds the engine: an operation
//! is handed a [`Ctx`], the pieces of it an operation may use.

use super::{Outcome, Request};
use crate::bundle::Bundle;
use crate::bundle::RequestEcho;
use crate::error::{ErrorCode, LanserError, Result};
use crate::orchestrator::{ms, Orchestrator, Rejected};
use crate::reward::Measured;
use crate::selector;
use serde_json::{json, Value};
use std::future::Future;
use std::time::Instant;

/// `orch.execute(&request)`: [`execute`] as a method of the orchestrator.
pub trait Execute {
    /// Run one request; failures become error bundles, never panics.
    fn execute<'a>(&'a mut self, req: &'a Request) -> impl Future<Output = Bundle> + Send + 'a;
}

impl Execute for Orchestrator {
    fn execute<'a>(&'a mut self, req: &'a Request) -> impl Future<Output = Bundle> + Send + 'a {
        execute(self, req)
    }
}

/// Run one request; failures become error bundles, never panics. A request for a file of
/// another server's type is answered by that server ([`super::route`]).
pub async fn execute(o: &mut Orchestrator, req: &Request) -> Bundle {
    let home = o.home().to_string();
    if let Some(refused) = super::route::unserved(&o.home_ctx(), req) {
        return finish(o, &home, req, Err(refused), Instant::now()).await;
    }
    let routed = super::route::server_for(&o.home_ctx(), req);
    if let Some(name) = &routed {
        if let Some(refused) = super::route::one_server_only(&o.home_ctx(), name) {
            return finish(o, &home, req, Err(refused), Instant::now()).await;
        }
    }
    let at = routed.unwrap_or(home);
    let started = Instant::now();
    let outcome = match req.selector().map(selector::parse) {
        Some(Err(e)) => Err(e),
        _ => match o.ctx(&at) {
            Ok(mut cx) => super::run(&mut cx, req).await,
            Err(e) => Err(e),
        },
    };
    #[cfg(debug_assertions)]
    edit_while_running(o);
    finish(o, &at, req, outcome, started).await
}

/// Debug builds only: with `LANSER_TEST_EDIT_DURING=<relative path>` in a process's
/// environment, its first request prepends a line to that file after the command has run and
/// before the bundle records the documents' versions — an edit landing while a request runs,
/// on demand, for tests.
#[cfg(debug_assertions)]
pub const EDIT_DURING_ENV: &str = "LANSER_TEST_EDIT_DURING";

#[cfg(debug_assertions)]
fn edit_while_running(o: &Orchestrator) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static DONE: AtomicBool = AtomicBool::new(false);
    let Ok(rel) = std::env::var(EDIT_DURING_ENV) else {
        return;
    };
    if DONE.swap(true, Ordering::SeqCst) {
        return;
    }
    let path = o.ws().root.join(rel);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let _ = std::fs::write(&path, format!("# edited while a request ran\n{text}"));
    }
}

/// The bundle `req` gets when its command fails with `err` (the daemon's answer when the
/// workspace kept changing while the request ran).
pub async fn failed(o: &mut Orchestrator, req: &Request, err: LanserError) -> Bundle {
    let home = o.home().to_string();
    finish(o, &home, req, Err(err), Instant::now()).await
}

/// Assemble (as server `at` answered), score, record the document versions and seal.
async fn finish(
    o: &mut Orchestrator,
    at: &str,
    req: &Request,
    mut outcome: Result<Outcome<Value>>,
    started: Instant,
) -> Bundle {
    let echo = RequestEcho {
        cmd: req.op.name().to_string(),
        selector: req.selector().and_then(|s| selector::parse(s).ok()),
        args: req.op.args(),
        index_io: o.opts().index_io,
    };
    let mut bundle = o
        .assemble(at, echo, outcome.as_mut().ok(), req.op.paged())
        .await;
    let reached_server = match &outcome {
        Ok(_) => req.op.uses_server(),
        Err(e) => req.op.uses_server() && !failed_before_server(e.code),
    };
    if !reached_server {
        // Whether an earlier request started a server must not change this bundle.
        bundle.environment.server = None;
        bundle.capabilities = json!({});
    }
    bundle.process_reward = Some(process_reward(o, at, &bundle, outcome.as_ref().ok()).await);
    if let Err(e) = &outcome {
        bundle.set_error(e);
        bundle.resolution = e.source_as::<Rejected>().map(|r| r.0.clone());
    }
    if o.opts().timing {
        bundle.meta.timing = Some(json!({
            "totalMs": ms(started.elapsed()),
            "serverStartMs": o.start_ms(at),
        }));
    }
    bundle.record_doc_versions(o.ws());
    keep_snapshots(o, &bundle);
    bundle.seal();
    bundle
}

/// Keep the text of every file version the bundle records (`meta.docVersions`) in the
/// snapshot store, so `changes --since-bundle` and stale selectors can read it later. It
/// never changes the bundle.
fn keep_snapshots(o: &Orchestrator, bundle: &Bundle) {
    let store = crate::relocate::snapshot::Store::open();
    for (rel, version) in &bundle.meta.doc_versions {
        if let Some(file) = o.ws().snapshot_file(rel) {
            store.keep_file(version, &file);
        }
    }
}

/// The process reward for this step: the command's measurements, `--prev-bundle`'s D_{t-1} (measuring
/// D_t on the target's file when the command did not), the resolution's confidence. A
/// failed step scores S = 0.
async fn process_reward(
    o: &mut Orchestrator,
    at: &str,
    bundle: &Bundle,
    outcome: Option<&Outcome<Value>>,
) -> Value {
    let ok = outcome.is_some();
    let mut m = outcome.and_then(|o| o.reward.clone()).unwrap_or(Measured {
        d_prev: None,
        d_now: None,
        safety: u8::from(ok),
        ..Default::default()
    });
    if let (Some(prev), None) = (o.opts().prev_d, m.d_prev) {
        m.d_prev = Some(prev);
        if let (None, Some(res), true) = (m.d_now, &bundle.resolution, ok) {
            let file = [res.resolved.path.clone()];
            if let Ok(mut cx) = o.cx(at) {
                if let Ok(map) = crate::measure::speculate::pull(&mut cx, &file).await {
                    m.d_now = Some(crate::measure::speculate::count(&map));
                }
            }
        }
    }
    let confidence = bundle
        .resolution
        .as_ref()
        .map(|r| r.confidence)
        .unwrap_or(if ok { 1.0 } else { 0.0 });
    o.opts().reward.score(&m, confidence)
}

/// Errors raised while reading the request and the files, before anything is asked.
fn failed_before_server(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::BadSelectorSyntax
            | ErrorCode::NotFound
            | ErrorCode::Ambiguous
            | ErrorCode::IndexingMismatch
            | ErrorCode::VersionSkew
            | ErrorCode::IndexingUnsupported
            | ErrorCode::Unsupported
            | ErrorCode::Usage
    )
}

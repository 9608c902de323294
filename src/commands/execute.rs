//! From a request to its sealed bundle: run the command ([`super::run`]), assemble the
//! envelope ([`Orchestrator::assemble`]), score the step (pr-v1), record the document
//! versions and seal. The engine ([`crate::orchestrator`]) never calls a command; this is
//! where the two meet.

use crate::bundle::Bundle;
use crate::bundle::RequestEcho;
use crate::error::ErrorCode;
use crate::orchestrator::{ms, Orchestrator, Outcome, Request};
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

/// Run one request; failures become error bundles, never panics.
pub async fn execute(o: &mut Orchestrator, req: &Request) -> Bundle {
    let started = Instant::now();
    o.clear_rejected();
    let spec = req.selector.as_deref().map(selector::parse);
    let echo = RequestEcho {
        cmd: req.op.name().to_string(),
        selector: spec.as_ref().and_then(|s| s.as_ref().ok().cloned()),
        args: req.op.args(),
        index_io: o.opts.index_io,
    };
    let outcome = match spec {
        Some(Err(e)) => Err(e),
        _ => super::run(o, req).await,
    };
    let mut bundle = o.assemble(echo, outcome.as_ref().ok()).await;
    let reached_server = match &outcome {
        Ok(_) => req.op.uses_server(),
        Err(e) => req.op.uses_server() && !failed_before_server(e.code),
    };
    if !reached_server {
        // Whether an earlier request started a server must not change this bundle.
        bundle.environment.server = None;
        bundle.capabilities = json!({});
    }
    bundle.process_reward = Some(process_reward(o, &bundle, outcome.as_ref().ok()).await);
    if let Err(e) = &outcome {
        bundle.set_error(e);
        bundle.resolution = o.take_rejected();
    }
    if o.opts.timing {
        bundle.meta.timing = Some(json!({
            "totalMs": ms(started.elapsed()),
            "serverStartMs": o.start_ms(),
        }));
    }
    bundle.record_doc_versions(&o.ws);
    bundle.seal();
    bundle
}

/// The process reward for this step: the command's measurements, `--prev-bundle`'s D_{t-1} (measuring
/// D_t on the target's file when the command did not), the resolution's confidence. A
/// failed step scores S = 0.
async fn process_reward(o: &mut Orchestrator, bundle: &Bundle, outcome: Option<&Outcome>) -> Value {
    let ok = outcome.is_some();
    let mut m = outcome.and_then(|o| o.reward.clone()).unwrap_or(Measured {
        d_prev: None,
        d_now: None,
        safety: u8::from(ok),
        ..Default::default()
    });
    if let (Some(prev), None) = (o.opts.prev_d, m.d_prev) {
        m.d_prev = Some(prev);
        if let (None, Some(res), true) = (m.d_now, &bundle.resolution, ok) {
            let file = [res.resolved.path.clone()];
            if let Ok(map) = crate::speculate::pull(o, &file).await {
                m.d_now = Some(crate::speculate::count(&map));
            }
        }
    }
    let confidence = bundle
        .resolution
        .as_ref()
        .map(|r| r.confidence)
        .unwrap_or(if ok { 1.0 } else { 0.0 });
    o.opts.reward.score(&m, confidence)
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
            | ErrorCode::Usage
    )
}

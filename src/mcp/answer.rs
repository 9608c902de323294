//! Answering one tool call as `lanser batch` answers a request line, so the bundle is the one
//! the CLI prints. The call's line is parsed here, once, and its options set over the server's
//! own (typed); the parsed request goes to the workspace's warm daemon (shared with every CLI
//! call on the workspace), writes included, else is answered in this process — a patch given
//! as text (`check --patch -`), a line that is not a request, and every call once the daemon
//! cannot be used (but never a write the daemon still holds). Then the compact text a model
//! reads, paged.

use super::tools::Call;
use crate::batch::{line_error, LineParser};
use crate::bundle::{Bundle, Status};
use crate::cli::Global;
use crate::commands::Execute;
use crate::commands::Request;
use crate::daemon::client::{routable, routable_line, Held};
use crate::daemon::{DaemonError, Paths};
use crate::error::Result;
use crate::inputs::{InputRec, Inputs};
use crate::orchestrator::Orchestrator;
use crate::workspace::Workspace;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Shuts the daemon connection in it down when dropped (a no-op once the answer is read).
struct Hangup(Arc<Held>);

impl Drop for Hangup {
    fn drop(&mut self) {
        let stream = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = stream {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// What answers calls for one workspace.
pub struct Answerer {
    pub ws: Workspace,
    cwd: PathBuf,
    /// The global options `lanser mcp` was started with: every call runs under them, with
    /// what the call sets over them.
    base: Global,
    use_daemon: bool,
    /// Built once: building clap's command tree costs more than answering a warm request.
    parser: std::sync::Mutex<LineParser>,
    /// The in-process orchestrator for lines the daemon does not take (calls with the base
    /// options; others get their own for the call).
    local: tokio::sync::Mutex<Option<Orchestrator>>,
}

impl Answerer {
    pub fn new(ws: Workspace, cwd: PathBuf, base: Global, use_daemon: bool) -> Answerer {
        Answerer {
            ws,
            cwd,
            base,
            use_daemon,
            parser: std::sync::Mutex::new(LineParser::default()),
            local: tokio::sync::Mutex::new(None),
        }
    }

    /// The bundle for `call`, as one line of JCS. The call's line is parsed here, once; the
    /// daemon is sent the parsed request.
    pub async fn answer(&self, call: &Call) -> Result<String> {
        let global = call.globals.over(&self.base)?;
        let request = self
            .parser
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .parse(&call.line.to_string());
        let remote = match &request {
            // A write goes to the daemon too (as a CLI write does): its warm session checks the
            // change, and no second server runs in this process; concurrent writes are ordered
            // by the workspace lock, as two processes' are.
            Ok(r) if self.use_daemon && call.stdin_patch.is_none() => {
                (routable_line(&r.op) || (r.op.writes_files() && routable(&r.op))).then_some(r)
            }
            _ => None,
        };
        if let Some(request) = remote {
            let writes = request.op.writes_files();
            match self.ask_daemon(&global, request).await {
                Ok(Some(jcs)) => return Ok(jcs),
                // A write the daemon still holds is never run a second time here: it may yet
                // write, and this process would race it.
                Err(e) if writes && Paths::for_root(&self.ws.root).live_pid().is_some() => {
                    return Err(crate::daemon::client::unanswered_write(global.timeout, &e));
                }
                _ => {}
            }
        }
        self.answer_here(call, &global, request).await
    }

    /// `request` answered by the workspace's daemon as a batch line under `global`; `Ok(None)`
    /// when it declined.
    async fn ask_daemon(
        &self,
        global: &Global,
        request: &Request,
    ) -> std::result::Result<Option<String>, DaemonError> {
        let wait = crate::daemon::client::answer_wait(
            Duration::from_secs_f64(global.timeout.clamp(1.0, 86_400.0)),
            request.op.writes_files(),
        );
        let (root, cwd, global, request) = (
            self.ws.root.clone(),
            self.cwd.clone(),
            global.clone(),
            request.clone(),
        );
        // Dropped before the answer (a cancelled call), this hangs up on the daemon, which
        // then drops the request and cancels it at the server.
        let hangup = Hangup(Arc::new(Held::default()));
        let held = hangup.0.clone();
        let asked = tokio::task::spawn_blocking(move || {
            crate::daemon::batch::answer_request(&root, &cwd, global, request, wait, Some(&held))
        })
        .await;
        drop(hangup);
        asked.unwrap_or_else(|e| Err(DaemonError::Protocol(e.to_string())))
    }

    async fn answer_here(
        &self,
        call: &Call,
        global: &Global,
        request: std::result::Result<Request, crate::batch::BadLine>,
    ) -> Result<String> {
        let own = !call.globals.is_empty() || call.stdin_patch.is_some();
        let mut guard = self.local.lock().await;
        let mut fresh = None;
        let orch = match own {
            false => {
                if guard.is_none() {
                    *guard = Some(Orchestrator::new(global.options()?)?);
                }
                guard.as_mut().expect("made above")
            }
            true => {
                let mut opts = global.options()?;
                if let Some(patch) = &call.stdin_patch {
                    opts.inputs = Inputs::recorded(&[InputRec {
                        arg: "--patch".into(),
                        path: "-".into(),
                        digest: Some(crate::digest::sha256_tagged(patch.as_bytes())),
                        content: Some(patch.clone()),
                        error: None,
                    }]);
                }
                fresh.insert(Orchestrator::new(opts)?)
            }
        };
        let bundle = match request {
            Ok(request) => orch.execute(&request).await,
            Err(crate::batch::BadLine { cmd, why }) => {
                line_error(orch, call.number, cmd, &why).await
            }
        };
        if let Some(o) = fresh {
            o.close().await;
        }
        Ok(bundle.to_jcs())
    }

    /// Close the in-process session, if one was started.
    pub async fn close(&self) {
        if let Some(o) = self.local.lock().await.take() {
            o.close().await;
        }
    }
}

/// The most lines a text answer shows of anything that is not a paged list.
const MAX_LINES: usize = 200;

/// The text a model reads: an error's one line, else the human rendering with the bundle's
/// list cut to `limit` entries from `offset`, and the count and how to see more when cut.
pub fn text_of(bundle: &Bundle, ws: &Workspace, offset: usize, limit: usize) -> String {
    if bundle.status == Status::Error {
        return match &bundle.error {
            Some(e) => e.one_line(),
            None => "error".into(),
        };
    }
    let list = crate::commands::facts_paged(&bundle.request.cmd).and_then(|k| {
        let n = bundle.facts.get(k)?.as_array()?.len();
        Some((k, n))
    });
    let mut footer = String::new();
    let mut shown = bundle.clone();
    if let Some((key, total)) = list.filter(|(_, n)| offset > 0 || *n > limit) {
        let start = offset.min(total);
        let end = start.saturating_add(limit).min(total);
        if let Some(items) = shown.facts.get_mut(key).and_then(|v| v.as_array_mut()) {
            *items = items[start..end].to_vec();
        }
        footer = format!(
            "[{key} {}-{end} of {total}{}; structuredContent has all {total}]\n",
            start + 1,
            match total - end {
                0 => String::new(),
                n => format!("; {n} more: call again with offset={end}"),
            }
        );
    }
    let full = crate::commands::render::render(&shown, ws);
    let lines: Vec<&str> = full.lines().collect();
    let mut out = match lines.len() > MAX_LINES {
        true => format!(
            "{}\n[{} more lines; structuredContent has the whole bundle]\n",
            lines[..MAX_LINES].join("\n"),
            lines.len() - MAX_LINES
        ),
        false => full,
    };
    out.push_str(&footer);
    out
}

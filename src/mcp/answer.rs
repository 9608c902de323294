//! Answering one tool call as `lanser batch` answers a request line, so the bundle is the one
//! the CLI prints: through the workspace's warm daemon (shared with every CLI call on the
//! workspace) when the line may go there, else in this process — writes (`apply`), a patch
//! given as text (`check --patch -`), and every line once the daemon cannot be used. Then the
//! compact text a model reads, paged.

use super::tools::Call;
use crate::batch::{line_error, LineParser};
use crate::bundle::{Bundle, Status};
use crate::cli::Cli;
use crate::commands::Execute;
use crate::daemon::client::{routable, routable_line, Held};
use crate::error::{LanserError, Result};
use crate::inputs::{InputRec, Inputs};
use crate::orchestrator::Orchestrator;
use crate::workspace::Workspace;
use clap::Parser;
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
    /// The `lanser mcp` command line without its subcommand: the global options every call
    /// runs under unless the call sets its own.
    base: Vec<String>,
    use_daemon: bool,
    /// Built once: building clap's command tree costs more than answering a warm request.
    parser: std::sync::Mutex<LineParser>,
    /// The in-process orchestrator for lines the daemon does not take (calls with the base
    /// options; others get their own for the call).
    local: tokio::sync::Mutex<Option<Orchestrator>>,
}

impl Answerer {
    pub fn new(ws: Workspace, cwd: PathBuf, base: Vec<String>, use_daemon: bool) -> Answerer {
        Answerer {
            ws,
            cwd,
            base,
            use_daemon,
            parser: std::sync::Mutex::new(LineParser::default()),
            local: tokio::sync::Mutex::new(None),
        }
    }

    /// The `lanser batch` command line a call runs under.
    fn argv(&self, call: &Call) -> Vec<String> {
        let mut argv = vec!["lanser".to_string()];
        let set: Vec<&str> = call.globals.iter().step_by(2).map(String::as_str).collect();
        let mut skip = false;
        for a in &self.base {
            if std::mem::take(&mut skip) {
                continue;
            }
            let name = a.split('=').next().unwrap_or(a);
            if set.contains(&name) {
                skip = !a.contains('=');
                continue;
            }
            argv.push(a.clone());
        }
        argv.extend(call.globals.iter().cloned());
        argv.extend(["batch", "--in", "-", "--out", "-"].map(String::from));
        argv
    }

    /// The bundle for `call`, as one line of JCS.
    pub async fn answer(&self, call: &Call) -> Result<String> {
        let line = call.line.to_string();
        let argv = self.argv(call);
        let request = self
            .parser
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .parse(&line);
        let remote = self.use_daemon
            && call.stdin_patch.is_none()
            // A write goes to the daemon too (as a CLI write does): its warm session checks the
            // change, and no second server runs in this process; concurrent writes are ordered
            // by the workspace lock, as two processes' are.
            && request
                .as_ref()
                .is_ok_and(|r| routable_line(&r.op) || (r.op.writes_files() && routable(&r.op)));
        if remote {
            let timeout = call_timeout(&argv);
            let (root, cwd, argv2, line2) = (
                self.ws.root.clone(),
                self.cwd.clone(),
                argv.clone(),
                line.clone(),
            );
            // Dropped before the answer (a cancelled call), this hangs up on the daemon, which
            // then drops the request and cancels it at the server.
            let hangup = Hangup(Arc::new(Held::default()));
            let held = hangup.0.clone();
            let asked = tokio::task::spawn_blocking(move || {
                crate::daemon::batch::answer_line(&root, &cwd, argv2, line2, timeout, Some(&held))
            })
            .await;
            drop(hangup);
            if let Ok(Ok(Some(jcs))) = asked {
                return Ok(jcs);
            }
        }
        self.answer_here(call, &argv, request).await
    }

    async fn answer_here(
        &self,
        call: &Call,
        argv: &[String],
        request: std::result::Result<crate::commands::Request, crate::batch::BadLine>,
    ) -> Result<String> {
        let cli = Cli::try_parse_from(argv).map_err(|e| LanserError::usage(e.to_string()))?;
        let own = !call.globals.is_empty() || call.stdin_patch.is_some();
        let mut guard = self.local.lock().await;
        let mut fresh = None;
        let orch = match own {
            false => {
                if guard.is_none() {
                    *guard = Some(Orchestrator::new(cli.global.options()?)?);
                }
                guard.as_mut().expect("made above")
            }
            true => {
                let mut opts = cli.global.options()?;
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

/// How long a call may wait for the daemon: the request timeout (the last `--timeout` of the
/// command line, else 60 s), thrice, plus the time a cold start takes.
fn call_timeout(argv: &[String]) -> Duration {
    let mut secs = 60.0;
    for (i, a) in argv.iter().enumerate() {
        let v = match a.strip_prefix("--timeout") {
            Some("") => argv.get(i + 1).map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        if let Some(s) = v.and_then(|v| v.parse::<f64>().ok()) {
            secs = s;
        }
    }
    Duration::from_secs_f64(secs.clamp(1.0, 86_400.0)) * 3 + Duration::from_secs(30)
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

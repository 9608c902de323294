//! The daemon's side of a `lanser batch` stream ([`ToDaemon::Batch`](super::ToDaemon::Batch)):
//! the batch's options arrive once and each request line as its client parsed it (a value,
//! parsed once, there), answered as the in-process batch writes it — each line costs its
//! answer, not a connection. (A single request, from the CLI or a `lanser mcp` tool call,
//! arrives on a connection of its own: [`ToDaemon::Ask`](super::ToDaemon::Ask).)
//!
//! Every line of a stream is answered as a line on its own connection is: the freshness sync,
//! the memo, the crash retry. When the client hangs up, the line being answered is dropped if
//! it only reads (as for a connection of its own) and the lines it had sent are not answered.
//! A stream whose batch reads an input file starts reading it ahead: the modules its `py://`
//! lines name are parsed on the other core while the first lines are answered.

use super::{reply, Daemon, FromDaemon, GONE};
use crate::cli::Global;
use crate::daemon::transport::{ServerRead, ServerWrite};
use crate::daemon::StreamLine;
use crate::error::{LanserError, Result};
use crate::orchestrator::Options;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What a batch's lines run under, read once for all of them.
pub(super) struct BatchArgs {
    opts: Options,
    /// What every line's memo key holds besides the line's request: the global options (not
    /// --in/--out/--jobs), the working directory and --prev-bundle's D.
    scope: super::Scope,
}

impl BatchArgs {
    pub(super) fn new(cwd: &Path, global: &Global) -> Result<BatchArgs> {
        let opts = crate::daemon::options_in(cwd, global)?;
        let scope = super::Scope::new(global, cwd, &opts);
        Ok(BatchArgs { opts, scope })
    }
}

async fn send(write: &mut ServerWrite, msg: &FromDaemon) -> std::io::Result<()> {
    let mut text = serde_json::to_string(msg).unwrap_or_default();
    text.push('\n');
    write.write_all(text.as_bytes()).await
}

impl Daemon {
    /// Line `line_no` of the batch `args`, as its client parsed it, answered as the
    /// in-process batch answers it.
    pub(super) async fn batch_line(
        &self,
        args: &BatchArgs,
        line_no: usize,
        parsed: std::result::Result<crate::commands::Request, crate::batch::BadLine>,
    ) -> Result<String> {
        let request = match parsed {
            Ok(r) if crate::daemon::client::routable_line(&r.op) => r,
            Ok(_) => return Err(LanserError::usage("not a request the daemon answers")),
            Err(crate::batch::BadLine { cmd, why }) => {
                // Not a request: the batch's error bundle (which names no server).
                let mut engine = self.engine.lock().await;
                self.prepare(&mut engine, &args.opts).await?;
                let orch = engine.orch.as_mut().expect("prepared");
                let b = crate::batch::line_error(orch, line_no, cmd, &why).await;
                return Ok(b.to_jcs());
            }
        };
        let asked = super::Asked {
            scope: args.scope.clone(),
            request: request.clone(),
            as_line: true,
        };
        // A failure before the server is answered on the warm orchestrator, as the in-process
        // batch answers it on its session.
        self.answer(args.opts.clone(), &request, &asked, false)
            .await
    }

    /// A batch stream, after its opening message: `Ready`, then one answer per line read,
    /// in order, until the client hangs up.
    pub(super) async fn batch_stream(
        &self,
        mut reader: BufReader<ServerRead>,
        mut write: ServerWrite,
        cwd: PathBuf,
        global: &Global,
        input: Option<PathBuf>,
    ) -> std::io::Result<()> {
        let args = match BatchArgs::new(&cwd, global) {
            Ok(a) => a,
            Err(e) => {
                send(&mut write, &reply(Err(e))).await?;
                return write.shutdown().await;
            }
        };
        send(&mut write, &FromDaemon::Ready).await?;
        let (lines, mut next) = tokio::sync::mpsc::unbounded_channel();
        let (hung_up, gone) = tokio::sync::watch::channel(false);
        let reading = tokio::task::spawn_local(async move {
            let mut text = String::new();
            loop {
                text.clear();
                match reader.read_line(&mut text).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if lines
                            .send(serde_json::from_str::<StreamLine>(&text))
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
            let _ = hung_up.send(true);
        });
        let stop = Arc::new(AtomicBool::new(false));
        if let Some(input) = input {
            self.read_ahead(&args.opts, &input, stop.clone()).await;
        }
        let mut outcome = Ok(());
        while let Some(msg) = next.recv().await {
            if *gone.borrow() {
                break;
            }
            self.last.set(Instant::now());
            self.requests.set(self.requests.get() + 1);
            let answer = match msg {
                Ok(l) => {
                    let answer = self.batch_line(&args, l.line_no, l.parsed);
                    reply(GONE.scope(gone.clone(), answer).await)
                }
                Err(e) => FromDaemon::Failed {
                    exit: 1,
                    line: format!("lanser: daemon: unreadable batch line: {e}"),
                },
            };
            if let Err(e) = send(&mut write, &answer).await {
                outcome = Err(e);
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        reading.abort();
        outcome?;
        write.shutdown().await
    }

    /// Parse the modules `input`'s lines name on the other core until `stop` is set (see
    /// [`crate::orchestrator::Orchestrator::prefetch_parses`]).
    async fn read_ahead(&self, opts: &Options, input: &Path, stop: Arc<AtomicBool>) {
        let modules = crate::batch::py_modules(input);
        if modules.is_empty() {
            return;
        }
        let mut engine = self.engine.lock().await;
        if self.prepare(&mut engine, opts).await.is_ok() {
            if let Some(orch) = engine.orch.as_ref() {
                orch.prefetch_parses(modules, stop);
            }
        }
    }
}

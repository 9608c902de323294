//! The daemon's side of `lanser batch`: request lines parsed under the batch command line's
//! global options and answered as the in-process batch writes them — one line per connection
//! ([`ToDaemon::Line`](super::ToDaemon::Line), as `lanser mcp` sends them), or a whole batch on
//! one connection ([`ToDaemon::Batch`](super::ToDaemon::Batch)): the command line is parsed
//! once, and each line costs its answer, not a connection and a command-line parse.
//!
//! Every line of a stream is answered as a line on its own connection is: the freshness sync,
//! the memo, the crash retry. When the client hangs up, the line being answered is dropped if
//! it only reads (as for a connection of its own) and the lines it had sent are not answered.
//! A stream whose batch reads an input file starts reading it ahead: the modules its `py://`
//! lines name are parsed on the other core while the first lines are answered.

use super::{reply, Daemon, FromDaemon, GONE};
use crate::cli::{Cli, Command};
use crate::daemon::transport::{ServerRead, ServerWrite};
use crate::daemon::StreamLine;
use crate::error::{LanserError, Result};
use crate::orchestrator::Options;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A batch command line, parsed once for all its lines.
pub(super) struct BatchArgs {
    cli: Cli,
    opts: Options,
    cwd: PathBuf,
    /// What every line's memo key starts with: the global options (not --in/--out/--jobs),
    /// the working directory and --prev-bundle's D.
    key: String,
}

impl BatchArgs {
    pub(super) fn parse(cwd: &Path, argv: &[String]) -> Result<BatchArgs> {
        let (cli, opts) = parse_argv(cwd, argv)?;
        if !matches!(cli.command, Command::Batch { .. }) {
            return Err(LanserError::usage("a request line outside a batch"));
        }
        let key = format!(
            "line\0{:?}\0{}\0{:?}",
            cli.global,
            cwd.display(),
            opts.prev_d
        );
        Ok(BatchArgs {
            cli,
            opts,
            cwd: cwd.to_path_buf(),
            key,
        })
    }

    /// The batch's input file, when it is one (not stdin).
    fn input(&self) -> Option<PathBuf> {
        match &self.cli.command {
            Command::Batch { input, .. } if input != "-" => Some(self.cwd.join(input)),
            _ => None,
        }
    }
}

/// The CLI's parse of `argv` run in `cwd`, and its options.
pub(super) fn parse_argv(cwd: &Path, argv: &[String]) -> Result<(Cli, Options)> {
    let mut cli = Cli::try_parse_from(argv)
        .map_err(|e| LanserError::usage(e.to_string().lines().next().unwrap_or("").to_string()))?;
    cli.global.prev_bundle = cli.global.prev_bundle.map(|p| cwd.join(p));
    let mut opts = cli.global.options()?;
    opts.cwd = cwd.to_path_buf();
    Ok((cli, opts))
}

async fn send(write: &mut ServerWrite, msg: &FromDaemon) -> std::io::Result<()> {
    let mut text = serde_json::to_string(msg).unwrap_or_default();
    text.push('\n');
    write.write_all(text.as_bytes()).await
}

impl Daemon {
    /// Line `line_no` of the batch `args`: parsed as the in-process batch parses it, and
    /// answered like a command line.
    pub(super) async fn batch_line(
        &self,
        args: &BatchArgs,
        line_no: usize,
        text: &str,
    ) -> Result<String> {
        let parsed = self.parser.borrow_mut().parse(text);
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
        let asked = super::Asked::Line {
            batch: args.key.clone(),
            request: request.clone(),
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
        argv: Vec<String>,
    ) -> std::io::Result<()> {
        let args = match BatchArgs::parse(&cwd, &argv) {
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
        if let Some(input) = args.input() {
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
                    let answer = self.batch_line(&args, l.line_no, &l.line);
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

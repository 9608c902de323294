//! lanser: a CLI orchestrator that pins a language server (Pyright) and turns its answers into
//! deterministic Analysis Bundles for coding agents and CI.
//!
//! The library API is [`orchestrator::Orchestrator`] (one workspace, one server session) with
//! [`commands::Execute`]: `orch.execute(&request)` turns a [`commands::Request`] (say
//! `Request::parse(["refs", "a.py@L3:x"])`) into a sealed
//! bundle. [`run`] is the command line on top of it. README "Architecture" maps the modules.

pub mod batch;
pub mod bundle;
pub mod cli;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod digest;
pub mod document;
pub mod edits;
pub mod env;
pub mod error;
pub mod exit;
pub mod home;
pub mod inputs;
pub mod languages;
pub mod lsp;
pub mod mcp;
pub mod memo;
pub mod orchestrator;
pub mod outcome;
pub mod python;
pub mod relocate;
pub mod replay;
pub mod reward;
pub mod safety;
pub mod schema;
pub mod selector;
pub mod servers;
pub mod speculate;
pub mod testrun;
pub mod text;
pub mod tools;
pub mod trace;
pub mod trust;
pub mod workspace;

use crate::commands::Execute;
use clap::{CommandFactory, Parser};
use error::LanserError;
use exit::ExitStatus;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--verbose`: error lines are followed by their causes.
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Run the command line: the status to exit with, or the error that ended the run (which
/// [`report`] prints).
pub fn run() -> Result<ExitStatus, LanserError> {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return Ok(ExitStatus::Relayed(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    VERBOSE.store(cli.global.verbose, Ordering::Relaxed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LanserError::internal(format!("tokio runtime: {e}")).with_source(e))?;
    runtime.block_on(run_cli(cli))
}

/// Print the error that ended a run (with its causes under `--verbose`); its exit status.
pub fn report(err: &LanserError) -> ExitStatus {
    eprintln!("lanser: {err}");
    print_causes(&err.causes());
    ExitStatus::Failed(err.code)
}

async fn run_cli(cli: cli::Cli) -> Result<ExitStatus, LanserError> {
    match &cli.command {
        cli::Command::Batch { servers, .. } => {
            // Through the workspace's warm daemon unless opted out, traced, or asked for
            // several server sessions of its own (the daemon has one).
            if servers.is_none_or(|k| k <= 1) {
                if let Some(answered) = daemon::batch::run(&cli).await {
                    return answered;
                }
            }
            return batch::main(cli).await;
        }
        cli::Command::Trace { .. } => return replay::subcommand::main(cli).await,
        cli::Command::Mcp(args) => {
            mcp::serve(&cli.global, args).await?;
            return Ok(ExitStatus::Success);
        }
        cli::Command::Schema { action } => return schema_main(action),
        cli::Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(*shell, &mut cli::Cli::command(), "lanser", &mut out);
            return emit(&String::from_utf8_lossy(&out));
        }
        _ => {}
    }
    let mut opts = cli.global.options()?;
    if let cli::Command::Daemon { action } = &cli.command {
        return daemon::command(action, &cli.global, &opts).await;
    }
    let Some(request) = cli.command.request() else {
        let text = match &cli.command {
            cli::Command::Setup { all } => tools::setup(&opts, *all)?,
            cli::Command::Reward {
                from_bundles,
                weights,
            } => tools::reward(from_bundles, weights.as_deref(), cli.global.json)?,
            _ => tools::doctor(&opts)?,
        };
        return emit(&text);
    };
    // A traced run names the server its file's type routes to up front, so that its trace
    // header and replay have it (untraced runs route in `commands::execute`).
    if cli.global.trace_file.is_some() {
        commands::route::pin(&mut opts, &request)?;
    }
    // A traced run records its own frames, so it is answered in this process.
    if cli.global.trace_file.is_none() {
        if let Some(answered) = daemon::client::answer(&cli, &opts, &request) {
            return answered;
        }
    }
    let recorder = trace::recorder::begin(cli.global.trace_file.as_deref(), &mut opts)?;
    let mut orch = orchestrator::Orchestrator::new(opts)?;
    if let Some(r) = &recorder {
        r.header_for(&mut orch, cli.global.trace_sources).await;
    }
    let bundle = orch.execute(&request).await;
    if let Some(r) = &recorder {
        r.op(1, &batch::own_request_line(), false, &bundle);
    }
    let text = if cli.global.json {
        format!("{}\n", bundle.to_jcs())
    } else {
        commands::render::render(&bundle, orch.ws())
    };
    // The answer goes out before the server is shut down (a busy server may take its grace
    // period to answer `shutdown`); a traced run prints once its trace is complete.
    let shown = recorder.is_none().then(|| show(&bundle, &text));
    orch.close().await;
    if let Some(r) = recorder {
        r.finish()?;
    }
    shown.unwrap_or_else(|| show(&bundle, &text))
}

/// Print a bundle's text, and its error on stderr; the exit status it stands for.
pub(crate) fn show(bundle: &bundle::Bundle, text: &str) -> Result<ExitStatus, LanserError> {
    emit(text)?;
    if let Some(err) = &bundle.error {
        eprintln!("lanser: {}: {}", err.code, err.message);
        print_causes(&err.causes);
    }
    Ok(bundle.exit_status())
}

/// `lanser schema …`: its report on stdout, then its exit status (E/USAGE: an invalid
/// document).
fn schema_main(action: &schema::cmd::SchemaCmd) -> Result<ExitStatus, LanserError> {
    let (status, text) = schema::cmd::run(action)?;
    emit(&text)?;
    Ok(status)
}

/// Print to stdout; a closed pipe is not an error.
pub(crate) fn emit(text: &str) -> Result<ExitStatus, LanserError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(ExitStatus::Success),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitStatus::Success),
        Err(e) => Err(LanserError::internal(format!("stdout: {e}")).with_source(e)),
    }
}

/// With `--verbose`, an error's source chain, one `caused by:` line per cause.
fn print_causes(causes: &[String]) {
    if VERBOSE.load(Ordering::Relaxed) {
        for cause in causes {
            eprintln!("  caused by: {cause}");
        }
    }
}

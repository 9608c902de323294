//! lanser: a CLI orchestrator that pins a language server (Pyright) and turns its answers into
//! deterministic Analysis Bundles for coding agents and CI.
//!
//! The library API is [`orchestrator::Orchestrator`] (one workspace, one server session) with
//! [`commands::Execute`]: `orch.execute(&request)` turns a [`request::Request`] into a sealed
//! bundle. [`run`] is the command line on top of it. README "Architecture" maps the modules.

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
pub mod home;
pub mod inputs;
pub mod languages;
pub mod lsp;
pub mod mcp;
pub mod orchestrator;
pub mod relocate;
pub mod request;
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
pub mod workspace;

use crate::commands::Execute;
use clap::{CommandFactory, Parser};
use error::LanserError;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--verbose`: error lines are followed by their causes.
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Run the command line; returns the process exit status.
pub fn run() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    VERBOSE.store(cli.global.verbose, Ordering::Relaxed);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(&LanserError::internal(format!("tokio runtime: {e}"))),
    };
    runtime.block_on(run_cli(cli))
}

async fn run_cli(cli: cli::Cli) -> ExitCode {
    match &cli.command {
        cli::Command::Batch { servers, .. } => {
            // Through the workspace's warm daemon unless opted out, traced, or asked for
            // several server sessions of its own (the daemon has one).
            if servers.is_none_or(|k| k <= 1) {
                if let Some(answered) = daemon::batch::run(&cli).await {
                    return commands::batch::exit(answered);
                }
            }
            return commands::batch::main(cli).await;
        }
        cli::Command::Trace { .. } => return commands::trace::main(cli).await,
        cli::Command::Mcp => {
            return match mcp::serve(&cli.global).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            }
        }
        cli::Command::Schema { action } => return schema_main(action),
        cli::Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(*shell, &mut cli::Cli::command(), "lanser", &mut out);
            return emit(&String::from_utf8_lossy(&out));
        }
        _ => {}
    }
    let mut opts = match cli.global.options() {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    if let cli::Command::Daemon { action } = &cli.command {
        return daemon::command(action, &cli.global, &opts).await;
    }
    let Some(request) = cli.command.request() else {
        let result = match &cli.command {
            cli::Command::Setup => tools::setup(&opts),
            cli::Command::Reward {
                from_bundles,
                weights,
            } => tools::reward(from_bundles, weights.as_deref(), cli.global.json),
            _ => tools::doctor(&opts),
        };
        return match result {
            Ok(text) => emit(&text),
            Err(e) => fail(&e),
        };
    };
    // A traced run names the server its file's type routes to up front, so that its trace
    // header and replay have it (untraced runs route in `commands::execute`).
    if cli.global.trace_file.is_some() {
        if let Err(e) = commands::route::pin(&mut opts, &request) {
            return fail(&e);
        }
    }
    // A traced run records its own frames, so it is answered in this process.
    if cli.global.trace_file.is_none() {
        if let Some(code) = daemon::client::answer(&cli, &opts, &request) {
            return code;
        }
    }
    let recorder = match trace::recorder::begin(cli.global.trace_file.as_deref(), &mut opts) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let mut orch = match orchestrator::Orchestrator::new(opts) {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    if let Some(r) = &recorder {
        r.header_for(&mut orch, cli.global.trace_sources).await;
    }
    let bundle = orch.execute(&request).await;
    if let Some(r) = &recorder {
        r.op(1, &commands::batch::own_request_line(), false, &bundle);
    }
    let text = if cli.global.json {
        format!("{}\n", bundle.to_jcs())
    } else {
        commands::render::render(&bundle, &orch.ws)
    };
    // The answer goes out before the server is shut down (a busy server may take its grace
    // period to answer `shutdown`); a traced run prints once its trace is complete.
    let shown = recorder.is_none().then(|| show(&bundle, &text));
    orch.close().await;
    if let Some(Err(e)) = recorder.map(|r| r.finish()) {
        return fail(&e);
    }
    shown.unwrap_or_else(|| show(&bundle, &text))
}

/// Print a bundle's text, and its error on stderr; the exit status it stands for.
pub(crate) fn show(bundle: &bundle::Bundle, text: &str) -> ExitCode {
    let code = emit(text);
    match &bundle.error {
        Some(err) => {
            eprintln!("lanser: {}: {}", err.code, err.message);
            print_causes(&err.causes);
            ExitCode::from(bundle.meta.exit_code)
        }
        None => code,
    }
}

/// `lanser schema …`: its report on stdout, then its exit status (2: an invalid document).
fn schema_main(action: &schema::cmd::SchemaCmd) -> ExitCode {
    match schema::cmd::run(action) {
        Ok((code, text)) => {
            let printed = emit(&text);
            if code == 0 {
                printed
            } else {
                ExitCode::from(code)
            }
        }
        Err(e) => fail(&e),
    }
}

/// Print to stdout; a closed pipe is not an error.
pub(crate) fn emit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&LanserError::internal(format!("stdout: {e}"))),
    }
}

pub(crate) fn fail(err: &LanserError) -> ExitCode {
    eprintln!("lanser: {err}");
    print_causes(&err.causes());
    ExitCode::from(err.code.exit_code())
}

/// With `--verbose`, an error's source chain, one `caused by:` line per cause.
fn print_causes(causes: &[String]) {
    if VERBOSE.load(Ordering::Relaxed) {
        for cause in causes {
            eprintln!("  caused by: {cause}");
        }
    }
}

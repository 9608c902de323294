//! lanser: a CLI orchestrator that pins a language server (Pyright) and turns its answers into
//! deterministic Analysis Bundles for coding agents and CI.
//!
//! The library API is [`orchestrator::Orchestrator`]: requests in, bundles out, over one
//! server session. [`run`] is the command line on top of it.

pub mod bundle;
pub mod cli;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod digest;
pub mod edits;
pub mod env;
pub mod error;
pub mod lsp;
pub mod orchestrator;
pub mod relocate;
pub mod reward;
pub mod safety;
pub mod selector;
pub mod servers;
pub mod speculate;
pub mod text;
pub mod tools;
pub mod workspace;

use clap::Parser;
use error::LanserError;
use std::io::Write;
use std::process::ExitCode;

/// Run the command line; returns the process exit status.
pub fn run() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
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
    let opts = match cli.global.options() {
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
    if let Some(code) = daemon::client::answer(&cli, &opts, &request) {
        return code;
    }
    let mut orch = match orchestrator::Orchestrator::new(opts) {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    let bundle = orch.execute(&request).await;
    let text = if cli.global.json {
        format!("{}\n", bundle.to_jcs())
    } else {
        commands::render::render(&bundle, &orch.ws)
    };
    orch.close().await;
    let code = emit(&text);
    match &bundle.error {
        Some(err) => {
            eprintln!("lanser: {}: {}", err.code, err.message);
            ExitCode::from(bundle.meta.exit_code)
        }
        None => code,
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
    ExitCode::from(err.code.exit_code())
}

//! The command line's driver: parse the arguments, send each subcommand where it is answered
//! (the workspace's warm daemon, a batch, `trace`, the MCP server, `schema`, the tools, or an
//! orchestrator in this process), print its answer and say which status to exit with. The top of
//! the crate: nothing in it is called back from below.

use crate::batch;
use crate::cli;
use crate::commands::{self, Execute};
use crate::daemon;
use crate::error::LanserError;
use crate::exit::ExitStatus;
use crate::mcp;
use crate::orchestrator;
use crate::output;
use crate::replay;
use crate::schema;
use crate::tools;
use crate::trace;
use clap::{CommandFactory, FromArgMatches};

/// Run the command line: the status to exit with, or the error that ended the run (which
/// [`output::report`] prints).
pub fn run() -> Result<ExitStatus, LanserError> {
    // Parsed once: the matches also give a traced run its request line.
    cli::note_parse("command-line");
    let parsed = cli::Cli::command()
        .try_get_matches()
        .and_then(|m| cli::Cli::from_arg_matches(&m).map(|c| (c, m)));
    let (cli, matches) = match parsed {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return Ok(ExitStatus::Relayed(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    output::set_verbose(cli.global.verbose);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LanserError::internal("cannot start the tokio runtime").with_source(e))?;
    runtime.block_on(run_cli(cli, matches))
}

async fn run_cli(cli: cli::Cli, matches: clap::ArgMatches) -> Result<ExitStatus, LanserError> {
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
            if let Some(cli::McpCmd::Install(install)) = &args.action {
                return output::emit(&mcp::install::run(&cli.global, install)?);
            }
            mcp::serve(&cli.global, args).await?;
            return Ok(ExitStatus::Success);
        }
        cli::Command::Schema { action } => return schema_main(action),
        cli::Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(*shell, &mut cli::Cli::command(), "lanser", &mut out);
            return output::emit(&String::from_utf8_lossy(&out));
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
        return output::emit(&text);
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
        let line = batch::request_line(&matches).unwrap_or_default();
        r.op(1, &line, false, &bundle);
    }
    let text = if cli.global.json {
        format!("{}\n", bundle.to_jcs())
    } else {
        commands::render::render(&bundle, orch.ws())
    };
    // The answer goes out before the server is shut down (a busy server may take its grace
    // period to answer `shutdown`); a traced run prints once its trace is complete.
    let shown = recorder.is_none().then(|| output::show(&bundle, &text));
    orch.close().await;
    if let Some(r) = recorder {
        r.finish()?;
    }
    shown.unwrap_or_else(|| output::show(&bundle, &text))
}

/// `lanser schema …`: its report on stdout, then its exit status (E/USAGE: an invalid
/// document).
fn schema_main(action: &schema::cmd::SchemaCmd) -> Result<ExitStatus, LanserError> {
    let (status, text) = schema::cmd::run(action)?;
    output::emit(&text)?;
    Ok(status)
}

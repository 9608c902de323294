//! `lanser trace list|show|replay --trace-file T` (docs/traces.md): read a trace back, filter its
//! operations, and replay them offline (`--verify`: byte-compare, exit 76 on any difference).

use super::{self as replay, verify_op};
use crate::bundle::Bundle;
use crate::cli::Cli;
pub use crate::cli::{Filter, TraceCmd};
use crate::error::{ErrorCode, LanserError, Result};
use crate::exit::ExitStatus;
use crate::trace::{OpRec, Trace};
use crate::workspace::Workspace;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

impl Filter {
    fn keeps(&self, op: &OpRec) -> bool {
        self.operation.as_deref().is_none_or(|c| op.cmd() == c)
            && self
                .selector
                .as_deref()
                .is_none_or(|s| op.selector().contains(s))
            && self.exit_code.is_none_or(|c| op.exit_code() == c)
            && self.status.as_deref().is_none_or(|s| op.status() == s)
    }
}

pub async fn main(cli: Cli) -> Result<ExitStatus> {
    let crate::cli::Command::Trace { action } = &cli.command else {
        return Err(LanserError::internal("not a trace command"));
    };
    let (status, text, err) = run(&cli, action).await?;
    crate::output::emit(&text)?;
    if let Some(e) = err {
        eprintln!("lanser: {e}");
    }
    Ok(status)
}

fn trace_path(cli: &Cli) -> Result<PathBuf> {
    cli.global
        .trace_file
        .clone()
        .ok_or_else(|| LanserError::usage("trace commands need --trace-file FILE"))
}

/// (exit status, stdout, one stderr line).
async fn run(cli: &Cli, action: &TraceCmd) -> Result<(ExitStatus, String, Option<String>)> {
    let trace = Trace::load(&trace_path(cli)?)?;
    match action {
        TraceCmd::List { filter } => {
            let mut out = String::new();
            for op in trace.ops.iter().filter(|o| filter.keeps(o)) {
                if cli.global.json {
                    let row = json!({
                        "n": op.n, "line": op.line, "cmd": op.cmd(), "selector": op.selector(),
                        "status": op.status(), "exitCode": op.exit_code(), "memo": op.memo,
                        "bundleId": op.bundle["bundleId"],
                    });
                    let _ = writeln!(out, "{}", serde_jcs::to_string(&row).unwrap_or_default());
                } else {
                    let _ = writeln!(
                        out,
                        "{:>4}  {:<5} {:>3}  {:<10} {}",
                        op.n,
                        op.status(),
                        op.exit_code(),
                        op.cmd(),
                        op.selector()
                    );
                }
            }
            Ok((ExitStatus::Success, out, None))
        }
        TraceCmd::Show { n, filter } => {
            let picked: Vec<&OpRec> = match n {
                Some(n) => vec![trace.ops.iter().find(|o| o.n == *n).ok_or_else(|| {
                    LanserError::not_found(format!(
                        "the trace has no operation {n} (it has {})",
                        trace.ops.len()
                    ))
                })?],
                None => trace.ops.iter().filter(|o| filter.keeps(o)).collect(),
            };
            let ws = Workspace::new(PathBuf::from(&trace.header.root));
            let mut out = String::new();
            for op in picked {
                if cli.global.json {
                    let _ = writeln!(
                        out,
                        "{}",
                        serde_jcs::to_string(&op.bundle).unwrap_or_default()
                    );
                } else {
                    let bundle: Bundle =
                        serde_json::from_value(op.bundle.clone()).map_err(|e| {
                            LanserError::new(
                                ErrorCode::ReplayMismatch,
                                format!("operation {} is not a bundle", op.n),
                            )
                            .with_source(e)
                        })?;
                    let _ = writeln!(out, "# {} {} {}", op.n, op.cmd(), op.selector());
                    out.push_str(&crate::commands::render::render(&bundle, &ws));
                }
            }
            Ok((ExitStatus::Success, out, None))
        }
        TraceCmd::Replay { verify, op } => replay_cmd(cli, &trace, *verify, *op).await,
    }
}

async fn replay_cmd(
    cli: &Cli,
    trace: &Trace,
    verify: bool,
    only: Option<usize>,
) -> Result<(ExitStatus, String, Option<String>)> {
    if let Some(n) = only.filter(|n| !trace.ops.iter().any(|o| o.n == *n)) {
        return Err(LanserError::not_found(format!(
            "the trace has no operation {n} (it has {})",
            trace.ops.len()
        )));
    }
    let workspace = cli.global.workspace.as_ref().map(|w| {
        std::env::current_dir()
            .map(|c| c.join(w))
            .unwrap_or(w.clone())
    });
    let result = replay::replay(trace, workspace.as_deref()).await?;
    let selected = |n: usize| only.is_none_or(|o| o == n);
    let mut out = String::new();
    let mut exit = ExitStatus::Success;
    for (i, a) in result.answers.iter().enumerate() {
        if selected(i + 1) {
            out.push_str(&a.bundle.to_jcs());
            out.push('\n');
            exit = exit.or(a.bundle.exit_status());
        }
    }
    let mismatch = || -> Option<String> {
        if let Some(w) = &result.workspace_mismatch {
            return Some(w.clone());
        }
        if only.is_none() && result.answers.len() != trace.ops.len() {
            return Some(format!(
                "the trace holds {} operations, the replay produced {}",
                trace.ops.len(),
                result.answers.len()
            ));
        }
        for (i, rec) in trace.ops.iter().enumerate().filter(|(_, r)| selected(r.n)) {
            if let Some(m) = verify_op(rec, result.answers.get(i).map(|a| &a.bundle)) {
                return Some(m);
            }
        }
        result.divergence.clone()
    };
    match (verify, mismatch()) {
        (true, Some(m)) => {
            let e = LanserError::new(ErrorCode::ReplayMismatch, m);
            Ok((ExitStatus::Failed(e.code), out, Some(e.to_string())))
        }
        (false, Some(m)) => Ok((exit, out, Some(format!("warning: replay differs: {m}")))),
        (_, None) => Ok((exit, out, None)),
    }
}

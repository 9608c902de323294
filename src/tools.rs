//! The commands that need no server session: `lanser setup` (install the pinned servers now),
//! `lanser doctor` (what lanser would run, on which Node, and every other server's state) and `lanser reward --from-bundles`
//! (recompute recorded process rewards).

use crate::env;
use crate::error::{LanserError, Result};
use crate::orchestrator::Options;
use crate::servers::{self, node};
use crate::workspace::Workspace;
use std::fmt::Write;

/// The configuration of the workspace `opts` names; the built-in one where there is none.
fn config_of(opts: &Options) -> Result<crate::config::Config> {
    match Workspace::discover(opts.workspace.as_deref(), &opts.cwd) {
        Ok(ws) => Ok(crate::config::Config::load(&ws.root)?),
        Err(_) if opts.workspace.is_none() => Ok(crate::config::Config::builtin()),
        Err(e) => Err(e),
    }
}

/// Install the selected server (the default, or `--server NAME`), or with `all` every
/// configured one, unless it is there; one line each saying where.
pub fn setup(opts: &Options, all: bool) -> Result<String> {
    let config = config_of(opts)?;
    if !all {
        return servers::setup(config.select(opts.server.as_deref())?);
    }
    let (out, failed) = servers::setup_all(&config.servers);
    if failed.is_empty() {
        return Ok(out);
    }
    print!("{out}");
    Err(LanserError::crash(format!(
        "{} of {} servers could not be installed: {} (each line above says what to run)",
        failed.len(),
        config.servers.len(),
        failed.join(", ")
    )))
}

/// `node: v20.20.2 (/usr/bin/node: the system's, on PATH)`, and npm's line.
fn node_lines(out: &mut String) {
    let found = node::search(false);
    let passed = if found.passed_over.is_empty() {
        String::new()
    } else {
        format!("; {}", found.passed_over.join("; "))
    };
    let Some(n) = found.node else {
        writeln!(
            out,
            "node: none usable{passed}; `lanser setup` installs {} {} from PyPI into the cache",
            node::NODE_PACKAGE,
            node::NODE_VERSION
        )
        .ok();
        return;
    };
    writeln!(
        out,
        "node: {} ({}: {}{passed})",
        n.version,
        n.exe.display(),
        n.origin.as_str()
    )
    .ok();
    let npm = n.npm().and_then(|mut c| c.arg("--version").output().ok());
    match (npm, n.npm_path()) {
        (Some(o), Some(path)) if o.status.success() => {
            let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
            writeln!(out, "npm: {v} ({})", path.display()).ok();
        }
        _ => {
            writeln!(out, "npm: none beside this node").ok();
        }
    }
}

/// Report the toolchain; fails with 65 when no server can be run.
pub fn doctor(opts: &Options) -> Result<String> {
    let mut out = String::new();
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    writeln!(out, "lanser {}", env!("CARGO_PKG_VERSION")).ok();
    writeln!(out, "workspace: {}", ws.root.display()).ok();
    writeln!(out, "cache: {}", crate::home::lanser_home().display()).ok();
    node_lines(&mut out);
    let python = env::find_python(&ws);
    let info = env::probe_python(&ws, python.as_deref());
    writeln!(
        out,
        "python: {} {}",
        info.exe.as_deref().unwrap_or("not found"),
        info.version.as_deref().unwrap_or("")
    )
    .ok();
    let config = crate::config::Config::load(&ws.root)?;
    let def = config.select(opts.server.as_deref())?;
    let pinned = match def.version {
        Some(_) => def.label(),
        None => "nothing".into(),
    };
    match servers::resolve(&ws.root, opts.server_cmd.as_deref(), def, false) {
        Ok(spec) => {
            writeln!(
                out,
                "server: {} ({})",
                spec.command.join(" "),
                spec.source.as_str()
            )
            .ok();
            let pkg = spec
                .package
                .map(|(n, v)| format!("{n} {v}"))
                .unwrap_or_else(|| "unknown (read from serverInfo at run time)".into());
            writeln!(out, "server version: {pkg} (pinned: {pinned})").ok();
            others(&mut out, &config, &def.name);
            Ok(out)
        }
        Err(e) => {
            writeln!(out, "server: {}: cannot be run (below)", def.name).ok();
            others(&mut out, &config, &def.name);
            print!("{out}");
            Err(e)
        }
    }
}

/// One line per other server: the file types it takes, where it is found and its version, or
/// how to install it.
fn others(out: &mut String, config: &crate::config::Config, selected: &str) {
    for d in config.servers.values().filter(|d| d.name != selected) {
        let version = d.version.as_deref().unwrap_or("(the toolchain's)");
        let types = d.file_types.join(" ");
        writeln!(
            out,
            "  {} {version} [{types}]: {}",
            d.name,
            servers::state(d)
        )
        .ok();
        if let Some((tool, advice)) = servers::diagnostics_need(&d.name) {
            let found = servers::which(tool).map_or_else(
                || format!("not on PATH: {advice}"),
                |p| p.display().to_string(),
            );
            writeln!(out, "    its diagnostics need {tool}: {found}").ok();
        }
    }
}

/// Recompute each recorded bundle's reward from its recorded inputs: one line per bundle
/// (JSONL with `--json`). A recorded r that does not match is `E/REPLAY_MISMATCH` (76) unless
/// other weights were asked for.
pub fn reward(files: &[std::path::PathBuf], weights: Option<&str>, json: bool) -> Result<String> {
    use crate::error::ErrorCode;
    use crate::reward::recompute;
    let mut out = String::new();
    let mut total = 0.0;
    let mut mismatch = None;
    let mut step = 0;
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| {
            LanserError::not_found(format!("cannot read {}", f.display())).with_source(e)
        })?;
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let bundle: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                LanserError::usage(format!("{}:{}: not a bundle", f.display(), i + 1))
                    .with_source(e)
            })?;
            let again = recompute(&bundle, weights)?;
            let recorded = again.recorded;
            step += 1;
            total += again.r;
            // A recorded p must be the one the live path gives the recomputed terms; a bundle
            // without one (recorded before p, or without tests) gets it recomputed.
            let p_differs = again.recorded_p.is_some() && again.recorded_p != again.p;
            let same = recorded == again.r && !p_differs;
            if !same && weights.is_none() && mismatch.is_none() {
                let show = |p: Option<f64>| p.map_or("none".to_string(), |p| p.to_string());
                mismatch = Some(if recorded != again.r {
                    format!(
                        "{}:{}: recorded r {recorded} but the recorded inputs give {}",
                        f.display(),
                        i + 1,
                        again.r
                    )
                } else {
                    format!(
                        "{}:{}: recorded p {} but the recorded inputs give {}",
                        f.display(),
                        i + 1,
                        show(again.recorded_p),
                        show(again.p)
                    )
                });
            }
            let id = bundle["bundleId"].as_str().unwrap_or_default();
            if json {
                let line = serde_json::json!({
                    "step": step, "bundleId": id, "recorded": recorded, "r": again.r,
                    "recordedP": again.recorded_p, "p": again.p,
                    "match": same, "components": again.components, "weights": again.weights,
                });
                writeln!(
                    out,
                    "{}",
                    serde_jcs::to_string(&line).expect("values canonicalize")
                )
                .ok();
            } else {
                let p = again.p.map(|p| format!(", p = {p}")).unwrap_or_default();
                writeln!(
                    out,
                    "{step}: r = {}{p} ({})  {id}",
                    again.r, again.explanation
                )
                .ok();
            }
        }
    }
    if !json {
        writeln!(
            out,
            "{step} steps, total r = {}",
            (total * 1e9).round() / 1e9
        )
        .ok();
    }
    match mismatch {
        Some(m) => {
            print!("{out}");
            Err(LanserError::new(ErrorCode::ReplayMismatch, m))
        }
        None => Ok(out),
    }
}

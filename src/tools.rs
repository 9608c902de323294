//! The commands that need no server session: `lanser setup` (install the pinned server now),
//! `lanser doctor` (what lanser would run, and with what) and `lanser reward --from-bundles`
//! (recompute recorded process rewards).

use crate::env;
use crate::error::{LanserError, Result};
use crate::lsp::provision::{self, PYRIGHT_VERSION};
use crate::orchestrator::Options;
use crate::workspace::Workspace;
use std::fmt::Write;
use std::process::Command;

fn version_of(program: &str) -> Option<String> {
    let path = provision::which(program)?;
    let out = Command::new(&path).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some(format!("{v} ({})", path.display()))
}

/// Install the managed Pyright (or the `--server` one) unless it is there; report where.
pub fn setup(opts: &Options) -> Result<String> {
    if let Some(name) = opts.server.as_deref() {
        let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
        let config = crate::config::Config::load(&ws.root)?;
        let def = config.select(Some(name))?;
        if !def.is_builtin_pyright() {
            return crate::servers::setup(def);
        }
    }
    let dir = provision::managed_dir();
    let entry = dir.join("node_modules/pyright/langserver.index.js");
    let fresh = !entry.is_file();
    if fresh {
        provision::install_managed(&dir)?;
    }
    let version = provision::package_of(&entry)
        .map(|p| p.1)
        .ok_or_else(|| LanserError::crash(format!("{} has no package.json", dir.display())))?;
    if version != PYRIGHT_VERSION {
        return Err(LanserError::crash(format!(
            "{} holds pyright {version}, not the pinned {PYRIGHT_VERSION}; remove it and run `lanser setup` again",
            dir.display()
        )));
    }
    let verb = if fresh {
        "installed"
    } else {
        "already installed"
    };
    Ok(format!("pyright {version} {verb} at {}\n", dir.display()))
}

/// Report the toolchain; fails with 65 when no server can be run.
pub fn doctor(opts: &Options) -> Result<String> {
    let mut out = String::new();
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    writeln!(out, "lanser {}", env!("CARGO_PKG_VERSION")).ok();
    writeln!(out, "workspace: {}", ws.root.display()).ok();
    writeln!(out, "cache: {}", provision::lanser_home().display()).ok();
    for tool in ["node", "npm"] {
        let v = version_of(tool).unwrap_or_else(|| "not found on PATH".into());
        writeln!(out, "{tool}: {v}").ok();
    }
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
    let pinned = crate::servers::label(def);
    match crate::servers::resolve(&ws.root, opts.server_cmd.as_deref(), def, false) {
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
            print!("{out}");
            Err(e)
        }
    }
}

/// One line per other server: the file types it takes and whether it can run here.
fn others(out: &mut String, config: &crate::config::Config, selected: &str) {
    use crate::config::Provision;
    for d in config.servers.values().filter(|d| d.name != selected) {
        let dir = crate::servers::install_dir(d);
        let state = match d.provision {
            Provision::None => match crate::lsp::provision::which(&d.command) {
                Some(p) => format!("on PATH ({})", p.display()),
                None => crate::languages::how_to_install(&d.name)
                    .map_or_else(|| format!("{} not on PATH", d.command), str::to_string),
            },
            _ if crate::servers::installed(d, &dir) => format!("installed ({})", dir.display()),
            _ => format!("not installed: `lanser setup --server {}`", d.name),
        };
        let version = d.version.as_deref().unwrap_or("(the user's)");
        let types = d.file_types.join(" ");
        writeln!(out, "  {} {version} [{types}]: {state}", d.name).ok();
        if let Some((tool, advice)) = crate::languages::diagnostics_need(&d.name) {
            let found = crate::lsp::provision::which(tool).map_or_else(
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
        let text = std::fs::read_to_string(f)
            .map_err(|e| LanserError::not_found(format!("{}: {e}", f.display())))?;
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let bundle: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                LanserError::usage(format!("{}:{}: not a bundle: {e}", f.display(), i + 1))
            })?;
            let again = recompute(&bundle, weights)?;
            let recorded = again.recorded;
            step += 1;
            total += again.r;
            let same = recorded == again.r;
            if !same && weights.is_none() && mismatch.is_none() {
                mismatch = Some(format!(
                    "{}:{}: recorded r {recorded} but the recorded inputs give {}",
                    f.display(),
                    i + 1,
                    again.r
                ));
            }
            let id = bundle["bundleId"].as_str().unwrap_or_default();
            if json {
                let line = serde_json::json!({
                    "step": step, "bundleId": id, "recorded": recorded, "r": again.r,
                    "match": same, "components": again.components, "weights": again.weights,
                });
                writeln!(
                    out,
                    "{}",
                    serde_jcs::to_string(&line).expect("values canonicalize")
                )
                .ok();
            } else {
                writeln!(out, "{step}: r = {} ({})  {id}", again.r, again.explanation).ok();
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

//! Finding, and when needed installing, the pinned language server
//! (docs/workspace.md#server-resolution).
//!
//! Resolution order: `--server-cmd` / `LANSER_SERVER_CMD`; the workspace's
//! `node_modules/.bin/pyright-langserver`; the managed install
//! `$LANSER_HOME/pyright/<version>/`, installed with npm on first need. The version recorded in
//! bundles is read from the installed package's `package.json` (Pyright sends no serverInfo).

use crate::error::{LanserError, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The pinned Pyright release.
pub const PYRIGHT_VERSION: &str = "1.1.407";

/// Where the server command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Flag,
    Workspace,
    Managed,
    /// A `lanser.toml` server with `provision = "none"`: its command, as configured.
    Configured,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Flag => "--server-cmd",
            Source::Workspace => "workspace node_modules",
            Source::Managed => "managed install",
            Source::Configured => "lanser.toml command",
        }
    }
}

/// A server ready to spawn.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub command: Vec<String>,
    pub source: Source,
    /// Package name and version read from its package.json, when known.
    pub package: Option<(String, String)>,
}

pub use crate::home::lanser_home;

/// The managed install directory for the pinned version.
pub fn managed_dir() -> PathBuf {
    lanser_home().join("pyright").join(PYRIGHT_VERSION)
}

/// Whether the pinned Pyright is installed in lanser's cache.
pub fn managed_installed() -> bool {
    managed_entry(&managed_dir()).is_file()
}

fn managed_entry(dir: &Path) -> PathBuf {
    dir.join("node_modules/pyright/langserver.index.js")
}

/// First executable called `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Split a command line on whitespace, honouring simple single and double quotes.
pub fn split_command(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut has = false;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                has = true;
            }
            (None, c) if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The nearest `package.json` at or above `file` (after resolving symlinks): name, version.
pub fn package_of(file: &Path) -> Option<(String, String)> {
    let real = file.canonicalize().ok()?;
    for dir in real.ancestors().skip(1) {
        let pj = dir.join("package.json");
        if let Ok(text) = std::fs::read_to_string(&pj) {
            let v: Value = serde_json::from_str(&text).ok()?;
            let name = v.get("name")?.as_str()?.to_string();
            let version = v.get("version")?.as_str()?.to_string();
            return Some((name, version));
        }
    }
    None
}

fn node_missing(what: &str) -> LanserError {
    LanserError::crash(format!(
        "{what}: node and npm are not on PATH; install Node.js 18 or newer with npm (e.g. `apt-get install nodejs npm`), or pass --server-cmd"
    ))
}

/// Resolve the server for `root`. With `install`, a missing managed install is installed.
pub fn resolve(root: &Path, server_cmd: Option<&str>, install: bool) -> Result<ServerSpec> {
    let from_env = std::env::var("LANSER_SERVER_CMD")
        .ok()
        .filter(|s| !s.trim().is_empty());
    if let Some(cmd) = server_cmd.map(str::to_string).or(from_env) {
        let command = split_command(&cmd);
        if command.is_empty() {
            return Err(LanserError::usage("--server-cmd is empty"));
        }
        let package = which_or_path(&command[0]).and_then(|p| package_of(&p));
        return Ok(ServerSpec {
            command,
            source: Source::Flag,
            package,
        });
    }
    let local = root.join("node_modules/.bin/pyright-langserver");
    if local.is_file() {
        which("node").ok_or_else(|| node_missing("cannot run the workspace's pyright"))?;
        return Ok(ServerSpec {
            package: package_of(&local),
            command: vec![local.to_string_lossy().into_owned(), "--stdio".into()],
            source: Source::Workspace,
        });
    }
    let dir = managed_dir();
    if !managed_entry(&dir).is_file() {
        if !install {
            return Err(LanserError::crash(format!(
                "pyright {PYRIGHT_VERSION} is not installed; run `lanser setup`"
            )));
        }
        install_managed(&dir)?;
    }
    let node = which("node").ok_or_else(|| node_missing("cannot run pyright"))?;
    let entry = managed_entry(&dir);
    Ok(ServerSpec {
        package: package_of(&entry),
        command: vec![
            node.to_string_lossy().into_owned(),
            entry.to_string_lossy().into_owned(),
            "--stdio".into(),
        ],
        source: Source::Managed,
    })
}

fn which_or_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        Some(PathBuf::from(program))
    } else {
        which(program)
    }
}

/// `npm install --prefix DIR pyright@VERSION`, into a temporary sibling renamed into place so
/// that a concurrent or interrupted install never leaves a half-written directory behind.
pub fn install_managed(dir: &Path) -> Result<()> {
    let what = format!("cannot install pyright {PYRIGHT_VERSION}");
    let npm = which("npm").ok_or_else(|| node_missing(&what))?;
    which("node").ok_or_else(|| node_missing(&what))?;
    let parent = dir
        .parent()
        .ok_or_else(|| LanserError::internal("bad install directory"))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| LanserError::crash(format!("{what}: {}: {e}", parent.display())))?;
    let tmp = parent.join(format!(".{PYRIGHT_VERSION}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!(
        "lanser: installing pyright {PYRIGHT_VERSION} with npm into {} (first use; `lanser setup` does this up front)",
        dir.display()
    );
    let started = Instant::now();
    let out = Command::new(npm)
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&tmp)
        .arg(format!("pyright@{PYRIGHT_VERSION}"))
        .output()
        .map_err(|e| LanserError::crash(format!("{what}: npm: {e}")).with_source(e))?;
    if !out.status.success() || !managed_entry(&tmp).is_file() {
        let _ = std::fs::remove_dir_all(&tmp);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(LanserError::crash(format!(
            "{what}: npm failed ({}): {last}",
            out.status
        )));
    }
    if let Err(e) = std::fs::rename(&tmp, dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another process finished first: its install is as good as ours.
        if !managed_entry(dir).is_file() {
            return Err(LanserError::crash(format!(
                "{what}: {}: {e}",
                dir.display()
            )));
        }
    }
    eprintln!(
        "lanser: installed pyright {PYRIGHT_VERSION} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_commands() {
        assert_eq!(
            split_command(r#"python3 "my server.py" --mode 'hang now'"#),
            vec!["python3", "my server.py", "--mode", "hang now"]
        );
        assert_eq!(split_command("  a   b "), vec!["a", "b"]);
        assert!(split_command("   ").is_empty());
    }
}

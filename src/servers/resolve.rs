//! From a server definition to a command line ready to spawn ([`ServerSpec`]), installing it
//! on first need (docs/workspace.md#server-resolution).
//!
//! Order: `--server-cmd` / `LANSER_SERVER_CMD`; for the built-in Pyright, the workspace's
//! `node_modules/.bin/pyright-langserver`; then by the definition's install route: the
//! install in `$LANSER_HOME/<name>/<version>/` (npm, pip, go; made on first need), for go
//! and rustup the command on PATH (rustup's proxy only when it serves it), for `none` the
//! command on PATH or a path. An npm server's script runs on the Node [`super::node`] finds,
//! whatever PATH says. The version recorded in bundles is read from the installed package
//! (`package.json`, the `.dist-info` name); Pyright sends no serverInfo.

use super::defs::{Provision, ServerDef};
use super::install::{self, entry, install_dir, installed};
use crate::error::{LanserError, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the server command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Flag,
    Workspace,
    Managed,
    /// A `lanser.toml` server with `provision = "none"`: its command, as configured.
    Configured,
    /// The command on PATH (go's or rustup's route, not installed by lanser).
    Path,
}

impl Source {
    /// The definition's command as it is (not an install lanser made): a bundle names the
    /// server by its definition when it sends no serverInfo.
    pub fn is_command(self) -> bool {
        matches!(self, Source::Configured | Source::Path)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Flag => "--server-cmd",
            Source::Workspace => "workspace node_modules",
            Source::Managed => "managed install",
            Source::Configured => "lanser.toml command",
            Source::Path => "on PATH",
        }
    }
}

/// A server ready to spawn.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub command: Vec<String>,
    pub source: Source,
    /// Package name and version read from the install, when known.
    pub package: Option<(String, String)>,
}

/// First executable called `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn which_or_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        Some(PathBuf::from(program))
    } else {
        which(program)
    }
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

/// The managed install holds another version than the pin.
pub fn wrong_version(def: &ServerDef, dir: &Path, got: &str) -> LanserError {
    LanserError::crash(format!(
        "{} holds {} {got}, not the pinned {}; remove it and run `lanser setup --server {}`",
        dir.display(),
        def.package,
        def.version.as_deref().unwrap_or("?"),
        def.name
    ))
}

/// The script an npm `.bin/` link points at (`node_modules/pyright/langserver.index.js`),
/// the link itself when it is not one.
fn npm_script(bin: &Path) -> PathBuf {
    match (std::fs::read_link(bin), bin.parent()) {
        (Ok(target), Some(dir)) => super::node::normalize(&dir.join(target)),
        _ => bin.to_path_buf(),
    }
}

/// Whether `file` is JavaScript for node (by its extension or a `#!…node` first line).
fn is_node_script(file: &Path) -> bool {
    use std::io::Read;
    let ext = file.extension().and_then(|e| e.to_str());
    if matches!(ext, Some("js" | "mjs" | "cjs")) {
        return true;
    }
    let mut head = [0u8; 64];
    let n = std::fs::File::open(file)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let first = String::from_utf8_lossy(&head[..n]);
    first.starts_with("#!") && first.lines().next().is_some_and(|l| l.contains("node"))
}

/// The command line running the npm script at `bin`: on the Node lanser finds when it is a
/// node script, as it is otherwise.
fn npm_command(bin: &Path, what: &str, install: bool) -> Result<Vec<String>> {
    let script = npm_script(bin);
    if !is_node_script(&script) {
        return Ok(vec![script.to_string_lossy().into_owned()]);
    }
    let node = super::node::ensure(what, false, install)?;
    Ok(vec![
        node.exe.to_string_lossy().into_owned(),
        script.to_string_lossy().into_owned(),
    ])
}

fn with_args(mut program: Vec<String>, def: &ServerDef) -> Vec<String> {
    program.extend(def.args.iter().cloned());
    program
}

/// An argument [`STATE_ARG`] of a server's command names this directory: the server's own
/// for the workspace at `root`, under `$LANSER_HOME/state/<server>/` (jdtls keeps its Eclipse
/// workspace there, `-data`; one per project, as two servers cannot share one).
pub fn state_dir(def: &ServerDef, root: &Path) -> PathBuf {
    let key = crate::digest::sha256_hex(root.to_string_lossy().as_bytes());
    crate::home::lanser_home()
        .join("state")
        .join(&def.name)
        .join(&key[..16])
}

/// The argument that [`state_dir`] replaces.
pub const STATE_ARG: &str = "{state}";

/// The argument that the workspace root replaces (graphql-lsp's `--configDir`: it looks for
/// its config in its working directory, not the root it is given).
pub const ROOT_ARG: &str = "{root}";

/// Resolve `def` for the workspace at `root`; `--server-cmd` (or `LANSER_SERVER_CMD`) wins.
/// With `install`, a missing install (and a missing Node) is made. An argument
/// [`STATE_ARG`] becomes the server's [`state_dir`] for `root`, an argument [`ROOT_ARG`] `root`.
pub fn resolve(
    root: &Path,
    server_cmd: Option<&str>,
    def: &ServerDef,
    install: bool,
) -> Result<ServerSpec> {
    let mut spec = resolve_command(root, server_cmd, def, install)?;
    if spec.command.iter().any(|a| a == STATE_ARG) {
        let dir = state_dir(def, root).to_string_lossy().into_owned();
        for a in spec.command.iter_mut().filter(|a| *a == STATE_ARG) {
            a.clone_from(&dir);
        }
    }
    for a in spec.command.iter_mut().filter(|a| *a == ROOT_ARG) {
        *a = root.to_string_lossy().into_owned();
    }
    Ok(spec)
}

fn resolve_command(
    root: &Path,
    server_cmd: Option<&str>,
    def: &ServerDef,
    install: bool,
) -> Result<ServerSpec> {
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
    let run = format!("cannot run {}", def.label());
    let local = root.join("node_modules/.bin/pyright-langserver");
    if def.is_builtin_pyright() && local.is_file() {
        let command = npm_command(&local, "cannot run the workspace's pyright", install)?;
        return Ok(ServerSpec {
            package: package_of(&local),
            command: with_args(command, def),
            source: Source::Workspace,
        });
    }
    match def.provision {
        Provision::None => on_path(def, Source::Configured),
        Provision::Rustup => {
            let spec = on_path(def, Source::Path)?;
            // rustup's proxy without the component starts, prints why to stderr, and exits.
            let proxy = which(&def.command)
                .and_then(|p| p.canonicalize().ok())
                .is_some_and(|p| p.file_stem().is_some_and(|s| s == "rustup"));
            if proxy && !install::rustup_serves(def) {
                return Err(LanserError::crash(format!(
                    "{run}: rustup's {} proxy has no {} component for the active toolchain; run `lanser setup --server {}` (`{}`)",
                    def.command,
                    def.package,
                    def.name,
                    install::rustup_line(def)
                )));
            }
            Ok(spec)
        }
        Provision::Go => {
            let dir = install_dir(def);
            if !installed(def, &dir) {
                match on_path(def, Source::Path) {
                    Ok(spec) => return Ok(spec),
                    Err(e) if !install => return Err(e),
                    Err(_) => install::install_into(def, &dir)?,
                }
            }
            Ok(ServerSpec {
                command: with_args(vec![entry(def, &dir).to_string_lossy().into_owned()], def),
                source: Source::Managed,
                package: None,
            })
        }
        Provision::Pip | Provision::Npm => {
            let dir = install_dir(def);
            if !installed(def, &dir) {
                if !install {
                    return Err(not_installed(def));
                }
                install::install_into(def, &dir)?;
            }
            managed(def, &dir, &run, install)
        }
    }
}

fn not_installed(def: &ServerDef) -> LanserError {
    LanserError::crash(format!(
        "{} is not installed; run `lanser setup --server {}`",
        def.label(),
        def.name
    ))
}

/// `command` on PATH, or as a path (relative to the invocation directory).
fn on_path(def: &ServerDef, source: Source) -> Result<ServerSpec> {
    let program = if def.command.contains('/') {
        PathBuf::from(&def.command)
    } else {
        which(&def.command).ok_or_else(|| {
            let how = super::how_to_install(def)
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
            LanserError::crash(format!(
                "server {}: {} is not on PATH{how}",
                def.name, def.command
            ))
        })?
    };
    Ok(ServerSpec {
        command: with_args(vec![program.to_string_lossy().into_owned()], def),
        source,
        package: None,
    })
}

/// The command line of the managed install of `def` in `dir`.
fn managed(def: &ServerDef, dir: &Path, what: &str, install: bool) -> Result<ServerSpec> {
    let entry = entry(def, dir);
    let (program, package) = match def.provision {
        Provision::Pip => (
            // A console script runs through the venv's interpreter (so the install does not
            // depend on its scripts' shebangs); a wheel's own binary (ty, pyrefly) runs as is.
            if is_script(&entry) {
                vec![
                    dir.join("bin/python").to_string_lossy().into_owned(),
                    entry.to_string_lossy().into_owned(),
                ]
            } else {
                vec![entry.to_string_lossy().into_owned()]
            },
            install::pip_version(dir, &def.package).map(|v| (def.package.clone(), v)),
        ),
        _ => (npm_command(&entry, what, install)?, package_of(&entry)),
    };
    if let (Some((_, got)), Some(want)) = (&package, &def.version) {
        if got != want {
            return Err(wrong_version(def, dir, got));
        }
    }
    Ok(ServerSpec {
        command: with_args(program, def),
        source: Source::Managed,
        package,
    })
}

/// Whether `file` is a script (`#!`), not a binary.
fn is_script(file: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    std::fs::File::open(file)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"#!")
}

/// Install `def` when it (or the Node its npm install runs on) is missing, without starting
/// anything: what a client does before handing a request to the daemon, so that the install's
/// progress reaches its terminal. Costs file checks only when everything is there.
pub fn install_if_missing(root: &Path, server_cmd: Option<&str>, def: &ServerDef) -> Result<()> {
    let forced = server_cmd.is_some()
        || std::env::var("LANSER_SERVER_CMD").is_ok_and(|s| !s.trim().is_empty());
    let local =
        def.is_builtin_pyright() && root.join("node_modules/.bin/pyright-langserver").is_file();
    if forced || local {
        return Ok(());
    }
    match def.provision {
        Provision::Npm | Provision::Pip => {
            let dir = install_dir(def);
            if !installed(def, &dir) {
                install::install_into(def, &dir)?;
            }
            if def.provision == Provision::Npm && !super::node::maybe_present() {
                super::node::ensure(&format!("cannot run {}", def.label()), false, true)?;
            }
            Ok(())
        }
        Provision::Go => resolve(root, None, def, true).map(drop),
        Provision::Rustup | Provision::None => Ok(()),
    }
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

    #[cfg(unix)]
    #[test]
    fn an_npm_link_runs_its_script_on_node() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("node_modules/pyright");
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(pkg.join("langserver.index.js"), "#!/usr/bin/env node\n").unwrap();
        std::os::unix::fs::symlink(
            "../pyright/langserver.index.js",
            bin.join("pyright-langserver"),
        )
        .unwrap();
        let script = npm_script(&bin.join("pyright-langserver"));
        assert_eq!(script, pkg.join("langserver.index.js"));
        assert!(is_node_script(&script));
    }
}

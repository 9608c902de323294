//! From a configured server ([`ServerDef`]) to a command line ready to spawn, installing it into
//! the cache on first need.
//!
//! The built-in Pyright keeps its own resolution (`lsp::provision`: `--server-cmd`, the
//! workspace's node_modules, the managed npm install). Every other server installs into
//! `$LANSER_HOME/<name>/<version>/`:
//! - `pip`: `python3 -m venv DIR && DIR/bin/pip install <package>==<version>`. A console
//!   script is run through the venv's own interpreter (`DIR/bin/python DIR/bin/<command>`), so
//!   the install, made in a temporary sibling and renamed into place, does not depend on its
//!   scripts' shebangs; basedpyright brings its own node this way (no system node needed). A
//!   binary the wheel ships (ty, pyrefly) runs as it is.
//! - `npm`: `npm install --prefix DIR <package>@<version>`, run as `DIR/node_modules/.bin/<command>`.
//! - `none`: `command` on PATH, or a path (relative to the invocation directory).
//!
//! Installs are serialized by a lock file beside them, so parallel first uses install once.

use crate::config::{Provision, ServerDef};
use crate::error::{LanserError, Result};
use crate::lsp::provision::{self, ServerSpec, Source};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Resolve `def` for the workspace at `root`; `--server-cmd` (or `LANSER_SERVER_CMD`) wins.
pub fn resolve(
    root: &Path,
    server_cmd: Option<&str>,
    def: &ServerDef,
    install: bool,
) -> Result<ServerSpec> {
    let from_env = std::env::var("LANSER_SERVER_CMD")
        .ok()
        .filter(|s| !s.trim().is_empty());
    if server_cmd.is_some() || from_env.is_some() || def.is_builtin_pyright() {
        return provision::resolve(root, server_cmd, install);
    }
    match def.provision {
        Provision::None => {
            let program = if def.command.contains('/') {
                PathBuf::from(&def.command)
            } else {
                provision::which(&def.command).ok_or_else(|| {
                    let how = crate::languages::how_to_install(&def.name)
                        .map(|h| format!("; {h}"))
                        .unwrap_or_default();
                    LanserError::crash(format!(
                        "server {}: {} is not on PATH{how}",
                        def.name, def.command
                    ))
                })?
            };
            Ok(ServerSpec {
                command: command_line(vec![program], def),
                source: Source::Configured,
                package: None,
            })
        }
        Provision::Pip | Provision::Npm => {
            let dir = install_dir(def);
            if !installed(def, &dir) {
                if !install {
                    return Err(LanserError::crash(format!(
                        "{} is not installed; run `lanser setup --server {}`",
                        label(def),
                        def.name
                    )));
                }
                install_into(def, &dir)?;
            }
            spec_of(def, &dir)
        }
    }
}

/// `name version`, for messages.
pub fn label(def: &ServerDef) -> String {
    format!("{} {}", def.name, def.version.as_deref().unwrap_or("?"))
}

/// `$LANSER_HOME/<name>/<version>`.
pub fn install_dir(def: &ServerDef) -> PathBuf {
    provision::lanser_home()
        .join(&def.name)
        .join(def.version.as_deref().unwrap_or("unpinned"))
}

fn entry(def: &ServerDef, dir: &Path) -> PathBuf {
    match def.provision {
        Provision::Npm => dir.join("node_modules/.bin").join(&def.command),
        _ => dir.join("bin").join(&def.command),
    }
}

/// Whether the install in `dir` is complete.
pub fn installed(def: &ServerDef, dir: &Path) -> bool {
    let python_ok = def.provision != Provision::Pip || dir.join("bin/python").exists();
    python_ok && entry(def, dir).is_file()
}

fn command_line(program: Vec<PathBuf>, def: &ServerDef) -> Vec<String> {
    program
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .chain(def.args.iter().cloned())
        .collect()
}

fn spec_of(def: &ServerDef, dir: &Path) -> Result<ServerSpec> {
    let entry = entry(def, dir);
    let (program, package) = match def.provision {
        Provision::Pip => (
            // A console script runs through the venv's interpreter; a wheel's own binary
            // (ty, pyrefly) runs as it is.
            if is_script(&entry) {
                vec![dir.join("bin/python"), entry]
            } else {
                vec![entry]
            },
            pip_version(dir, &def.package).map(|v| (def.package.clone(), v)),
        ),
        _ => {
            let package = provision::package_of(&entry);
            (vec![entry], package)
        }
    };
    if let (Some((_, got)), Some(want)) = (&package, &def.version) {
        if got != want {
            return Err(LanserError::crash(format!(
                "{} holds {} {got}, not the pinned {want}; remove it and run `lanser setup --server {}`",
                dir.display(),
                def.package,
                def.name
            )));
        }
    }
    Ok(ServerSpec {
        command: command_line(program, def),
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

/// The version of `package` installed in the venv at `dir`, from its `.dist-info` name.
pub fn pip_version(dir: &Path, package: &str) -> Option<String> {
    let want = package.to_lowercase().replace(['-', '.'], "_");
    let lib = std::fs::read_dir(dir.join("lib")).ok()?;
    for py in lib.flatten() {
        let Ok(entries) = std::fs::read_dir(py.path().join("site-packages")) else {
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
        .map_err(|e| LanserError::crash(format!("{what}: {e}")).with_source(e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(LanserError::crash(format!(
        "{what} failed ({}): {}",
        out.status,
        last_line(&out.stderr)
    )))
}

/// Install `def` into `dir` (a temporary sibling renamed into place), holding a lock so that
/// concurrent first uses install once.
pub fn install_into(def: &ServerDef, dir: &Path) -> Result<()> {
    let what = format!("cannot install {}", label(def));
    let parent = dir
        .parent()
        .ok_or_else(|| LanserError::internal("bad install directory"))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| LanserError::crash(format!("{what}: {}: {e}", parent.display())))?;
    let lock = std::fs::File::create(parent.join(".install.lock"))
        .map_err(|e| LanserError::crash(format!("{what}: lock: {e}")).with_source(e))?;
    lock.lock()
        .map_err(|e| LanserError::crash(format!("{what}: lock: {e}")).with_source(e))?;
    if installed(def, dir) {
        return Ok(());
    }
    let version = def.version.as_deref().unwrap_or_default();
    // The tool first, so that a missing one fails before any progress line or directory.
    let tool = match def.provision {
        // The real interpreter, not a symlink to it: the venv keeps pointing at it.
        Provision::Pip => provision::which("python3")
            .or_else(|| provision::which("python"))
            .map(|p| p.canonicalize().unwrap_or(p))
            .ok_or_else(|| LanserError::crash(format!("{what}: python3 is not on PATH")))?,
        _ => provision::which("npm").ok_or_else(|| {
            LanserError::crash(format!("{what}: npm is not on PATH; install Node.js 18+"))
        })?,
    };
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
        label(def),
        def.provision.as_str(),
        dir.display(),
        def.name
    );
    let started = Instant::now();
    let result = match def.provision {
        Provision::Pip => run(
            &format!("{what}: python3 -m venv"),
            Command::new(&tool).args(["-m", "venv"]).arg(&tmp),
        )
        .and_then(|()| {
            run(
                &format!("{what}: pip install"),
                Command::new(tmp.join("bin/python"))
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--disable-pip-version-check",
                        "--no-input",
                        "--quiet",
                    ])
                    .arg(format!("{}=={version}", def.package))
                    .args(&def.with),
            )
        }),
        _ => run(
            &format!("{what}: npm install"),
            Command::new(&tool)
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .arg("--prefix")
                .arg(&tmp)
                .arg(format!("{}@{version}", def.package))
                .args(&def.with),
        ),
    };
    let result = result.and_then(|()| {
        if !installed(def, &tmp) {
            return Err(LanserError::crash(format!(
                "{what}: the install has no {}",
                entry(def, &tmp).display()
            )));
        }
        std::fs::rename(&tmp, dir)
            .map_err(|e| LanserError::crash(format!("{what}: {}: {e}", dir.display())))
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result?;
    eprintln!(
        "lanser: installed {} in {:.1} s",
        label(def),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `lanser setup --server NAME` for a server that is not the built-in Pyright.
pub fn setup(def: &ServerDef) -> Result<String> {
    if def.provision == Provision::None {
        return Ok(format!(
            "{} is not provisioned by lanser (provision = \"none\"): {} must be on PATH\n",
            def.name, def.command
        ));
    }
    let dir = install_dir(def);
    let fresh = !installed(def, &dir);
    if fresh {
        install_into(def, &dir)?;
    }
    let spec = spec_of(def, &dir)?;
    let version = spec.package.map(|p| p.1).unwrap_or_else(|| "?".into());
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

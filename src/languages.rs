//! What lanser knows of the languages beyond Python that is not about installing a server:
//! how a server says it has loaded the project ([`Ready`]), whether a workspace will make it
//! index ([`expects_index`]), and the `languageId` of a file. The servers themselves, and
//! which one a file goes to, are [`crate::servers`]'.

use serde::Deserialize;
use std::path::Path;

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
    /// For a server that declares no signal (the default of a configured server and of a
    /// built-in that names none): a document is taken as loaded once the server has
    /// published diagnostics for the text lanser sent it, or has ended every `$/progress` it
    /// began; bounded by [`SETTLE_BOUND`]. Without either, the answer is given with
    /// `meta.readiness: "unknown"` (and `meta.complete: false`): lanser could not know the
    /// server was ready, so an empty answer is not "nothing there".
    Settle,
}

/// How long a [`Ready::Settle`] server may take to give its first sign of having loaded a
/// document (at most the request timeout); a server that gave none within it is taken to
/// give none, and is not waited for again.
pub const SETTLE_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

impl Ready {
    pub fn as_str(self) -> &'static str {
        match self {
            Ready::ProjectLog => "project-log",
            Ready::Progress => "progress",
            Ready::ServerStatus => "server-status",
            Ready::LogLine => "log-line",
            Ready::Initialized => "initialized",
            Ready::Settle => "settle",
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
    /// Answers `textDocument/diagnostic` only for documents it has open (an empty report for
    /// any other): lanser opens each file before pulling (vscode-langservers-extracted).
    pub open_to_pull: bool,
    /// Counts columns in code points whatever encoding it declares (jedi's columns:
    /// jedi-language-server, python-lsp-server): lanser offers utf-32 only and reads its
    /// positions as code points.
    pub codepoints: bool,
    /// Takes in a file changed on disk only a while after the watched-file event says so (it
    /// re-indexes it in the background: intelephense): lanser opens each changed file of the
    /// server's types, so that the next answer is from the new text.
    pub open_changed: bool,
    /// Runs programs its own venv brings by their name on PATH (cmake-language-server runs
    /// `cmake`): lanser puts the `bin` of the interpreter it runs under first on its PATH.
    pub venv_path: bool,
    /// Resolves the workspace paths it finds against its working directory, not the root
    /// `initialize` names (cucumber-language-server's globs): lanser runs it in the root.
    pub root_cwd: bool,
    /// Its hover on a function's name shows the return type it infers when none is declared,
    /// `Unknown` where it cannot (Pyright): a speculative check compares them before and after
    /// a changed body to skip the importers ([`crate::measure::inferred`]).
    pub hover_infers: bool,
    /// Publishes diagnostics for every version of an open document it is sent, an empty list
    /// included (jedi-language-server, python-lsp-server: each lints on open and on change,
    /// after a debounce): lanser waits for that publish, however long the server takes, rather
    /// than taking a quiet spell for "nothing changed".
    pub publishes_each_version: bool,
}

/// One quirk, as lanser.toml names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quirk {
    Utf16Only,
    PullsUndeclared,
    OpenToPull,
    Codepoints,
    OpenChanged,
    VenvPath,
    RootCwd,
    HoverInfers,
    PublishesEachVersion,
}

impl Quirks {
    /// None: the server is taken at its word.
    pub const NONE: Quirks = Quirks {
        utf16_only: false,
        pulls_undeclared: false,
        open_to_pull: false,
        codepoints: false,
        open_changed: false,
        venv_path: false,
        root_cwd: false,
        hover_infers: false,
        publishes_each_version: false,
    };
    /// Pyright's, and basedpyright's.
    pub const PYRIGHT: Quirks = Quirks {
        utf16_only: true,
        pulls_undeclared: true,
        open_to_pull: false,
        codepoints: false,
        open_changed: false,
        venv_path: false,
        root_cwd: false,
        hover_infers: true,
        publishes_each_version: false,
    };
    /// vscode-langservers-extracted's servers'.
    pub const OPEN_TO_PULL: Quirks = Quirks {
        open_to_pull: true,
        ..Quirks::NONE
    };
    /// jedi's servers' (jedi-language-server, python-lsp-server).
    pub const JEDI: Quirks = Quirks {
        codepoints: true,
        publishes_each_version: true,
        ..Quirks::NONE
    };

    /// intelephense's.
    pub const OPEN_CHANGED: Quirks = Quirks {
        open_changed: true,
        ..Quirks::NONE
    };
    /// cmake-language-server's.
    pub const VENV_PATH: Quirks = Quirks {
        venv_path: true,
        ..Quirks::NONE
    };
    /// cucumber-language-server's.
    pub const ROOT_CWD: Quirks = Quirks {
        root_cwd: true,
        ..Quirks::NONE
    };

    /// The quirks a list names.
    pub fn of(list: &[Quirk]) -> Quirks {
        Quirks {
            utf16_only: list.contains(&Quirk::Utf16Only),
            pulls_undeclared: list.contains(&Quirk::PullsUndeclared),
            open_to_pull: list.contains(&Quirk::OpenToPull),
            codepoints: list.contains(&Quirk::Codepoints),
            open_changed: list.contains(&Quirk::OpenChanged),
            venv_path: list.contains(&Quirk::VenvPath),
            root_cwd: list.contains(&Quirk::RootCwd),
            hover_infers: list.contains(&Quirk::HoverInfers),
            publishes_each_version: list.contains(&Quirk::PublishesEachVersion),
        }
    }

    /// The `general.positionEncodings` to offer, in order of preference.
    pub fn encodings(self) -> Vec<&'static str> {
        if self.codepoints {
            vec!["utf-32"]
        } else if self.utf16_only {
            vec!["utf-16"]
        } else {
            vec!["utf-8", "utf-16"]
        }
    }
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

/// The LSP `languageId` of a file, by its extension.
pub fn language_id(path: &str) -> String {
    let p = Path::new(path);
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
    let name = p.file_name().and_then(|e| e.to_str()).unwrap_or_default();
    let id = match ext {
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => "cpp",
        "go" => "go",
        "rs" => "rust",
        "sh" | "bash" => "shellscript",
        "json" => "json",
        "jsonc" => "jsonc",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "html" | "htm" => "html",
        "yaml" | "yml" => "yaml",
        "dockerfile" => "dockerfile",
        "php" => "php",
        "svelte" => "svelte",
        "vue" => "vue",
        "sql" => "sql",
        "cmake" => "cmake",
        "f" | "for" | "f90" | "f95" | "f03" | "f08" | "F" | "F90" => "fortran",
        "java" => "java",
        "vim" => "vim",
        "graphql" | "gql" => "graphql",
        "prisma" => "prisma",
        "astro" => "astro",
        "toml" => "toml",
        "just" => "just",
        "tsp" => "typespec",
        "mdx" => "mdx",
        "proto" => "proto",
        "tex" | "ltx" | "sty" | "cls" => "latex",
        "R" | "r" => "r",
        "jl" => "julia",
        "feature" => "cucumber",
        "erb" | "herb" | "rhtml" => "erb",
        _ if matches!(name, "Dockerfile" | "Containerfile") => "dockerfile",
        _ if name == "CMakeLists.txt" => "cmake",
        _ if matches!(name, "justfile" | "Justfile" | ".justfile") => "just",
        _ if matches!(name, "Makefile" | "makefile" | "GNUmakefile") => "makefile",
        "py" | "pyi" | "pyw" => "python",
        // An executable script with no extension reaches a server only as Python (a `#!` line
        // naming python routes it to Pyright).
        "" => "python",
        // A server the user configured for another file type gets the identifier the LSP
        // specification lists for it, never "python".
        other => return spec_language_id(other),
    };
    id.to_string()
}

/// The `languageId` the LSP specification lists for a file extension lanser has no server of
/// its own for; the extension itself (lower case) for one it does not list.
fn spec_language_id(ext: &str) -> String {
    let known = [
        (&["rb", "rake", "gemspec"][..], "ruby"),
        (&["kt", "kts"], "kotlin"),
        (&["cs", "csx"], "csharp"),
        (&["swift"], "swift"),
        (&["lua"], "lua"),
        (&["pl", "pm", "t"], "perl"),
        (&["scala", "sc"], "scala"),
        (&["ex", "exs"], "elixir"),
        (&["erl", "hrl"], "erlang"),
        (&["hs", "lhs"], "haskell"),
        (&["ml", "mli"], "ocaml"),
        (&["dart"], "dart"),
        (&["clj", "cljs", "cljc", "edn"], "clojure"),
        (&["fs", "fsi", "fsx"], "fsharp"),
        (&["md", "markdown"], "markdown"),
        (&["xml", "xsd", "xsl", "svg"], "xml"),
        (&["ini", "cfg"], "ini"),
        (&["bat", "cmd"], "bat"),
        (&["ps1", "psm1"], "powershell"),
        (&["groovy", "gradle"], "groovy"),
        (&["m", "mm"], "objective-c"),
        (&["coffee"], "coffeescript"),
        (&["zig"], "zig"),
        (&["tf", "tfvars"], "terraform"),
        (&["sol"], "solidity"),
        (&["elm"], "elm"),
        (&["gleam"], "gleam"),
        (&["nim"], "nim"),
        (&["rst"], "restructuredtext"),
        (&["diff", "patch"], "diff"),
        (&["mk", "mak"], "makefile"),
    ];
    let lower = ext.to_ascii_lowercase();
    known
        .iter()
        .find(|(exts, _)| exts.contains(&lower.as_str()))
        .map_or(lower.clone(), |(_, id)| id.to_string())
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
        assert_eq!(language_id("file:///w/Dockerfile"), "dockerfile");
        assert_eq!(language_id("conf/app.yml"), "yaml");
        assert_eq!(language_id("file:///w/CMakeLists.txt"), "cmake");
        assert_eq!(language_id("src/main.f90"), "fortran");
        assert_eq!(language_id("src/App.svelte"), "svelte");
        // No server of lanser's own: what the LSP specification lists, never "python".
        assert_eq!(language_id("lib/a.rb"), "ruby");
        assert_eq!(language_id("Main.kt"), "kotlin");
        assert_eq!(language_id("notes.MD"), "markdown");
        assert_eq!(language_id("conf/site.nginx"), "nginx");
        assert_eq!(language_id("bin/tool"), "python");
        assert_eq!(language_id("src/Makefile"), "makefile");
        assert_eq!(language_id("pkg/stub.pyi"), "python");
    }
}

//! The built-in servers beyond the first languages (issue 31): web, data and build files, PHP,
//! Svelte, Vue, SQL, CMake, Fortran, more Python servers. Each is pinned to the registry's current
//! release when it was added and was driven by a minimal client on its fixture first; what it
//! answers, how it says it is ready and what it does beyond the protocol are written on its
//! definition.
//!
//! - `vscode-{json,html,css}-language-server` 4.10.0 (npm `vscode-langservers-extracted`,
//!   one package, three servers, each installed on its own): answer on demand (ready after
//!   `initialized`) for the documents open in them, one document at a time (CSS definitions,
//!   references and renames stay in the file); diagnostics by pull. The CSS server (and the
//!   HTML one, for `<style>`) fails every diagnostic when `workspace/configuration` answers
//!   null for `css`/`scss`/`less`, so their settings carry `validate` and an empty `lint`.
//!   JSON validates only with `json.validate.enable` set, then against the schema its
//!   `$schema` names (a relative path is read from disk); it offers no definition,
//!   references or rename.
//! - `yaml-language-server` 2.0.0 (npm): ready after `initialized`; definition (an alias to
//!   its anchor's node) and rename (anchors), no references; diagnostics pushed, against the
//!   schema a `# yaml-language-server: $schema=…` modeline names.
//! - `dockerfile-language-server-nodejs` 0.15.0 (npm, command `docker-langserver`): files
//!   named `Dockerfile`/`Containerfile` or `*.dockerfile`; definition and rename of build
//!   stages and `ARG`/`ENV` variables, no references; diagnostics pushed (dockerfile-utils).
//! - `intelephense` 1.18.5 (npm): indexes its PHP stubs and the workspace under a
//!   `$/progress` (about 140 files, seconds), cross-file definitions and references after it;
//!   rename is a licensed feature (`renameProvider: false`); a definition's range is the whole
//!   declaration (from its doc comment); diagnostics pushed — on opening a file it indexed,
//!   first an empty publish marked `isClear`, which lanser does not take for the answer
//!   ([`crate::lsp::inbound`]). A file changed on disk it re-reads only a while after the
//!   watched-file event (answers in between are from the old text), so lanser opens each
//!   changed PHP file instead ([`Quirks::open_changed`]). It keeps a cache of each workspace under
//!   `~/.config/intelephense`.
//! - Python alternatives, chosen with `--server` (ready after `initialized`): `ruff` 0.17.6
//!   (PyPI; `ruff server`): lint diagnostics by pull for open documents only, code actions
//!   (a rule disabled for a line, fix all, organize imports), hover on `noqa` codes; no
//!   definitions, references, rename or document symbols. `jedi-language-server` 0.47.0 and
//!   `pylsp` 1.15.0 (PyPI `python-lsp-server`, with `pyflakes` 3.2.0 for its diagnostics):
//!   jedi's definitions, references, rename and hover; both count columns in code points
//!   whatever encoding they declare (jedi-language-server says utf-8, pylsp says nothing).
//!   jedi-language-server publishes syntax errors only; pylsp publishes pyflakes' findings.
//! - `svelte-language-server` 0.18.4 (npm, command `svelteserver`): ready after `initialized`
//!   (its first answer takes seconds, while it loads its TypeScript service); definitions,
//!   references, rename and hover through a component's script and template (a `.js` module
//!   it imports included); diagnostics by pull (the compiler's and TypeScript's), failing
//!   ("Cannot call methods on an unopened document") for a document it does not have open.
//! - `sql-language-server` 1.7.1 (npm; `up --method stdio`): no definitions, references,
//!   hover or symbols; sqlint's diagnostics pushed on open, code actions (each finding's fix).
//!   It declares `renameProvider` yet answers `textDocument/rename` "Unhandled method"
//!   (-32601), which lanser refuses as an unsupported capability (exit 72). Its `vscode-languageserver-protocol` range takes 3.18, whose `exports` hide a
//!   subpath it requires, so 3.17.5 is pinned beside it; its `sqlite3` dependency builds
//!   from source where no prebuilt binary can be fetched (about 14 minutes here).
//! - `cmake-language-server` 0.1.11 (PyPI): completion and hover only, both from the `cmake`
//!   it runs by name: `cmake` 4.4.5 from PyPI is installed in its venv and the venv's `bin` put
//!   first on its PATH (quirk `venv-path`); `pygls` 1.3.1 pinned, as pygls 2 removed the class
//!   it imports. Without `cmake` it answers nothing. Files `CMakeLists.txt` and `*.cmake`.
//! - `fortls` 3.2.2 (PyPI): parses the workspace's sources before it answers `initialize`:
//!   cross-file definitions, references, rename, hover, symbols; diagnostics pushed (no
//!   document version) — declarations in one scope checked, not the whole language.
//!
//! - Vue: `vue-typescript-plugin`, typescript-language-server 5.3.0 (with `typescript` 5.9.3,
//!   as the TypeScript server) and `@vue/typescript-plugin` 3.3.11 (npm), named in
//!   `initializationOptions` (`location: "."`: installed beside `typescript`, where tsserver
//!   finds plugins by name). What a component's `<script>` holds: definitions, references,
//!   hover, rename and the type checker's diagnostics, across components and `.ts` modules
//!   (a `.ts` file itself goes to the TypeScript server, which does not see components);
//!   template expressions answer nothing (an empty definition list). Ready as the TypeScript
//!   server (its `$/progress`). `@vue/language-server` itself was tried: 3.3.11 (current)
//!   answers only in hybrid mode, sending the client `tsserver/request` notifications for
//!   such a tsserver, and its requests hang until they are answered, which lanser does not
//!   bridge; 2.2.12 (the last with `hybridMode: false`) installs a dependency from a git
//!   repository, not a registry.
//!
//! TOML is served by `tombi` ([`super::catalog_asked`]), not taplo: `taplo` from PyPI (0.9.3)
//! exits during `initialize`; `@taplo/cli` 0.7.0 from npm says "the LSP is not part of this
//! build"; `@taplo/lsp` is a library without an executable; only `cargo install taplo-cli
//! --features lsp` has it, a route the installer does not take.

use super::defs::{Builtin, Provision, Quirks, Ready, BASE};

pub const LANGSERVERS_EXTRACTED_VERSION: &str = "4.10.0";
pub const YAML_LS_VERSION: &str = "2.0.0";
pub const DOCKERFILE_LS_VERSION: &str = "0.15.0";
pub const INTELEPHENSE_VERSION: &str = "1.18.5";
pub const RUFF_VERSION: &str = "0.17.6";
pub const JEDI_LS_VERSION: &str = "0.47.0";
pub const PYLSP_VERSION: &str = "1.15.0";
pub const SVELTE_LS_VERSION: &str = "0.18.4";
pub const SQL_LS_VERSION: &str = "1.7.1";
pub const CMAKE_LS_VERSION: &str = "0.1.11";
pub const FORTLS_VERSION: &str = "3.2.2";

const PY: &[&str] = &["py", "pyi"];

/// What these servers were studied as: they answer on demand, complete, from the first request
/// after `initialized` (the built-ins' default, [`Ready::Settle`], is for servers nobody has).
const ON_DEMAND: Builtin = Builtin {
    ready: Ready::Initialized,
    ..BASE
};

const EXTRACTED: Builtin = Builtin {
    version: Some(LANGSERVERS_EXTRACTED_VERSION),
    provision: Provision::Npm,
    package: Some("vscode-langservers-extracted"),
    args: &["--stdio"],
    quirks: Quirks::OPEN_TO_PULL,
    ..ON_DEMAND
};

/// `css.lint` must be an object: the server reads its rules from it unguarded.
const CSS_SETTINGS: &str = r#"{"css": {"validate": true, "lint": {}}, "scss": {"validate": true, "lint": {}}, "less": {"validate": true, "lint": {}}}"#;

pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "vscode-json-language-server",
        command: "vscode-json-language-server",
        file_types: &["json", "jsonc"],
        // Without `json.validate.enable` in the settings it validates nothing.
        settings: r#"{"json": {"validate": {"enable": true}}}"#,
        ..EXTRACTED
    },
    Builtin {
        name: "vscode-css-language-server",
        command: "vscode-css-language-server",
        file_types: &["css", "scss", "less"],
        settings: CSS_SETTINGS,
        ..EXTRACTED
    },
    Builtin {
        name: "vscode-html-language-server",
        command: "vscode-html-language-server",
        file_types: &["html", "htm"],
        settings: r#"{"css": {"validate": true, "lint": {}}, "html": {"validate": {"scripts": true, "styles": true}}}"#,
        ..EXTRACTED
    },
    Builtin {
        name: "yaml-language-server",
        command: "yaml-language-server",
        args: &["--stdio"],
        file_types: &["yaml", "yml"],
        version: Some(YAML_LS_VERSION),
        provision: Provision::Npm,
        ..ON_DEMAND
    },
    Builtin {
        name: "dockerfile-language-server-nodejs",
        command: "docker-langserver",
        args: &["--stdio"],
        file_types: &["Dockerfile", "Containerfile", "dockerfile"],
        version: Some(DOCKERFILE_LS_VERSION),
        provision: Provision::Npm,
        ..ON_DEMAND
    },
    Builtin {
        name: "intelephense",
        command: "intelephense",
        args: &["--stdio"],
        file_types: &["php"],
        root_markers: Some(&["composer.json"]),
        version: Some(INTELEPHENSE_VERSION),
        provision: Provision::Npm,
        // It indexes its stubs and the workspace under a `$/progress`, always.
        ready: Ready::Progress,
        // A file changed on disk is re-read a while after its watched-file event.
        quirks: Quirks::OPEN_CHANGED,
        ..ON_DEMAND
    },
    // The Python alternatives, chosen with `--server` (Python goes to Pyright otherwise).
    Builtin {
        name: "ruff",
        command: "ruff",
        args: &["server"],
        file_types: PY,
        root_markers: None,
        version: Some(RUFF_VERSION),
        provision: Provision::Pip,
        // Lint diagnostics by pull, for open documents only.
        quirks: Quirks::OPEN_TO_PULL,
        ..ON_DEMAND
    },
    Builtin {
        name: "jedi-language-server",
        command: "jedi-language-server",
        file_types: PY,
        root_markers: None,
        version: Some(JEDI_LS_VERSION),
        provision: Provision::Pip,
        quirks: Quirks::JEDI,
        ..ON_DEMAND
    },
    Builtin {
        name: "pylsp",
        command: "pylsp",
        file_types: PY,
        root_markers: None,
        version: Some(PYLSP_VERSION),
        provision: Provision::Pip,
        package: Some("python-lsp-server"),
        // Its diagnostics come from pyflakes, in the range python-lsp-server 1.15 takes.
        with: &["pyflakes==3.2.0"],
        quirks: Quirks::JEDI,
        ..ON_DEMAND
    },
    Builtin {
        name: "svelte-language-server",
        command: "svelteserver",
        args: &["--stdio"],
        file_types: &["svelte"],
        version: Some(SVELTE_LS_VERSION),
        provision: Provision::Npm,
        // Its diagnostics pull fails for a document it does not have open.
        quirks: Quirks::OPEN_TO_PULL,
        ..ON_DEMAND
    },
    Builtin {
        name: "sql-language-server",
        command: "sql-language-server",
        args: &["up", "--method", "stdio"],
        file_types: &["sql"],
        version: Some(SQL_LS_VERSION),
        provision: Provision::Npm,
        // Its `^3.15.3` range takes 3.18, whose `exports` hide the subpath it requires. And
        // npm's `--ignore-scripts`: its sqlite3 dependency (for database connections, which
        // lanser does not make) otherwise compiles from source wherever no prebuilt binary can
        // be fetched — 872 s of install here against 44 s; the server runs without it.
        with: &["vscode-languageserver-protocol@3.17.5", "--ignore-scripts"],
        ..ON_DEMAND
    },
    Builtin {
        name: "cmake-language-server",
        command: "cmake-language-server",
        file_types: &["cmake", "CMakeLists.txt"],
        version: Some(CMAKE_LS_VERSION),
        provision: Provision::Pip,
        // pygls 2 removed the server class it imports; `cmake` (run from PATH) is where its
        // commands, variables and their documentation come from.
        with: &["pygls==1.3.1", "cmake==4.4.5"],
        quirks: Quirks::VENV_PATH,
        ..ON_DEMAND
    },
    Builtin {
        name: "fortls",
        command: "fortls",
        file_types: &["f90", "f95", "f03", "f08", "f", "for", "F90", "F"],
        version: Some(FORTLS_VERSION),
        provision: Provision::Pip,
        ..ON_DEMAND
    },
    // Vue through tsserver with Vue's own plugin (the route Vue's language server 3 takes
    // for everything in a component's script), on the TypeScript server's pins.
    Builtin {
        name: "vue-typescript-plugin",
        command: "typescript-language-server",
        args: &["--stdio"],
        file_types: &["vue"],
        root_markers: Some(&["tsconfig.json", "jsconfig.json", "package.json"]),
        version: Some(super::defs::TYPESCRIPT_LS_VERSION),
        provision: Provision::Npm,
        package: Some("typescript-language-server"),
        with: &["typescript@5.9.3", "@vue/typescript-plugin@3.3.11"],
        // Installed beside `typescript`, where tsserver looks for plugins by name.
        init_options: r#"{"plugins": [{"name": "@vue/typescript-plugin", "location": ".", "languages": ["vue"]}]}"#,
        // As the TypeScript server: the project loads under a `$/progress` after a didOpen.
        ready: Ready::Progress,
        ..BASE
    },
];

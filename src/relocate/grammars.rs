//! The tree-sitter grammar of each language lanser reads structurally (`ast://`, `sym://`,
//! durable selectors), chosen by file extension, and one parser per grammar and thread, reset
//! before each parse (ast-grep's shape).
//!
//! The grammar crates are the ones that build with the tree-sitter in use (its ABI 13–15);
//! a grammar that fails to load is reported, never a silent empty outline. Languages lanser
//! routes to a server but reads no grammar of (SCSS/LESS, …) have no outline: a selector
//! that needs one is a one-line usage error.

use std::cell::RefCell;
use std::collections::hash_map::{Entry, HashMap};
use tree_sitter::{Language, Parser, Tree};

/// A language with a structural outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grammar {
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Rust,
    C,
    Cpp,
    Bash,
    Php,
    Json,
    Yaml,
    Toml,
    Html,
    Css,
    Dockerfile,
    CMake,
}

/// Every file name and extension [`Grammar::for_path`] knows: the types lanser outlines
/// (the workspace index tracks them, so traces carry them and a warm daemon sees them change).
pub const FILE_TYPES: &[&str] = &[
    "Dockerfile",
    "Containerfile",
    "CMakeLists.txt",
    "py",
    "pyi",
    "ts",
    "mts",
    "cts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "go",
    "rs",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hh",
    "hpp",
    "hxx",
    "sh",
    "bash",
    "php",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "toml",
    "html",
    "htm",
    "css",
    "dockerfile",
    "containerfile",
    "cmake",
];

impl Grammar {
    /// The grammar for a file named `path`, by its extension.
    pub fn for_path(path: &str) -> Option<Grammar> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        match name {
            "Dockerfile" | "Containerfile" => return Some(Grammar::Dockerfile),
            "CMakeLists.txt" => return Some(Grammar::CMake),
            _ => {}
        }
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() {
            return None;
        }
        Some(match ext {
            "py" | "pyi" => Grammar::Python,
            "ts" | "mts" | "cts" => Grammar::TypeScript,
            "tsx" => Grammar::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Grammar::JavaScript,
            "go" => Grammar::Go,
            "rs" => Grammar::Rust,
            "c" | "h" => Grammar::C,
            "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => Grammar::Cpp,
            "sh" | "bash" => Grammar::Bash,
            "php" => Grammar::Php,
            "json" | "jsonc" => Grammar::Json,
            "yaml" | "yml" => Grammar::Yaml,
            "toml" => Grammar::Toml,
            "html" | "htm" => Grammar::Html,
            "css" => Grammar::Css,
            "dockerfile" | "containerfile" => Grammar::Dockerfile,
            "cmake" => Grammar::CMake,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Grammar::Python => "Python",
            Grammar::TypeScript => "TypeScript",
            Grammar::Tsx => "TSX",
            Grammar::JavaScript => "JavaScript",
            Grammar::Go => "Go",
            Grammar::Rust => "Rust",
            Grammar::C => "C",
            Grammar::Cpp => "C++",
            Grammar::Bash => "Bash",
            Grammar::Php => "PHP",
            Grammar::Json => "JSON",
            Grammar::Yaml => "YAML",
            Grammar::Toml => "TOML",
            Grammar::Html => "HTML",
            Grammar::Css => "CSS",
            Grammar::Dockerfile => "Dockerfile",
            Grammar::CMake => "CMake",
        }
    }

    /// Names here are keys, ids or CSS classes, which may hold `-` (`cert-file`, `main-nav`).
    pub fn names_are_keys(self) -> bool {
        matches!(
            self,
            Grammar::Json
                | Grammar::Yaml
                | Grammar::Toml
                | Grammar::Html
                | Grammar::Css
                | Grammar::Dockerfile
        )
    }

    fn language(self) -> Language {
        match self {
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::C => tree_sitter_c::LANGUAGE.into(),
            Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Grammar::Bash => tree_sitter_bash::LANGUAGE.into(),
            Grammar::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Grammar::Json => tree_sitter_json::LANGUAGE.into(),
            Grammar::Yaml => tree_sitter_yaml::LANGUAGE.into(),
            Grammar::Toml => tree_sitter_toml_ng::LANGUAGE.into(),
            Grammar::Html => tree_sitter_html::LANGUAGE.into(),
            Grammar::Css => tree_sitter_css::LANGUAGE.into(),
            Grammar::Dockerfile => tree_sitter_containerfile::LANGUAGE.into(),
            Grammar::CMake => tree_sitter_cmake::LANGUAGE.into(),
        }
    }
}

/// The file types with an outline, for messages.
pub const SUPPORTED: &str =
    "Python, TypeScript/JavaScript, Go, Rust, C/C++, shell, PHP, JSON, YAML, TOML, HTML, CSS, \
     Dockerfile and CMake";

thread_local! {
    static PARSERS: RefCell<HashMap<Grammar, Parser>> = RefCell::new(HashMap::new());
}

/// Parse `text` with `grammar`. `None` only if the grammar cannot be loaded (an ABI mismatch).
pub fn parse(grammar: Grammar, text: &str) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let p = match parsers.entry(grammar) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let mut p = Parser::new();
                p.set_language(&grammar.language()).ok()?;
                e.insert(p)
            }
        };
        p.reset();
        p.parse(text, None)
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_listed_file_type_has_a_grammar() {
        for t in super::FILE_TYPES {
            let name = if t.chars().next().is_some_and(char::is_uppercase) {
                t.to_string()
            } else {
                format!("a.{t}")
            };
            assert!(super::Grammar::for_path(&name).is_some(), "{t}");
        }
    }
    use super::*;

    #[test]
    fn every_grammar_loads_and_parses_by_extension() {
        let cases = [
            ("a.py", "def f(): pass\n"),
            ("web/a.ts", "export class A { m(): void {} }\n"),
            ("a.tsx", "const x = <div/>;\n"),
            ("a.mjs", "function f() {}\n"),
            ("a.go", "package a\nfunc F() {}\n"),
            ("src/lib.rs", "fn f() {}\n"),
            ("a.h", "int f(void);\n"),
            ("a.cpp", "namespace n { class C {}; }\n"),
            ("run.sh", "f() { echo; }\n"),
            (
                "src/A.php",
                "<?php\nnamespace App;\nclass A { public function f() {} }\n",
            ),
            ("package.json", "{\"name\": \"x\"}\n"),
            ("ci.yml", "jobs:\n  test: {}\n"),
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("index.htm", "<div id=\"main\"></div>\n"),
            ("site.css", ".btn { color: red; }\n"),
            ("build/Dockerfile", "FROM alpine AS base\nARG V=1\n"),
            ("app.containerfile", "FROM alpine\n"),
            ("CMakeLists.txt", "function(f a)\nendfunction()\n"),
            ("cmake/util.cmake", "macro(m)\nendmacro()\n"),
        ];
        for (path, text) in cases {
            let g = Grammar::for_path(path).unwrap_or_else(|| panic!("no grammar for {path}"));
            let tree = parse(g, text).unwrap_or_else(|| panic!("{} did not load", g.name()));
            assert!(
                !tree.root_node().has_error(),
                "{path}: {}",
                tree.root_node()
            );
        }
        assert_eq!(Grammar::for_path("notes.txt"), None);
        assert_eq!(Grammar::for_path("dir.d/.rs"), None);
        assert_eq!(Grammar::for_path("Makefile"), None);
        assert_eq!(Grammar::for_path("notes/Dockerfile.md"), None);
    }
}

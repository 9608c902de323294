//! Files no server serves. A server answers only for the file types it is configured for
//! (`file_types`): a request about a file of any other type is refused with `E/UNSUPPORTED`
//! (exit 72) before a server starts, and a workspace-wide answer lists such files as unchecked
//! rather than counting them clean. A file with no extension whose first line is a `#!`
//! naming python is Python's.

use super::defs::ServerDef;
use crate::error::{ErrorCode, LanserError};
use std::collections::BTreeMap;
use std::path::Path;

/// The configured servers and the default's name (`crate::config::Config::routes` gives them).
#[derive(Clone, Copy)]
pub struct Config<'a> {
    pub servers: &'a BTreeMap<String, ServerDef>,
    pub default: &'a str,
}

impl Config<'_> {
    /// The server routing picks for `path` when it takes the file's type.
    fn taker(&self, path: &str) -> Option<&str> {
        super::routing::taker(self.servers, self.default, path)
    }
}

/// The type of the file at `path` as `file_types` names it: its extension, or its whole name
/// when it has none (`Makefile`).
pub fn file_type(path: &str) -> String {
    let p = Path::new(path);
    match p.extension().and_then(|e| e.to_str()) {
        Some(ext) if p.file_stem().is_some_and(|s| !s.is_empty()) => ext.to_string(),
        _ => p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(path)
            .to_string(),
    }
}

/// The type as a person reads it: `.rb` for an extension, `Makefile` for a name.
pub fn shown_type(path: &str) -> String {
    let t = file_type(path);
    match Path::new(path).file_name().and_then(|n| n.to_str()) == Some(t.as_str()) {
        true => t,
        false => format!(".{t}"),
    }
}

/// Whether the file at `abs` begins with a `#!` line naming python (`#!/usr/bin/env python3`).
pub fn python_shebang(abs: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 256];
    let Ok(n) = std::fs::File::open(abs).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let line = head[..n].split(|b| *b == b'\n').next().unwrap_or_default();
    line.starts_with(b"#!") && String::from_utf8_lossy(line).contains("python")
}

/// Whether `def` takes the file `rel` (at `abs`): by its type, or, for a file without an
/// extension, as Python by its `#!` line when `def` takes Python.
pub fn takes(def: &ServerDef, rel: &str, abs: &Path) -> bool {
    def.handles(rel)
        || (Path::new(rel).extension().is_none() && def.handles("a.py") && python_shebang(abs))
}

/// Whether a server of `config` serves the file `rel` (at `abs`): `forced` (the server
/// `--server` names) when given, else the one routing picks.
pub fn served(config: Config, forced: Option<&ServerDef>, rel: &str, abs: &Path) -> bool {
    match forced {
        Some(def) => takes(def, rel, abs),
        None => {
            config.taker(rel).is_some()
                || config
                    .servers
                    .get(config.default)
                    .is_some_and(|d| takes(d, rel, abs))
        }
    }
}

/// The types of code lanser has no built-in server for, whose files matter to a
/// workspace-wide answer (`diag` with no target, `symbols --query`) when no configured server
/// serves them. Data and documentation (`toml`, `md`, `txt`) count only when a request names
/// or globs them.
pub const CODE_TYPES: &[&str] = &[
    "rb",
    "java",
    "kt",
    "kts",
    "swift",
    "cs",
    "fs",
    "scala",
    "groovy",
    "lua",
    "pl",
    "pm",
    "r",
    "jl",
    "hs",
    "ml",
    "ex",
    "exs",
    "erl",
    "clj",
    "dart",
    "zig",
    "nim",
    "m",
    "mm",
    "vb",
    "Makefile",
    "makefile",
    "GNUmakefile",
];

/// Every file of the workspace at `root` that the walk rules admit (not hidden, not
/// ignored), workspace-relative and sorted.
pub fn listing(root: &Path) -> Vec<String> {
    crate::workspace::walk::Walker::new(crate::workspace::walk::Types::everything())
        .walk(root, root)
        .files
}

/// The code files ([`CODE_TYPES`]) of the workspace at `root` that no server of `config`
/// serves (with `forced`, that one).
pub fn unserved_code(config: Config, forced: Option<&ServerDef>, root: &Path) -> Vec<String> {
    listing(root)
        .into_iter()
        .filter(|f| CODE_TYPES.contains(&file_type(f).as_str()))
        .filter(|f| !served(config, forced, f, &root.join(f)))
        .collect()
}

/// A server that would serve a file type, as a user would add it.
struct Suggestion {
    name: &'static str,
    command: &'static str,
    args: &'static [&'static str],
}

/// Well-known servers for types lanser has no built-in for (the refusal's example).
fn suggestion(file_type: &str) -> Suggestion {
    let s = |name, command, args| Suggestion {
        name,
        command,
        args,
    };
    match file_type {
        "rb" => s("ruby-lsp", "ruby-lsp", &[]),
        "java" => s("jdtls", "jdtls", &[]),
        "kt" | "kts" => s("kotlin-language-server", "kotlin-language-server", &[]),
        "toml" => s("taplo", "taplo", &["lsp", "stdio"]),
        "lua" => s("lua-language-server", "lua-language-server", &[]),
        "cs" => s("csharp-ls", "csharp-ls", &[]),
        "md" => s("marksman", "marksman", &["server"]),
        _ => s("my-server", "SERVER-COMMAND", &["--stdio"]),
    }
}

/// The `lanser.toml` line that would route files of `file_type` to a server: one line, valid
/// TOML (a dotted key and an inline table).
pub fn config_line(file_type: &str) -> String {
    let s = suggestion(file_type);
    let args = match s.args {
        [] => String::new(),
        args => format!(
            ", args = [{}]",
            args.iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "servers.{} = {{ command = \"{}\"{args}, file_types = [\"{file_type}\"] }}",
        s.name, s.command
    )
}

/// The refusal of a request about `rel`, which no server of `config` (or `forced`) serves:
/// one line naming the file type and the `lanser.toml` entry that would add a server.
pub fn refusal(config: Config, forced: Option<&ServerDef>, rel: &str) -> LanserError {
    let (t, shown) = (file_type(rel), shown_type(rel));
    let add = format!("add one in lanser.toml: {}", config_line(&t));
    let message = match (forced, config.taker(rel)) {
        (Some(def), Some(other)) => format!(
            "{rel}: server {} does not serve {shown} files ({other} does: leave out --server)",
            def.name
        ),
        (Some(def), None) => format!(
            "{rel}: server {} does not serve {shown} files, and lanser has no built-in server for them; {add}",
            def.name
        ),
        (None, _) => format!("{rel}: lanser has no built-in server for {shown} files; {add}"),
    };
    LanserError::new(ErrorCode::Unsupported, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_types_are_extensions_or_names() {
        assert_eq!(file_type("lib/a.rb"), "rb");
        assert_eq!(file_type("Makefile"), "Makefile");
        assert_eq!(file_type("sub/Makefile"), "Makefile");
        assert_eq!(file_type(".gitignore"), ".gitignore");
        assert_eq!(shown_type("lib/a.rb"), ".rb");
        assert_eq!(shown_type("sub/Makefile"), "Makefile");
        assert_eq!(shown_type("CMakeLists.txt"), ".txt");
    }

    #[test]
    fn the_config_line_is_valid_toml_naming_the_type() {
        for t in ["rb", "toml", "Makefile", "java"] {
            let line = config_line(t);
            let parsed: toml::Table = toml::from_str(&line).expect(&line);
            let servers = parsed["servers"].as_table().unwrap();
            let (_, def) = servers.iter().next().unwrap();
            assert_eq!(def["file_types"].as_array().unwrap()[0].as_str(), Some(t));
            assert!(def["command"].as_str().is_some_and(|c| !c.is_empty()));
        }
    }

    #[test]
    fn a_python_shebang_makes_a_file_without_extension_python() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, sh) = (dir.path().join("tool"), dir.path().join("run"));
        std::fs::write(&tool, "#!/usr/bin/env python3\nprint(1)\n").unwrap();
        std::fs::write(&sh, "#!/bin/sh\necho 1\n").unwrap();
        assert!(python_shebang(&tool));
        assert!(!python_shebang(&sh));
        assert!(!python_shebang(&dir.path().join("absent")));
    }
}

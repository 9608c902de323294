//! Pyright's settings for a workspace, read one way for every reader: from
//! `pyrightconfig.json` when it exists (Pyright ignores `[tool.pyright]` then), else from
//! `[tool.pyright]` in `pyproject.toml` (the toml crate) — and the import roots they give.
//!
//! Roots, first match wins: each `executionEnvironments[].root` and its `extraPaths`, the
//! workspace root, the top-level `extraPaths`, then `<root>/src`.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The import roots of a workspace, in lookup order, deduplicated, existing directories only.
pub fn import_roots(root: &Path) -> Vec<PathBuf> {
    let config = pyright_config(root);
    let rel = |v: &Value| v.as_str().map(|s| root.join(s));
    let list = |v: Option<&Value>| -> Vec<PathBuf> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(rel).collect())
            .unwrap_or_default()
    };
    let mut roots = Vec::new();
    if let Some(envs) = config
        .get("executionEnvironments")
        .and_then(Value::as_array)
    {
        for env in envs {
            roots.extend(env.get("root").and_then(rel));
            roots.extend(list(env.get("extraPaths")));
        }
    }
    roots.push(root.to_path_buf());
    roots.extend(list(config.get("extraPaths")));
    roots.push(root.join("src"));
    let mut out: Vec<PathBuf> = Vec::new();
    for r in roots {
        let r = super::uri::canonical(&r).unwrap_or(r);
        if r.is_dir() && !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Pyright's settings for the workspace as JSON (`{}` when there are none or they do not
/// parse).
pub fn pyright_config(root: &Path) -> Value {
    let json = root.join("pyrightconfig.json");
    if let Ok(text) = std::fs::read_to_string(&json) {
        return serde_json::from_str(&strip_line_comments(&text)).unwrap_or(Value::Null);
    }
    let Ok(text) = std::fs::read_to_string(root.join("pyproject.toml")) else {
        return Value::Null;
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Value::Null;
    };
    doc.get("tool")
        .and_then(|t| t.get("pyright"))
        .and_then(|p| serde_json::to_value(p).ok())
        .unwrap_or(Value::Null)
}

/// pyrightconfig.json allows `//` comments; drop whole-line ones.
fn strip_line_comments(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

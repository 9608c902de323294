//! Module names ↔ files (DESIGN §3): the import roots of a workspace as Pyright sees them, and
//! the lookup `pkg.mod` → `pkg/mod.py` | `pkg/mod/__init__.py` | `.pyi` beside them (a stub
//! wins only when there is no `.py`).
//!
//! Roots, first match wins: each `executionEnvironments[].root` and its `extraPaths`, the
//! workspace root, the top-level `extraPaths`, then `<root>/src`. Settings come from
//! `pyrightconfig.json` when it exists (Pyright ignores `[tool.pyright]` then), else from
//! `[tool.pyright]` in `pyproject.toml`.

use crate::workspace::Workspace;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The import roots of a workspace, in lookup order, deduplicated, existing directories only.
pub fn search_roots(ws: &Workspace) -> Vec<PathBuf> {
    let config = pyright_config(&ws.root);
    let rel = |v: &Value| v.as_str().map(|s| ws.root.join(s));
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
    roots.push(ws.root.clone());
    roots.extend(list(config.get("extraPaths")));
    roots.push(ws.root.join("src"));
    let mut out: Vec<PathBuf> = Vec::new();
    for r in roots {
        let r = r.canonicalize().unwrap_or(r);
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

/// The file that defines `module` under the first root that has it.
pub fn module_file(roots: &[PathBuf], module: &str) -> Option<PathBuf> {
    let parts: Vec<&str> = module.split('.').collect();
    for root in roots {
        let base = parts.iter().fold(root.clone(), |p, part| p.join(part));
        let candidates = [
            base.with_extension("py"),
            base.join("__init__.py"),
            base.with_extension("pyi"),
            base.join("__init__.pyi"),
        ];
        // `with_extension` on `a.b` would replace `.b`; module parts are identifiers, so the
        // last component never has a dot.
        if let Some(hit) = candidates.into_iter().find(|c| c.is_file()) {
            return Some(hit);
        }
    }
    None
}

/// The dotted module name of an absolute file path under the deepest root that contains it.
pub fn module_of(roots: &[PathBuf], abs: &Path) -> Option<String> {
    let mut roots: Vec<&PathBuf> = roots.iter().collect();
    roots.sort_by_key(|r| std::cmp::Reverse(r.components().count()));
    for root in roots {
        let Ok(rel) = abs.strip_prefix(root) else {
            continue;
        };
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let last = parts.pop()?;
        let stem = last
            .strip_suffix(".pyi")
            .or_else(|| last.strip_suffix(".py"))?;
        if stem != "__init__" {
            parts.push(stem.to_string());
        }
        if parts.is_empty()
            || !parts.iter().all(|p| {
                p.chars()
                    .next()
                    .is_some_and(super::super::selector::is_ident_start)
                    && p.chars().all(super::super::selector::is_ident_char)
            })
        {
            continue;
        }
        return Some(parts.join("."));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(root: &Path) -> Workspace {
        Workspace {
            root: root.canonicalize().unwrap(),
        }
    }

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn src_layout_packages_and_stubs() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(r, "src/pkg/__init__.py");
        touch(r, "src/pkg/mod.py");
        touch(r, "src/pkg/mod.pyi");
        touch(r, "src/pkg/only_stub.pyi");
        touch(r, "top.py");
        let w = ws(r);
        let roots = search_roots(&w);
        let rel = |m: &str| {
            module_file(&roots, m).map(|p| w.relative(&p.canonicalize().unwrap()).unwrap())
        };
        assert_eq!(rel("pkg").as_deref(), Some("src/pkg/__init__.py"));
        assert_eq!(rel("pkg.mod").as_deref(), Some("src/pkg/mod.py"));
        assert_eq!(
            rel("pkg.only_stub").as_deref(),
            Some("src/pkg/only_stub.pyi")
        );
        assert_eq!(rel("top").as_deref(), Some("top.py"));
        assert_eq!(rel("pkg.nope"), None);
        let m = module_of(&roots, &w.root.join("src/pkg/__init__.py"));
        assert_eq!(m.as_deref(), Some("pkg"));
        let m = module_of(&roots, &w.root.join("src/pkg/mod.py"));
        assert_eq!(m.as_deref(), Some("pkg.mod"));
    }

    #[test]
    fn extra_paths_and_execution_environments() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(r, "libs/a/alpha.py");
        touch(r, "svc/app/beta.py");
        touch(r, "vendor/gamma.py");
        std::fs::write(
            r.join("pyproject.toml"),
            "[tool.pyright]\nextraPaths = [\"libs/a\"]\n",
        )
        .unwrap();
        let w = ws(r);
        assert!(module_file(&search_roots(&w), "alpha").is_some());
        assert!(module_file(&search_roots(&w), "beta").is_none());
        // pyrightconfig.json wins over pyproject.toml.
        std::fs::write(
            r.join("pyrightconfig.json"),
            "// comment\n{\"executionEnvironments\": [{\"root\": \"svc/app\", \"extraPaths\": [\"vendor\"]}]}",
        )
        .unwrap();
        let roots = search_roots(&w);
        assert!(module_file(&roots, "beta").is_some());
        assert!(module_file(&roots, "gamma").is_some());
        assert!(module_file(&roots, "alpha").is_none());
    }
}

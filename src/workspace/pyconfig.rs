//! Pyright's settings for a workspace, read one way for every reader: from
//! `pyrightconfig.json` when it exists (Pyright ignores `[tool.pyright]` then), else from
//! `[tool.pyright]` in `pyproject.toml` (the toml crate) — and the import roots they give.
//!
//! Roots, first match wins: each `executionEnvironments[].root` and its `extraPaths`, the
//! workspace root, the top-level `extraPaths`, `<root>/src`, then the roots of each nested
//! Python project (a directory below the root with its own `pyproject.toml`, `setup.py` or
//! `setup.cfg`: a monorepo's packages), as a session started in that project would have them
//! ([`nested_roots`]; lanser serves them to the server as `python.analysis.extraPaths`).

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
    roots.extend(nested_roots(root).iter().map(|r| root.join(r)));
    let mut out: Vec<PathBuf> = Vec::new();
    for r in roots {
        let r = super::uri::canonical(&r).unwrap_or(r);
        if r.is_dir() && !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Files that make a directory a Python project of its own.
const PROJECT_MARKERS: &[&str] = &["pyproject.toml", "setup.py", "setup.cfg"];
/// How deep below the root nested projects are looked for.
const NESTED_DEPTH: usize = 4;

/// The import roots of the Python projects nested below `root` (not `root` itself): each
/// one's own roots as [`import_roots`] gives them for a session started there (the project
/// directory, its `extraPaths`, its `src/`), relative to `root` in POSIX form, sorted.
pub fn nested_roots(root: &Path) -> Vec<String> {
    let mut projects = Vec::new();
    find_projects(root, 0, &mut projects);
    let mut out: Vec<String> = projects
        .iter()
        .flat_map(|p| nested_import_roots(p))
        .filter_map(|r| super::walk::relative(root, &r))
        .filter(|r| !r.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A nested project's own roots, without the nested projects below it (found separately):
/// the project, its `src/`, its `extraPaths`, and the site-packages of its own virtual
/// environment (`.venv` or `venv`, as lanser finds a root's interpreter), so the packages
/// installed for it resolve as in a session started there.
fn nested_import_roots(project: &Path) -> Vec<PathBuf> {
    let config = pyright_config(project);
    let mut roots = vec![project.to_path_buf(), project.join("src")];
    if let Some(extra) = config.get("extraPaths").and_then(Value::as_array) {
        roots.extend(
            extra
                .iter()
                .filter_map(Value::as_str)
                .map(|s| project.join(s)),
        );
    }
    for venv in [".venv", "venv"].map(|v| project.join(v)) {
        if venv.join("pyvenv.cfg").is_file() {
            roots.extend(site_packages(&venv));
        }
    }
    roots
        .into_iter()
        .filter_map(|r| super::uri::canonical(&r).ok())
        .filter(|r| r.is_dir())
        .collect()
}

/// The site-packages directories of the virtual environment at `venv` (`lib/pythonX.Y/…` on
/// Unix, `Lib/…` on Windows), sorted.
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let mut found = vec![venv.join("Lib").join("site-packages")];
    if let Ok(entries) = std::fs::read_dir(venv.join("lib")) {
        let mut libs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .map(|e| e.path().join("site-packages"))
            .collect();
        libs.sort();
        found.extend(libs);
    }
    found
}

/// The directories below `dir` (to [`NESTED_DEPTH`]) that hold a [`PROJECT_MARKERS`] file,
/// walking as the file index does (no virtual environments, caches or hidden directories).
fn find_projects(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth >= NESTED_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| super::walk::walked_dir(&e.file_name().to_string_lossy(), &e.path()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        if PROJECT_MARKERS.iter().any(|m| sub.join(m).is_file()) {
            out.push(sub.clone());
        }
        find_projects(&sub, depth + 1, out);
    }
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

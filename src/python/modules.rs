//! Module names ↔ files (docs/selectors.md#symbols-py): the import roots of a workspace as
//! Pyright sees them, and
//! the lookup `pkg.mod` → `pkg/mod.py` | `pkg/mod/__init__.py` | `.pyi` beside them (a stub
//! wins only when there is no `.py`), by absolute path ([`module_file`], [`module_of`]) and by
//! workspace-relative *stem* ([`stem`], [`workspace_roots`], [`name_under`]).
//!
//! A stem is a workspace-relative path without the `.py`/`.pyi` suffix (a package is its
//! directory, `pkg/__init__.py` is `pkg`); the dotted name `a.b` means the stem `R/a/b` under
//! each import root `R`. The roots themselves come from the workspace
//! ([`crate::workspace::pyconfig`], cached by [`Workspace::import_roots`]).

use crate::workspace::Workspace;
use std::path::{Path, PathBuf};

/// The stem of a file path: `a/b.py` → `a/b`, `a/__init__.py` → `a`; other files keep their
/// name.
pub fn stem(rel: &str) -> String {
    let s = rel
        .strip_suffix(".py")
        .or_else(|| rel.strip_suffix(".pyi"))
        .unwrap_or(rel);
    match s.rsplit_once('/') {
        Some((dir, "__init__")) => dir.to_string(),
        None if s == "__init__" => String::new(),
        _ => s.to_string(),
    }
}

/// Whether a workspace-relative path is a Python source or stub.
pub fn is_python(rel: &str) -> bool {
    rel.ends_with(".py") || rel.ends_with(".pyi")
}

/// Two stems (or directories) joined with `/` (`""` is the workspace root).
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// The directory of a workspace-relative path (`""` at the top).
pub fn parent(p: &str) -> &str {
    p.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The components of a workspace-relative path.
pub fn parts(p: &str) -> Vec<&str> {
    p.split('/').filter(|c| !c.is_empty()).collect()
}

/// The import roots inside the workspace, workspace-relative (`""` is the root itself), as the
/// workspace reads them ([`crate::workspace::pyconfig::import_roots`]): the root, then `src`,
/// then the rest (`extraPaths`, `executionEnvironments`) in Pyright's order. Roots outside
/// the workspace are left out.
pub fn workspace_roots(ws: &Workspace) -> Vec<String> {
    let mut out = vec![String::new()];
    let roots = ws.import_roots();
    let rel: Vec<String> = roots.iter().filter_map(|r| ws.relative(r)).collect();
    if rel.iter().any(|r| r == "src") {
        out.push("src".into());
    }
    for r in rel {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// The dotted name of `stem` under the workspace-relative `root`, if it is below it and every
/// part is an identifier.
pub fn name_under(stem: &str, root: &str) -> Option<String> {
    let rest = if root.is_empty() {
        stem
    } else {
        stem.strip_prefix(root)?.strip_prefix('/')?
    };
    let parts = parts(rest);
    (!parts.is_empty() && parts.iter().all(|p| super::is_identifier(p))).then(|| parts.join("."))
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
        // Path-like parts (`0001_initial`) name a module file a selector can still reach.
        if parts.is_empty()
            || !parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(crate::selector::is_module_char))
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
        Workspace::new(root.canonicalize().unwrap())
    }

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn stems_and_names() {
        assert_eq!(stem("src/a/b.py"), "src/a/b");
        assert_eq!(stem("src/a/__init__.py"), "src/a");
        assert_eq!(stem("a.pyi"), "a");
        assert_eq!(stem("__init__.py"), "");
        assert_eq!(name_under("src/a/b", "src").as_deref(), Some("a.b"));
        assert_eq!(name_under("src/a/b", "").as_deref(), Some("src.a.b"));
        assert_eq!(name_under("srcx/a", "src"), None);
        assert_eq!(name_under("src", "src"), None);
        // Keywords and path-like parts are no dotted names.
        assert_eq!(name_under("p/class/x", ""), None);
        assert_eq!(name_under("p/my-script", ""), None);
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
        let roots = w.import_roots();
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
        assert!(module_file(&w.import_roots(), "alpha").is_some());
        assert!(module_file(&w.import_roots(), "beta").is_none());
        // pyrightconfig.json wins over pyproject.toml.
        std::fs::write(
            r.join("pyrightconfig.json"),
            "// comment\n{\"executionEnvironments\": [{\"root\": \"svc/app\", \"extraPaths\": [\"vendor\"]}]}",
        )
        .unwrap();
        w.forget_roots();
        let roots = w.import_roots();
        assert!(module_file(&roots, "beta").is_some());
        assert!(module_file(&roots, "gamma").is_some());
        assert!(module_file(&roots, "alpha").is_none());
    }

    #[test]
    fn path_like_module_names_reach_their_files() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(r, "app/__init__.py");
        touch(r, "app/migrations/__init__.py");
        touch(r, "app/migrations/0001_initial.py");
        touch(r, "tools/my-script.py");
        let w = ws(r);
        let roots = w.import_roots();
        for (module, file) in [
            (
                "app.migrations.0001_initial",
                "app/migrations/0001_initial.py",
            ),
            ("tools.my-script", "tools/my-script.py"),
        ] {
            let found = module_file(&roots, module).unwrap();
            assert_eq!(w.relative(&found.canonicalize().unwrap()).unwrap(), file);
            assert_eq!(
                module_of(&roots, &w.root.join(file)).as_deref(),
                Some(module)
            );
            let sel = format!("py://{module}#Migration");
            let spec = crate::selector::parse(&sel).unwrap();
            assert_eq!(spec.to_canonical(), sel);
        }
        assert!(crate::selector::parse("py://app.#X").is_err());
        assert!(crate::selector::parse("py://app.a b#X").is_err());
    }
}

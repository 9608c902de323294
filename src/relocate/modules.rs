//! Module names ↔ files (docs/selectors.md#symbols-py): the import roots of a workspace as
//! Pyright sees them, and
//! the lookup `pkg.mod` → `pkg/mod.py` | `pkg/mod/__init__.py` | `.pyi` beside them (a stub
//! wins only when there is no `.py`).
//!
//! The roots themselves come from the workspace ([`crate::workspace::pyconfig`]).

use std::path::{Path, PathBuf};

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

    use crate::workspace::Workspace;

    fn ws(root: &Path) -> Workspace {
        Workspace::new(root.canonicalize().unwrap())
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

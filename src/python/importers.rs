//! Which workspace files import given modules: each Python file's import statements, read by
//! the tokenizer ([`super::imports::scan`], so strings and comments never count and comma
//! lists, parentheses and continuations do), resolved to module stems as Pyright looks them
//! up ([`super::modules`]). Each file's resolved stems are kept in the process while its
//! metadata vouches for its bytes, so a daemon's next ask only looks at every file's metadata.
//!
//! A statement imports a module when the names it binds reach it: `import a.b.c` binds `a`,
//! through which `a`, `a.b` and `a.b.c` are reached; `from M import x` reaches `M`, and `M.x`
//! when that is a module. (`from a.b import x` runs `a`'s `__init__` too, but binds nothing
//! of it: a change there cannot change what the importer sees, so it is not counted.) An
//! absolute name is looked up under every import root and, as Pyright does last, under the
//! importing file's directory and its parents; a relative one under the importing file's
//! package (`from . import x` in `p/q/f.py` means `p/q/x`, `from ..r import y` means `p/r`).

use super::imports::{self, Import};
use super::modules::{is_python, join, parent, parts, stem, workspace_roots};
use crate::workspace::index::Stat;
use crate::workspace::walk::settled;
use crate::workspace::Workspace;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// Workspace Python files (other than `files`) whose imports name the module of one of the
/// workspace-relative `files`, sorted.
pub fn importers(ws: &Workspace, files: &[String]) -> Vec<String> {
    found(ws, files).into_iter().map(|(rel, _)| rel).collect()
}

/// Each workspace Python file (other than `files`) whose imports name the module of one of
/// `files`, with those of `files` it imports (in `files`' order), and its text.
pub fn importers_of(ws: &Workspace, files: &[String]) -> BTreeMap<String, Imported> {
    found(ws, files)
        .into_iter()
        .filter_map(|(rel, (modules, star))| {
            let text = std::fs::read_to_string(ws.root.join(&rel)).ok()?;
            Some((
                rel,
                Imported {
                    modules,
                    star,
                    text,
                },
            ))
        })
        .collect()
}

/// Each importer of `files` (sorted), with those of `files` it imports and whether it has a
/// star import.
fn found(ws: &Workspace, files: &[String]) -> Vec<(String, (Vec<String>, bool))> {
    let targets: Vec<(&String, String)> = files
        .iter()
        .filter(|f| is_python(f))
        .map(|f| (f, stem(f)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    if targets.is_empty() {
        return Vec::new();
    }
    let roots = workspace_roots(ws);
    let mut out = Vec::new();
    for rel in ws.python_files() {
        if files.contains(&rel) {
            continue;
        }
        let Some((reach, star)) = scanned(&ws.root.join(&rel), &rel, &roots) else {
            continue;
        };
        let modules: Vec<String> = targets
            .iter()
            .filter(|(_, s)| reach.contains(s))
            .map(|(f, _)| (*f).clone())
            .collect();
        if !modules.is_empty() {
            out.push((rel, (modules, star)));
        }
    }
    out
}

/// What an importer imports of the changed files.
pub struct Imported {
    /// The changed files it imports.
    pub modules: Vec<String>,
    /// Whether it has a star import (of any module).
    pub star: bool,
    /// Its text.
    pub text: String,
}

/// One file's imports as scanned: the stems they may reach under the import roots, and
/// whether one is a star import — kept while the file's metadata vouches for its bytes (as
/// the workspace index trusts it: not within [`crate::workspace::walk::RACY`] of a change).
struct Scanned {
    stat: Stat,
    rel: String,
    roots: Vec<String>,
    reach: Vec<String>,
    star: bool,
}

/// What `rel` (at `abs`) imports under `roots`: from the last scan while its metadata is the
/// same, else scanned now. A daemon asks for every workspace file on each check; reading and
/// scanning Django's 2,800 files took 0.3 s of each verified write.
fn scanned(abs: &Path, rel: &str, roots: &[String]) -> Option<(Vec<String>, bool)> {
    static SCANS: OnceLock<Mutex<HashMap<PathBuf, Scanned>>> = OnceLock::new();
    let scans = SCANS.get_or_init(Default::default);
    let meta = std::fs::metadata(abs).ok()?;
    let stat = Stat::of(&meta);
    if let Some(s) = scans.lock().ok()?.get(abs) {
        if s.stat == stat && s.rel == rel && s.roots == roots {
            return Some((s.reach.clone(), s.star));
        }
    }
    let text = std::fs::read_to_string(abs).ok()?;
    let bases = absolute_bases(rel, roots);
    let scan = imports::scan(&text);
    let reach: Vec<String> = scan
        .imports
        .iter()
        .flat_map(|stmt| reached(rel, stmt, &bases))
        .collect();
    let star = scan.imports.iter().any(|i| i.star);
    if settled(meta.modified().ok(), SystemTime::now()) {
        let kept = Scanned {
            stat,
            rel: rel.to_string(),
            roots: roots.to_vec(),
            reach: reach.clone(),
            star,
        };
        scans.lock().ok()?.insert(abs.to_path_buf(), kept);
    }
    Some((reach, star))
}

/// Whether the file `rel` (workspace-relative) with contents `text` imports one of the
/// modules whose stems are `targets`, under the workspace-relative import `roots`.
pub fn imports_any(rel: &str, text: &str, roots: &[String], targets: &[String]) -> bool {
    let bases = absolute_bases(rel, roots);
    imports::scan(text).imports.iter().any(|stmt| {
        reached(rel, stmt, &bases)
            .iter()
            .any(|s| targets.contains(s))
    })
}

/// Where an absolute import is looked up from `rel`: the import roots, then the importing
/// file's directory and each parent up to the workspace root.
fn absolute_bases(rel: &str, roots: &[String]) -> Vec<String> {
    let mut out: Vec<String> = roots.to_vec();
    let mut dir = parent(rel);
    loop {
        if !out.iter().any(|r| r == dir) {
            out.push(dir.to_string());
        }
        if dir.is_empty() {
            return out;
        }
        dir = parent(dir);
    }
}

/// The stems one import statement in `rel` may reach.
fn reached(rel: &str, stmt: &Import, bases: &[String]) -> Vec<String> {
    let under = |dotted: &[&str]| -> Vec<String> {
        let path = dotted.join("/");
        bases.iter().map(|b| join(b, &path)).collect()
    };
    let Some(from) = &stmt.from else {
        // `import a.b.c`: `a`, `a.b` and `a.b.c`.
        return stmt
            .items
            .iter()
            .flat_map(|item| {
                let names = item.name.names();
                (1..=names.len())
                    .flat_map(|k| under(&names[..k]))
                    .collect::<Vec<_>>()
            })
            .collect();
    };
    let module: Vec<&str> = from.module.as_ref().map(|m| m.names()).unwrap_or_default();
    let modules = if from.level == 0 {
        under(&module)
    } else {
        // `.` is the importing file's package (its directory), each further dot one up.
        let mut base = parts(parent(rel));
        if from.level - 1 > base.len() {
            return Vec::new();
        }
        base.truncate(base.len() - (from.level - 1));
        vec![join(&base.join("/"), &module.join("/"))]
    };
    let mut out = Vec::new();
    for m in modules {
        for item in &stmt.items {
            out.push(join(&m, &item.name.parts[0].text));
        }
        out.push(m);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(extra: &[&str]) -> Vec<String> {
        let mut r = vec![String::new()];
        r.extend(extra.iter().map(|s| s.to_string()));
        r
    }

    /// Whether `text` in the file `rel` imports `pkg/mod.py` (roots: the workspace, `src`).
    fn imports_mod(rel: &str, text: &str) -> bool {
        imports_any(rel, text, &roots(&["src"]), &[stem("pkg/mod.py")])
    }

    #[test]
    fn absolute_imports_in_every_form() {
        for text in [
            "import pkg.mod\n",
            "import pkg.mod as m\n",
            "import json, pkg.mod\n",
            "import json as j, pkg.mod as m\n",
            "from pkg import mod\n",
            "from pkg import other, mod as m\n",
            "from pkg import (\n    other,\n    mod,\n)\n",
            "from pkg import (other,  # comment\n    mod)\n",
            "from pkg import \\\n    mod\n",
            "from pkg.mod import f\n",
            "from pkg.mod import *\n",
            "import pkg.mod.sub\n",
            "if TYPE_CHECKING:\n    from pkg import mod\n",
            "x = 1; import pkg.mod\n",
            "def f():\n    from pkg import mod\n",
        ] {
            assert!(imports_mod("app/user.py", text), "{text:?}");
        }
    }

    #[test]
    fn look_alikes_are_no_imports() {
        for text in [
            "import pkg\n",
            "import pkg.mod_other\n",
            "import pkgmod\n",
            "from pkg import other\n",
            "from pkg import model\n",
            "from pkg.model import mod\n",
            "from other import mod\n",
            "s = 'import pkg.mod'\n",
            "# from pkg import mod\n",
            "t = '''\nfrom pkg import mod\n'''\n",
            "from . import mod\n",
            // Binds `f` of `pkg.mod.sub` and nothing of `pkg.mod`.
            "from pkg.mod.sub import f\n",
        ] {
            assert!(!imports_mod("app/user.py", text), "{text:?}");
        }
    }

    #[test]
    fn relative_imports_resolve_against_the_importers_package() {
        assert!(imports_mod("pkg/user.py", "from . import mod\n"));
        assert!(imports_mod("pkg/user.py", "from . import (x,\n  mod)\n"));
        assert!(imports_mod("pkg/user.py", "from .mod import f\n"));
        assert!(imports_mod("pkg/sub/user.py", "from .. import mod\n"));
        assert!(imports_mod("pkg/sub/user.py", "from ..mod import f\n"));
        assert!(imports_mod("pkg/__init__.py", "from .mod import f\n"));
        assert!(!imports_mod("pkg/sub/user.py", "from . import mod\n"));
        assert!(!imports_mod("other/user.py", "from .mod import f\n"));
        // Climbing above the workspace names nothing.
        assert!(!imports_mod("pkg/user.py", "from ... import mod\n"));
        // A package's own `__init__` is imported by `from . import x` in it, and by any
        // `import pkg.x`; its modules importing each other, or `from pkg.x import`, bind
        // nothing of it.
        let init = [stem("pkg/__init__.py")];
        let imports_init = |rel: &str, text: &str| imports_any(rel, text, &roots(&[]), &init);
        assert!(imports_init("pkg/user.py", "from . import x\n"));
        assert!(imports_init("app/u.py", "import pkg.mod\n"));
        assert!(!imports_init("app/u.py", "import pkgx\n"));
        assert!(!imports_init("pkg/a.py", "from .mod import f\n"));
        assert!(!imports_init("app/u.py", "from pkg.mod import f\n"));
    }

    #[test]
    fn roots_name_modules() {
        // Under `src/` and under an extraPaths root the dotted name starts below the root.
        let src = [stem("src/pkg/mod.py")];
        assert!(imports_any(
            "tests/t.py",
            "from pkg import mod\n",
            &roots(&["src"]),
            &src
        ));
        let lib = [stem("libs/core/shapes.py")];
        let text = "from shapes import area\n";
        assert!(imports_any("app/a.py", text, &roots(&["libs/core"]), &lib));
        assert!(!imports_any("app/a.py", text, &roots(&[]), &lib));
        // The importer's own directory (and its parents) as Pyright's last resort.
        assert!(imports_any("libs/core/use.py", text, &roots(&[]), &lib));
    }

    #[test]
    fn importers_of_a_workspace_read_its_pyright_config() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let put = |rel: &str, text: &str| {
            let p = r.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("pyrightconfig.json", "{\"extraPaths\": [\"vendor\"]}");
        put("vendor/geo/__init__.py", "");
        put("vendor/geo/area.py", "def f(x): return x\n");
        put("app/a.py", "from geo import area\n");
        put("app/b.py", "import os, geo.area\n");
        put("app/c.py", "from geo.area import f\n");
        put("app/d.py", "import geo\n");
        put("vendor/geo/e.py", "from . import area\n");
        put("vendor/geo/f.py", "from .areas import f\n");
        let ws = Workspace::new(r.canonicalize().unwrap());
        assert_eq!(
            importers(&ws, &["vendor/geo/area.py".to_string()]),
            ["app/a.py", "app/b.py", "app/c.py", "vendor/geo/e.py"]
        );
        assert!(importers(&ws, &["README.md".to_string()]).is_empty());
    }
}

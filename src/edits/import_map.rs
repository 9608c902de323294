//! How a move maps modules, and the import rewriting it implies.
//!
//! Modules are named by *stems* ([`crate::python::modules`]): workspace-relative paths without
//! the `.py`/`.pyi` suffix. A dotted name `a.b` means the stem `R/a/b` under each import root
//! `R` (the workspace root, `src/`, and pyright `extraPaths`); a relative import means a stem
//! under the importing file's own directory. A [`Move`] maps stems (`S` → `D`, and `S/x` →
//! `D/x` for a package), and each import statement that names a mapped stem — or that is
//! relative and sits in a moved file — is re-expressed: absolute names stay absolute, relative
//! ones stay relative when the target is still inside the importer's top-level package;
//! `from pkg import mod` keeps its local name with `as` when the module's name changes, and
//! moves to its own statement when the module changes package.
//! `a.b.f()` uses of a module bound by an unaliased `import a.b` follow it. Edits are byte
//! spans of the text as it is now.

use crate::python::imports::{self, Import, Item};
use crate::python::modules::{join, name_under, parent, parts, stem};
use std::collections::BTreeSet;

/// One move: a file or a directory, by workspace-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub src: String,
    pub dst: String,
    pub is_dir: bool,
}

impl Move {
    pub fn src_stem(&self) -> String {
        if self.is_dir {
            self.src.clone()
        } else {
            stem(&self.src)
        }
    }
    pub fn dst_stem(&self) -> String {
        if self.is_dir {
            self.dst.clone()
        } else {
            stem(&self.dst)
        }
    }

    /// Where the module (or package) at `stem` is after the move, if it moves.
    pub fn map_stem(&self, stem: &str) -> Option<String> {
        let (s, d) = (self.src_stem(), self.dst_stem());
        if stem == s {
            return Some(d);
        }
        let rest = stem.strip_prefix(&s)?.strip_prefix('/')?;
        self.is_dir.then(|| join(&d, rest))
    }

    /// Where the file at `rel` is after the move, if it moves.
    pub fn map_file(&self, rel: &str) -> Option<String> {
        if rel == self.src {
            return Some(self.dst.clone());
        }
        let rest = rel.strip_prefix(&self.src)?.strip_prefix('/')?;
        self.is_dir.then(|| join(&self.dst, rest))
    }
}

/// How imports are resolved in one workspace.
pub struct Resolver<'a> {
    pub roots: &'a [String],
    pub mv: &'a Move,
}

impl Resolver<'_> {
    /// The most specific root under which `stem` has a dotted name.
    pub fn best_root(&self, stem: &str) -> Option<&str> {
        self.roots
            .iter()
            .filter(|r| name_under(stem, r).is_some())
            .max_by_key(|r| r.len())
            .map(String::as_str)
    }

    /// The dotted name of `stem`, under `root` when possible, else under its best root.
    pub fn name_of(&self, stem: &str, root: Option<&str>) -> Option<String> {
        root.and_then(|r| name_under(stem, r))
            .or_else(|| name_under(stem, self.best_root(stem)?))
    }

    /// `target` relative to the package directory `pkg` (`.x`, `..y.z`, `.`), when both are
    /// inside one top-level package below `root`.
    fn relative(pkg: &str, target: &str, root: &str) -> Option<String> {
        let (p, t, r) = (parts(pkg), parts(target), parts(root));
        let common = p.iter().zip(&t).take_while(|(a, b)| a == b).count();
        if common <= r.len() || !p.starts_with(&r) {
            return None;
        }
        Some(format!(
            "{}{}",
            ".".repeat(p.len() - common + 1),
            t[common..].join(".")
        ))
    }

    /// The text edits (byte spans, replacement) for the file `rel` with contents `text`.
    pub fn rewrite(&self, rel: &str, text: &str) -> Vec<(usize, usize, String)> {
        let scan = imports::scan(text);
        let moved_to = self.mv.map_file(rel);
        let new_rel = moved_to.clone().unwrap_or_else(|| rel.to_string());
        let ctx = Ctx {
            r: self,
            text,
            pkg_old: parent(rel).to_string(),
            pkg_new: parent(&new_rel).to_string(),
            importer_moved: moved_to.is_some(),
            root_new: self.best_root(&stem(&new_rel)).unwrap_or("").to_string(),
        };
        let mut edits = Vec::new();
        let mut bound = BTreeSet::new();
        for stmt in &scan.imports {
            match &stmt.from {
                None => ctx.plain_import(stmt, &mut edits, &mut bound),
                Some(_) => ctx.import_from(stmt, &mut edits),
            }
        }
        // Qualified uses (`a.b.f()`) of modules bound by an unaliased `import a.b`.
        for u in &scan.uses {
            if !bound.contains(u.parts[0].text.as_str()) {
                continue;
            }
            let names = u.names();
            'prefix: for k in 1..=names.len() {
                for root in self.roots {
                    let s = join(root, &names[..k].join("/"));
                    if let Some(ns) = self.mv.map_stem(&s) {
                        if let Some(new) = self.name_of(&ns, Some(root)) {
                            if new != names[..k].join(".") {
                                edits.push((u.parts[0].start, u.parts[k - 1].end, new));
                            }
                        }
                        break 'prefix;
                    }
                }
            }
        }
        edits.sort();
        edits.dedup();
        edits
    }
}

struct Ctx<'a> {
    r: &'a Resolver<'a>,
    text: &'a str,
    pkg_old: String,
    pkg_new: String,
    importer_moved: bool,
    root_new: String,
}

impl Ctx<'_> {
    /// `import a.b [as c], …`
    fn plain_import(
        &self,
        stmt: &Import,
        edits: &mut Vec<(usize, usize, String)>,
        bound: &mut BTreeSet<String>,
    ) {
        for item in &stmt.items {
            let names = item.name.names();
            if item.alias.is_none() {
                bound.insert(names[0].to_string());
            }
            for root in self.r.roots {
                let s = join(root, &names.join("/"));
                if let Some(ns) = self.r.mv.map_stem(&s) {
                    if let Some(new) = self.r.name_of(&ns, Some(root)) {
                        if new != names.join(".") {
                            edits.push((item.name.start(), item.name.end(), new));
                        }
                    }
                    break;
                }
            }
        }
    }

    /// How the importer names the target stem `t` after the move.
    fn expr(&self, t: &str, relative: bool, root: Option<&str>) -> Option<String> {
        if relative {
            if let Some(rel) = Resolver::relative(&self.pkg_new, t, &self.root_new) {
                return Some(rel);
            }
        }
        self.r.name_of(t, root)
    }

    /// The stems `from <level dots>module` may mean: one for a relative import (none when it
    /// climbs above the top), one per import root otherwise.
    fn stems(&self, level: usize, module: &[&str]) -> Option<Vec<(Option<&str>, String)>> {
        if level > 0 {
            let mut base = parts(&self.pkg_old);
            if level - 1 > base.len() {
                return None;
            }
            base.truncate(base.len() - (level - 1));
            return Some(vec![(None, join(&base.join("/"), &module.join("/")))]);
        }
        Some(
            self.r
                .roots
                .iter()
                .map(|r| (Some(r.as_str()), join(r, &module.join("/"))))
                .collect(),
        )
    }

    /// `from M import x [as y], …`
    fn import_from(&self, stmt: &Import, edits: &mut Vec<(usize, usize, String)>) {
        let from = stmt.from.as_ref().expect("a from import");
        let module: Vec<&str> = from.module.as_ref().map(|m| m.names()).unwrap_or_default();
        let relative = from.level > 0;
        let Some(candidates) = self.stems(from.level, &module) else {
            return;
        };
        let touches = |s: &str| {
            self.r.mv.map_stem(s).is_some()
                || stmt.items.iter().any(|i| {
                    self.r
                        .mv
                        .map_stem(&join(s, &i.name.parts[0].text))
                        .is_some()
                })
        };
        let Some((root, m_stem)) = candidates
            .iter()
            .find(|(_, s)| touches(s))
            .or(if relative && self.importer_moved {
                candidates.first()
            } else {
                None
            })
            .cloned()
        else {
            return;
        };
        let m_new = self.r.mv.map_stem(&m_stem);
        let module_moved = m_new.is_some();
        let m_new = m_new.unwrap_or_else(|| m_stem.clone());
        let old_text = format!("{}{}", ".".repeat(from.level), module.join("."));
        let Some(new_text) = self.expr(&m_new, relative, root) else {
            return;
        };
        let mut from_edit =
            (new_text != old_text).then(|| (from.start, from.end, new_text.clone()));
        if !module_moved && !stmt.star {
            for (idx, item) in stmt.items.iter().enumerate() {
                let name = &item.name.parts[0];
                let Some(target) = self.r.mv.map_stem(&join(&m_stem, &name.text)) else {
                    continue;
                };
                let (new_parent, new_last) = match target.rsplit_once('/') {
                    Some((p, l)) => (p.to_string(), l.to_string()),
                    None => (String::new(), target.clone()),
                };
                let local = item.alias.as_ref().unwrap_or(name).text.clone();
                let as_text = |last: &str| {
                    if last == local {
                        last.to_string()
                    } else {
                        format!("{last} as {local}")
                    }
                };
                if new_parent == m_new {
                    if new_last != name.text {
                        edits.push((item.start, item.end, as_text(&new_last)));
                    }
                    continue;
                }
                // The module now lives in another package (or at the top level of an import
                // root): import it from there.
                let troot = root
                    .filter(|r| name_under(&target, r).is_some())
                    .or_else(|| self.r.best_root(&target));
                let parent_expr = if Some(new_parent.as_str()) == troot {
                    None
                } else {
                    self.expr(&new_parent, relative, troot)
                };
                let new_stmt = match &parent_expr {
                    Some(p) => format!("from {p} import {}", as_text(&new_last)),
                    None => format!("import {}", as_text(&new_last)),
                };
                if stmt.items.len() == 1 {
                    from_edit = None;
                    edits.push((stmt.start, stmt.end, new_stmt));
                } else {
                    edits.extend(self.remove_item(stmt, idx));
                    let indent = imports::indentation(self.text, stmt.start);
                    let text = if stmt.newline.is_empty() {
                        format!("\n{indent}{new_stmt}")
                    } else {
                        format!("{indent}{new_stmt}{}", stmt.newline)
                    };
                    edits.push((stmt.line_end, stmt.line_end, text));
                }
            }
        }
        edits.extend(from_edit);
    }

    /// Edits that remove item `idx` (and one comma) from a statement with several items,
    /// taking its whole line when it stands alone there.
    fn remove_item(&self, stmt: &Import, idx: usize) -> Vec<(usize, usize, String)> {
        let item: &Item = &stmt.items[idx];
        let t = self.text;
        let line_start = t[..item.start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let alone_before = t[line_start..item.start].trim().is_empty();
        let after = |from: usize| {
            let rest = &t[from..];
            from + (rest.len() - rest.trim_start_matches([' ', '\t']).len())
        };
        let eol = |at: usize| {
            let b = t.as_bytes();
            match b.get(at) {
                Some(b'\r') if b.get(at + 1) == Some(&b'\n') => Some(at + 2),
                Some(b'\r') | Some(b'\n') => Some(at + 1),
                _ => None,
            }
        };
        match item.comma {
            Some((_, ce)) => {
                let end = after(ce);
                match eol(end) {
                    Some(next) if alone_before => vec![(line_start, next, String::new())],
                    _ => vec![(item.start, end, String::new())],
                }
            }
            None => {
                let prev = stmt.items[idx - 1].comma.expect("a comma between items");
                match eol(after(item.end)) {
                    Some(next) if alone_before => {
                        vec![
                            (prev.0, prev.1, String::new()),
                            (line_start, next, String::new()),
                        ]
                    }
                    _ => vec![(prev.0, item.end, String::new())],
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, edits: &[(usize, usize, String)]) -> String {
        let mut out = text.to_string();
        for (s, e, t) in edits.iter().rev() {
            out.replace_range(s..e, t);
        }
        out
    }

    fn rewrite(mv: &Move, rel: &str, text: &str) -> String {
        let roots = vec![String::new(), "src".to_string()];
        let r = Resolver { roots: &roots, mv };
        apply(text, &r.rewrite(rel, text))
    }

    fn file(src: &str, dst: &str) -> Move {
        Move {
            src: src.into(),
            dst: dst.into(),
            is_dir: false,
        }
    }

    #[test]
    fn stems_and_maps() {
        let d = Move {
            src: "src/a".into(),
            dst: "src/z".into(),
            is_dir: true,
        };
        assert_eq!(d.map_stem("src/a/b").as_deref(), Some("src/z/b"));
        assert_eq!(d.map_stem("src/ab"), None);
        assert_eq!(d.map_file("src/a/x/y.py").as_deref(), Some("src/z/x/y.py"));
    }

    #[test]
    fn absolute_imports_and_qualified_uses() {
        let mv = file("src/p/units.py", "src/p/conv.py");
        let text = "import p.units\nimport p.units as u\nfrom p import units, geo\nfrom p.units import (\n    f,  # c\n)\nx = p.units.f() + 'p.units'  # p.units\n";
        assert_eq!(
            rewrite(&mv, "tests/t.py", text),
            "import p.conv\nimport p.conv as u\nfrom p import conv as units, geo\nfrom p.conv import (\n    f,  # c\n)\nx = p.conv.f() + 'p.units'  # p.units\n"
        );
    }

    #[test]
    fn moves_into_another_package_split_statements() {
        let mv = file("src/p/units.py", "src/p/sub/units.py");
        let text = "from . import units, geo\nfrom . import (\n    geo,\n    units,\n)\nfrom .units import f\n";
        assert_eq!(
            rewrite(&mv, "src/p/a.py", text),
            "from . import geo\nfrom .sub import units\nfrom . import (\n    geo,\n)\nfrom .sub import units\nfrom .sub.units import f\n"
        );
        // The moved file's own relative imports follow it.
        assert_eq!(
            rewrite(
                &mv,
                "src/p/units.py",
                "from .geo import g\nfrom . import geo\n"
            ),
            "from ..geo import g\nfrom .. import geo\n"
        );
        // To the top level: absolute.
        let top = file("src/p/units.py", "src/units.py");
        assert_eq!(
            rewrite(
                &top,
                "src/p/a.py",
                "from . import units\nfrom .units import f\n"
            ),
            "import units\nfrom units import f\n"
        );
    }

    #[test]
    fn top_level_moves_rebind_and_aliases_are_kept() {
        let top = file("src/p/units.py", "src/units.py");
        assert_eq!(
            rewrite(
                &top,
                "tests/t.py",
                "import p.units\nfrom p import units as u\nfrom p import (units)\nx = p.units.f()\n"
            ),
            "import units\nimport units as u\nimport units\nx = units.f()\n"
        );
        let same = file("src/p/units.py", "src/p/conv.py");
        assert_eq!(
            rewrite(&same, "tests/t.py", "from p import units as conv\n"),
            "from p import conv\n"
        );
        // Nothing that only looks like the module changes.
        let text = "self.p.units.f()\nimport q as p\np.units.f()\n";
        assert_eq!(rewrite(&same, "tests/t.py", text), text);
    }

    #[test]
    fn package_moves() {
        let mv = Move {
            src: "src/p".into(),
            dst: "src/q".into(),
            is_dir: true,
        };
        let text = "import p\nimport p.units\nfrom p.geo import C\nfrom p import geo\ny = p.C + p.units.f()\n";
        assert_eq!(
            rewrite(&mv, "tests/t.py", text),
            "import q\nimport q.units\nfrom q.geo import C\nfrom q import geo\ny = q.C + q.units.f()\n"
        );
        assert_eq!(
            rewrite(&mv, "src/p/a.py", "from .geo import C\n"),
            "from .geo import C\n"
        );
    }
}

//! `rename-file`'s edit plan: moving a module file or a package directory, with every import
//! of the moved module(s) rewritten by lanser itself (Pyright offers no file-rename support;
//! the rewriting is [`super::import_map`]'s).
//!
//! The plan lists the text edits first (each at its file's current path, the moved files'
//! own edits included), then an empty `__init__.py` for each package directory the move
//! creates, then the rename: one transaction for `apply`. The preview is a git-style diff
//! that `git apply` reproduces.

pub use super::import_map::Move;
use super::import_map::Resolver;
use super::{apply_edits, Edit, FileChange, Plan};
use crate::error::{ErrorCode, LanserError, Result};
use crate::python::modules::{name_under, parent, workspace_roots};
use crate::safety::Jail;
use crate::selector::resolve::Document;
use crate::text::Encoding;
use crate::workspace::Workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What `build` made: the plan, the module names it maps, and the files that move.
pub struct Built {
    pub plan: Plan,
    /// (old dotted name, new dotted name) per import root that names the source.
    pub modules: Vec<(String, String)>,
    /// (old, new) relative path of every file that moves (a directory's files, sorted).
    pub moved_files: Vec<(String, String)>,
    /// `__init__.py` files created in new package directories.
    pub created: Vec<String>,
}

/// Every file below `dir` (workspace-relative), skipping `__pycache__`.
fn files_below(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if name != "__pycache__" {
                    stack.push(p);
                }
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

fn usage(msg: String) -> LanserError {
    LanserError::usage(msg)
}

/// A single Python module keeps its suffix and is not a package's `__init__`.
fn refuse_unmovable_module(mv: &Move) -> Result<()> {
    let name = mv.src.rsplit('/').next().unwrap_or_default();
    if name == "__init__.py" || name == "__init__.pyi" {
        return Err(usage(format!(
            "refusing to move {}: it is what makes its directory a package; move the directory instead",
            mv.src
        )));
    }
    let ext = |p: &str| p.rsplit_once('.').map(|(_, e)| e.to_string());
    if ext(&mv.src) != ext(&mv.dst) {
        return Err(usage(format!(
            "{} must keep the suffix of {} to stay an importable module",
            mv.dst, mv.src
        )));
    }
    Ok(())
}

/// Every workspace Python file whose imports name the moved module, with its imports
/// rewritten.
fn rewrite_importers(
    ws: &Workspace,
    jail: &Jail,
    r: &Resolver,
    enc: Encoding,
) -> Result<Vec<FileChange>> {
    let root = &ws.root;
    let mut changes = Vec::new();
    for rel in ws.python_files() {
        let abs = root.join(&rel);
        let doc = match Document::load(abs.clone(), rel.clone()) {
            Ok(d) => d,
            Err(e) if e.code == ErrorCode::IndexingUnsupported => {
                let lossy =
                    String::from_utf8_lossy(&std::fs::read(&abs).unwrap_or_default()).into_owned();
                if r.rewrite(&rel, &lossy).is_empty() {
                    continue;
                }
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let spans = r.rewrite(&rel, &doc.text);
        if spans.is_empty() {
            continue;
        }
        jail.check_path(&abs)?;
        let mut edits: Vec<Edit> = spans
            .into_iter()
            .map(|(start, end, new_text)| {
                let (sl, sc) = doc.position(start, enc);
                let (el, ec) = doc.position(end, enc);
                Edit {
                    range: [sl as u32, sc as u32, el as u32, ec as u32],
                    new_text,
                    start,
                    end,
                }
            })
            .collect();
        let new_text = apply_edits(&doc, &mut edits)?;
        changes.push(FileChange::Edit {
            doc,
            edits,
            new_text,
        });
    }
    Ok(changes)
}

/// Build the plan that moves `mv.src` to `mv.dst` and rewrites every import of it.
pub fn build(ws: &Workspace, jail: &Jail, mv: &Move, enc: Encoding) -> Result<Built> {
    let root = &ws.root;
    let python = mv.is_dir || mv.src.ends_with(".py") || mv.src.ends_with(".pyi");
    if !mv.is_dir && python {
        refuse_unmovable_module(mv)?;
    }
    let roots = workspace_roots(ws);
    let r = Resolver { roots: &roots, mv };
    let (s, d) = (mv.src_stem(), mv.dst_stem());
    let mut modules = Vec::new();
    if python {
        if r.best_root(&d).is_none() {
            return Err(usage(format!(
                "{} is not an importable module path (every part must be a Python identifier)",
                mv.dst
            )));
        }
        for root in &roots {
            if let (Some(a), Some(b)) = (name_under(&s, root), r.name_of(&d, Some(root.as_str()))) {
                modules.push((a, b));
            }
        }
    }
    let mut changes = if python {
        rewrite_importers(ws, jail, &r, enc)?
    } else {
        Vec::new()
    };
    // New directories on the way to DST become packages when the source was in one.
    let mut created = Vec::new();
    let src_in_package = root.join(parent(&mv.src)).join("__init__.py").is_file();
    let mut dir = parent(&mv.dst).to_string();
    let mut new_dirs = Vec::new();
    while !dir.is_empty() && !root.join(&dir).exists() {
        new_dirs.push(dir.clone());
        dir = parent(&dir).to_string();
    }
    if python && src_in_package {
        for dir in new_dirs.iter().rev() {
            let rel = format!("{dir}/__init__.py");
            let (abs, rel) = jail.check_path(&root.join(&rel))?;
            created.push(rel.clone());
            changes.push(FileChange::Create {
                rel,
                abs,
                overwrite: false,
                ignore_if_exists: false,
            });
        }
    }
    let (from, from_rel) = jail.check_path(&root.join(&mv.src))?;
    let (to, to_rel) = jail.check_path(&root.join(&mv.dst))?;
    changes.push(FileChange::Rename {
        from_rel,
        from,
        to_rel,
        to,
        overwrite: false,
        ignore_if_exists: false,
    });
    let moved_files: Vec<(String, String)> = if mv.is_dir {
        files_below(root, &mv.src)
            .into_iter()
            .filter_map(|f| mv.map_file(&f).map(|n| (f, n)))
            .collect()
    } else {
        vec![(mv.src.clone(), mv.dst.clone())]
    };
    // Every file a directory move carries goes through the jail and the filters, both ways.
    for (old, new) in &moved_files {
        jail.check_path(&root.join(old))?;
        jail.check_path(&root.join(new))?;
    }
    Ok(Built {
        plan: Plan {
            changes,
            git_patch: None,
        },
        modules,
        moved_files,
        created,
    })
}

/// Take the server's text edits (from `workspace/willRenameFiles`) for the files it edits,
/// and lanser's for the rest; the server's file operations are ignored (lanser moves).
pub fn merge_server_edits(plan: &mut Plan, server: Plan) {
    let theirs: BTreeMap<String, FileChange> = server
        .changes
        .into_iter()
        .filter_map(|c| match &c {
            FileChange::Edit { doc, .. } => Some((doc.rel.clone(), c)),
            _ => None,
        })
        .collect();
    let mut edits: BTreeMap<String, FileChange> = BTreeMap::new();
    let mut ops = Vec::new();
    for c in std::mem::take(&mut plan.changes) {
        match &c {
            FileChange::Edit { doc, .. } => {
                edits.insert(doc.rel.clone(), c);
            }
            _ => ops.push(c),
        }
    }
    edits.extend(theirs);
    plan.changes = edits.into_values().chain(ops).collect();
}

/// A git-style diff of the whole move (`rename from/to`, `new file mode`, content hunks at
/// the moved paths), which `git apply` reproduces on a clean checkout.
pub fn git_diff(built: &Built, mv: &Move) -> String {
    let mut sections: BTreeMap<String, String> = BTreeMap::new();
    let edited: BTreeMap<&str, (&str, &str)> = built
        .plan
        .changes
        .iter()
        .filter_map(|c| match c {
            FileChange::Edit { doc, new_text, .. } => {
                Some((doc.rel.as_str(), (doc.text.as_str(), new_text.as_str())))
            }
            _ => None,
        })
        .collect();
    let moved: BTreeMap<&str, &str> = built
        .moved_files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let paths: BTreeSet<&str> = edited.keys().chain(moved.keys()).copied().collect();
    for old in paths {
        let new = mv.map_file(old).unwrap_or_else(|| old.to_string());
        let mut s = format!("diff --git a/{old} b/{new}\n");
        if new != old {
            s.push_str(&format!("rename from {old}\nrename to {new}\n"));
        }
        if let Some((before, after)) = edited.get(old) {
            s.push_str(
                &similar::TextDiff::from_lines(*before, *after)
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{old}"), &format!("b/{new}"))
                    .to_string(),
            );
        }
        sections.insert(old.to_string(), s);
    }
    for c in &built.created {
        sections.insert(
            c.clone(),
            format!("diff --git a/{c} b/{c}\nnew file mode 100644\n"),
        );
    }
    sections.into_values().collect()
}

/// Resolve the user's SRC (must exist) and DST (must not) inside the jail.
pub fn resolve_paths(
    ws: &Workspace,
    jail: &Jail,
    cwd: &Path,
    src: &str,
    dst: &str,
) -> Result<Move> {
    let p = Path::new(src);
    let candidates: Vec<PathBuf> = if p.is_absolute() {
        vec![p.to_path_buf()]
    } else {
        vec![ws.root.join(p), cwd.join(p)]
    };
    let Some(found) = candidates.iter().find(|c| c.symlink_metadata().is_ok()) else {
        return Err(LanserError::not_found(format!(
            "{src} does not exist in the workspace"
        )));
    };
    let base = if p.is_absolute() || *found == ws.root.join(p) {
        ws.root.clone()
    } else {
        cwd.to_path_buf()
    };
    let (src_abs, src_rel) = jail.check_path(found)?;
    if found
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(usage(format!(
            "{src} is a symbolic link; rename-file moves real files and directories only"
        )));
    }
    let (dst_abs, dst_rel) = jail.check_path(&base.join(dst))?;
    if dst_abs.symlink_metadata().is_ok() {
        return Err(LanserError::new(
            ErrorCode::ApplyConflict,
            format!("{dst_rel} already exists; nothing was applied"),
        ));
    }
    if dst_rel == src_rel || dst_rel.starts_with(&format!("{src_rel}/")) {
        return Err(usage(format!(
            "cannot move {src_rel} into itself ({dst_rel})"
        )));
    }
    Ok(Move {
        src: src_rel,
        dst: dst_rel,
        is_dir: src_abs.is_dir(),
    })
}

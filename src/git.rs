//! lanser's one git reader (git2, no `git` process): the tracked files a worktree modified,
//! a file's text at a revision, and the files whose text differs between a revision and the
//! worktree — for pr-v2's HEAD baseline ([`super::baseline`]) and `changes --since`
//! ([`super::changes`]). Paths in and out are relative to the workspace root, which may sit
//! below the repository's top.

use std::io;
use std::path::{Path, PathBuf};

fn git_error(e: git2::Error) -> io::Error {
    io::Error::other(e.message().to_string())
}

/// The repository holding `root`, its worktree's top (canonical) and `root` (canonical).
fn open(root: &Path) -> io::Result<(git2::Repository, PathBuf, PathBuf)> {
    let repo = git2::Repository::discover(root).map_err(git_error)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| io::Error::other("bare repository"))?
        .canonicalize()?;
    Ok((repo, workdir, root.canonicalize()?))
}

/// `root`-relative, `/`-separated, for a path relative to the worktree's top; `None` outside
/// the root.
fn below_root(workdir: &Path, root: &Path, in_repo: &Path) -> Option<String> {
    let p = workdir.join(in_repo);
    let rel = p.strip_prefix(root).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Modified tracked Python files under `root` (workspace-relative), one per line.
pub fn modified(root: &Path) -> io::Result<Vec<u8>> {
    let (repo, workdir, root) = open(root)?;
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(false).include_ignored(false);
    let statuses = repo.statuses(Some(&mut opts)).map_err(git_error)?;
    let mut out: Vec<String> = statuses
        .iter()
        .filter(|s| {
            s.status()
                .intersects(git2::Status::WT_MODIFIED | git2::Status::INDEX_MODIFIED)
        })
        .filter_map(|s| {
            let rel = below_root(&workdir, &root, Path::new(s.path().ok()?))?;
            (rel.ends_with(".py") || rel.ends_with(".pyi")).then_some(rel)
        })
        .collect();
    out.sort();
    Ok(out.join("\n").into_bytes())
}

/// The tree of revision `rev` (anything `git rev-parse` reads: `HEAD`, `HEAD~2`, a branch,
/// a commit id) and its commit id.
fn tree_at<'r>(repo: &'r git2::Repository, rev: &str) -> io::Result<(git2::Tree<'r>, String)> {
    let obj = repo.revparse_single(rev).map_err(git_error)?;
    let commit = obj.peel_to_commit().map_err(git_error)?;
    let tree = commit.tree().map_err(git_error)?;
    Ok((tree, commit.id().to_string()))
}

/// A file's text (bytes) at revision `rev`.
pub fn text_at(root: &Path, rev: &str, rel: &str) -> io::Result<Vec<u8>> {
    let (repo, workdir, root) = open(root)?;
    let abs = root.join(rel);
    let in_repo = abs
        .strip_prefix(&workdir)
        .map_err(|_| io::Error::other("outside the repository"))?;
    let (tree, _) = tree_at(&repo, rev)?;
    let entry = tree.get_path(in_repo).map_err(git_error)?;
    let blob = repo.find_blob(entry.id()).map_err(git_error)?;
    Ok(blob.content().to_vec())
}

/// The commit `rev` names, then every file under `root` whose text in the worktree differs
/// from `rev`'s (modified, deleted, added — untracked files included, ignored ones not), one
/// workspace-relative path per line, sorted.
pub fn changed_since(root: &Path, rev: &str) -> io::Result<Vec<u8>> {
    let (repo, workdir, root) = open(root)?;
    let (tree, commit) = tree_at(&repo, rev)?;
    let mut opts = git2::DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(git_error)?;
    let mut out = std::collections::BTreeSet::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(rel) = file.path().and_then(|p| below_root(&workdir, &root, p)) {
                out.insert(rel);
            }
        }
    }
    let mut text = commit;
    for rel in out {
        text.push('\n');
        text.push_str(&rel);
    }
    Ok(text.into_bytes())
}

//! The workspace: its root, and the mapping between paths, `file://` URIs and the names lanser
//! prints (docs/workspace.md#paths-in-bundles).
//!
//! Inside the root a file is named by its POSIX path relative to the root. Outside it, by where
//! it comes from ([`external`]: `typeshed://…`, `site-packages://…`, a toolchain's library),
//! else an absolute `file://` URI. Nothing here talks to a server.
//!
//! - `external`: the names of files outside the root.
//! - `walk`: the rules of which directories and files are the workspace's sources.
//! - `index`: the sources, their content digests and the configuration files, kept current.
//! - `watch`: file-system events that keep an index current in a long-lived process.
//! - `pyconfig`: Pyright's settings and the import roots they give.
//! - `uri`: paths ↔ `file://` URIs and the under-the-root test, per platform path style.
//!
//! Clones of a [`Workspace`] share one index, so every reader in a process (a daemon's
//! freshness step, its memo, `diag`, `check`, `rename-file`, traces) sees the same one.

pub mod external;
pub mod index;
pub mod pyconfig;
pub mod uri;
pub mod walk;
pub mod watch;

use crate::error::{LanserError, Result};
use index::Index;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Files whose presence marks a workspace root, nearest ancestor first.
pub const ROOT_MARKERS: &[&str] = &[
    "pyrightconfig.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    ".git",
];

#[derive(Clone)]
pub struct Workspace {
    /// Canonical (symlink-free) absolute root.
    pub root: PathBuf,
    /// The index, scanned on first need and shared by clones.
    index: Arc<Mutex<Option<Index>>>,
    /// The import roots, read on first need; dropped when the index sees a change.
    roots: Arc<Mutex<Option<Vec<PathBuf>>>>,
    /// The file types the index tracks besides the sources ([`Workspace::track`]).
    types: Arc<Mutex<walk::Types>>,
    /// What lanser wrote since the last [`Workspace::take_written`], once asked to keep it.
    written: Arc<Mutex<Option<index::Changes>>>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .finish()
    }
}

/// Where a file the server names lives, as lanser prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside the root: relative POSIX path.
    Workspace(String),
    /// Anywhere else: [`external::name`] (`typeshed://…`, `goroot://…`, … or `file://…`).
    External(String),
}

impl Place {
    pub fn display(&self) -> &str {
        match self {
            Place::Workspace(p) | Place::External(p) => p,
        }
    }
}

impl Workspace {
    /// `--workspace DIR`, else the nearest ancestor of `cwd` with a root marker, else `cwd`.
    pub fn discover(explicit: Option<&Path>, cwd: &Path) -> Result<Workspace> {
        let root = match explicit {
            Some(dir) => {
                let dir = cwd.join(dir);
                if !dir.is_dir() {
                    return Err(LanserError::not_found(format!(
                        "workspace {} is not a directory",
                        dir.display()
                    )));
                }
                dir
            }
            None => cwd
                .ancestors()
                .find(|d| ROOT_MARKERS.iter().any(|m| d.join(m).exists()))
                .unwrap_or(cwd)
                .to_path_buf(),
        };
        let root = uri::canonical(&root).map_err(|e| {
            LanserError::not_found(format!("no workspace at {}", root.display())).with_source(e)
        })?;
        Ok(Workspace::new(root))
    }

    /// The workspace at `root` (canonical), with an index not yet scanned.
    pub fn new(root: PathBuf) -> Workspace {
        Workspace {
            root,
            index: Arc::default(),
            roots: Arc::default(),
            types: Arc::default(),
            written: Arc::default(),
        }
    }

    /// Track the files of `types` too (the file types the configuration's servers take), so
    /// that a change to one is seen; an index already scanned walks the tree again when they
    /// differ from its own.
    pub fn track(&self, types: walk::Types) -> index::Changes {
        *self.types.lock().unwrap_or_else(|p| p.into_inner()) = types.clone();
        let mut g = self.index.lock().unwrap_or_else(|p| p.into_inner());
        match g.as_mut() {
            Some(i) => i.retrack(&types),
            None => index::Changes::default(),
        }
    }

    /// The index, scanned now when this is its first use.
    pub fn index(&self) -> IndexGuard<'_> {
        let mut g = self.index.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            let types = self.types.lock().unwrap_or_else(|p| p.into_inner()).clone();
            *g = Some(Index::scan(&self.root, types));
        }
        IndexGuard(g)
    }

    /// Bring the index up to date for paths lanser itself wrote, created or removed (an
    /// index not yet scanned has nothing to update).
    pub fn wrote<'a>(&self, paths: impl IntoIterator<Item = &'a Path>) -> index::Changes {
        let mut g = self.index.lock().unwrap_or_else(|p| p.into_inner());
        let changes = match g.as_mut() {
            Some(i) => i.refresh(paths),
            None => index::Changes::default(),
        };
        drop(g);
        self.forget_roots();
        if let Some(kept) = self
            .written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            kept.created.extend(changes.created.iter().cloned());
            kept.changed.extend(changes.changed.iter().cloned());
            kept.deleted.extend(changes.deleted.iter().cloned());
        }
        changes
    }

    /// What lanser wrote (through [`Workspace::wrote`]) since the last call; the first call
    /// starts keeping it (the daemon's background refresh asks).
    pub fn take_written(&self) -> index::Changes {
        let mut g = self.written.lock().unwrap_or_else(|p| p.into_inner());
        g.replace(index::Changes::default()).unwrap_or_default()
    }

    /// The import roots, in Pyright's lookup order ([`pyconfig::import_roots`]).
    pub fn import_roots(&self) -> Vec<PathBuf> {
        let mut g = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert_with(|| pyconfig::import_roots(&self.root))
            .clone()
    }

    /// The import roots are read again on next use (a directory or configuration changed).
    pub fn forget_roots(&self) {
        *self.roots.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Resolve a path given by the user: absolute, or relative to the root (falling back to
    /// `cwd` when only that exists). The result is canonical and must lie inside the root.
    pub fn resolve_user_path(&self, path: &str, cwd: &Path) -> Result<(PathBuf, String)> {
        let p = Path::new(path);
        let candidates: Vec<PathBuf> = if p.is_absolute() {
            vec![p.to_path_buf()]
        } else {
            vec![self.root.join(p), cwd.join(p)]
        };
        // The messages name no absolute root: an error bundle is the same in every copy of
        // the workspace (and its trace replays in a scratch copy).
        let Some(found) = candidates.iter().find(|c| c.exists()) else {
            return Err(LanserError::not_found(format!(
                "file {path} does not exist in the workspace"
            )));
        };
        let canon = uri::canonical(found).map_err(|e| {
            LanserError::not_found(format!("cannot resolve file {path}")).with_source(e)
        })?;
        match self.relative(&canon) {
            Some(rel) => {
                if !canon.is_file() {
                    return Err(LanserError::not_found(format!("{path} is not a file")));
                }
                Ok((canon, rel))
            }
            None => Err(LanserError::not_found(format!(
                "{path} is outside the workspace"
            ))),
        }
    }

    /// Relative POSIX path of an absolute path inside the root; `None` outside it.
    pub fn relative(&self, abs: &Path) -> Option<String> {
        walk::relative(&self.root, abs)
    }

    /// How a server `file://` URI is printed.
    pub fn place_of_uri(&self, uri: &str) -> Place {
        let Some(path) = uri_to_path(uri) else {
            return Place::External(uri.to_string());
        };
        self.place_of_path(&path)
    }

    pub fn place_of_path(&self, path: &Path) -> Place {
        if let Some(rel) = self.relative(path) {
            return Place::Workspace(rel);
        }
        // The server may hand back a non-canonical spelling of a workspace file.
        if let Ok(canon) = uri::canonical(path) {
            if let Some(rel) = self.relative(&canon) {
                return Place::Workspace(rel);
            }
        }
        Place::External(external::name(path))
    }

    pub fn root_uri(&self) -> String {
        path_to_uri(&self.root)
    }

    /// Every Python source of the index, sorted.
    pub fn python_files(&self) -> Vec<String> {
        self.index().python_sources()
    }
}

/// The locked index of a workspace.
pub struct IndexGuard<'a>(MutexGuard<'a, Option<Index>>);

impl std::ops::Deref for IndexGuard<'_> {
    type Target = Index;
    fn deref(&self) -> &Index {
        self.0.as_ref().expect("scanned when locked")
    }
}

impl std::ops::DerefMut for IndexGuard<'_> {
    fn deref_mut(&mut self) -> &mut Index {
        self.0.as_mut().expect("scanned when locked")
    }
}

impl Workspace {
    /// `rel` (a relative path as bundles spell it) when it names a file of the snapshot the
    /// server reads — a Python source [`Workspace::python_files`] lists, or a configuration
    /// file at the root: a regular file, reached without a symlink, outside skipped directories.
    pub fn snapshot_file(&self, rel: &str) -> Option<PathBuf> {
        let parts: Vec<&str> = rel.split('/').collect();
        let (name, dirs) = parts.split_last()?;
        let mut path = self.root.clone();
        for dir in dirs {
            path.push(dir);
            let meta = std::fs::symlink_metadata(&path).ok()?;
            if !meta.is_dir() || !walk::walked_dir(dir, &path) {
                return None;
            }
        }
        path.push(name);
        let config = dirs.is_empty() && index::SERVER_CONFIG.contains(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        (meta.is_file() && (walk::is_source(name) || config) && walk::admits(&self.root, &path))
            .then_some(path)
    }
}

/// Percent-encode a path into a `file://` URI, in this platform's style ([`uri::to_uri`]).
pub fn path_to_uri(path: &Path) -> String {
    uri::to_uri(&path.to_string_lossy(), uri::Style::NATIVE)
}

pub use uri::percent_decode;

/// Decode a `file://` URI into a path, in this platform's style ([`uri::from_uri`]); `None`
/// for other schemes or bad escapes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    uri::from_uri(uri, uri::Style::NATIVE).map(PathBuf::from)
}

/// One key for every spelling of a file URI on this platform ([`uri::normalize`]; the URI as
/// it is on Linux).
pub fn uri_key(uri: &str) -> std::borrow::Cow<'_, str> {
    uri::normalize(uri, uri::Style::NATIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn snapshot_files_are_regular_sources_reached_without_symlinks() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.py"), "x = 1\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for f in [
            "pkg/a.py",
            "pkg/a.pyi",
            ".venv/x.py",
            "build/y.py",
            "pkg/notes.txt",
        ] {
            std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
            std::fs::write(root.join(f), "").unwrap();
        }
        std::fs::write(root.join("pyproject.toml"), "").unwrap();
        std::fs::write(root.join("pkg/pyproject.toml"), "").unwrap();
        std::fs::create_dir_all(root.join("env")).unwrap();
        std::fs::write(root.join("env/pyvenv.cfg"), "").unwrap();
        std::fs::write(root.join("env/z.py"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("lib")).unwrap();
        std::os::unix::fs::symlink(root.join("pkg/a.py"), root.join("pkg/link.py")).unwrap();
        let ws = Workspace::new(root.clone());
        for rel in ["pkg/a.py", "pkg/a.pyi", "pyproject.toml"] {
            assert_eq!(ws.snapshot_file(rel), Some(root.join(rel)), "{rel}");
        }
        for rel in [
            "lib/secret.py",
            "pkg/link.py",
            ".venv/x.py",
            "build/y.py",
            "env/z.py",
            "pkg/notes.txt",
            "pkg/pyproject.toml",
            "pkg/missing.py",
            "pkg",
        ] {
            assert_eq!(ws.snapshot_file(rel), None, "{rel}");
        }
        // Exactly the Python files the snapshot enumerates.
        let listed: Vec<String> = ws.python_files();
        assert_eq!(listed, ["pkg/a.py", "pkg/a.pyi"]);
    }

    #[test]
    fn uri_round_trip_with_unicode_and_spaces() {
        let p = Path::new("/tmp/a b/形状.py");
        let uri = path_to_uri(p);
        assert_eq!(uri, "file:///tmp/a%20b/%E5%BD%A2%E7%8A%B6.py");
        assert_eq!(uri_to_path(&uri).unwrap(), p);
    }

    #[test]
    fn external_places() {
        let ws = Workspace::new(PathBuf::from("/w/proj"));
        assert_eq!(
            ws.place_of_path(Path::new("/w/proj/src/a.py")),
            Place::Workspace("src/a.py".into())
        );
        assert_eq!(
            ws.place_of_path(Path::new(
                "/x/node_modules/pyright/dist/typeshed-fallback/stdlib/builtins.pyi"
            )),
            Place::External("typeshed://stdlib/builtins.pyi".into())
        );
        assert_eq!(
            ws.place_of_path(Path::new("/usr/lib/python3/site-packages/requests/api.py")),
            Place::External("site-packages://requests/api.py".into())
        );
        assert_eq!(
            ws.place_of_path(Path::new("/opt/other/x.py")),
            Place::External("file:///opt/other/x.py".into())
        );
    }
}

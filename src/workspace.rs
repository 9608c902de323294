//! The workspace: its root, and the mapping between paths, `file://` URIs and the names lanser
//! prints (DESIGN §1, §5).
//!
//! Inside the root a file is named by its POSIX path relative to the root. Outside it, the
//! server's bundled typeshed becomes `typeshed://…`, installed packages `site-packages://…`,
//! and anything else stays an absolute `file://` URI. Nothing here talks to a server.

use crate::error::{LanserError, Result};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Files whose presence marks a workspace root, nearest ancestor first.
pub const ROOT_MARKERS: &[&str] = &[
    "pyrightconfig.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    ".git",
];

/// Directories never walked when lanser enumerates workspace sources.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    "site-packages",
    "build",
    "dist",
];

#[derive(Debug, Clone)]
pub struct Workspace {
    /// Canonical (symlink-free) absolute root.
    pub root: PathBuf,
}

/// Where a file the server names lives, as lanser prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside the root: relative POSIX path.
    Workspace(String),
    /// Anywhere else: `typeshed://…`, `site-packages://…` or `file://…`.
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
        let root = root
            .canonicalize()
            .map_err(|e| LanserError::not_found(format!("workspace {}: {e}", root.display())))?;
        Ok(Workspace { root })
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
        let Some(found) = candidates.iter().find(|c| c.exists()) else {
            return Err(LanserError::not_found(format!(
                "file {path} does not exist in workspace {}",
                self.root.display()
            )));
        };
        let canon = found
            .canonicalize()
            .map_err(|e| LanserError::not_found(format!("file {path}: {e}")))?;
        match self.relative(&canon) {
            Some(rel) => {
                if !canon.is_file() {
                    return Err(LanserError::not_found(format!("{path} is not a file")));
                }
                Ok((canon, rel))
            }
            None => Err(LanserError::not_found(format!(
                "{path} is outside the workspace {}",
                self.root.display()
            ))),
        }
    }

    /// Relative POSIX path of an absolute path inside the root; `None` outside it.
    pub fn relative(&self, abs: &Path) -> Option<String> {
        let rel = abs.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(parts.join("/"))
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
        if let Ok(canon) = path.canonicalize() {
            if let Some(rel) = self.relative(&canon) {
                return Place::Workspace(rel);
            }
        }
        let s = path.to_string_lossy().replace('\\', "/");
        if let Some(i) = s.find("/typeshed-fallback/") {
            return Place::External(format!(
                "typeshed://{}",
                &s[i + "/typeshed-fallback/".len()..]
            ));
        }
        for marker in ["/site-packages/", "/dist-packages/"] {
            if let Some(i) = s.rfind(marker) {
                return Place::External(format!("site-packages://{}", &s[i + marker.len()..]));
            }
        }
        Place::External(path_to_uri(path))
    }

    pub fn root_uri(&self) -> String {
        path_to_uri(&self.root)
    }

    /// Every Python source below the root (`.py`, `.pyi`), sorted, skipping hidden, vendored
    /// and virtual-environment directories.
    pub fn python_files(&self) -> Vec<String> {
        self.python_files_with(&mut Listings::default())
    }

    /// [`Workspace::python_files`], reading again only the directories whose modification time
    /// changed since `listings` saw them (or was too recent to trust then); a directory whose
    /// subdirectory changed is checked again for `pyvenv.cfg`.
    pub fn python_files_with(&self, listings: &mut Listings) -> Vec<String> {
        let now = SystemTime::now();
        let settled = |m: Option<SystemTime>| {
            m.and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age >= RACY)
        };
        let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let mut kept = HashMap::new();
        let mut out = Vec::new();
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let modified = mtime(&dir);
            let cached = listings
                .dirs
                .remove(&dir)
                .filter(|l| settled(modified) && Some(l.mtime) == modified);
            let listing = match cached {
                Some(mut l) => {
                    for sub in &mut l.subdirs {
                        let m = mtime(&sub.path);
                        if !(settled(m) && m == sub.mtime) {
                            sub.mtime = m;
                            sub.venv = sub.path.join("pyvenv.cfg").exists();
                        }
                    }
                    l
                }
                None => {
                    let Ok(entries) = std::fs::read_dir(&dir) else {
                        continue;
                    };
                    let mut l = Listing {
                        mtime: modified.unwrap_or(SystemTime::UNIX_EPOCH),
                        subdirs: Vec::new(),
                        files: Vec::new(),
                    };
                    for entry in entries.flatten() {
                        let name = entry.file_name().to_string_lossy().into_owned();
                        let Ok(ft) = entry.file_type() else { continue };
                        if ft.is_dir() {
                            if !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with('.') {
                                let path = entry.path();
                                l.subdirs.push(Subdir {
                                    mtime: mtime(&path),
                                    venv: path.join("pyvenv.cfg").exists(),
                                    path,
                                });
                            }
                        } else if ft.is_file() && (name.ends_with(".py") || name.ends_with(".pyi"))
                        {
                            if let Some(rel) = self.relative(&entry.path()) {
                                l.files.push(rel);
                            }
                        }
                    }
                    l
                }
            };
            stack.extend(
                listing
                    .subdirs
                    .iter()
                    .filter(|s| !s.venv)
                    .map(|s| s.path.clone()),
            );
            out.extend(listing.files.iter().cloned());
            if settled(modified) {
                kept.insert(dir, listing);
            }
        }
        listings.dirs = kept;
        out.sort();
        out
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
            if !meta.is_dir() || !walked(dir, &path) {
                return None;
            }
        }
        path.push(name);
        let config = dirs.is_empty() && crate::env::CONFIG_FILES.contains(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        (meta.is_file() && (is_python(name) || config)).then_some(path)
    }
}

/// Whether source enumeration descends into directory `name` at `path`.
fn walked(name: &str, path: &Path) -> bool {
    !SKIP_DIRS.contains(&name)
        && !name.starts_with('.')
        && !name.is_empty()
        && !path.join("pyvenv.cfg").exists()
}

fn is_python(name: &str) -> bool {
    name.ends_with(".py") || name.ends_with(".pyi")
}

/// A directory's modification time is trusted only once it is this old: a change within the
/// same clock tick as the listing would leave it as it was.
const RACY: Duration = Duration::from_secs(2);

/// Directory listings kept between walks of the workspace ([`Workspace::python_files_with`]).
#[derive(Debug, Default, Clone)]
pub struct Listings {
    dirs: HashMap<PathBuf, Listing>,
}

#[derive(Debug, Clone)]
struct Listing {
    mtime: SystemTime,
    /// Subdirectories not skipped by name.
    subdirs: Vec<Subdir>,
    /// Python files, workspace-relative.
    files: Vec<String>,
}

#[derive(Debug, Clone)]
struct Subdir {
    path: PathBuf,
    mtime: Option<SystemTime>,
    /// Holds `pyvenv.cfg` (a virtual environment, not walked).
    venv: bool,
}

/// Percent-encode a path into a `file://` URI (RFC 3986 unreserved characters and `/` kept).
pub fn path_to_uri(path: &Path) -> String {
    let s = path.to_string_lossy().replace('\\', "/");
    let mut out = String::from("file://");
    if !s.starts_with('/') {
        out.push('/');
    }
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decode a `file://` URI into a path; `None` for other schemes or bad escapes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let decoded = crate::selector::percent_decode(rest)?;
    Some(PathBuf::from(decoded))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set a file's or directory's modification time an hour back (a settled listing).
    fn age(p: &Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(p)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }

    #[test]
    fn kept_listings_see_what_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace {
            root: tmp.path().canonicalize().unwrap(),
        };
        let (a, b) = (ws.root.join("a"), ws.root.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("x.py"), "").unwrap();
        std::fs::write(b.join("y.py"), "").unwrap();
        for d in [&a, &b, &ws.root] {
            age(d);
        }
        let mut kept = Listings::default();
        let want = vec!["a/x.py".to_string(), "b/y.py".to_string()];
        assert_eq!(ws.python_files_with(&mut kept), want);
        assert_eq!(ws.python_files_with(&mut kept), want);
        // A new file changes its directory's mtime; a new pyvenv.cfg its directory's.
        std::fs::write(a.join("z.pyi"), "").unwrap();
        std::fs::write(b.join("pyvenv.cfg"), "").unwrap();
        let now = ws.python_files_with(&mut kept);
        assert_eq!(now, vec!["a/x.py".to_string(), "a/z.pyi".to_string()]);
        assert_eq!(now, ws.python_files());
        std::fs::remove_file(b.join("pyvenv.cfg")).unwrap();
        std::fs::remove_dir_all(&a).unwrap();
        assert_eq!(ws.python_files_with(&mut kept), vec!["b/y.py".to_string()]);
    }

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
        let ws = Workspace { root: root.clone() };
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
        let ws = Workspace {
            root: PathBuf::from("/w/proj"),
        };
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

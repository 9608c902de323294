//! The walk rules: which directories of a workspace lanser descends into and which files are
//! its sources. One set of rules for every reader (the index, `meta.docVersions`, traces):
//! hidden directories, version-control and tool caches, virtual environments (a directory
//! holding `pyvenv.cfg`), `node_modules`, build output, and whatever the workspace's own
//! `.gitignore` files exclude are never walked.
//!
//! [`Walker`] keeps each directory's listing and reads it again only when the directory's
//! modification time changed (or was too recent to trust when it was read).

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Directories never walked, by name.
pub const SKIP_DIRS: &[&str] = &[
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

/// The ignore files a walk honours, in each directory.
pub const IGNORE_FILE: &str = ".gitignore";

/// A modification time this recent may hide a later change within the same clock tick (git's
/// "racily clean" rule): what carries it is read again.
pub const RACY: Duration = Duration::from_secs(2);

/// The extensions of the sources besides Python's: the code of the first languages'
/// built-in servers, what workspace-wide operations take. The index tracks more ([`Types`]).
pub const OTHER_SOURCES: &[&str] = &[
    "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "c", "h", "cc", "cpp", "cxx", "hh",
    "hpp", "hxx", "go", "rs", "sh", "bash",
];

/// Whether a file named `name` is a Python source.
pub fn is_python(name: &str) -> bool {
    name.ends_with(".py") || name.ends_with(".pyi")
}

/// Whether a file named `name` is a source (Python or another language's): what
/// workspace-wide operations (`diag`, workspace symbols) and a trace's snapshot take.
pub fn is_source(name: &str) -> bool {
    is_python(name)
        || name
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && OTHER_SOURCES.contains(&ext))
}

/// Whether the walk descends into directory `name` at `path` (its `.gitignore` rules aside).
pub fn walked_dir(name: &str, path: &Path) -> bool {
    named_walkable(name) && !path.join("pyvenv.cfg").exists()
}

/// Whether `time` is old enough to trust.
pub fn settled(time: Option<SystemTime>, now: SystemTime) -> bool {
    time.and_then(|m| now.duration_since(m).ok())
        .is_some_and(|age| age >= RACY)
}

/// The `.gitignore` rules in force in one directory: its own and its ancestors' (inside the
/// root), deepest last.
#[derive(Clone, Default)]
struct Rules(Vec<Arc<Gitignore>>);

impl Rules {
    /// Whether `path` is excluded (the deepest rule that matches decides; `!` re-includes).
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for g in self.0.iter().rev() {
            match g.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    fn with(&self, dir: &Path) -> Rules {
        let file = dir.join(IGNORE_FILE);
        if !file.is_file() {
            return self.clone();
        }
        let mut b = GitignoreBuilder::new(dir);
        // A malformed line is skipped, as git skips it.
        let _ = b.add(&file);
        match b.build() {
            Ok(g) => {
                let mut v = self.0.clone();
                v.push(Arc::new(g));
                Rules(v)
            }
            Err(_) => self.clone(),
        }
    }
}

#[derive(Clone)]
struct Listing {
    mtime: SystemTime,
    /// Subdirectories not skipped by name or ignore rule.
    subdirs: Vec<PathBuf>,
    /// Sources, workspace-relative.
    files: Vec<String>,
    /// Holds `pyvenv.cfg`: a virtual environment, not walked.
    venv: bool,
    /// Holds an ignore file of its own.
    ignores: bool,
}

/// Directory listings kept between walks.
#[derive(Clone, Default)]
pub struct Walker {
    dirs: HashMap<PathBuf, Listing>,
    /// The files listed.
    types: Types,
}

/// What a walk found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// Sources, workspace-relative, sorted.
    pub files: Vec<String>,
    /// Every directory walked (absolute), sorted: what a watcher watches.
    pub dirs: Vec<PathBuf>,
}

impl Walker {
    /// A walker that lists the sources and the files of `types`.
    pub fn new(types: Types) -> Walker {
        Walker {
            dirs: HashMap::new(),
            types,
        }
    }

    /// The file types listed.
    pub fn types(&self) -> &Types {
        &self.types
    }

    /// Walk `start` (the root or a directory below it, whose own `.gitignore` ancestors are
    /// honoured) and return its sources and directories.
    pub fn walk(&mut self, root: &Path, start: &Path) -> Found {
        let now = SystemTime::now();
        let mut found = Found::default();
        let mut rules = Rules::default();
        // The ancestors' rules, root first.
        if let Ok(rel) = start.strip_prefix(root) {
            let mut dir = root.to_path_buf();
            rules = rules.with(&dir);
            for c in rel.components() {
                let Component::Normal(name) = c else { break };
                let name = name.to_string_lossy();
                if !walked_dir(&name, &dir.join(&*name)) || rules.ignored(&dir.join(&*name), true) {
                    return found;
                }
                dir.push(&*name);
                if dir != start {
                    rules = rules.with(&dir);
                }
            }
        } else {
            return found;
        }
        let mut stack = vec![(start.to_path_buf(), rules, true)];
        while let Some((dir, parent_rules, first)) = stack.pop() {
            let modified = std::fs::metadata(&dir).and_then(|m| m.modified()).ok();
            let cached = self
                .dirs
                .get(&dir)
                .filter(|l| settled(modified, now) && Some(l.mtime) == modified)
                .cloned();
            let listing = match cached {
                Some(l) => l,
                None => match list(root, &dir, modified, &self.types) {
                    Some(l) => l,
                    None => {
                        self.dirs.remove(&dir);
                        continue;
                    }
                },
            };
            if settled(modified, now) {
                self.dirs.insert(dir.clone(), listing.clone());
            } else {
                self.dirs.remove(&dir);
            }
            // A virtual environment is not walked (the start's ancestors were checked above).
            if listing.venv && !first {
                continue;
            }
            let rules = match listing.ignores && dir != root {
                true => parent_rules.with(&dir),
                false => parent_rules,
            };
            for sub in &listing.subdirs {
                if !rules.ignored(sub, true) {
                    stack.push((sub.clone(), rules.clone(), false));
                }
            }
            found.files.extend(
                listing
                    .files
                    .iter()
                    .filter(|f| rules.0.is_empty() || !rules.ignored(&root.join(f), false))
                    .cloned(),
            );
            found.dirs.push(dir);
        }
        found.files.sort();
        found.dirs.sort();
        found
    }

    /// Forget every listing at or below `dir` (it was removed, or its ignore rules changed).
    pub fn forget(&mut self, dir: &Path) {
        self.dirs.retain(|d, _| !d.starts_with(dir));
    }
}

/// Whether the file at `abs` (below `root`) is one the walk would list: no skipped or ignored
/// directory on its way, not ignored itself.
pub fn admits(root: &Path, abs: &Path) -> bool {
    let Ok(rel) = abs.strip_prefix(root) else {
        return false;
    };
    let mut rules = Rules::default().with(root);
    let mut dir = root.to_path_buf();
    let comps: Vec<_> = rel.components().collect();
    let Some((_, dirs)) = comps.split_last() else {
        return false;
    };
    for c in dirs {
        let Component::Normal(name) = c else {
            return false;
        };
        let name = name.to_string_lossy();
        let next = dir.join(&*name);
        if !walked_dir(&name, &next) || rules.ignored(&next, true) {
            return false;
        }
        rules = rules.with(&next);
        dir = next;
    }
    !rules.ignored(abs, false)
}

/// Read one directory: its subdirectories not skipped by name, its sources and files of
/// `types`, and whether it is
/// a virtual environment or has ignore rules of its own. (Ignore rules are applied by the
/// walk, which knows them.)
fn list(root: &Path, dir: &Path, modified: Option<SystemTime>, types: &Types) -> Option<Listing> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut l = Listing {
        mtime: modified.unwrap_or(SystemTime::UNIX_EPOCH),
        subdirs: Vec::new(),
        files: Vec::new(),
        venv: false,
        ignores: false,
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            if named_walkable(&name) {
                l.subdirs.push(entry.path());
            }
        } else if name == "pyvenv.cfg" {
            l.venv = true;
        } else if name == IGNORE_FILE {
            l.ignores = true;
        } else if ft.is_file() && types.tracks(&name) {
            if let Some(rel) = relative(root, &entry.path()) {
                l.files.push(rel);
            }
        }
    }
    Some(l)
}

/// The file types the index tracks besides the sources of [`is_source`]: every type a server
/// of the workspace's configuration takes, built-in or configured (JSON, YAML, PHP, a
/// `Dockerfile`, whatever a `lanser.toml` routes), so that an edit to one made behind
/// lanser's back is seen and told to the server that has it open or indexed. Each is an
/// extension, or a whole file name for a type without one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Types(Arc<BTreeSet<String>>);

impl Types {
    pub fn new(types: impl IntoIterator<Item = String>) -> Types {
        Types(Arc::new(types.into_iter().collect()))
    }

    /// Every file that is not hidden, whatever its type: the listing that finds the files no
    /// server serves (`crate::servers::unserved::listing`).
    pub fn everything() -> Types {
        Types::new(["*".to_string()])
    }

    /// Whether the index tracks a file named `name` (a file name or a relative path).
    pub fn tracks(&self, name: &str) -> bool {
        if is_source(name) {
            return true;
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        // A hidden file of these types is a tool's state (`target/.rustc_info.json`, written
        // by a build while a server runs), not something lanser is asked about.
        if base.starts_with('.') {
            return false;
        }
        self.0.contains("*")
            || self.0.contains(base)
            || base
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && self.0.contains(ext))
    }
}

/// Whether a directory named `name` may be walked (its content aside).
fn named_walkable(name: &str) -> bool {
    !SKIP_DIRS.contains(&name) && !name.starts_with('.') && !name.is_empty()
}

/// Relative POSIX path of `abs` under `root`; `None` outside it.
pub fn relative(root: &Path, abs: &Path) -> Option<String> {
    super::uri::relative(root, abs, super::uri::Style::NATIVE)
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

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn kept_listings_see_what_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (a, b) = (root.join("a"), root.join("b"));
        touch(&root, "a/x.py");
        touch(&root, "b/y.py");
        for d in [&a, &b, &root] {
            age(d);
        }
        let mut w = Walker::default();
        let want = vec!["a/x.py".to_string(), "b/y.py".to_string()];
        assert_eq!(w.walk(&root, &root).files, want);
        assert_eq!(w.walk(&root, &root).files, want);
        // A new file changes its directory's mtime; a new pyvenv.cfg its directory's.
        std::fs::write(a.join("z.pyi"), "").unwrap();
        std::fs::write(b.join("pyvenv.cfg"), "").unwrap();
        let now = w.walk(&root, &root).files;
        assert_eq!(now, vec!["a/x.py".to_string(), "a/z.pyi".to_string()]);
        assert_eq!(now, Walker::default().walk(&root, &root).files);
        std::fs::remove_file(b.join("pyvenv.cfg")).unwrap();
        std::fs::remove_dir_all(&a).unwrap();
        assert_eq!(w.walk(&root, &root).files, vec!["b/y.py".to_string()]);
    }

    #[test]
    fn gitignore_rules_nested_and_negated() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for f in [
            "keep.py",
            "gen/out.py",
            "pkg/a.py",
            "pkg/scratch_1.py",
            "pkg/scratch_keep.py",
            "pkg/sub/b.py",
            "node_modules/x/y.py",
            "env/pyvenv.cfg",
            "env/lib.py",
        ] {
            touch(&root, f);
        }
        std::fs::write(root.join(".gitignore"), "gen/\n*.log\n").unwrap();
        std::fs::write(
            root.join("pkg/.gitignore"),
            "scratch_*.py\n!scratch_keep.py\nsub\n",
        )
        .unwrap();
        let found = Walker::default().walk(&root, &root);
        assert_eq!(found.files, ["keep.py", "pkg/a.py", "pkg/scratch_keep.py"]);
        assert_eq!(found.dirs, [root.clone(), root.join("pkg")]);
        // A walk started below the root honours the ancestors' rules.
        assert!(Walker::default()
            .walk(&root, &root.join("gen"))
            .files
            .is_empty());
        assert_eq!(
            Walker::default().walk(&root, &root.join("pkg")).files,
            ["pkg/a.py", "pkg/scratch_keep.py"]
        );
    }
}

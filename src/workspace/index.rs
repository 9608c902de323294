//! The workspace index: the one list of a workspace's sources (found by [`super::walk`]),
//! their content digests, and the configuration files at the root that shape the server.
//! Daemon freshness, the memos, trace digests, `diag`'s default file set, `check`'s importers
//! and `rename-file` all read it.
//!
//! The content hash is the truth. File metadata (size, mtime, ctime, inode) only lets an
//! unchanged file skip rehashing, never a file modified in the last [`RACY`] (an edit inside
//! one timestamp tick is still caught, and a rewrite with its mtime put back still changes its
//! ctime). An index is kept current either by a full [`Index::rescan`] or, cheaper, by
//! [`Index::refresh`] of the paths that changed (file-system events, lanser's own writes);
//! every change bumps its [`Index::generation`].

use super::walk::{self, Walker};
use crate::digest::sha256_hex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Configuration files at the root that shape the server's answers: they feed
/// `environment.configDigest` and the trace's workspace digest.
pub const SERVER_CONFIG: &[&str] = &["pyrightconfig.json", "pyproject.toml"];
/// lanser's own configuration at the root (server choice and settings).
pub const LANSER_CONFIG: &str = "lanser.toml";

/// sha256 over the JCS of `{path: digest}` (the trace's workspace digest).
pub fn workspace_digest<'a>(digests: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let m: serde_json::Map<String, serde_json::Value> = digests
        .into_iter()
        .map(|(p, d)| (p.to_string(), serde_json::Value::String(d.to_string())))
        .collect();
    let bytes = serde_jcs::to_vec(&serde_json::Value::Object(m)).expect("values canonicalize");
    crate::digest::sha256_tagged(&bytes)
}

/// Whether workspace-relative `rel` is a configuration file at the root.
fn root_config(rel: &str) -> bool {
    !rel.contains('/') && is_config(rel)
}

/// Whether root-level file `name` is one of the configuration files the index tracks.
pub fn is_config(name: &str) -> bool {
    SERVER_CONFIG.contains(&name) || name == LANSER_CONFIG
}

/// What identifies a file's metadata state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

impl Stat {
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }

    /// Elsewhere (Windows): no inode number or change time in stable Rust, so the creation
    /// time stands in for the change time and a rewrite is told by its modification time.
    #[cfg(not(unix))]
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        let ns = |t: std::io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128)
        };
        Stat {
            size: meta.len(),
            mtime_ns: ns(meta.modified()),
            ctime_ns: ns(meta.created()),
            ino: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    stat: Stat,
    /// Hex sha256 of the content, once read.
    hash: Option<String>,
    /// Whether the metadata was too recent to trust when the entry was taken.
    racy: bool,
}

/// What changed between two states of the index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    pub created: Vec<String>,
    pub changed: Vec<String>,
    pub deleted: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }

    /// Whether a configuration file at the root is among the changes.
    pub fn touches_config(&self) -> bool {
        [&self.created, &self.changed, &self.deleted]
            .iter()
            .any(|l| l.iter().any(|p| is_config(p)))
    }

    /// The files servers are told about: every file the index tracks ([`walk::Types`]) but
    /// the root configuration files that are not sources.
    pub fn sources(&self) -> Changes {
        let keep = |l: &Vec<String>| -> Vec<String> {
            l.iter()
                .filter(|p| walk::is_source(p) || !root_config(p))
                .cloned()
                .collect()
        };
        Changes {
            created: keep(&self.created),
            changed: keep(&self.changed),
            deleted: keep(&self.deleted),
        }
    }

    /// The differences between two [`Index::hashes`] listings (both sorted by path).
    pub fn between(before: &[(String, String)], after: &[(String, String)]) -> Changes {
        let old: BTreeMap<&str, &str> = before
            .iter()
            .map(|(p, h)| (p.as_str(), h.as_str()))
            .collect();
        let new: BTreeMap<&str, &str> = after
            .iter()
            .map(|(p, h)| (p.as_str(), h.as_str()))
            .collect();
        let mut c = Changes::default();
        for (p, h) in &new {
            match old.get(p) {
                None => c.created.push(p.to_string()),
                Some(o) if o != h => c.changed.push(p.to_string()),
                Some(_) => {}
            }
        }
        c.deleted = old
            .keys()
            .filter(|p| !new.contains_key(*p))
            .map(|p| p.to_string())
            .collect();
        c
    }

    fn sort(&mut self) {
        for l in [&mut self.created, &mut self.changed, &mut self.deleted] {
            l.sort();
            l.dedup();
        }
    }
}

/// The sources and configuration files of one workspace root.
#[derive(Clone)]
pub struct Index {
    root: PathBuf,
    walker: Walker,
    /// Sources and root configuration files, workspace-relative.
    files: BTreeMap<String, Entry>,
    /// Directories walked (what a watcher watches).
    dirs: BTreeSet<PathBuf>,
    /// Bumped whenever `dirs` may have changed.
    dirs_version: u64,
    /// Entries whose metadata was too recent to trust when taken (looked at on every refresh).
    racy: BTreeSet<String>,
    generation: u64,
    /// Full rescans so far (the first scan included).
    pub rescans: u64,
}

impl Index {
    /// Walk `root` (canonical) once, listing its sources and the files of `types`; contents
    /// are hashed when first needed.
    pub fn scan(root: &Path, types: walk::Types) -> Index {
        let mut index = Index {
            root: root.to_path_buf(),
            walker: Walker::new(types),
            files: BTreeMap::new(),
            dirs: BTreeSet::new(),
            dirs_version: 0,
            racy: BTreeSet::new(),
            generation: 0,
            rescans: 0,
        };
        index.rescan();
        index.generation = 0;
        index
    }

    /// Track `types` from now on: when they differ from the index's, the tree is walked again
    /// under them (what they add is created, what they drop deleted).
    pub fn retrack(&mut self, types: &walk::Types) -> Changes {
        if self.walker.types() == types {
            return Changes::default();
        }
        self.walker = Walker::new(types.clone());
        self.rescan()
    }

    /// Bumped by every change seen.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Changes whenever the set of directories walked may have changed.
    pub fn dirs_version(&self) -> u64 {
        self.dirs_version
    }

    /// Directories walked, sorted.
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.dirs.iter()
    }

    /// Every source (Python and the other languages' of `walk::OTHER_SOURCES`), sorted.
    pub fn sources(&self) -> Vec<String> {
        self.files
            .keys()
            .filter(|p| walk::is_source(p))
            .cloned()
            .collect()
    }

    /// The Python sources among [`Index::sources`], sorted.
    pub fn python_sources(&self) -> Vec<String> {
        self.files
            .keys()
            .filter(|p| walk::is_python(p))
            .cloned()
            .collect()
    }

    /// Whether `rel` is a source or root configuration file of the index.
    pub fn contains(&self, rel: &str) -> bool {
        self.files.contains_key(rel)
    }

    /// Walk the whole tree again, rehashing only what metadata cannot vouch for.
    pub fn rescan(&mut self) -> Changes {
        self.rescans += 1;
        let root = self.root.clone();
        let found = self.walker.walk(&root, &root);
        let mut names: BTreeSet<String> = found.files.into_iter().collect();
        names.extend(
            SERVER_CONFIG
                .iter()
                .chain([&LANSER_CONFIG])
                .filter(|f| root.join(f).is_file())
                .map(|f| f.to_string()),
        );
        self.dirs = found.dirs.into_iter().collect();
        self.dirs_version += 1;
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|k| !names.contains(*k))
            .cloned()
            .collect();
        let mut changes = Changes::default();
        for rel in gone {
            self.files.remove(&rel);
            changes.deleted.push(rel);
        }
        for rel in names {
            self.update(&rel, &mut changes);
        }
        self.finish(changes)
    }

    /// Bring the given paths (files or directories, absolute, existing or not) up to date:
    /// what file-system events or lanser's own writes name. A directory is walked again (a
    /// new one is added whole), a missing one drops everything below it.
    pub fn refresh<'a>(&mut self, paths: impl IntoIterator<Item = &'a Path>) -> Changes {
        let mut changes = Changes::default();
        let root = self.root.clone();
        for path in paths {
            let Some(rel) = walk::relative(&root, path) else {
                continue;
            };
            let meta = std::fs::symlink_metadata(path);
            if meta.as_ref().is_ok_and(|m| m.is_dir()) {
                self.rewalk(path, &rel, &mut changes);
            } else if path.file_name().is_some_and(|n| n == walk::IGNORE_FILE) {
                // New ignore rules: the directory's subtree is listed again under them.
                if let Some(dir) = path.parent() {
                    self.walker.forget(dir);
                    let rel = walk::relative(&root, dir).unwrap_or_default();
                    self.rewalk(dir, &rel, &mut changes);
                }
            } else if meta.is_err() {
                self.walker.forget(path);
                self.drop_below(path, &rel, &BTreeSet::new(), &mut changes);
                if self.files.remove(&rel).is_some() {
                    changes.deleted.push(rel);
                }
            } else if let Some(dir) = self.unindexed_ancestor(path) {
                // A file in a directory the index has not seen: that directory, walked.
                let rel = walk::relative(&root, &dir).unwrap_or_default();
                self.rewalk(&dir, &rel, &mut changes);
            } else if self.tracked_name(&rel) {
                self.update(&rel, &mut changes);
            }
        }
        // Entries hashed while racily fresh are looked at again.
        let racy: Vec<String> = self.racy.iter().cloned().collect();
        for rel in racy {
            self.update(&rel, &mut changes);
        }
        self.finish(changes)
    }

    /// The outermost directory above `path` that exists but is not indexed, when its parent
    /// is (a directory created since the last walk).
    fn unindexed_ancestor(&self, path: &Path) -> Option<PathBuf> {
        let mut dir = path.parent()?;
        if self.dirs.contains(dir) {
            return None;
        }
        while let Some(up) = dir.parent() {
            if self.dirs.contains(up) {
                return dir.is_dir().then(|| dir.to_path_buf());
            }
            if !up.starts_with(&self.root) {
                return None;
            }
            dir = up;
        }
        None
    }

    /// Whether a file at `rel` belongs in the index: a source whose directories are walked
    /// (and not ignored), or a root configuration file.
    fn tracked_name(&self, rel: &str) -> bool {
        if !rel.contains('/') && is_config(rel) {
            return true;
        }
        if !self.walker.types().tracks(rel) {
            return false;
        }
        let parent = self.root.join(rel).parent().map(Path::to_path_buf);
        let Some(parent) = parent else { return false };
        if !self.dirs.contains(&parent) {
            return false;
        }
        walk::admits(&self.root, &self.root.join(rel))
    }

    /// Walk directory `dir` (workspace-relative `rel`) again: what it holds now is updated,
    /// what it no longer holds is dropped.
    fn rewalk(&mut self, dir: &Path, rel: &str, changes: &mut Changes) {
        let root = self.root.clone();
        let found = self.walker.walk(&root, dir);
        let now: BTreeSet<String> = found.files.iter().cloned().collect();
        self.drop_below(dir, rel, &now, changes);
        self.dirs.extend(found.dirs.iter().cloned());
        for f in &found.files {
            self.update(f, changes);
        }
    }

    /// Drop the sources below `dir` (workspace-relative `rel`) but those in `keep`, and the
    /// directories below it.
    fn drop_below(
        &mut self,
        dir: &Path,
        rel: &str,
        keep: &BTreeSet<String>,
        changes: &mut Changes,
    ) {
        let prefix = format!("{rel}/");
        let below: Vec<String> = self
            .files
            .keys()
            .filter(|k| (rel.is_empty() || k.starts_with(&prefix)) && !root_config(k))
            .filter(|k| !keep.contains(*k))
            .cloned()
            .collect();
        for k in below {
            self.files.remove(&k);
            changes.deleted.push(k);
        }
        // The directories at or below `dir`: a range of the sorted set.
        let below: Vec<PathBuf> = self
            .dirs
            .range(dir.to_path_buf()..)
            .take_while(|d| d.starts_with(dir))
            .cloned()
            .collect();
        for d in below {
            self.dirs.remove(&d);
        }
        self.dirs_version += 1;
    }

    /// Re-stat `rel`; rehash when its metadata changed or cannot be trusted.
    fn update(&mut self, rel: &str, changes: &mut Changes) {
        let abs = self.root.join(rel);
        // A source is a regular file reached without a symlink (as the walk lists it); a root
        // configuration file may be a link.
        let meta = match root_config(rel) {
            false => std::fs::symlink_metadata(&abs),
            true => std::fs::metadata(&abs),
        };
        let Some(meta) = meta.ok().filter(std::fs::Metadata::is_file) else {
            if self.files.remove(rel).is_some() {
                changes.deleted.push(rel.to_string());
            }
            return;
        };
        let stat = Stat::of(&meta);
        let racy = !walk::settled(meta.modified().ok(), SystemTime::now());
        match racy {
            true => self.racy.insert(rel.to_string()),
            false => self.racy.remove(rel),
        };
        match self.files.get_mut(rel) {
            Some(e) if e.stat == stat && !e.racy && !racy => {}
            Some(e) => {
                let old = e.hash.take();
                let new = std::fs::read(&abs).ok().map(|b| sha256_hex(&b));
                // Written again, even with the bytes it had (A → B → A between two looks):
                // a server that read the file in between holds B, so it is told again.
                let rewritten = e.stat.ino != stat.ino || e.stat.mtime_ns != stat.mtime_ns;
                if old.is_none() || old != new || rewritten {
                    changes.changed.push(rel.to_string());
                }
                e.hash = new;
                e.stat = stat;
                e.racy = racy;
            }
            None => {
                // A racily fresh file is hashed now: later looks compare against its content.
                let hash = racy
                    .then(|| std::fs::read(&abs).ok().map(|b| sha256_hex(&b)))
                    .flatten();
                self.files
                    .insert(rel.to_string(), Entry { stat, hash, racy });
                changes.created.push(rel.to_string());
            }
        }
    }

    fn finish(&mut self, mut changes: Changes) -> Changes {
        for gone in &changes.deleted {
            self.racy.remove(gone);
        }
        changes.sort();
        // A file both gone and back (a directory walked again) is a change, not two.
        let back: Vec<String> = changes
            .deleted
            .iter()
            .filter(|d| changes.created.contains(d))
            .cloned()
            .collect();
        for b in back {
            changes.deleted.retain(|d| d != &b);
            changes.created.retain(|c| c != &b);
            changes.changed.push(b);
        }
        changes.sort();
        if !changes.is_empty() {
            self.generation += 1;
        }
        changes
    }

    /// The hex content hash of every indexed file (read now where not yet known), sorted.
    pub fn hashes(&mut self) -> Vec<(String, String)> {
        let root = self.root.clone();
        let mut out = Vec::with_capacity(self.files.len());
        let mut gone = Vec::new();
        for (rel, e) in self.files.iter_mut() {
            if e.hash.is_none() {
                e.hash = std::fs::read(root.join(rel)).ok().map(|b| sha256_hex(&b));
            }
            match &e.hash {
                Some(h) => out.push((rel.clone(), h.clone())),
                None => gone.push(rel.clone()),
            }
        }
        for g in gone {
            self.files.remove(&g);
        }
        out
    }

    /// The files a trace records as the snapshot: every file the index tracks (the sources,
    /// the configured servers' file types, the types lanser outlines) and the server's
    /// configuration files present, with their tagged digests (`sha256:<hex>`).
    pub fn snapshot_digests(&mut self) -> Vec<(String, String)> {
        self.hashes()
            .into_iter()
            .filter(|(rel, _)| {
                self.walker.types().tracks(rel) || SERVER_CONFIG.contains(&rel.as_str())
            })
            .map(|(rel, h)| (rel, format!("sha256:{h}")))
            .collect()
    }

    /// One digest of the whole snapshot (the trace's workspace digest).
    pub fn digest(&mut self) -> String {
        let d = self.snapshot_digests();
        workspace_digest(d.iter().map(|(p, h)| (p.as_str(), h.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_between_two_listings() {
        let l = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let before = l(&[("a.py", "1"), ("b.py", "2"), ("c.py", "3")]);
        let after = l(&[("a.py", "1"), ("b.py", "9"), ("d.py", "4")]);
        let c = Changes::between(&before, &after);
        assert_eq!(c.created, ["d.py"]);
        assert_eq!(c.changed, ["b.py"]);
        assert_eq!(c.deleted, ["c.py"]);
        assert!(Changes::between(&after, &after).is_empty());
    }

    fn index_of(root: &Path) -> Index {
        let mut i = Index::scan(root, Default::default());
        i.hashes();
        i
    }

    #[test]
    fn the_types_of_the_configured_servers_are_tracked_but_are_not_sources() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("web")).unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("web/app.php"), "<?php\n").unwrap();
        std::fs::write(root.join("web/Dockerfile"), "FROM x\n").unwrap();
        std::fs::write(root.join("web/notes.txt"), "-\n").unwrap();
        // A tool's hidden state file of a tracked type (a build's `.rustc_info.json`).
        std::fs::write(root.join("web/.state.json"), "{}").unwrap();
        std::fs::write(root.join("pyrightconfig.json"), "{}").unwrap();
        let mut i = index_of(&root);
        assert!(!i.contains("web/app.php"));
        let types = walk::Types::new(["php", "Dockerfile", "json"].map(String::from));
        let c = i.retrack(&types);
        assert_eq!(c.created, ["web/Dockerfile", "web/app.php"]);
        assert!(!i.contains("web/notes.txt"));
        assert!(!i.contains("web/.state.json"));
        // Workspace-wide operations still list the sources only.
        assert_eq!(i.sources(), ["a.py"]);
        std::fs::write(root.join("web/app.php"), "<?php echo 1;\n").unwrap();
        std::fs::write(root.join("pyrightconfig.json"), "{ }").unwrap();
        let c = i.refresh(
            [root.join("web/app.php"), root.join("pyrightconfig.json")]
                .iter()
                .map(|p| p.as_path()),
        );
        assert_eq!(c.changed, ["pyrightconfig.json", "web/app.php"]);
        // What servers are told: not the root configuration file (it restarts the session).
        assert_eq!(c.sources().changed, ["web/app.php"]);
        assert!(i.retrack(&types).is_empty());
        assert_eq!(
            i.retrack(&walk::Types::default()).deleted,
            ["web/Dockerfile", "web/app.php"]
        );
    }

    #[test]
    fn edits_creations_and_deletions_are_seen_even_within_one_tick() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("b.py"), "y = 2\n").unwrap();
        let mut i = index_of(&root);
        assert_eq!(i.sources().len(), 2);
        let d0 = i.digest();
        // Same size, same second: only the content hash can tell.
        std::fs::write(root.join("a.py"), "x = 3\n").unwrap();
        std::fs::remove_file(root.join("b.py")).unwrap();
        std::fs::write(root.join("c.py"), "z = 3\n").unwrap();
        let c = i.rescan();
        assert_eq!(c.changed, vec!["a.py"]);
        assert_eq!(c.deleted, vec!["b.py"]);
        assert_eq!(c.created, vec!["c.py"]);
        assert_ne!(i.digest(), d0);
        assert_eq!(i.generation(), 1);
    }

    #[test]
    fn refresh_of_named_paths_equals_a_rescan() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/a.py"), "a = 1\n").unwrap();
        std::fs::write(root.join("notes.txt"), "").unwrap();
        let mut i = index_of(&root);
        // A new directory with a file in it, a deletion, a non-source.
        std::fs::create_dir_all(root.join("src/new")).unwrap();
        std::fs::write(root.join("src/new/m.py"), "m = 1\n").unwrap();
        std::fs::remove_file(root.join("pkg/a.py")).unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        std::fs::write(root.join("pyproject.toml"), "").unwrap();
        let paths = [
            root.join("src"),
            root.join("pkg/a.py"),
            root.join("notes.txt"),
            root.join("pyproject.toml"),
        ];
        let c = i.refresh(paths.iter().map(PathBuf::as_path));
        assert_eq!(c.created, vec!["pyproject.toml", "src/new/m.py"]);
        assert_eq!(c.deleted, vec!["pkg/a.py"]);
        assert!(c.touches_config());
        let mut fresh = index_of(&root);
        assert_eq!(i.digest(), fresh.digest());
        assert_eq!(i.sources(), fresh.sources());
        assert!(i.dirs().any(|d| d == &root.join("src/new")));
        // A symlinked source is not one, by event as by walk.
        #[cfg(unix)]
        {
            let link = root.join("src/new/link.py");
            std::os::unix::fs::symlink(root.join("src/new/m.py"), &link).unwrap();
            assert!(i.refresh([link.as_path()]).is_empty());
            std::fs::remove_file(&link).unwrap();
        }
        // A file named alone in directories the index has never seen.
        std::fs::create_dir_all(root.join("lib/a/b")).unwrap();
        std::fs::write(root.join("lib/a/b/z.py"), "").unwrap();
        let c = i.refresh([root.join("lib/a/b/z.py").as_path()]);
        assert_eq!(c.created, vec!["lib/a/b/z.py"]);
        assert!(i.dirs().any(|d| d == &root.join("lib")));
        assert!(i.dirs().any(|d| d == &root.join("lib/a/b")));
        std::fs::remove_dir_all(root.join("lib")).unwrap();
        i.refresh([root.join("lib").as_path()]);
        // The directory removed whole.
        std::fs::remove_dir_all(root.join("src")).unwrap();
        let c = i.refresh([root.join("src").as_path()]);
        assert_eq!(c.deleted, vec!["src/new/m.py"]);
        assert!(!i.dirs().any(|d| d.starts_with(root.join("src"))));
    }

    #[test]
    fn a_same_size_rewrite_with_its_mtime_put_back_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("a.py");
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        let write = |text: &str| {
            std::fs::write(&file, text).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        };
        write("x = 1\n");
        let mut i = index_of(&root);
        let before = i.digest();
        assert!(i.rescan().is_empty(), "unchanged");
        write("x = 2\n");
        assert_eq!(i.rescan().changed, vec!["a.py"]);
        assert_ne!(i.digest(), before, "same size, same mtime, new bytes");
    }

    #[test]
    fn a_file_replaced_by_the_same_bytes_is_a_change_and_the_digest_stays() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        let mut i = index_of(&root);
        let before = i.digest();
        // A → B → A between two looks (an editor's atomic saves): the bytes are A again, but
        // a server may have read B in between, so the file is reported.
        std::fs::write(root.join(".a.tmp"), "x = 1\n").unwrap();
        std::fs::rename(root.join(".a.tmp"), root.join("a.py")).unwrap();
        assert_eq!(i.rescan().changed, vec!["a.py"]);
        assert_eq!(i.digest(), before);
        assert!(i.rescan().is_empty(), "told once");
    }
}

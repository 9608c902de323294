//! The content-addressed snapshot store (docs/relocation.md#snapshots-and-stale-selectors) and
//! span mapping through a line diff.
//!
//! `$LANSER_HOME/snapshots/<sha256 hex>` holds the text of every file version lanser handed
//! out a `docVersion` for, so a selector made against that version can later be mapped onto
//! the file's current text: an unchanged span maps exactly (score 1.0); a span that touches a
//! changed line does not map, and relocation falls back to scoring. Every bundle's
//! `meta.docVersions` are kept too (`commands::execute`), so `changes --since-bundle` can diff
//! the files against the versions a bundle recorded.

use crate::digest::sha256_tagged;
use crate::inputs::Inputs;
use similar::{Algorithm, DiffTag, TextDiff};
use std::path::PathBuf;

#[derive(Clone)]
pub struct Store {
    dir: PathBuf,
    /// Reads go through the run's inputs: a traced run records each snapshot it maps a
    /// stale selector through, and its replay is served the same text.
    inputs: Option<Inputs>,
}

impl Store {
    /// The store under `lanser_home()`.
    pub fn open() -> Store {
        Store {
            dir: crate::home::lanser_home().join("snapshots"),
            inputs: None,
        }
    }

    /// The store, read through `inputs` (`input` records with arg `snapshot`).
    pub fn through(inputs: &Inputs) -> Store {
        Store {
            inputs: Some(inputs.clone()),
            ..Store::open()
        }
    }

    fn file(&self, doc_version: &str) -> Option<PathBuf> {
        let hex = doc_version.strip_prefix("sha256:")?;
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| self.dir.join(hex.to_ascii_lowercase()))
    }

    /// Keep `text` under its `doc_version`. Best effort: a read-only cache only costs the
    /// ability to map stale selectors later.
    pub fn put(&self, doc_version: &str, text: &str) {
        let Some(path) = self.file(doc_version) else {
            return;
        };
        if path.exists() || std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let tmp = self.dir.join(format!(
            ".{}.{}.tmp",
            std::process::id(),
            &doc_version[7..19]
        ));
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// Whether a text is stored under `doc_version` (not checked against it: see [`Store::get`]).
    pub fn has(&self, doc_version: &str) -> bool {
        self.file(doc_version).is_some_and(|p| p.is_file())
    }

    /// Keep the file at `path` under `doc_version` when that is still its content (a file
    /// replaced meanwhile, or not UTF-8, is not kept). Best effort, as [`Store::put`].
    pub fn keep_file(&self, doc_version: &str, path: &std::path::Path) {
        if self.has(doc_version) {
            return;
        }
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        if sha256_tagged(&bytes) != doc_version {
            return;
        }
        if let Ok(text) = String::from_utf8(bytes) {
            self.put(doc_version, &text);
        }
    }

    /// The text stored under `doc_version`, if it is there and intact.
    pub fn get(&self, doc_version: &str) -> Option<String> {
        let path = self.file(doc_version)?;
        let text = match &self.inputs {
            Some(inputs) => inputs
                .read_to_string("snapshot", doc_version, || std::fs::read(&path))
                .ok()?,
            None => std::fs::read_to_string(path).ok()?,
        };
        (sha256_tagged(text.as_bytes()) == doc_version).then_some(text)
    }
}

/// Byte offsets where each line of `text` starts, as `similar` splits lines (terminator kept),
/// plus `text.len()`.
fn line_offsets<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<usize> {
    let mut acc = 0;
    let mut out = vec![0];
    for l in lines {
        acc += l.len();
        out.push(acc);
    }
    out
}

/// Map the byte span `[start, end)` of `old` onto `new` when every line it touches is
/// unchanged; `None` when it touches an inserted, deleted or replaced line.
pub fn map_span(old: &str, new: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .diff_lines(old, new);
    let old_at = line_offsets((0..diff.old_len()).filter_map(|i| diff.old_slice(i)));
    let new_at = line_offsets((0..diff.new_len()).filter_map(|i| diff.new_slice(i)));
    for op in diff.ops() {
        if op.tag() != DiffTag::Equal {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        let (os, oe) = (old_at[o.start], old_at[o.end]);
        // A span may end where the run ends, but start there only at the end of the file: at
        // a run's end it belongs to whatever follows (an insertion goes before it).
        if start >= os && end <= oe && (start < oe || o.end == old_at.len() - 1) {
            let shift = new_at[n.start] as isize - os as isize;
            let s = (start as isize + shift) as usize;
            let e = (end as isize + shift) as usize;
            return Some((s, e));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_in_unchanged_lines_move_with_the_text() {
        let old = "a = 1\ndef f():\n    return 2\n";
        let new = "import x\n\na = 1\ndef f():\n    return 2\n";
        let s = old.find("f()").unwrap();
        let (ns, ne) = map_span(old, new, s, s + 1).unwrap();
        assert_eq!(&new[ns..ne], "f");
        // A span on a changed line does not map.
        let edited = "a = 1\ndef g():\n    return 2\n";
        assert_eq!(map_span(old, edited, s, s + 1), None);
        // A span across lines maps when all of them are kept.
        let b = old.find("def").unwrap();
        let (ns, ne) = map_span(old, new, b, old.len()).unwrap();
        assert_eq!(&new[ns..ne], "def f():\n    return 2\n");
        // An empty span at the start of a line that gets lines inserted before it follows
        // the line, not the insertion point.
        let inserted = "a = 1\n# new\ndef f():\n    return 2\n";
        assert_eq!(map_span(old, inserted, b, b), Some((b + 6, b + 6)));
        // At the very end of the file.
        assert_eq!(
            map_span(old, new, old.len(), old.len()),
            Some((new.len(), new.len()))
        );
    }

    #[test]
    fn store_round_trips_and_rejects_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store {
            dir: dir.path().join("snapshots"),
            inputs: None,
        };
        let text = "x = 1\n";
        let dv = sha256_tagged(text.as_bytes());
        assert_eq!(store.get(&dv), None);
        store.put(&dv, text);
        assert_eq!(store.get(&dv).as_deref(), Some(text));
        std::fs::write(store.file(&dv).unwrap(), "tampered").unwrap();
        assert_eq!(store.get(&dv), None);
        assert_eq!(store.file("sha256:zz"), None);
    }

    #[test]
    fn a_traced_read_is_served_to_the_replay_without_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let live = Inputs::logged();
        let store = Store {
            dir: dir.path().join("snapshots"),
            inputs: Some(live.clone()),
        };
        let text = "def f():\n    pass\n";
        let dv = sha256_tagged(text.as_bytes());
        store.put(&dv, text);
        assert_eq!(store.get(&dv).as_deref(), Some(text));
        let recs = live.attach(std::sync::Arc::new(|_| {}));
        assert_eq!(
            (recs[0].arg.as_str(), recs[0].path.as_str()),
            ("snapshot", dv.as_str())
        );
        // The replay's machine has no such store.
        let replay = Store {
            dir: dir.path().join("elsewhere"),
            inputs: Some(Inputs::recorded(&recs)),
        };
        assert_eq!(replay.get(&dv).as_deref(), Some(text));
    }
}
